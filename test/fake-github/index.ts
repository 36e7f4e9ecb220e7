/**
 * A fake GitHub REST API on loopback: deployments with their statuses, and issue (pull request)
 * comments, shaped as GitHub answers them. It records what it received; `refuse` answers all or
 * some routes with an error, as GitHub does when the token lacks a permission. As `forgejo`, it is
 * a Forgejo (or Gitea) API instead: under `/api/v1`, issue comments at GitHub's paths in Forgejo's
 * shape, listed whole, and no deployments routes at all. GitHub's limits hold: a comment body
 * over 65,536 characters is refused with 422; `faults` gives the 502s and the requests left
 * without an answer that GitHub has now and then.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'

export interface GitHubRequest {
  method: string
  path: string
  query: Record<string, string>
  headers: Record<string, string | string[] | undefined>
  /** The JSON body, {} when there is none. */
  body: Record<string, unknown>
  /** Requests under way when this one came, itself included: how many a client sends at once. */
  concurrent: number
  /** Epoch ms when it came: to order it among the fake Coolify's requests. */
  at: number
}

export interface FakeGitHubOptions {
  /**
   * Answer every request (a status alone) or those whose path matches `paths` with this status
   * and GitHub's error body "Resource not accessible by integration".
   */
  refuse?: number | { status: number; paths: RegExp }
  /**
   * Comments already on issues and pull requests, oldest first, by `login` (default `octocat`);
   * a login ending in `[bot]` is an app's, written through it (`performed_via_github_app`).
   */
  comments?: Array<{ issue: number; body: string; login?: string; repo?: string }>
  /**
   * Whom the token belongs to: a personal token's user, whose login `GET /user` answers and who
   * writes the comments. Unset, it is an installation token (the workflow's `GITHUB_TOKEN`):
   * `GET /user` is refused with 403 and comments are written as `github-actions[bot]`.
   */
  user?: string
  /**
   * Where the REST API lives: GitHub Enterprise Server serves it under `/api/v3`. Requests
   * elsewhere get 404; `url` ends with it, as GITHUB_API_URL does on such a server.
   */
  prefix?: string
  /** Answer as Forgejo's API does (Gitea's is the same here) rather than as GitHub's. */
  forgejo?: boolean
  /**
   * With `forgejo`, what `GET /version` answers: Forgejo's own version then Gitea's after
   * `+gitea-` (the default), or Gitea's alone, `1.26.0`, to be a Gitea. GitHub has no such route.
   */
  version?: string
  /**
   * Bad moments, as GitHub has them now and then: after `skip` (default 0) of them, the next
   * `times` (default 1) requests that match `method` and `path` get `status` with GitHub's error
   * page for it (a 502 "Server Error"), or no answer at all with `hang`; until `recover()`.
   */
  faults?: GitHubFault[]
  /** Wait this long before each answer, as an API far away does. */
  delayMs?: number
  /**
   * The commits the repository has: a deployment of any other ref is refused with 422 "No ref
   * found for", as GitHub refuses a SHA it does not know. Every ref is known without it.
   */
  commits?: string[]
  /** Serve over TLS with this key and certificate, as GitHub and most Enterprise Servers do. */
  tls?: { key: string; cert: string }
}

export interface GitHubFault {
  method?: string
  path?: RegExp
  status?: number
  hang?: boolean
  skip?: number
  times?: number
}

/** GitHub refuses a comment body longer than this many characters (422). */
export const COMMENT_LENGTH = 65_536

export interface GitHubDeploymentStatus {
  id: number
  state: string
  description?: string
  environment?: string
  environmentUrl?: string
  logUrl?: string
  createdAt: string
}

export interface GitHubDeployment {
  id: number
  /** 'owner/name'. */
  repo: string
  ref: string
  sha: string
  environment: string
  task: string
  description: string | null
  transient: boolean
  production: boolean
  createdAt: string
  /** Oldest first. */
  statuses: GitHubDeploymentStatus[]
}

export interface GitHubComment {
  id: number
  repo: string
  issue: number
  body: string
  /** Who wrote it. */
  login: string
  createdAt: string
  updatedAt: string
}

export interface FakeGitHub {
  /** For GITHUB_API_URL. */
  url: string
  requests: GitHubRequest[]
  /** Every deployment created, oldest first, with its statuses. */
  deployments(): GitHubDeployment[]
  /** The comments on an issue or pull request, oldest first; `repo` narrows to 'owner/name'. */
  comments(issue: number, repo?: string): GitHubComment[]
  /** GitHub is itself again: every fault left ends. */
  recover(): void
  close(): Promise<void>
}

/** Who creates what a workflow's GITHUB_TOKEN creates. */
const BOT = 'github-actions[bot]'
const DOCS = 'https://docs.github.com/rest'

const DEPLOYMENTS = /^\/repos\/([^/]+\/[^/]+)\/deployments$/
const STATUSES = /^\/repos\/([^/]+\/[^/]+)\/deployments\/(\d+)\/statuses$/
const ISSUE_COMMENTS = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/
const COMMENT = /^\/repos\/([^/]+\/[^/]+)\/issues\/comments\/(\d+)$/
/** The app a bot writes through: `github-actions[bot]` through GitHub Actions, and so on. */
const APP_BOT = /^(.+)\[bot\]$/

type Answer = [status: number, body: unknown, headers?: Record<string, string>]

/** GitHub's timestamps: seconds, UTC. */
function stamp(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z')
}

/** What GitHub's edge answers when the API behind it fails: 502 "Server Error", and the like. */
function serverError(status: number): Answer {
  return [status, { message: status === 502 ? 'Server Error' : 'Service Unavailable' }]
}

function notFound(): Answer {
  return [404, { message: 'Not Found', documentation_url: DOCS, status: '404' }]
}

function invalid(message: string): Answer {
  return [422, { message, documentation_url: DOCS, status: '422' }]
}

/** GitHub's answer to a comment body over `COMMENT_LENGTH`: the comment is not written. */
function tooLong(): Answer {
  return [
    422,
    {
      message: 'Validation Failed',
      errors: [
        {
          resource: 'IssueComment',
          code: 'custom',
          field: 'body',
          message: `body is too long (maximum is ${COMMENT_LENGTH} characters)`
        }
      ],
      documentation_url: `${DOCS}/issues/comments`,
      status: '422'
    }
  ]
}

/** Forgejo's answer to a path it has no route for, and to a missing object. */
function forgejoNotFound(base: string): Answer {
  return [404, { message: "The target couldn't be found.", url: `${base}/api/swagger`, errors: [] }]
}

/** Who writes what the job's automatic token writes on Forgejo. */
const FORGEJO_BOT = 'forgejo-actions'

export async function startFakeGitHub(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const forgejo = options.forgejo === true
  const prefix = options.prefix ?? (forgejo ? '/api/v1' : '')
  const bot = forgejo ? FORGEJO_BOT : BOT
  /** Who writes what this token writes. */
  const author = options.user ?? bot
  const requests: GitHubRequest[] = []
  let underWay = 0
  /** The instance's web address: the API's without its prefix. */
  const webUrl = (): string => (prefix ? url.slice(0, -prefix.length) : url)
  const missing = (): Answer => (forgejo ? forgejoNotFound(webUrl()) : notFound())
  const deployments: GitHubDeployment[] = []
  const comments: GitHubComment[] = []
  // Each kind counts from 1, as a fresh repository's first deployment is number 1 here.
  const ids = { deployment: 0, status: 0, comment: 0 }
  const nextId = (kind: keyof typeof ids): number => ++ids[kind]
  let url = ''

  for (const seed of options.comments ?? []) {
    const at = stamp()
    comments.push({
      id: nextId('comment'),
      repo: seed.repo ?? 'octo/app',
      issue: seed.issue,
      body: seed.body,
      login: seed.login ?? 'octocat',
      createdAt: at,
      updatedAt: at
    })
  }

  const faults = (options.faults ?? []).map(fault => ({
    ...fault,
    skipped: fault.skip ?? 0,
    left: fault.times ?? 1
  }))

  /** The fault this request meets, counted down; none once each has had its turns. */
  function faultFor(request: GitHubRequest): GitHubFault | undefined {
    for (const fault of faults) {
      if (fault.left <= 0 || (fault.method && fault.method !== request.method)) continue
      if (fault.path && !new RegExp(fault.path.source).test(request.path)) continue
      if (fault.skipped > 0) {
        fault.skipped--
        continue
      }
      fault.left--
      return fault
    }
    return undefined
  }

  function refused(path: string): Answer | undefined {
    const refuse = options.refuse
    if (!refuse) return undefined
    const status = typeof refuse === 'number' ? refuse : refuse.status
    if (typeof refuse !== 'number') {
      refuse.paths.lastIndex = 0
      if (!refuse.paths.test(path)) return undefined
    }
    const onComments = COMMENT.test(path) || ISSUE_COMMENTS.test(path)
    const docs = `${DOCS}/${onComments ? 'issues/comments' : 'deployments/deployments'}`
    return [
      status,
      {
        message: 'Resource not accessible by integration',
        documentation_url: docs,
        status: `${status}`
      }
    ]
  }

  /** A page of `items` and GitHub's Link header (prev, next, last, first as they apply). */
  function page(request: GitHubRequest, items: unknown[]): Answer {
    // Forgejo lists an issue's comments whole: its route takes `since` and `before`, no pages.
    if (forgejo) return [200, items]
    const perPage = Math.min(Math.max(Number(request.query.per_page) || 30, 1), 100)
    const number = Math.max(Number(request.query.page) || 1, 1)
    const last = Math.max(Math.ceil(items.length / perPage), 1)
    const link = (n: number): string => {
      const query = new URLSearchParams({
        ...request.query,
        per_page: String(perPage),
        page: String(n)
      })
      return `<${url}${request.path}?${query}>`
    }
    const links = [
      ...(number > 1 ? [`${link(Math.min(number - 1, last))}; rel="prev"`] : []),
      ...(number < last ? [`${link(number + 1)}; rel="next"`, `${link(last)}; rel="last"`] : []),
      ...(number > 1 ? [`${link(1)}; rel="first"`] : [])
    ]
    const body = items.slice((number - 1) * perPage, number * perPage)
    return [200, body, links.length ? { link: links.join(', ') } : {}]
  }

  function deploymentView(d: GitHubDeployment): Record<string, unknown> {
    return {
      url: `${url}/repos/${d.repo}/deployments/${d.id}`,
      id: d.id,
      node_id: `DE_${d.id}`,
      sha: d.sha,
      ref: d.ref,
      task: d.task,
      payload: {},
      original_environment: d.environment,
      environment: d.environment,
      description: d.description,
      creator: { login: BOT, type: 'Bot' },
      created_at: d.createdAt,
      updated_at: d.statuses.at(-1)?.createdAt ?? d.createdAt,
      statuses_url: `${url}/repos/${d.repo}/deployments/${d.id}/statuses`,
      repository_url: `${url}/repos/${d.repo}`,
      transient_environment: d.transient,
      production_environment: d.production
    }
  }

  function statusView(d: GitHubDeployment, s: GitHubDeploymentStatus): Record<string, unknown> {
    return {
      url: `${url}/repos/${d.repo}/deployments/${d.id}/statuses/${s.id}`,
      id: s.id,
      node_id: `DES_${s.id}`,
      state: s.state,
      creator: { login: BOT, type: 'Bot' },
      description: s.description ?? '',
      environment: s.environment ?? d.environment,
      target_url: s.logUrl ?? '',
      log_url: s.logUrl ?? '',
      environment_url: s.environmentUrl ?? '',
      created_at: s.createdAt,
      updated_at: s.createdAt,
      deployment_url: `${url}/repos/${d.repo}/deployments/${d.id}`,
      repository_url: `${url}/repos/${d.repo}`
    }
  }

  function commentView(c: GitHubComment): Record<string, unknown> {
    if (forgejo) {
      const web = webUrl()
      return {
        id: c.id,
        html_url: `${web}/${c.repo}/pulls/${c.issue}#issuecomment-${c.id}`,
        pull_request_url: `${web}/${c.repo}/pulls/${c.issue}`,
        issue_url: '',
        user: { id: c.login === bot ? -2 : 1, login: c.login, full_name: '' },
        original_author: '',
        original_author_id: 0,
        body: c.body,
        assets: [],
        created_at: c.createdAt,
        updated_at: c.updatedAt
      }
    }
    const app = APP_BOT.exec(c.login)?.[1]
    return {
      id: c.id,
      node_id: `IC_${c.id}`,
      url: `${url}/repos/${c.repo}/issues/comments/${c.id}`,
      html_url: `https://github.com/${c.repo}/issues/${c.issue}#issuecomment-${c.id}`,
      issue_url: `${url}/repos/${c.repo}/issues/${c.issue}`,
      body: c.body,
      user: { login: c.login, type: app ? 'Bot' : 'User' },
      author_association: app ? 'NONE' : 'OWNER',
      performed_via_github_app: app
        ? { id: c.login.length, slug: app, name: app, owner: { login: 'github' } }
        : null,
      created_at: c.createdAt,
      updated_at: c.updatedAt
    }
  }

  /**
   * `GET /user`: a personal token's user; GitHub refuses an installation token with 403 (the
   * route is not one an app's permissions open), Forgejo names its actions user.
   */
  function authenticatedUser(): Answer {
    if (forgejo) return [200, { id: -2, login: author, full_name: '' }]
    if (options.user === undefined) {
      return [
        403,
        {
          message: 'Resource not accessible by integration',
          documentation_url: `${DOCS}/users/users#get-the-authenticated-user`,
          status: '403'
        }
      ]
    }
    return [
      200,
      {
        login: options.user,
        id: 583231,
        node_id: 'MDQ6VXNlcjU4MzIzMQ==',
        type: 'User',
        site_admin: false
      }
    ]
  }

  function createDeployment(repo: string, body: Record<string, unknown>): Answer {
    if (typeof body.ref !== 'string' || body.ref === '') {
      return invalid('Invalid request.\n\n"ref" wasn\'t supplied.')
    }
    const ref = body.ref
    if (options.commits && !options.commits.some(commit => commit.startsWith(ref))) {
      // GitHub's "Create a deployment": 422 when the ref names nothing in the repository.
      return [
        422,
        {
          message: `No ref found for: ${ref}`,
          documentation_url: `${DOCS}/deployments/deployments#create-a-deployment`,
          status: '422'
        }
      ]
    }
    const environment = typeof body.environment === 'string' ? body.environment : 'production'
    const d: GitHubDeployment = {
      id: nextId('deployment'),
      repo,
      ref: body.ref,
      sha: body.ref,
      environment,
      task: typeof body.task === 'string' ? body.task : 'deploy',
      description: typeof body.description === 'string' ? body.description : null,
      transient: body.transient_environment === true,
      production:
        typeof body.production_environment === 'boolean'
          ? body.production_environment
          : environment === 'production',
      createdAt: stamp(),
      statuses: []
    }
    deployments.push(d)
    return [201, deploymentView(d)]
  }

  /**
   * A new status; a success also marks earlier successful deployments of the same environment
   * inactive (GitHub's auto_inactive) unless they are production or transient ones.
   */
  function createStatus(d: GitHubDeployment, body: Record<string, unknown>): Answer {
    const state = body.state
    const states = ['error', 'failure', 'inactive', 'in_progress', 'queued', 'pending', 'success']
    if (typeof state !== 'string' || !states.includes(state)) {
      return invalid(
        "Invalid request.\n\nFor 'properties/state', is not one of the allowed values."
      )
    }
    const text = (field: string): string | undefined =>
      typeof body[field] === 'string' ? (body[field] as string) : undefined
    const status: GitHubDeploymentStatus = {
      id: nextId('status'),
      state,
      description: text('description'),
      environment: text('environment'),
      environmentUrl: text('environment_url'),
      logUrl: text('log_url') ?? text('target_url'),
      createdAt: stamp()
    }
    d.statuses.push(status)
    if (state === 'success' && body.auto_inactive !== false) {
      for (const other of deployments) {
        const earlier = other.id < d.id && other.repo === d.repo
        const same = other.environment === d.environment && !other.production && !other.transient
        if (earlier && same && other.statuses.at(-1)?.state === 'success') {
          other.statuses.push({ id: nextId('status'), state: 'inactive', createdAt: stamp() })
        }
      }
    }
    return [201, statusView(d, status)]
  }

  function answer(request: GitHubRequest): Answer {
    const refusal = refused(request.path)
    if (refusal) return refusal
    const { method, path, query, body } = request
    if (forgejo && (DEPLOYMENTS.test(path) || STATUSES.test(path))) {
      return missing()
    }
    if (forgejo && path === '/version' && method === 'GET') {
      return [200, { version: options.version ?? '11.0.3+gitea-1.22.0' }]
    }
    if (path === '/user' && method === 'GET') return authenticatedUser()
    let m: RegExpExecArray | null
    if ((m = DEPLOYMENTS.exec(path))) {
      const repo = m[1]
      if (method === 'POST') return createDeployment(repo, body)
      if (method !== 'GET') return missing()
      const matching = deployments
        .filter(d => d.repo === repo)
        .filter(d => !query.environment || d.environment === query.environment)
        .filter(d => !query.ref || d.ref === query.ref)
        .filter(d => !query.sha || d.sha === query.sha)
        .filter(d => !query.task || d.task === query.task)
        .reverse()
      return page(request, matching.map(deploymentView))
    }
    if ((m = STATUSES.exec(path))) {
      const d = deployments.find(x => x.repo === m![1] && x.id === Number(m![2]))
      if (!d) return missing()
      if (method === 'POST') return createStatus(d, body)
      if (method !== 'GET') return missing()
      return page(
        request,
        [...d.statuses].reverse().map(s => statusView(d, s))
      )
    }
    if ((m = ISSUE_COMMENTS.exec(path))) {
      const [repo, issue] = [m[1], Number(m[2])]
      if (method === 'GET') {
        return page(
          request,
          comments.filter(c => c.repo === repo && c.issue === issue).map(commentView)
        )
      }
      if (method !== 'POST') return missing()
      if (typeof body.body !== 'string')
        return invalid('Invalid request.\n\n"body" wasn\'t supplied.')
      if (body.body.length > COMMENT_LENGTH) return tooLong()
      const at = stamp()
      const comment = {
        id: nextId('comment'),
        repo,
        issue,
        body: body.body,
        login: author,
        createdAt: at,
        updatedAt: at
      }
      comments.push(comment)
      return [201, commentView(comment)]
    }
    if ((m = COMMENT.exec(path))) {
      const comment = comments.find(c => c.repo === m![1] && c.id === Number(m![2]))
      if (!comment) return missing()
      if (method === 'GET') return [200, commentView(comment)]
      if (method !== 'PATCH') return missing()
      if (typeof body.body !== 'string')
        return invalid('Invalid request.\n\n"body" wasn\'t supplied.')
      if (body.body.length > COMMENT_LENGTH) return tooLong()
      comment.body = body.body
      comment.updatedAt = stamp()
      return [200, commentView(comment)]
    }
    return missing()
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const address = new URL(req.url ?? '/', 'http://localhost')
      let body: Record<string, unknown> = {}
      let parsed = true
      try {
        body = text ? JSON.parse(text) : {}
      } catch {
        parsed = false
      }
      const request: GitHubRequest = {
        method: req.method ?? 'GET',
        path: address.pathname,
        query: Object.fromEntries(address.searchParams),
        headers: { ...req.headers },
        body,
        concurrent: ++underWay,
        at: Date.now()
      }
      requests.push(request)
      const routed = { ...request, path: request.path.slice(prefix.length) }
      const fault = faultFor(routed)
      res.on('close', () => underWay--)
      if (fault?.hang) return
      const [status, reply, headers] = fault
        ? serverError(fault.status ?? 502)
        : !request.path.startsWith(prefix)
          ? missing()
          : parsed
            ? answer(routed)
            : [400, { message: 'Problems parsing JSON', documentation_url: DOCS, status: '400' }]
      setTimeout(() => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
        res.end(JSON.stringify(reply))
      }, options.delayMs ?? 0)
    })
  }
  const server = options.tls ? createTlsServer(options.tls, onRequest) : createServer(onRequest)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const scheme = options.tls ? 'https' : 'http'
  url = `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`
  return {
    url,
    requests,
    deployments: () => structuredClone(deployments),
    comments: (issue, repo) =>
      structuredClone(comments.filter(c => c.issue === issue && (!repo || c.repo === repo))),
    recover: () => faults.splice(0),
    close: () =>
      new Promise<void>(resolve => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
