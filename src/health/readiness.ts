/**
 * The words health and startup checks share: what a check found, which reads of Coolify's status
 * count (only those it refreshed after the change), and which status means up.
 */

/** Coolify's `Date` header and timestamps are to the second. */
const DATE_RESOLUTION_MS = 1000
/** How long a refresh within the second a change ended waits for a newer one before it counts. */
const AMBIGUOUS_WAIT_MS = 3000

/**
 * What a health check found: up, with the URL that answered as lines show it (`shownUrl`), or the
 * last problem seen, and whether it was only unreadable.
 */
export type Health =
  | { up: true; url?: string }
  | {
      up: false
      problem: string
      /** Coolify's status could not be read at all, and no URL said otherwise: nothing is known. */
      unknown: boolean
    }

/** One read of a status in Coolify, with the times that say whether it is fresh. */
export interface Look {
  /** Coolify's status word (`running:healthy`…), undefined when it gave none. */
  status?: string
  /** When Coolify last refreshed the status from the containers (`last_online_at`), on its clock. */
  refreshedAt?: number
  /** When Coolify answered (`Date`), on its clock. */
  answeredAt?: number
  /**
   * An application's first URL in the same read: empty when Coolify gave it none, undefined when
   * the read does not tell (services and databases).
   */
  appUrl?: string
}

/**
 * `running` with a health check that passed, or none (`unknown`); not while the check is still
 * `starting`, nor while it fails.
 */
export function isUp(status: string): boolean {
  const [state, health] = status.trim().toLowerCase().split(':')
  return state === 'running' && health !== 'starting' && health !== 'unhealthy'
}

/**
 * Which looks count: those whose status Coolify refreshed after the start ended, judged on
 * Coolify's own clock. The start has ended by the first look that is not `starting` (a service's
 * reads say `starting` while Coolify's start command runs; a database's start is not visible, so
 * from the first look), so a refresh counts from the second after that look's answer. Without a
 * `Date` on the answer, it must be later than the refresh that look showed.
 */
export class Freshness {
  #since: number | undefined
  /** The second the change was last seen under way: a refresh within it is ambiguous. */
  readonly #ambiguousFrom: number | undefined

  /**
   * `endedAt`: when the change was last seen under way, on Coolify's clock, when that is known.
   * A refresh in a later second is proof. One within that same second may have come before the
   * end or after it: it counts once Coolify has answered for `AMBIGUOUS_WAIT_MS` past that second
   * without a newer one — a scheduled check that saw the old container is followed by the check
   * Coolify runs as a deployment finishes, while on a Sentinel server that check, often within
   * the same second, is the only refresh an unchanged status gets.
   */
  constructor(endedAt?: number) {
    this.#since = endedAt === undefined ? undefined : nextSecond(endedAt)
    this.#ambiguousFrom = endedAt === undefined ? undefined : wholeSecond(endedAt)
  }

  counts(look: Look): boolean {
    this.#since ??=
      look.answeredAt !== undefined
        ? nextSecond(look.answeredAt)
        : (look.refreshedAt ?? Number.NEGATIVE_INFINITY) + 1
    if (look.refreshedAt === undefined) return false
    if (look.refreshedAt >= this.#since) return true
    return (
      this.#ambiguousFrom !== undefined &&
      look.refreshedAt >= this.#ambiguousFrom &&
      look.answeredAt !== undefined &&
      look.answeredAt >= this.#since + AMBIGUOUS_WAIT_MS
    )
  }
}

/** Coolify's timestamps and `Date` keep whole seconds: the start of the second `ms` falls in. */
function wholeSecond(ms: number): number {
  return Math.floor(ms / DATE_RESOLUTION_MS) * DATE_RESOLUTION_MS
}

/** The start of the second after the one `ms` falls in: a refresh from then on is later. */
function nextSecond(ms: number): number {
  return wholeSecond(ms) + DATE_RESOLUTION_MS
}
