/**
 * Undo (cancels, pins) and the report, after everything else; with the process's own start and
 * exit, the step ends within `timeout` + 5 s.
 */
export const GRACE_MS = 4000
/** After a cancelled run's SIGINT the runner waits 7.5 s before SIGTERM: all must be done by then. */
export const CANCEL_GRACE_MS = 6500

import { ActionError } from '../errors.js'
import { deadline, linked, sharedController, type Linked } from './signals.js'

/** Makes a signal that aborts after `ms`; tests hand in their own clock. */
export type Timer = (ms: number) => AbortSignal

/** The time a health check has, and why it ended. */
export interface HealthWindow {
  signal: AbortSignal
  /** Ended by the step's (or the rollback's) time before `health-timeout` ran out. */
  cutShort: () => boolean
}

/**
 * The step's time, handed out as signals:
 * - the deploy share: the deployments have until `timeout` (or the run's cancel);
 * - the post-deploy share, per rollout from when its deployment ended: its health check has
 *   `health-timeout`, within `timeout`; its rollback at least `health-timeout` of its own, past
 *   `timeout` if need be, since a rollback cut short helps nobody;
 * - the grace share: `GRACE_MS` after `timeout` for undoing and reporting, whatever else hangs.
 *
 * The budget holds every timer and combined signal it hands out (see signals.ts: on Node 20 a
 * deadline nobody holds never fires), until `release()`.
 */
export class Budget {
  /** When `timeout` passes (epoch ms). */
  readonly deadline: number
  readonly #deploy: AbortSignal
  readonly #held: Linked[] = []
  readonly #timer: Timer
  #cancelledAt: number | undefined
  /** Aborted when the step is over, before the transport closes. */
  readonly #over = sharedController()
  readonly #lifetime: AbortSignal

  constructor(
    timeoutMs: number,
    private readonly healthTimeoutMs: number,
    /** The workflow run's cancel: it ends every share but the grace. */
    readonly cancelled: AbortSignal,
    private readonly now: () => number = Date.now,
    timer?: Timer,
    /** The host's time between a cancel's signal and its kill. */
    private readonly cancelGraceMs = CANCEL_GRACE_MS
  ) {
    this.#timer = timer ?? (ms => this.#hold(deadline(ms)))
    this.deadline = now() + timeoutMs
    this.#deploy = this.#any([cancelled, this.#timer(timeoutMs)])
    cancelled.addEventListener('abort', () => (this.#cancelledAt = now()), { once: true })
    this.#lifetime = this.#any([cancelled, this.#over.signal])
  }

  /**
   * The step's whole life: what is shared by everyone for as long as anyone needs it (reads many
   * wait for) goes under it, and ends with the run's cancel or with the step, so that nothing
   * outlives it and keeps the process waiting.
   */
  lifetime(): AbortSignal {
    return this.#lifetime
  }

  /** Until `timeout`: triggering, following, verifying. */
  deploy(): AbortSignal {
    return this.#deploy
  }

  /** What cancelled the run, in the host's words (see Host.cancelled), without a final period. */
  why(): string {
    const reason: unknown = this.cancelled.reason
    return (reason instanceof Error ? reason.message : 'The run was cancelled').replace(/\.$/, '')
  }

  /** Time left until `timeout` (ms, never negative). */
  left(): number {
    return Math.max(0, this.deadline - this.now())
  }

  /**
   * A health check starting now: `health-timeout`, cut short by `timeout` — or by `share`, the
   * rollback's time, for a rollback. `cutShort` says, once it ended, whether that cut it before
   * `health-timeout` ran out.
   */
  health(share?: AbortSignal): HealthWindow {
    const own = this.#timer(this.healthTimeoutMs)
    const outer = share ?? this.#timer(this.left())
    return {
      signal: this.#any([this.cancelled, own, outer]),
      cutShort: () => outer.aborted && !own.aborted && !this.cancelled.aborted
    }
  }

  /** A rollback starting now: what is left of `timeout`, and never less than `health-timeout`. */
  rollback(): AbortSignal {
    return this.#any([this.cancelled, this.#timer(Math.max(this.left(), this.healthTimeoutMs))])
  }

  /**
   * Undo and report, at most `ms`: everything in the grace share ends `GRACE_MS` after `timeout`
   * (after now, once past it), or within the runner's grace time once the run was cancelled.
   */
  grace(ms = Infinity): AbortSignal {
    const now = this.now()
    const end =
      this.#cancelledAt === undefined
        ? Math.max(this.deadline, now) + GRACE_MS
        : this.#cancelledAt + this.cancelGraceMs
    return this.#timer(Math.max(0, Math.min(ms, end - now)))
  }

  /** Stops every timer and unhooks every signal handed out: the step is over. */
  release(): void {
    this.#over.abort(new ActionError('the step is over'))
    for (const held of this.#held.splice(0)) held.release()
  }

  #any(signals: readonly AbortSignal[]): AbortSignal {
    return this.#hold(linked(signals))
  }

  #hold(held: Linked): AbortSignal {
    this.#held.push(held)
    return held.signal
  }
}
