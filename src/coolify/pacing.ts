import { setTimeout as sleepFor } from 'node:timers/promises'
import { formatDuration } from '../duration.js'
import type { CoolifyError } from './errors.js'

export interface RetryPolicy {
  /** First backoff; it doubles with each failure up to `maxDelayMs`. */
  baseDelayMs: number
  /** Longest wait between attempts: low, so that Coolify's return is noticed quickly. */
  maxDelayMs: number
}

/**
 * Backoff before attempt `attempt + 1`: exponential with jitter (half fixed, half random), so
 * runners that failed together do not return together. `Retry-After` wins when it is longer.
 */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs?: number,
  random: () => number = Math.random
): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
  const jittered = exponential / 2 + (random() * exponential) / 2
  return Math.max(Math.round(jittered), retryAfterMs ?? 0)
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined
  const trimmed = value.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000)
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Sleeps, or rejects with the signal's reason as soon as it aborts. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) {
    signal?.throwIfAborted()
    return
  }
  try {
    await sleepFor(ms, undefined, { signal })
  } catch {
    throw signal?.reason ?? new Error('aborted')
  }
}

/** Every answer updates the spacing, so one long gap is enough to let the window slide. */
const MAX_SPACING_MS = 15_000

/**
 * Spaces out every request to one Coolify user, whose tokens share one rate limit: nothing is sent
 * before a `Retry-After` has passed, and requests spread out when `X-RateLimit-Remaining` runs low.
 */
export class RateGate {
  private blockedUntil = 0
  private nextSlot = 0
  private spacingMs = 0
  /** The per-minute limit the server last announced. */
  limitPerMinute: number | undefined

  constructor(private readonly now: () => number = Date.now) {}

  /** Resolves when a request may go out, keeping its place in line among concurrent callers. */
  async ready(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = this.now()
      const slot = Math.max(now, this.blockedUntil, this.nextSlot)
      if (slot <= now) {
        this.nextSlot = now + this.spacingMs
        return
      }
      this.nextSlot = slot + this.spacingMs
      await sleep(slot - now, signal)
      if (this.now() >= this.blockedUntil) return
    }
  }

  /** Learns from an answer's rate-limit headers. */
  observe(limit: string | undefined, remaining: string | undefined, retryAfterMs?: number): void {
    const max = Number(limit)
    if (limit !== undefined && Number.isFinite(max) && max > 0) this.limitPerMinute = max
    if (retryAfterMs !== undefined) {
      // Refused: nothing goes out before Retry-After; the next answer tells the budget anew.
      this.blockedUntil = Math.max(this.blockedUntil, this.now() + retryAfterMs)
      this.spacingMs = 0
      return
    }
    const left = Number(remaining)
    if (remaining === undefined || !Number.isFinite(left)) return
    // Above a quarter of the budget the callers' own cadence is enough; below it, share what is
    // left of the one-minute window evenly between the requests still allowed.
    const quarter = (this.limitPerMinute ?? 200) / 4
    this.spacingMs =
      left >= quarter ? 0 : Math.min(MAX_SPACING_MS, Math.ceil(60_000 / Math.max(left, 1)))
  }
}

/**
 * Says once that Coolify stopped answering, since when and why, and once that it answers again:
 * an outage of minutes is a few lines in the log, not one per attempt.
 */
export class Reachability {
  private downSince: number | undefined
  /** The request whose failure began the outage: its success ends it. */
  private openedBy: string | undefined

  constructor(
    private readonly note: (message: string) => void = () => {},
    private readonly now: () => number = Date.now
  ) {}

  failed(error: CoolifyError): void {
    if (error.status === 429) {
      const wait = error.details.retryAfterMs
      this.note(
        `${error.request}: ${error.reason}; waiting ${wait === undefined ? 'a moment' : formatDuration(wait)} as Coolify asks.`
      )
      return
    }
    if (this.downSince !== undefined) return
    this.downSince = this.now()
    this.openedBy = error.request
    this.note(
      `Coolify is unreachable since ${new Date(this.downSince).toISOString().slice(11, 19)} UTC (${error.request}: ${error.reason}); trying again until \`timeout\`.`
    )
  }

  /**
   * `request` was answered. Other routes may answer while the failing one does not (a proxy
   * refusing only POST /deploy): only the request that began the outage ends it.
   */
  answered(request: string): void {
    if (this.downSince === undefined || request !== this.openedBy) return
    this.note(`Coolify answers again, after ${formatDuration(this.now() - this.downSince)}.`)
    this.downSince = undefined
  }
}
