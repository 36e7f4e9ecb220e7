/**
 * Deploying exactly one version: an image tag for Docker-image applications, a commit for git
 * applications, each run through the bundle against the fake Coolify.
 */
import { describe, expect, it } from '@jest/globals'
import type { ChildProcess } from 'node:child_process'
import type { FakeApp, FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { startFakeGitHub } from '../test/fake-github/index.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  endless,
  errorLines,
  expectNoSecrets,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  inputsFor,
  requestLines,
  TOKEN,
  startElsewhere
} from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest(() => ({
  abilities: ['deploy', 'read', 'read:sensitive', 'write']
}))
const SHA = '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c'
const IMAGE_APP: FakeApp = {
  ...APP,
  buildPack: 'dockerimage',
  image: { name: 'ghcr.io/acme/web', tag: '1.0' },
  scenarios: [quick()]
}
const GIT_APP: FakeApp = { ...APP, coolifyJob: true, scenarios: [build('finished')] }

/** A deployment that starts at once and finishes after `ms`. */
function quick(ms = 300): Scenario {
  return {
    steps: [
      { at: 0, status: 'queued' },
      { at: 40, status: 'in_progress' },
      { at: ms, status: 'finished', lines: ['Rolling update completed.'] }
    ]
  }
}

async function run(server: FakeCoolify, inputs: Record<string, string> = {}): Promise<RunResult> {
  const result = await runAction({ inputs: inputsFor(server, inputs) })
  if (process.env.SHOW_RUN) console.log(result.stdout, result.stderr)
  return result
}

/** The bodies of the action's PATCH /applications/{uuid} requests. */
function patches(server: FakeCoolify): unknown[] {
  return actionRequests(server)
    .filter(request => request.method === 'PATCH')
    .map(request => JSON.parse(request.body))
}

function expectClean(result: RunResult): void {
  expectNoSecrets(result.stdout + result.stderr + result.summary, [TOKEN])
  expectNoStackTrace(result.stderr)
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise(resolve => setTimeout(resolve, 10))
}

/** Runs the main step and sends `signal` once Coolify has queued a deployment. */
async function runAndSignal(
  server: FakeCoolify,
  signal: NodeJS.Signals,
  inputs: Record<string, string>
): Promise<RunResult> {
  let sent = false
  return runAction({
    inputs: inputsFor(server, { timeout: '30s', ...inputs }),
    killAfterMs: 20_000,
    onStdout: (_stdout, child: ChildProcess) => {
      const check = (): void => {
        if (sent || child.exitCode !== null || child.signalCode !== null) return
        if (server.deployments().length === 0) return void setTimeout(check, 5)
        sent = true
        child.kill(signal)
      }
      check()
    }
  })
}

describe('image-tag', () => {
  it('sets the tag, deploys it and names it in the outputs', async () => {
    const server = await start({ apps: [IMAGE_APP] })
    const result = await run(server, { 'image-tag': '2.0' })

    expect(result.code).toBe(0)
    expect(patches(server)).toEqual([{ docker_registry_image_tag: '2.0' }])
    const [deployment] = server.deployments()
    expect(server.deployments()).toHaveLength(1)
    expect(deployment.imageTag).toBe('2.0')
    expect(result.stdout).toContain('Starting deployment of ghcr.io/acme/web:2.0 to localhost.')
    expect(result.outputs.status).toBe('finished')
    expect(JSON.parse(result.outputs.deployments)).toEqual([
      expect.objectContaining({ deployment_uuid: deployment.uuid, image_tag: '2.0' })
    ])
    expect(server.app(APP.uuid)?.imageTag).toBe('2.0')
    expectClean(result)
  })

  it('deploys the new tag after a deployment of the old one that was already running', async () => {
    const long = { ...quick(1500) }
    const server = await start({ apps: [{ ...IMAGE_APP, scenarios: [long, quick()] }] })
    await startElsewhere(server)
    await until(() => server.deployments()[0]?.imageTag !== undefined)

    const result = await run(server, { 'image-tag': '2.0' })

    expect(result.code).toBe(0)
    const [earlier, ours] = server.deployments()
    expect(server.deployments()).toHaveLength(2)
    expect(earlier.imageTag).toBe('1.0')
    expect(ours.imageTag).toBe('2.0')
    expect(ours.force).toBe(true)
    expect(result.outputs['deployment-uuid']).toBe(ours.uuid)
    expect(JSON.parse(result.outputs.deployments)).toEqual([
      expect.objectContaining({ deployment_uuid: ours.uuid, status: 'finished', image_tag: '2.0' })
    ])
    expect(result.stdout).toContain(`deployment ${ours.uuid} deploys 2.0 after it`)
    expectClean(result)
  })

  it('joins a deployment that has not started yet: it pulls the new tag, and only it', async () => {
    // Queued long enough for the step to start and trigger before it runs, however slow the machine.
    const late: Scenario = { steps: [{ at: 0, status: 'queued' }, ...quick(3400).steps.slice(1)] }
    late.steps[1] = { at: 3000, status: 'in_progress' }
    const server = await start({ apps: [{ ...IMAGE_APP, scenarios: [late] }] })
    await startElsewhere(server)

    const result = await run(server, { 'image-tag': '2.0' })

    expect(result.code).toBe(0)
    expect(server.deployments()).toHaveLength(1)
    const [deployment] = server.deployments()
    expect(deployment.imageTag).toBe('2.0')
    expect(result.outputs['deployment-uuid']).toBe(deployment.uuid)
  })

  it("deploys a digest, Coolify's sha256-HEX tag, which its log names NAME@sha256:HEX", async () => {
    const digest = `sha256-${'ab'.repeat(32)}`
    const server = await start({ apps: [IMAGE_APP] })
    const result = await run(server, { 'image-tag': digest })

    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`ghcr.io/acme/web@sha256:${'ab'.repeat(32)} to localhost.`)
    expect(result.outputs.status).toBe('finished')
    expect(JSON.parse(result.outputs.deployments)).toEqual([
      expect.objectContaining({ status: 'finished', image_tag: digest })
    ])
  })

  it("is superseded, not failed, when another deploy's tag ran: no rollback over it", async () => {
    // Queued long enough for another run to set its tag before it starts.
    const late: Scenario = { steps: [{ at: 0, status: 'queued' }, ...quick(3400).steps.slice(1)] }
    late.steps[1] = { at: 3000, status: 'in_progress' }
    const server = await start({ apps: [{ ...IMAGE_APP, scenarios: [late, quick()] }] })
    const result = runAction({
      inputs: inputsFor(server, { 'image-tag': '2.0', 'rollback-on-failure': 'true' })
    })
    await until(() => server.deployments().length === 1)
    // Another run sets 3.0; its deploy joins this one's, still queued.
    await fetch(`${server.url}/api/v1/applications/${APP.uuid}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ docker_registry_image_tag: '3.0' })
    })
    const { code, outputs, stdout } = await result

    expect(code).toBe(1)
    expect(server.deployments()).toHaveLength(1)
    expect(server.deployments()[0].imageTag).toBe('3.0')
    expect(server.app(APP.uuid)?.imageTag).toBe('3.0')
    expect(outputs.status).toBe('cancelled')
    expect(outputs['rolled-back']).not.toBe('true')
    expect(stdout).toContain("superseded: the application's image tag was set to 3.0")
  })

  it('refuses an application built from git, naming the input, before changing anything', async () => {
    const server = await start()
    const result = await run(server, { 'image-tag': '2.0' })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      expect.stringMatching(/Input `image-tag` is for Docker-image applications; web is built/)
    ])
    expect(requestLines(actionRequests(server))).toEqual([`GET /api/v1/applications/${APP.uuid}`])
    expectClean(result)
  })
})

describe('an application on more than one server', () => {
  // Coolify queues the other servers' deployments when the main one ends, without a commit.
  const onTwo: FakeApp = { ...GIT_APP, columns: { additional_networks_count: 1 } }

  it.each([
    ['commit', { commit: SHA }],
    ['rollback-on-failure', { 'rollback-on-failure': 'true' }]
  ])(
    'refuses %s, which cannot reach the other server, before changing anything',
    async (input, inputs) => {
      const server = await start({ apps: [onTwo] })
      const result = await run(server, inputs)

      expect(result.code).toBe(1)
      expect(errorLines(result.stdout)).toEqual([
        expect.stringContaining(
          `Input \`${input}\` cannot reach all of web: it also runs on 1 more server, which Coolify deploys after the main one without a commit`
        )
      ])
      expect(requestLines(actionRequests(server))).toEqual([`GET /api/v1/applications/${APP.uuid}`])
      expect(server.deployments()).toEqual([])
    }
  )
})

describe('commit', () => {
  it('builds exactly that commit and leaves the application unpinned', async () => {
    const server = await start({ apps: [GIT_APP] })
    const result = await run(server, { commit: SHA })

    expect(result.code).toBe(0)
    const [deployment] = server.deployments()
    expect(deployment.commit).toBe(SHA)
    expect(patches(server)).toEqual([{ git_commit_sha: SHA }, { git_commit_sha: 'HEAD' }])
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
    // Unpinned as soon as Coolify answered the trigger, before the deployment was read, once a
    // read showed the pin still this run's.
    const lines = requestLines(actionRequests(server))
    const deploy = lines.indexOf('POST /api/v1/deploy')
    expect(lines.slice(deploy + 1, deploy + 3)).toEqual([
      `GET /api/v1/applications/${APP.uuid}`,
      `PATCH /api/v1/applications/${APP.uuid}`
    ])
    expect(result.stdout).toContain(`(commit sha ${SHA})`)
    expect(result.stdout).not.toMatch(/^::warning::/m)
    expect(JSON.parse(result.outputs.deployments)[0].commit).toBe(SHA)
    expectClean(result)
  })

  it('puts back a pin that was there before', async () => {
    const old = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'
    const server = await start({ apps: [{ ...GIT_APP, gitCommitSha: old }] })
    const result = await run(server, { commit: SHA })

    expect(result.code).toBe(0)
    expect(server.deployments()[0].commit).toBe(SHA)
    expect(server.app(APP.uuid)?.gitCommitSha).toBe(old)
    // With no deployment waiting in Coolify's queue, a pin that stays 10 s is the application's.
    expect(result.stdout).toContain('waiting up to 10 s to see whether it stays')
  }, 30_000)

  it('fails, naming both commits, when the build log names another commit', async () => {
    const other = '1111111111111111111111111111111111111111'
    const scenario: Scenario = {
      steps: [
        { at: 0, status: 'queued' },
        {
          at: 40,
          status: 'in_progress',
          lines: [`Importing acme/web:main (commit sha ${other}) to /artifacts/x.`]
        },
        { at: 200, status: 'finished' }
      ]
    }
    const server = await start({ apps: [{ ...APP, scenarios: [scenario] }] })
    const result = await run(server, { commit: SHA })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('failed')
    expect(errorLines(result.stdout).join('\n')).toContain(
      `web: deployment failed: Coolify built commit ${other}, not ${SHA}`
    )
  })

  it("pins the full SHA of an abbreviation of the workflow's commit", async () => {
    const workflowSha = '0123456789abcdef0123456789abcdef01234567'
    const server = await start({ apps: [GIT_APP] })
    const result = await run(server, { commit: workflowSha.slice(0, 7) })

    expect(result.code).toBe(0)
    expect(patches(server)).toEqual([{ git_commit_sha: workflowSha }, { git_commit_sha: 'HEAD' }])
    expect(server.deployments()[0].commit).toBe(workflowSha)
  })

  it('refuses an abbreviation it cannot make whole, before changing anything', async () => {
    const server = await start({ apps: [GIT_APP] })
    const result = await run(server, { commit: 'abcdef1' })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      expect.stringMatching(/Input `commit`: abcdef1 is abbreviated.*give all 40 digits/)
    ])
    expect(patches(server)).toEqual([])
    expect(server.deployments()).toEqual([])
  })

  it('refuses a value that is not a SHA', async () => {
    const server = await start()
    const result = await run(server, { commit: 'main' })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      expect.stringContaining('Input `commit`: "main" is not a commit SHA')
    ])
    expect(actionRequests(server)).toEqual([])
  })

  it('unpins when the run is cancelled while the trigger waits for its answer', async () => {
    const server = await start({ apps: [{ ...GIT_APP, scenarios: [endless()] }] })
    server.inject({ method: 'POST', path: '/deploy', do: 'lost' })
    const main = await runAndSignal(server, 'SIGINT', { commit: SHA })

    expect(main.code).not.toBe(0)
    expect(server.deployments()[0].commit).toBe(SHA)
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
    expectClean(main)
  })

  it('leaves the unpin to the post step when the main step is killed', async () => {
    const server = await start({ apps: [{ ...GIT_APP, scenarios: [endless()] }] })
    server.inject({ method: 'POST', path: '/deploy', do: 'lost' })
    const main = await runAndSignal(server, 'SIGKILL', { commit: SHA })

    expect(main.signal).toBe('SIGKILL')
    expect(server.app(APP.uuid)?.gitCommitSha).toBe(SHA)
    const post = await runAction({
      entry: 'post',
      inputs: inputsFor(server, { commit: SHA }),
      state: main.state
    })
    expect(post.code).toBe(0)
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
    expect(post.stdout).toContain(`Set git_commit_sha back as it was on ${APP.uuid}`)
    expectClean(post)
  })
})

describe('health', () => {
  const SELF_APP: FakeApp = { ...APP, fqdn: `{{self}}/_app/${APP.uuid}`, scenarios: [quick()] }
  const appReads = (server: FakeCoolify): number =>
    requestLines(actionRequests(server)).filter(
      line => line === `GET /api/v1/applications/${APP.uuid}`
    ).length

  it('costs one read of the application when it stays up and no URL is given', async () => {
    const server = await start({ apps: [SELF_APP] })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    // One for its name and URL, one for its status.
    expect(appReads(server)).toBe(2)
  })

  it('checks the health URL without the token or headers', async () => {
    const server = await start({ apps: [SELF_APP] })
    const result = await run(server, {
      'health-url': '/health',
      headers: 'X-Access-Key: header-secret-value'
    })

    expect(result.code).toBe(0)
    const probes = server.requests.filter(request => request.path.startsWith('/_app/'))
    expect(probes.map(request => request.path)).toEqual([`/_app/${APP.uuid}/health`])
    expect(probes[0].headers.authorization).toBeUndefined()
    expect(JSON.stringify(probes[0].headers)).not.toContain('header-secret-value')
    expect(result.stdout).toContain(`web: healthy (${server.url}/_app/${APP.uuid}/health answers)`)
  })

  it('ends unhealthy when the URL answers 500, with the runtime log in the log and summary', async () => {
    const server = await start({
      apps: [
        {
          ...SELF_APP,
          runtime: [{ at: 0, status: 'running:healthy', http: 500 }],
          runtimeLogs: ['listening on 3000', 'Error: cannot reach the database']
        }
      ]
    })
    const result = await run(server, { 'health-url': '/health', 'health-timeout': '1s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('unhealthy')
    expect(JSON.parse(result.outputs.deployments)[0].status).toBe('unhealthy')
    expect(result.stdout).toContain('::group::Runtime log of web')
    expect(result.stdout).toContain('Error: cannot reach the database')
    expect(result.summary).toContain('Error: cannot reach the database')
    expect(errorLines(result.stdout)).toEqual([
      expect.stringMatching(
        /web: deployment unhealthy: it did not come up: .*\/health answered 500/
      )
    ])
    expectClean(result)
  })

  it('ends unhealthy when the application keeps restarting', async () => {
    const server = await start({
      apps: [{ ...SELF_APP, runtime: [{ at: 0, status: 'restarting:unhealthy' }] }]
    })
    const result = await run(server, { 'health-timeout': '1s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('unhealthy')
    expect(errorLines(result.stdout)).toEqual([
      expect.stringContaining('it did not come up: Coolify reports it restarting:unhealthy')
    ])
    expect(result.stdout).toContain('Coolify had no log for it')
  })

  it('waits within health-timeout for an application that comes up late', async () => {
    // Up 4 s after the deployment ended: later than the action can be there, whatever the load.
    const runtime = [
      { at: 0, status: 'exited:unhealthy' },
      { at: 4000, status: 'running:healthy' }
    ]
    const server = await start({ apps: [{ ...SELF_APP, runtime }] })
    const result = await run(server, { 'health-timeout': '10s' })
    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')

    // Refreshed a second after the end, past any doubt about the second it shares: only the
    // window decides.
    const again = await start({ apps: [{ ...SELF_APP, runtime, refreshMs: 1000 }] })
    const short = await run(again, { 'health-timeout': '300ms' })
    expect(short.code).toBe(1)
    expect(short.outputs.status).toBe('unhealthy')
  })
})

/** The commit the application ran before the run, as Coolify's job records it: in full. */
const EARLIER = 'abc1234abc1234abc1234abc1234abc1234abc12'

describe('two runs pinning one application', () => {
  const OURS = '0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a'
  const THEIRS = '0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b'

  /** The git_commit_sha each PATCH of one run wrote, told apart by its `headers`. */
  function pinsWritten(server: FakeCoolify, run: string): unknown[] {
    return actionRequests(server)
      .filter(request => request.method === 'PATCH' && request.headers['x-run'] === run)
      .map(request => JSON.parse(request.body).git_commit_sha)
  }

  it("does not take another run's pin, held while that run waits, for the one to put back", async () => {
    // Run B deploys web and api; api carries a pin of a third run, which B watches for a full
    // queue's wait (Coolify's list of deployments is not readable to it). Run A deploys web meanwhile.
    const api = { ...GIT_APP, uuid: 'api0app0uuid0000000002', name: 'api', gitCommitSha: SHA }
    const server = await start({ apps: [GIT_APP, api] })
    server.inject({ method: 'GET', path: '/deployments', do: { status: 403 } })
    let watching!: () => void
    const waits = new Promise<void>(resolve => (watching = resolve))
    const runB = runAction({
      inputs: inputsFor(server, {
        'app-uuid': `${APP.uuid} ${api.uuid}`,
        commit: THEIRS,
        headers: 'X-Run: b',
        timeout: '60s'
      }),
      killAfterMs: 50_000,
      onStdout: stdout => {
        if (stdout.includes('api: pinned to')) watching()
      }
    })
    await waits
    const runA = await run(server, { commit: OURS, headers: 'X-Run: a', timeout: '40s' })
    // The third run puts its pin back: B deploys.
    await fetch(`${server.url}/api/v1/applications/${api.uuid}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ git_commit_sha: 'HEAD' })
    })
    const resultB = await runB

    expect(runA.code).toBe(0)
    expect(resultB.code).toBe(0)
    expect(pinsWritten(server, 'a')).toEqual([OURS, 'HEAD'])
    expect(pinsWritten(server, 'b')).toEqual([THEIRS, THEIRS, 'HEAD', 'HEAD'])
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
    expect(server.app(api.uuid)?.gitCommitSha).toBe('HEAD')
    const web = server.deployments().filter(deployment => deployment.appUuid === APP.uuid)
    expect(web.map(deployment => deployment.commit)).toEqual([OURS, THEIRS])
  }, 60_000)

  it('creates the GitHub deployment before it pins', async () => {
    const github = await startFakeGitHub({ delayMs: 300 })
    try {
      const server = await start({ apps: [GIT_APP] })
      const result = await runAction({
        inputs: inputsFor(server, { commit: SHA, environment: 'production' }),
        env: { GITHUB_API_URL: github.url }
      })

      expect(result.code).toBe(0)
      const created = github.requests.find(request => request.method === 'POST')!
      const pinned = actionRequests(server).find(request => request.method === 'PATCH')!
      expect(created.path).toBe('/repos/octo/app/deployments')
      expect(pinned.at).toBeGreaterThanOrEqual(created.at + 300)
    } finally {
      await github.close()
    }
  })

  it("is superseded, not failed, when its deployment built the other run's commit: no rollback", async () => {
    const server = await start({
      apps: [{ ...GIT_APP, scenarios: [{ ...quick(), commit: EARLIER }, build('finished')] }]
    })
    await startElsewhere(server)
    await until(() => server.deployments()[0]?.status === 'finished')
    // Both runs read the application before either pins (the reads are answered late); the
    // first to pin gets its answer late, and the other pins before it triggers.
    server.inject({
      method: 'GET',
      path: `/applications/${APP.uuid}`,
      do: { delayMs: 2500 },
      times: 2
    })
    server.inject({ method: 'PATCH', path: `/applications/${APP.uuid}`, do: { delayMs: 3000 } })
    server.inject({ method: 'PATCH', path: `/applications/${APP.uuid}`, do: { delayMs: 4500 } })
    const inputs = { 'rollback-on-failure': 'true', timeout: '40s' }
    const [a, b] = await Promise.all([
      run(server, { ...inputs, commit: OURS }),
      run(server, { ...inputs, commit: THEIRS })
    ])
    const first = actionRequests(server).find(request => request.method === 'PATCH')!
    const [overtaken, other] = JSON.parse(first.body).git_commit_sha === OURS ? [a, b] : [b, a]

    const [, built] = server.deployments()
    expect(built.commit).toBe(other === a ? OURS : THEIRS)
    expect(overtaken.code).toBe(1)
    expect(overtaken.outputs.status).toBe('cancelled')
    expect(overtaken.stdout).toContain(
      "superseded: another deploy changed the application's commit"
    )
    expect(overtaken.outputs['rolled-back']).not.toBe('true')
    expect(other.code).toBe(0)
    expect(other.outputs.status).toBe('finished')
    expect(server.deployments().filter(deployment => deployment.rollback)).toEqual([])
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
  }, 60_000)
})

describe('rollback-on-failure', () => {
  const earlier: Scenario = { ...quick(), commit: EARLIER }
  const broken: Scenario = { ...build('failed'), commit: 'def5678' }

  /** An app whose last deployment (made before the run) built EARLIER; the next one fails. */
  async function deployedBefore(options: Parameters<typeof start>[0] = {}): Promise<FakeCoolify> {
    const server = await start({
      apps: [{ ...APP, scenarios: [earlier, broken, quick()] }],
      ...options
    })
    await startElsewhere(server)
    await until(() => server.deployments()[0]?.status === 'finished')
    return server
  }

  it('redeploys the earlier commit through the rollback route, and still fails', async () => {
    const server = await deployedBefore()
    const result = await run(server, { 'rollback-on-failure': 'true' })

    expect(result.code).toBe(1)
    const [, failed, rollback] = server.deployments()
    expect(rollback).toMatchObject({ rollback: true, commit: EARLIER, status: 'finished' })
    const posted = actionRequests(server).find(request => request.path.endsWith('/rollback'))
    expect(JSON.parse(posted!.body)).toEqual({ commit: EARLIER })
    expect(result.outputs['rolled-back']).toBe('true')
    expect(result.outputs.status).toBe('failed')
    expect(JSON.parse(result.outputs.deployments)).toEqual([
      expect.objectContaining({ deployment_uuid: failed.uuid, status: 'failed', rolled_back: true })
    ])
    expect(errorLines(result.stdout)[0]).toContain(
      `rolled back: commit abc1234abc12 runs again (deployment ${rollback.uuid})`
    )
    expect(result.summary).toContain('rolled back: commit abc1234abc12 runs again')
    expectClean(result)
  })

  it('pins the earlier commit for one deploy on a server without the rollback route', async () => {
    const server = await deployedBefore({ version: '4.2' })
    const result = await run(server, { 'rollback-on-failure': 'true' })

    expect(result.code).toBe(1)
    const [, , rollback] = server.deployments()
    expect(rollback).toMatchObject({ rollback: false, commit: EARLIER, status: 'finished' })
    expect(patches(server)).toEqual([{ git_commit_sha: EARLIER }, { git_commit_sha: 'HEAD' }])
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
    expect(result.outputs['rolled-back']).toBe('true')
  })

  it("puts back the application's own commit, not another run's pin read before the deploy", async () => {
    const server = await deployedBefore({ version: '4.2' })
    // Another run's pin is on when this run reads the application; that run puts it back once
    // this run's deployment is queued.
    const theirs = '0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b'
    const setPin = (sha: string): Promise<Response> =>
      fetch(`${server.url}/api/v1/applications/${APP.uuid}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ git_commit_sha: sha })
      })
    await setPin(theirs)
    const result = run(server, { 'rollback-on-failure': 'true' })
    await until(() => server.deployments().length === 2)
    await setPin('HEAD')
    const { code, outputs } = await result

    expect(code).toBe(1)
    const [, , rollback] = server.deployments()
    expect(rollback).toMatchObject({ commit: EARLIER, status: 'finished' })
    expect(patches(server)).toEqual([{ git_commit_sha: EARLIER }, { git_commit_sha: 'HEAD' }])
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
    expect(outputs['rolled-back']).toBe('true')
  })

  /** A Docker-image app whose container runs 1.0, deployed before the run; the next one fails. */
  async function ranBefore(...more: Scenario[]): Promise<FakeCoolify> {
    const server = await start({
      apps: [{ ...IMAGE_APP, scenarios: [quick(), build('failed'), ...more, quick()] }]
    })
    await startElsewhere(server)
    await until(() => server.deployments()[0]?.status === 'finished')
    return server
  }

  function setTag(server: FakeCoolify, tag: string): Promise<Response> {
    return fetch(`${server.url}/api/v1/applications/${APP.uuid}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ docker_registry_image_tag: tag })
    })
  }

  it('puts the earlier image tag back and deploys it', async () => {
    const server = await ranBefore()
    const result = await run(server, { 'image-tag': '2.0', 'rollback-on-failure': 'true' })

    expect(result.code).toBe(1)
    const [, failed, rollback] = server.deployments()
    expect(failed.imageTag).toBe('2.0')
    expect(rollback).toMatchObject({ imageTag: '1.0', force: true, status: 'finished' })
    expect(server.app(APP.uuid)?.imageTag).toBe('1.0')
    expect(result.outputs['rolled-back']).toBe('true')
    expect(JSON.parse(result.outputs.deployments)).toEqual([
      expect.objectContaining({ status: 'failed', image_tag: '2.0', rolled_back: true })
    ])
    expect(errorLines(result.stdout)[0]).toContain('rolled back: image tag 1.0 runs again')
  })

  it('takes the tag that ran from the history when Coolify names no current image', async () => {
    // Without "consistent container name" (off by default) `docker inspect <uuid>` finds nothing.
    const server = await ranBefore()
    const images = await fetch(`${server.url}/api/v1/applications/${APP.uuid}/rollback-images`, {
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' }
    })
    expect(((await images.json()) as { current: unknown }).current).toBeNull()

    const result = await run(server, { 'image-tag': '2.0', 'rollback-on-failure': 'true' })

    expect(result.code).toBe(1)
    expect(server.deployments()[2]).toMatchObject({ imageTag: '1.0', status: 'finished' })
    expect(result.stdout).not.toContain('no earlier version is known')
    expect(result.outputs['rolled-back']).toBe('true')
  })

  it('goes back to the tag that ran, not to one an earlier failed deploy left set', async () => {
    const server = await ranBefore(build('failed'))
    // An earlier run set 2.0, which failed: the container still runs 1.0.
    await setTag(server, '2.0')
    await startElsewhere(server)
    await until(() => server.deployments()[1]?.status === 'failed')

    const result = await run(server, { 'image-tag': '3.0', 'rollback-on-failure': 'true' })

    expect(result.code).toBe(1)
    const [, , failed, rollback] = server.deployments()
    expect(failed.imageTag).toBe('3.0')
    expect(rollback).toMatchObject({ imageTag: '1.0', status: 'finished' })
    expect(server.app(APP.uuid)?.imageTag).toBe('1.0')
    expect(result.outputs['rolled-back']).toBe('true')
  })

  it('does not redeploy the tag that just failed and call it a rollback', async () => {
    const server = await ranBefore()
    const result = await run(server, { 'rollback-on-failure': 'true' })

    expect(result.code).toBe(1)
    expect(server.deployments()).toHaveLength(2)
    expect(result.outputs['rolled-back']).not.toBe('true')
    expect(result.stdout).toContain(
      'nothing to roll back to: image tag 1.0, which failed, is what ran before'
    )
  })

  it('rolls back only the application that failed, of several', async () => {
    const api = { uuid: 'api0app0uuid0000000002', name: 'api', fqdn: 'https://api.example.com' }
    const server = await start({
      apps: [
        { ...APP, scenarios: [earlier, broken, quick()] },
        { ...api, scenarios: [quick()] }
      ]
    })
    await startElsewhere(server)
    await until(() => server.deployments()[0]?.status === 'finished')
    const result = await run(server, {
      'app-uuid': `${APP.uuid} ${api.uuid}`,
      commit: SHA,
      'rollback-on-failure': 'true'
    })

    expect(result.code).toBe(1)
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
    expect(server.app(api.uuid)?.gitCommitSha).toBe('HEAD')
    const records = JSON.parse(result.outputs.deployments)
    expect(records).toEqual([
      expect.objectContaining({ name: 'web', status: 'failed', commit: SHA, rolled_back: true }),
      expect.objectContaining({ name: 'api', status: 'finished', commit: SHA })
    ])
    expect(records[1].rolled_back).toBeUndefined()
    const rollbacks = server.deployments().filter(deployment => deployment.rollback)
    expect(rollbacks).toEqual([expect.objectContaining({ appUuid: APP.uuid, commit: EARLIER })])
    expect(result.summary).toContain('rolled back: commit abc1234abc12 runs again')
  })
})
