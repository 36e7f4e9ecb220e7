/**
 * Pull request previews through the bundled action, against the fake Coolify and a fake GitHub:
 * the preview's own URL, Docker-image previews made by tag, the sticky pull request comment, the
 * GitHub deployment of each preview, and removing a preview when its pull request closes.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { startFakeGitHub, type FakeGitHub } from '../test/fake-github/index.js'
import { runAction } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  errorLines,
  fakeCoolifyPerTest,
  inputsFor,
  requestLines,
  TOKEN
} from '../test/support/scenarios.js'

const GITHUB_TOKEN = 'ghs_fake-github-token-5678'
const PR = 7
const HEAD = 'fedcba9876543210fedcba9876543210fedcba98'
const WORKFLOW = 'Preview'
const MARKER = `<!-- deploy-to-coolify workflow=${WORKFLOW} resources=${APP.uuid} -->`

let github: FakeGitHub | undefined
afterEach(async () => {
  await github?.close()
  github = undefined
})

const start = fakeCoolifyPerTest(() => ({
  apps: [{ ...APP, previews: [PR], scenarios: [build('finished')] }]
}))

/** A pull_request event, as the runner gives it to a workflow on `pull_request`. */
function pullRequestEvent(): string {
  const path = join(tmpdir(), `preview-event-${process.pid}.json`)
  writeFileSync(
    path,
    JSON.stringify({ number: PR, pull_request: { number: PR, head: { sha: HEAD } } })
  )
  return path
}

function run(server: FakeCoolify, inputs: Record<string, string> = {}) {
  return runAction({
    inputs: inputsFor(server, { pr: String(PR), 'github-token': GITHUB_TOKEN, ...inputs }),
    env: {
      ...(github ? { GITHUB_API_URL: github.url } : {}),
      GITHUB_EVENT_PATH: pullRequestEvent(),
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_WORKFLOW: WORKFLOW
    }
  })
}

function warnings(stdout: string): string[] {
  return stdout.split('\n').filter(line => line.startsWith('::warning'))
}

describe("the preview's URL", () => {
  it('is the preview’s own address in the outputs, not production’s', async () => {
    const server = await start()
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.url).toBe('https://7.web.example.com')
    expect(JSON.parse(result.outputs.deployments)[0].url).toBe('https://7.web.example.com')
    expect(server.app(APP.uuid)!.previews[0].fqdn).toBe(result.outputs.url)
  })

  it("follows the app's template over its first domain, keeping scheme, port and path", async () => {
    const server = await start({
      apps: [
        {
          ...APP,
          fqdn: 'http://web.example.com:8080/app,https://www.example.com',
          previewUrlTemplate: 'pr-{{pr_id}}.preview.{{domain}}',
          previews: [PR],
          scenarios: [build('finished')]
        }
      ]
    })
    const result = await run(server)

    expect(result.outputs.url).toBe('http://pr-7.preview.web.example.com:8080/app')
    expect(server.app(APP.uuid)!.previews[0].fqdn).toBe(result.outputs.url)
  })

  it('is left empty when the template draws a random part Coolify does not tell', async () => {
    const server = await start({
      apps: [
        {
          ...APP,
          previewUrlTemplate: '{{random}}.{{domain}}',
          previews: [PR],
          scenarios: [build('finished')]
        }
      ]
    })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.url).toBe('')
  })
})

describe('previews that do not exist yet', () => {
  it('are made from the image tag for Docker-image applications', async () => {
    const server = await start({
      apps: [
        {
          ...APP,
          buildPack: 'dockerimage',
          image: { name: 'ghcr.io/octo/web', tag: 'latest' },
          scenarios: [build('finished')]
        }
      ]
    })
    const result = await run(server, { 'image-tag': 'pr-7' })

    expect(result.code).toBe(0)
    const deploy = actionRequests(server).find(request => request.path === '/api/v1/deploy')!
    expect(deploy.query).toMatchObject({ uuid: APP.uuid, pr: '7', docker_tag: 'pr-7' })
    // Production's image tag stays as it was: only the preview runs the new one.
    expect(requestLines(actionRequests(server))).not.toContain(
      `PATCH /api/v1/applications/${APP.uuid}`
    )
    expect(server.app(APP.uuid)!.imageTag).toBe('latest')
    expect(server.app(APP.uuid)!.previews).toEqual([
      { pr: PR, fqdn: 'https://7.web.example.com', imageTag: 'pr-7' }
    ])
    expect(server.deployments()[0].imageTag).toBe('pr-7')
    expect(result.outputs.url).toBe('https://7.web.example.com')
  })

  it('fail with how to enable them for a git application', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [build('finished')] }] })
    const result = await run(server, { pr: '5' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('failed')
    const [error] = errorLines(result.stdout)
    expect(error).toContain('Pull request 5 not found for this resource.')
    expect(error).toContain('Preview Deployments')
    expect(error).toContain('GitHub App')
  })
})

describe('the pull request comment', () => {
  it('is written on the first run and edited in place on the next', async () => {
    github = await startFakeGitHub()
    const server = await start()
    const first = await run(server)

    expect(first.code).toBe(0)
    const [comment] = github.comments(PR)
    expect(github.comments(PR)).toHaveLength(1)
    expect(comment.body.startsWith(`${MARKER}\n`)).toBe(true)
    const deployment = server.deployments()[0]
    expect(comment.body).toContain('✅ Coolify preview of #7: finished')
    expect(comment.body).toContain(
      '<a href="https://7.web.example.com">https://7.web.example.com</a>'
    )
    expect(comment.body).toContain('<code>abc1234</code>')
    expect(comment.body).toContain(
      'Updated by <a href="https://github.com/octo/app/actions/runs/42">Preview</a> at '
    )
    expect(comment.body).toMatch(
      new RegExp(`href="${server.url}/project/[^"]+/deployment/${deployment.uuid}"`)
    )
    // While building it said so: created with the status then, edited with the outcome.
    const writes = github.requests.filter(request => /\/comments/.test(request.path))
    expect(writes.map(request => request.method)).toEqual(['GET', 'POST', 'PATCH'])
    expect(String(writes[1].body.body)).toMatch(/Coolify preview of #7: (queued|in progress)/)

    const second = await run(server)
    expect(second.code).toBe(0)
    expect(github.comments(PR)).toHaveLength(1)
    expect(github.comments(PR)[0].id).toBe(comment.id)
    expect(github.comments(PR)[0].body).toContain(server.deployments()[1].uuid)
  })

  it('is found again past the first page of comments', async () => {
    const others = Array.from({ length: 120 }, (_, index) => ({ issue: PR, body: `LGTM ${index}` }))
    github = await startFakeGitHub({ comments: others })
    const server = await start()
    await run(server)
    await run(server)

    const mine = github.comments(PR).filter(comment => comment.body.startsWith(MARKER))
    expect(mine).toHaveLength(1)
    expect(github.comments(PR)).toHaveLength(121)
  })

  it('shows a failure’s last stderr lines collapsed, fenced so build output cannot break out', async () => {
    github = await startFakeGitHub()
    const failing: Scenario = {
      commit: 'abc1234',
      steps: [
        { at: 0, status: 'in_progress', lines: ['Starting deployment of web.'] },
        {
          at: 100,
          status: 'failed',
          lines: [
            { output: 'error: ``` </details> <img src=x onerror=alert(1)>', type: 'stderr' },
            { output: `leaked ${TOKEN}`, type: 'stderr' }
          ]
        }
      ]
    }
    const server = await start({ apps: [{ ...APP, previews: [PR], scenarios: [failing] }] })
    const result = await run(server)

    expect(result.code).toBe(1)
    const { body } = github.comments(PR)[0]
    expect(body).toContain('❌ Coolify preview of #7: failed')
    expect(body).toContain(
      '<details><summary>web: the last stderr lines</summary>\n\n' +
        '````text\nerror: ``` </details> <img src=x onerror=alert(1)>\nleaked ***\n````\n\n</details>'
    )
    expect(body).not.toContain(TOKEN)
  })

  it('is a warning without permission to comment, and the deploy still counts', async () => {
    github = await startFakeGitHub({ refuse: { status: 403, paths: /\/comments/ } })
    const server = await start()
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    const [warning, ...more] = warnings(result.stdout)
    expect(more).toEqual([])
    expect(warning).toContain('GitHub answered 403 "Resource not accessible by integration"')
    expect(warning).toContain('`permissions: pull-requests: write`')
    // Refused once, asked no more (after asking who the token is, which GitHub does not tell it).
    expect(github.requests.map(request => `${request.method} ${request.path}`)).toEqual([
      'GET /user',
      `GET /repos/octo/app/issues/${PR}/comments`
    ])
  })

  it('is never someone else’s comment that copies the marker: the action writes its own', async () => {
    // The marker is readable in any earlier comment; a commenter can post one that starts with it.
    const forged = `${MARKER}\n### ✅ Coolify preview of #7: finished <a href="https://evil.example">logs</a>`
    github = await startFakeGitHub({ comments: [{ issue: PR, body: forged, login: 'mallory' }] })
    const server = await start()
    await run(server)
    await run(server)

    const [theirs, ours, ...more] = github.comments(PR)
    expect(more).toEqual([])
    expect(theirs.body).toBe(forged)
    expect(ours.login).toBe('github-actions[bot]')
    expect(ours.body).toContain(server.deployments()[1].uuid)
    const edits = github.requests.filter(request => request.method === 'PATCH')
    expect(edits.map(request => request.path)).not.toContain(
      `/repos/octo/app/issues/comments/${theirs.id}`
    )
  })

  it('with a personal token, is the comment that token’s user wrote', async () => {
    const earlier = `${MARKER}\n### ✅ Coolify preview of #7: finished`
    github = await startFakeGitHub({
      user: 'deploy-bot',
      comments: [
        { issue: PR, body: earlier, login: 'github-actions[bot]' },
        { issue: PR, body: earlier, login: 'deploy-bot' }
      ]
    })
    const server = await start()
    await run(server)

    const [other, mine] = github.comments(PR)
    expect(github.comments(PR)).toHaveLength(2)
    expect(other.body).toBe(earlier)
    expect(mine.body).toContain(server.deployments()[0].uuid)
  })

  it('writes its own when GitHub refuses to edit a comment it took for its own, and blames no permission', async () => {
    // Another app's comment with the marker: GitHub does not tell an installation token which
    // app it is, and refuses the edit.
    const earlier = `${MARKER}\n### ✅ Coolify preview of #7: finished`
    github = await startFakeGitHub({
      comments: [{ issue: PR, body: earlier, login: 'other-app[bot]' }],
      refuse: { status: 403, paths: /^\/repos\/octo\/app\/issues\/comments\/1$/ }
    })
    const server = await start()
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(warnings(result.stdout)).toEqual([])
    const [theirs, ours, ...more] = github.comments(PR)
    expect(more).toEqual([])
    expect(theirs.body).toBe(earlier)
    expect(ours.login).toBe('github-actions[bot]')
    expect(ours.body).toContain('✅ Coolify preview of #7: finished')
  })

  it('replaces the last run’s outcome even when GitHub fails a call, or leaves one unanswered', async () => {
    // The last run's comment says it finished; this run fails, while GitHub has a bad moment.
    const earlier = `${MARKER}\n### ✅ Coolify preview of #7: finished`
    github = await startFakeGitHub({
      comments: [{ issue: PR, body: earlier, login: 'github-actions[bot]' }],
      faults: [
        { method: 'GET', path: /\/comments$/, status: 502 },
        { method: 'PATCH', path: /\/comments\/\d+$/, hang: true },
        { method: 'PATCH', path: /\/comments\/\d+$/, status: 503 }
      ]
    })
    const server = await start({ apps: [{ ...APP, previews: [PR], scenarios: [build('failed')] }] })
    const result = await run(server)

    expect(result.code).toBe(1)
    expect(github.comments(PR)).toHaveLength(1)
    expect(github.comments(PR)[0].body).toContain('❌ Coolify preview of #7: failed')
    expect(warnings(result.stdout)).toEqual([])
  }, 30_000)

  it('stays within the 65,536 characters GitHub takes, and within one summary, saying what was cut', async () => {
    github = await startFakeGitHub()
    const huge = (n: number): string => `${n} ${'x'.repeat(60_000)}`
    const failing: Scenario = {
      commit: 'abc1234',
      steps: [
        { at: 0, status: 'in_progress', lines: ['Starting deployment of web.'] },
        {
          at: 100,
          status: 'failed',
          lines: Array.from({ length: 20 }, (_, n) => ({
            output: huge(n),
            type: 'stderr' as const
          }))
        }
      ]
    }
    const server = await start({ apps: [{ ...APP, previews: [PR], scenarios: [failing] }] })
    const result = await run(server)

    expect(result.code).toBe(1)
    const { body } = github.comments(PR)[0]
    expect(body).toContain('❌ Coolify preview of #7: failed')
    expect(body).toContain('59002 more characters cut')
    expect(result.summary).toContain('59002 more characters cut')
    expect(warnings(result.stdout)).toEqual([])
  }, 30_000)

  it('is not written with `comment: false`, nor without `pr`', async () => {
    github = await startFakeGitHub()
    const server = await start()
    await run(server, { comment: 'false' })
    await run(server, { pr: '' })

    expect(github.requests).toEqual([])
  })
})

describe("a preview's GitHub deployment", () => {
  it('is transient, in the environment named for the pull request, with the preview’s URL', async () => {
    github = await startFakeGitHub()
    const server = await start()
    const result = await run(server, { environment: 'preview-7' })

    expect(result.code).toBe(0)
    const [deployment] = github.deployments()
    expect(deployment).toMatchObject({ environment: 'preview-7', transient: true, ref: HEAD })
    expect(deployment.statuses.at(-1)).toMatchObject({
      state: 'success',
      environmentUrl: 'https://7.web.example.com'
    })
  })
})

describe('delete-preview', () => {
  const remove = { 'delete-preview': 'true', environment: 'preview-7' }

  it('removes the preview in Coolify, marks its GitHub deployments inactive and says so in the comment', async () => {
    github = await startFakeGitHub()
    const server = await start({ abilities: ['root'] })
    await run(server, { environment: 'preview-7' })
    await run(server, { environment: 'preview-7' })
    const deployed = server.requests.length
    const result = await run(server, remove)

    expect(result.code).toBe(0)
    expect(result.outputs).toMatchObject({
      status: 'finished',
      'deployment-uuid': '',
      url: '',
      deployments: '[]'
    })
    expect(requestLines(server.requests.slice(deployed))).toEqual([
      `DELETE /api/v1/applications/${APP.uuid}/previews/7`
    ])
    expect(server.app(APP.uuid)!.previews).toEqual([])
    expect(github.deployments().map(deployment => deployment.statuses.at(-1)!.state)).toEqual([
      'inactive',
      'inactive'
    ])
    expect(github.comments(PR)).toHaveLength(1)
    expect(github.comments(PR)[0].body).toContain('🗑️ Coolify preview of #7: removed')
    expect(github.comments(PR)[0].body.startsWith(MARKER)).toBe(true)
  })

  // Guards: the inactive statuses go out a few at a time, not one by one: a pull request pushed
  // to often has many deployments, and each answer GitHub is slow to give would add up.
  it('marks many GitHub deployments inactive a few at a time', async () => {
    github = await startFakeGitHub({ delayMs: 50 })
    for (let i = 0; i < 12; i++) {
      const created = await fetch(`${github.url}/repos/octo/app/deployments`, {
        method: 'POST',
        body: JSON.stringify({ ref: HEAD, environment: 'preview-7' })
      })
      expect(created.status).toBe(201)
    }
    const server = await start({ abilities: ['root'] })
    const result = await run(server, remove)

    expect(result.code).toBe(0)
    expect(github.deployments().map(deployment => deployment.statuses.at(-1)?.state)).toEqual(
      Array(12).fill('inactive')
    )
    const writes = github.requests.filter(
      request => request.method === 'POST' && request.path.endsWith('/statuses')
    )
    expect(writes).toHaveLength(12)
    // Four under way at once, no more.
    expect(Math.max(...writes.map(request => request.concurrent))).toBe(4)
  })

  it('counts a preview that is already gone as removed, and writes no new comment', async () => {
    github = await startFakeGitHub()
    const server = await start({
      abilities: ['root'],
      apps: [{ ...APP, scenarios: [build('finished')] }]
    })
    const result = await run(server, remove)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.stdout).toContain('already removed')
    expect(github.comments(PR)).toEqual([])
  })

  it('fails when Coolify refuses', async () => {
    const server = await start({ abilities: ['read', 'deploy'] })
    const result = await run(server, remove)

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)[0]).toContain('The token lacks the `write` ability')
    expect(result.outputs.status).toBe('failed')
    expect(server.app(APP.uuid)!.previews).toHaveLength(1)
  })

  it('needs `pr` and `app-uuid`', async () => {
    const server = await start()
    const result = await run(server, { 'delete-preview': 'true', pr: '' })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)[0]).toContain('`delete-preview` needs `pr`')
    expect(actionRequests(server)).toEqual([])
  })
})
