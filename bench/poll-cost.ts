/**
 * The cost of one poll, split in two, run by bench/run.ts on Node 24 (`node poll-cost.js`): parsing
 * the answer (grows with its size, for any client) and the action's work after that: the log
 * cursor taking the new entries out of the log (it parses only the part the log grew by) and the
 * printer writing them; this should grow with the new lines only. Prints JSON on stdout.
 */
import type { DeploymentView } from '../src/model/deployment.js'
import { LogCursor, type LogLine } from '../src/model/logs.js'
import { githubLog } from '../src/action/host.js'
import { LogPrinter } from '../src/report/console.js'
import { phpJson } from '../test/fake-coolify/format.js'
import { coolifyLogs } from '../test/fake-coolify/logs.js'
import { entry } from '../test/fake-coolify/scenario.js'
import { bigLogLines } from './builds.js'

export interface PollCost {
  /** Entries in the log before this poll, and new ones in it. */
  entries: number
  fresh: number
  responseBytes: number
  /** Best of 15, in ms: JSON.parse of the answer; the cursor's `next()` on the grown log. */
  parseResponseMs: number
  cursorMs: number
  /** The printer's work on the new lines. */
  printMs: number
}

const REPEAT = 15

/** Noise only ever adds time: the best of several runs is the cost. */
const best = (values: number[]): number => Math.min(...values)

function time(run: () => void): number {
  const start = process.hrtime.bigint()
  run()
  return Number(process.hrtime.bigint() - start) / 1e6
}

/** One poll that finds `fresh` new entries at the end of a log of `entries` entries. */
function measure(entries: number, fresh: number, all: ReturnType<typeof logOf>): PollCost {
  const before = all.slice(0, entries - fresh)
  const now = all.slice(0, entries)
  const logsBefore = coolifyLogs(before)!
  const logsNow = coolifyLogs(now)!
  const response = phpJson({ deployment_uuid: 'bench', status: 'in_progress', logs: logsNow })
  const printer = new LogPrinter(
    false,
    githubLog(() => undefined)
  )
  const deployment = { name: 'web' } as DeploymentView
  const samples = { parse: [] as number[], cursor: [] as number[] }
  const print: number[] = []
  for (let i = 0; i < REPEAT; i++) {
    samples.parse.push(time(() => JSON.parse(response)))
    const cursor = new LogCursor(false)
    cursor.next(logsBefore)
    let lines: LogLine[] = []
    samples.cursor.push(time(() => (lines = cursor.next(logsNow))))
    print.push(time(() => printer.lines(deployment, lines)))
  }
  return {
    entries,
    fresh,
    responseBytes: Buffer.byteLength(response),
    parseResponseMs: best(samples.parse),
    cursorMs: best(samples.cursor),
    printMs: best(print)
  }
}

function logOf(lines: number) {
  const start = Date.now()
  return bigLogLines(lines).entries.map((line, i) => entry(line, start + i))
}

const all = logOf(40_000)
measure(2_750, 1_000, all) // warms the JIT up
const results: PollCost[] = []
// A growing log, the same number of new entries.
for (const entries of [2_750, 5_500, 11_000, 22_000]) results.push(measure(entries, 1_000, all))
// The same log, more or fewer new entries.
for (const fresh of [250, 4_000]) results.push(measure(22_000, fresh, all))
process.stdout.write(JSON.stringify(results))
