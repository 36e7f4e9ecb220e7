import type { Answer, CoolifyClient, ReadKind } from '../coolify/client.js'
import { CoolifyError } from '../coolify/errors.js'
import type { EscapedLog } from '../coolify/escaped-log.js'
import type { DeploymentDetail } from '../coolify/types.js'
import { Batch } from './batch.js'

/** How the reads of running deployments go: as polls. */
const POLL: ReadKind = { final: false }

/**
 * A running deployment's row (with when Coolify answered, read alone, and what of the answer on
 * the wire was its own), or `left`: it is no longer among the running ones, so it ended.
 */
export type RunningRead = (OwnRead & { answeredAt?: number }) | { left: true }

/**
 * A deployment read by uuid: its row, what the answer took on the wire, and its log as it stands
 * in the answer when 4.x's.
 */
export interface OwnRead {
  detail: DeploymentDetail
  wireBytes?: number
  log?: EscapedLog
}

/**
 * Reads of running deployments, for all rollouts: the reads due at the same turn share one
 * request — a deployment's own read when it is alone, else GET /deployments, every running
 * deployment of the team in one answer — so thirty deployments cost one read a turn, not thirty.
 * A deployment missing from that list has ended: its follower reads it once by uuid, for its final
 * status and last lines. A server without the list, or a token it refuses, is read by uuid. These
 * reads are polls, whatever has ended: they never spend what the window holds back from them, so
 * that other tools on the token keep their share while deployments run on.
 */
export class DeploymentReads {
  readonly #batch: Batch<string, RunningRead>
  /** False once the list was refused: reads by uuid from then on. */
  #listed = true

  constructor(
    private readonly client: CoolifyClient,
    /** Waits for the next turn among the step's reads of Coolify, as a poll. */
    private readonly turn: (signal: AbortSignal) => Promise<void>,
    /** How many deployments are followed through these reads now. */
    followed: () => number = () => 1,
    /** Longest a turn waits for the others to be due too. */
    gatherMs = 0
  ) {
    this.#batch = new Batch({
      turn,
      read: (uuids, signal) => this.readRunning(uuids, signal),
      expected: followed,
      gatherMs
    })
  }

  /** Requests a turn costs while `running` deployments are followed. */
  perTurn(running: number): number {
    return this.#listed ? Math.min(running, 1) : running
  }

  /** The deployment's own read, in its turn. */
  async one(uuid: string, signal: AbortSignal): Promise<OwnRead> {
    await this.turn(signal)
    const { body, wireBytes, log } = await this.client.getDeploymentDated(uuid, signal, POLL)
    return { detail: body, wireBytes, log }
  }

  /**
   * A read of a deployment that has ended (it left the running list, or its closing lines are
   * due): it ends the step's work on it, so it goes as soon as the window has any request left,
   * the share kept for other tools included, rather than waiting for a turn.
   */
  final(uuid: string, signal: AbortSignal): Promise<Answer<DeploymentDetail>> {
    return this.client.getDeploymentDated(uuid, signal, { final: true })
  }

  /** The deployment as the next turn's reads find it, while it runs. */
  running(uuid: string, signal: AbortSignal): Promise<RunningRead> {
    if (!this.#listed) return this.one(uuid, signal)
    return this.#batch.wait(uuid, signal)
  }

  /** One read for all `uuids`: its own read for one, else the list, else each by uuid. */
  private async readRunning(
    uuids: readonly string[],
    signal: AbortSignal
  ): Promise<(uuid: string) => RunningRead> {
    if (uuids.length === 1) {
      const read = await this.client.getDeploymentDated(uuids[0], signal, POLL)
      return () => ({
        detail: read.body,
        answeredAt: read.date,
        wireBytes: read.wireBytes,
        log: read.log
      })
    }
    const listed = this.#listed ? await this.list(signal) : undefined
    if (!listed) {
      // Each its own read, each in its turn, as the budget allows.
      const reads = await Promise.all(uuids.map(uuid => this.one(uuid, signal)))
      return uuid => reads[uuids.indexOf(uuid)]
    }
    const { rows, wireBytes } = listed
    const logged = (row: DeploymentDetail): number =>
      row && typeof row.logs === 'string' ? row.logs.length : 0
    const total = rows.reduce((sum, row) => sum + logged(row), 0)
    return uuid => {
      const detail = rows.find(row => (row?.deployment_uuid ?? row?.uuid) === uuid)
      if (!detail) return { left: true }
      // Its log's part of the answer: what reading it again costs, whoever else it carries.
      const share = total > 0 && wireBytes !== undefined ? logged(detail) / total : 0
      return { detail, wireBytes: Math.round(share * (wireBytes ?? 0)) }
    }
  }

  /** The running deployments; undefined when the server refuses the list or has none to give. */
  private async list(
    signal: AbortSignal
  ): Promise<{ rows: DeploymentDetail[]; wireBytes?: number } | undefined> {
    try {
      const { body: rows, wireBytes } = await this.client.runningDeploymentsDated(signal, POLL)
      if (rows) return { rows, wireBytes }
    } catch (error) {
      // A failure that would pass (an outage) fails the read as any other read; the rest says
      // the list is not there for this token or server, and the read by uuid tells what it must.
      if (!(error instanceof CoolifyError) || error.details.transient || signal.aborted) throw error
    }
    this.#listed = false
    return undefined
  }
}
