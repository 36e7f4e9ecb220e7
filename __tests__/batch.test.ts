/**
 * The batch that lets reads due at the same turn share one request, on turns, reads and sleeps the
 * test settles itself: nothing here waits on the clock.
 */
import { describe, expect, it } from '@jest/globals'
import { getEventListeners } from 'node:events'
import { Batch, type BatchOptions } from '../src/follow/batch.js'

interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (error: unknown) => void
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((yes, no) => ((resolve = yes), (reject = no)))
  return { promise, resolve, reject }
}

/** Lets every promise callback already queued run. */
const settled = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

/** What a promise came to so far, without waiting for it. */
function outcome<T>(promise: Promise<T>): { value?: T; error?: unknown; done: boolean } {
  const seen: { value?: T; error?: unknown; done: boolean } = { done: false }
  promise.then(
    value => Object.assign(seen, { value, done: true }),
    (error: unknown) => Object.assign(seen, { error, done: true })
  )
  return seen
}

/** A batch whose turns, reads and gather sleeps come only when the test lets them. */
function batchOf(options: Partial<BatchOptions<string, string>> = {}) {
  const turns: Array<{ signal: AbortSignal; come: Deferred<void> }> = []
  const reads: Array<{ keys: string[]; signal: AbortSignal; answer: Deferred<string[]> }> = []
  const sleeps: Array<{ ms: number; end: Deferred<void> }> = []
  const batch = new Batch<string, string>({
    turn: signal => {
      const come = deferred<void>()
      // As a real turn does: it ends once its signal aborts.
      signal.addEventListener('abort', () => come.reject(signal.reason), { once: true })
      turns.push({ signal, come })
      return come.promise
    },
    read: async (keys, signal) => {
      const answer = deferred<string[]>()
      reads.push({ keys, signal, answer })
      const found = await answer.promise
      return key => {
        const index = keys.indexOf(key)
        if (found[index] === undefined) throw new Error(`${key} not found`)
        return found[index]
      }
    },
    expected: () => 1,
    gatherMs: 0,
    sleep: ms => {
      const end = deferred<void>()
      sleeps.push({ ms, end })
      return end.promise
    },
    ...options
  })
  return { batch, turns, reads, sleeps }
}

const step = new AbortController().signal

describe('a batch of reads', () => {
  it('reads the keys due at the same turn in one request, each answered with its own', async () => {
    const { batch, turns, reads } = batchOf()
    const api = batch.wait('api', step)
    const web = batch.wait('web', step)
    const again = batch.wait('api', step)
    await settled()
    expect(turns).toHaveLength(1)
    expect(reads).toHaveLength(0)

    turns[0].come.resolve()
    await settled()
    expect(reads.map(read => read.keys)).toEqual([['api', 'web']])
    reads[0].answer.resolve(['api read', 'web read'])

    expect(await Promise.all([api, web, again])).toEqual(['api read', 'web read', 'api read'])
    expect(turns).toHaveLength(1)
    expect(reads).toHaveLength(1)
  })

  it('runs a round, its turn and its read under the signal of the wait that began it', async () => {
    const { batch, turns, reads } = batchOf()
    const first = new AbortController().signal
    const read = batch.wait('api', first)
    void batch.wait('web', new AbortController().signal)
    await settled()
    turns[0].come.resolve()
    await settled()
    reads[0].answer.resolve(['api read', 'web read'])
    await read

    expect(turns[0].signal.aborted).toBe(false)
    expect(reads[0].signal).toBe(first)
  })

  it("waits for a turn under the round's signal, and no longer once every waiter has left", async () => {
    const { batch, turns, reads } = batchOf({ left: signal => `left: ${String(signal.reason)}` })
    const round = new AbortController()
    const short = new AbortController()
    const api = outcome(batch.wait('api', round.signal, short.signal))
    await settled()
    expect(turns[0].signal.aborted).toBe(false)

    // A turn can be a window's end, a minute away: nobody waits for it any more.
    short.abort('time')
    await settled()
    expect(api.error).toBe('left: time')
    expect(turns[0].signal.aborted).toBe(true)
    expect(reads).toHaveLength(0)

    // Whoever comes next has a round of its own, which the round's signal still ends.
    const web = outcome(batch.wait('web', round.signal))
    await settled()
    expect(turns).toHaveLength(2)
    round.abort('cancelled')
    await settled()
    expect(turns[1].signal.aborted).toBe(true)
    expect(web.error).toBe('cancelled')
  })

  it('answers a waiter who came while the others left their wait for the turn', async () => {
    const { batch, turns, reads } = batchOf()
    const short = new AbortController()
    void outcome(batch.wait('api', step, short.signal))
    await settled()
    short.abort('time')
    const web = batch.wait('web', step)
    await settled()
    turns[turns.length - 1].come.resolve()
    await settled()
    expect(reads.map(read => read.keys)).toEqual([['web']])
    reads[0].answer.resolve(['web read'])
    expect(await web).toBe('web read')
  })

  it('waits at most gatherMs for the others expected, then reads those that came', async () => {
    const { batch, turns, reads, sleeps } = batchOf({ expected: () => 3, gatherMs: 250 })
    const api = batch.wait('api', step)
    await settled()
    expect(sleeps.map(sleep => sleep.ms)).toEqual([250])
    expect(turns).toHaveLength(0)
    const web = batch.wait('web', step)
    await settled()
    expect(turns).toHaveLength(0)

    sleeps[0].end.resolve()
    await settled()
    turns[0].come.resolve()
    await settled()
    expect(reads.map(read => read.keys)).toEqual([['api', 'web']])
    reads[0].answer.resolve(['api read', 'web read'])
    expect(await Promise.all([api, web])).toEqual(['api read', 'web read'])
  })

  it('ends the gather as soon as every key expected waits', async () => {
    const { batch, turns, reads, sleeps } = batchOf({ expected: () => 2, gatherMs: 10_000 })
    const api = batch.wait('api', step)
    await settled()
    expect(turns).toHaveLength(0)
    const web = batch.wait('web', step)
    await settled()

    // The sleep never ends: the second due alone let the turn come.
    expect(sleeps).toHaveLength(1)
    expect(turns).toHaveLength(1)
    turns[0].come.resolve()
    await settled()
    expect(reads.map(read => read.keys)).toEqual([['api', 'web']])
    reads[0].answer.resolve(['api read', 'web read'])
    expect(await Promise.all([api, web])).toEqual(['api read', 'web read'])
  })

  it('does not gather when every key expected already waits, or gatherMs is 0', async () => {
    const alone = batchOf({ expected: () => 1, gatherMs: 250 })
    void alone.batch.wait('api', step)
    const unhurried = batchOf({ expected: () => 3, gatherMs: 0 })
    void unhurried.batch.wait('api', step)
    await settled()

    expect([alone.sleeps, unhurried.sleeps]).toEqual([[], []])
    expect([alone.turns.length, unhurried.turns.length]).toEqual([1, 1])
  })

  it('reads again, at its own turn, for the waiters that came during a read', async () => {
    const { batch, turns, reads } = batchOf()
    const api = batch.wait('api', step)
    await settled()
    turns[0].come.resolve()
    await settled()
    const web = batch.wait('web', step)
    const worker = batch.wait('worker', step)
    await settled()
    expect(reads).toHaveLength(1)
    expect(turns).toHaveLength(1)

    reads[0].answer.resolve(['api read'])
    expect(await api).toBe('api read')
    await settled()
    expect(turns).toHaveLength(2)
    turns[1].come.resolve()
    await settled()
    expect(reads.map(read => read.keys)).toEqual([['api'], ['web', 'worker']])
    reads[1].answer.resolve(['web read', 'worker read'])
    expect(await Promise.all([web, worker])).toEqual(['web read', 'worker read'])
  })

  it('rejects every waiter of a read that failed, and reads anew for the next', async () => {
    const { batch, turns, reads } = batchOf()
    const api = outcome(batch.wait('api', step))
    const web = outcome(batch.wait('web', step))
    await settled()
    turns[0].come.resolve()
    await settled()
    const outage = new Error('Coolify is down')
    reads[0].answer.reject(outage)
    await settled()
    expect([api.error, web.error]).toEqual([outage, outage])

    const later = batch.wait('api', step)
    await settled()
    turns[1].come.resolve()
    await settled()
    reads[1].answer.resolve(['api read'])
    expect(await later).toBe('api read')
  })

  it('rejects every waiter when the turn fails, with no read', async () => {
    const { batch, turns, reads } = batchOf()
    const api = outcome(batch.wait('api', step))
    const web = outcome(batch.wait('web', step))
    await settled()
    const cancelled = new Error('cancelled')
    turns[0].come.reject(cancelled)
    await settled()

    expect([api.error, web.error]).toEqual([cancelled, cancelled])
    expect(reads).toHaveLength(0)
  })

  it('rejects the waiters of a key the read lacks, and answers the others', async () => {
    const { batch, turns, reads } = batchOf()
    const api = batch.wait('api', step)
    const ghost = outcome(batch.wait('ghost', step))
    await settled()
    turns[0].come.resolve()
    await settled()
    reads[0].answer.resolve(['api read'])

    expect(await api).toBe('api read')
    await settled()
    expect(ghost.error).toEqual(new Error('ghost not found'))
  })

  it('lets a waiter leave alone, and stops the read once every waiter has left', async () => {
    const { batch, turns, reads } = batchOf({ left: signal => `left: ${String(signal.reason)}` })
    const short = new AbortController()
    const shorter = new AbortController()
    const api = outcome(batch.wait('api', step, short.signal))
    const web = outcome(batch.wait('web', step, shorter.signal))
    await settled()
    turns[0].come.resolve()
    await settled()

    short.abort('time')
    await settled()
    expect(api.error).toBe('left: time')
    expect([web.done, reads[0].signal.aborted]).toEqual([false, false])
    shorter.abort('time')
    await settled()
    expect(web.error).toBe('left: time')
    expect(reads[0].signal.aborted).toBe(true)
  })

  it('keeps reading while a waiter stays that cannot leave', async () => {
    const { batch, turns, reads } = batchOf()
    const short = new AbortController()
    const api = outcome(batch.wait('api', step, short.signal))
    const web = batch.wait('web', step)
    await settled()
    turns[0].come.resolve()
    await settled()
    short.abort('time')
    await settled()

    expect(api.error).toBe('time')
    expect(reads[0].signal.aborted).toBe(false)
    reads[0].answer.resolve(['api read', 'web read'])
    expect(await web).toBe('web read')
  })

  it('turns away a waiter whose signal has already aborted, with no read', async () => {
    const { batch, turns } = batchOf()
    const gone = outcome(batch.wait('api', step, AbortSignal.abort('late')))
    await settled()

    expect(gone.error).toBe('late')
    expect(turns).toHaveLength(0)
  })

  it("leaves no listener on a waiter's signal once its read is answered", async () => {
    // A health check waits with one signal for minutes, read after read: listeners left on it
    // would pile up, and Node warns of a leak on the job's log past ten.
    const { batch, turns, reads } = batchOf()
    const check = new AbortController()
    for (let round = 0; round < 12; round++) {
      const read = batch.wait('api', step, check.signal)
      await settled()
      turns[round].come.resolve()
      await settled()
      reads[round].answer.resolve([`read ${round}`])
      expect(await read).toBe(`read ${round}`)
    }
    await settled()
    expect(getEventListeners(check.signal, 'abort')).toHaveLength(0)
  })
})
