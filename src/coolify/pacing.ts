import { setTimeout as sleepFor } from 'node:timers/promises'
import { formatDuration } from '../time/duration.js'
import { CoolifyError } from './errors.js'

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

/** Coolify's limiter (Laravel's `throttle:api`): a fixed window opened by its first request. */
const WINDOW_MS = 60_000
/** Share of every window polls leave to other tools that use the same token, at the least. */
const RESERVE_SHARE = 0.2
/**
 * Share of every window polls leave, at the most, however much the reads still to come need: the
 * polls that find what has ended must go on too.
 */
const MOST_HELD_SHARE = 0.5
/** Past the window's estimated end, a little more for the server's clock and the way there. */
const RESET_MARGIN_MS = 250
/** How long to wait after a refusal that names no `Retry-After`. */
const BLIND_WAIT_MS = 1000

/** What is left of the current window, as the answers told it. */
export interface WindowBudget {
  /** Requests polls may still spend in this window: what is left, less what is held back. */
  spare: number
  /** What polls leave alone in this window and reads that can end a following may spend. */
  held: number
  /** Until the window is over and its budget counts anew. */
  endsInMs: number
}

/**
 * Coolify's rate limit as the server counts it, for every request to one Coolify user (whose
 * tokens share one limit). Laravel's fixed window: the first request opens it, every request
 * counts until it expires a minute later, a refused one does not. The gate learns the limit and
 * the window from `X-RateLimit-Limit` and `X-RateLimit-Remaining` (`Remaining` = limit − 1 opens a
 * window; a jump back up means a new one, opened by someone else), charges each request it lets
 * through, and holds a request only when the window has nothing left for it, or after a 429 until
 * its `Retry-After`; never past the end of the window. Polls leave part of every window alone: what
 * the reads still to come need to end what is followed (`holdBack`), a fifth of the window at the
 * least (for other tools on the same token), half at the most. A read whose answer can end a
 * following, a trigger and a cancel may spend it.
 */
export class RateGate {
  /** The per-minute limit the server last announced. */
  limitPerMinute: number | undefined
  /** Left in the current window, less this client's requests on their way; unknown at first. */
  private left: number | undefined
  /** When the current window is over, at the latest. */
  private windowEnd = 0
  /** The lowest `Remaining` answered in the current window. */
  private lowest = Infinity
  private inFlight = 0
  private blockedUntil = 0
  /** What the followers say their reads still to come need, each asked anew every time. */
  private readonly needs = new Set<() => number>()

  constructor(
    private readonly now: () => number = Date.now,
    private readonly wait: (ms: number, signal?: AbortSignal) => Promise<void> = sleep
  ) {}

  /** Holds back from polls what `need` says, asked anew each time, from now on. */
  holdBack(need: () => number): void {
    this.needs.add(need)
  }

  /**
   * Resolves when a request may go out, and charges it to the window. Polls (`read: true`) leave
   * what is held back alone; a trigger, a cancel or a read that can end a following may spend it.
   */
  async ready(signal?: AbortSignal, read = false): Promise<void> {
    for (;;) {
      const now = this.now()
      if (now < this.blockedUntil) {
        await this.wait(this.blockedUntil - now, signal)
        continue
      }
      this.expire(now)
      if (this.left === undefined || this.left > (read ? this.reserve() : 0)) {
        if (this.left !== undefined) this.left--
        this.inFlight++
        return
      }
      // The window is spent for this request: its end gives the budget back.
      await this.wait(Math.max(1, this.windowEnd - now), signal)
    }
  }

  /** A request let through got no answer: it may not have counted, but it is on its way no more. */
  unanswered(): void {
    this.inFlight = Math.max(0, this.inFlight - 1)
  }

  /** Learns from an answer's rate-limit headers; `retryAfterMs` is set on a 429. */
  observe(limit: string | undefined, remaining: string | undefined, retryAfterMs?: number): void {
    const now = this.now()
    const before = this.inFlight
    this.inFlight = Math.max(0, this.inFlight - 1)
    const max = Number(limit)
    if (limit !== undefined && Number.isFinite(max) && max > 0) this.limitPerMinute = max
    if (retryAfterMs !== undefined) {
      // Refused, and not counted: nothing goes out before Retry-After, when Laravel's window ends.
      const wait = retryAfterMs > 0 ? retryAfterMs : BLIND_WAIT_MS
      this.blockedUntil = Math.max(this.blockedUntil, now + wait)
      this.windowEnd = this.blockedUntil
      this.left = 0
      this.lowest = 0
      return
    }
    const answered = Number(remaining)
    if (remaining === undefined || remaining === '' || !Number.isFinite(answered)) return
    this.expire(now)
    const opened =
      this.left === undefined ||
      this.lowest === Infinity ||
      answered === (this.limitPerMinute ?? Infinity) - 1 ||
      // Answers may come back out of order, by as many as were on their way together.
      answered > this.lowest + before
    if (opened) {
      // Opened at the latest now: counting its end from now never lets a request out too early.
      this.windowEnd = now + WINDOW_MS + RESET_MARGIN_MS
      this.lowest = answered
      this.left = answered - this.inFlight
      return
    }
    this.lowest = Math.min(this.lowest, answered)
    this.left = Math.min(this.left!, answered - this.inFlight)
  }

  /** What the current window has left for reads, when the answers told it. */
  budget(): WindowBudget | undefined {
    const now = this.now()
    this.expire(now)
    if (this.left === undefined) return undefined
    const held = this.reserve()
    return {
      spare: Math.max(0, this.left - held),
      held: Math.min(held, Math.max(0, this.left)),
      endsInMs: Math.max(0, Math.max(this.windowEnd, this.blockedUntil) - now)
    }
  }

  /**
   * Past the window's end the whole limit is there again, for whoever opens the next window; the
   * first answer in it tells when that was.
   */
  private expire(now: number): void {
    if (this.left === undefined || now < this.windowEnd) return
    this.left = (this.limitPerMinute ?? Infinity) - this.inFlight
    this.lowest = Infinity
    this.windowEnd = now + WINDOW_MS + RESET_MARGIN_MS
  }

  /**
   * What polls leave alone: what the reads still to come need to end what is followed, so that
   * polls early in a window do not leave the last ends waiting for the next one.
   */
  private reserve(): number {
    const limit = this.limitPerMinute ?? 0
    let needed = 0
    for (const need of this.needs) needed += need()
    const most = Math.floor(limit * MOST_HELD_SHARE)
    return Math.max(Math.ceil(limit * RESERVE_SHARE), Math.min(needed, most))
  }
}

/**
 * How long an address that never answered is tried: a name that does not resolve or a port that
 * refuses from the start is most likely a wrong `coolify-url`, not an outage worth `timeout`.
 */
export const FIRST_ANSWER_GRACE_MS = 60_000

/**
 * Says once that Coolify stopped answering, since when and why, and once that it answers again:
 * an outage of minutes is a few lines in the log, not one per attempt. An address that never
 * answered anything and cannot be connected to is given up after FIRST_ANSWER_GRACE_MS.
 */
export class Reachability {
  private downSince: number | undefined
  /** The request whose failure began the outage: its success ends it. */
  private openedBy: string | undefined
  /** Any HTTP answer came, even a refusal: the address is right, and outages get `timeout`. */
  private heard = false

  constructor(
    private readonly note: (message: string) => void = () => {},
    private readonly now: () => number = Date.now,
    /** The address, as the user gave it, for the message that gives up on it. */
    private readonly address = 'Coolify'
  ) {}

  /** Coolify's API answered, whatever it said (a web page instead does not count). */
  answeredAtAll(): void {
    this.heard = true
  }

  /**
   * The same failure, no longer worth retrying, once the address never answered anything and
   * could not be connected to for FIRST_ANSWER_GRACE_MS; undefined while it is still worth it.
   */
  givenUp(error: CoolifyError, attempts: number): CoolifyError | undefined {
    if (!this.suspect(error) || this.downSince === undefined) return undefined
    const waited = this.now() - this.downSince
    if (waited < FIRST_ANSWER_GRACE_MS) return undefined
    const never = error.details.notCoolify ? "does not answer as Coolify's API" : 'never answered'
    return new CoolifyError(
      error.request,
      `${this.address} ${never}: ${error.reason}, ${attempts} attempts in ${formatDuration(waited)}`,
      error.hint,
      { ...error.details, transient: false }
    )
  }

  /**
   * A failure that says the address may be wrong, as long as Coolify's API never answered: no
   * connection at all, or a web page where its JSON was expected.
   */
  private suspect(error: CoolifyError): boolean {
    return !this.heard && (error.details.unsent === true || error.details.notCoolify === true)
  }

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
    if (this.suspect(error)) {
      this.note(
        `${this.address} does not answer (${error.request}: ${error.reason}); trying again for ${formatDuration(FIRST_ANSWER_GRACE_MS)}, then giving up.`
      )
      return
    }
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
