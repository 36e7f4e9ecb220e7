/** The fake GitHub API over real HTTP: deployments, statuses, issue comments, refusals. */
import { afterEach, describe, expect, it } from '@jest/globals'
import { startFakeGitHub } from '../test/fake-github/index.js'
import type { FakeGitHub, FakeGitHubOptions } from '../test/fake-github/index.js'

let github: FakeGitHub | undefined

afterEach(async () => {
  await github?.close()
  github = undefined
})

async function start(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  github = await startFakeGitHub(options)
  return github
}

interface Answer {
  status: number
  headers: Headers
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${github!.url}${path}`, {
    method,
    headers: { authorization: 'token ghs_test', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: res.status, headers: res.headers, json: await res.json() }
}

const REPO = '/repos/octo/app'

describe('deployments', () => {
  it('creates deployments and statuses, and lists them newest first with filters', async () => {
    await start()
    const staging = await call('POST', `${REPO}/deployments`, {
      ref: 'abc123',
      environment: 'staging',
      auto_merge: false,
      required_contexts: []
    })
    expect(staging.status).toBe(201)
    expect(staging.json).toMatchObject({
      id: 1,
      sha: 'abc123',
      ref: 'abc123',
      environment: 'staging'
    })
    const pr = await call('POST', `${REPO}/deployments`, { ref: 'def456', environment: 'pr-7' })
    expect(pr.json.id).toBe(2)

    const status = await call('POST', `${REPO}/deployments/1/statuses`, {
      state: 'success',
      environment_url: 'https://staging.example.com',
      log_url: 'https://coolify.example.com/log'
    })
    expect(status.status).toBe(201)
    expect(status.json).toMatchObject({
      state: 'success',
      environment_url: 'https://staging.example.com'
    })

    expect(
      (await call('GET', `${REPO}/deployments`)).json.map((d: { id: number }) => d.id)
    ).toEqual([2, 1])
    const filtered = await call('GET', `${REPO}/deployments?environment=staging&sha=abc123`)
    expect(filtered.json.map((d: { id: number }) => d.id)).toEqual([1])
    expect((await call('GET', `${REPO}/deployments?ref=nope`)).json).toEqual([])
    const statuses = await call('GET', `${REPO}/deployments/1/statuses`)
    expect(statuses.json.map((s: { state: string }) => s.state)).toEqual(['success'])
    expect((await call('GET', `${REPO}/deployments/9/statuses`)).status).toBe(404)
    expect((await call('POST', `${REPO}/deployments`, {})).status).toBe(422)

    expect(github!.deployments()).toMatchObject([
      {
        id: 1,
        environment: 'staging',
        statuses: [{ state: 'success', environmentUrl: 'https://staging.example.com' }]
      },
      { id: 2, environment: 'pr-7', statuses: [] }
    ])
  })

  it('marks the earlier successful deployment of an environment inactive', async () => {
    await start()
    for (const ref of ['one', 'two']) {
      const { json } = await call('POST', `${REPO}/deployments`, { ref, environment: 'staging' })
      await call('POST', `${REPO}/deployments/${json.id}/statuses`, { state: 'success' })
    }
    expect(github!.deployments().map(d => d.statuses.map(s => s.state))).toEqual([
      ['success', 'inactive'],
      ['success']
    ])
  })
})

describe('issue comments', () => {
  it('pages through comments with a Link header like GitHub', async () => {
    await start({
      comments: Array.from({ length: 5 }, (_, i) => ({ issue: 7, body: `comment ${i + 1}` }))
    })
    const first = await call('GET', `${REPO}/issues/7/comments?per_page=2`)
    expect(first.json.map((c: { body: string }) => c.body)).toEqual(['comment 1', 'comment 2'])
    const link = first.headers.get('link')!
    expect(link).toBe(
      `<${github!.url}${REPO}/issues/7/comments?per_page=2&page=2>; rel="next", ` +
        `<${github!.url}${REPO}/issues/7/comments?per_page=2&page=3>; rel="last"`
    )
    const next = link.match(/<([^>]+)>; rel="next"/)![1]
    const second = (await fetch(next).then(res => res.json())) as Array<{ body: string }>
    expect(second.map(c => c.body)).toEqual(['comment 3', 'comment 4'])
    const last = await call('GET', `${REPO}/issues/7/comments?per_page=2&page=3`)
    expect(last.json).toHaveLength(1)
    expect(last.headers.get('link')).toContain('rel="prev"')
    expect(last.headers.get('link')).not.toContain('rel="next"')
    const single = await call('GET', `${REPO}/issues/8/comments`)
    expect(single.json).toEqual([])
    expect(single.headers.get('link')).toBeNull()
  })

  it('creates and updates a comment as the workflow bot', async () => {
    await start()
    const created = await call('POST', `${REPO}/issues/7/comments`, { body: 'Deploying…' })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({
      id: 1,
      body: 'Deploying…',
      html_url: 'https://github.com/octo/app/issues/7#issuecomment-1',
      user: { login: 'github-actions[bot]', type: 'Bot' }
    })
    const updated = await call('PATCH', `${REPO}/issues/comments/1`, { body: 'Deployed.' })
    expect(updated.status).toBe(200)
    expect(updated.json.body).toBe('Deployed.')
    expect((await call('PATCH', `${REPO}/issues/comments/99`, { body: 'x' })).status).toBe(404)
    expect((await call('POST', `${REPO}/issues/7/comments`, {})).status).toBe(422)
    expect(github!.comments(7)).toMatchObject([
      { id: 1, body: 'Deployed.', login: 'github-actions[bot]' }
    ])
    expect(github!.comments(8)).toEqual([])
  })

  it('answers GET /user as GitHub does: refused to an installation token, the user to a personal one', async () => {
    await start({
      comments: [
        { issue: 7, body: 'LGTM' },
        { issue: 7, body: 'ok', login: 'ci[bot]' }
      ]
    })
    const refused = await call('GET', '/user')
    expect(refused.status).toBe(403)
    expect(refused.json).toMatchObject({
      message: 'Resource not accessible by integration',
      documentation_url: 'https://docs.github.com/rest/users/users#get-the-authenticated-user'
    })
    const listed = await call('GET', `${REPO}/issues/7/comments`)
    expect(listed.json).toMatchObject([
      { user: { login: 'octocat', type: 'User' }, performed_via_github_app: null },
      { user: { login: 'ci[bot]', type: 'Bot' }, performed_via_github_app: { slug: 'ci' } }
    ])
    await github!.close()

    await start({ user: 'deploy-bot' })
    const me = await call('GET', '/user')
    expect(me.status).toBe(200)
    expect(me.json).toMatchObject({ login: 'deploy-bot', type: 'User' })
    const created = await call('POST', `${REPO}/issues/7/comments`, { body: 'Deploying…' })
    expect(created.json.user).toMatchObject({ login: 'deploy-bot', type: 'User' })
    expect(github!.comments(7)).toMatchObject([{ login: 'deploy-bot' }])
  })
})

describe('refusals', () => {
  it('refuses every route, or only the matching ones', async () => {
    await start({ refuse: 403 })
    const all = await call('POST', `${REPO}/deployments`, { ref: 'abc' })
    expect(all.status).toBe(403)
    expect(all.json.message).toBe('Resource not accessible by integration')
    await github!.close()

    await start({ refuse: { status: 403, paths: /\/comments/ } })
    expect((await call('POST', `${REPO}/deployments`, { ref: 'abc' })).status).toBe(201)
    const comment = await call('POST', `${REPO}/issues/7/comments`, { body: 'x' })
    expect(comment.status).toBe(403)
    expect(comment.json).toEqual({
      message: 'Resource not accessible by integration',
      documentation_url: 'https://docs.github.com/rest/issues/comments',
      status: '403'
    })
    expect(github!.comments(7)).toEqual([])
    expect(github!.requests.map(r => `${r.method} ${r.path}`)).toEqual([
      `POST ${REPO}/deployments`,
      `POST ${REPO}/issues/7/comments`
    ])
  })
})

describe('as Forgejo', () => {
  it('serves issue comments under /api/v1, whole and in its shape, and has no deployments', async () => {
    await start({ forgejo: true, comments: [{ issue: 7, body: 'earlier' }] })
    expect(github!.url).toMatch(/\/api\/v1$/)

    const deployment = await call('POST', `${REPO}/deployments`, { ref: 'abc' })
    expect(deployment.status).toBe(404)
    expect(deployment.json.message).toBe("The target couldn't be found.")
    expect((await call('GET', `${REPO}/deployments/1/statuses`)).status).toBe(404)

    const created = await call('POST', `${REPO}/issues/7/comments`, { body: 'Deployed.' })
    expect(created.status).toBe(201)
    expect(created.json.user.login).toBe('forgejo-actions')
    expect(created.json).not.toHaveProperty('node_id')
    const edited = await call('PATCH', `${REPO}/issues/comments/${created.json.id}`, {
      body: 'Deployed again.'
    })
    expect(edited.json.body).toBe('Deployed again.')

    // Listed whole, without pages, whatever per_page asks.
    const listed = await call('GET', `${REPO}/issues/7/comments?per_page=1`)
    expect(listed.headers.get('link')).toBeNull()
    expect(listed.json.map((c: { body: string }) => c.body)).toEqual(['earlier', 'Deployed again.'])
  })
})
