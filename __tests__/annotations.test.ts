import { describe, expect, it } from '@jest/globals'
import type { LogLine } from '../src/model/logs.js'
import { splitTail } from '../src/action/annotations.js'

const out = (text: string): LogLine => ({ kind: 'stdout', text })
const err = (text: string): LogLine => ({ kind: 'stderr', text })

describe('splitTail', () => {
  it('puts the stderr lines first and fills up with the last of the others, in log order', () => {
    const tail = [out('a'), err('e1'), out('b'), out('c'), err('e2'), out('d')]
    expect(splitTail(tail, 4)).toEqual({
      stderr: [err('e1'), err('e2')],
      rest: [out('c'), out('d')]
    })
  })

  it('keeps the last stderr lines when there are more than fit', () => {
    const tail = [err('e1'), out('a'), err('e2'), err('e3')]
    expect(splitTail(tail, 2)).toEqual({ stderr: [err('e2'), err('e3')], rest: [] })
  })

  it('gives the last lines of a log without stderr', () => {
    expect(splitTail([out('a'), out('b'), out('c')], 2)).toEqual({
      stderr: [],
      rest: [out('b'), out('c')]
    })
    expect(splitTail([], 5)).toEqual({ stderr: [], rest: [] })
  })
})
