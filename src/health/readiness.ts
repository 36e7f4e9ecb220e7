/**
 * The words health and startup checks share: what a check found, which reads of Coolify's status
 * count (only those it refreshed after the change), and which status means up.
 */

/** Coolify's `Date` header and timestamps are to the second. */
const DATE_RESOLUTION_MS = 1000

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

  /** `endedAt`: when the change ended on Coolify's clock, when that is known. */
  constructor(endedAt?: number) {
    this.#since = endedAt === undefined ? undefined : nextSecond(endedAt)
  }

  counts(look: Look): boolean {
    this.#since ??=
      look.answeredAt !== undefined
        ? nextSecond(look.answeredAt)
        : (look.refreshedAt ?? Number.NEGATIVE_INFINITY) + 1
    return look.refreshedAt !== undefined && look.refreshedAt >= this.#since
  }
}

/**
 * Coolify's timestamps and `Date` keep whole seconds: a refresh within the second something ended
 * reads the same as one after it, so a refresh counts from the next whole second on.
 */
function nextSecond(ms: number): number {
  return Math.floor(ms / DATE_RESOLUTION_MS) * DATE_RESOLUTION_MS + DATE_RESOLUTION_MS
}
