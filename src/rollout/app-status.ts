import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError } from '../coolify/errors.js'
import type { ApplicationSummary } from '../coolify/types.js'

interface Waiting {
  resolve: (status: string | undefined) => void
  reject: (error: unknown) => void
}

/**
 * The applications' status in Coolify, for the health checks of all rollouts: the checks due at
 * the same turn share one read — of the application alone, or the list when several wait — so
 * thirty applications finishing together cost one request, not thirty.
 */
export class AppStatusReader {
  readonly #waiting = new Map<string, Waiting[]>()
  #reading = false

  constructor(
    private readonly client: CoolifyClient,
    /** Waits for the next turn among the step's reads of Coolify. */
    private readonly turn: (signal: AbortSignal) => Promise<void>
  ) {}

  /** The application's status word (`running:healthy`…), undefined when Coolify gave none. */
  read(appUuid: string, signal: AbortSignal): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.#waiting.get(appUuid) ?? []
      waiting.push({ resolve, reject })
      this.#waiting.set(appUuid, waiting)
      if (!this.#reading) void this.readAll(signal)
    })
  }

  /** Reads for everyone waiting once the turn comes, then again for any who came meanwhile. */
  private async readAll(signal: AbortSignal): Promise<void> {
    this.#reading = true
    try {
      await this.turn(signal)
    } catch (error) {
      void this.settle(this.take(), () => Promise.reject(error))
      this.#reading = false
      return
    }
    const batch = this.take()
    await this.settle(batch, () => readApplications(this.client, [...batch.keys()], signal))
    this.#reading = false
    if (this.#waiting.size > 0) void this.readAll(signal)
  }

  private take(): Map<string, Waiting[]> {
    const batch = new Map(this.#waiting)
    this.#waiting.clear()
    return batch
  }

  private async settle(
    batch: Map<string, Waiting[]>,
    read: () => Promise<Array<{ uuid?: string; status?: string } | undefined>>
  ): Promise<void> {
    try {
      const apps = await read()
      for (const [uuid, waiting] of batch) {
        const app =
          apps.find(item => item?.uuid === uuid) ?? (batch.size === 1 ? apps[0] : undefined)
        for (const { resolve, reject } of waiting) {
          if (app) resolve(typeof app.status === 'string' ? app.status : undefined)
          else reject(notListed(uuid))
        }
      }
    } catch (error) {
      for (const waiting of batch.values()) for (const { reject } of waiting) reject(error)
    }
  }
}

/** Applications of Coolify: one read for one application, the list for several. */
export async function readApplications(
  client: CoolifyClient,
  uuids: readonly string[],
  signal: AbortSignal
): Promise<Array<ApplicationSummary | undefined>> {
  if (uuids.length === 1) return [await client.getApplication(uuids[0], signal)]
  const apps = await client.listApplications(signal)
  return Array.isArray(apps) ? apps : []
}

function notListed(uuid: string): CoolifyError {
  return new CoolifyError(
    'GET /applications',
    `application ${uuid} is not in the list Coolify gave`,
    '',
    { transient: true }
  )
}
