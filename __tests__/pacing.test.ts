import { describe, expect, it } from '@jest/globals'
import { backoffDelay, parseRetryAfter, RateGate } from '../src/coolify/pacing.js'
import { ReadPacer } from '../src/rollout/watch.js'

const policy = { baseDelayMs: 1000, maxDelayMs: 30_000 }

describe('backoffDelay', () => {
  it('doubles from the base, with jitter between half and all of it', () => {
    expect(backoffDelay(policy, 1, undefined, () => 0)).toBe(500)
    expect(backoffDelay(policy, 1, undefined, () => 1)).toBe(1000)
    expect(backoffDelay(policy, 3, undefined, () => 1)).toBe(4000)
  })

  it('stops growing at the maximum', () => {
    expect(backoffDelay(policy, 20, undefined, () => 1)).toBe(30_000)
  })

  it('never goes before Retry-After', () => {
    expect(backoffDelay(policy, 1, 60_000, () => 1)).toBe(60_000)
  })
})

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('60')).toBe(60_000)
    expect(parseRetryAfter('0.5')).toBe(500)
    const now = Date.parse('2026-11-21T10:00:00Z')
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:30 GMT', now)).toBe(30_000)
    expect(parseRetryAfter(undefined)).toBeUndefined()
    expect(parseRetryAfter('soon')).toBeUndefined()
  })
})

describe('RateGate', () => {
  it('lets requests through at once while the budget is ample', async () => {
    // A clock that never moves: any wait would never end.
    const gate = new RateGate(() => 0)
    gate.observe('200', '150')
    await gate.ready()
    await gate.ready()
    expect(gate.limitPerMinute).toBe(200)
  })

  it('holds every request until Retry-After has passed', async () => {
    const gate = new RateGate()
    gate.observe('200', '0', 150)
    const started = Date.now()
    await Promise.all([gate.ready(), gate.ready()])
    expect(Date.now() - started).toBeGreaterThanOrEqual(145)
  })

  it('spreads requests out when few remain', async () => {
    const gate = new RateGate()
    gate.observe('200', '49') // 49 left of 200: one request every 60s / 49 ≈ 1.2s
    await gate.ready()
    const controller = new AbortController()
    const second = gate.ready(controller.signal)
    let passed = false
    void second.then(() => (passed = true)).catch(() => undefined)
    await new Promise(resolve => setTimeout(resolve, 200))
    expect(passed).toBe(false)
    controller.abort(new Error('stop'))
    await expect(second).rejects.toThrow('stop')
  })
})

describe('ReadPacer', () => {
  /** A pacer of one read per 375 ms (160 a minute) on a clock the test moves. */
  function pacer() {
    let now = 1_000_000
    const reads = new ReadPacer(
      () => 375,
      () => now
    )
    return {
      /** Takes a turn and moves the clock to it: when the read goes out. */
      read: () => (now += reads.take()),
      wait: (ms: number) => (now += ms)
    }
  }

  it('lets a read after a quiet spell go at once, however soon after the last', () => {
    const { read, wait } = pacer()
    const first = read()
    wait(10)
    // The health check right after the read that saw the end.
    expect(read()).toBe(first + 10)
  })

  it('holds the pace when reads queue up: one more than the budget at most', () => {
    const { read } = pacer()
    const times = Array.from({ length: 9 }, read)
    const start = times[0]
    // Two at once, then one per turn.
    expect(times.map(at => at - start)).toEqual([0, 0, 375, 750, 1125, 1500, 1875, 2250, 2625])
  })

  it('counts a spell as quiet only once its turns have passed', () => {
    const { read, wait } = pacer()
    const first = read()
    read()
    read()
    // Two turns ahead of the pace: the next waits for its turn, not for the slack.
    wait(100)
    expect(read() - first).toBe(750)
  })
})
