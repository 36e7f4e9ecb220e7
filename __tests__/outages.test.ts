/**
 * Outages, hangs and races, through the bundle: Coolify and its proxy restart for minutes while a
 * deployment goes on, answers get lost, a deployment already queued ends before it is looked up,
 * a cancel is refused. A deployment that succeeded must never be reported red, and nothing may be
 * left running or said that is not so.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { GRACE_MS } from '../src/time/budget.js'
import type { FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { buildLogLines, runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  endless,
  errorLines,
  expectNoSecrets,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  FINISHED_LOG,
  inputsFor,
  TOKEN,
  startElsewhere
} from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest()
const READ = /^\/deployments\/(?!applications\/)[^/]+$/
const UNREACHABLE = /^Coolify is unreachable since \d\d:\d\d:\d\d UTC \(/m
const BACK = /^Coolify answers again, after /m

function run(server: FakeCoolify, inputs: Record<string, string> = {}): Promise<RunResult> {
  return runAction({ inputs: inputsFor(server, inputs) })
}

function reads(server: FakeCoolify): FakeCoolify['requests'] {
  return actionRequests(server).filter(request => READ.test(request.path.slice('/api/v1'.length)))
}

function expectClean(result: RunResult): void {
  expectNoSecrets(result.stdout + result.stderr, [TOKEN])
  expectNoStackTrace(result.stderr)
}

/** Said once each: the outage with its start, and the return. */
function expectOneOutage(stdout: string): void {
  expect(stdout.match(new RegExp(UNREACHABLE.source, 'gm'))).toHaveLength(1)
  expect(stdout.match(new RegExp(BACK.source, 'gm'))).toHaveLength(1)
}

describe('outages', () => {
  it('rides out an outage longer than any backoff: green, every line once, read through it', async () => {
    const server = await start()
    // Coolify's proxy answers 502 pages for 8 s from the second read on; the build ends meanwhile.
    server.inject({ path: READ, skip: 1, forMs: 8000, do: 'html' })
    const result = await run(server, { timeout: '30s' })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(buildLogLines(result.stdout)).toEqual(FINISHED_LOG)
    expectOneOutage(result.stdout)
    // Read through the outage and after it. How close the reads stay (the backoff's cap, max(5 s,
    // 2 x poll-interval)) is measured by `npm run bench -- recovery`.
    const faults = reads(server).map(request => request.fault !== undefined)
    expect(faults.filter(Boolean).length).toBeGreaterThan(0)
    expect(faults.at(-1)).toBe(false)
    // Coolify's own times: the build took 0.4 s, not the 8 s the action could not see it. Coolify
    // keeps whole seconds, so 0.4 s spans one second boundary or none.
    expect(['0', '1']).toContain(result.outputs.duration)
    expectClean(result)
  }, 40_000)

  it('retries the trigger through an outage of its own, and deploys once', async () => {
    const server = await start()
    // Every route, from the trigger on: the history reads that check for a started deployment too.
    server.inject({ forMs: 2500, do: 'html' })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(server.deployments()).toHaveLength(1)
    // A 502 may hide a deployment Coolify started: the history is read (through the outage)
    // before the trigger is repeated, once.
    const lines = actionRequests(server)
      .filter(request => !request.fault)
      .map(request => `${request.method} ${request.path}`)
    expect(lines.slice(0, 2)).toEqual([
      `GET /api/v1/deployments/applications/${APP.uuid}`,
      'POST /api/v1/deploy'
    ])
    expect(actionRequests(server).filter(request => request.method === 'POST')).toHaveLength(2)
    expectOneOutage(result.stdout)
    expect(buildLogLines(result.stdout)).toEqual(FINISHED_LOG)
    expectClean(result)
  })

  it('follows the deployment it joined ("already queued") even when it ended before the lookup', async () => {
    const quick: Scenario = {
      commit: 'abc1234',
      steps: [
        { at: 0, status: 'in_progress', lines: ['Quick build.'] },
        // Long enough for the step to start and trigger while it runs, however slow the machine.
        { at: 4000, status: 'finished', lines: ['Gracefully shutting down build container'] }
      ]
    }
    const server = await start({ apps: [{ ...APP, scenarios: [quick] }] })
    const first = await startElsewhere(server)
    // The history read fails for a while: by the time it answers, the deployment has finished.
    server.inject({
      method: 'GET',
      path: /^\/deployments\/applications\//,
      forMs: 5000,
      do: 'html'
    })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(server.deployments()).toHaveLength(1)
    expect(result.outputs['deployment-uuid']).toBe(first)
    expect(result.stdout).toContain('already under way; following it')
    expectClean(result)
  })

  it('ends at the timeout when the trigger never answers, and says so', async () => {
    const server = await start()
    server.inject({ method: 'POST', path: '/deploy', do: 'hang' })
    const result = await run(server, { timeout: '2s' })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      expect.stringMatching(/POST \/deploy: Coolify did not answer before `timeout` passed/)
    ])
    expect(result.outputs.status).toBe('failed')
    // How soon after `timeout` it ends: `npm run bench -- hangs`.
    expectClean(result)
  })

  it('does not wait on an application read that never answers', async () => {
    const server = await start()
    server.inject({ method: 'GET', path: `/applications/${APP.uuid}`, do: 'hang' })
    // A timeout far beyond the test's own: a step held until it would never end in time. At a 1 s
    // poll-interval a request may take 10 s: the step is done before the read gives up.
    const result = await run(server, { timeout: '10m', 'poll-interval': '1s' })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    // The lookup is a courtesy, given up a few seconds after the deployment ended: how soon is
    // measured by `npm run bench -- recovery`.
    expectClean(result)
  })
})

describe('the step’s end is the process’s end', () => {
  const closing: Array<() => void> = []
  afterEach(() => closing.splice(0).forEach(close => close()))

  /** A host that takes every connection and never says a word on it. */
  async function mute(): Promise<string> {
    const sockets = new Set<Socket>()
    const server = createServer(socket => {
      sockets.add(socket.resume())
      socket.on('close', () => sockets.delete(socket))
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    closing.push(() => {
      for (const socket of sockets) socket.destroy()
      server.close()
    })
    return `127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  it.each([
    ['Coolify never answers the TLS handshake', (host: string) => [`https://${host}`, {}]],
    [
      'the proxy never answers CONNECT',
      (host: string) => ['https://coolify.test', { HTTPS_PROXY: `http://${host}` }]
    ]
  ] as Array<[string, (host: string) => [string, Record<string, string>]]>)(
    'exits within seconds of `timeout` when %s',
    async (_what, route) => {
      const [coolifyUrl, env] = route(await mute())
      // At the default poll-interval (3 s) a connection may take 30 s to open: the timeout comes
      // while the first one is still being opened.
      const result = await runAction({
        inputs: {
          'coolify-url': coolifyUrl,
          token: TOKEN,
          'app-uuid': APP.uuid,
          timeout: '2s'
        },
        env
      })

      expect(result.code).toBe(1)
      expect(errorLines(result.stdout)).toEqual([
        expect.stringMatching(/did not answer before `timeout` passed/)
      ])
      // The step ends by `timeout` and its grace for undoing and reporting; the process with it,
      // not when the connection being opened would have timed out.
      expect(result.exitedAt - result.startedAt).toBeLessThan(2000 + GRACE_MS + 3000)
      expectClean(result)
    },
    40_000
  )
})

describe('cancels that tell the truth', () => {
  it('reports cancelled when Coolify answered 500 after saving the cancel (4.1–4.3.6)', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [endless()] }] })
    server.inject({
      method: 'POST',
      path: /\/cancel$/,
      times: Infinity,
      do: { status: 500, body: { message: 'Server Error' }, acted: true }
    })
    const result = await run(server, { timeout: '1s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('timeout')
    expect(errorLines(result.stdout)).toEqual([
      expect.stringMatching(
        /deployment timeout: it outlasted `timeout`; it was cancelled in Coolify/
      )
    ])
    expect(server.deployments()[0].status).toBe('cancelled-by-user')
    expectClean(result)
  })

  it('says it may still run when Coolify refuses the cancel', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [endless()] }] })
    server.inject({
      method: 'POST',
      path: /\/cancel$/,
      times: Infinity,
      do: {
        status: 400,
        body: { message: 'Deployment cannot be cancelled. Current status: in_progress' }
      }
    })
    const result = await run(server, { timeout: '1s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('timeout')
    const [error] = errorLines(result.stdout)
    expect(error).toMatch(
      /it outlasted `timeout`, and it may still be running in Coolify: could not cancel it in Coolify: POST \/deployments\/\w+\/cancel: Coolify answered 400 "Deployment cannot be cancelled/
    )
    expect(error).not.toContain('was cancelled')
    expect(server.deployments()[0].status).toBe('in_progress')
    expectClean(result)
  })
})

describe('the end of a deployment', () => {
  it("ends at once on Coolify's closing entry: no read after the one that brought it", async () => {
    const closing: Scenario = {
      steps: [
        { at: 0, status: 'in_progress', lines: ['Building.'] },
        {
          at: 300,
          status: 'finished',
          lines: ['Done.', 'Gracefully shutting down build container: abc']
        }
      ]
    }
    const server = await start({ apps: [{ ...APP, scenarios: [closing] }] })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(buildLogLines(result.stdout)).toEqual([
      'Building.',
      'Done.',
      'Gracefully shutting down build container: abc'
    ])
    const createdAt = server.deployments()[0].createdAt
    expect(reads(server).filter(request => request.at >= createdAt + 300)).toHaveLength(1)
  })

  it('still reads the closing lines written after the final status', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [build('finished', 700)] }] })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(buildLogLines(result.stdout)).toEqual(FINISHED_LOG)
  })
})

describe('several deployments under a low rate limit', () => {
  it('reads them together within the window, never 429, with Coolify’s own durations', async () => {
    const apps = ['a', 'b', 'c', 'd'].map(name => ({
      uuid: `${name}uuid`.padEnd(24, '0'),
      name
    }))
    const server = await start({ apps, rateLimit: 60 })
    const result = await run(server, { 'app-uuid': apps.map(app => app.uuid).join(',') })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(actionRequests(server).filter(request => request.status === 429)).toEqual([])
    // A fifth of the window's 60 is left to other tools.
    expect(actionRequests(server).length).toBeLessThanOrEqual(48)
    // The running ones in one list a turn; each read by itself once it left the list, and once
    // more only for the closing entry.
    expect(actionRequests(server).some(request => request.path === '/api/v1/deployments')).toBe(
      true
    )
    for (const app of apps) {
      const [uuid] = server
        .deployments()
        .filter(d => d.appUuid === app.uuid)
        .map(d => d.uuid)
      const own = reads(server).filter(request => request.path.endsWith(`/${uuid}`))
      expect(own.length).toBeGreaterThanOrEqual(1)
      expect(own.length).toBeLessThanOrEqual(2)
    }
    // Each build took 60 ms in Coolify, however late the action saw its end. Coolify keeps whole
    // seconds, so 60 ms spans one second boundary or none.
    const records = JSON.parse(result.outputs.deployments) as Array<{ duration: number }>
    expect(records).toHaveLength(4)
    for (const record of records) expect([0, 1]).toContain(record.duration)
  }, 40_000)
})
