/** Deadlines and combined signals held by strong references, for Node 20. */
import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import { getEventListeners, getMaxListeners } from 'node:events'
import { join } from 'node:path'
import { deadline, linked, sharedController } from '../src/time/signals.js'
import { PROJECT } from '../test/support/runner.js'

describe('signals that Node 20 cannot lose', () => {
  it('aborts with the first parent’s reason, and then leaves every parent alone', () => {
    const [a, b] = [new AbortController(), new AbortController()]
    const child = linked([a.signal, b.signal])
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1)
    b.abort('b first')
    expect(child.signal.reason).toBe('b first')
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0)
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0)
  })

  it('is aborted at once when a parent already is', () => {
    const parent = new AbortController()
    parent.abort('gone')
    expect(linked([parent.signal]).signal.reason).toBe('gone')
  })

  it('unhooks from its parents and stops its timer when released', async () => {
    const parent = new AbortController()
    const child = linked([parent.signal], 1)
    child.release()
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0)
    await new Promise(resolve => setTimeout(resolve, 20))
    expect(child.signal.aborted).toBe(false)
  })

  it('times out with a TimeoutError, as AbortSignal.timeout does', async () => {
    const { signal } = deadline(1)
    await new Promise(resolve => signal.addEventListener('abort', resolve))
    expect((signal.reason as DOMException).name).toBe('TimeoutError')
  })

  it('are the only deadlines in src/: AbortSignal.any and AbortSignal.timeout are not used', () => {
    const files = readdirSync(join(PROJECT, 'src'), { recursive: true, encoding: 'utf8' })
    const users = files.filter(file => {
      if (!file.endsWith('.ts') || file === 'signals.ts') return false
      return /AbortSignal\.(any|timeout)\(/.test(readFileSync(join(PROJECT, 'src', file), 'utf8'))
    })
    expect(users).toEqual([])
  })
})

describe('signals many requests listen to', () => {
  it('take more than ten listeners without the MaxListenersExceededWarning Node 20 prints', () => {
    // Node warns once a signal has more listeners than its limit (10 by default). The limit is
    // read back as fetch reads it: getMaxListeners throws on a signal whose limit is 0.
    for (const signal of [linked([]).signal, sharedController().signal]) {
      expect(getMaxListeners(signal)).toBe(Infinity)
    }
  })
})
