import { backoffDelay, parseRetryAfter, sleep, type RetryPolicy } from '../coolify/pacing.js'
import { linked } from '../time/signals.js'
import * as commands from './commands.js'

/**
 * A warning for a GitHub API call that failed: what GitHub answered and, when it refused, the
 * permission the job needs. GitHub's bookkeeping never changes the deploy.
 */
export function warnGitHubFailure(action: string, error: unknown, permission: string): void {
  const { status, response } = error as { status?: number; response?: { data?: unknown } }
  const message = (response?.data as { message?: unknown } | undefined)?.message
  const why = response
    ? `GitHub answered ${status}${typeof message === 'string' ? ` "${message}"` : ''}`
    : `no answer from GitHub (${error instanceof Error ? error.message : String(error)})`
  const reset = rateLimitReset(error)
  const hint =
    reset !== undefined
      ? ` GitHub's rate limit for this token is used up until ${new Date(reset).toISOString()}.`
      : status === 403 || status === 404
        ? ` The job needs ${permission}.`
        : ''
  commands.warning(`Could not ${action}: ${why}.${hint} This does not change the deploy.`)
}

/**
 * The forge whose runner runs this step when it is not GitHub: Forgejo's runner sets both
 * FORGEJO_ACTIONS and GITEA_ACTIONS, Gitea's act_runner GITEA_ACTIONS. Their APIs answer GitHub's
 * issue-comment paths but have no deployments.
 */
export function otherForge(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.FORGEJO_ACTIONS === 'true') return 'Forgejo'
  if (env.GITEA_ACTIONS === 'true') return 'Gitea'
  return undefined
}

/** A deployments call that failed because the forge has no such API: its 404, on Forgejo or Gitea. */
export function lacksDeploymentsApi(error: unknown): string | undefined {
  const forge = otherForge()
  return forge && (error as { status?: number }).status === 404 ? forge : undefined
}

/** A GitHub call's whole time, retries included: GitHub must never hold up the deploy. */
export const GITHUB_CALL_MS = 10_000
/** One attempt's: a request that hangs leaves time for another. */
const ATTEMPT_MS = 4000
const GITHUB_RETRY: RetryPolicy = { baseDelayMs: 500, maxDelayMs: 2000 }

/**
 * Runs one GitHub call (`call` gets each attempt's signal) as the client runs Coolify's: again
 * after a transient failure (no answer, a timeout, 5xx, 429, a secondary rate limit), after a
 * backoff, within `GITHUB_CALL_MS` and `signal`. A refusal (401, 403, 404, 422) is final at once.
 * With `answered`, only a failure GitHub answered is retried: a create whose answer was lost may
 * have been done. Throws the last failure.
 */
export async function callGitHub<T>(
  call: (signal: AbortSignal) => Promise<T>,
  signal: AbortSignal,
  { answered = false, totalMs = GITHUB_CALL_MS }: { answered?: boolean; totalMs?: number } = {}
): Promise<T> {
  const whole = linked([signal], totalMs)
  const end = Date.now() + totalMs
  try {
    for (let attempt = 1; ; attempt++) {
      const one = linked([whole.signal], ATTEMPT_MS)
      try {
        return await call(one.signal)
      } catch (error) {
        if (whole.signal.aborted || !isTransient(error)) throw error
        if (answered && !(error as { response?: unknown }).response) throw error
        const delay = backoffDelay(GITHUB_RETRY, attempt, retryAfter(error))
        // A rate limit that frees up only after the call's time: waiting would change nothing.
        if (delay >= end - Date.now()) throw error
        try {
          await sleep(delay, whole.signal)
        } catch {
          throw error
        }
      } finally {
        one.release()
      }
    }
  } finally {
    whole.release()
  }
}

/** GitHub said no (a permission, a missing object, a body it will not take): asking again will not help. */
export function isRefusal(error: unknown): boolean {
  return (error as { response?: unknown }).response !== undefined && !isTransient(error)
}

/** Worth another attempt: GitHub did not answer, or answered that it could not right now. */
function isTransient(error: unknown): boolean {
  const { status, response } = error as { status?: number; response?: unknown }
  if (!response) return !unsendable(error)
  return (
    status === undefined ||
    status >= 500 ||
    status === 429 ||
    (status === 403 && retryAfter(error) !== undefined) ||
    rateLimitReset(error) !== undefined
  )
}

/**
 * Nothing could be sent, and asking again sends nothing either: no server listens at the API's
 * address (a wrong `GITHUB_API_URL`).
 */
function unsendable(error: unknown): boolean {
  return (error as { code?: unknown }).code === 'ECONNREFUSED'
}

/**
 * How long to wait before asking again, in milliseconds: GitHub's `retry-after` (its secondary
 * rate limit), or the time until `x-ratelimit-reset` when the primary rate limit is used up.
 * A wait longer than the call's time ends the call with the failure.
 */
function retryAfter(error: unknown, now = Date.now()): number | undefined {
  const headers = (error as { response?: { headers?: Record<string, string> } }).response?.headers
  const reset = rateLimitReset(error)
  return (
    parseRetryAfter(headers?.['retry-after']) ??
    (reset === undefined ? undefined : Math.max(0, reset - now))
  )
}

/**
 * When GitHub's primary rate limit frees up again (epoch milliseconds), for a 403 or 429 that
 * says it is used up (`x-ratelimit-remaining: 0`): a limit, not a missing permission.
 */
export function rateLimitReset(error: unknown): number | undefined {
  const { status, response } = error as {
    status?: number
    response?: { headers?: Record<string, string | undefined> }
  }
  if (status !== 403 && status !== 429) return undefined
  const headers = response?.headers
  if (headers?.['x-ratelimit-remaining'] !== '0') return undefined
  const reset = Number(headers['x-ratelimit-reset'])
  return Number.isFinite(reset) && reset > 0 ? reset * 1000 : Date.now()
}
