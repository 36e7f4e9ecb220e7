/**
 * Cancelling a workflow run, as GitHub's runner does it: SIGINT to the main step (SIGTERM 7.5 s
 * later, SIGKILL 2.5 s after that), then the post step with the state the main step saved. What
 * the action started in Coolify must not outlive the run.
 */
import { describe, expect, it } from '@jest/globals'
import type { FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { buildLogLines, runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  fakeCoolifyPerTest,
  inputsFor,
  APP,
  build,
  endless,
  errorLines,
  expectNoSecrets,
  expectNoStackTrace,
  requestLines,
  TOKEN,
  savedRollouts,
  savedState,
  startElsewhere
} from '../test/support/scenarios.js'

/** The runner's grace time between SIGINT and SIGTERM, and between SIGTERM and SIGKILL. */
const GRACE_MS = 7500
const TERM_GRACE_MS = 2500

const start = fakeCoolifyPerTest(() => ({ apps: [{ ...APP, scenarios: [endless()] }] }))

/** Inputs for an endless build, with a timeout it never reaches: only a signal ends it. */
const untilSignal = (server: FakeCoolify, extra: Record<string, string> = {}) =>
  inputsFor(server, { timeout: '30s', ...extra })

/**
 * Runs the main step and sends `signal` once `when` holds for what it printed. After a SIGINT it
 * goes on as the runner does (SIGTERM after the grace time, SIGKILL after that); resolves with the
 * result and every signal sent before the step exited.
 */
async function runAndSignal(
  server: FakeCoolify,
  signal: NodeJS.Signals,
  when: (stdout: string, server: FakeCoolify) => boolean,
  inputs: Record<string, string> = {}
): Promise<RunResult & { signalsSent: NodeJS.Signals[] }> {
  const signalsSent: NodeJS.Signals[] = []
  const escalations: NodeJS.Timeout[] = []
  let printed = ''
  let watching = false
  const result = await runAction({
    inputs: untilSignal(server, inputs),
    killAfterMs: 60_000,
    onStdout: (stdout, child) => {
      printed = stdout
      if (watching) return
      watching = true
      const send = (sent: NodeJS.Signals): void => {
        if (child.exitCode !== null || child.signalCode !== null) return
        signalsSent.push(sent)
        child.kill(sent)
      }
      // Checked on output and on a timer: the moment may come while the step prints nothing.
      const check = (): void => {
        if (signalsSent.length > 0 || child.exitCode !== null || child.signalCode !== null) return
        if (!when(printed, server)) return void setTimeout(check, 5)
        send(signal)
        if (signal !== 'SIGINT') return
        escalations.push(setTimeout(() => send('SIGTERM'), GRACE_MS))
        escalations.push(setTimeout(() => send('SIGKILL'), GRACE_MS + TERM_GRACE_MS))
      }
      check()
    }
  })
  escalations.forEach(clearTimeout)
  expect(signalsSent[0]).toBe(signal)
  return { ...result, signalsSent }
}

/** Once Coolify has started the deployment (whether or not its answer came back). */
const deployed = (_stdout: string, server: FakeCoolify): boolean => server.deployments().length > 0

/** Once the build is under way: its second log line is printed. */
const building = (stdout: string): boolean => buildLogLines(stdout).includes('building...')

function runPost(server: FakeCoolify, state: Record<string, string>, inputs = {}) {
  return runAction({ entry: 'post', inputs: untilSignal(server, inputs), state })
}

function cancels(server: FakeCoolify): string[] {
  return requestLines(actionRequests(server)).filter(line => line.endsWith('/cancel'))
}

function expectQuietSuccess(post: RunResult): void {
  expect(post.code).toBe(0)
  expect(post.stdout).not.toMatch(/^::(warning|error)/m)
  expectNoStackTrace(post.stderr)
  expectNoSecrets(post.stdout + post.stderr, [TOKEN])
}

describe('a cancelled workflow run', () => {
  it('cancels the running deployment on SIGINT and exits before the runner escalates', async () => {
    const server = await start()
    const main = await runAndSignal(server, 'SIGINT', building)
    const [deployment] = server.deployments()

    expect(main.signal).toBeNull()
    expect(main.code).not.toBe(0)
    // Ended by itself, before the runner's SIGTERM.
    expect(main.signalsSent).toEqual(['SIGINT'])
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${deployment.uuid}/cancel`])
    expect(deployment.status).toBe('cancelled-by-user')
    expect(main.stdout).toContain(
      `The workflow run was cancelled: cancelling web (${deployment.uuid}) in Coolify`
    )
    expect(main.outputs.status).toBe('cancelled')
    // The lines before the cancel and those the cancel wrote, each once.
    expect(buildLogLines(main.stdout)).toEqual([
      'Starting deployment of web.',
      'building...',
      'Deployment cancelled by user via API.',
      'Deployment container stopped.'
    ])
    expect(errorLines(main.stdout).join('\n')).toContain('The workflow run was cancelled.')
    expectNoStackTrace(main.stderr)
    expectNoSecrets(main.stdout + main.stderr, [TOKEN])
    expect(savedRollouts(main.state)).toEqual({})

    // The post step, as the runner runs it after a cancelled main step: nothing is left to do.
    const before = server.requests.length
    const post = await runPost(server, main.state)
    expectQuietSuccess(post)
    expect(server.requests.slice(before)).toEqual([])
  })

  it('leaves the cancel to the post step when the main step is killed outright', async () => {
    const server = await start()
    const main = await runAndSignal(server, 'SIGKILL', building)
    const [deployment] = server.deployments()

    expect(main.signal).toBe('SIGKILL')
    expect(cancels(server)).toEqual([])
    expect(deployment.status).toBe('in_progress')
    // Saved the moment it was known, for the post step.
    expect(savedRollouts(main.state)).toEqual({
      [APP.uuid]: { name: 'web', running: [deployment.uuid] }
    })

    const post = await runPost(server, main.state)
    expectQuietSuccess(post)
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${deployment.uuid}/cancel`])
    expect(server.deployments()[0].status).toBe('cancelled-by-user')
    expect(post.stdout).toContain(`web: cancelled deployment ${deployment.uuid} in Coolify`)
  })

  it('cancels a deployment whose trigger got no answer before SIGINT came', async () => {
    const server = await start()
    // Coolify starts the deployment, but its answer to POST /deploy never comes back.
    server.inject({ method: 'POST', path: '/deploy', do: 'lost' })
    const main = await runAndSignal(server, 'SIGINT', deployed)
    const [deployment] = server.deployments()

    expect(main.code).not.toBe(0)
    // Ended by itself, before the runner's SIGTERM.
    expect(main.signalsSent).toEqual(['SIGINT'])
    // Found in the history by what was saved before the trigger went out, and cancelled.
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${deployment.uuid}/cancel`])
    expect(deployment.status).toBe('cancelled-by-user')
    expect(main.outputs.status).toBe('cancelled')
    expectNoStackTrace(main.stderr)

    const before = server.requests.length
    expectQuietSuccess(await runPost(server, main.state))
    expect(server.requests.slice(before)).toEqual([])
  })

  it('cancels the deployment a tag deploy with no answer started before SIGINT came', async () => {
    const server = await start({ apps: [{ ...APP, tags: ['prod'], scenarios: [endless()] }] })
    server.inject({ method: 'POST', path: '/deploy', do: 'lost' })
    const main = await runAndSignal(server, 'SIGINT', deployed, { 'app-uuid': '', tag: 'prod' })
    const [deployment] = server.deployments()

    expect(main.signalsSent).toEqual(['SIGINT'])
    // Found through the applications Coolify lists for the tag, and cancelled.
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${deployment.uuid}/cancel`])
    expect(deployment.status).toBe('cancelled-by-user')
    expect(main.outputs.status).toBe('cancelled')
    expectNoStackTrace(main.stderr)
  })

  it('leaves a deployment whose trigger got no answer to the post step when killed', async () => {
    const server = await start()
    server.inject({ method: 'POST', path: '/deploy', do: 'lost' })
    const main = await runAndSignal(server, 'SIGKILL', deployed)
    const [deployment] = server.deployments()

    expect(main.signal).toBe('SIGKILL')
    expect(deployment.status).not.toBe('cancelled-by-user')
    // What was about to be deployed, saved before the request went out.
    expect(savedRollouts(main.state)).toEqual({
      [APP.uuid]: { trigger: { at: expect.any(Number) } }
    })

    const post = await runPost(server, main.state)
    expectQuietSuccess(post)
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${deployment.uuid}/cancel`])
    expect(server.deployments()[0].status).toBe('cancelled-by-user')
  })

  it('leaves the deployment running with cancel-on-abort: false, and so does the post step', async () => {
    const server = await start()
    const inputs = { 'cancel-on-abort': 'false' }
    const main = await runAndSignal(server, 'SIGINT', building, inputs)

    expect(main.code).not.toBe(0)
    // Ended by itself, before the runner's SIGTERM.
    expect(main.signalsSent).toEqual(['SIGINT'])
    expect(main.stdout).toMatch(
      /::warning::Left running in Coolify \(cancel-on-abort is false\): web/
    )
    const post = await runPost(server, main.state, inputs)
    expectQuietSuccess(post)
    expect(cancels(server)).toEqual([])
    expect(server.deployments()[0].status).toBe('in_progress')
  })
})

describe('a cancel during a rollback', () => {
  const EARLIER = 'abc1234abc1234abc1234abc1234abc1234abc12'
  const earlier: Scenario = {
    commit: EARLIER,
    steps: [
      { at: 0, status: 'queued' },
      { at: 40, status: 'in_progress' },
      { at: 300, status: 'finished', lines: ['Rolling update completed.'] }
    ]
  }

  /** web ran EARLIER before the run; the run's deployment fails, and its rollback never ends. */
  async function failingWithEndlessRollback(): Promise<FakeCoolify> {
    const server = await start({
      apps: [{ ...APP, scenarios: [earlier, { ...build('failed'), commit: 'def5678' }, endless()] }]
    })
    await startElsewhere(server)
    while (server.deployments()[0]?.status !== 'finished') {
      await new Promise(resolve => setTimeout(resolve, 10))
    }
    return server
  }

  /** Once the rollback's build is under way in Coolify. */
  const rollingBack = (_stdout: string, server: FakeCoolify): boolean =>
    server.deployments()[2]?.status === 'in_progress'

  // Guards: cancelling a rollback would leave the application worse off; like one that outlasts
  // its time, it goes on in Coolify, and the log, the summary and the annotation say it started.
  it('leaves the rollback running on SIGTERM and says so', async () => {
    const server = await failingWithEndlessRollback()
    const main = await runAndSignal(server, 'SIGTERM', rollingBack, {
      'rollback-on-failure': 'true'
    })
    const [, failed, rollback] = server.deployments()

    expect(main.signalsSent).toEqual(['SIGTERM'])
    expect(main.code).not.toBe(0)
    expect(rollback.rollback).toBe(true)
    expect(cancels(server)).toEqual([])
    expect(rollback.status).toBe('in_progress')
    const left = `the rollback to commit abc1234abc12 (deployment ${rollback.uuid}) was started and is left running in Coolify, since the workflow run was cancelled`
    expect(main.stdout).toContain(`web: ${left}`)
    expect(main.summary).toContain(left)
    expect(errorLines(main.stdout).join('\n')).toContain(left)
    expect(main.outputs.status).toBe('failed')
    expect(JSON.parse(main.outputs.deployments)).toEqual([
      expect.objectContaining({ deployment_uuid: failed.uuid, status: 'failed' })
    ])
    expectNoStackTrace(main.stderr)
    expect(savedRollouts(main.state)).toEqual({})

    // Nor does the post step cancel it.
    expectQuietSuccess(await runPost(server, main.state))
    expect(cancels(server)).toEqual([])
  })

  // Guards: a main step killed outright (Forgejo and Gitea cancel so) leaves the rollback to the
  // post step, which leaves it running too.
  it('leaves the rollback running when the main step is killed outright', async () => {
    const server = await failingWithEndlessRollback()
    const main = await runAndSignal(server, 'SIGKILL', rollingBack, {
      'rollback-on-failure': 'true'
    })

    expect(main.signal).toBe('SIGKILL')
    expectQuietSuccess(await runPost(server, main.state))
    expect(cancels(server)).toEqual([])
    expect(server.deployments()[2].status).toBe('in_progress')
  })
})

describe('the post step after a main step that saw its deployment end', () => {
  it('does nothing after a finished deployment', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [build('finished')] }] })
    const main = await runAction({ inputs: untilSignal(server) })
    expect(main.code).toBe(0)
    expect(savedRollouts(main.state)).toEqual({})

    const before = server.requests.length
    const post = await runPost(server, main.state)
    expectQuietSuccess(post)
    expect(server.requests.slice(before)).toEqual([])
  })

  it('reads a listed deployment that has finished and leaves it alone', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [build('finished')] }] })
    const main = await runAction({ inputs: untilSignal(server) })
    const [deployment] = server.deployments()
    // As if the main step was killed after the end but before it cleared its list.
    const state = savedState({ [APP.uuid]: { name: 'web', running: [deployment.uuid] } })

    const post = await runPost(server, state)
    expect(main.code).toBe(0)
    expectQuietSuccess(post)
    expect(requestLines(actionRequests(server)).slice(-1)).toEqual([
      `GET /api/v1/deployments/${deployment.uuid}`
    ])
    expect(cancels(server)).toEqual([])
    expect(server.deployments()[0].status).toBe('finished')
  })

  it('treats a status it does not know as running, as the main step does, and cancels', async () => {
    const server = await start()
    const uuid = await startElsewhere(server)
    server.inject({
      method: 'GET',
      path: `/deployments/${uuid}`,
      do: { status: 200, body: { deployment_uuid: uuid, status: 'Building' } }
    })
    const state = savedState({ [APP.uuid]: { name: 'web', running: [uuid] } })

    const post = await runPost(server, state)
    expectQuietSuccess(post)
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${uuid}/cancel`])
    expect(server.deployments()[0].status).toBe('cancelled-by-user')
  })

  it('takes 400 "cannot be cancelled" (it ended meanwhile) as done', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [build('finished')] }] })
    await runAction({ inputs: untilSignal(server) })
    const [deployment] = server.deployments()
    // The post step reads it still running; by the time its cancel arrives, it has finished.
    server.inject({
      method: 'GET',
      path: `/deployments/${deployment.uuid}`,
      do: { status: 200, body: { deployment_uuid: deployment.uuid, status: 'in_progress' } }
    })
    const state = savedState({ [APP.uuid]: { name: 'web', running: [deployment.uuid] } })

    const post = await runPost(server, state)
    expectQuietSuccess(post)
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${deployment.uuid}/cancel`])
    expect(post.stdout).not.toContain('cancelled deployment')
    expect(server.deployments()[0].status).toBe('finished')
  })
})
