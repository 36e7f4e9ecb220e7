/**
 * The bundle under a Forgejo (or Gitea) runner, as their runners run GitHub-format actions: on the
 * job image's `node` (Node 20 in Forgejo's default image: the oldest version package.json's
 * `engines` allows), with FORGEJO_ACTIONS and GITEA_ACTIONS set, GITHUB_API_URL at the instance's
 * API (issue comments at GitHub's paths, no deployments API), and a cancel that kills the main
 * step outright (no SIGINT, no grace) before the post step runs — where `cancelled()` is never true.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FakeCoolify } from '../test/fake-coolify/index.js'
import { startFakeGitHub, type FakeGitHub } from '../test/fake-github/index.js'
import { pullRequestEventEnv } from '../test/support/events.js'
import { findNode, oldestNode } from '../test/support/node.js'
import { PROJECT, runAction, type RunOptions, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  chatty,
  COLLECT_GARBAGE,
  endless,
  expectNoSecrets,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  inputsFor,
  requestLines,
  TOKEN
} from '../test/support/scenarios.js'

const JOB_TOKEN = 'forgejo-job-token-5678'
const PR = 7
const HEAD = 'fedcba9876543210fedcba9876543210fedcba98'
const SHA = '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c'

const MINIMUM_NODE = oldestNode()

let forgejo: FakeGitHub | undefined
afterEach(async () => {
  await forgejo?.close()
  forgejo = undefined
})

const start = fakeCoolifyPerTest(() => ({
  abilities: ['deploy', 'read', 'read:sensitive', 'write'],
  apps: [{ ...APP, previews: [PR], coolifyJob: true, scenarios: [build('finished')] }]
}))

/** The step as Forgejo's runner starts it: its Node, its variables, its API. */
async function runOnForgejo(
  server: FakeCoolify,
  inputs: Record<string, string>,
  options: Partial<RunOptions> = {}
): Promise<RunResult> {
  forgejo ??= await startFakeGitHub({ forgejo: true })
  return runAction({
    node: findNode(MINIMUM_NODE),
    inputs: inputsFor(server, { 'github-token': JOB_TOKEN, timeout: '30s', ...inputs }),
    env: {
      FORGEJO_ACTIONS: 'true',
      GITEA_ACTIONS: 'true',
      GITHUB_API_URL: forgejo.url,
      GITHUB_SERVER_URL: forgejo.url.replace(/\/api\/v1$/, ''),
      ...pullRequestEventEnv({ number: PR, headRef: 'feature', headSha: HEAD }),
      GITHUB_WORKFLOW: 'Preview'
    },
    ...options
  })
}

/** Kills the main step with SIGKILL once `when` holds, as Forgejo's runner cancels a job. */
function killWhen(when: () => boolean): Partial<RunOptions> {
  let sent = false
  return {
    killAfterMs: 20_000,
    onStdout: (_stdout, child: ChildProcess) => {
      const check = (): void => {
        if (sent || child.exitCode !== null || child.signalCode !== null) return
        if (!when()) return void setTimeout(check, 5)
        sent = true
        child.kill('SIGKILL')
      }
      check()
    }
  }
}

function cancels(server: FakeCoolify): string[] {
  return requestLines(actionRequests(server)).filter(line => line.endsWith('/cancel'))
}

function annotations(stdout: string, kind: 'notice' | 'warning' | 'error'): string[] {
  return stdout.split('\n').filter(line => line.startsWith(`::${kind}`))
}

function expectClean(result: RunResult): void {
  expectNoStackTrace(result.stderr)
  expectNoSecrets(result.stdout + result.stderr, [TOKEN, JOB_TOKEN])
}

describe('on a Forgejo runner', () => {
  it(`runs on Node ${MINIMUM_NODE}, the oldest package.json allows`, () => {
    const version = readFileSync(join(PROJECT, 'package.json'), 'utf8')
    // undici 7, the transport, runs on 20.18.1 and later.
    expect(JSON.parse(version).engines.node).toBe(`>=${MINIMUM_NODE}.18.1`)
    expect(MINIMUM_NODE).toBeLessThanOrEqual(20)
  })

  it('deploys the preview, comments on the pull request and says once there is no deployments API', async () => {
    const server = await start()
    const result = await runOnForgejo(server, { pr: String(PR), environment: 'preview' })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(annotations(result.stdout, 'notice')).toEqual([
      '::notice::Forgejo has no deployments API: environment "preview" is not recorded there. This does not change the deploy.'
    ])
    expect(annotations(result.stdout, 'warning')).toEqual([])
    // One try at the deployments API, then none: no status is sent to a deployment never made.
    const asked = forgejo!.requests.filter(request => /\/deployments/.test(request.path))
    expect(asked.map(request => `${request.method} ${request.path}`)).toEqual([
      'POST /api/v1/repos/octo/app/deployments'
    ])
    // The sticky comment, written through the issue-comment API, with the job's token.
    const [comment] = forgejo!.comments(PR)
    expect(forgejo!.comments(PR)).toHaveLength(1)
    expect(comment.login).toBe('forgejo-actions')
    expect(comment.body).toContain('Coolify preview of #7: finished')
    expect(comment.body).toContain('https://7.web.example.com')
    const commentRequest = forgejo!.requests.find(request => request.method === 'POST')!
    expect(commentRequest.headers.authorization).toBe(`token ${JOB_TOKEN}`)
    expectClean(result)
  })

  it('ends at `timeout` however often garbage is collected', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [chatty()] }] })
    const result = await runOnForgejo(
      server,
      { timeout: '3s' },
      { nodeArgs: COLLECT_GARBAGE, killAfterMs: 30_000 }
    )

    expect(result.signal).toBeNull()
    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('timeout')
    expect(server.deployments()[0].status).toBe('cancelled-by-user')
    expectClean(result)
  })

  it('updates its comment in place on the next run', async () => {
    const server = await start()
    await runOnForgejo(server, { pr: String(PR) })
    const second = await runOnForgejo(server, { pr: String(PR) })

    expect(second.code).toBe(0)
    expect(forgejo!.comments(PR)).toHaveLength(1)
    expect(forgejo!.requests.filter(request => request.method === 'PATCH')).not.toHaveLength(0)
  })

  it('says the same once when delete-preview finds no deployments API', async () => {
    const server = await start()
    const result = await runOnForgejo(server, {
      pr: String(PR),
      environment: 'preview',
      'delete-preview': 'true'
    })

    expect(result.code).toBe(0)
    expect(annotations(result.stdout, 'notice')).toEqual([
      '::notice::Forgejo has no deployments API: environment "preview" is not recorded there. This does not change the deploy.'
    ])
    expect(annotations(result.stdout, 'warning')).toEqual([])
    expect(server.app(APP.uuid)!.previews).toEqual([])
  })
})

describe("the comment's link to the workflow run", () => {
  /** The comment's footer link, as written. */
  function runLink(): string | undefined {
    return /Updated by <a href="([^"]+)">/.exec(forgejo!.comments(PR)[0]?.body ?? '')?.[1]
  }

  /** Gitea's runner: GITEA_ACTIONS alone, and an API that answers `/version` with `version`. */
  async function runOnGitea(server: FakeCoolify, version: string): Promise<RunResult> {
    forgejo = await startFakeGitHub({ forgejo: true, version })
    const env = { FORGEJO_ACTIONS: '', GITEA_ACTIONS: 'true' }
    return runOnForgejo(server, { pr: String(PR) }, { env: { ...giteaEnv(), ...env } })
  }

  function giteaEnv(): Record<string, string> {
    return {
      GITHUB_API_URL: forgejo!.url,
      GITHUB_SERVER_URL: forgejo!.url.replace(/\/api\/v1$/, ''),
      ...pullRequestEventEnv({ number: PR, headRef: 'feature', headSha: HEAD }),
      GITHUB_WORKFLOW: 'Preview'
    }
  }

  // Guards: Forgejo's web UI addresses a run by its number in the repository, not by its id.
  it('names the run by its number on Forgejo', async () => {
    const server = await start()
    const result = await runOnForgejo(server, { pr: String(PR) })

    expect(result.code).toBe(0)
    const web = forgejo!.url.replace(/\/api\/v1$/, '')
    expect(runLink()).toBe(`${web}/octo/app/actions/runs/3`)
    // Forgejo's runner says it is Forgejo: its version is not asked.
    expect(forgejo!.requests.filter(request => request.path.endsWith('/version'))).toEqual([])
  })

  it('names the run by its number on Gitea up to 1.25', async () => {
    const server = await start()
    const result = await runOnGitea(server, '1.25.4')

    expect(result.code).toBe(0)
    expect(runLink()).toMatch(/\/octo\/app\/actions\/runs\/3$/)
  })

  // Guards: Gitea 1.26 moved its run pages from numbers to ids.
  it('names the run by its id on Gitea 1.26 and later', async () => {
    const server = await start()
    const result = await runOnGitea(server, '1.26.1')

    expect(result.code).toBe(0)
    expect(runLink()).toMatch(/\/octo\/app\/actions\/runs\/42$/)
  })
})

describe('a Forgejo cancel: the main step killed outright, then the post step', () => {
  it('cancels the deployment the killed step left building', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [endless()] }] })
    const main = await runOnForgejo(
      server,
      {},
      killWhen(() => server.deployments()[0]?.status === 'in_progress')
    )
    const [deployment] = server.deployments()

    expect(main.signal).toBe('SIGKILL')
    expect(deployment.status).toBe('in_progress')
    expect(cancels(server)).toEqual([])

    // Forgejo never reports the job cancelled: the post step runs on `always()`.
    const post = await runOnForgejo(
      server,
      {},
      { entry: 'post', job: 'failure', state: main.state }
    )
    expect(post.code).toBe(0)
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${deployment.uuid}/cancel`])
    expect(server.deployments()[0].status).toBe('cancelled-by-user')
    expectClean(post)
  })

  // Guards: the pull request comment of a killed step says the run stopped, not "in progress"
  // for good.
  it('says in the pull request comment that the run stopped', async () => {
    const server = await start({ apps: [{ ...APP, previews: [PR], scenarios: [endless()] }] })
    forgejo = await startFakeGitHub({ forgejo: true })
    const main = await runOnForgejo(
      server,
      { pr: String(PR) },
      killWhen(() => forgejo!.comments(PR).length === 1)
    )

    expect(main.signal).toBe('SIGKILL')
    expect(forgejo.comments(PR)[0].body).toMatch(/Coolify preview of #7: (queued|in progress)/)

    const post = await runOnForgejo(
      server,
      { pr: String(PR) },
      { entry: 'post', job: 'failure', state: main.state }
    )
    expect(post.code).toBe(0)
    expect(server.deployments()[0].status).toBe('cancelled-by-user')
    expect(forgejo.comments(PR)).toHaveLength(1)
    expect(forgejo.comments(PR)[0].body).toContain('Coolify preview of #7: stopped')
    expectClean(post)
  })

  it('puts the pin back and cancels what a trigger without an answer started', async () => {
    const server = await start({
      apps: [{ ...APP, coolifyJob: true, scenarios: [endless()] }]
    })
    // Coolify queues the deployment; its answer never reaches the step before the kill.
    server.inject({ method: 'POST', path: '/deploy', do: 'lost' })
    const main = await runOnForgejo(
      server,
      { commit: SHA },
      killWhen(() => server.deployments().length > 0)
    )

    expect(main.signal).toBe('SIGKILL')
    expect(server.app(APP.uuid)?.gitCommitSha).toBe(SHA)

    const post = await runOnForgejo(
      server,
      { commit: SHA },
      { entry: 'post', job: 'failure', state: main.state }
    )
    expect(post.code).toBe(0)
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
    const [deployment] = server.deployments()
    expect(deployment.commit).toBe(SHA)
    expect(cancels(server)).toEqual([`POST /api/v1/deployments/${deployment.uuid}/cancel`])
    expect(deployment.status).toBe('cancelled-by-user')
    expectClean(post)
  })
})
