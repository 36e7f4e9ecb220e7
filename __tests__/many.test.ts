/**
 * Several deployments in one step, through the committed bundle: uuid lists, tags, services,
 * skipped uuids and pull request previews.
 */
import { describe, expect, it } from '@jest/globals'
import type { FakeApp, FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { timedBuild } from '../test/support/builds.js'
import { buildLogLines, runAction } from '../test/support/runner.js'
import { endless, fakeCoolifyPerTest, inputsFor } from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest()

interface AppPlan {
  name: string
  durationMs: number
  outcome?: 'finished' | 'failed'
  closing?: boolean
}

function uuidOf(name: string): string {
  return `${name}uuid`.padEnd(24, '0')
}

/** Fake apps from plans, and the lines each must print. */
function plan(apps: AppPlan[]): { apps: FakeApp[]; visible: Map<string, string[]> } {
  const visible = new Map<string, string[]>()
  const fakeApps = apps.map(app => {
    const build = timedBuild(app.name, app)
    visible.set(app.name, build.visible)
    return {
      uuid: uuidOf(app.name),
      name: app.name,
      fqdn: `https://${app.name}.example.com`,
      scenarios: [build.scenario]
    }
  })
  return { apps: fakeApps, visible }
}

function run(server: FakeCoolify, inputs: Record<string, string>) {
  return runAction({ inputs: inputsFor(server, { timeout: '60s', ...inputs }) })
}

/** Each application's lines, as printed with its name in front, in the order printed. */
function linesByApp(stdout: string): Map<string, string[]> {
  const byApp = new Map<string, string[]>()
  for (const line of buildLogLines(stdout)) {
    const match = /^(\S+) \| (.*)$/.exec(line)
    if (!match) throw new Error(`a line without its application's name: ${line}`)
    byApp.set(match[1], [...(byApp.get(match[1]) ?? []), match[2]])
  }
  return byApp
}

/** The queries of the requests sent to `path`, in order. */
function sentTo(server: FakeCoolify, path: string): Array<Record<string, string>> {
  return server.requests.filter(request => request.path === path).map(request => request.query)
}

function records(outputs: Record<string, string>): Array<Record<string, unknown>> {
  return JSON.parse(outputs.deployments)
}

describe('several applications in one step', () => {
  it('follows two at once and fails naming the one that failed', async () => {
    const { apps, visible } = plan([
      { name: 'api', durationMs: 900 },
      { name: 'worker', durationMs: 400, outcome: 'failed' }
    ])
    const server = await start({ apps })
    const result = await run(server, { 'app-uuid': `${uuidOf('api')},${uuidOf('worker')}` })

    expect(result.code).toBe(1)
    expect(server.requests.filter(request => request.path === '/api/v1/deploy')).toHaveLength(1)
    expect(server.requests.find(request => request.path === '/api/v1/deploy')!.query.uuid).toBe(
      `${uuidOf('api')},${uuidOf('worker')}`
    )
    expect(linesByApp(result.stdout)).toEqual(visible)
    expect(result.outputs.status).toBe('failed')
    expect(records(result.outputs).map(record => [record.name, record.status])).toEqual([
      ['api', 'finished'],
      ['worker', 'failed']
    ])
    const errors = result.stdout.split('\n').filter(line => line.startsWith('::error'))
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain('worker: deployment failed')
  })

  it('follows five side by side rather than one after another', async () => {
    const { apps, visible } = plan(
      [300, 1200, 500, 900, 700].map((durationMs, i) => ({ name: `app${i}`, durationMs }))
    )
    const server = await start({ apps })
    const result = await run(server, { 'app-uuid': apps.map(app => app.uuid).join(' ') })

    expect(result.code).toBe(0)
    expect(linesByApp(result.stdout)).toEqual(visible)
    // Every deployment was read before the first one ended, all five in one list of the running
    // ones: they were followed at once.
    const firstEnd = Math.min(...server.deployments().map(d => d.createdAt + 300))
    const firstRead = server.requests.find(request => request.path === '/api/v1/deployments')
    expect(firstRead!.at).toBeLessThan(firstEnd)
    expect(
      server.requests.filter(request => request.path.startsWith('/api/v1/deployments/'))[0]!.at
    ).toBeGreaterThan(firstRead!.at)
    expect(records(result.outputs).every(record => record.status === 'finished')).toBe(true)
  })

  it('reads the running ones in one list a turn, and each by uuid once when it left', async () => {
    const { apps, visible } = plan(
      [600, 1500, 900].map((durationMs, i) => ({ name: `job${i}`, durationMs }))
    )
    const server = await start({ apps })
    const result = await run(server, { 'app-uuid': apps.map(app => app.uuid).join(',') })

    expect(result.code).toBe(0)
    expect(linesByApp(result.stdout)).toEqual(visible)
    const paths = server.requests.map(request => request.path)
    expect(paths.filter(path => path === '/api/v1/deployments').length).toBeGreaterThan(1)
    // The last one running is read alone, as one read costs the same; the others by uuid once
    // for their final status and last lines, once more only for a closing entry not yet there.
    const endedEarlier = server.deployments().filter(d => d.appUuid !== uuidOf('job1'))
    for (const deployment of endedEarlier) {
      const own = paths.filter(path => path === `/api/v1/deployments/${deployment.uuid}`)
      expect(own.length).toBeGreaterThanOrEqual(1)
      expect(own.length).toBeLessThanOrEqual(2)
    }
  })

  it('reads a log without a closing entry again only once Coolify’s clock says it went quiet, on a server from before it', async () => {
    // A server before 4.0.0-beta.407: a last line 0.5 s after the others, finished_at with it,
    // and no closing entry.
    const { apps, visible } = plan(
      [600, 1500, 900].map((durationMs, i) => ({ name: `old${i}`, durationMs, closing: false }))
    )
    for (const app of apps) {
      const { steps } = app.scenarios![0]
      const late = 'Deployment configuration written'
      steps.push({ at: steps[steps.length - 1].at! + 500, lines: [{ output: late }] })
      visible.get(app.name)!.push(late)
    }
    const server = await start({ apps, version: '4.0-beta' })
    const result = await run(server, { 'app-uuid': apps.map(app => app.uuid).join(',') })

    expect(result.code).toBe(0)
    expect(linesByApp(result.stdout)).toEqual(visible)
    // The closing entry late, Coolify's version is asked once: this one writes none. From the
    // job's end (finished_at): a read for the late line if it was not there yet, and one that
    // finds the log quiet — not one every half second until it has been for 1.5 s.
    expect(server.requests.filter(request => request.path === '/api/v1/version')).toHaveLength(1)
    for (const deployment of server.deployments()) {
      const reads = server.requests.filter(
        request =>
          request.path === `/api/v1/deployments/${deployment.uuid}` &&
          request.at >= deployment.jobEndedAt!
      )
      expect(reads.length).toBeGreaterThanOrEqual(1)
      expect(reads.length).toBeLessThanOrEqual(3)
    }
  })

  it('reads each by uuid on a server that has no list of the running deployments', async () => {
    const { apps, visible } = plan(
      [600, 900].map((durationMs, i) => ({ name: `old${i}`, durationMs }))
    )
    const server = await start({ apps })
    server.inject({
      method: 'GET',
      path: '/deployments',
      times: 100,
      do: { status: 404, body: { message: 'Not found.', docs: 'https://coolify.io/docs' } }
    })
    const result = await run(server, { 'app-uuid': apps.map(app => app.uuid).join(',') })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(linesByApp(result.stdout)).toEqual(visible)
    // Asked once; never again after the 404.
    expect(server.requests.filter(request => request.path === '/api/v1/deployments')).toHaveLength(
      1
    )
  })

  it('follows twenty within the default rate limit', async () => {
    const { apps, visible } = plan(
      Array.from({ length: 20 }, (_, i) => ({
        name: `svc${i}`,
        durationMs: 400 + i * 50,
        outcome: i === 7 ? ('failed' as const) : ('finished' as const)
      }))
    )
    // Coolify's default: 200 requests a minute for all of a user's tokens.
    const server = await start({ apps, rateLimit: 200 })
    const result = await run(server, { 'app-uuid': apps.map(app => app.uuid).join('\n') })

    expect(result.code).toBe(1)
    expect(linesByApp(result.stdout)).toEqual(visible)
    expect(records(result.outputs)).toHaveLength(20)
    expect(
      records(result.outputs)
        .filter(record => record.status === 'failed')
        .map(record => record.name)
    ).toEqual(['svc7'])
    // Half the budget at most, so other clients of the same user keep theirs.
    expect(server.requests.length).toBeLessThanOrEqual(100)
  }, 60_000)

  it('leaves other tools their share of a 20/min window while one app builds on after another failed', async () => {
    const { apps, visible } = plan([
      { name: 'api', durationMs: 64_000 },
      { name: 'worker', durationMs: 800, outcome: 'failed' }
    ])
    const server = await start({ apps, rateLimit: 20 })
    const result = await runAction({
      inputs: inputsFor(server, {
        'app-uuid': apps.map(app => app.uuid).join(','),
        'poll-interval': '3s',
        'health-timeout': '2s',
        timeout: '120s'
      }),
      killAfterMs: 110_000
    })

    expect(linesByApp(result.stdout)).toEqual(visible)
    // Coolify's window: opened by the first request, a minute long; a refused one does not count.
    const counted = server.requests.filter(request => request.status !== 429)
    const opened = counted[0].at
    const api = server.deployments().find(deployment => deployment.appUuid === uuidOf('api'))!
    expect(api.finishedAt!).toBeGreaterThan(opened + 60_000)
    const inWindow = counted.filter(request => request.at < opened + 60_000)
    // 20 a minute less the fifth kept for other tools on the token: polls never spend it.
    expect(inWindow.length).toBeLessThanOrEqual(16)
    expect(server.requests.filter(request => request.status === 429)).toEqual([])
  }, 120_000)

  it.each([60, 200])(
    'follows thirty in at most 50 requests at %i a minute, each end seen within a turn',
    async limit => {
      const names = Array.from({ length: 30 }, (_, i) => `app${String(i + 1).padStart(2, '0')}`)
      const visible = new Map<string, string[]>()
      const apps: FakeApp[] = names.map((name, i) => {
        // Ends spread over 4–10 s after the trigger; Coolify's closing entry 0.8 s after each.
        const endAt = 4000 + Math.round((6000 * ((i * 7) % 30)) / 29)
        const lines: string[] = []
        const steps: Scenario['steps'] = [
          { at: 0, status: 'queued' },
          { at: 50, status: 'in_progress' }
        ]
        for (let at = 1500; at < endAt; at += 1500) {
          const tick = [`${name} ${at}ms line 1`, `${name} ${at}ms line 2`]
          lines.push(...tick)
          steps.push({ at, lines: tick })
        }
        const closing = `Gracefully shutting down build container: ${`${name}deployment`.padEnd(24, '0')}`
        steps.push({ at: endAt, status: 'finished', lines: [`${name} is live.`] })
        steps.push({ at: endAt + 800, lines: [closing] })
        visible.set(name, [...lines, `${name} is live.`, closing])
        return {
          uuid: uuidOf(name),
          name,
          fqdn: `https://${name}.example.com`,
          scenarios: [{ commit: `${name}-commit`, steps }]
        }
      })
      const server = await start({ apps, rateLimit: limit, queueLimit: 100 })
      const result = await run(server, {
        'app-uuid': apps.map(app => app.uuid).join(','),
        'poll-interval': '3s'
      })

      expect(result.code).toBe(0)
      expect(linesByApp(result.stdout)).toEqual(visible)
      expect(server.requests.filter(request => request.status === 429)).toEqual([])
      // One trigger, the names, a list of the running ones a turn, one read of each as it ends.
      expect(server.requests.length).toBeLessThanOrEqual(50)
      const lastEnd = Math.max(...server.deployments().map(deployment => deployment.finishedAt!))
      expect(result.exitedAt - lastEnd).toBeLessThanOrEqual(10_000)
    },
    60_000
  )

  it('deploys by tag, following a tagged service until it runs', async () => {
    const { apps, visible } = plan([
      { name: 'front', durationMs: 300 },
      { name: 'back', durationMs: 500 }
    ])
    const tagged = apps.map(app => ({ ...app, tags: ['prod'] }))
    const redis: FakeApp = { uuid: uuidOf('redis'), name: 'redis', kind: 'service', tags: ['prod'] }
    const server = await start({ apps: [...tagged, redis] })
    const result = await run(server, { 'app-uuid': '', tag: 'prod' })

    expect(result.code).toBe(0)
    expect(server.requests.find(request => request.path === '/api/v1/deploy')!.query).toEqual({
      tag: 'prod'
    })
    expect(linesByApp(result.stdout)).toEqual(visible)
    expect(records(result.outputs).map(record => [record.name, record.status])).toEqual([
      ['front', 'finished'],
      ['back', 'finished'],
      ['redis', 'finished']
    ])
    expect(result.outputs.status).toBe('finished')
  })

  it('follows once an application that carries two of the tags', async () => {
    // Coolify queues it for the first tag and answers "already queued" for the second.
    const { apps, visible } = plan([{ name: 'front', durationMs: 300 }])
    const server = await start({ apps: [{ ...apps[0], tags: ['prod', 'web'] }] })
    const result = await run(server, { 'app-uuid': '', tag: 'prod, web' })

    expect(result.code).toBe(0)
    expect(server.deployments()).toHaveLength(1)
    expect(records(result.outputs)).toHaveLength(1)
    expect(records(result.outputs)[0]).toMatchObject({
      deployment_uuid: server.deployments()[0].uuid,
      status: 'finished'
    })
    expect(buildLogLines(result.stdout)).toEqual(visible.get('front'))
    expect(result.stdout).not.toMatch(/started elsewhere/)
  })

  it('repeats a tag deploy whose answer was lost, when Coolify would not start it twice', async () => {
    const { apps } = plan([{ name: 'front', durationMs: 300 }])
    const server = await start({ apps: [{ ...apps[0], tags: ['prod'] }] })
    server.inject({ method: 'POST', path: '/deploy', do: 'reset' })
    const result = await run(server, { 'app-uuid': '', tag: 'prod' })

    expect(result.code).toBe(0)
    expect(server.requests.filter(request => request.path === '/api/v1/deploy')).toHaveLength(2)
    expect(server.deployments()).toHaveLength(1)
  })

  it('asks again for a forced tag deploy whose answer was lost when nothing started', async () => {
    const { apps } = plan([{ name: 'front', durationMs: 300 }])
    const server = await start({ apps: [{ ...apps[0], tags: ['prod'] }] })
    server.inject({ method: 'POST', path: '/deploy', do: 'reset' })
    const result = await run(server, { 'app-uuid': '', tag: 'prod', force: 'true' })

    expect(result.code).toBe(0)
    // The tag's applications were looked up, and their histories showed nothing new.
    expect(sentTo(server, '/api/v1/applications').filter(query => query.tag)).toEqual([
      { tag: 'prod' }
    ])
    expect(sentTo(server, '/api/v1/deploy')).toHaveLength(2)
    expect(server.deployments()).toHaveLength(1)
  })

  it.each([
    ['', {}],
    ['forced ', { force: 'true' }]
  ])(
    'follows what a %stag deploy whose answer was lost started, never asking again',
    async (_, inputs) => {
      const { apps } = plan([
        { name: 'front', durationMs: 300 },
        { name: 'back', durationMs: 500 }
      ])
      const other = { ...plan([{ name: 'other', durationMs: 300 }]).apps[0], tags: ['staging'] }
      const server = await start({
        apps: [...apps.map(app => ({ ...app, tags: ['prod'] })), other]
      })
      server.inject({ method: 'POST', path: '/deploy', do: 'lost' })
      const result = await run(server, { 'app-uuid': '', tag: 'prod', ...inputs })

      expect(result.code).toBe(0)
      expect(sentTo(server, '/api/v1/deploy')).toHaveLength(1)
      expect(
        server
          .deployments()
          .map(deployment => deployment.appUuid)
          .sort()
      ).toEqual([uuidOf('back'), uuidOf('front')])
      expect(records(result.outputs).map(record => [record.name, record.status])).toEqual([
        ['front', 'finished'],
        ['back', 'finished']
      ])
      expect(result.stdout).toMatch(
        /::warning::POST \/deploy: Coolify's answer was lost after it queued the tag's applications/
      )
      // Followed as this run's own: cancelled on timeout, not joined.
      expect(result.stdout).not.toMatch(/started elsewhere/)
    }
  )

  it('does not repeat a forced tag deploy whose answer was lost when the tag has no application to look at', async () => {
    const redis: FakeApp = { uuid: uuidOf('redis'), name: 'redis', kind: 'service', tags: ['prod'] }
    const server = await start({ apps: [redis] })
    server.inject({ method: 'POST', path: '/deploy', do: 'reset' })
    const result = await run(server, { 'app-uuid': '', tag: 'prod', force: 'true' })

    expect(result.code).toBe(1)
    expect(sentTo(server, '/api/v1/deploy')).toHaveLength(1)
    expect(result.stdout).toMatch(/::error::POST \/deploy: the connection to .* failed/)
  })

  it('follows a database in the uuid list until it runs, with nothing to cancel', async () => {
    const { apps } = plan([{ name: 'web', durationMs: 300 }])
    const db: FakeApp = { uuid: uuidOf('db'), name: 'db', kind: 'database' }
    const server = await start({ apps: [...apps, db] })
    const result = await run(server, { 'app-uuid': `${uuidOf('web')},${uuidOf('db')}` })

    expect(result.code).toBe(0)
    expect(
      records(result.outputs).map(record => [record.name, record.status, record.deployment_uuid])
    ).toEqual([
      ['web', 'finished', server.deployments()[0].uuid],
      ['db', 'finished', null]
    ])
  })

  it('fails naming a uuid Coolify skipped', async () => {
    const { apps } = plan([{ name: 'web', durationMs: 300 }])
    const server = await start({ apps })
    const result = await run(server, { 'app-uuid': `${uuidOf('web')},ghostuuid` })

    expect(result.code).toBe(1)
    const errors = result.stdout.split('\n').filter(line => line.startsWith('::error'))
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain('ghostuuid')
    expect(errors[0]).toContain('skipped')
    expect(records(result.outputs).find(record => record.app_uuid === uuidOf('web'))!.status).toBe(
      'finished'
    )
  })

  it('fails naming an application the token may not deploy', async () => {
    const { apps } = plan([{ name: 'web', durationMs: 300 }])
    const server = await start({ apps: [{ ...apps[0], unauthorized: true }] })
    const result = await run(server, { 'app-uuid': uuidOf('web') })

    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/::error.*Unauthorized to deploy this application\./)
  })
})

describe('more failures than GitHub shows annotations for', () => {
  it('annotates the worst first, names the rest in one, and keeps the step’s own error among the 10', async () => {
    // Six run on (listed first) and are cancelled with the run, six fail: GitHub keeps a step's
    // first 10 error annotations.
    const slow = Array.from({ length: 6 }, (_, i) => `slow${i}`)
    const broken = Array.from({ length: 6 }, (_, i) => `broken${i}`)
    const apps: FakeApp[] = [
      ...slow.map(name => ({ uuid: uuidOf(name), name, scenarios: [endless()] })),
      ...broken.map(name => ({
        uuid: uuidOf(name),
        name,
        scenarios: [timedBuild(name, { durationMs: 200, outcome: 'failed' }).scenario]
      }))
    ]
    const server = await start({ apps })
    let signalled = false
    const result = await runAction({
      inputs: inputsFor(server, { 'app-uuid': [...slow, ...broken].map(uuidOf).join(',') }),
      onStdout: (stdout, child) => {
        const ended = broken.filter(name => stdout.includes(`${name} failed to build`))
        if (signalled || ended.length < broken.length) return
        signalled = true
        child.kill('SIGINT')
      }
    })

    expect(result.code).toBe(1)
    const errors = result.stdout.split('\n').filter(line => line.startsWith('::error'))
    expect(errors).toHaveLength(10)
    for (const name of broken) {
      expect(errors.slice(0, 6).some(line => line.includes(`${name}: deployment failed`))).toBe(
        true
      )
    }
    expect(errors.slice(6, 8).every(line => / deployment cancelled/.test(line))).toBe(true)
    expect(errors[8]).toMatch(
      /^::error title=4 more deployments did not succeed::Also did not succeed: slow\d \(cancelled\)/
    )
    // The step's own error is the last, and shown.
    expect(errors[9]).toBe('::error::The workflow run was cancelled.')
  }, 30_000)
})

describe('pull request previews', () => {
  it('deploys the preview of the pull request', async () => {
    const { apps } = plan([{ name: 'web', durationMs: 300 }])
    const server = await start({ apps: [{ ...apps[0], previews: [7] }] })
    const result = await run(server, { 'app-uuid': uuidOf('web'), pr: '7' })

    expect(result.code).toBe(0)
    expect(server.requests.find(request => request.path === '/api/v1/deploy')!.query).toEqual({
      uuid: uuidOf('web'),
      pr: '7'
    })
    expect(server.deployments()[0].pr).toBe(7)
  })

  it('fails naming the pull request Coolify has no preview for', async () => {
    const { apps } = plan([{ name: 'web', durationMs: 300 }])
    const server = await start({ apps })
    const result = await run(server, { 'app-uuid': uuidOf('web'), pr: '9' })

    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/::error.*Pull request 9 not found for this resource\./)
  })
})
