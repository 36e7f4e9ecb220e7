import { describe, expect, it } from '@jest/globals'
import { backoffDelay, parseRetryAfter, RateGate } from '../src/coolify/pacing.js'
import { RateLimiter } from '../test/fake-coolify/guards.js'
import { ReadPacer } from '../src/follow/pacer.js'

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

/**
 * A client's gate and read pacer against Coolify's limiter (the fake's model of Laravel's fixed
 * window), on a clock the test moves: every wait moves it, so nothing waits for real.
 */
function coolify(limit: number) {
  let now = 1_000_000
  const limiter = new RateLimiter(limit)
  const gate = new RateGate(
    () => now,
    async ms => {
      now += ms
    }
  )
  // A read every 3 s while deployments run (one list of them per turn, at poll-interval: 3s).
  const pacer = new ReadPacer(
    () => gate.budget(),
    () => 1 / 3000,
    () => now
  )
  const refused: number[] = []
  /** One answer of the server to the token's user, for this client or another tool. */
  const answer = (): { limit: string; remaining: string; retryAfterMs?: number } => {
    const rate = limiter.hit('user', now)
    if (rate.retryAfter !== undefined) refused.push(now)
    return {
      limit: String(rate.limit),
      remaining: String(rate.remaining),
      retryAfterMs: rate.retryAfter === undefined ? undefined : rate.retryAfter * 1000
    }
  }
  return {
    now: () => now,
    wait: (ms: number) => (now += ms),
    gate,
    refused,
    /** A read in its turn, through the gate: when it went out. `final`: it can end a following. */
    async read(final = false): Promise<number> {
      now += pacer.take(final)
      await gate.ready(undefined, !final)
      const at = now
      const { limit: max, remaining, retryAfterMs } = answer()
      gate.observe(max, remaining, retryAfterMs)
      return at
    },
    /** A request of another tool with the same token. */
    other(): boolean {
      return answer().retryAfterMs === undefined
    }
  }
}

describe('RateGate and ReadPacer, against Coolify’s fixed window', () => {
  it('learns the window from the answer that opened it', async () => {
    const server = coolify(60)
    expect(server.gate.budget()).toBeUndefined()
    await server.read()
    expect(server.gate.limitPerMinute).toBe(60)
    // 59 left, 12 of them kept for other tools; the window ends a minute after it opened.
    expect(server.gate.budget()).toEqual({ spare: 47, held: 12, endsInMs: 60_250 })
  })

  it('reads all that is due at once while the window affords it', async () => {
    const server = coolify(60)
    const start = server.now()
    const times = []
    for (let i = 0; i < 30; i++) times.push(await server.read())
    expect(times.every(at => at === start)).toBe(true)
    expect(server.refused).toEqual([])
  })

  it('keeps a fifth of the window, spreads the rest near its end, and goes on when it resets', async () => {
    const server = coolify(60)
    const opened = server.now()
    const times = []
    for (let i = 0; i < 60; i++) times.push(await server.read())
    expect(server.refused).toEqual([])
    const first = times.filter(at => at < opened + 60_000)
    // 48 of the window's 60, the last ones spread out rather than sent together.
    expect(first).toHaveLength(48)
    const spread = first.filter(at => at > opened)
    expect(spread.length).toBeGreaterThan(0)
    for (let i = 1; i < spread.length; i++) expect(spread[i] - spread[i - 1]).toBeGreaterThan(5000)
    // The next window: no later than the end of the first, and at once again.
    const next = times.filter(at => at >= opened + 60_000)
    expect(next[0]).toBeLessThanOrEqual(opened + 60_250)
    expect(next.every(at => at === next[0])).toBe(true)
  })

  it('waits for Retry-After after a 429, and no longer', async () => {
    const server = coolify(10)
    // Another tool opened the window and spent it all, 45 s ago.
    for (let i = 0; i < 10; i++) server.other()
    server.wait(45_000)
    const refusedAt = server.now()
    // The gate knows nothing yet: the read goes, and is refused.
    await server.read()
    expect(server.refused).toEqual([refusedAt])
    const next = await server.read()
    expect(next).toBe(refusedAt + 15_000)
    expect(server.refused).toHaveLength(1)
    // That read opened a new window.
    expect(server.gate.budget()?.spare).toBe(7)
  })

  it('shares the window with another tool spending from it, leaving it the reserve', async () => {
    const server = coolify(60)
    await server.read()
    // The other tool takes 30 of the window.
    for (let i = 0; i < 30; i++) expect(server.other()).toBe(true)
    const opened = server.now()
    const times = []
    for (let i = 0; i < 20; i++) times.push(await server.read())
    expect(server.refused).toEqual([])
    // 60 − 1 − 30 = 29 left, 12 of them kept: 17 more reads in this window, then its end.
    expect(times.filter(at => at < opened + 60_000)).toHaveLength(17)
    // The reserve is still there for the other tool.
    for (let i = 0; i < 12; i++) expect(server.other()).toBe(true)
  })

  it('sees a window opened by someone else when Remaining jumps back up', async () => {
    const server = coolify(60)
    for (let i = 0; i < 50; i++) server.other()
    await server.read()
    expect(server.gate.budget()?.spare).toBe(0)
    // The window ends; another tool opens the next one and spends 5 of it.
    server.wait(60_000)
    for (let i = 0; i < 5; i++) server.other()
    server.wait(1000)
    await server.read()
    expect(server.gate.budget()).toEqual({ spare: 42, held: 12, endsInMs: 60_250 })
  })
})

describe('RateGate', () => {
  it('lets requests through at once when the server announces no limit', async () => {
    // A clock that never moves: any wait would never end.
    const gate = new RateGate(() => 0)
    gate.observe(undefined, undefined)
    await gate.ready()
    await gate.ready(undefined, true)
    expect(gate.budget()).toBeUndefined()
  })

  it('holds every request until Retry-After has passed, on the real clock too', async () => {
    const gate = new RateGate()
    // Taken before the 429 is seen: a busy machine may take a while between the two.
    const started = Date.now()
    gate.observe('200', '0', 150)
    await Promise.all([gate.ready(), gate.ready()])
    expect(Date.now() - started).toBeGreaterThanOrEqual(150)
  })
})

describe('what polls hold back', () => {
  it('is a fifth of the window at the least, what the reads to come need, half at the most', async () => {
    const server = coolify(60)
    let need = 0
    server.gate.holdBack(() => need)
    await server.read()
    expect(server.gate.budget()).toMatchObject({ spare: 47, held: 12 })
    need = 33
    expect(server.gate.budget()).toMatchObject({ spare: 29, held: 30 })
    need = 20
    expect(server.gate.budget()).toMatchObject({ spare: 39, held: 20 })
  })

  it('is spent at once by a read that can end a following, never past the window', async () => {
    const server = coolify(60)
    server.gate.holdBack(() => 20)
    const polls: number[] = []
    for (let i = 0; i < 40; i++) polls.push(await server.read())
    expect(server.gate.budget()).toMatchObject({ spare: 0, held: 20 })
    const spentAt = server.now()

    // The last deployments' final reads go in this window, without waiting for the next one.
    const finals: number[] = []
    for (let i = 0; i < 20; i++) finals.push(await server.read(true))
    expect(Math.max(...finals) - spentAt).toBeLessThan(60_000)
    // A poll now waits for the window's end, and so does a final read once nothing is left.
    expect(await server.read()).toBeGreaterThanOrEqual(polls[0] + 60_000)
    expect(server.refused).toEqual([])
  })
})
