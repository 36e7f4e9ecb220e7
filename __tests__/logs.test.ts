import { describe, expect, it, jest } from '@jest/globals'
import { parseApart, type EscapedLog } from '../src/coolify/escaped-log.js'
import { LogCursor, type LogLine } from '../src/model/logs.js'

interface Entry {
  command?: string | null
  output: string
  type?: string
  hidden?: boolean
  batch?: number
  order?: number
}

/** A 4.x log as Coolify stores it: the first entry has no `order`, later ones count up. */
function coolifyLog(entries: Entry[]): string {
  return JSON.stringify(
    entries.map((entry, index) => {
      const full: Record<string, unknown> = {
        command: null,
        type: 'stdout',
        hidden: false,
        batch: 1,
        timestamp: '2026-11-21T10:00:00.000Z',
        ...entry
      }
      if (index > 0 && entry.order === undefined) full.order = index + 1
      return full
    })
  )
}

const texts = (lines: LogLine[]) => lines.map(line => line.text)

/**
 * A log inside a deployment's answer, as Coolify sends it: escaped in a JSON string between other
 * fields, one of them ending with `]`.
 */
function answerWith(logs: string): string {
  return JSON.stringify({
    id: 7,
    status: 'in_progress',
    logs,
    commit_message: 'Fix [bug]',
    finished_at: null
  })
}

/**
 * A log as it stands in an answer: cut out of it whenever it is a whole array (a cut-off one is
 * left to the answer, parsed whole, and given as text).
 */
function inAnswer(logs: string): string | EscapedLog {
  const apart = parseApart(answerWith(logs))
  if (apart) return apart.log
  expect(() => JSON.parse(logs) as unknown).toThrow()
  return logs
}

/** The log as given, or as it stands in an answer. */
const FORMS: Array<
  [string, (logs: string | null | undefined) => string | EscapedLog | null | undefined]
> = [
  ['as text', logs => logs],
  ['as it stands in the answer', logs => (logs ? inAnswer(logs) : logs)]
]

describe.each(FORMS)('LogCursor with 4.x JSON logs, read %s', (_, form) => {
  const read = (cursor: LogCursor, logs: string | null | undefined) => cursor.next(form(logs))

  it('returns only the entries added since the last read', () => {
    const cursor = new LogCursor(false)
    const entries: Entry[] = [{ output: 'one' }, { output: 'two' }]
    expect(texts(read(cursor, coolifyLog(entries)))).toEqual(['one', 'two'])
    expect(read(cursor, coolifyLog(entries))).toEqual([])
    entries.push({ output: 'three\nfour' })
    expect(texts(read(cursor, coolifyLog(entries)))).toEqual(['three', 'four'])
  })

  it('skips hidden entries unless asked, and prints a command once per batch', () => {
    const entries: Entry[] = [
      { output: 'Starting deployment.' },
      { command: 'docker pull x', output: 'secret internals', hidden: true, batch: 2 },
      { command: 'docker build .', output: 'step 1', batch: 3 },
      { command: 'docker build .', output: 'step 2', batch: 3 },
      { command: 'docker build .', output: 'again', batch: 4 }
    ]
    expect(new LogCursor(false).next(coolifyLog(entries))).toEqual([
      { kind: 'stdout', text: 'Starting deployment.' },
      { kind: 'command', text: 'docker build .' },
      { kind: 'stdout', text: 'step 1' },
      { kind: 'stdout', text: 'step 2' },
      { kind: 'command', text: 'docker build .' },
      { kind: 'stdout', text: 'again' }
    ])
    expect(texts(new LogCursor(true).next(coolifyLog(entries)))).toContain('secret internals')
  })

  it('keeps stderr, info and warning apart', () => {
    const lines = new LogCursor(false).next(
      coolifyLog([
        { output: 'out' },
        { output: 'bad', type: 'stderr' },
        { output: 'note', type: 'info' },
        { output: 'careful', type: 'warning' }
      ])
    )
    expect(lines.map(line => line.kind)).toEqual(['stdout', 'stderr', 'info', 'warning'])
  })

  it("prints a read mixing a command's output and the job's own lines in Coolify's order", () => {
    // As Coolify numbers them: addLogEntry writes batch 1, a command's output the job's command
    // counter, which only grows; `order` counts over the whole log, and the first entry has none.
    const log = JSON.stringify([
      { output: 'Starting deployment.', batch: 1 },
      { command: 'docker build .', output: 'step 1/2', batch: 7, order: 2 },
      { command: 'docker build .', output: 'step 2/2', batch: 7, order: 3 },
      { output: 'Rolling update started.', batch: 1, order: 4 },
      { command: 'docker logs web', output: 'listening on 3000', batch: 8, order: 5 },
      { output: 'Rolling update completed.', batch: 1, order: 6 }
    ])
    expect(texts(new LogCursor(false).next(log))).toEqual([
      'Starting deployment.',
      'docker build .',
      'step 1/2',
      'step 2/2',
      'Rolling update started.',
      'docker logs web',
      'listening on 3000',
      'Rolling update completed.'
    ])
  })

  it('sorts by order alone when a read brings entries out of place', () => {
    const log = JSON.stringify([
      { output: 'c', batch: 1, order: 3 },
      { command: 'make', output: 'b', batch: 9, order: 2 },
      { output: 'a', batch: 1 }
    ])
    expect(texts(new LogCursor(false).next(log))).toEqual(['a', 'make', 'b', 'c'])
  })

  it('prints nothing twice when a stale read returns fewer entries', () => {
    const cursor = new LogCursor(false)
    const all: Entry[] = [{ output: 'one' }, { output: 'two' }, { output: 'three' }]
    expect(texts(read(cursor, coolifyLog(all)))).toEqual(['one', 'two', 'three'])
    expect(read(cursor, coolifyLog(all.slice(0, 2)))).toEqual([])
    expect(texts(read(cursor, coolifyLog([...all, { output: 'four' }])))).toEqual(['four'])
  })

  // A cancel through the API writes its entries into one copy of the row, the job saves its next
  // output from its own: the job's entries replace the cancel's under the same `order`.
  it("prints the job's entries that took the numbers of a cancel's entries", () => {
    const cursor = new LogCursor(false)
    const build = (output: string): Entry => ({ command: 'docker build', batch: 5, output })
    const base: Entry[] = [{ output: 'Starting' }, build('step a'), build('step b')]
    expect(texts(read(cursor, coolifyLog(base)))).toEqual([
      'Starting',
      'docker build',
      'step a',
      'step b'
    ])
    const cancelled = [
      ...base,
      { output: 'Deployment cancelled by user via API.', type: 'stderr' },
      { output: 'Deployment container stopped.' }
    ]
    expect(texts(read(cursor, coolifyLog(cancelled)))).toEqual([
      'Deployment cancelled by user via API.',
      'Deployment container stopped.'
    ])
    const saved = [...base, build('step c'), build('step d'), build('step e')]
    expect(texts(read(cursor, coolifyLog(saved)))).toEqual(['step c', 'step d', 'step e'])
    expect(read(cursor, coolifyLog(saved))).toEqual([])
  })

  it('goes on after the last printed entry when older entries were trimmed', () => {
    const cursor = new LogCursor(false)
    read(cursor, coolifyLog([{ output: 'one' }, { output: 'two', order: 2 }]))
    const trimmed = JSON.stringify([
      { output: 'two', batch: 1, order: 2, command: null },
      { output: 'three', batch: 1, order: 3, command: null }
    ])
    expect(texts(read(cursor, trimmed))).toEqual(['three'])
  })

  it('takes each entry once when the server returns them in another order on every read', () => {
    const cursor = new LogCursor(false)
    const entry = (order: number, batch = 1) => ({
      output: `line ${order}`,
      batch,
      order,
      command: null
    })
    expect(texts(read(cursor, JSON.stringify([entry(3), entry(1), entry(2)])))).toEqual([
      'line 1',
      'line 2',
      'line 3'
    ])
    expect(
      texts(read(cursor, JSON.stringify([entry(5, 2), entry(2), entry(4, 2), entry(1), entry(3)])))
    ).toEqual(['line 4', 'line 5'])
    expect(read(cursor, JSON.stringify([entry(1), entry(2)]))).toEqual([])
  })

  it('takes each line once over many growing, unchanged and stale reads', () => {
    const cursor = new LogCursor(false)
    const all: Entry[] = Array.from({ length: 300 }, (_, i) => ({
      output: `line ${i}`,
      hidden: i % 7 === 3,
      batch: 1 + Math.floor(i / 50)
    }))
    const printed: string[] = []
    let seed = 7
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
    for (let shown = 0; shown < all.length;) {
      shown = Math.min(all.length, shown + Math.floor(random() * 20))
      const stale = random() < 0.2 ? Math.floor(random() * shown) : shown
      for (const length of [stale, shown, shown])
        printed.push(...texts(read(cursor, coolifyLog(all.slice(0, length)))))
    }
    expect(printed).toEqual(all.filter(entry => !entry.hidden).map(entry => entry.output))
  })

  it('counts hidden entries as progress', () => {
    const cursor = new LogCursor(false)
    read(cursor, coolifyLog([{ output: 'one' }]))
    const before = cursor.progress
    expect(
      read(cursor, coolifyLog([{ output: 'one' }, { output: 'secret', hidden: true }]))
    ).toEqual([])
    expect(cursor.progress).toBeGreaterThan(before)
  })

  it('waits for a whole array when one arrives cut off', () => {
    const cursor = new LogCursor(false)
    const full = coolifyLog([{ output: 'one' }, { output: 'two' }])
    expect(read(cursor, full.slice(0, full.length - 10))).toEqual([])
    expect(texts(read(cursor, full))).toEqual(['one', 'two'])
  })

  it('handles null and empty logs', () => {
    const cursor = new LogCursor(false)
    expect(read(cursor, null)).toEqual([])
    expect(read(cursor, undefined)).toEqual([])
    expect(read(cursor, '[]')).toEqual([])
  })
})

describe('LogCursor with a log as it stands in the answer', () => {
  const entries: Entry[] = Array.from({ length: 400 }, (_, i) => ({
    output: `step ${i}: "quoted" \\ C:\\path/to/file ${i % 3 ? 'é' : '💥'}`,
    hidden: i % 11 === 5
  }))
  const visible = entries.filter(entry => !entry.hidden).map(entry => entry.output)

  it('unescapes only what the log grew by, and prints each line once', () => {
    const cursor = new LogCursor(false)
    const parse = JSON.parse
    let parsed = 0
    const spy = jest.spyOn(JSON, 'parse').mockImplementation((text: string, ...rest) => {
      parsed += text.length
      return parse(text, ...rest) as unknown
    })
    const printed: string[] = []
    let last = ''
    try {
      for (let shown = 40; shown <= entries.length; shown += 40) {
        last = answerWith(coolifyLog(entries.slice(0, shown)))
        const apart = parseApart(last)!
        printed.push(...texts(cursor.next(apart.log)))
      }
    } finally {
      spy.mockRestore()
    }
    expect(printed).toEqual(visible)
    // Ten reads: parsed whole, they would come to over five times the last answer.
    expect(parsed).toBeLessThan(2.2 * last.length)
  })

  it('takes each line once when reads by uuid and reads of the list take turns', () => {
    const cursor = new LogCursor(false)
    const printed: string[] = []
    for (let shown = 0, turn = 0; shown < entries.length; turn++) {
      shown = Math.min(entries.length, shown + 1 + ((turn * 37) % 60))
      const logs = coolifyLog(entries.slice(0, shown))
      printed.push(...texts(cursor.next(turn % 3 === 1 ? logs : parseApart(answerWith(logs))!.log)))
    }
    expect(printed).toEqual(visible)
  })
})

describe('LogCursor with newline text (the contract)', () => {
  it('returns whole new lines and holds a line until it ends', () => {
    const cursor = new LogCursor(false)
    expect(texts(cursor.next('one\ntwo\nthr'))).toEqual(['one', 'two'])
    expect(texts(cursor.next('one\ntwo\nthree\nfour'))).toEqual(['three'])
    expect(cursor.next('one\ntwo\nthree\nfour')).toEqual([])
    expect(texts(cursor.flush())).toEqual(['four'])
    expect(cursor.flush()).toEqual([])
  })

  it('treats text that starts with a bracket as text', () => {
    const cursor = new LogCursor(false)
    expect(texts(cursor.next('[+] Building 2.1s\n[internal] load\n'))).toEqual([
      '[+] Building 2.1s',
      '[internal] load'
    ])
  })

  it('drops carriage returns', () => {
    expect(texts(new LogCursor(false).next('a\r\nb\r\n'))).toEqual(['a', 'b'])
  })
})
