import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError } from '../coolify/errors.js'
import { sleep } from '../coolify/pacing.js'
import type { DeploymentDetail } from '../coolify/types.js'

/** A running deployment's row, or `left`: it is no longer among the running ones, so it ended. */
export type RunningRead = { detail: DeploymentDetail } | { left: true }

interface Waiting {
  resolve: (read: RunningRead) => void
  reject: (error: unknown) => void
}

/**
 * Reads of running deployments, for all rollouts: the reads due at the same turn share one
 * request — a deployment's own read when it is alone, else GET /deployments, every running
 * deployment of the team in one answer — so thirty deployments cost one read a turn, not thirty.
 * A deployment missing from that list has ended: its follower reads it once by uuid, for its final
 * status and last lines. A server without the list, or a token it refuses, is read by uuid.
 */
export class DeploymentReads {
  readonly #waiting = new Map<string, Waiting[]>()
  #reading = false
  /** Told when every deployment followed waits for the turn. */
  #allWaiting: (() => void) | undefined
  /** False once the list was refused: reads by uuid from then on. */
  #listed = true

  constructor(
    private readonly client: CoolifyClient,
    /** Waits for the next turn among the step's reads of Coolify. */
    private readonly turn: (signal: AbortSignal) => Promise<void>,
    /** How many deployments are followed through these reads now. */
    private readonly followed: () => number = () => 1,
    /** Longest a turn waits for the others to be due too. */
    private readonly gatherMs = 0
  ) {}

  /** Requests a turn costs while `running` deployments are followed. */
  perTurn(running: number): number {
    return this.#listed ? Math.min(running, 1) : running
  }

  /** The deployment's own read, in its turn. */
  async one(uuid: string, signal: AbortSignal): Promise<DeploymentDetail> {
    await this.turn(signal)
    return this.client.getDeployment(uuid, signal)
  }

  /**
   * A read of a deployment that has ended (it left the running list, or its closing lines are
   * due): it ends the step's work on it, so it goes as soon as the window has any request left,
   * the share kept for other tools included, rather than waiting for a turn.
   */
  final(uuid: string, signal: AbortSignal): Promise<DeploymentDetail> {
    return this.client.getDeployment(uuid, signal, { final: true })
  }

  /** The deployment as the next turn's reads find it, while it runs. */
  running(uuid: string, signal: AbortSignal): Promise<RunningRead> {
    if (!this.#listed) return this.one(uuid, signal).then(detail => ({ detail }))
    return new Promise((resolve, reject) => {
      const waiting = this.#waiting.get(uuid) ?? []
      waiting.push({ resolve, reject })
      this.#waiting.set(uuid, waiting)
      if (this.#waiting.size >= this.followed()) this.#allWaiting?.()
      if (!this.#reading) void this.readAll(signal)
    })
  }

  /** Reads for everyone waiting once the turn comes, then again for any who came meanwhile. */
  private async readAll(signal: AbortSignal): Promise<void> {
    this.#reading = true
    try {
      await this.gather(signal)
      await this.turn(signal)
    } catch (error) {
      void this.settle(this.take(), () => Promise.reject(error))
      this.#reading = false
      return
    }
    const batch = this.take()
    const uuids = [...batch.keys()]
    await this.settle(batch, async () => {
      if (uuids.length === 1) return [{ detail: await this.client.getDeployment(uuids[0], signal) }]
      const rows = this.#listed ? await this.list(signal) : undefined
      if (!rows) {
        // Each its own read, each in its turn, as the budget allows.
        return Promise.all(uuids.map(async uuid => ({ detail: await this.one(uuid, signal) })))
      }
      return uuids.map(uuid => {
        const detail = rows.find(row => (row?.deployment_uuid ?? row?.uuid) === uuid)
        return detail ? { detail } : { left: true as const }
      })
    })
    this.#reading = false
    if (this.#waiting.size > 0) void this.readAll(signal)
  }

  /**
   * Deployments followed together drift apart by a few milliseconds: the first due waits a moment
   * for the others, so that one read serves them all.
   */
  private async gather(signal: AbortSignal): Promise<void> {
    if (this.#waiting.size >= this.followed() || this.gatherMs <= 0) return
    const all = new Promise<void>(resolve => (this.#allWaiting = resolve))
    try {
      await Promise.race([all, sleep(this.gatherMs, signal)])
    } finally {
      this.#allWaiting = undefined
    }
  }

  /** The running deployments; undefined when the server refuses the list or has none to give. */
  private async list(signal: AbortSignal): Promise<DeploymentDetail[] | undefined> {
    try {
      const rows = await this.client.runningDeployments(signal)
      if (rows) return rows
    } catch (error) {
      // A failure that would pass (an outage) fails the read as any other read; the rest says
      // the list is not there for this token or server, and the read by uuid tells what it must.
      if (!(error instanceof CoolifyError) || error.details.transient || signal.aborted) throw error
    }
    this.#listed = false
    return undefined
  }

  private take(): Map<string, Waiting[]> {
    const batch = new Map(this.#waiting)
    this.#waiting.clear()
    return batch
  }

  private async settle(
    batch: Map<string, Waiting[]>,
    read: () => Promise<RunningRead[]>
  ): Promise<void> {
    try {
      const reads = await read()
      let index = 0
      for (const waiting of batch.values()) {
        const found = reads[index++]
        for (const { resolve } of waiting) resolve(found)
      }
    } catch (error) {
      for (const waiting of batch.values()) for (const { reject } of waiting) reject(error)
    }
  }
}
