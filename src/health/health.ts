import type { CoolifyClient } from '../coolify/client.js'
import { sleep } from '../coolify/pacing.js'
import { describeError } from '../errors.js'
import type { DeploymentView } from '../model/deployment.js'
import { probe } from './probe.js'
import { Freshness, isUp, type Health, type Look } from './readiness.js'

export interface HealthOptions {
  /** A path on the application's URL, or a whole URL. */
  healthUrl?: string
  pollIntervalMs: number
  /** `ca-certificate`, trusted for the health URL too. */
  caCertificate?: string
  /** A preview's deployment: the application's status is production's, so only a full URL counts. */
  pr?: number
  /** Reads the application's status in Coolify (shared with the other checks). */
  readStatus: (appUuid: string, signal: AbortSignal) => Promise<Look>
  /**
   * When the deployment was last seen under way (else when it finished), on Coolify's clock: a
   * status counts only when Coolify refreshed it since. Not `finished_at`: the one status check
   * that follows a deployment on a Sentinel server may come before it.
   */
  since?: number
}

/** Lines of the runtime log read for an application that did not come up. */
const RUNTIME_LINES = 100
/** Shortest wait before reading again a status Coolify has not refreshed yet. */
const STALE_PAUSE_MIN_MS = 500

/**
 * After `finished`: waits, until `signal` aborts, for Coolify to report the application running
 * and, with `health-url`, for that URL to answer 2xx or 3xx. Undefined when there is nothing to
 * check (a preview without a whole URL). An application that is up at once costs one read of it
 * (and one request to the URL).
 */
export async function checkHealth(
  deployment: DeploymentView,
  options: HealthOptions,
  signal: AbortSignal
): Promise<Health | undefined> {
  const preview = options.pr !== undefined
  let url = healthUrlOf(options.healthUrl, deployment.appUrl, preview)
  if (preview && !url) return undefined
  // A path on a URL the step has not read yet: the status reads carry it.
  const path = options.healthUrl && !url ? options.healthUrl : undefined
  let last: Health | undefined
  const freshness = new Freshness(options.since)
  for (;;) {
    const found = await look(deployment.appUuid, url, path, !preview, options, freshness, signal)
    url = found.url ?? url
    // A look cut off by the end of the check says less than the one before it.
    if (signal.aborted && last) break
    // An unknown look (unread, or not refreshed) never replaces a known one.
    if (!last || !isUnknown(found.health) || isUnknown(last)) last = found.health
    if (found.health.up || signal.aborted) break
    try {
      await sleep(pauseAfter(found.health, options.pollIntervalMs), signal)
    } catch {
      break
    }
  }
  return last
}

/**
 * Until the next look: `poll-interval`, or half of it while Coolify has not refreshed the status
 * since the deployment ended — its status check follows the end within seconds, and one read
 * serves every check due at its turn.
 */
function pauseAfter(found: Health, pollIntervalMs: number): number {
  if (!isUnknown(found)) return pollIntervalMs
  return Math.min(pollIntervalMs, Math.max(STALE_PAUSE_MIN_MS, pollIntervalMs / 2))
}

function isUnknown(health: Health): boolean {
  return !health.up && health.unknown
}

/**
 * One look at the application: its status in Coolify, then its URL — `path` on the URL that
 * status read gives, when the step had none. A status Coolify has not refreshed since the
 * deployment ended may be the old container's: it decides nothing.
 */
async function look(
  appUuid: string,
  known: string | undefined,
  path: string | undefined,
  checkStatus: boolean,
  { readStatus, caCertificate }: HealthOptions,
  freshness: Freshness,
  signal: AbortSignal
): Promise<{ health: Health; url?: string }> {
  let unread: string | undefined
  let url = known
  if (checkStatus) {
    try {
      const found = await readStatus(appUuid, signal)
      if (!url && path && found.appUrl !== undefined) {
        if (!found.appUrl) {
          const problem = `\`health-url\` ${shownUrl(path)} is a path, but the application has no URL in Coolify`
          return { health: { up: false, problem, unknown: false } }
        }
        url = healthUrlOf(path, found.appUrl, false)
      }
      const status = (found.status ?? 'unknown').slice(0, 40)
      // Without a refresh time (servers before 4.x), the status is taken as read.
      const fresh = found.refreshedAt === undefined || freshness.counts(found)
      if (!fresh) {
        unread = `Coolify has not refreshed its status since the deployment ended (it still reports ${status})`
      } else if (!isUp(status)) {
        return {
          health: { up: false, problem: `Coolify reports it ${status}`, unknown: false },
          url
        }
      }
    } catch (error) {
      unread = `could not read its status: ${describeError(error)}`
    }
  }
  if (url) {
    const result = await probe(url, signal, caCertificate)
    if (!result.ok)
      return {
        health: { up: false, problem: `${shownUrl(url)} ${result.what}`, unknown: false },
        url
      }
  } else if (path) {
    // The URL to probe is not known yet: nothing is, whatever the status says.
    return {
      health: {
        up: false,
        problem: unread ?? `the application's URL could not be read`,
        unknown: true
      }
    }
  }
  // The URL answering says it is up, whatever Coolify could not tell.
  if (unread && !url) return { health: { up: false, problem: unread, unknown: true }, url }
  return { health: { up: true, url: url && shownUrl(url) }, url }
}

/**
 * A URL as lines and reports show it: without credentials, and with `?…` for its query, where a
 * key can be (`?token=…`) that the step never masked.
 */
export function shownUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z\d+.-]*:\/\/)[^/?#@]*@/i, '$1')
    .replace(/[?#][\s\S]*$/, query => (query.startsWith('?') ? '?…' : ''))
}

/**
 * The URL to check: `health-url` when it is a whole URL, else that path on the application's URL.
 * A preview has its own address, so a path on production's is not its health.
 */
export function healthUrlOf(
  healthUrl: string | undefined,
  appUrl: string | undefined,
  preview: boolean
): string | undefined {
  if (!healthUrl) return undefined
  if (!healthUrl.startsWith('/')) return healthUrl
  if (preview || !appUrl) return undefined
  return appUrl.replace(/\/+$/, '') + healthUrl
}

/** The end of the application's runtime log; none when Coolify has none to give. */
export async function runtimeLog(
  client: CoolifyClient,
  appUuid: string,
  signal: AbortSignal
): Promise<string[]> {
  try {
    const answer = await client.getApplicationLogs(appUuid, RUNTIME_LINES, signal)
    const text = typeof answer?.logs === 'string' ? answer.logs : ''
    return text.split(/\r?\n/).filter(line => line.trim() !== '')
  } catch {
    return []
  }
}
