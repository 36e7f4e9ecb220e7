/**
 * A run cancels, restores and reports as its own only what it can prove it started, and believes
 * only a status Coolify refreshed since the change. Each runs the bundle as the runner does,
 * against the fake Coolify, modelled on Coolify 4.3.11 (queue_application_deployment, by_uuids,
 * ApplicationDeploymentJob, GetContainersStatus).
 */
import { describe, expect, it } from '@jest/globals'
import type { FakeApp, FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  endless,
  expectNoSecrets,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  inputsFor,
  requestLines,
  savedRollouts,
  startElsewhere,
  TOKEN
} from '../test/support/scenarios.js'

/** The fake's clock runs `offset` ms from the real one: a test sets it to date what it starts. */
let offset = 0
const start = fakeCoolifyPerTest(() => {
  offset = 0
  return {
    clock: () => Date.now() + offset,
    abilities: ['deploy', 'read', 'read:sensitive', 'write']
  }
})

const OTHER = 'fedcba9876543210fedcba9876543210fedcba98'

async function run(server: FakeCoolify, inputs: Record<string, string> = {}): Promise<RunResult> {
  const result = await runAction({ inputs: inputsFor(server, inputs) })
  if (process.env.SHOW_RUN) console.log(result.stdout, result.stderr)
  return result
}

function runPost(
  server: FakeCoolify,
  state: Record<string, string>,
  inputs: Record<string, string> = {}
): Promise<RunResult> {
  return runAction({ entry: 'post', inputs: inputsFor(server, inputs), state })
}

function cancels(server: FakeCoolify): string[] {
  return requestLines(actionRequests(server)).filter(line => line.endsWith('/cancel'))
}

function expectClean(result: RunResult): void {
  expectNoStackTrace(result.stderr)
  expectNoSecrets(result.stdout + result.stderr, [TOKEN])
}

describe('deployments started elsewhere', () => {
  it('follows a joined deployment past `timeout` but never cancels it, nor does the post step', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [endless()] }] })
    // Someone started a deployment of the same commit 20 s before the run.
    offset = -20_000
    const theirs = await startElsewhere(server)
    offset = 0

    const main = await run(server, { timeout: '3s' })

    expect(main.code).not.toBe(0)
    expect(main.outputs.status).toBe('timeout')
    expect(main.outputs['deployment-uuid']).toBe(theirs)
    expect(main.stdout).toContain('started elsewhere')
    expect(main.stdout).toContain(`deployment ${theirs} of web was started elsewhere`)
    expect(cancels(server)).toEqual([])
    expect(server.deployments()).toHaveLength(1)
    expect(server.deployments()[0].status).toBe('in_progress')
    // Nothing of it is left for the post step to cancel.
    expect(savedRollouts(main.state)).toEqual({})
    const post = await runPost(server, main.state)
    expect(post.code).toBe(0)
    expect(cancels(server)).toEqual([])
    expect(server.deployments()[0].status).toBe('in_progress')
    expectClean(main)
  })
})

describe("a trigger cut off, and another run's deployment seconds older in the history", () => {
  it("takes that deployment for the other run's: follows it, never cancels it", async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [endless()] }] })
    // Coolify never answers the trigger; `timeout` cuts it off.
    server.inject({ method: 'POST', path: '/deploy', do: 'hang' })
    const main = run(server, { timeout: '3s' })
    let trigger: FakeCoolify['requests'][number] | undefined
    while (!(trigger = actionRequests(server).find(request => request.path.endsWith('/deploy')))) {
      await new Promise(resolve => setTimeout(resolve, 5))
    }
    // Meanwhile the history shows another run's deployment, created 2 s before the trigger:
    // within the slack that finds a trigger's row, but in an earlier second than it.
    offset = trigger.at - 2000 - Date.now()
    const theirs = await startElsewhere(server)
    offset = 0

    const result = await main

    expect(result.code).not.toBe(0)
    expect(result.stdout).toContain(`The deploy request was cut off, but Coolify started ${theirs}`)
    expect(result.outputs['deployment-uuid']).toBe(theirs)
    expect(result.stdout).toMatch(new RegExp(`deployment ${theirs} of \\S+ was started elsewhere`))
    expect(cancels(server)).toEqual([])
    expect(server.deployments()).toHaveLength(1)
    expect(server.deployments()[0].status).toBe('in_progress')
    expect(savedRollouts(result.state)).toEqual({})
    expectClean(result)
  })
})

describe('the post step after a trigger whose answer never came', () => {
  it("cancels the deployment the trigger queued, not a webhook's created in the same second", async () => {
    const scenarios: Scenario[] = [endless(), { ...endless(), commit: OTHER }]
    const server = await start({ apps: [{ ...APP, scenarios }] })
    const at = Date.now()
    // The trigger's deployment (its answer lost), and a push webhook's of another commit.
    const ours = await startElsewhere(server)
    const webhook = server.push(APP.uuid, { commit: OTHER })!
    expect(webhook).toBeDefined()
    const state = { post: 'true', rollouts: JSON.stringify({ [APP.uuid]: { trigger: { at } } }) }

    const post = await runPost(server, state)

    expect(post.code).toBe(0)
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${ours}/cancel`])
    const status = (uuid: string): string | undefined =>
      server.deployments().find(deployment => deployment.uuid === uuid)?.status
    expect(status(ours)).toBe('cancelled-by-user')
    expect(['queued', 'in_progress']).toContain(status(webhook.uuid))
    expectClean(post)
  })

  it('cancels nothing and warns when two deployments could be the one it queued', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [endless()] }] })
    const at = Date.now()
    // Two API deploys of the same commit in the same seconds: forced, so Coolify queues both.
    for (let i = 0; i < 2; i++) {
      await fetch(`${server.url}/api/v1/deploy?uuid=${APP.uuid}&force=true`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` }
      })
    }
    const state = { post: 'true', rollouts: JSON.stringify({ [APP.uuid]: { trigger: { at } } }) }

    const post = await runPost(server, state)

    expect(post.code).toBe(0)
    expect(cancels(server)).toEqual([])
    expect(post.stdout).toMatch(/^::warning::.*2 deployments created after it could be the one/m)
    expectClean(post)
  })
})

describe('two runs pinning the same application', () => {
  const GIT_APP: FakeApp = { ...APP, coolifyJob: true, scenarios: [build('finished')] }
  const SHA_A = 'aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111'
  const SHA_B = 'bbbb2222bbbb2222bbbb2222bbbb2222bbbb2222'

  function pinsWritten(server: FakeCoolify): unknown[] {
    return actionRequests(server)
      .filter(request => request.method === 'PATCH')
      .map(request => (JSON.parse(request.body) as { git_commit_sha?: string }).git_commit_sha)
  }

  /**
   * Run A pins SHA_A and holds its pin while Coolify's answer to its trigger takes `aMs`; run B
   * starts meanwhile, its answer taking `bMs`.
   */
  async function overlap(aMs: number, bMs: number): Promise<[RunResult, RunResult, FakeCoolify]> {
    const server = await start({ apps: [GIT_APP] })
    server.inject({ method: 'POST', path: '/deploy', do: { delayMs: aMs } })
    const a = run(server, { commit: SHA_A })
    let aEnded = false
    void a.finally(() => (aEnded = true))
    while (server.app(APP.uuid)?.gitCommitSha !== SHA_A && !aEnded) {
      await new Promise(resolve => setTimeout(resolve, 10))
    }
    // Armed after A's: B's trigger gets it, whichever reaches Coolify first.
    server.inject({ method: 'POST', path: '/deploy', do: { delayMs: bMs } })
    const b = run(server, { commit: SHA_B })
    return [await a, await b, server]
  }

  for (const [order, aMs, bMs] of [
    ['the first to start restores first', 2000, 4000],
    ['the second to start restores first', 4000, 100]
  ] as const) {
    it(`leaves it unpinned, and neither puts back the other's pin, when ${order}`, async () => {
      const [a, b, server] = await overlap(aMs, bMs)

      expect(a.code).toBe(0)
      expect(b.code).toBe(0)
      expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
      // Each pin is set once and taken off once; no run writes back the other's.
      const written = pinsWritten(server)
      expect(written.filter(sha => sha === SHA_A)).toHaveLength(1)
      expect(written.filter(sha => sha === SHA_B)).toHaveLength(1)
      expect(
        server
          .deployments()
          .map(deployment => deployment.commit)
          .sort()
      ).toEqual([SHA_A, SHA_B])
      expectClean(a)
      expectClean(b)
    }, 40_000)
  }
})

describe("an application's status after its deployment finished", () => {
  const quick: Scenario = {
    steps: [
      { at: 0, status: 'queued' },
      { at: 40, status: 'in_progress' },
      { at: 300, status: 'finished', lines: ['Rolling update completed.'] }
    ]
  }

  it('waits for a fresh status: a stale running:healthy, then a fresh exited, is unhealthy', async () => {
    // Coolify refreshes the status 3 s after the deployment finished: until then it shows the
    // old container running.
    const app = { ...APP, scenarios: [quick], refreshMs: 3000 }
    const server = await start({
      apps: [{ ...app, runtime: [{ at: 0, status: 'exited:unhealthy' }] }]
    })

    const result = await run(server, { 'health-timeout': '6s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('unhealthy')
    expect(result.stdout).toMatch(/did not come up: Coolify reports it exited:unhealthy/)
    expectClean(result)
  })

  it('counts no status check from the second the deployment ended in', async () => {
    // The fake's clock stands at .600 of each second: the deployment ends at .900 of one, and
    // Coolify's scheduled check saw the old container at .500 of the same second. Both are
    // stored as that whole second; only the refresh 3 s later sees the new container.
    const app = {
      ...APP,
      scenarios: [quick],
      refreshMs: 3000,
      checkedBeforeEndMs: 400,
      runtime: [{ at: 0, status: 'exited:unhealthy' }]
    }
    const server = await start({
      apps: [app],
      clock: () => {
        const now = Date.now()
        return now - (now % 1000) + 600
      }
    })

    const result = await run(server, { 'health-timeout': '8s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('unhealthy')
    expect(result.stdout).toMatch(/did not come up: Coolify reports it exited:unhealthy/)
    expectClean(result)
  })

  it('reads last_online_at as UTC on a runner in another time zone', async () => {
    // Coolify answers it as Postgres prints it, without a zone: read as New York's local time, the
    // old container's status, ten minutes old, would be five hours in the future, hence fresh.
    const app = { ...APP, scenarios: [quick], refreshMs: 3000 }
    const server = await start({
      apps: [{ ...app, runtime: [{ at: 0, status: 'exited:unhealthy' }] }]
    })

    const result = await runAction({
      inputs: inputsFor(server, { 'health-timeout': '8s' }),
      env: { TZ: 'America/New_York' }
    })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('unhealthy')
    expect(result.stdout).toMatch(/did not come up: Coolify reports it exited:unhealthy/)
    expectClean(result)
  })

  it('on a Sentinel server, counts the one check that follows the end, in its second', async () => {
    // Sentinel writes an unchanged status never again: only the check Coolify dispatches as the
    // deployment finishes, here within finished_at's own second, tells the new container's.
    const runtime = [{ at: 0, status: 'running:unhealthy' }]
    const server = await start({ apps: [{ ...APP, scenarios: [quick], runtime, refreshMs: 0 }] })

    const result = await run(server, { 'health-timeout': '6s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('unhealthy')
    expect(result.stdout).toMatch(/did not come up: Coolify reports it running:unhealthy/)
    expectClean(result)
  })

  it('on a Sentinel server, confirms a healthy container within seconds of the end', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [quick], refreshMs: 0 }] })

    const result = await run(server, { 'health-timeout': '60s' })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.stdout).not.toMatch(/could not confirm/)
    const [deployment] = server.deployments()
    expect(result.exitedAt - deployment.finishedAt!).toBeLessThan(10_000)
    expectClean(result)
  })

  it('takes the URL for a `health-url` path from its own reads when the first read was slow', async () => {
    const app = { ...APP, fqdn: `{{self}}/_app/${APP.uuid}`, scenarios: [quick] }
    const server = await start({ apps: [app] })
    server.inject({ method: 'GET', path: `/applications/${APP.uuid}`, do: { delayMs: 5000 } })

    const result = await run(server, { 'health-url': '/health', 'health-timeout': '20s' })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.stdout).toContain(`web: healthy (${server.url}/_app/${APP.uuid}/health answers)`)
    expectClean(result)
  })

  it('is unhealthy when Coolify reports running:unhealthy throughout', async () => {
    const runtime = [{ at: 0, status: 'running:unhealthy' }]
    const server = await start({ apps: [{ ...APP, scenarios: [quick], runtime }] })

    // Its check may share the second of the last read that showed the deployment running.
    const result = await run(server, { 'health-timeout': '8s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('unhealthy')
    expect(result.stdout).toMatch(/did not come up: Coolify reports it running:unhealthy/)
    expectClean(result)
  })

  it('warns, without failing, when Coolify never refreshes the status in time', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [quick], refreshMs: 60_000 }] })

    const result = await run(server, { 'health-timeout': '2s' })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.stdout).toMatch(
      /^::warning::could not confirm that web is up: Coolify has not refreshed its status since the deployment ended \(it still reports running:healthy\)/m
    )
    expectClean(result)
  })
})

describe('a full deployment queue after part of the request was queued', () => {
  const API = { uuid: 'api0app0uuid0000000002', name: 'api', fqdn: 'https://api.example.com' }
  const quick: Scenario = {
    steps: [
      { at: 0, status: 'queued' },
      { at: 40, status: 'in_progress' },
      { at: 300, status: 'finished', lines: ['Rolling update completed.'] }
    ]
  }

  it('follows what was queued, deploys nothing twice, and reports the rest refused', async () => {
    // Room for one more: web is queued, then the queue is full for api.
    const server = await start({
      queueLimit: 1,
      apps: [
        { ...APP, scenarios: [quick] },
        { ...API, scenarios: [quick] }
      ]
    })

    const result = await run(server, { 'app-uuid': `${APP.uuid},${API.uuid}`, force: 'true' })

    const of = (uuid: string): number =>
      server.deployments().filter(deployment => deployment.appUuid === uuid).length
    expect(of(APP.uuid)).toBe(1)
    expect(of(API.uuid)).toBe(0)
    expect(result.code).toBe(1)
    const [web, api] = JSON.parse(result.outputs.deployments) as Array<Record<string, unknown>>
    expect(web).toMatchObject({ status: 'finished' })
    expect(api).toMatchObject({ status: 'failed' })
    expect(result.stdout).toMatch(/api.*Deployment queue is full/)
    expectClean(result)
  })
})
