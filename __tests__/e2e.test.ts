/**
 * The committed bundle, run as GitHub's runner runs it, against the fake Coolify in both flavors.
 * Every test asserts the exit code, the outputs, the build log lines as printed, and the requests
 * Coolify received.
 */
import { describe, expect, it } from '@jest/globals'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import {
  APP,
  build,
  expectNoSecrets,
  fakeCoolifyPerTest,
  FINISHED_LOG,
  FINISHED_TEXT_LOG,
  inputsFor,
  requestLines,
  TOKEN,
  startElsewhere
} from '../test/support/scenarios.js'
import { buildLogLines, PROJECT, runAction, type RunOptions } from '../test/support/runner.js'

const start = fakeCoolifyPerTest()
const VISIBLE = FINISHED_LOG.slice(0, 7)

function run(
  server: FakeCoolify,
  inputs: Record<string, string> = {},
  options: Partial<RunOptions> = {}
) {
  return runAction({ inputs: inputsFor(server, inputs), ...options })
}

function expectEveryRequestAuthenticated(server: FakeCoolify): void {
  for (const request of server.requests) {
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(request.headers.accept).toBe('application/json')
  }
}

describe('the bundled action against Coolify 4.x', () => {
  it('deploys, streams every visible line once and in order, and succeeds', async () => {
    const server = await start()
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(buildLogLines(result.stdout)).toEqual([
      ...VISIBLE,
      'Rolling update completed.',
      'Gracefully shutting down build container'
    ])
    const [deployment] = server.deployments()
    // The deployment's page in Coolify, as Coolify's deployment_url names it under the instance.
    const page = new RegExp(
      `^${server.url}/project/\\w+/environment/\\w+/application/${APP.uuid}/deployment/${deployment.uuid}$`
    )
    expect(result.outputs).toMatchObject({
      'deployment-uuid': deployment.uuid,
      'deployment-url': expect.stringMatching(page),
      status: 'finished',
      url: APP.fqdn
    })
    // Whole seconds, never empty (Number('') would be 0).
    expect(result.outputs.duration).toMatch(/^\d+$/)
    expect(JSON.parse(result.outputs.deployments)).toEqual([
      {
        app_uuid: APP.uuid,
        kind: 'application',
        name: 'web',
        deployment_uuid: deployment.uuid,
        deployment_url: result.outputs['deployment-url'],
        status: 'finished',
        url: APP.fqdn,
        duration: expect.any(Number),
        commit: 'abc1234'
      }
    ])
    expect(result.stdout).toContain('::group::Build log of web')
    expect(result.stdout).not.toContain('internal: docker inspect')

    const deploy = server.requests.find(request => request.path === '/api/v1/deploy')!
    expect(deploy.method).toBe('POST')
    expect(deploy.query).toEqual({ uuid: APP.uuid })
    expect(requestLines(server.requests)).not.toContain('GET /api/v1/deploy')
    expect(requestLines(server.requests)).toContain(`GET /api/v1/deployments/${deployment.uuid}`)
    expect(
      requestLines(server.requests).filter(r => r.startsWith('POST /api/v1/deployments'))
    ).toEqual([])
    expectEveryRequestAuthenticated(server)
    expectNoSecrets(result.stdout + result.stderr, [TOKEN])
  })

  it("reports Coolify's own duration, in whole seconds", async () => {
    // A 42 s build, on a Coolify clock that runs a hundred times as fast as the real one.
    const booted = Date.now()
    const server = await start({
      clock: () => booted + (Date.now() - booted) * 100,
      apps: [
        {
          ...APP,
          scenarios: [
            {
              commit: 'abc1234',
              steps: [
                { at: 0, status: 'queued' },
                { at: 4000, status: 'in_progress', lines: ['Starting deployment of web.'] },
                { at: 42_000, status: 'finished', lines: ['Rolling update completed.'] },
                { at: 43_000, lines: ['Gracefully shutting down build container'] }
              ]
            }
          ]
        }
      ]
    })
    const result = await run(server, { timeout: '1m' })

    expect(result.code).toBe(0)
    // Its created_at to its finished_at, which Coolify writes to the second.
    expect(Number(result.outputs.duration)).toBeGreaterThanOrEqual(41)
    expect(Number(result.outputs.duration)).toBeLessThanOrEqual(43)
    expect(JSON.parse(result.outputs.deployments)[0].duration).toBe(Number(result.outputs.duration))
  })

  it('marks stderr lines so they stand out', async () => {
    const server = await start()
    const result = await run(server)
    expect(result.stdout).toContain('\u001b[31mwarning: deprecated\u001b[0m')
  })

  it('sends force=true only when forcing', async () => {
    const server = await start()
    await run(server, { force: 'true' })
    expect(server.requests.find(request => request.path === '/api/v1/deploy')!.query).toEqual({
      uuid: APP.uuid,
      force: 'true'
    })
  })

  it('fails on a failed deployment, naming the application, the status and the link', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [build('failed')] }] })
    const result = await run(server)

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('failed')
    expect(buildLogLines(result.stdout)).toEqual([
      ...VISIBLE,
      'npm ERR! build script failed',
      'Gracefully shutting down build container'
    ])
    const [deployment] = server.deployments()
    const error = result.stdout.split('\n').find(line => line.startsWith('::error'))
    expect(error).toContain('web: deployment failed')
    expect(error).toContain('title=web%3A deployment failed')
    expect(error).toContain(`${server.url}/project/`)
    expect(error).toContain(`/deployment/${deployment.uuid}`)
  })

  it('prints the closing entry that comes seconds after finished_at, the configuration written meanwhile', async () => {
    // On a slow remote server each of the finally's configuration commands takes a second or
    // more, without an entry: the closing entry comes 4.4 s after finished_at.
    const slow: Scenario = {
      steps: [
        { at: 0, status: 'queued' },
        { at: 40, status: 'in_progress', lines: ['Starting deployment of web.'] },
        { at: 300, status: 'finished', lines: ['Rolling update completed.'] },
        { at: 1800 },
        { at: 3300 },
        { at: 4300 }
      ]
    }
    const server = await start({ apps: [{ ...APP, scenarios: [slow] }] })
    const result = await run(server)

    expect(result.code).toBe(0)
    const [deployment] = server.deployments()
    expect(buildLogLines(result.stdout)).toEqual([
      'Starting deployment of web.',
      'Rolling update completed.',
      `Gracefully shutting down build container: ${deployment.uuid}`
    ])
    expect(result.stdout).not.toMatch(/could not be seen/)
  })

  it('fails when the deployment is cancelled in Coolify', async () => {
    const forever: Scenario = { steps: [{ at: 0, status: 'in_progress', lines: ['building'] }] }
    const server = await start({ apps: [{ ...APP, scenarios: [forever] }] })
    let cancelled = false
    const result = await run(
      server,
      {},
      {
        onStdout: stdout => {
          if (cancelled || !buildLogLines(stdout).includes('building')) return
          cancelled = true
          const uuid = server.deployments()[0].uuid
          void fetch(`${server.url}/api/v1/deployments/${uuid}/cancel`, {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' }
          })
        }
      }
    )
    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('cancelled')
    // The cancel's lines, then what the job it stopped writes, the line after the closing entry
    // too.
    const { uuid } = server.deployments()[0]
    expect(buildLogLines(result.stdout)).toEqual([
      'building',
      'Deployment cancelled by user via API.',
      'Deployment container stopped.',
      'Deployment cancelled by user, stopping execution.',
      'Warning: Failed to write deployment configurations: Deployment cancelled by user',
      `Gracefully shutting down build container: ${uuid}`,
      `Error stopping container ${uuid}: Deployment cancelled by user`
    ])
    expect(result.stdout).toMatch(/::error.*web: deployment cancelled/)
  })

  it('cancels the deployment when the timeout passes', async () => {
    const forever: Scenario = { steps: [{ at: 0, status: 'in_progress', lines: ['building'] }] }
    const server = await start({ apps: [{ ...APP, scenarios: [forever] }] })
    const result = await run(server, { timeout: '1s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('timeout')
    const [deployment] = server.deployments()
    expect(requestLines(server.requests)).toContain(
      `POST /api/v1/deployments/${deployment.uuid}/cancel`
    )
    expect(deployment.status).toBe('cancelled-by-user')
    expect(buildLogLines(result.stdout)).toEqual([
      'building',
      'Deployment cancelled by user via API.',
      'Deployment container stopped.'
    ])
    expect(result.stdout).toMatch(/::error.*web: deployment timeout/)
  })

  it('leaves the deployment running at the timeout when cancel-on-timeout is false', async () => {
    const forever: Scenario = { steps: [{ at: 0, status: 'in_progress' }] }
    const server = await start({ apps: [{ ...APP, scenarios: [forever] }] })
    const result = await run(server, { timeout: '500ms', 'cancel-on-timeout': 'false' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('timeout')
    expect(requestLines(server.requests).some(request => request.endsWith('/cancel'))).toBe(false)
    expect(server.deployments()[0].status).toBe('in_progress')
  })

  it('follows the deployment under way when Coolify answers with a placeholder uuid', async () => {
    // Another run already queued this commit, and it runs long enough for the step to start and
    // trigger while it does, however slow the machine.
    const slow = build('finished')
    slow.steps = slow.steps.map(step => (step.at === 0 ? step : { ...step, at: step.at + 3000 }))
    const server = await start({ apps: [{ ...APP, scenarios: [slow] }] })
    await startElsewhere(server)
    const [real] = server.deployments()
    const result = await run(server)

    expect(server.deployments()).toHaveLength(1)
    expect(result.code).toBe(0)
    expect(result.outputs['deployment-uuid']).toBe(real.uuid)
    expect(result.outputs.status).toBe('finished')
    expect(requestLines(server.requests)).toContain(
      `GET /api/v1/deployments/applications/${APP.uuid}`
    )
    expect(buildLogLines(result.stdout)).toEqual([
      ...VISIBLE,
      'Rolling update completed.',
      'Gracefully shutting down build container'
    ])
  })

  it('names the uuid Coolify does not know', async () => {
    const server = await start()
    const result = await run(server, { 'app-uuid': 'nosuchapp' })

    expect(result.code).toBe(1)
    const error = result.stdout.split('\n').filter(line => line.startsWith('::error'))
    expect(error).toHaveLength(1)
    expect(error[0]).toContain('"nosuchapp"')
    expect(error[0]).toContain('`app-uuid`')
    expect(result.stderr).toBe('')
  })

  it('says to check the token when Coolify refuses it', async () => {
    const server = await start()
    const result = await run(server, { token: 'wrong-token-value' })

    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(
      /::error::POST \/deploy: Coolify answered 401 "Unauthenticated.".*`token`/
    )
    expect(result.stdout.replaceAll('::add-mask::wrong-token-value', '')).not.toContain(
      'wrong-token-value'
    )
    expect(server.deployments()).toHaveLength(0)
  })

  it('names the ability the token lacks', async () => {
    const server = await start({ abilities: ['read'] })
    const result = await run(server)
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/::error::.*lacks the `deploy` ability/)
  })

  it('follows the deployment without logs when the token cannot read them, and says why once', async () => {
    const server = await start({ abilities: ['deploy', 'read'] })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(buildLogLines(result.stdout)).toEqual([])
    expect(result.stdout.match(/::warning::.*`read:sensitive`/g)).toHaveLength(1)
  })

  it('prints hidden entries with debug-logs', async () => {
    const server = await start()
    const result = await run(server, { 'debug-logs': 'true' })
    expect(buildLogLines(result.stdout)).toContain('internal: docker inspect')
    expect(buildLogLines(result.stdout)).toContain('$ docker inspect x')
  })

  it('prints no build log with logs: false', async () => {
    const server = await start()
    const result = await run(server, { logs: 'false' })
    expect(result.code).toBe(0)
    expect(buildLogLines(result.stdout)).toEqual([])
  })

  // Guards: the trigger's answer has only the uuid; one read of the deployment gives the link to
  // its page, which `deployment-url` promises with `wait: false` too. Nothing is followed.
  it('returns at once with wait: false, with the link to the deployment', async () => {
    const server = await start()
    const result = await run(server, { wait: 'false' })

    expect(result.code).toBe(0)
    const [deployment] = server.deployments()
    const link = `${server.url}/project/p0jectfakecoolify0000001/environment/e0vironmentfakecoolify01/application/${APP.uuid}/deployment/${deployment.uuid}`
    expect(result.outputs).toMatchObject({
      status: 'queued',
      'deployment-uuid': deployment.uuid,
      'deployment-url': link,
      url: APP.fqdn
    })
    expect(JSON.parse(result.outputs.deployments)).toEqual([
      expect.objectContaining({ deployment_uuid: deployment.uuid, deployment_url: link })
    ])
    const reads = requestLines(server.requests).filter(line => line.includes('/deployments'))
    expect(reads).toEqual([`GET /api/v1/deployments/${deployment.uuid}`])
    expect(buildLogLines(result.stdout)).toEqual([])
    expect(result.state['pending-deployments'] ?? '[]').toBe('[]')
  })

  // Guards: without the read, the link is unknown: a warning says why `deployment-url` is empty,
  // and the deploy handed to Coolify still succeeds.
  it('says why deployment-url is empty with wait: false when the deployment cannot be read', async () => {
    const server = await start()
    server.inject({
      method: 'GET',
      path: /^\/deployments\/[a-z0-9]+$/,
      times: 100,
      do: { status: 404, body: { message: 'Deployment not found.' } }
    })
    const result = await run(server, { wait: 'false' })

    expect(result.code).toBe(0)
    const [deployment] = server.deployments()
    expect(result.outputs).toMatchObject({ status: 'queued', 'deployment-url': '' })
    const warnings = result.stdout.split('\n').filter(line => line.startsWith('::warning'))
    expect(warnings).toEqual([
      expect.stringContaining(
        `web: could not read deployment ${deployment.uuid} for the link to its page, so \`deployment-url\` is empty`
      )
    ])
  })

  it('refuses a bad input with one line and no request', async () => {
    const server = await start()
    const result = await run(server, { timeout: 'forever' })
    expect(result.code).toBe(1)
    expect(result.stdout).toContain('::error::Input `timeout`: "forever" is not a duration')
    expect(result.stderr).toBe('')
    expect(server.requests).toHaveLength(0)
  })
})

describe('what the bundle loads of Node', () => {
  type Loaded = { atStart: string[]; atExit: string[] }
  /** One run of each kind, shared by the tests that read it. */
  const runs = new Map<boolean, Promise<Loaded>>()
  const loaded = (gzip: boolean): Promise<Loaded> => {
    if (!runs.has(gzip)) runs.set(gzip, runOnce(gzip))
    return runs.get(gzip)!
  }

  async function runOnce(gzip: boolean): Promise<Loaded> {
    const server = await start({ gzip })
    const dir = mkdtempSync(join(tmpdir(), 'builtins-'))
    const file = join(dir, 'loaded.json')
    const preload = pathToFileURL(join(PROJECT, 'test', 'support', 'loaded-builtins.mjs')).href
    try {
      const result = await run(
        server,
        {},
        {
          nodeArgs: ['--import', preload],
          env: { LOADED_BUILTINS_FILE: file }
        }
      )
      expect(result.code).toBe(0)
      expect(buildLogLines(result.stdout)).toHaveLength(VISIBLE.length + 2)
      return JSON.parse(readFileSync(file, 'utf8')) as Loaded
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  it('never HTTP/2, which it never speaks, and zlib only once an answer comes compressed', async () => {
    const plain = (await loaded(false)).atExit
    // The preload loads node:net itself: node:http is the bundle's.
    expect(plain).toContain('http')
    expect(plain).not.toContain('http2')
    expect(plain).not.toContain('zlib')

    const gzipped = (await loaded(true)).atExit
    expect(gzipped).toContain('zlib')
    expect(gzipped).not.toContain('http2')
  })

  it('neither TLS nor crypto against a plain-http Coolify: 5–10 ms of the start, or of the run', async () => {
    const { atStart, atExit } = await loaded(false)
    expect(atStart).toContain('http')
    // Nor later: the log's stop-commands token comes from the kernel's generator (on Linux, as
    // here), the summary is appended with node:fs.
    for (const name of ['tls', 'crypto', 'fs/promises']) {
      expect(atStart).not.toContain(name)
      expect(atExit).not.toContain(name)
    }
  })
})

describe('the bundled action against the contract (seed flavor)', () => {
  it('deploys and streams the newline-separated log', async () => {
    const server = await start({ flavor: 'seed' })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.outputs['deployment-uuid']).toBe(server.deployments()[0].uuid)
    expect(buildLogLines(result.stdout)).toEqual(FINISHED_TEXT_LOG)
  })

  it('reports a cancelled deployment by its contract spelling', async () => {
    const forever: Scenario = { steps: [{ at: 0, status: 'in_progress', lines: ['building'] }] }
    const server = await start({ flavor: 'seed', apps: [{ ...APP, scenarios: [forever] }] })
    const result = await run(server, { timeout: '800ms' })
    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('timeout')
    expect(server.deployments()[0].status).toBe('cancelled')
  })
})
