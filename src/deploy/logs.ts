/** What a printed line came from: Coolify's entry types, plus the command that produced output. */
export type LineKind = 'stdout' | 'stderr' | 'info' | 'warning' | 'command'

export interface LogLine {
  kind: LineKind
  text: string
}

interface Entry {
  command?: string | null
  output?: string | null
  type?: string
  hidden?: boolean
  batch?: number
  order?: number
}

/**
 * Turns successive reads of one deployment's full log into the lines not seen before.
 *
 * Coolify has no log offset: every read returns the whole log again. 4.x sends a JSON array of
 * entries in a string, appended to in order; the contract sends newline-separated text. Either
 * way the log only grows, so the cursor remembers how far it got and looks only past that point:
 * the work per read after parsing grows with the new lines, not with the log. A 4.x log that did
 * not just grow (reordered, trimmed, a stale copy) is matched entry by entry instead.
 */
export class LogCursor {
  /** Entries (4.x) or characters (text) already consumed. */
  private consumed = 0
  /** The last entry of the previous read, to recognise the same log grown on the next read. */
  private lastEntry: Entry | undefined
  /** (batch, order) of every entry taken, so that none is taken twice when the log is reordered. */
  private readonly printed = new Set<string>()
  /** The command whose `$ command` line was printed last, with its batch. */
  private lastCommand: string | undefined
  /** Text of an unterminated last line, held until it ends or the deployment does. */
  private pending = ''

  constructor(private readonly showHidden: boolean) {}

  /** The new visible lines in `logs`, the deployment's whole log as read now. */
  next(logs: string | null | undefined): LogLine[] {
    if (!logs) return []
    if (!JSON_ARRAY.test(logs)) return this.nextText(logs)
    // An array that does not parse was cut off on the way: wait for a whole one.
    const entries = parseEntries(logs)
    return entries ? this.nextEntries(entries) : []
  }

  /** At the end of a deployment: the last line, even without a closing newline. */
  flush(): LogLine[] {
    const text = this.pending
    this.pending = ''
    return text ? [{ kind: 'stdout', text }] : []
  }

  private nextEntries(entries: Entry[]): LogLine[] {
    let fresh: Entry[]
    if (
      entries.length >= this.consumed &&
      (this.consumed === 0 || sameEntry(entries[this.consumed - 1], this.lastEntry))
    ) {
      // The log seen before plus new entries at its end: the usual case, and the cheap one.
      fresh = entries.slice(this.consumed)
    } else {
      // Reordered, trimmed or stale: take every entry not printed yet, whatever its place.
      fresh = entries.filter(entry => !this.printed.has(keyOf(entry)))
    }
    if (fresh.length === 0) return []
    this.consumed = entries.length
    this.lastEntry = entries[entries.length - 1]
    // Coolify shows entries by (batch, order); a stable sort of the new ones keeps their relative
    // order otherwise.
    fresh.sort(byBatchAndOrder)

    const lines: LogLine[] = []
    for (const entry of fresh) {
      this.printed.add(keyOf(entry))
      if (entry.hidden && !this.showHidden) continue
      if (entry.command) {
        const key = `${entry.batch ?? 0}\u0000${entry.command}`
        if (key !== this.lastCommand) {
          this.lastCommand = key
          lines.push({ kind: 'command', text: entry.command })
        }
      }
      const kind = entryKind(entry.type)
      const output = entry.output ?? ''
      for (const text of output.split('\n')) lines.push({ kind, text: text.replace(/\r$/, '') })
    }
    return lines
  }

  private nextText(logs: string): LogLine[] {
    if (logs.length < this.consumed) return []
    const end = logs.lastIndexOf('\n')
    if (end < this.consumed) {
      this.pending = logs.slice(this.consumed)
      return []
    }
    const chunk = logs.slice(this.consumed, end)
    this.consumed = end + 1
    this.pending = logs.slice(this.consumed)
    return chunk.split('\n').map(text => ({ kind: 'stdout', text: text.replace(/\r$/, '') }))
  }
}

/** 4.x logs open with an array of objects; text logs (even `[+] Building`) do not. */
const JSON_ARRAY = /^\s*\[\s*[{\]]/

function parseEntries(logs: string): Entry[] | undefined {
  try {
    const parsed: unknown = JSON.parse(logs)
    return Array.isArray(parsed) ? (parsed as Entry[]) : undefined
  } catch {
    return undefined
  }
}

function entryKind(type: string | undefined): LineKind {
  if (type === 'stderr' || type === 'error') return 'stderr'
  if (type === 'info' || type === 'warning') return type
  return 'stdout'
}

function byBatchAndOrder(a: Entry, b: Entry): number {
  return (a.batch ?? 0) - (b.batch ?? 0) || (a.order ?? 0) - (b.order ?? 0)
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

/** Coolify numbers entries by `order` (the first has none); with `batch` that names one. */
function keyOf(entry: Entry): string {
  return `${entry.batch ?? 0}:${entry.order ?? 0}`
}
