/**
 * The step's time, shared by several applications and by what comes after a deployment (health
 * check, rollback): each rollout ends on its own merits, never because a sibling or the clock of
 * another phase ran out. Run through the bundle against the fake Coolify.
 */
import { describe, expect, it } from '@jest/globals'
import type { FakeApp, FakeCoolify, Fault, Scenario } from '../test/fake-coolify/index.js'
import { READ } from '../test/support/faults.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  endless,
  errorLines,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  inputsFor,
  startElsewhere
} from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest(() => ({
  abilities: ['deploy', 'read', 'read:sensitive', 'write']
}))

/** Coolify's last entry, written just after the final status: no more lines will come. */
const CLOSING = { output: 'Gracefully shutting down build container' }

/** Starts at once and ends `outcome` after `ms`; its log then closes, as Coolify's does. */
function quick(ms = 300, outcome: 'finished' | 'failed' = 'finished'): Scenario {
  const last = outcome === 'finished' ? 'Rolling update completed.' : 'npm ERR! build script failed'
  return {
    steps: [
      { at: 0, status: 'queued' },
      { at: 40, status: 'in_progress' },
      { at: ms, status: outcome, lines: [last] },
      { at: ms + 20, lines: [CLOSING] }
    ]
  }
}

/** Served by the fake itself, so that health URLs reach it; up and answering 200. */
const SELF_APP: FakeApp = {
  ...APP,
  fqdn: `{{self}}/_app/${APP.uuid}`,
  runtime: [{ at: 0, status: 'running:healthy' }],
  scenarios: [quick()]
}
const API = { uuid: 'api0app0uuid0000000002', name: 'api', fqdn: 'https://api.example.com' }

async function run(server: FakeCoolify, inputs: Record<string, string> = {}): Promise<RunResult> {
  const result = await runAction({ inputs: inputsFor(server, inputs) })
  if (process.env.SHOW_RUN) console.log(result.stdout, result.stderr)
  return result
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise(resolve => setTimeout(resolve, 10))
}

/**
 * Arms `fault` when the first deployment is `finishesAt` ms old, the moment the fake starts to
 * report it finished: a request answered before meets no fault, every request after it does. The
 * fake runs in this process, so the timer fires before the fake can answer anything after that.
 */
async function armWhenFinished(
  server: FakeCoolify,
  finishesAt: number,
  fault: Fault
): Promise<void> {
  await until(() => server.deployments().length > 0)
  const due = server.deployments()[0].createdAt + finishesAt
  await new Promise(resolve => setTimeout(resolve, due - Date.now() - 5))
  while (Date.now() < due) {
    // A few ms of waiting in step with the fake's clock: nothing is answered meanwhile.
  }
  server.inject(fault)
}

/** Requests to the application's own address (health probes), which the fake serves. */
function probes(server: FakeCoolify, path: string): FakeCoolify['requests'] {
  return server.requests.filter(request => request.path === path)
}

describe('several applications in one step', () => {
  // Guards: a healthy app is not made `unhealthy` because a sibling used up the step's time; its
  // health check still runs, after its own deployment finished.
  it('keeps a finished app finished when a sibling times out, and checks its health', async () => {
    const server = await start({ apps: [SELF_APP, { ...API, scenarios: [endless()] }] })
    const result = await run(server, { 'app-uuid': `${APP.uuid} ${API.uuid}`, timeout: '3s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('timeout')
    expect(JSON.parse(result.outputs.deployments)).toEqual([
      expect.objectContaining({ app_uuid: APP.uuid, status: 'finished' }),
      expect.objectContaining({ app_uuid: API.uuid, status: 'timeout' })
    ])
    expect(result.stdout).not.toContain('unhealthy')
    expect(JSON.stringify(result.outputs)).not.toContain('unhealthy')
    const web = server.deployments().find(deployment => deployment.appUuid === APP.uuid)!
    expect(web.finishedAt).toBeDefined()
    const statusReads = actionRequests(server).filter(
      request =>
        request.method === 'GET' &&
        request.path === `/api/v1/applications/${APP.uuid}` &&
        request.at > web.finishedAt!
    )
    expect(statusReads.length).toBeGreaterThan(0)
  }, 20_000)
})

describe('health', () => {
  // Guards: a Coolify status the action could not read (hanging) is never `unhealthy`: the step
  // warns that it could not confirm the app is up, and stays `finished`.
  it('warns, and stays finished, when the status cannot be read after the deployment', async () => {
    const server = await start({ apps: [{ ...SELF_APP, scenarios: [quick(500)] }] })
    const [result] = await Promise.all([
      run(server, { timeout: '4s', 'health-timeout': '2s' }),
      armWhenFinished(server, 500, {
        method: 'GET',
        path: `/applications/${APP.uuid}`,
        do: 'hang',
        times: Infinity
      })
    ])

    // The status was asked for, and the fault kept it from being read.
    expect(actionRequests(server).some(request => request.fault === 'hang')).toBe(true)
    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.stdout).toMatch(/^::warning( [^:]*)?::.*could not confirm that web is up/m)
    expect(result.summary).toMatch(/could not confirm that web is up/i)
    expect(errorLines(result.stdout)).toEqual([])
    expectNoStackTrace(result.stderr)
  }, 20_000)

  // Guards issue 55 end to end: status reads held up by a 429 `Retry-After: 20` (one in flight, a
  // second app's check queued behind it) keep the process no longer than its report, not 20 s.
  it('exits at once after its report when status reads wait on a 429 Retry-After: 20', async () => {
    const api: FakeApp = { ...API, runtime: SELF_APP.runtime, scenarios: [quick(300)] }
    const server = await start({ apps: [{ ...SELF_APP, scenarios: [quick(300)] }, api] })
    // The second deployment's last read comes late, so that its health check queues behind the
    // first one's status read, which Coolify refuses: no request goes out for 20 s after it.
    server.inject({ method: 'GET', path: READ, skip: 1, do: { delayMs: 1000 } })
    server.inject({
      method: 'GET',
      path: /^\/applications(\/[^/]+)?$/,
      skip: 1,
      times: Infinity,
      do: {
        status: 429,
        headers: { 'Retry-After': '20' },
        body: { message: 'Too Many Attempts.' }
      }
    })
    let lastLineAt = 0
    const result = await runAction({
      inputs: inputsFor(server, {
        'app-uuid': `${APP.uuid} ${API.uuid}`,
        timeout: '10s',
        'health-timeout': '2s'
      }),
      onStdout: () => (lastLineAt = Date.now())
    })

    expect(actionRequests(server).some(request => request.fault === 'status 429')).toBe(true)
    // Unknown is not down (docs/inputs.md): a warning, and the step passes.
    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.stdout).toMatch(/^::warning( [^:]*)?::.*could not confirm that web is up/m)
    expect(result.stdout).toMatch(/^::warning( [^:]*)?::.*could not confirm that api is up/m)
    expect(result.exitedAt - lastLineAt).toBeLessThan(5000)
  }, 40_000)
})

describe('rollback-on-failure', () => {
  const earlier: Scenario = { ...quick(), commit: 'abc1234abc1234abc1234abc1234abc1234abc12' }

  /** `app`, whose last deployment (made before the run) built abc1234 and finished. */
  async function deployedBefore(app: FakeApp): Promise<FakeCoolify> {
    const server = await start({ apps: [app] })
    await startElsewhere(server)
    await until(() => server.deployments()[0]?.status === 'finished')
    return server
  }

  // Guards: the rollback deployment is judged by the app's URL, as the new version would have
  // been: a `health-url` path is found on the app's address, not refused as "no URL".
  it('checks a health-url path on the app after rolling back', async () => {
    const broken: Scenario = { ...build('failed'), commit: 'def5678' }
    const server = await deployedBefore({ ...SELF_APP, scenarios: [earlier, broken, quick()] })
    const result = await run(server, {
      timeout: '5s',
      'health-url': '/health',
      'health-timeout': '3s',
      'rollback-on-failure': 'true'
    })

    expect(result.code).toBe(1)
    expect(result.stdout).not.toContain('has no URL')
    expect(result.outputs['rolled-back']).toBe('true')
    const rollback = server.deployments().find(deployment => deployment.rollback)
    expect(rollback).toMatchObject({
      commit: 'abc1234abc1234abc1234abc1234abc1234abc12',
      status: 'finished'
    })
    const checked = probes(server, `/_app/${APP.uuid}/health`).filter(
      request => request.at > rollback!.finishedAt!
    )
    expect(checked.length).toBeGreaterThan(0)
  }, 20_000)

  // Guards: the pace of reads halves while deployments followed together end; a rollback started
  // after the failed one ended is followed alone, at `poll-interval`.
  it('follows a rollback at poll-interval, not at the pace of an ending group', async () => {
    const broken: Scenario = { ...quick(300, 'failed'), commit: 'def5678' }
    const server = await deployedBefore({ ...SELF_APP, scenarios: [earlier, broken, quick(6500)] })
    const result = await run(server, { 'poll-interval': '2s', 'rollback-on-failure': 'true' })

    expect(result.outputs['rolled-back']).toBe('true')
    const rollback = server.deployments().find(deployment => deployment.rollback)!
    const reads = actionRequests(server).filter(
      request =>
        request.path === `/api/v1/deployments/${rollback.uuid}` && request.at < rollback.finishedAt!
    )
    // At 2 s after the first quick reads: 0, 0.5, 1.5, 3.5 and 5.5 s; at 1 s it would be seven.
    expect(reads.length).toBeGreaterThanOrEqual(3)
    expect(reads.length).toBeLessThanOrEqual(5)
  }, 30_000)

  // Guards: a rollback started late in the step gets time of its own: `timeout` (the new
  // version's time) neither cuts it off nor makes `cancel-on-timeout` cancel it.
  it('lets a late rollback finish, never cancelling it at `timeout`', async () => {
    const lateFailure: Scenario = { ...quick(2000, 'failed'), commit: 'def5678' }
    const server = await deployedBefore({
      ...SELF_APP,
      scenarios: [earlier, lateFailure, quick(2000)]
    })
    const result = await run(server, {
      timeout: '3s',
      'health-timeout': '10s',
      'cancel-on-timeout': 'true',
      'rollback-on-failure': 'true'
    })

    const rollback = server.deployments().find(deployment => deployment.rollback)
    expect(rollback).toBeDefined()
    expect(rollback!.status).toBe('finished')
    expect(
      actionRequests(server).filter(
        request =>
          request.method === 'POST' &&
          request.path === `/api/v1/deployments/${rollback!.uuid}/cancel`
      )
    ).toEqual([])
    expect(result.outputs['rolled-back']).toBe('true')
    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('failed')
  }, 20_000)
})

describe('timeout', () => {
  // Guards: `timeout` has an upper bound (24h), checked before any request, with one plain error.
  it.each(['25h', '600000h'])('refuses timeout: %s before sending anything', async timeout => {
    const server = await start()
    const result = await run(server, { timeout })

    expect(result.code).toBe(1)
    const errors = errorLines(result.stdout)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain('`timeout`')
    expect(errors[0]).toContain('24h')
    expect(server.requests).toEqual([])
    expectNoStackTrace(result.stderr)
  })
})
