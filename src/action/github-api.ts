import { pullRequestEvent } from '../config/event.js'
import { HttpAgent } from '../transport/agent.js'
import { ACCEPT_ENCODING } from '../transport/body.js'

/**
 * GitHub's REST API (and Forgejo's and Gitea's, which answer the same paths) over the project's
 * own transport: the runner's proxy chosen as for Coolify, undici once in the bundle. The action
 * calls a handful of endpoints; JSON in and out, a failure thrown as a GitHubError when GitHub
 * answered, as the transport's failure when it did not.
 */

/** One attempt's longest wait for a connection, the headers or the next chunk of the body. */
const TIMEOUT_MS = 10_000
/** Redirects followed (a renamed repository's), within the API's own address. */
const MAX_REDIRECTS = 5

/** What the runner says about the workflow run and the repository it runs in. */
export interface GitHubRun {
  /** The REST API: GITHUB_API_URL (GitHub Enterprise Server's, Forgejo's), else github.com's. */
  apiUrl: string
  /** The web UI: GITHUB_SERVER_URL, else https://github.com. */
  serverUrl: string
  /** GITHUB_REPOSITORY, split. */
  repo: { owner: string; repo: string }
  /** In a pull request, its head commit: GITHUB_SHA is then a merge commit it never shows. */
  sha: string | undefined
  workflow: string
  runId: number
  runNumber: number
}

export function gitHubRun(env: NodeJS.ProcessEnv = process.env): GitHubRun {
  const [owner, repo, ...rest] = (env.GITHUB_REPOSITORY ?? '').split('/')
  if (!owner || !repo || rest.length) {
    throw new Error("GITHUB_REPOSITORY is not set as 'owner/repo', so no repository to write to")
  }
  const event = pullRequestEvent(env)
  return {
    apiUrl: env.GITHUB_API_URL || 'https://api.github.com',
    serverUrl: env.GITHUB_SERVER_URL || 'https://github.com',
    repo: { owner, repo },
    sha: event.headSha ?? event.sha,
    workflow: env.GITHUB_WORKFLOW ?? '',
    runId: parseInt(env.GITHUB_RUN_ID ?? '', 10),
    runNumber: parseInt(env.GITHUB_RUN_NUMBER ?? '', 10)
  }
}

/** A repository's address under the API: `/repos/owner/repo`. */
export function repoPath({ owner, repo }: GitHubRun['repo']): string {
  return `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`
}

/** GitHub answered with an error: its status, headers (lower-case names) and body. */
export class GitHubError extends Error {
  readonly response: { status: number; headers: Record<string, string>; data: unknown }
  constructor(
    readonly status: number,
    headers: Record<string, string>,
    data: unknown
  ) {
    const message = (data as { message?: unknown } | undefined)?.message
    super(`GitHub answered ${status}${typeof message === 'string' ? `: ${message}` : ''}`)
    this.response = { status, headers, data }
  }
}

export interface GitHubAnswer<T> {
  status: number
  headers: Record<string, string>
  data: T
}

/** Headers GitHub's answers carry that the calls read: pages, rate limits. */
const READ_HEADERS = [
  'link',
  'retry-after',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset'
]

/** Every client a step opened, for `closeGitHub` at its end. */
const opened = new Set<GitHubApi>()

/**
 * Closes every GitHub client the step opened: a call cut off by its deadline leaves its connection
 * to finish opening, which would hold the process past the step's end for up to TIMEOUT_MS.
 */
export function closeGitHub(): void {
  for (const github of opened) github.close()
  opened.clear()
}

export class GitHubApi {
  readonly #base: URL
  readonly #http: HttpAgent
  readonly #headers: Record<string, string>

  constructor(token: string, apiUrl: string, env: NodeJS.ProcessEnv = process.env) {
    this.#base = new URL(apiUrl.replace(/\/*$/, '/'))
    this.#http = new HttpAgent(this.#base, { timeoutMs: TIMEOUT_MS, keepAlive: true }, env)
    this.#headers = {
      authorization: `token ${token}`,
      accept: 'application/vnd.github+json',
      'accept-encoding': ACCEPT_ENCODING,
      'user-agent': 'deploy-to-coolify-action'
    }
    opened.add(this)
  }

  /** One call: `path` under the API's address (`/repos/o/r/…`), `body` sent as JSON. */
  async request<T>(
    method: string,
    path: string,
    { body, signal }: { body?: object; signal: AbortSignal }
  ): Promise<GitHubAnswer<T>> {
    return this.#send<T>(method, new URL(path.replace(/^\//, ''), this.#base), body, signal)
  }

  /**
   * Every page of a list, following GitHub's `Link: <…>; rel="next"`; `enough` ends it early,
   * given what the pages so far held.
   */
  async paginate<T>(
    path: string,
    signal: AbortSignal,
    enough: (items: T[]) => boolean = () => false
  ): Promise<T[]> {
    const items: T[] = []
    let url: URL | undefined = new URL(path.replace(/^\//, ''), this.#base)
    while (url) {
      const { data, headers }: GitHubAnswer<T[]> = await this.#send<T[]>(
        'GET',
        url,
        undefined,
        signal
      )
      items.push(...data)
      if (enough(items)) break
      const next: string | undefined = /<([^>]+)>;\s*rel="next"/.exec(headers.link ?? '')?.[1]
      url = next ? new URL(next, url) : undefined
      // The token goes to the API's own address only.
      if (url && url.origin !== this.#base.origin) {
        throw new Error(`GitHub's next page is at another address (${url.origin})`)
      }
    }
    return items
  }

  async #send<T>(
    method: string,
    url: URL,
    body: object | undefined,
    signal: AbortSignal,
    redirects = 0
  ): Promise<GitHubAnswer<T>> {
    const headers = { ...this.#headers }
    if (body) headers['content-type'] = 'application/json; charset=utf-8'
    const answer = await this.#http.request(url, {
      method,
      headers,
      body: body && JSON.stringify(body),
      signal
    })
    const text = await answer.text()
    const read: Record<string, string> = {}
    for (const name of READ_HEADERS) {
      const value = answer.header(name)
      if (value !== undefined) read[name] = value
    }
    const location = answer.header('location')
    if ([301, 302, 307, 308].includes(answer.status) && location && redirects < MAX_REDIRECTS) {
      const target = new URL(location, url)
      // Only within the API's address: the token goes nowhere else.
      if (target.origin === this.#base.origin) {
        // As fetch does: a POST moved by 301 or 302 is asked again as a GET.
        const post = method === 'POST' && answer.status < 307
        return this.#send(
          post ? 'GET' : method,
          target,
          post ? undefined : body,
          signal,
          redirects + 1
        )
      }
    }
    let data: unknown = text
    if (/json/i.test(answer.header('content-type') ?? '')) {
      try {
        data = text ? JSON.parse(text) : undefined
      } catch {
        // Not JSON after all (a proxy's page): kept as text, for the warning.
      }
    }
    if (answer.status >= 300) throw new GitHubError(answer.status, read, data)
    return { status: answer.status, headers: read, data: data as T }
  }

  /** Closes the kept connections; a call under way ends. */
  close(): void {
    this.#http.close()
  }
}
