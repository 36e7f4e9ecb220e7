/**
 * What the main step leaves for the post step, and the one outcome every reporter reads: the post
 * step stops only what this run started, a commit pin the main step could not put back is never
 * dropped from the saved state, and a failure after the deployments were queued ends the same way
 * in the outputs, the exit code and the GitHub deployment; the GitHub deployment and pull request
 * comment the main step could not finish, the post step finishes. Each runs the bundle as the
 * runner does, against the fake Coolify (and the fake GitHub).
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FakeApp, FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { startFakeGitHub, type FakeGitHub } from '../test/fake-github/index.js'
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
  inputsFor,
  requestLines,
  startElsewhere,
  TOKEN
} from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest(() => ({
  abilities: ['deploy', 'read', 'read:sensitive', 'write']
}))
const API = { uuid: 'api0app0uuid0000000002', name: 'api', fqdn: 'https://api.example.com' }
const SHA = '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c'
const GITHUB_TOKEN = 'ghs_fake-github-token-5678'
const IMAGE_APP: FakeApp = {
  ...APP,
  buildPack: 'dockerimage',
  image: { name: 'ghcr.io/acme/web', tag: '1.0' },
  scenarios: [quick()]
}

let github: FakeGitHub | undefined
afterEach(async () => {
  await github?.close()
  github = undefined
})

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

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise(resolve => setTimeout(resolve, 10))
}

function runPost(server: FakeCoolify, state: Record<string, string>, inputs = {}) {
  return runAction({ entry: 'post', inputs: inputsFor(server, inputs), state })
}

function cancels(server: FakeCoolify): string[] {
  return requestLines(actionRequests(server)).filter(line => line.endsWith('/cancel'))
}

function expectClean(result: RunResult): void {
  expectNoStackTrace(result.stderr)
  expectNoSecrets(result.stdout + result.stderr + result.summary, [TOKEN, GITHUB_TOKEN])
}

describe('the post step after a main step killed outright', () => {
  // Guards: the post step cancels the deployments this run started, by their uuids, and nothing
  // else; not every deployment of the applications that is under way near the trigger's time.
  it('cancels its own deployment and leaves one started elsewhere after its trigger running', async () => {
    // Each deploy builds another commit, so Coolify queues the second one beside the first.
    const server = await start({
      apps: [
        {
          ...APP,
          scenarios: [
            { ...endless(), commit: 'aaaa1111' },
            { ...endless(), commit: 'bbbb2222' }
          ]
        }
      ]
    })
    const inputs = { timeout: '30s' }
    let other: string | undefined
    let pushed = false
    // While its build runs, a push starts another deployment of the app (a webhook); then the
    // runner kills the main step.
    const main = await runAction({
      inputs: inputsFor(server, inputs),
      killAfterMs: 20_000,
      onStdout: (stdout, child) => {
        if (pushed || !buildLogLines(stdout).includes('building...')) return
        pushed = true
        void startElsewhere(server)
          .then(uuid => (other = uuid))
          .finally(() => child.kill('SIGKILL'))
      }
    })

    expect(main.signal).toBe('SIGKILL')
    expect(other).toBeDefined()
    const [ours, theirs] = server.deployments()
    expect(theirs.uuid).toBe(other)
    expect(theirs.createdAt).toBeGreaterThan(ours.createdAt)
    expect(cancels(server)).toEqual([])

    const post = await runPost(server, main.state, inputs)

    expect(post.code).toBe(0)
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${ours.uuid}/cancel`])
    const after = server.deployments()
    expect(after.find(deployment => deployment.uuid === ours.uuid)?.status).toBe(
      'cancelled-by-user'
    )
    expect(['queued', 'in_progress']).toContain(
      after.find(deployment => deployment.uuid === other)?.status
    )
    expectClean(post)
  })
})

describe('the GitHub deployment and comment the main step could not finish', () => {
  const PR = 7

  /** A pull_request event, as the runner gives it to a workflow on `pull_request`. */
  function pullRequestEnv(): Record<string, string> {
    const path = join(tmpdir(), `saved-state-event-${process.pid}.json`)
    writeFileSync(
      path,
      JSON.stringify({ number: PR, pull_request: { number: PR, head: { sha: SHA } } })
    )
    return {
      GITHUB_API_URL: github!.url,
      GITHUB_EVENT_PATH: path,
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_WORKFLOW: 'Preview'
    }
  }

  // Guards: Forgejo and Gitea kill the main step without grace; the post step then says on the
  // pull request and in the GitHub deployment that the run stopped, rather than leaving both
  // "in progress" for good. The comment gets no log and no table.
  it('are finished by the post step: the deployment in error, the comment saying the run stopped', async () => {
    github = await startFakeGitHub()
    const server = await start({ apps: [{ ...APP, previews: [PR], scenarios: [endless()] }] })
    const inputs = {
      pr: String(PR),
      environment: 'preview-7',
      'github-token': GITHUB_TOKEN,
      'cancel-on-abort': 'false'
    }
    const env = pullRequestEnv()
    let killed = false
    const main = await runAction({
      inputs: inputsFor(server, inputs),
      env,
      killAfterMs: 20_000,
      onStdout: (stdout, child) => {
        if (killed || !buildLogLines(stdout).includes('building...')) return
        killed = true
        // Once GitHub shows the run under way.
        void until(() => github!.comments(PR).length === 1).then(() => child.kill('SIGKILL'))
      }
    })

    expect(main.signal).toBe('SIGKILL')
    const [deployment] = github.deployments()
    expect(deployment.statuses.map(status => status.state)).toEqual(['in_progress'])
    expect(github.comments(PR)[0].body).toMatch(/Coolify preview of #7: (queued|in progress)/)

    const post = await runAction({
      entry: 'post',
      inputs: inputsFor(server, inputs),
      env,
      state: main.state
    })

    expect(post.code).toBe(0)
    expect(github.deployments()[0].statuses.at(-1)).toMatchObject({
      state: 'error',
      description: expect.stringContaining('stopped before it reported')
    })
    const comments = github.comments(PR)
    expect(comments).toHaveLength(1)
    const body = comments[0].body
    expect(body).toContain('⏹️ Coolify preview of #7: stopped')
    expect(body).toContain('The workflow run stopped before it reported the outcome here')
    expect(body).not.toContain('building...')
    expect(body).not.toContain('<table>')
    expectClean(post)
  })

  // Guards: what the main step finished is not touched again: the post step of a run that
  // reported its outcome sends GitHub nothing.
  it('are left as the main step finished them', async () => {
    github = await startFakeGitHub()
    const server = await start({ apps: [{ ...APP, previews: [PR], scenarios: [quick()] }] })
    const inputs = { pr: String(PR), environment: 'preview-7', 'github-token': GITHUB_TOKEN }
    const env = pullRequestEnv()
    const main = await runAction({ inputs: inputsFor(server, inputs), env })
    expect(main.code).toBe(0)
    const asked = github.requests.length

    const post = await runAction({
      entry: 'post',
      inputs: inputsFor(server, inputs),
      env,
      state: main.state
    })

    expect(post.code).toBe(0)
    expect(github.requests.slice(asked)).toEqual([])
    expect(github.deployments()[0].statuses.at(-1)?.state).toBe('success')
    expect(github.comments(PR)[0].body).toContain('Coolify preview of #7: finished')
  })

  // Guards: a cancel Coolify is slow to answer spends the step's whole grace, so the main step
  // exits with GitHub still showing the run under way; the post step finishes both.
  it('are finished by the post step when a slow cancel left the main step no time for GitHub', async () => {
    github = await startFakeGitHub()
    const server = await start({ apps: [{ ...APP, previews: [PR], scenarios: [endless()] }] })
    server.inject({ method: 'POST', path: /\/cancel$/, do: { delayMs: 9000 } })
    // Polled each second, a request waits 10 s for Coolify: longer than the cancel's grace.
    const inputs = {
      pr: String(PR),
      environment: 'preview-7',
      'github-token': GITHUB_TOKEN,
      'poll-interval': '1s'
    }
    const env = pullRequestEnv()
    let interrupted = false
    const main = await runAction({
      inputs: inputsFor(server, { ...inputs, timeout: '30s' }),
      env,
      killAfterMs: 20_000,
      onStdout: (stdout, child) => {
        if (interrupted || !buildLogLines(stdout).includes('building...')) return
        interrupted = true
        void until(() => github!.comments(PR).length === 1).then(() => child.kill('SIGINT'))
      }
    })

    // Ended by itself, its report to GitHub cut off by the cancel's grace.
    expect(main.signal).toBeNull()
    expect(main.outputs.status).toBe('cancelled')
    expect(github.deployments()[0].statuses.map(status => status.state)).toEqual(['in_progress'])

    const post = await runAction({
      entry: 'post',
      inputs: inputsFor(server, inputs),
      env,
      state: main.state
    })

    // The main step knew the outcome: the post step writes it, not that the run stopped.
    expect(post.code).toBe(0)
    expect(github.deployments()[0].statuses.at(-1)).toMatchObject({
      state: 'error',
      description: expect.stringContaining('web: deployment cancelled')
    })
    expect(github.comments(PR)[0].body).toContain('⏹️ Coolify preview of #7: cancelled')
  })

  // Guards: a 502 on the main step's last writes leaves both open, but the run finished and knew
  // how: the post step writes that outcome (success or failure), not "stopped".
  it.each([
    { scenario: quick(), status: 'finished', state: 'success', description: 'Deployed web' },
    {
      scenario: build('failed'),
      status: 'failed',
      state: 'failure',
      description: 'web: deployment failed'
    }
  ])(
    'are given the outcome ($status) by the post step when GitHub answered the final writes with 502s',
    async ({ scenario, status, state, description }) => {
      github = await startFakeGitHub({
        faults: [
          // `in_progress` goes through; the final status and the comment's edit meet 502s.
          { method: 'POST', path: /\/statuses$/, status: 502, skip: 1, times: Infinity },
          { method: 'PATCH', path: /\/issues\/comments\/\d+$/, status: 502, times: Infinity }
        ]
      })
      const server = await start({ apps: [{ ...APP, previews: [PR], scenarios: [scenario] }] })
      const inputs = { pr: String(PR), environment: 'preview-7', 'github-token': GITHUB_TOKEN }
      const env = pullRequestEnv()
      const main = await runAction({ inputs: inputsFor(server, inputs), env })

      expect(main.outputs.status).toBe(status)
      expect(github.deployments()[0].statuses.map(status => status.state)).toEqual(['in_progress'])
      expect(github.comments(PR)[0].body).toMatch(/Coolify preview of #7: (queued|in progress)/)
      github.recover()

      const post = await runAction({
        entry: 'post',
        inputs: inputsFor(server, inputs),
        env,
        state: main.state
      })

      expect(post.code).toBe(0)
      const statuses = github.deployments()[0].statuses
      expect(statuses.map(status => status.state)).toEqual(['in_progress', state])
      expect(statuses[1].description).toContain(description)
      expect(statuses[1].logUrl).toContain(`/deployment/${server.deployments()[0].uuid}`)
      const comments = github.comments(PR)
      expect(comments).toHaveLength(1)
      expect(comments[0].body).toContain(`Coolify preview of #7: ${status}`)
      expect(comments[0].body).toContain('<table>')
      expect(comments[0].body).not.toContain('stopped')
      expectClean(post)
    }
  )
})

describe('the outcome saved for the post step', () => {
  // Guards: the runner hands saved state to the post step in an environment variable (Windows
  // caps one at 32,767 characters): a comment too long to save is saved as its heading and a link
  // to the run, and the post step still writes the outcome.
  it('is the heading alone when the comment is too long to save', async () => {
    const PR = 7
    const path = join(tmpdir(), `saved-state-long-${process.pid}.json`)
    writeFileSync(
      path,
      JSON.stringify({ number: PR, pull_request: { number: PR, head: { sha: SHA } } })
    )
    github = await startFakeGitHub({
      faults: [
        { method: 'POST', path: /\/statuses$/, status: 502, skip: 1, times: Infinity },
        { method: 'PATCH', path: /\/issues\/comments\/\d+$/, status: 502, times: Infinity }
      ]
    })
    // Each stderr line is quoted whole up to 1,000 characters, and its quotes double in JSON.
    const noisy = Array.from({ length: 20 }, (_, i) => ({
      output: `npm ERR! ${i} ${'"'.repeat(1000)}`,
      type: 'stderr' as const
    }))
    const failed: Scenario = {
      steps: [
        { at: 0, status: 'queued' },
        { at: 40, status: 'in_progress', lines: noisy },
        { at: 300, status: 'failed' }
      ]
    }
    const server = await start({ apps: [{ ...APP, previews: [PR], scenarios: [failed] }] })
    const inputs = { pr: String(PR), environment: 'preview-7', 'github-token': GITHUB_TOKEN }
    const env = {
      GITHUB_API_URL: github.url,
      GITHUB_EVENT_PATH: path,
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_WORKFLOW: 'Preview'
    }
    const main = await runAction({ inputs: inputsFor(server, inputs), env })

    expect(main.outputs.status).toBe('failed')
    expect(main.state.github.length).toBeLessThan(32_767)
    github.recover()
    const post = await runAction({
      entry: 'post',
      inputs: inputsFor(server, inputs),
      env,
      state: main.state
    })

    expect(post.code).toBe(0)
    expect(github.deployments()[0].statuses.at(-1)?.state).toBe('failure')
    const [comment] = github.comments(PR)
    expect(comment.body).toContain('❌ Coolify preview of #7: failed')
    expect(comment.body).toContain('The details are in <a href=')
    expect(comment.body).not.toContain('npm ERR!')
    expectClean(post)
  })
})

describe('saved commit pins', () => {
  // Guards: a pin the main step could not put back stays in the saved state when pins are saved
  // again later (here by a rollback that pins the earlier commit for one deploy), so that the post
  // step puts it back. Today the rollback's save overwrites the whole key and the pin is lost.
  it('are put back by the post step when the main step could not, after a rollback pinned again', async () => {
    const earlier: Scenario = { ...quick(), commit: 'abc1234abc1234abc1234abc1234abc1234abc12' }
    const broken: Scenario = { ...build('failed'), commit: 'def5678' }
    // A server without the rollback route: the rollback pins abc1234 on web for one deploy.
    const server = await start({
      version: '4.2',
      apps: [
        { ...APP, scenarios: [earlier, broken, quick()] },
        { ...API, scenarios: [quick()] }
      ]
    })
    await startElsewhere(server)
    await until(() => server.deployments()[0]?.status === 'finished')
    // api's pin goes through; the PATCH that puts it back fails, Coolify asking to come back
    // later than the step can wait. Once only: the post step finds Coolify answering again.
    server.inject({
      method: 'PATCH',
      path: `/applications/${API.uuid}`,
      skip: 1,
      times: 1,
      do: {
        status: 503,
        body: { message: 'Service Unavailable' },
        headers: { 'Retry-After': '120' }
      }
    })
    // The restore waits for Coolify until the step's time is up: a short one.
    const inputs = {
      'app-uuid': `${APP.uuid} ${API.uuid}`,
      commit: SHA,
      'rollback-on-failure': 'true',
      timeout: '8s'
    }

    const main = await runAction({ inputs: inputsFor(server, inputs) })

    // The scenario: web failed and was rolled back through a pin of its own (no rollback route).
    expect(main.code).toBe(1)
    expect(main.outputs['rolled-back']).toBe('true')
    const rollback = server.deployments().at(-1)
    expect(rollback).toMatchObject({
      appUuid: APP.uuid,
      rollback: false,
      commit: 'abc1234abc1234abc1234abc1234abc1234abc12',
      status: 'finished'
    })
    // api's restore met the 503 (whatever the main step then did about it).
    const refused = actionRequests(server).filter(request => request.fault === 'status 503')
    expect(requestLines(refused)).toEqual([`PATCH /api/v1/applications/${API.uuid}`])

    const post = await runPost(server, main.state, inputs)

    expect(post.code).toBe(0)
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
    expect(server.app(API.uuid)?.gitCommitSha).toBe('HEAD')
    const lastPatch = actionRequests(server)
      .filter(request => request.method === 'PATCH' && request.path.endsWith(API.uuid))
      .at(-1)
    expect(JSON.parse(lastPatch!.body)).toEqual({ git_commit_sha: 'HEAD' })
    expectClean(post)
  })
})

describe('one outcome for every reporter', () => {
  // Guards: a failure after the deployments were queued (here: the deployment of the new image
  // tag, queued after one of the old tag already running, is refused) ends the step failed in
  // the exit code, the outputs and the GitHub deployment alike, never left `queued`/in progress.
  it('fails the outputs and the GitHub deployment when the image tag cannot be deployed after the trigger', async () => {
    github = await startFakeGitHub()
    const server = await start({ apps: [{ ...IMAGE_APP, scenarios: [quick(4000), quick()] }] })
    // A deployment of the old tag is under way: the trigger joins it, and a second deploy of the
    // new tag is needed after it. Coolify refuses that one.
    await startElsewhere(server)
    await until(() => server.deployments()[0]?.imageTag !== undefined)
    server.inject({
      method: 'POST',
      path: '/deploy',
      skip: 1,
      do: { status: 400, body: { message: 'x' } }
    })

    const result = await runAction({
      inputs: inputsFor(server, {
        'image-tag': '2.0',
        environment: 'production',
        'github-token': GITHUB_TOKEN
      }),
      env: { GITHUB_API_URL: github.url }
    })

    expect(result.code).toBe(1)
    // The deploy of the new tag after the old one was asked for, and refused.
    const refused = actionRequests(server).filter(request => request.fault === 'status 400')
    expect(requestLines(refused)).toEqual(['POST /api/v1/deploy'])
    expect(errorLines(result.stdout)).not.toEqual([])
    expect(result.outputs.status).toBe('failed')
    expect(JSON.parse(result.outputs.deployments).map((d: { status: string }) => d.status)).toEqual(
      ['failed']
    )
    const [deployment] = github.deployments()
    expect(deployment.environment).toBe('production')
    expect(['failure', 'error']).toContain(deployment.statuses.at(-1)?.state)
    expectClean(result)
  })
})
