import { afterEach, describe, expect, it } from '@jest/globals'
import { PATCH_ALLOWED, startFakeCoolify } from '../test/fake-coolify/index.js'
import type { FakeCoolify, FakeOptions, Scenario } from '../test/fake-coolify/index.js'

let fake: FakeCoolify | undefined

afterEach(async () => {
  await fake?.close()
  fake = undefined
})

async function start(options: FakeOptions): Promise<FakeCoolify> {
  fake = await startFakeCoolify(options)
  return fake
}

interface Answer {
  status: number
  headers: Headers
  text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any
}

async function call(
  method: string,
  path: string,
  init: { token?: string; headers?: Record<string, string>; body?: unknown } = {}
): Promise<Answer> {
  const headers: Record<string, string> = {
    Accept: 'application/json',
    Authorization: `Bearer ${init.token ?? 'test-token'}`,
    ...init.headers
  }
  if (init.body !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(`${fake!.url}/api/v1${path}`, {
    method,
    headers,
    redirect: 'manual',
    body: init.body === undefined ? undefined : JSON.stringify(init.body)
  })
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/** queued → in_progress at 100 ms → finished at 200 ms, one more line at 250 ms. */
const timed: Scenario = {
  commit: 'abc123',
  steps: [
    { at: 0, status: 'queued' },
    {
      at: 100,
      status: 'in_progress',
      lines: [
        'Pulling ghcr.io/acme/web',
        { output: 'docker ps', command: 'docker ps', hidden: true }
      ]
    },
    { at: 200, status: 'finished', lines: ['Rolling update completed.'] },
    { at: 250, lines: ['Gracefully shutting down build container'] }
  ]
}

const long: Scenario = { steps: [{ at: 0, status: 'in_progress', lines: ['Building.'] }] }

describe('deploy and read, 4x', () => {
  it('follows the scenario with Coolify 4.x shapes', async () => {
    // The fake's own clock, driven here: each read sees the scenario at the time it names.
    let now = Date.parse('2026-11-23T10:00:00Z')
    await start({ apps: [{ uuid: 'web', name: 'Web', scenarios: [timed] }], clock: () => now })
    const trigger = await call('POST', '/deploy?uuid=web')
    expect(trigger.status).toBe(200)
    const [entry] = trigger.json.deployments
    expect(entry.message).toBe('Application Web deployment queued.')
    expect(entry.resource_uuid).toBe('web')
    expect(entry.deployment_uuid).toMatch(/^[a-z][a-z0-9]{23}$/)

    const queued = await call('GET', `/deployments/${entry.deployment_uuid}`)
    expect(queued.json).toMatchObject({
      deployment_uuid: entry.deployment_uuid,
      status: 'queued',
      commit: 'abc123',
      application_name: 'Web',
      logs: null,
      finished_at: null
    })
    expect(queued.json).not.toHaveProperty('uuid')
    expect(queued.json.deployment_url).toMatch(
      new RegExp(
        `^/project/\\w+/environment/\\w+/application/web/deployment/${entry.deployment_uuid}$`
      )
    )

    now += 150
    const running = await call('GET', `/deployments/${entry.deployment_uuid}`)
    expect(running.json.status).toBe('in_progress')
    // Dated by the clock that wrote the row, as Coolify's nginx and PHP share the server's.
    expect(running.headers.get('date')).toBe(new Date(now).toUTCString())
    expect(typeof running.json.logs).toBe('string')
    // PHP's json_encode escapes slashes, inside the logs string too.
    expect(running.text).toContain('ghcr.io\\\\\\/acme')
    const logs = JSON.parse(running.json.logs)
    expect(logs).toHaveLength(2)
    expect(logs[0]).not.toHaveProperty('order')
    expect(logs[0]).toMatchObject({
      output: 'Pulling ghcr.io/acme/web',
      type: 'stdout',
      hidden: false
    })
    expect(logs[0].timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    expect(logs[1]).toMatchObject({ command: 'docker ps', hidden: true, batch: 1, order: 2 })

    now += 150
    const done = await call('GET', `/deployments/${entry.deployment_uuid}`)
    expect(done.json.status).toBe('finished')
    expect(done.json.finished_at).not.toBeNull()
    const outputs = JSON.parse(done.json.logs).map((l: { output: string }) => l.output)
    expect(outputs.slice(-2)).toEqual([
      'Rolling update completed.',
      'Gracefully shutting down build container'
    ])
    expect(fake!.deployments()).toMatchObject([{ appUuid: 'web', status: 'finished' }])
  })

  it('numbers batches and order as Coolify does', async () => {
    // ApplicationDeploymentQueue.php 197 (addLogEntry: batch 1), ExecuteRemoteCommand.php 63, 179
    // (a command's output: a counter raised per call), `order` over the whole log.
    let now = Date.parse('2026-11-23T10:00:00Z')
    const scenario: Scenario = {
      steps: [
        { at: 0, status: 'queued' },
        {
          at: 100,
          status: 'in_progress',
          lines: [
            { output: 'step 1', command: 'docker build .' },
            { output: 'step 2', command: 'docker build .' },
            'Rolling update started.',
            { output: 'listening', command: 'docker logs web' }
          ]
        },
        { at: 200, status: 'finished', lines: ['Rolling update completed.'] }
      ]
    }
    await start({ apps: [{ uuid: 'web', name: 'Web', scenarios: [scenario] }], clock: () => now })
    const [queued] = (await call('POST', '/deploy?uuid=web')).json.deployments
    now += 300
    const read = await call('GET', `/deployments/${queued.deployment_uuid}`)
    const logs = JSON.parse(read.json.logs)
    expect(logs.map((l: { batch: number; order?: number }) => [l.batch, l.order])).toEqual([
      [1, 1],
      [1, 2],
      [1, 3],
      [2, 4],
      [1, 5]
    ])
  })

  it('writes finished_at in the finally, after the post-deployment output and before the closing entry, in whole seconds', async () => {
    // ApplicationDeploymentJob.php 529-556: FINISHED first, then the post-deployment command
    // (4822-4866); handle()'s finally writes finished_at, then the closing entry (386-410).
    let now = Date.parse('2026-11-23T10:00:00.250Z')
    const scenario: Scenario = {
      steps: [
        { at: 0, status: 'queued' },
        { at: 100, status: 'in_progress', lines: ['Starting deployment.'] },
        { at: 200, status: 'finished', lines: ['Rolling update completed.'] },
        {
          at: 4200,
          lines: ['Post-deployment command failed.', { output: 'boom', type: 'stderr' }]
        },
        { at: 4700, lines: ['Gracefully shutting down build container: {{deployment_uuid}}'] }
      ]
    }
    await start({ apps: [{ uuid: 'web', name: 'Web', scenarios: [scenario] }], clock: () => now })
    const [queued] = (await call('POST', '/deploy?uuid=web')).json.deployments
    const read = async () => (await call('GET', `/deployments/${queued.deployment_uuid}`)).json
    expect((await read()).created_at).toBe('2026-11-23T10:00:00.000000Z')
    now += 300
    expect(await read()).toMatchObject({ status: 'finished', finished_at: null })
    // The finally writes finished_at once the post-deployment output is written, then the
    // configuration (silent), and only then the closing entry (389-410): a read can fall between.
    now += 4000
    const between = await read()
    expect(between).toMatchObject({
      status: 'finished',
      finished_at: '2026-11-23T10:00:04.000000Z'
    })
    expect(JSON.parse(between.logs).pop().output).toBe('boom')
    now += 500
    const done = await read()
    expect(done.finished_at).toBe('2026-11-23T10:00:04.000000Z')
    expect(JSON.parse(done.logs).pop().output).toMatch(/^Gracefully shutting down/)
  })

  it('leaves finished_at null for a job killed inside its finally', async () => {
    let now = Date.parse('2026-11-23T10:00:00Z')
    const scenario: Scenario = {
      killedInFinally: true,
      steps: [
        { at: 0, status: 'queued' },
        { at: 100, status: 'finished', lines: ['Rolling update completed.'] }
      ]
    }
    await start({ apps: [{ uuid: 'web', name: 'Web', scenarios: [scenario] }], clock: () => now })
    const [queued] = (await call('POST', '/deploy?uuid=web')).json.deployments
    now += 60_000
    const done = (await call('GET', `/deployments/${queued.deployment_uuid}`)).json
    expect(done).toMatchObject({ status: 'finished', finished_at: null })
  })

  it('writes the closing entry itself after finished_at and the configuration, whose commands move updated_at', async () => {
    // handle()'s finally: finished_at, the configuration's remote commands (each moving updated_at
    // as it starts, ExecuteRemoteCommand.php 221-223), then the closing entry (389-410).
    let now = Date.parse('2026-11-23T10:00:00Z')
    const scenario: Scenario = {
      steps: [
        { at: 0, status: 'queued' },
        { at: 100, status: 'finished', lines: ['Rolling update completed.'] },
        { at: 2100 },
        { at: 4000 }
      ]
    }
    await start({ apps: [{ uuid: 'web', name: 'Web', scenarios: [scenario] }], clock: () => now })
    const [queued] = (await call('POST', '/deploy?uuid=web')).json.deployments
    const read = async () => (await call('GET', `/deployments/${queued.deployment_uuid}`)).json
    const last = (row: { logs: string }) => JSON.parse(row.logs).pop().output
    now += 3000
    const writing = await read()
    expect(writing).toMatchObject({
      finished_at: '2026-11-23T10:00:00.000000Z',
      updated_at: '2026-11-23T10:00:02.000000Z'
    })
    expect(last(writing)).toBe('Rolling update completed.')
    now += 1390
    expect(last(await read())).toBe('Rolling update completed.')
    now += 10
    const done = await read()
    expect(last(done)).toBe(`Gracefully shutting down build container: ${queued.deployment_uuid}`)
    expect(done.updated_at).toBe('2026-11-23T10:00:04.000000Z')
  })

  it('writes no closing entry of its own, and has no cancel route, for a server before 4.0.0-beta.407', async () => {
    let now = Date.parse('2026-11-23T10:00:00Z')
    const scenario: Scenario = {
      steps: [
        { at: 0, status: 'queued' },
        { at: 100, status: 'finished', lines: ['Rolling update completed.'] }
      ]
    }
    await start({
      apps: [{ uuid: 'web', name: 'Web', scenarios: [scenario] }],
      clock: () => now,
      version: '4.0-beta'
    })
    const [queued] = (await call('POST', '/deploy?uuid=web')).json.deployments
    now += 60_000
    const done = (await call('GET', `/deployments/${queued.deployment_uuid}`)).json
    expect(done.finished_at).toBe('2026-11-23T10:00:00.000000Z')
    expect(JSON.parse(done.logs).map((e: { output: string }) => e.output)).toEqual([
      'Rolling update completed.'
    ])
    // Nor has it a route to cancel a deployment (routes/api.php, added in 4.0.0-beta.436).
    const cancel = await call('POST', `/deployments/${queued.deployment_uuid}/cancel`)
    expect(cancel.status).toBe(404)
  })

  it('has a running job it cancelled say so, then write finished_at, the closing entry and what failed around it', async () => {
    // The cancel stops the job's command; the job finds the row cancelled and fails
    // (ExecuteRemoteCommand.php 226-233; ApplicationDeploymentJob.php 380-385), failed() finds the
    // status final and stops (5007-5009, 4900-4915), then the finally runs: every remote command
    // in it first checks for a cancel (ExecuteRemoteCommand.php 92-97).
    let now = Date.parse('2026-11-23T10:00:00Z')
    const scenario: Scenario = { steps: [{ at: 0, status: 'in_progress', lines: ['building'] }] }
    await start({ apps: [{ uuid: 'web', name: 'Web', scenarios: [scenario] }], clock: () => now })
    const [queued] = (await call('POST', '/deploy?uuid=web')).json.deployments
    const read = async () => (await call('GET', `/deployments/${queued.deployment_uuid}`)).json
    const visible = (row: { logs: string }) =>
      JSON.parse(row.logs)
        .filter((e: { hidden: boolean }) => !e.hidden)
        .map((e: { output: string }) => e.output)
    now += 500
    await call('POST', `/deployments/${queued.deployment_uuid}/cancel`)
    const cancelled = await read()
    expect(cancelled).toMatchObject({ status: 'cancelled-by-user', finished_at: null })
    expect(visible(cancelled)).toEqual([
      'building',
      'Deployment cancelled by user via API.',
      'Deployment container stopped.'
    ])
    now += 300
    const stopped = await read()
    expect(stopped).toMatchObject({
      status: 'cancelled-by-user',
      finished_at: '2026-11-23T10:00:00.000000Z'
    })
    expect(visible(stopped).slice(3)).toEqual([
      'Deployment cancelled by user, stopping execution.',
      'Warning: Failed to write deployment configurations: Deployment cancelled by user',
      `Gracefully shutting down build container: ${queued.deployment_uuid}`,
      `Error stopping container ${queued.deployment_uuid}: Deployment cancelled by user`
    ])
    now += 10_000
    expect(visible(await read())).toEqual(visible(stopped))
  })

  it('answers 405 to GET /deploy', async () => {
    await start({ apps: [{ uuid: 'web', name: 'Web' }] })
    const res = await call('GET', '/deploy?uuid=web')
    expect(res.status).toBe(405)
    expect(res.json).toEqual({ message: 'This endpoint has changed to a POST request.' })
    expect(fake!.deployments()).toHaveLength(0)
  })

  // routes/api.php 144 and 185: the ability is checked before post_required answers 405.
  it('checks the ability before answering 405 to a GET of a POST route', async () => {
    await start({ abilities: ['read', 'write'], apps: [{ uuid: 'web', name: 'Web' }] })
    expect((await call('GET', '/deploy')).json).toEqual({
      message: 'Missing required permissions: deploy'
    })
    expect((await call('GET', '/servers/any/validate')).status).toBe(405)
    await fake!.close()
    await start({ abilities: ['read', 'deploy'], apps: [{ uuid: 'web', name: 'Web' }] })
    expect((await call('GET', '/deploy')).status).toBe(405)
    const validate = await call('GET', '/servers/any/validate')
    expect(validate).toMatchObject({ status: 403 })
    expect(validate.json).toEqual({ message: 'Missing required permissions: write' })
    expect(fake!.deployments()).toHaveLength(0)
  })

  it('answers its version as plain text, and the token its team', async () => {
    await start({})
    const version = await call('GET', '/version')
    expect(version).toMatchObject({ status: 200, text: '4.3.11' })
    expect((await call('GET', '/team')).json).toMatchObject({ name: 'Root Team' })
    await fake!.close()
    await start({ version: '4.2' })
    expect((await call('GET', '/version')).text).toBe('4.2.0')
    expect((await call('GET', '/team')).status).toBe(404)
  })

  it('answers a never-saved uuid when the commit is already queued', async () => {
    await start({ apps: [{ uuid: 'web', name: 'Web', scenarios: [long] }] })
    const first = (await call('POST', '/deploy?uuid=web')).json.deployments[0]
    const second = (await call('POST', '/deploy?uuid=web')).json.deployments[0]
    expect(second.message).toBe('Deployment already queued for this commit.')
    expect(second.deployment_uuid).toMatch(/^[a-z][a-z0-9]{23}$/)
    expect(second.deployment_uuid).not.toBe(first.deployment_uuid)

    const placeholder = await call('GET', `/deployments/${second.deployment_uuid}`)
    expect(placeholder.status).toBe(404)
    expect(placeholder.json).toEqual({ message: 'Deployment not found.' })
    const history = await call('GET', '/deployments/applications/web?skip=0&take=10')
    expect(history.json.count).toBe(1)
    expect(history.json.deployments[0]).toMatchObject({
      deployment_uuid: first.deployment_uuid,
      status: 'in_progress'
    })

    // force=true queues a new one anyway.
    const forced = (await call('POST', '/deploy?uuid=web&force=true')).json.deployments[0]
    expect(forced.message).toBe('Application Web deployment queued.')
    expect(fake!.deployments().map(d => d.uuid)).toEqual([
      first.deployment_uuid,
      forced.deployment_uuid
    ])
  })

  it('leaves logs out without read:sensitive', async () => {
    // The fake's clock stands still: the deployment is read while it is still queued.
    const now = Date.parse('2026-11-23T10:00:00Z')
    await start({
      abilities: ['deploy', 'read'],
      apps: [{ uuid: 'web', name: 'Web' }],
      clock: () => now
    })
    const { deployment_uuid } = (await call('POST', '/deploy?uuid=web')).json.deployments[0]
    const res = await call('GET', `/deployments/${deployment_uuid}`)
    expect(res.status).toBe(200)
    expect(res.json.status).toBe('queued')
    expect(res.json).not.toHaveProperty('logs')
  })

  it("leaves logs out of an application's history without read:sensitive", async () => {
    // The model hides `logs` (ApplicationDeploymentQueue.php 86-90); the history shows them only
    // to a token that may read sensitive data (DeployController.php 727-729).
    await start({ abilities: ['deploy', 'read'], apps: [{ uuid: 'web', name: 'Web' }] })
    await call('POST', '/deploy?uuid=web')
    const history = (await call('GET', '/deployments/applications/web')).json
    expect(history.count).toBe(1)
    expect(history.deployments[0]).not.toHaveProperty('logs')
    await fake!.close()
    await start({
      abilities: ['deploy', 'read', 'read:sensitive'],
      apps: [{ uuid: 'web', name: 'Web' }]
    })
    await call('POST', '/deploy?uuid=web')
    const sensitive = (await call('GET', '/deployments/applications/web')).json
    expect(sensitive.deployments[0]).toHaveProperty('logs')
  })

  it('closes the log with the entry naming the deployment, after the final status', async () => {
    let now = Date.parse('2026-11-23T10:00:00Z')
    await start({ apps: [{ uuid: 'web', name: 'Web' }], clock: () => now })
    const { deployment_uuid } = (await call('POST', '/deploy?uuid=web')).json.deployments[0]
    const read = async (): Promise<{ status: string; last: string }> => {
      const { json } = await call('GET', `/deployments/${deployment_uuid}`)
      const entries = JSON.parse(json.logs) as Array<{ output: string }>
      return { status: json.status, last: entries[entries.length - 1].output }
    }
    now += 60
    expect(await read()).toEqual({ status: 'finished', last: 'Rolling update completed.' })
    now += 20
    expect(await read()).toEqual({
      status: 'finished',
      last: `Gracefully shutting down build container: ${deployment_uuid}`
    })
  })

  it('cancels a running deployment once, then refuses', async () => {
    await start({ apps: [{ uuid: 'web', name: 'Web', scenarios: [long] }] })
    const { deployment_uuid } = (await call('POST', '/deploy?uuid=web')).json.deployments[0]
    const cancel = await call('POST', `/deployments/${deployment_uuid}/cancel`)
    expect(cancel.status).toBe(200)
    expect(cancel.json).toEqual({
      message: 'Deployment cancelled successfully.',
      deployment_uuid,
      status: 'cancelled-by-user'
    })
    const read = await call('GET', `/deployments/${deployment_uuid}`)
    expect(read.json.status).toBe('cancelled-by-user')
    expect(JSON.parse(read.json.logs).map((l: { output: string }) => l.output)).toContain(
      'Deployment cancelled by user via API.'
    )
    const again = await call('POST', `/deployments/${deployment_uuid}/cancel`)
    expect(again.status).toBe(400)
    expect(again.json).toEqual({
      message: 'Deployment cannot be cancelled. Current status: cancelled-by-user'
    })
    expect((await call('POST', '/deployments/nope/cancel')).status).toBe(404)
  })
})

describe('deploy and read, seed', () => {
  it('serves GET /deploy, a uuid field and newline logs without hidden lines', async () => {
    await start({ flavor: 'seed', apps: [{ uuid: 'web', name: 'Web', scenarios: [timed] }] })
    const trigger = await call('GET', '/deploy?uuid=web&force=false')
    const { deployment_uuid } = trigger.json.deployments[0]
    await sleep(300)
    const res = await call('GET', `/deployments/${deployment_uuid}`)
    expect(res.json).toEqual({
      uuid: deployment_uuid,
      status: 'finished',
      created_at: expect.stringMatching(/Z$/),
      finished_at: expect.stringMatching(/Z$/),
      logs: 'Pulling ghcr.io/acme/web\nRolling update completed.\nGracefully shutting down build container'
    })
    // Cancelling a finished deployment has no effect.
    const cancel = await call('POST', `/deployments/${deployment_uuid}/cancel`)
    expect(cancel.json).toEqual({ message: 'Deployment cancelled.' })
    expect((await call('GET', `/deployments/${deployment_uuid}`)).json.status).toBe('finished')
  })

  it('always queues a new deployment and spells cancelled plainly', async () => {
    await start({ flavor: 'seed', apps: [{ uuid: 'web', name: 'Web', scenarios: [long] }] })
    await call('POST', '/deploy?uuid=web')
    const second = (await call('POST', '/deploy?uuid=web')).json.deployments[0]
    expect(second.message).toBe('Application Web deployment queued.')
    await call('POST', `/deployments/${second.deployment_uuid}/cancel`)
    expect(fake!.deployments().map(d => d.status)).toEqual(['in_progress', 'cancelled'])
    const history = await call('GET', '/deployments/applications/web')
    expect(history.json.count).toBe(2)
    expect(history.json.deployments[0]).toEqual({
      deployment_uuid: second.deployment_uuid,
      status: 'cancelled',
      commit: 'HEAD',
      created_at: expect.any(String)
    })
  })
})

describe('deploy trigger answers', () => {
  const resources: FakeOptions = {
    apps: [
      { uuid: 'web', name: 'Web', tags: ['prod'], previews: [7] },
      { uuid: 'svc', name: 'Queue', kind: 'service', tags: ['prod'] },
      { uuid: 'db', name: 'Pg', kind: 'database', tags: ['prod', 'data'] },
      { uuid: 'locked', name: 'Locked', unauthorized: true }
    ]
  }

  it('deploys by tag in the message/details shape', async () => {
    await start(resources)
    const res = await call('POST', '/deploy?tag=prod')
    expect(res.status).toBe(200)
    expect(res.json).toEqual({
      message: [
        'Application Web deployment queued.',
        'Service Queue started. It could take a while, be patient.'
      ],
      details: [{ resource_uuid: 'web', deployment_uuid: fake!.deployments()[0].uuid }]
    })
    expect((await call('POST', '/deploy?tag=data')).json).toEqual({
      message: ['No resources found for tag data.']
    })
    const none = await call('POST', '/deploy?tag=nope')
    expect(none.status).toBe(404)
    expect(none.json).toEqual({ message: 'No resources found with this tag.' })
  })

  it('skips unknown uuids and has no deployment uuid for services and databases', async () => {
    await start(resources)
    const res = await call('POST', '/deploy?uuid=svc,nope,db,locked')
    expect(res.json).toEqual({
      deployments: [
        {
          message: 'Service Queue started. It could take a while, be patient.',
          resource_uuid: 'svc'
        },
        { message: 'Database Pg started.', resource_uuid: 'db' },
        { message: 'Unauthorized to deploy this application.', resource_uuid: 'locked' }
      ]
    })
    const none = await call('POST', '/deploy?uuid=nope')
    expect(none.status).toBe(404)
    expect(none.json).toEqual({ message: 'No resources found.' })
  })

  it('checks pull requests and parameters, reading only the query string', async () => {
    await start(resources)
    expect((await call('POST', '/deploy?uuid=web&pr=8')).json.deployments).toEqual([
      { message: 'Pull request 8 not found for this resource.', resource_uuid: 'web' }
    ])
    const preview = await call('POST', '/deploy?uuid=web&pull_request_id=7')
    expect(preview.json.deployments[0].deployment_uuid).toBeDefined()
    expect(fake!.deployments()).toMatchObject([{ pr: 7 }])

    const both = await call('POST', '/deploy?uuid=web&tag=prod')
    expect(both.status).toBe(400)
    expect(both.json).toEqual({ message: 'You can only use uuid or tag, not both.' })
    const body = await call('POST', '/deploy', { body: { uuid: 'web' } })
    expect(body.status).toBe(400)
    expect(body.json).toEqual({ message: 'You must provide uuid or tag.' })
  })
})

describe('errors and limits', () => {
  it('answers auth, permission and setting errors like Coolify', async () => {
    await start({ abilities: ['read'], apps: [{ uuid: 'web', name: 'Web' }] })
    const none = await fetch(`${fake!.url}/api/v1/applications`, {
      headers: { Accept: 'application/json' }
    })
    expect(none.status).toBe(401)
    expect(await none.json()).toEqual({ message: 'Unauthenticated.' })
    expect((await call('GET', '/applications', { token: 'wrong' })).status).toBe(401)
    const invalid = await call('GET', '/applications', { token: 'invalid-1|abc' })
    expect(invalid.status).toBe(400)
    expect(invalid.json.message).toBe('Invalid token.')
    const denied = await call('POST', '/deploy?uuid=web')
    expect(denied.status).toBe(403)
    expect(denied.json).toEqual({ message: 'Missing required permissions: deploy' })
    expect((await call('GET', '/applications')).status).toBe(200)
    const unknown = await call('GET', '/nothing/here', { token: 'wrong' })
    expect(unknown.status).toBe(404)
    expect(unknown.json).toEqual({ message: 'Not found.', docs: 'https://coolify.io/docs' })
  })

  it('answers a disabled API, a blocked IP and Cloudflare Access', async () => {
    await start({ apiDisabled: true })
    expect((await call('GET', '/applications')).json).toEqual({
      success: true,
      message: 'API is disabled.'
    })
    await fake!.close()
    await start({ ipBlocked: true })
    const blocked = await call('GET', '/applications')
    expect(blocked.status).toBe(403)
    expect(blocked.json.message).toBe('You are not allowed to access the API.')
    await fake!.close()
    await start({ requiredHeaders: { 'CF-Access-Client-Id': 'id' } })
    const login = await call('GET', '/applications')
    expect(login.status).toBe(302)
    expect(login.headers.get('location')).toContain('cloudflareaccess.com')
    expect(login.headers.get('content-type')).toContain('text/html')
    const through = await call('GET', '/applications', { headers: { 'CF-Access-Client-Id': 'id' } })
    expect(through.status).toBe(200)
  })

  it('counts requests per token and answers 429 with Retry-After', async () => {
    await start({ rateLimit: 3 })
    const remaining = []
    for (let i = 0; i < 3; i++) {
      const res = await call('GET', '/applications')
      expect(res.headers.get('x-ratelimit-limit')).toBe('3')
      remaining.push(res.headers.get('x-ratelimit-remaining'))
    }
    expect(remaining).toEqual(['2', '1', '0'])
    const over = await call('GET', '/applications')
    expect(over.status).toBe(429)
    expect(over.json).toEqual({ message: 'Too Many Attempts.' })
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
    // Without Accept: application/json Laravel renders an HTML page.
    const page = await call('GET', '/applications', { headers: { Accept: '*/*' } })
    expect(page.status).toBe(429)
    expect(page.headers.get('content-type')).toContain('text/html')
    // Another token has its own window.
    expect((await call('GET', '/applications', { token: 'wrong' })).status).toBe(401)
  })

  it('lists the running deployments as DeployController::deployments does', async () => {
    let now = 1_000_000
    const apps = ['one', 'two'].map(name => ({ uuid: name, name, scenarios: [timed] }))
    await start({ apps, clock: () => now })
    const first = await call('POST', '/deploy?uuid=one')
    now += 50
    await call('POST', '/deploy?uuid=two')
    now += 10
    const listed = await call('GET', '/deployments')
    expect(listed.status).toBe(200)
    const rows = listed.json as Array<Record<string, unknown>>
    // Queued ones too, oldest first, each the row a read by uuid gives, logs included.
    expect(rows.map(row => [row.application_name, row.status])).toEqual([
      ['one', 'queued'],
      ['two', 'queued']
    ])
    const [{ deployment_uuid: uuid }] = (
      first.json as { deployments: Array<Record<string, string>> }
    ).deployments
    expect(rows[0]).toEqual((await call('GET', `/deployments/${uuid}`)).json)
    expect('logs' in rows[0]).toBe(true)
    // Finished, it is no longer there; the one still in progress is.
    now += 160
    const later = (await call('GET', '/deployments')).json as Array<Record<string, unknown>>
    expect(later.map(row => [row.application_name, row.status])).toEqual([['two', 'in_progress']])
  })

  it('lists them as an object keyed by the query order when the older one was written later', async () => {
    let now = 1_000_000
    const apps = [
      { uuid: 'one', name: 'one', scenarios: [timed] },
      { uuid: 'two', name: 'two', scenarios: [long] }
    ]
    await start({ apps, clock: () => now })
    await call('POST', '/deploy?uuid=one')
    now += 50
    await call('POST', '/deploy?uuid=two')
    // `one` turns in progress at 100 ms, after `two` was written: the query gives `two` first.
    now += 100
    const rows = (await call('GET', '/deployments')).json as Record<string, Record<string, unknown>>
    expect(Array.isArray(rows)).toBe(false)
    expect(rows['0'].application_name).toBe('two')
    expect(rows['1'].application_name).toBe('one')
  })

  it('lists running deployments without logs for a token that may not read sensitive data', async () => {
    await start({
      abilities: ['read', 'deploy'],
      apps: [{ uuid: 'web', name: 'Web', scenarios: [long] }]
    })
    await call('POST', '/deploy?uuid=web')
    const rows = (await call('GET', '/deployments')).json as Array<Record<string, unknown>>
    expect(rows).toHaveLength(1)
    expect(rows[0].status).toBe('in_progress')
    expect('logs' in rows[0]).toBe(false)
  })

  it("counts in Laravel's fixed window: opened by the first request, over a minute later", async () => {
    let now = 1_000_000
    await start({ rateLimit: 3, clock: () => now })
    const remaining = async (): Promise<string | null> => {
      const res = await call('GET', '/applications')
      return res.status === 429
        ? `429 after ${res.headers.get('retry-after')}s, ${res.headers.get('x-ratelimit-remaining')} left`
        : res.headers.get('x-ratelimit-remaining')
    }
    expect(await remaining()).toBe('2')
    now += 40_000
    expect(await remaining()).toBe('1')
    expect(await remaining()).toBe('0')
    // A sliding window would let a request through 60 s after the first; this one waits for the
    // window's end, and the refusal does not count.
    now += 10_000
    expect(await remaining()).toBe('429 after 10s, 0 left')
    now += 9_999
    expect(await remaining()).toBe('429 after 1s, 0 left')
    now += 1
    // The window is over: the whole limit again, though two requests were 20 s ago.
    expect(await remaining()).toBe('2')
  })

  it('validates application writes and redirects without Accept', async () => {
    await start({ abilities: ['root'], apps: [{ uuid: 'web', name: 'Web' }] })
    const invalid = await call('POST', '/applications/private-deploy-key', {
      body: { git_repository: 'git@git.example.com:acme/api.git', color: 'red' }
    })
    expect(invalid.status).toBe(422)
    expect(invalid.json.errors.project_uuid).toEqual(['The project uuid field is required.'])
    expect(invalid.json.errors.color).toEqual(['This field is not allowed.'])
    const browser = await call('PATCH', '/applications/web', {
      body: { fqdn: 'https://web.example.com' },
      headers: { Accept: 'text/html' }
    })
    expect(browser.status).toBe(302)
    expect(browser.headers.get('location')).toBe(fake!.url)

    const created = await call('POST', '/applications/private-deploy-key', {
      body: {
        project_uuid: 'p',
        server_uuid: 's',
        environment_name: 'production',
        private_key_uuid: 'k',
        git_repository: 'git@git.example.com:acme/api.git',
        git_branch: 'main',
        build_pack: 'dockerfile',
        ports_exposes: '3000'
      }
    })
    expect(created.status).toBe(201)
    expect(created.json.domains).toMatch(/^http:\/\/[a-z0-9]+\.127\.0\.0\.1\.sslip\.io$/)
    const uuid = created.json.uuid
    const patched = await call('PATCH', `/applications/${uuid}`, {
      body: { domains: 'https://api.example.com' }
    })
    expect(patched.json).toEqual({ uuid })
    const detail = (await call('GET', `/applications/${uuid}`)).json
    expect(detail).not.toHaveProperty('id')
    expect(detail.fqdn).toBe('https://api.example.com')
    expect((await call('DELETE', `/applications/${uuid}`)).json).toEqual({
      message: 'Application deletion request queued.'
    })
    expect((await call('GET', `/applications/${uuid}`)).json).toEqual({
      message: 'Application not found.'
    })
  })
})

describe('faults', () => {
  it('resets, answers HTML or a status, and records the fault', async () => {
    await start({ apps: [{ uuid: 'web', name: 'Web' }] })
    fake!.inject({ path: '/applications', do: 'reset' })
    fake!.inject({ method: 'GET', path: /^\/deployments\//, do: 'html' })
    fake!.inject({ path: '/deploy', skip: 1, do: { status: 503, body: { message: 'busy' } } })

    await expect(call('GET', '/applications')).rejects.toThrow()
    expect((await call('GET', '/applications')).status).toBe(200)
    const gateway = await call('GET', '/deployments/abc')
    expect(gateway.status).toBe(502)
    expect(gateway.headers.get('content-type')).toBe('text/html')
    expect(gateway.text).toContain('nginx')
    expect((await call('POST', '/deploy?uuid=web')).status).toBe(200)
    const busy = await call('POST', '/deploy?uuid=web&force=true')
    expect(busy.status).toBe(503)
    expect(busy.json).toEqual({ message: 'busy' })
    expect(fake!.requests.map(r => r.fault)).toEqual([
      'reset',
      undefined,
      'html',
      undefined,
      'status 503'
    ])
    expect(fake!.requests[3]).toMatchObject({
      method: 'POST',
      path: '/api/v1/deploy',
      query: { uuid: 'web' }
    })
  })

  it('hangs until the client gives up or the fake closes, and truncates bodies', async () => {
    await start({})
    fake!.inject({ path: '/applications', times: 2, do: 'hang' })
    const url = `${fake!.url}/api/v1/applications`
    const headers = { Authorization: 'Bearer test-token', Accept: 'application/json' }
    await expect(fetch(url, { headers, signal: AbortSignal.timeout(50) })).rejects.toThrow()
    const pending = fetch(url, { headers })
    await sleep(20)
    await fake!.close()
    await expect(pending).rejects.toThrow()

    await start({})
    fake!.inject({ do: 'truncate' })
    const res = await fetch(`${fake!.url}/api/v1/applications`, { headers })
    expect(res.status).toBe(200)
    await expect(res.text()).rejects.toThrow()
  })
})

/** Polls until `done` holds, for at most five seconds. */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  for (let waited = 0; !(await done()) && waited < 5000; waited += 10) await sleep(10)
}

const statusOf = (uuid: string): string | undefined =>
  fake!.deployments().find(d => d.uuid === uuid)?.status

/** Queued for 300 ms, in progress until 600 ms, then finished. */
function slow(commit?: string): Scenario {
  return {
    ...(commit ? { commit } : {}),
    steps: [
      { at: 0, status: 'queued' },
      { at: 300, status: 'in_progress', lines: ['Starting deployment.'] },
      { at: 600, status: 'finished', lines: ['Rolling update completed.'] }
    ]
  }
}

const visibleLog = (logs: string): string[] =>
  JSON.parse(logs)
    .filter((l: { hidden: boolean }) => !l.hidden)
    .map((l: { output: string }) => l.output)

async function deployUuid(query: string): Promise<string> {
  const res = await call('POST', `/deploy?${query}`)
  expect(res.status).toBe(200)
  return res.json.deployments[0].deployment_uuid
}

describe('changing an application, 4x', () => {
  const root: FakeOptions = { abilities: ['root'], apps: [{ uuid: 'web', name: 'Web' }] }

  it('refuses every field outside the allow-list, environment_variables included', async () => {
    await start(root)
    const res = await call('PATCH', '/applications/web', {
      body: { name: 'renamed', environment_variables: 'A=1', fqdn: 'https://x.example.com' }
    })
    expect(res.status).toBe(422)
    expect(res.json).toEqual({
      message: 'Validation failed.',
      errors: {
        environment_variables: ['This field is not allowed.'],
        fqdn: ['This field is not allowed.']
      }
    })
    expect(fake!.app('web')?.name).toBe('Web')
    expect(PATCH_ALLOWED).toContain('health_check_path')
    expect(PATCH_ALLOWED).not.toContain('environment_variables')

    const types = await call('PATCH', '/applications/web', {
      body: { git_commit_sha: '-x', build_pack: 'dockerimage', is_static: 'yes' }
    })
    expect(types.json.errors).toEqual({
      git_commit_sha: ['The git commit sha field format is invalid.'],
      build_pack: ['The selected build pack is invalid.'],
      is_static: ['The is static field must be true or false.']
    })
    const ports = await call('PATCH', '/applications/web', { body: { ports_exposes: '80,x' } })
    expect(ports.json.errors).toEqual({
      ports_exposes: 'The ports_exposes should be a comma separated list of numbers.'
    })
    const missing = await call('PATCH', '/applications/nope', { body: { name: 'x' } })
    expect(missing.status).toBe(404)
    expect(missing.json).toEqual({ message: 'Application not found' })
  })

  it('stores the version fields and answers the uuid', async () => {
    await start(root)
    const body = {
      git_commit_sha: 'abc1234',
      docker_registry_image_name: 'ghcr.io/acme/web',
      docker_registry_image_tag: 'v2',
      preview_url_template: 'pr-{{pr_id}}.{{domain}}',
      build_pack: 'nixpacks',
      health_check_enabled: true,
      health_check_path: '/health'
    }
    const res = await call('PATCH', '/applications/web', { body })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ uuid: 'web' })
    expect(fake!.app('web')).toMatchObject({
      gitCommitSha: 'abc1234',
      imageName: 'ghcr.io/acme/web',
      imageTag: 'v2',
      previewUrlTemplate: 'pr-{{pr_id}}.{{domain}}',
      buildPack: 'nixpacks'
    })
    const detail = (await call('GET', '/applications/web')).json
    expect(detail).toMatchObject({
      git_commit_sha: 'abc1234',
      docker_registry_image_tag: 'v2',
      build_pack: 'nixpacks'
    })
  })

  it('queues a deployment for instant_deploy but answers only the uuid', async () => {
    await start({ ...root, apps: [{ uuid: 'web', name: 'Web', scenarios: [long] }] })
    const res = await call('PATCH', '/applications/web', { body: { instant_deploy: true } })
    expect(res.json).toEqual({ uuid: 'web' })
    expect(fake!.deployments()).toHaveLength(1)
    const again = await call('PATCH', '/applications/web', { body: { instant_deploy: true } })
    expect(again.json).toEqual({ message: 'Deployment already queued for this commit.' })
  })

  it('keeps the seed contract: environment_variables as KEY=value text', async () => {
    await start({ ...root, flavor: 'seed' })
    const patched = await call('PATCH', '/applications/web', {
      body: { environment_variables: 'A=1\nB=x=y' }
    })
    expect(patched.json).toEqual({ uuid: 'web' })
    expect((await call('GET', '/applications/web')).json.environment_variables).toEqual([
      { key: 'A', value: '1', is_secret: false },
      { key: 'B', value: 'x=y', is_secret: false }
    ])
    expect(fake!.app('web')?.envs.map(e => [e.key, e.value])).toEqual([
      ['A', '1'],
      ['B', 'x=y']
    ])
    const refused = await call('PATCH', '/applications/web', { body: { git_commit_sha: 'abc' } })
    expect(refused.status).toBe(422)
  })
})

describe('environment variables in bulk, 4x', () => {
  const apps = [{ uuid: 'web', name: 'Web' }]

  it('creates or updates by key and shows values only to who may read them', async () => {
    await start({ abilities: ['write', 'read:sensitive'], apps })
    const first = await call('PATCH', '/applications/web/envs/bulk', {
      body: {
        data: [
          { key: 'API_URL', value: 'https://api.example.com' },
          { key: 'TOKEN', value: 's3cret', is_shown_once: true },
          { key: 'API_URL', value: 'https://preview.example.com', is_preview: true }
        ]
      }
    })
    expect(first.status).toBe(201)
    expect(first.json).toHaveLength(3)
    expect(first.json[0]).toMatchObject({
      key: 'API_URL',
      value: 'https://api.example.com',
      is_preview: false,
      is_runtime: true,
      is_buildtime: true
    })
    expect(first.json[0].uuid).toMatch(/^[a-z][a-z0-9]{23}$/)
    expect(first.json[1]).not.toHaveProperty('value')

    const update = await call('PATCH', '/applications/web/envs/bulk', {
      body: { data: [{ key: 'API_URL', value: 'https://v2.example.com', is_buildtime: false }] }
    })
    expect(update.json[0].uuid).toBe(first.json[0].uuid)
    expect(fake!.app('web')?.envs).toEqual([
      expect.objectContaining({
        key: 'API_URL',
        value: 'https://v2.example.com',
        isBuildtime: false
      }),
      expect.objectContaining({ key: 'TOKEN', value: 's3cret', isShownOnce: true }),
      expect.objectContaining({
        key: 'API_URL',
        value: 'https://preview.example.com',
        isPreview: true
      })
    ])

    await fake!.close()
    await start({ abilities: ['write'], apps })
    const hidden = await call('PATCH', '/applications/web/envs/bulk', {
      body: { data: [{ key: 'A', value: 'secret-a' }] }
    })
    expect(hidden.status).toBe(201)
    expect(hidden.json[0]).not.toHaveProperty('value')
    expect(hidden.text).not.toContain('secret-a')
  })

  it('saves values as Laravel’s middleware hands them over: trimmed, and null once empty', async () => {
    await start({ abilities: ['read', 'write', 'read:sensitive'], apps })
    const saved = await call('PATCH', '/applications/web/envs/bulk', {
      body: {
        data: [
          { key: 'PADDED', value: '  spaced \n' },
          { key: 'EMPTIED', value: '' },
          { key: 'BLANK', value: ' \t\u00a0\u3000' },
          { key: 'LITERAL', value: '', is_literal: true }
        ]
      }
    })
    expect(saved.status).toBe(201)
    expect(saved.json.map((v: { value: unknown }) => v.value)).toEqual(['spaced', null, null, null])
    // An emptied value's real_value is an empty text, quoted for a literal one.
    const listed = await call('GET', '/applications/web/envs')
    expect(
      listed.json.map((v: { key: string; value: unknown; real_value: unknown }) => [
        v.key,
        v.value,
        v.real_value
      ])
    ).toEqual([
      ['PADDED', 'spaced', 'spaced'],
      ['EMPTIED', null, ''],
      ['BLANK', null, ''],
      ['LITERAL', null, "''"]
    ])
  })

  it('answers 400 without data, 422 for a bad item, 403 without write, 404 in the seed', async () => {
    await start({ abilities: ['write'], apps })
    for (const body of [{ data: [] }, { other: 1 }]) {
      const res = await call('PATCH', '/applications/web/envs/bulk', { body })
      expect(res.status).toBe(400)
      expect(res.json).toEqual({ message: 'Bulk data is required.' })
    }
    const bad = await call('PATCH', '/applications/web/envs/bulk', {
      body: { data: [{ key: '1A', value: 'x' }] }
    })
    expect(bad.status).toBe(422)
    expect(bad.json).toEqual({
      message: 'Validation failed.',
      errors: { key: ['The key field format is invalid.'] }
    })
    const unknown = await call('PATCH', '/applications/nope/envs/bulk', { body: { data: [] } })
    expect(unknown.json).toEqual({ message: 'Application not found' })
    await fake!.close()

    await start({ abilities: ['read'], apps })
    const denied = await call('PATCH', '/applications/web/envs/bulk', { body: { data: [] } })
    expect(denied.json).toEqual({ message: 'Missing required permissions: write' })
    await fake!.close()

    await start({ flavor: 'seed', abilities: ['root'], apps })
    const seed = await call('PATCH', '/applications/web/envs/bulk', { body: { data: [] } })
    expect(seed.status).toBe(404)
  })
})

describe('tokens and roles, 4x', () => {
  const apps = [{ uuid: 'web', name: 'Web' }]

  it('answers 401 Invalid token without docs for a token whose owner left the team', async () => {
    await start({ tokenWithoutTeam: true, apps })
    const res = await call('GET', '/applications')
    expect(res.status).toBe(401)
    expect(res.json).toEqual({ message: 'Invalid token.' })
    // A wrong token is still refused before that.
    expect((await call('GET', '/applications', { token: 'wrong' })).json).toEqual({
      message: 'Unauthenticated.'
    })
  })

  it('keeps a team member to reading', async () => {
    await start({ role: 'member', abilities: ['read', 'deploy'], apps })
    const deploy = await call('POST', '/deploy?uuid=web')
    expect(deploy.status).toBe(403)
    expect(deploy.json).toEqual({ message: 'Missing required team role.' })
    expect((await call('GET', '/applications')).status).toBe(403)
    await fake!.close()

    await start({ role: 'member', abilities: ['read'], apps })
    expect((await call('GET', '/applications')).status).toBe(200)
    await fake!.close()

    // 4.2 let deploy and read:sensitive through its team check; the ability check refused them.
    await start({ role: 'member', version: '4.2', abilities: ['read', 'read:sensitive'], apps })
    const read = await call('GET', '/applications')
    expect(read.status).toBe(403)
    expect(read.json.message).toBe(
      'This API token has permissions (read:sensitive) that exceed your current role as a team ' +
        'member. Members are restricted to read-only API access. Please revoke this token and ' +
        'create a new one with only read permissions.'
    )
    await fake!.close()
    await start({ role: 'member', version: '4.2', abilities: ['write'], apps })
    expect((await call('GET', '/applications')).json).toEqual({
      message: 'Missing required team role.'
    })
  })

  it('answers a bare 404 for a wrong address through a status fault', async () => {
    await start({ apps })
    fake!.inject({ do: { status: 404 } })
    fake!.inject({ do: { status: 404, body: '' } })
    const empty = await call('GET', '/applications')
    expect(empty.status).toBe(404)
    expect(empty.text).toBe('')
    const plain = await call('GET', '/applications')
    expect(plain.text).toBe('')
    expect(plain.headers.get('content-type')).toContain('text/plain')
  })
})

describe('which version gets deployed, 4x', () => {
  it('queues HEAD and resolves it when the job takes the row, logging the import', async () => {
    await start({
      apps: [{ uuid: 'web', name: 'Web', coolifyJob: true, scenarios: [slow('c0ffee1')] }]
    })
    const id = await deployUuid('uuid=web')
    const queued = (await call('GET', `/deployments/${id}`)).json
    expect(queued).toMatchObject({ status: 'queued', commit: 'HEAD' })
    // While queued, the same HEAD is already queued.
    expect((await call('POST', '/deploy?uuid=web')).json.deployments[0].message).toBe(
      'Deployment already queued for this commit.'
    )

    await until(() => statusOf(id) === 'in_progress')
    const running = (await call('GET', `/deployments/${id}`)).json
    expect(running.commit).toBe('c0ffee1')
    expect(visibleLog(running.logs)).toEqual([
      'Starting deployment.',
      `Importing git@git.example.com:acme/web.git:main (commit sha c0ffee1) to /artifacts/${id}.`
    ])
    // Once resolved, a new HEAD deploy no longer matches the running row.
    const next = (await call('POST', '/deploy?uuid=web')).json.deployments[0]
    expect(next.message).toBe('Application Web deployment queued.')
    expect(fake!.deployments().map(d => d.commit)).toEqual(['c0ffee1', 'HEAD'])
  })

  it('builds a pinned git_commit_sha on every deploy until it is unpinned', async () => {
    await start({
      abilities: ['root'],
      apps: [{ uuid: 'web', name: 'Web', coolifyJob: true, scenarios: [slow('head999')] }]
    })
    await call('PATCH', '/applications/web', {
      body: { git_commit_sha: 'abc1234', git_branch: 'release' }
    })
    const pinned = await deployUuid('uuid=web')
    expect((await call('GET', `/deployments/${pinned}`)).json.commit).toBe('abc1234')
    await until(() => statusOf(pinned) === 'finished')
    const row = (await call('GET', `/deployments/${pinned}`)).json
    expect(row.commit).toBe('abc1234')
    expect(visibleLog(row.logs)).toContain(
      `Importing git@git.example.com:acme/web.git:release (commit sha abc1234) to /artifacts/${pinned}.`
    )

    await call('PATCH', '/applications/web', { body: { git_commit_sha: 'HEAD' } })
    const head = await deployUuid('uuid=web')
    await until(() => statusOf(head) === 'finished')
    expect(fake!.deployments().map(d => d.commit)).toEqual(['abc1234', 'head999'])
  })

  it('runs the image tag the app has when the deployment starts', async () => {
    await start({
      abilities: ['root'],
      apps: [
        {
          uuid: 'img',
          name: 'Img',
          buildPack: 'dockerimage',
          image: { name: 'ghcr.io/acme/img', tag: 'v1' },
          scenarios: [slow('ignored')]
        }
      ]
    })
    await call('PATCH', '/applications/img', { body: { docker_registry_image_tag: 'v2' } })
    const id = await deployUuid('uuid=img')
    await until(() => statusOf(id) === 'in_progress')
    // Too late for this deployment: the job read the tag when it started.
    await call('PATCH', '/applications/img', { body: { docker_registry_image_tag: 'v3' } })
    // Deploying v3 while v2's deployment runs: Coolify answers "already queued" and v3 never runs.
    const again = (await call('POST', '/deploy?uuid=img')).json.deployments[0]
    expect(again.message).toBe('Deployment already queued for this commit.')
    expect((await call('GET', `/deployments/${again.deployment_uuid}`)).status).toBe(404)

    await until(() => statusOf(id) === 'finished')
    const row = (await call('GET', `/deployments/${id}`)).json
    expect(row).toMatchObject({ commit: 'HEAD', docker_registry_image_tag: null })
    expect(visibleLog(row.logs)).toContain(
      'Starting deployment of ghcr.io/acme/img:v2 to localhost.'
    )
    expect(fake!.deployments()).toEqual([
      expect.objectContaining({ imageTag: 'v2', commit: 'HEAD' })
    ])
    expect(fake!.app('img')?.imageTag).toBe('v3')

    const forced = await deployUuid('uuid=img&force=true')
    await until(() => statusOf(forced) === 'in_progress')
    expect(fake!.deployments()[1].imageTag).toBe('v3')
  })

  it('checks tags only for preview rows: the production tag is not in the already-queued check', async () => {
    await start({
      apps: [
        {
          uuid: 'img',
          name: 'Img',
          buildPack: 'dockerimage',
          image: { name: 'acme/img' },
          scenarios: [long]
        }
      ]
    })
    const production = await deployUuid('uuid=img')
    const pr1 = await deployUuid('uuid=img&pr=5&docker_tag=pr-5-a')
    const pr2 = await deployUuid('uuid=img&pr=5&docker_tag=pr-5-b')
    expect(new Set([production, pr1, pr2]).size).toBe(3)
    expect(fake!.deployments().map(d => [d.pr ?? 0, d.imageTag])).toEqual([
      [0, 'latest'],
      [5, 'pr-5-a'],
      [5, 'pr-5-b']
    ])
    const history = (await call('GET', '/deployments/applications/img')).json.deployments
    expect(
      history.map((r: { docker_registry_image_tag: string | null }) => r.docker_registry_image_tag)
    ).toEqual(['pr-5-b', 'pr-5-a', null])
    expect(
      (await call('POST', '/deploy?uuid=img&pr=5&docker_tag=pr-5-b')).json.deployments[0].message
    ).toBe('Deployment already queued for this commit.')
  })
})

describe('application status, health and runtime logs, 4x', () => {
  it('follows FakeApp.runtime from the newest finished deployment, at its own address', async () => {
    await start({
      apps: [
        {
          uuid: 'web',
          name: 'Web',
          fqdn: '{{self}}/_app/web',
          scenarios: [slow()],
          runtime: [
            { at: 0, status: 'running:unknown' },
            { at: 1000, status: 'restarting:unhealthy', http: 502 }
          ],
          refreshMs: 300
        }
      ]
    })
    const app = (): Promise<Answer> => call('GET', '/applications/web')
    expect((await app()).json).toMatchObject({
      status: 'running:healthy',
      fqdn: `${fake!.url}/_app/web`
    })
    const site = (): Promise<Response> => fetch(`${fake!.url}/_app/web/health`)
    expect((await site()).status).toBe(200)

    const id = await deployUuid('uuid=web')
    await until(() => statusOf(id) === 'finished')
    // Coolify refreshes the status after the deployment finished, and last_online_at with it.
    const finishedAt = fake!.deployments()[0].finishedAt!
    await until(async () => (await app()).json.status === 'running:unknown')
    expect(
      Date.parse(`${(await app()).json.last_online_at.replace(' ', 'T')}Z`)
    ).toBeGreaterThanOrEqual(Math.floor(finishedAt / 1000) * 1000)
    expect((await call('GET', '/applications')).json[0].status).toBe('running:unknown')
    expect((await site()).status).toBe(200)

    await until(async () => (await app()).json.status === 'restarting:unhealthy')
    expect((await site()).status).toBe(502)
    expect(fake!.app('web')).toMatchObject({ status: 'restarting:unhealthy', http: 502 })
    expect((await fetch(`${fake!.url}/_app/nope`)).status).toBe(404)
  })

  const quick: Scenario = {
    steps: [
      { at: 0, status: 'queued' },
      { at: 100, status: 'finished' }
    ]
  }

  it('refreshes last_online_at as Sentinel does: once after the end, then on a change only', async () => {
    let now = Date.parse('2026-11-28T12:00:00.200Z')
    await start({
      clock: () => now,
      apps: [
        {
          uuid: 'web',
          name: 'Web',
          scenarios: [quick],
          refreshMs: 300,
          runtime: [
            { at: 0, status: 'running:healthy' },
            { at: 5000, status: 'running:healthy' },
            { at: 9000, status: 'running:unhealthy' }
          ]
        }
      ]
    })
    const read = async (): Promise<Answer['json']> => (await call('GET', '/applications/web')).json
    await deployUuid('uuid=web')
    // Finished at .300, checked at .600: as Postgres prints the column, in UTC.
    now += 400
    expect(await read()).toMatchObject({
      status: 'running:healthy',
      last_online_at: '2026-11-28 12:00:00'
    })
    now += 6000
    expect((await read()).last_online_at).toBe('2026-11-28 12:00:00')
    now += 4000
    expect(await read()).toMatchObject({
      status: 'running:unhealthy',
      last_online_at: '2026-11-28 12:00:09'
    })
  })

  it('with statusCheckEveryMs, writes last_online_at at every scheduled check', async () => {
    let now = Date.parse('2026-11-28T12:00:00.000Z')
    await start({
      clock: () => now,
      statusCheckEveryMs: 60_000,
      apps: [{ uuid: 'web', name: 'Web', scenarios: [quick] }]
    })
    const read = async (): Promise<Answer['json']> => (await call('GET', '/applications/web')).json
    await deployUuid('uuid=web')
    // Until the first check after the end, the status Coolify saw before the fake started.
    now += 30_000
    expect((await read()).last_online_at).toBe('2026-11-28 11:50:00')
    now += 35_000
    expect(await read()).toMatchObject({
      status: 'running:healthy',
      last_online_at: '2026-11-28 12:01:00'
    })
    now += 60_000
    expect((await read()).last_online_at).toBe('2026-11-28 12:02:00')
  })

  it('serves the end of the container log while the app runs', async () => {
    await start({
      apps: [
        {
          uuid: 'web',
          name: 'Web',
          scenarios: [{ steps: [{ at: 0, status: 'finished' }] }],
          runtimeLogs: ['one', 'two', 'three'],
          runtime: [
            { at: 0, status: 'running:healthy' },
            { at: 150, status: 'exited:unhealthy' }
          ]
        }
      ]
    })
    expect((await call('GET', '/applications/web/logs?lines=2')).json).toEqual({
      logs: 'two\nthree'
    })
    expect((await call('GET', '/applications/web/logs')).json.logs).toBe('one\ntwo\nthree')
    await deployUuid('uuid=web')
    await sleep(200)
    const stopped = await call('GET', '/applications/web/logs?lines=2')
    expect(stopped.status).toBe(400)
    expect(stopped.json).toEqual({ message: 'Application is not running.' })
  })

  it('shows the seed only the state', async () => {
    await start({
      flavor: 'seed',
      apps: [
        {
          uuid: 'web',
          name: 'Web',
          scenarios: [{ steps: [{ at: 0, status: 'finished' }] }],
          runtime: [{ at: 0, status: 'exited:unhealthy' }]
        }
      ]
    })
    await deployUuid('uuid=web')
    expect((await call('GET', '/applications/web')).json.status).toBe('exited')
    expect((await call('GET', '/applications/web/logs')).status).toBe(404)
  })
})

describe('services and databases, 4x', () => {
  /** Waits until `ms` after `from` on the real clock, which the fake reads too. */
  const sleepUntil = (from: number, ms: number): Promise<void> =>
    sleep(Math.max(0, from + ms - Date.now()))
  /** last_online_at as epoch ms: Postgres prints the column in UTC, to the second, with no zone. */
  const onlineAt = (part: { last_online_at: string }): number => {
    expect(part.last_online_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
    return Date.parse(`${part.last_online_at.replace(' ', 'T')}Z`)
  }
  const second = (ms: number): number => Math.floor(ms / 1000) * 1000

  it('follows a service through its start command, the stale status and its fresh states', async () => {
    const booted = Date.now()
    await start({
      apps: [
        {
          uuid: 'svc',
          name: 'Queue',
          kind: 'service',
          subs: [{ name: 'api-server' }, { name: 'cache', kind: 'database' }],
          starts: [
            {
              commandMs: 400,
              staleMs: 400,
              states: [
                { at: 0, status: 'running:unknown' },
                { at: 400, status: 'restarting:unknown', sub: 'api-server' }
              ]
            }
          ]
        }
      ]
    })
    const read = async (): Promise<Answer['json']> => (await call('GET', '/services/svc')).json
    const before = await read()
    expect(before).toMatchObject({
      uuid: 'svc',
      name: 'Queue',
      status: 'running:healthy',
      server_status: true,
      applications: [
        {
          name: 'api-server',
          human_name: 'Api Server',
          status: 'running:healthy',
          exclude_from_status: false
        }
      ],
      databases: [{ name: 'cache', status: 'running:healthy' }]
    })
    expect(before).not.toHaveProperty('id')
    expect(before.applications[0]).not.toHaveProperty('id')
    expect(before.applications[0].uuid).toMatch(/^[a-z][a-z0-9]{23}$/)
    const seenBefore = onlineAt(before.applications[0])
    expect(seenBefore).toBeLessThan(booted)

    const deployedAt = Date.now()
    expect((await call('POST', '/deploy?uuid=svc')).status).toBe(200)
    // The start command runs: the service says so, its parts are as they were.
    const running = await read()
    expect(running.status).toBe('starting:unhealthy')
    expect(running.applications[0].status).toBe('running:healthy')
    expect(fake!.app('svc')!.status).toBe('starting:unhealthy')

    // The command ended, Coolify has not looked yet: the status from before the deploy.
    await sleepUntil(deployedAt, 600)
    const stale = await read()
    expect(stale.status).toBe('running:healthy')
    expect(onlineAt(stale.applications[0])).toBe(seenBefore)
    expect(onlineAt(stale.databases[0])).toBe(seenBefore)

    await sleepUntil(deployedAt, 1000)
    const fresh = await read()
    expect(fresh.status).toBe('running:unknown')
    expect(onlineAt(fresh.applications[0])).toBeGreaterThanOrEqual(second(deployedAt + 800))

    // A restarting part makes the whole service degraded; only that part changed.
    await sleepUntil(deployedAt, 1400)
    const later = await read()
    expect(later.status).toBe('degraded:unhealthy')
    expect(later.applications[0].status).toBe('restarting:unknown')
    expect(onlineAt(later.applications[0])).toBeGreaterThanOrEqual(second(deployedAt + 1200))
    expect(later.databases[0].status).toBe('running:unknown')
    expect(onlineAt(later.databases[0])).toBe(onlineAt(fresh.databases[0]))
    expect((await call('GET', '/services')).json).toEqual([
      expect.objectContaining({ uuid: 'svc', status: 'degraded:unhealthy' })
    ])
  })

  it("aggregates a service's status from its parts as Coolify does", async () => {
    const cases: Array<[string, string, string]> = [
      ['running:healthy', 'running:healthy', 'running:healthy'],
      ['running:healthy', 'running:unknown', 'running:unknown'],
      ['running:unknown', 'running:unhealthy', 'running:unhealthy'],
      ['running:healthy', 'exited', 'degraded:unhealthy'],
      ['running:healthy', 'restarting:unknown', 'degraded:unhealthy'],
      ['running:healthy', 'starting:unknown', 'starting:unknown'],
      ['paused:unknown', 'exited', 'paused:unknown'],
      ['exited', 'exited', 'exited']
    ]
    await start({
      apps: cases.map(([a, b], i) => ({
        uuid: `svc${i}`,
        name: `svc${i}`,
        kind: 'service' as const,
        subs: [{ name: 'a' }, { name: 'b', kind: 'database' as const }],
        starts: [
          {
            commandMs: 0,
            staleMs: 0,
            states: [
              { at: 0, status: a, sub: 'a' },
              { at: 0, status: b, sub: 'b' }
            ]
          }
        ]
      }))
    })
    await call('POST', `/deploy?uuid=${cases.map((_, i) => `svc${i}`).join(',')}`)
    const statuses = await Promise.all(
      cases.map(async (_, i) => (await call('GET', `/services/svc${i}`)).json.status)
    )
    expect(statuses).toEqual(cases.map(([, , aggregate]) => aggregate))
  })

  it("serves a part's log only while its container runs, with Coolify's errors", async () => {
    await start({
      apps: [
        {
          uuid: 'svc',
          name: 'Queue',
          kind: 'service',
          subs: [{ name: 'app' }, { name: 'worker' }],
          subLogs: { app: ['a1', 'a2', 'a3'], worker: ['w1'] },
          starts: [
            {
              commandMs: 0,
              staleMs: 0,
              states: [
                { at: 0, status: 'running:healthy' },
                { at: 0, status: 'exited', sub: 'worker' },
                { at: 60_000, status: 'starting:unknown', sub: 'app' }
              ]
            }
          ]
        }
      ]
    })
    const logs = (query: string, uuid = 'svc'): Promise<Answer> =>
      call('GET', `/services/${uuid}/logs${query}`)
    expect((await logs('?sub_service_name=worker')).json).toEqual({ logs: 'w1' })
    await call('POST', '/deploy?uuid=svc')

    const nameless = await logs('?lines=2', 'nope')
    expect(nameless.status).toBe(400)
    expect(nameless.json).toEqual({ message: 'Sub service name is required.' })
    const unknown = await logs('?sub_service_name=app', 'nope')
    expect(unknown.status).toBe(404)
    expect(unknown.json).toEqual({ message: 'Service not found.' })
    const noContainer = await logs('?sub_service_name=App')
    expect(noContainer.status).toBe(404)
    expect(noContainer.json).toEqual({ message: 'Container not found.' })
    const stopped = await logs('?sub_service_name=worker')
    expect(stopped.status).toBe(400)
    expect(stopped.json).toEqual({ message: 'Container is not running.' })
    expect((await logs('?sub_service_name=app&lines=2')).json).toEqual({ logs: 'a2\na3' })
    expect((await logs('?sub_service_name=app')).json).toEqual({ logs: 'a1\na2\na3' })
  })

  it('follows a database: its old status until Coolify refreshes it, then its states', async () => {
    await start({
      apps: [
        {
          uuid: 'db',
          name: 'Pg',
          kind: 'database',
          status: 'exited',
          runtimeLogs: ['d1', 'd2', 'd3'],
          // The start job is not visible: commandMs does not apply to databases.
          starts: [
            {
              commandMs: 5000,
              staleMs: 400,
              states: [
                { at: 0, status: 'running:starting' },
                { at: 400, status: 'running:healthy' },
                { at: 800, status: 'exited' }
              ]
            }
          ]
        }
      ]
    })
    const read = async (): Promise<Answer['json']> => (await call('GET', '/databases/db')).json
    const logs = (): Promise<Answer> => call('GET', '/databases/db/logs?lines=2')
    const before = await read()
    expect(before).toMatchObject({
      uuid: 'db',
      name: 'Pg',
      status: 'exited',
      database_type: 'standalone-postgresql',
      server_status: true
    })
    expect(before).not.toHaveProperty('id')
    const seenBefore = onlineAt(before)
    const notRunning = await logs()
    expect(notRunning.status).toBe(400)
    expect(notRunning.json).toEqual({ message: 'Database is not running.' })

    const deployedAt = Date.now()
    await call('POST', '/deploy?uuid=db')
    const stale = await read()
    expect(stale.status).toBe('exited')
    expect(onlineAt(stale)).toBe(seenBefore)

    await sleepUntil(deployedAt, 600)
    const fresh = await read()
    expect(fresh.status).toBe('running:starting')
    expect(onlineAt(fresh)).toBeGreaterThanOrEqual(second(deployedAt + 400))
    expect((await logs()).json).toEqual({ logs: 'd2\nd3' })
    expect((await call('GET', '/databases')).json).toEqual([
      expect.objectContaining({ uuid: 'db', status: 'running:starting' })
    ])

    await sleepUntil(deployedAt, 1000)
    expect((await read()).status).toBe('running:healthy')
    await sleepUntil(deployedAt, 1400)
    expect((await read()).status).toBe('exited')
    expect(fake!.app('db')!.status).toBe('exited')
    expect((await logs()).status).toBe(400)

    // The next deploy repeats the last start, from the status it found.
    const again = Date.now()
    await call('POST', '/deploy?uuid=db')
    expect((await read()).status).toBe('exited')
    await sleepUntil(again, 600)
    expect((await read()).status).toBe('running:starting')
  })

  it('keeps services, databases and applications under their own routes, for readers', async () => {
    const apps: FakeOptions['apps'] = [
      { uuid: 'web', name: 'Web' },
      { uuid: 'svc', name: 'Queue', kind: 'service' },
      { uuid: 'db', name: 'Pg', kind: 'database' }
    ]
    await start({ apps })
    expect((await call('GET', '/services')).json.map((s: { uuid: string }) => s.uuid)).toEqual([
      'svc'
    ])
    expect((await call('GET', '/databases')).json.map((d: { uuid: string }) => d.uuid)).toEqual([
      'db'
    ])
    for (const [path, message] of [
      ['/services/db', 'Service not found.'],
      ['/services/web', 'Service not found.'],
      ['/databases/svc', 'Database not found.'],
      ['/databases/svc/logs', 'Database not found.'],
      ['/applications/svc', 'Application not found.'],
      ['/applications/db', 'Application not found.']
    ]) {
      const answer = await call('GET', path)
      expect([path, answer.status, answer.json.message]).toEqual([path, 404, message])
    }
    await fake!.close()

    await start({ abilities: ['deploy'], apps })
    const denied = await call('GET', '/services/svc')
    expect(denied.status).toBe(403)
    expect(denied.json).toEqual({ message: 'Missing required permissions: read' })
    await fake!.close()

    await start({ flavor: 'seed', apps })
    for (const path of ['/services', '/services/svc', '/databases/db', '/databases/db/logs']) {
      const answer = await call('GET', path)
      expect([path, answer.status, answer.json]).toEqual([
        path,
        404,
        { message: 'Not found.', docs: 'https://coolify.io/docs' }
      ])
    }
  })
})

describe('rollback, 4x', () => {
  const quick = (commit: string): Scenario => ({ commit, steps: [{ at: 0, status: 'finished' }] })

  it('names the running image only with a consistent container name', async () => {
    const now = Date.parse('2026-11-23T10:00:00Z')
    await start({
      clock: () => now,
      apps: [
        {
          uuid: 'web',
          name: 'Web',
          coolifyJob: true,
          columns: { 'settings.is_consistent_container_name_enabled': true },
          scenarios: [quick('aaa111'), quick('bbb222')]
        }
      ]
    })
    await deployUuid('uuid=web')
    await deployUuid('uuid=web')
    const images = (await call('GET', '/applications/web/rollback-images')).json
    expect(images.current).toBe('bbb222')
    expect(images.images.map((i: { is_current: boolean }) => i.is_current)).toEqual([true, false])
  })

  it('lists the images of finished deployments and queues a rollback past the queue check', async () => {
    // The clock stands still: both deployments end in the same millisecond, the later one is current.
    const now = Date.parse('2026-11-23T10:00:00Z')
    await start({
      clock: () => now,
      apps: [
        {
          uuid: 'web',
          name: 'Web',
          coolifyJob: true,
          scenarios: [quick('aaa111'), quick('bbb222'), { commit: 'ccc333', steps: long.steps }]
        }
      ]
    })
    expect((await call('GET', '/applications/web/rollback-images')).json).toEqual({
      current: null,
      images: []
    })
    await deployUuid('uuid=web')
    await deployUuid('uuid=web')
    const images = (await call('GET', '/applications/web/rollback-images')).json
    // Without "consistent container name", `docker inspect <uuid>` finds no container.
    expect(images.current).toBeNull()
    expect(images.images).toEqual([
      { tag: 'bbb222', created_at: expect.stringMatching(/ \+0000 UTC$/), is_current: false },
      { tag: 'aaa111', created_at: expect.any(String), is_current: false }
    ])

    const first = await call('POST', '/applications/web/rollback', { body: { commit: 'aaa111' } })
    expect(first.json).toEqual({
      message: 'Rollback deployment queued.',
      deployment_uuid: expect.stringMatching(/^[a-z][a-z0-9]{23}$/)
    })
    const second = await call('POST', '/applications/web/rollback', { body: { commit: 'aaa111' } })
    expect(second.json.deployment_uuid).not.toBe(first.json.deployment_uuid)
    const row = (await call('GET', `/deployments/${first.json.deployment_uuid}`)).json
    expect(row).toMatchObject({
      rollback: true,
      commit: 'aaa111',
      pull_request_id: 0,
      docker_registry_image_tag: null,
      finished_at: null,
      status: 'in_progress'
    })
    expect(visibleLog(row.logs).at(-1)).toContain('(commit sha aaa111)')
    const history = (await call('GET', '/deployments/applications/web')).json.deployments
    expect(history.map((r: { rollback: boolean }) => r.rollback)).toEqual([
      true,
      true,
      false,
      false
    ])
    expect(history[3].finished_at).not.toBeNull()
  })

  it('validates the body and is missing on older servers', async () => {
    await start({ apps: [{ uuid: 'web', name: 'Web' }] })
    const extra = await call('POST', '/applications/web/rollback', {
      body: { commit: 'abc', force: true }
    })
    expect(extra.status).toBe(422)
    expect(extra.json).toEqual({
      message: 'Validation failed.',
      errors: { force: ['This field is not allowed.'] }
    })
    const missing = await call('POST', '/applications/web/rollback', { body: { tag: 'x' } })
    expect(missing.json.errors).toEqual({
      commit: ['This field is required.'],
      tag: ['This field is not allowed.']
    })
    const bad = await call('POST', '/applications/web/rollback', { body: { commit: 'a b' } })
    expect(bad.json.errors.commit[0]).toMatch(/^Invalid rollback commit: contains disallowed/)
    expect((await call('POST', '/applications/web/rollback', { body: {} })).json).toEqual({
      message: 'Invalid request.',
      error: 'Empty JSON.'
    })
    await fake!.close()

    await start({ version: '4.2', apps: [{ uuid: 'web', name: 'Web' }] })
    for (const [method, path] of [
      ['GET', '/applications/web/rollback-images'],
      ['POST', '/applications/web/rollback']
    ]) {
      const res = await call(method, path, method === 'POST' ? { body: { commit: 'abc' } } : {})
      expect(res.status).toBe(404)
      expect(res.json).toEqual({ message: 'Not found.', docs: 'https://coolify.io/docs' })
    }
  })
})

describe('previews, 4x', () => {
  it('builds the preview address from the first domain and the template', async () => {
    await start({
      apps: [
        {
          uuid: 'a',
          name: 'A',
          fqdn: 'https://a.example.com,https://b.example.com',
          previews: [7]
        },
        {
          uuid: 'b',
          name: 'B',
          fqdn: 'http://b.example.com:8080/app',
          previewUrlTemplate: 'pr-{{pr_id}}-{{random}}.preview.{{domain}}',
          previews: [3]
        },
        { uuid: 'c', name: 'C', fqdn: '', previews: [1] }
      ]
    })
    expect(fake!.app('a')?.previews).toEqual([
      { pr: 7, fqdn: 'https://7.a.example.com', imageTag: null }
    ])
    expect(fake!.app('b')?.previews[0].fqdn).toMatch(
      /^http:\/\/pr-3-[a-z][a-z0-9]{23}\.preview\.b\.example\.com:8080\/app$/
    )
    expect(fake!.app('c')?.previews[0].fqdn).toBeNull()
  })

  it('deletes a preview, cancelling its deployment, and says when there is none', async () => {
    await start({
      abilities: ['root'],
      apps: [{ uuid: 'web', name: 'Web', previews: [7], scenarios: [long] }]
    })
    const id = await deployUuid('uuid=web&pr=7')
    const res = await call('DELETE', '/applications/web/previews/7')
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ message: 'Preview deletion request queued.' })
    expect(fake!.app('web')?.previews).toEqual([])
    expect(statusOf(id)).toBe('cancelled-by-user')
    const row = (await call('GET', `/deployments/${id}`)).json
    expect(visibleLog(row.logs).at(-1)).toBe('Deployment cancelled: Pull request closed.')

    const again = await call('DELETE', '/applications/web/previews/7')
    expect(again.status).toBe(404)
    expect(again.json).toEqual({ message: 'Preview not found.' })
    const invalid = await call('DELETE', '/applications/web/previews/abc')
    expect(invalid.status).toBe(422)
    expect(invalid.json).toEqual({ message: 'Invalid pull_request_id.' })
    expect((await call('DELETE', '/applications/nope/previews/7')).status).toBe(404)
    expect((await call('POST', '/deploy?uuid=web&pr=7')).json.deployments[0].message).toBe(
      'Pull request 7 not found for this resource.'
    )
  })

  it('creates a docker-image preview from docker_tag, and refuses docker_tag elsewhere', async () => {
    await start({
      apps: [
        {
          uuid: 'img',
          name: 'Img',
          fqdn: 'https://img.example.com',
          buildPack: 'dockerimage',
          image: { name: 'acme/img', tag: 'main' },
          scenarios: [{ steps: [{ at: 0, status: 'in_progress' }] }]
        },
        { uuid: 'web', name: 'Web', previews: [4] }
      ]
    })
    const id = await deployUuid('uuid=img&pr=12&docker_tag=pr-12')
    expect(fake!.app('img')?.previews).toEqual([
      { pr: 12, fqdn: 'https://12.img.example.com', imageTag: 'pr-12' }
    ])
    const row = (await call('GET', `/deployments/${id}`)).json
    expect(row).toMatchObject({ pull_request_id: 12, docker_registry_image_tag: 'pr-12' })
    expect(visibleLog(row.logs)).toEqual(['Starting deployment of acme/img:pr-12 to localhost.'])
    expect((await call('POST', '/deploy?uuid=img&pr=13')).json.deployments[0].message).toBe(
      'Pull request 13 not found for this resource.'
    )

    const alone = await call('POST', '/deploy?uuid=img&docker_tag=x')
    expect(alone.status).toBe(400)
    expect(alone.json).toEqual({ message: 'docker_tag requires pull_request_id.' })
    expect((await call('POST', '/deploy?uuid=web&pr=4&docker_tag=x')).json.deployments).toEqual([
      {
        message: 'docker_tag can only be used with Docker Image applications.',
        resource_uuid: 'web'
      }
    ])
    expect((await call('POST', '/deploy?uuid=web&pr=5&docker_tag=x')).json.deployments).toEqual([
      { message: 'Pull request 5 not found for this resource.', resource_uuid: 'web' }
    ])
  })
})

describe('projects and environments, 4x', () => {
  // Coolify 4.3's ProjectController and list routes: what resolving `app` by name reads.
  it('lists projects, one project with its environments, and each resource’s environment', async () => {
    await start({
      abilities: ['read'],
      apps: [
        { uuid: 'web0', name: 'web' },
        { uuid: 'web1', name: 'web', project: 'shop', environment: 'staging' },
        { uuid: 'svc0', name: 'queue', kind: 'service', project: 'shop', environment: 'staging' },
        { uuid: 'db0', name: 'pg', kind: 'database' }
      ]
    })
    const projects = await call('GET', '/projects')
    expect(projects.status).toBe(200)
    expect(projects.json).toEqual([
      { id: 1, uuid: expect.any(String), name: 'My first project', description: null },
      { id: 2, uuid: expect.any(String), name: 'shop', description: null }
    ])
    const shop = await call('GET', `/projects/${projects.json[1].uuid}`)
    expect(shop.status).toBe(200)
    expect(shop.json).toMatchObject({ id: 2, name: 'shop' })
    expect(shop.json.environments).toEqual([
      expect.objectContaining({ id: 2, name: 'staging', project_id: 2 })
    ])
    const first = await call('GET', `/projects/${projects.json[0].uuid}`)
    expect(first.json.environments).toEqual([
      expect.objectContaining({ id: 1, name: 'production', project_id: 1 })
    ])
    const place = (rows: Array<{ uuid: string; environment_id: number }>) =>
      rows.map(row => [row.uuid, row.environment_id])
    expect(place((await call('GET', '/applications')).json)).toEqual([
      ['web0', 1],
      ['web1', 2]
    ])
    expect(place((await call('GET', '/services')).json)).toEqual([['svc0', 2]])
    expect(place((await call('GET', '/databases')).json)).toEqual([['db0', 1]])
  })

  it('answers 404 for an unknown project; the seed has no projects route at all', async () => {
    await start({ abilities: ['read'] })
    expect(await call('GET', '/projects/nope')).toMatchObject({
      status: 404,
      json: { message: 'Project not found.' }
    })
    await fake!.close()
    await start({ abilities: ['read'], flavor: 'seed', apps: [{ uuid: 'web0', name: 'web' }] })
    expect((await call('GET', '/projects')).status).toBe(404)
    expect((await call('GET', '/applications')).json[0]).not.toHaveProperty('environment_id')
  })

  it('refuses the lists without read', async () => {
    await start({ abilities: ['deploy'] })
    for (const path of ['/projects', '/applications', '/services', '/databases']) {
      expect((await call('GET', path)).status).toBe(403)
    }
  })
})
