/**
 * Deadlines and combined signals that a garbage collection cannot disarm. On Node 20 the signals
 * that AbortSignal's own `timeout` and `any` make are held only weakly: once collected they never
 * abort (nodejs/node#57736), and a step with a chatty build log runs past its `timeout`. Here a
 * plain timer holds its controller, and each parent signal's listener holds its child's, until
 * they fire or are let go.
 */
import { setMaxListeners } from 'node:events'

/** Node fires a longer timer at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

/** A signal with what keeps it armed: `release` stops its timer and unhooks it from its parents. */
export interface Linked {
  readonly signal: AbortSignal
  release(): void
}

/**
 * A controller whose signal any number of requests may listen to at once: a step reads many
 * deployments together, and Node 20 would print a MaxListenersExceededWarning past ten.
 */
export function sharedController(): AbortController {
  const controller = new AbortController()
  // Not 0 ("no limit" for an EventEmitter): on an EventTarget, getMaxListeners() then throws, and
  // undici's fetch (GitHub's client) calls it on every request's signal.
  setMaxListeners(Infinity, controller.signal)
  return controller
}

/** Aborts after `ms` with a TimeoutError, as AbortSignal's `timeout` does; no hold on the process. */
export function deadline(ms: number): Linked {
  return linked([], ms)
}

/**
 * Aborts with the first of `parents` to abort, or after `ms` when given, with that one's reason.
 * Once aborted (or released) it leaves its parents alone: a long-lived parent gathers no listeners.
 */
export function linked(parents: readonly AbortSignal[], ms?: number): Linked {
  const controller = sharedController()
  let timer: NodeJS.Timeout | undefined
  const release = (): void => {
    clearTimeout(timer)
    for (const parent of parents) parent.removeEventListener('abort', follow)
  }
  const follow = (event: Event): void => {
    release()
    controller.abort((event.target as AbortSignal).reason)
  }
  const first = parents.find(parent => parent.aborted)
  if (first) {
    controller.abort(first.reason)
    return { signal: controller.signal, release }
  }
  for (const parent of parents) parent.addEventListener('abort', follow)
  if (ms !== undefined) {
    timer = setTimeout(
      () => {
        release()
        controller.abort(
          new DOMException('The operation was aborted due to timeout', 'TimeoutError')
        )
      },
      Math.min(Math.max(0, ms), LONGEST_TIMER_MS)
    )
    timer.unref()
  }
  return { signal: controller.signal, release }
}
