import type { CoolifyClient } from '../coolify/client.js'
import { timeOf } from '../coolify/dates.js'
import { CoolifyError } from '../coolify/errors.js'
import { sleep } from '../coolify/pacing.js'
import type { ApplicationSummary } from '../coolify/types.js'
import { linked } from '../signals.js'

/** One read of an application in Coolify. */
export interface AppRead {
  app: ApplicationSummary
  /** When Coolify answered (`Date`), on its clock. */
  answeredAt?: number
}

/** One read of an application's status in Coolify. */
export interface AppLook {
  /** Coolify's status word (`running:healthy`…), undefined when it gave none. */
  status?: string
  /** When Coolify last refreshed it from the containers (`last_online_at`), on its clock. */
  refreshedAt?: number
  /** When Coolify answered (`Date`), on its clock. */
  answeredAt?: number
}

interface Waiting {
  resolve: (read: AppRead) => void
  reject: (error: unknown) => void
  signal: AbortSignal
}

/**
 * The applications in Coolify, for all rollouts: their names and URLs, and their status for the
 * health checks. The reads due at the same turn, whatever they are for, share one request — of
 * the application alone, or the list when several wait — so thirty applications finishing
 * together cost one request, not thirty. The read goes on under the step's signal while anyone
 * waits for it: a reader whose own time ran out stops waiting, the others do not.
 */
export class ApplicationReads {
  readonly #waiting = new Map<string, Waiting[]>()
  #reading = false
  /** Told when every application expected waits for the turn. */
  #allWaiting: (() => void) | undefined

  constructor(
    private readonly client: CoolifyClient,
    /** Waits for the next turn among the step's reads of Coolify. */
    private readonly turn: (signal: AbortSignal) => Promise<void>,
    /** The step's signal: the shared reads are made under it. */
    private readonly signal: AbortSignal,
    /** How many applications may still be read: their health checks are under way or ahead. */
    private readonly expected: () => number = () => 1,
    /** Longest a turn waits for the others to be due too. */
    private readonly gatherMs = 0
  ) {}

  /** The application as Coolify gives it, in the next turn; rejected once `signal` aborts. */
  read(appUuid: string, signal: AbortSignal): Promise<AppRead> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(ended(signal))
      signal.addEventListener('abort', () => reject(ended(signal)), { once: true })
      const waiting = this.#waiting.get(appUuid) ?? []
      waiting.push({ resolve, reject, signal })
      this.#waiting.set(appUuid, waiting)
      if (this.#waiting.size >= this.expected()) this.#allWaiting?.()
      if (!this.#reading) void this.readAll()
    })
  }

  /** The application's status, with when Coolify refreshed it. */
  async status(appUuid: string, signal: AbortSignal): Promise<AppLook> {
    const { app, answeredAt } = await this.read(appUuid, signal)
    return {
      status: typeof app.status === 'string' ? app.status : undefined,
      refreshedAt: timeOf(app.last_online_at),
      answeredAt
    }
  }

  /** Reads for everyone waiting once the turn comes, then again for any who came meanwhile. */
  private async readAll(): Promise<void> {
    this.#reading = true
    try {
      await this.gather()
      await this.turn(this.signal)
    } catch (error) {
      void this.settle(this.take(), () => Promise.reject(error))
      this.#reading = false
      return
    }
    const batch = this.take()
    // Nobody left waiting for it: the read stops too.
    const waiters = [...batch.values()].flat()
    const abandoned = new AbortController()
    const leave = (): void => {
      if (waiters.every(waiter => waiter.signal.aborted)) abandoned.abort()
    }
    for (const waiter of waiters) waiter.signal.addEventListener('abort', leave, { once: true })
    leave()
    const read = linked([this.signal, abandoned.signal])
    try {
      await this.settle(batch, () => readDated(this.client, [...batch.keys()], read.signal))
    } finally {
      read.release()
    }
    this.#reading = false
    if (this.#waiting.size > 0) void this.readAll()
  }

  /**
   * Deployments that end together are read for the last time a few milliseconds apart, so their
   * health checks come due apart too: the first due waits a moment for the others.
   */
  private async gather(): Promise<void> {
    if (this.#waiting.size >= this.expected() || this.gatherMs <= 0) return
    const all = new Promise<void>(resolve => (this.#allWaiting = resolve))
    try {
      await Promise.race([all, sleep(this.gatherMs, this.signal)])
    } finally {
      this.#allWaiting = undefined
    }
  }

  private take(): Map<string, Waiting[]> {
    const batch = new Map(this.#waiting)
    this.#waiting.clear()
    return batch
  }

  private async settle(
    batch: Map<string, Waiting[]>,
    read: () => Promise<{ apps: Array<ApplicationSummary | undefined>; date?: number }>
  ): Promise<void> {
    try {
      const { apps, date } = await read()
      for (const [uuid, waiting] of batch) {
        const app =
          apps.find(item => item?.uuid === uuid) ?? (batch.size === 1 ? apps[0] : undefined)
        for (const { resolve, reject } of waiting) {
          if (!app) reject(notListed(uuid))
          else resolve({ app, answeredAt: date })
        }
      }
    } catch (error) {
      for (const waiting of batch.values()) for (const { reject } of waiting) reject(error)
    }
  }
}

/** Applications of Coolify, with the time it answered: one read for one, the list for several. */
async function readDated(
  client: CoolifyClient,
  uuids: readonly string[],
  signal: AbortSignal
): Promise<{ apps: Array<ApplicationSummary | undefined>; date?: number }> {
  if (uuids.length === 1) {
    const { body, date } = await client.getApplicationDated(uuids[0], signal)
    return { apps: [body], date }
  }
  const { body, date } = await client.listApplicationsDated(signal)
  return { apps: Array.isArray(body) ? body : [], date }
}

/** Why a reader stopped waiting: its time ran out (said as the client says it), or the run's cancel. */
function ended(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason
  if (!(reason instanceof DOMException && reason.name === 'TimeoutError')) return reason
  return new CoolifyError('GET /applications', 'Coolify did not answer in the time it had', '', {
    transient: true,
    unanswered: true,
    cutOff: true
  })
}

function notListed(uuid: string): CoolifyError {
  return new CoolifyError(
    'GET /applications',
    `application ${uuid} is not in the list Coolify gave`,
    '',
    { transient: true }
  )
}
