import { sleep } from '../coolify/pacing.js'
import { linked, sharedController, type Linked } from '../time/signals.js'

/** How a batch reads, and how long it waits for the reads due with the first one. */
export interface BatchOptions<Key, Result> {
  /** Waits for the next turn among the step's reads of Coolify. */
  turn: (signal: AbortSignal) => Promise<void>
  /** One request for every key waiting: it answers each key, or throws for a key it lacks. */
  read: (keys: Key[], signal: AbortSignal) => Promise<(key: Key) => Result>
  /** How many keys may be waited for: once that many wait, the read goes at once. */
  expected: () => number
  /** Longest the first waiter of a round waits for the others to be due too. */
  gatherMs: number
  /** What a waiter that left is rejected with; its signal's reason unless told. */
  left?: (signal: AbortSignal) => unknown
  /** Sleeps, or rejects once the signal aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
}

interface Waiter<Result> {
  resolve: (result: Result) => void
  reject: (error: unknown) => void
  /** Once it aborts this waiter stops waiting; without it, it waits for the read's end. */
  leave?: AbortSignal
}

/**
 * Reads due at the same turn share one request, so that many followed at once cost one request a
 * turn, not one each. A round gathers the waiters, waits for a turn, reads once for all their keys
 * and answers each, then a new round starts for any who came meanwhile.
 */
export class Batch<Key, Result> {
  readonly #waiting = new Map<Key, Array<Waiter<Result>>>()
  #reading = false
  /** Told when every key expected waits. */
  #allWaiting: (() => void) | undefined
  /** Aborted once every waiter of the round waiting for its turn has left. */
  #abandoned: AbortController | undefined

  constructor(private readonly options: BatchOptions<Key, Result>) {}

  /**
   * `key`'s answer from the next read. A round this call begins goes under `signal`; `leave`, when
   * given, ends this waiter's wait alone, and the read itself once every waiter of it has left.
   */
  wait(key: Key, signal: AbortSignal, leave?: AbortSignal): Promise<Result> {
    return new Promise((resolve, reject) => {
      if (leave?.aborted) return reject(this.#left(leave))
      // A signal waited with read after read (a health check's) must not gather a listener each.
      const done = (): void => leave?.removeEventListener('abort', onLeave)
      const waiter: Waiter<Result> = {
        resolve: result => (done(), resolve(result)),
        reject: error => (done(), reject(error)),
        leave
      }
      const onLeave = (): void => {
        reject(this.#left(leave!))
        this.#forget(key, waiter)
      }
      leave?.addEventListener('abort', onLeave, { once: true })
      this.#waiting.set(key, [...(this.#waiting.get(key) ?? []), waiter])
      if (this.#waiting.size >= this.options.expected()) this.#allWaiting?.()
      if (!this.#reading) void this.#readAll(signal)
    })
  }

  /**
   * A waiter that left before its round's read: the round no longer waits for it, and once
   * nobody is left, the wait for the turn ends too (a turn can be a window's end, a minute away).
   */
  #forget(key: Key, waiter: Waiter<Result>): void {
    const waiters = this.#waiting.get(key)?.filter(other => other !== waiter)
    if (!waiters) return
    if (waiters.length > 0) this.#waiting.set(key, waiters)
    else this.#waiting.delete(key)
    if (this.#waiting.size === 0) this.#abandoned?.abort()
  }

  /** Reads for everyone waiting once the turn comes, then again for any who came meanwhile. */
  async #readAll(signal: AbortSignal): Promise<void> {
    this.#reading = true
    const abandoned = (this.#abandoned = new AbortController())
    const wait = linked([signal, abandoned.signal])
    let turned = true
    let failure: unknown
    try {
      await this.#gather(wait.signal)
      await this.options.turn(wait.signal)
    } catch (error) {
      turned = false
      failure = error
    }
    wait.release()
    this.#abandoned = undefined
    if (!turned) {
      this.#reading = false
      // Everyone left: nobody to answer, unless someone came since.
      if (abandoned.signal.aborted && !signal.aborted) {
        if (this.#waiting.size > 0) void this.#readAll(signal)
        return
      }
      void this.#settle(this.#take(), () => Promise.reject(failure))
      return
    }
    const batch = this.#take()
    const read = readSignal(batch, signal)
    try {
      await this.#settle(batch, () => this.options.read([...batch.keys()], read.signal))
    } finally {
      read.release()
    }
    this.#reading = false
    if (this.#waiting.size > 0) void this.#readAll(signal)
  }

  /**
   * Reads due together still come a few milliseconds apart (deployments that end together are
   * read for the last time apart): the first due waits a moment for the others.
   */
  async #gather(signal: AbortSignal): Promise<void> {
    const { expected, gatherMs } = this.options
    if (this.#waiting.size >= expected() || gatherMs <= 0) return
    const all = new Promise<void>(resolve => (this.#allWaiting = resolve))
    try {
      await Promise.race([all, (this.options.sleep ?? sleep)(gatherMs, signal)])
    } finally {
      this.#allWaiting = undefined
    }
  }

  #take(): Map<Key, Array<Waiter<Result>>> {
    const batch = new Map(this.#waiting)
    this.#waiting.clear()
    return batch
  }

  async #settle(
    batch: Map<Key, Array<Waiter<Result>>>,
    read: () => Promise<(key: Key) => Result>
  ): Promise<void> {
    let answer: (key: Key) => Result
    try {
      answer = await read()
    } catch (error) {
      for (const waiters of batch.values()) for (const { reject } of waiters) reject(error)
      return
    }
    for (const [key, waiters] of batch) {
      try {
        const result = answer(key)
        for (const { resolve } of waiters) resolve(result)
      } catch (error) {
        for (const { reject } of waiters) reject(error)
      }
    }
  }

  #left(signal: AbortSignal): unknown {
    return this.options.left ? this.options.left(signal) : signal.reason
  }
}

/**
 * The read's signal: the round's, and when every waiter may leave, aborted too once all have left,
 * since nobody waits for the read any more.
 */
function readSignal<Result>(
  batch: Map<unknown, Array<Waiter<Result>>>,
  signal: AbortSignal
): Linked {
  const leaves = [...batch.values()].flat().map(waiter => waiter.leave)
  if (!leaves.every((leave): leave is AbortSignal => leave !== undefined)) {
    return { signal, release: () => undefined }
  }
  const abandoned = sharedController()
  const left = (): void => {
    if (leaves.every(leave => leave.aborted)) abandoned.abort()
  }
  for (const leave of leaves) leave.addEventListener('abort', left, { once: true })
  left()
  const read = linked([signal, abandoned.signal])
  return {
    signal: read.signal,
    release: () => {
      for (const leave of leaves) leave.removeEventListener('abort', left)
      read.release()
    }
  }
}
