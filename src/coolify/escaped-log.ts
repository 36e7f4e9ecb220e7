/**
 * A deployment's log as it stands in Coolify's answer: the JSON text of its entries, held in the
 * answer's JSON as a string, still escaped. Every read of a deployment carries the whole log, and
 * parsing the answer as a whole would unescape all of it every time; kept as it came, only what
 * the log grew by is unescaped (LogCursor).
 */
export class EscapedLog {
  constructor(
    /** The answer's text. */
    readonly answer: string,
    /** Where the log's escaped text starts in it, and ends (the closing quote's index). */
    readonly start: number,
    readonly end: number
  ) {}

  /** The escaped text's length. */
  get length(): number {
    return this.end - this.start
  }

  /** Whether it opens as `json_encode` writes an array of entries, or an empty one. */
  isArray(): boolean {
    const next = this.answer.charCodeAt(this.start + 1)
    return next === OPEN_BRACE || next === CLOSE_BRACKET
  }

  /** The log unescaped from `from` (an index in the answer) to its end; undefined when not JSON. */
  text(from = this.start): string | undefined {
    try {
      // Joined with `+`: V8 parses a template literal around a slice at half the speed.
      return JSON.parse('"' + this.answer.slice(from, this.end) + '"') as string
    } catch {
      return undefined
    }
  }
}

const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d

/** Where 4.x's log begins in a deployment's answer: a key, then a string holding an array. */
const LOGS_KEY = '"logs":"['
/**
 * The end of that string. Every quote inside a JSON string is escaped, so a quote right after a
 * `]` closes one; the log is `json_encode`d whole at every entry (ApplicationDeploymentQueue.php
 * 205-211, ExecuteRemoteCommand.php 181-204), so its text always ends with the array's `]`.
 */
const LOG_END = ']"'
/**
 * What starts the answer's next field in compact JSON, which a string cannot hold unescaped: found
 * before that end, the log ended earlier (a text log that looks like an array). Laravel writes
 * compact JSON; an answer that is not, as the end shows, is parsed whole.
 */
const NEXT_FIELD = ',"'
/** Where the log was, while the rest is parsed: what no log of Coolify's is (a lone NUL). */
const CUT = '\\u0000'

/**
 * A deployment's answer parsed without its log, which is returned as it stands in the text. The
 * answer's `logs` is read from that text when asked for. Undefined when the answer does not hold
 * a 4.x log (none, hidden from the token, plain text) or is not the JSON object it looks like: it
 * is then parsed as a whole.
 */
export function parseApart(text: string): { body: object; log: EscapedLog } | undefined {
  const key = text.indexOf(LOGS_KEY)
  if (key < 0) return undefined
  const start = key + LOGS_KEY.length - 1
  const close = text.indexOf(LOG_END, start)
  if (close < 0) return undefined
  const field = text.indexOf(NEXT_FIELD, start)
  if (field >= 0 && field < close) return undefined
  const end = close + 1
  if (!text.startsWith(NEXT_FIELD, end + 1) && text.charCodeAt(end + 1) !== CLOSE_BRACE) {
    return undefined
  }
  const log = new EscapedLog(text, start, end)
  let body: unknown
  try {
    body = JSON.parse(text.slice(0, start) + CUT + text.slice(end))
  } catch {
    return undefined
  }
  // The key found was the answer's own, not one of an object inside it.
  if (!body || typeof body !== 'object' || (body as { logs?: unknown }).logs !== '\0') {
    return undefined
  }
  let logs: string | undefined
  Object.defineProperty(body, 'logs', {
    enumerable: true,
    get: () => (logs ??= log.text() ?? '')
  })
  return { body, log }
}
