import { redactPayloads } from '../config/secrets.js'
import { EscapedLog } from '../coolify/escaped-log.js'

/** What a printed line came from: Coolify's entry types, plus the command that produced output. */
export type LineKind = 'stdout' | 'stderr' | 'info' | 'warning' | 'command'

export interface LogLine {
  kind: LineKind
  text: string
  /**
   * Kept to the job log, never quoted in the summary, annotations or comment: from one of
   * Coolify's hidden entries (printed with `debug-logs` only), or a command that carried an
   * encoded payload.
   */
  hidden?: boolean
}

interface Entry {
  command?: string | null
  output?: string | null
  type?: string
  hidden?: boolean
  batch?: number
  order?: number
}

/** How much of the text before a log's closing `]` must be unchanged to count as the same log. */
const PROBE_LENGTH = 64

/**
 * Turns successive reads of one deployment's full log into the lines not seen before.
 *
 * Coolify has no log offset: every read returns the whole log again. 4.x sends a JSON array of
 * entries in a string, appended to in order; the contract sends newline-separated text. Either
 * way the log only grows, so the cursor remembers where the last read ended and parses only what
 * came after it: the work per read grows with the new lines, not with the log. A 4.x log that did
 * not just grow (reordered, trimmed, a stale copy) is parsed whole and matched entry by entry.
 */
export class LogCursor {
  /** Entries (4.x) or characters (text) taken so far. */
  private consumed = 0
  /**
   * Where the last whole 4.x log read ended (its closing `]`), and the text just before it, in the
   * log as it stood: escaped in Coolify's answer, or not.
   */
  private arrayEnd = -1
  private probe = ''
  private escaped = false
  /** The last entry taken, to recognise the same log grown when it must be parsed whole. */
  private lastEntry: Entry | undefined
  /**
   * Every entry taken (`keyOf`), so that none is taken twice when the log is reordered: in an
   * array, which holds numbers unboxed, and in a set made from it only once a log comes reordered:
   * a log that only grows never pays for a set's inserts.
   */
  private readonly takenKeys: number[] = []
  private takenSet: Set<number> | undefined
  /** The command whose `$ command` line was printed last, with its batch. */
  private lastCommand: string | undefined
  private lastBatch = 0
  /** Text of an unterminated last line, held until it ends or the deployment does. */
  private pending = ''
  private sawClosing = false

  constructor(private readonly showHidden: boolean) {}

  /** Grows whenever a read brings anything new, hidden entries and unfinished lines included. */
  get progress(): number {
    return this.takenKeys.length + this.consumed + this.pending.length
  }

  /** Coolify's last entry has been read: no more lines will come. */
  get closed(): boolean {
    return this.sawClosing
  }

  /**
   * The new visible lines in `logs`, the deployment's whole log as read now: as text, or as it
   * stands escaped in Coolify's answer, where only what it grew by is unescaped.
   */
  next(logs: string | EscapedLog | null | undefined): LogLine[] {
    if (!logs) return []
    const log = typeof logs === 'string' ? new PlainLog(logs) : logs
    if (!log.isArray()) {
      // Not as json_encode writes an array: read as text, whatever it turns out to be.
      const text = log.text()
      if (text === undefined) return []
      if (log instanceof EscapedLog) return this.next(text)
      return this.nextText(text)
    }
    let fresh = this.appended(log)
    let grown = fresh !== undefined
    if (!fresh) {
      const whole = log.text()
      const entries = whole === undefined ? undefined : parseEntries(whole)
      // An array that does not parse was cut off on the way: wait for a whole one.
      if (!entries) return []
      grown =
        entries.length >= this.consumed &&
        (this.consumed === 0 || sameEntry(entries[this.consumed - 1], this.lastEntry))
      // Not the log seen before plus entries at its end (reordered, trimmed, a stale copy): take
      // every entry not taken yet, wherever it stands.
      fresh = grown ? entries.slice(this.consumed) : entries.filter(entry => !this.taken(entry))
    }
    this.take(fresh, grown)
    // Only a log holding all that was taken may serve as the start of the next one, read as the
    // same kind of text: where its `]` stood, and the text before it.
    this.escaped = log instanceof EscapedLog
    this.arrayEnd = grown ? log.answer.lastIndexOf(']', log.end - 1) - log.start : -1
    const at = log.start + this.arrayEnd
    this.probe = grown ? copyOf(log.answer.slice(Math.max(log.start, at - PROBE_LENGTH), at)) : ''
    return this.linesOf(fresh)
  }

  /** At the end of a deployment: the last line, even without a closing newline. */
  flush(): LogLine[] {
    const text = this.pending
    this.pending = ''
    return text ? [{ kind: 'stdout', text }] : []
  }

  /**
   * The entries after those of the last read, parsed alone, when `logs` is that log with entries
   * appended: unchanged up to where it ended, then `,` and more (or nothing more). Undefined
   * when it is not, and the whole log must be parsed.
   */
  private appended(log: EscapedLog | PlainLog): Entry[] | undefined {
    const end = this.arrayEnd
    const at = log.start + end
    if (
      end < 0 ||
      this.escaped !== log instanceof EscapedLog ||
      log.length <= end ||
      !log.answer.startsWith(this.probe, at - this.probe.length)
    ) {
      return undefined
    }
    if (log.length === end + 1 && log.answer.charCodeAt(at) === CLOSE) return []
    if (log.answer.charCodeAt(at) !== COMMA) return undefined
    const rest = log.text(at + 1)
    // Joined with `+`: V8 parses a template literal around a slice at half the speed.
    return rest === undefined ? undefined : parseEntries('[' + rest)
  }

  /**
   * Records new entries as taken. Those that extend the log seen so far also move its end, which
   * the next read is compared with; others (from a reordered log) do not.
   */
  private take(fresh: Entry[], grown: boolean): void {
    for (let i = 0; i < fresh.length; i++) {
      const key = keyOf(fresh[i])
      this.takenKeys.push(key)
      this.takenSet?.add(key)
    }
    if (!grown || fresh.length === 0) return
    this.consumed += fresh.length
    this.lastEntry = fresh[fresh.length - 1]
  }

  private taken(entry: Entry): boolean {
    this.takenSet ??= new Set(this.takenKeys)
    return this.takenSet.has(keyOf(entry))
  }

  /** The printed lines of new entries, in Coolify's `order`. */
  private linesOf(fresh: Entry[]): LogLine[] {
    // New entries nearly always come in that order already; a stable sort keeps it otherwise.
    // Never by `batch`: the job's own lines carry 1, a command's output a counter that only grows.
    fresh.sort(byOrder)
    const lines: LogLine[] = []
    // Runs for every entry of a log: an indexed loop keeps the code V8 optimizes for it small,
    // and the rarer paths are calls made every time, so that none lacks what V8 learned of it.
    for (let i = 0; i < fresh.length; i++) {
      const entry = fresh[i]
      const output = entry.output ?? ''
      this.sawClosing = this.sawClosing || CLOSING.test(output)
      const hidden = entry.hidden === true
      if (hidden && !this.showHidden) continue
      const command = this.commandLineOf(entry, hidden)
      if (command) lines.push(command)
      const kind = entryKind(entry.type)
      // Hidden entries are the job's own commands, some carrying every variable encoded.
      const text = hidden ? redactPayloads(output) : output
      if (!text.includes('\n')) lines.push(lineOf(kind, text, hidden))
      else {
        const parts = text.split('\n')
        for (let k = 0; k < parts.length; k++) lines.push(lineOf(kind, parts[k], hidden))
      }
    }
    return lines
  }

  /** The `$ command` line due before an entry: its command's, when not the one printed last. */
  private commandLineOf(entry: Entry, hidden: boolean): LogLine | undefined {
    if (!entry.command) return undefined
    const batch = entry.batch ?? 0
    if (entry.command === this.lastCommand && batch === this.lastBatch) return undefined
    this.lastCommand = entry.command
    this.lastBatch = batch
    // A command shown in the log can carry a payload too: redacted, and kept to the log.
    const text = redactPayloads(entry.command)
    return lineOf('command', text, hidden || text !== entry.command)
  }

  private nextText(logs: string): LogLine[] {
    if (logs.length < this.consumed) return []
    const end = logs.lastIndexOf('\n')
    if (end < this.consumed) {
      this.pending = logs.slice(this.consumed)
      if (CLOSING.test(this.pending)) this.sawClosing = true
      return []
    }
    const chunk = logs.slice(this.consumed, end)
    this.consumed = end + 1
    this.pending = logs.slice(this.consumed)
    if (CLOSING_LINE.test(chunk) || CLOSING.test(this.pending)) this.sawClosing = true
    return chunk.split('\n').map(text => ({ kind: 'stdout', text: withoutCr(text) }))
  }
}

/**
 * The entry Coolify's deployment job writes last, after the final status: "Gracefully shutting
 * down build container: <uuid>".
 */
const CLOSING = /^Gracefully shutting down build container\b/
const CLOSING_LINE = /^Gracefully shutting down build container\b/m

const COMMA = 0x2c
const CLOSE = 0x5d

/** 4.x logs open with an array of objects; text logs (even `[+] Building`) do not. */
const JSON_ARRAY = /^\s*\[\s*[{\]]/

/** A log given as text, read as an escaped one is. */
class PlainLog {
  readonly start = 0
  constructor(readonly answer: string) {}

  get end(): number {
    return this.answer.length
  }

  get length(): number {
    return this.answer.length
  }

  isArray(): boolean {
    return JSON_ARRAY.test(this.answer)
  }

  text(from = 0): string {
    return from === 0 ? this.answer : this.answer.slice(from)
  }
}

function parseEntries(logs: string): Entry[] | undefined {
  try {
    const parsed: unknown = JSON.parse(logs)
    return Array.isArray(parsed) ? (parsed as Entry[]) : undefined
  } catch {
    return undefined
  }
}

/**
 * The text as a string of its own. V8 makes a slice of a string point into it, and a probe that
 * did would keep the whole log it was cut from alive until the next read.
 */
function copyOf(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8')
}

/** A printed line, without the `\r` of a CRLF ending. */
function lineOf(kind: LineKind, text: string, hidden: boolean): LogLine {
  return hidden ? { kind, text: withoutCr(text), hidden } : { kind, text: withoutCr(text) }
}

function withoutCr(text: string): string {
  return text.endsWith('\r') ? text.slice(0, -1) : text
}

function entryKind(type: string | undefined): LineKind {
  if (type === 'stderr' || type === 'error') return 'stderr'
  if (type === 'info' || type === 'warning') return type
  return 'stdout'
}

function byOrder(a: Entry, b: Entry): number {
  return (a.order ?? 0) - (b.order ?? 0)
}

function sameEntry(a: Entry | undefined, b: Entry | undefined): boolean {
  return (
    a !== undefined &&
    b !== undefined &&
    a.batch === b.batch &&
    a.order === b.order &&
    a.output === b.output &&
    a.command === b.command
  )
}

/**
 * An entry by its `order` and its output, in one number. Coolify numbers entries over the whole
 * log (the first may have none: 0), but a cancel through the API writes its entries into one copy
 * of the row while the job saves its output from another (DeployController.php 278-287,
 * ExecuteRemoteCommand.php 180-206): the job's next entries then replace the cancel's under the
 * same numbers.
 */
function keyOf(entry: Entry): number {
  return (entry.order ?? 0) * 2 ** 32 + hashOf(entry.output ?? '')
}

/** FNV-1a over UTF-16 code units: a short stand-in for the text of an entry. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}
