/**
 * Undo (cancels, pins) and the report, after everything else; with the process's own start and
 * exit, the step ends within `timeout` + 5 s.
 */
export const GRACE_MS = 4000
/** After a cancelled run's SIGINT the runner waits 7.5 s before SIGTERM: all must be done by then. */
export const CANCEL_GRACE_MS = 6500

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
 */
export class Budget {
  /** When `timeout` passes (epoch ms). */
  readonly deadline: number
  readonly #deploy: AbortSignal
  #cancelledAt: number | undefined

  constructor(
    timeoutMs: number,
    private readonly healthTimeoutMs: number,
    /** The workflow run's cancel: it ends every share but the grace. */
    readonly cancelled: AbortSignal,
    private readonly now: () => number = Date.now,
    private readonly timer: Timer = ms => AbortSignal.timeout(ms)
  ) {
    this.deadline = now() + timeoutMs
    this.#deploy = AbortSignal.any([cancelled, timer(timeoutMs)])
    cancelled.addEventListener('abort', () => (this.#cancelledAt = now()), { once: true })
  }

  /** Until `timeout`: triggering, following, verifying. */
  deploy(): AbortSignal {
    return this.#deploy
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
    const own = this.timer(this.healthTimeoutMs)
    const outer = share ?? this.timer(this.left())
    return {
      signal: AbortSignal.any([this.cancelled, own, outer]),
      cutShort: () => outer.aborted && !own.aborted && !this.cancelled.aborted
    }
  }

  /** A rollback starting now: what is left of `timeout`, and never less than `health-timeout`. */
  rollback(): AbortSignal {
    return AbortSignal.any([
      this.cancelled,
      this.timer(Math.max(this.left(), this.healthTimeoutMs))
    ])
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
        : this.#cancelledAt + CANCEL_GRACE_MS
    return this.timer(Math.max(0, Math.min(ms, end - now)))
  }
}
