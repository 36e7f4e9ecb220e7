/** The step's time shares, on a clock the test moves. */
import { describe, expect, it } from '@jest/globals'
import { Budget, CANCEL_GRACE_MS, GRACE_MS } from '../src/time/budget.js'

/** A clock and timers that move only when the test says so. */
function testClock() {
  let now = 1_000_000
  const timers: Array<{ at: number; controller: AbortController }> = []
  return {
    now: () => now,
    timer: (ms: number): AbortSignal => {
      const controller = new AbortController()
      timers.push({ at: now + ms, controller })
      if (ms <= 0) controller.abort()
      return controller.signal
    },
    advance(ms: number): void {
      now += ms
      for (const { at, controller } of timers) if (at <= now) controller.abort()
    }
  }
}

const SECOND = 1000

function budget(timeoutMs: number, healthTimeoutMs: number) {
  const clock = testClock()
  const cancel = new AbortController()
  const made = new Budget(timeoutMs, healthTimeoutMs, cancel.signal, clock.now, clock.timer)
  return { budget: made, clock, cancel }
}

describe('the step’s budget', () => {
  it('ends its lifetime with the step, past `timeout` too, or with the run’s cancel', () => {
    const { budget: b, clock } = budget(60 * SECOND, 10 * SECOND)
    clock.advance(120 * SECOND)
    expect(b.lifetime().aborted).toBe(false)
    b.release()
    expect(b.lifetime().aborted).toBe(true)

    const cancelled = budget(60 * SECOND, 10 * SECOND)
    cancelled.cancel.abort('SIGTERM')
    expect(cancelled.budget.lifetime().reason).toBe('SIGTERM')
  })

  it('gives the deployments until `timeout`', () => {
    const { budget: b, clock } = budget(60 * SECOND, 10 * SECOND)
    clock.advance(59 * SECOND)
    expect(b.deploy().aborted).toBe(false)
    expect(b.left()).toBe(SECOND)
    clock.advance(SECOND)
    expect(b.deploy().aborted).toBe(true)
    expect(b.left()).toBe(0)
  })

  it('gives a health check `health-timeout` from its own start, within `timeout`', () => {
    const { budget: b, clock } = budget(60 * SECOND, 10 * SECOND)
    clock.advance(5 * SECOND)
    const early = b.health()
    clock.advance(10 * SECOND)
    expect(early.signal.aborted).toBe(true)
    expect(early.cutShort()).toBe(false)

    clock.advance(40 * SECOND) // 55 s: five left
    const late = b.health()
    clock.advance(5 * SECOND)
    expect(late.signal.aborted).toBe(true)
    expect(late.cutShort()).toBe(true)
  })

  it('gives a rollback what is left, and never less than `health-timeout`', () => {
    const { budget: b, clock } = budget(60 * SECOND, 10 * SECOND)
    const early = b.rollback()
    clock.advance(58 * SECOND)
    const late = b.rollback()
    clock.advance(2 * SECOND)
    expect(early.aborted).toBe(true)
    expect(late.aborted).toBe(false)
    clock.advance(8 * SECOND - 1)
    expect(late.aborted).toBe(false)
    clock.advance(1)
    expect(late.aborted).toBe(true)
  })

  it('bounds a rollback’s health check by the rollback’s own time', () => {
    const { budget: b, clock } = budget(60 * SECOND, 10 * SECOND)
    clock.advance(59 * SECOND)
    const share = b.rollback()
    clock.advance(6 * SECOND)
    const health = b.health(share)
    clock.advance(4 * SECOND)
    expect(health.signal.aborted).toBe(true)
    expect(health.cutShort()).toBe(true)
  })

  it('ends every grace share a few seconds after `timeout`, whatever was asked', () => {
    const { budget: b, clock } = budget(60 * SECOND, 10 * SECOND)
    clock.advance(59 * SECOND)
    const undo = b.grace()
    const report = b.grace(10 * SECOND)
    clock.advance(SECOND + GRACE_MS - 1)
    expect([undo.aborted, report.aborted]).toEqual([false, false])
    clock.advance(1)
    expect([undo.aborted, report.aborted]).toEqual([true, true])
    expect(GRACE_MS).toBeLessThanOrEqual(5 * SECOND)
  })

  it('after a rollback past `timeout`, gives the grace from now', () => {
    const { budget: b, clock } = budget(60 * SECOND, 10 * SECOND)
    clock.advance(70 * SECOND)
    const report = b.grace()
    clock.advance(GRACE_MS - 1)
    expect(report.aborted).toBe(false)
    clock.advance(1)
    expect(report.aborted).toBe(true)
  })

  it('on a cancelled run, ends every share at once and the grace within the runner’s', () => {
    const { budget: b, clock, cancel } = budget(60 * SECOND, 10 * SECOND)
    clock.advance(10 * SECOND)
    cancel.abort()
    expect(b.deploy().aborted).toBe(true)
    expect(b.health().signal.aborted).toBe(true)
    expect(b.rollback().aborted).toBe(true)
    clock.advance(3 * SECOND)
    const report = b.grace()
    clock.advance(CANCEL_GRACE_MS - 3 * SECOND - 1)
    expect(report.aborted).toBe(false)
    clock.advance(1)
    expect(report.aborted).toBe(true)
    // SIGTERM follows SIGINT after 7.5 s.
    expect(CANCEL_GRACE_MS).toBeLessThan(7500)
  })
})
