/**
 * Services and databases that /deploy starts: no deployment to follow, so each is followed through
 * its own status until Coolify reports it running, within `health-timeout`. Coolify refreshes that
 * status in the background: a read from before the refresh decides nothing. Run through the bundle
 * against the fake Coolify.
 */
import { describe, expect, it } from '@jest/globals'
import type { FakeApp, FakeCoolify } from '../test/fake-coolify/index.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  errorLines,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  inputsFor,
  requestLines
} from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest(() => ({
  abilities: ['deploy', 'read', 'read:sensitive'],
  rateLimit: 6000
}))

const WEB: FakeApp = { ...APP, scenarios: [build('finished')] }
/** By default one part, `app`; it comes up 2.5 s after the trigger (command, then refresh). */
const SERVICE: FakeApp = {
  uuid: 'svc0queue0uuid0000000003',
  name: 'queue',
  kind: 'service'
}
/** Comes up 1.5 s after the trigger, when Coolify refreshes its status. */
const DATABASE: FakeApp = {
  uuid: 'db0pg0uuid00000000000004',
  name: 'pg',
  kind: 'database'
}

/** The health phase is short so that a resource that never comes up fails quickly. */
async function run(server: FakeCoolify, inputs: Record<string, string>): Promise<RunResult> {
  const result = await runAction({
    inputs: inputsFor(server, { timeout: '30s', 'health-timeout': '8s', ...inputs })
  })
  if (process.env.SHOW_RUN) console.log(result.stdout, result.stderr)
  return result
}

function rows(result: RunResult): Array<Record<string, unknown>> {
  return JSON.parse(result.outputs.deployments ?? '[]')
}

function rowOf(result: RunResult, uuid: string): Record<string, unknown> | undefined {
  return rows(result).find(row => row.app_uuid === uuid)
}

/** The text of each `::group::` … `::endgroup::` block the run printed. */
function groups(stdout: string): string[] {
  const found: string[] = []
  let current: string[] | undefined
  for (const line of stdout.split('\n')) {
    if (line.startsWith('::group::')) current = [line]
    else if (line === '::endgroup::' && current) {
      found.push(current.join('\n'))
      current = undefined
    } else current?.push(line)
  }
  return found
}

/** When the fake answered the trigger, from which its services and databases are timed. */
function triggeredAt(server: FakeCoolify): number {
  const trigger = actionRequests(server).find(request => request.path === '/api/v1/deploy')
  expect(trigger).toBeDefined()
  return trigger!.at
}

/** The action's reads of a resource's status (`/services/UUID` or `/databases/UUID`). */
function statusReads(server: FakeCoolify, path: string): FakeCoolify['requests'] {
  return actionRequests(server).filter(
    request => request.method === 'GET' && request.path === `/api/v1${path}`
  )
}

/** Services and databases have no deployment: nothing of theirs is ever cancelled. */
function expectNoCancel(server: FakeCoolify): void {
  expect(requestLines(actionRequests(server)).filter(line => line.includes('/cancel'))).toEqual([])
}

describe('services and databases started by /deploy', () => {
  // Guards: each started resource is followed through its own status until it runs, and reported
  // with its kind beside the application's deployment.
  it('follows an application, a service and a database that all come up', async () => {
    const server = await start({ apps: [WEB, SERVICE, DATABASE] })
    const result = await run(server, {
      'app-uuid': `${APP.uuid},${SERVICE.uuid},${DATABASE.uuid}`
    })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(rows(result)).toHaveLength(3)
    expect(rowOf(result, APP.uuid)).toMatchObject({ kind: 'application', status: 'finished' })
    expect(rowOf(result, SERVICE.uuid)).toMatchObject({
      kind: 'service',
      name: 'queue',
      deployment_uuid: null,
      status: 'finished'
    })
    expect(rowOf(result, DATABASE.uuid)).toMatchObject({
      kind: 'database',
      name: 'pg',
      deployment_uuid: null,
      status: 'finished'
    })
    // Up is only known once Coolify refreshed each status after the start.
    const at = triggeredAt(server)
    expect(
      statusReads(server, `/services/${SERVICE.uuid}`).some(read => read.at >= at + 2500)
    ).toBe(true)
    expect(
      statusReads(server, `/databases/${DATABASE.uuid}`).some(read => read.at >= at + 1500)
    ).toBe(true)
    expect(errorLines(result.stdout)).toEqual([])
    expectNoCancel(server)
    expectNoStackTrace(result.stderr)
  }, 40_000)

  // Guards: a tag deploy names a service only in a message line; it is found by name in
  // GET /services and followed by its uuid like one deployed by uuid.
  it('follows a service that a tag started, found by its name', async () => {
    const server = await start({
      apps: [
        { ...WEB, tags: ['prod'] },
        { ...SERVICE, tags: ['prod'] }
      ]
    })
    const result = await run(server, { 'app-uuid': '', tag: 'prod' })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(rows(result)).toHaveLength(2)
    expect(rowOf(result, APP.uuid)).toMatchObject({ kind: 'application', status: 'finished' })
    expect(rowOf(result, SERVICE.uuid)).toMatchObject({
      kind: 'service',
      name: 'queue',
      deployment_uuid: null,
      status: 'finished'
    })
    const lines = requestLines(actionRequests(server))
    expect(lines).toContain('GET /api/v1/services')
    expect(lines).toContain(`GET /api/v1/services/${SERVICE.uuid}`)
    expectNoCancel(server)
  }, 40_000)

  // Guards: a database that ran briefly and then stopped is unhealthy, and its container log,
  // which Coolify serves only while it runs, is in the job log and the summary.
  it('fails for a database that exits after its start, printing its log', async () => {
    const fatal = 'FATAL:  could not open file "global/pg_filenode.map": Permission denied'
    const server = await start({
      apps: [
        {
          ...DATABASE,
          runtimeLogs: ['LOG:  starting PostgreSQL 16.4', fatal],
          starts: [
            {
              states: [
                { at: 0, status: 'running:starting' },
                { at: 1500, status: 'exited' }
              ]
            }
          ]
        }
      ]
    })
    const result = await run(server, { 'app-uuid': DATABASE.uuid, 'cancel-on-timeout': 'true' })

    expect(result.code).toBe(1)
    expect(rowOf(result, DATABASE.uuid)).toMatchObject({ kind: 'database', status: 'unhealthy' })
    expect(result.outputs.status).toBe('unhealthy')
    expect(errorLines(result.stdout).some(line => /\bpg\b/.test(line))).toBe(true)
    expect(groups(result.stdout).some(group => group.includes(fatal))).toBe(true)
    expect(result.summary).toContain(fatal)
    expectNoCancel(server)
    expectNoStackTrace(result.stderr)
  }, 40_000)

  // Guards: a status the action could not read is never `unhealthy`: the step warns that it could
  // not confirm the database is up, and stays green.
  it('warns, and stays finished, when the database status cannot be read', async () => {
    const server = await start({ apps: [DATABASE] })
    server.inject({
      method: 'GET',
      path: /^\/databases\//,
      do: { status: 503, body: 'Service Unavailable' },
      times: Infinity
    })
    const result = await run(server, { 'app-uuid': DATABASE.uuid })

    expect(actionRequests(server).some(request => request.fault === 'status 503')).toBe(true)
    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(rowOf(result, DATABASE.uuid)).toMatchObject({ kind: 'database', status: 'finished' })
    expect(result.stdout).toMatch(/^::warning( [^:]*)?::.*could not confirm that pg is up/im)
    expect(result.summary).toMatch(/could not confirm that pg is up/i)
    expect(errorLines(result.stdout)).toEqual([])
    expectNoStackTrace(result.stderr)
  }, 40_000)

  // Guards: the status from before the start (running) must not pass a service whose fresh
  // status says it exited.
  it('fails for a service that was running before and exits after its start', async () => {
    const server = await start({
      apps: [
        {
          ...SERVICE,
          status: 'running:healthy',
          starts: [{ states: [{ at: 0, status: 'exited' }] }]
        }
      ]
    })
    const result = await run(server, { 'app-uuid': SERVICE.uuid, 'cancel-on-timeout': 'true' })

    expect(result.code).toBe(1)
    expect(rowOf(result, SERVICE.uuid)).toMatchObject({ kind: 'service', status: 'unhealthy' })
    expect(errorLines(result.stdout).some(line => /\bqueue\b/.test(line))).toBe(true)
    expectNoCancel(server)
    expectNoStackTrace(result.stderr)
  }, 40_000)

  // Guards: the status from before the start (exited) must not fail a database that then comes
  // up; only the refreshed status counts.
  it('passes a database that was stopped before and comes up after its start', async () => {
    const server = await start({ apps: [{ ...DATABASE, status: 'exited' }] })
    const result = await run(server, { 'app-uuid': DATABASE.uuid })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(rowOf(result, DATABASE.uuid)).toMatchObject({
      kind: 'database',
      deployment_uuid: null,
      status: 'finished'
    })
    const at = triggeredAt(server)
    expect(
      statusReads(server, `/databases/${DATABASE.uuid}`).some(read => read.at >= at + 1500)
    ).toBe(true)
    expect(errorLines(result.stdout)).toEqual([])
    expect(result.stdout).not.toMatch(/unhealthy/i)
  }, 40_000)

  // Guards: one part of a service that keeps restarting makes it unhealthy, with that part's log
  // (read while its container ran) in the job log and the summary.
  it('fails for a service with a part that keeps restarting, printing its log', async () => {
    const crash = 'Error: connect ECONNREFUSED 10.0.1.5:6379'
    const server = await start({
      apps: [
        {
          ...SERVICE,
          subs: [{ name: 'app' }, { name: 'worker' }],
          subLogs: {
            app: ['listening on 3000'],
            worker: ['worker started', crash]
          },
          starts: [
            {
              // The worker runs with a failing health check, then crashes and keeps restarting.
              states: [
                { at: 0, status: 'running:healthy', sub: 'app' },
                { at: 0, status: 'running:unhealthy', sub: 'worker' },
                { at: 1500, status: 'restarting:unhealthy', sub: 'worker' }
              ]
            }
          ]
        }
      ]
    })
    const result = await run(server, { 'app-uuid': SERVICE.uuid, 'cancel-on-timeout': 'true' })

    expect(result.code).toBe(1)
    expect(rowOf(result, SERVICE.uuid)).toMatchObject({ kind: 'service', status: 'unhealthy' })
    expect(errorLines(result.stdout).some(line => /\bqueue\b/.test(line))).toBe(true)
    expect(groups(result.stdout).some(group => group.includes(crash))).toBe(true)
    expect(result.summary).toContain(crash)
    expectNoCancel(server)
    expectNoStackTrace(result.stderr)
  }, 40_000)
})
