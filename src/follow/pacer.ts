import { sleep, type WindowBudget } from '../coolify/pacing.js'

/** How far ahead the reads the followers' cadence will ask for are planned. */
const PLAN_AHEAD_MS = 10_000

/**
 * When the next read may go, planned against what Coolify's rate-limit window has left (the
 * client's gate holds part of it back from polls, and never lets a request past it). While the
 * window has more than the followers' cadence needs in the next seconds, a read due goes at once,
 * however many are due together (a burst of deployments ending); nearly spent, what is left is
 * spread until the window's end; spent, reads wait for that end, and no longer.
 */
export class ReadPacer {
  /** When the last read of a nearly spent window was let through. */
  private last = -Infinity

  constructor(
    private readonly budget: () => WindowBudget | undefined,
    /** Reads a millisecond the followers ask for while deployments run. */
    private readonly cadence: () => number,
    private readonly now: () => number = Date.now
  ) {}

  /**
   * Resolves at the next turn. A `final` read, whose answer can end a following, may spend what
   * the window holds back from polls.
   */
  turn(signal: AbortSignal, final = false): Promise<void> {
    return sleep(this.take(final), signal)
  }

  /** Takes the next turn; how long until it comes. */
  take(final = false): number {
    const window = this.budget()
    if (!window) return 0
    const spare = window.spare + (final ? window.held : 0)
    if (spare <= 0) return window.endsInMs
    const due = Math.ceil(Math.min(window.endsInMs, PLAN_AHEAD_MS) * this.cadence())
    if (spare > due) return 0
    const now = this.now()
    const at = Math.max(now, this.last + Math.ceil(window.endsInMs / (spare + 1)))
    this.last = at
    return at - now
  }
}
