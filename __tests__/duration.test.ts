import { describe, expect, it } from '@jest/globals'
import { formatDuration, parseDuration } from '../src/time/duration.js'

describe('parseDuration', () => {
  it.each([
    ['90', 90_000],
    ['1.5', 1500],
    ['500ms', 500],
    ['15m', 900_000],
    ['1h30m', 5_400_000],
    ['2h', 7_200_000],
    [' 10S ', 10_000],
    ['1m30s', 90_000]
  ])('reads %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms)
  })

  it.each(['', 'abc', '10x', 'm', '-5', '5 m', '1h 30m', '10ms5'])('refuses %j', text => {
    expect(parseDuration(text)).toBeUndefined()
  })
})

describe('formatDuration', () => {
  it.each([
    [120, '120ms'],
    [4500, '4.5s'],
    [60_000, '1m'],
    [3_723_000, '1h 2m 3s']
  ])('formats %d', (ms, text) => {
    expect(formatDuration(ms)).toBe(text)
  })
})
