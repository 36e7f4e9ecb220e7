import { host } from './host.js'

/**
 * Values shorter than this are never masked: the runner would star out every "1" or "on" in the
 * log, and the pull request comment leaves out only what the log does.
 */
export const MIN_MASKED_LENGTH = 4

/** A plain number of at most six digits (a port, a count, a size): `3000`, `8080`, `0.5`. */
const PLAIN_NUMBER = /^\d{1,6}(\.\d+)?$/
/** One word of at most twelve letters, all of one case: `https`, `production`, `true`, `INFO`. */
const PLAIN_WORD = /^(?:[a-z]{1,12}|[A-Z]{1,12})$/

/**
 * Whether one of the application's own settings (`env`, its variables) is worth masking. A mask
 * stars out the value in every line printed after it, links included: `PORT=3000` would make the
 * preview's link `…:***`, `PROTOCOL=https` every link `***://…`. So values that give nothing away
 * stay readable: under four characters, a plain number, or one word of letters in one case.
 * Anything else (digits among letters, mixed case, symbols, a URL) is masked.
 */
export function worthMasking(value: string): boolean {
  return value.length >= MIN_MASKED_LENGTH && !PLAIN_NUMBER.test(value) && !PLAIN_WORD.test(value)
}

/** Everything the step masked: what the runner does not mask itself (a pull request comment). */
const masked = new Set<string>()

/**
 * Masks a value in the host's log from now on, and remembers it, so that the pull request
 * comment, which the runner does not mask, can leave it out too.
 */
export function mask(value: string): void {
  if (!value) return
  masked.add(value)
  host().mask(value)
}

/** The values masked so far. */
export function maskedValues(): string[] {
  return [...masked]
}

/**
 * Coolify's hidden entries carry the commands of its deployment job, some with every variable of
 * the application encoded in them (`echo '<base64>' | base64 -d | tee .env`, heredocs): their
 * payloads are replaced before such a line is printed.
 */
export function redactPayloads(text: string): string {
  return text
    .replace(/(echo\s+(['"]?))[A-Za-z0-9+/=]{16,}(\2\s*\|\s*base64\b)/g, '$1<redacted>$3')
    .replace(/(<<-?\s*(['"]?)(\w+)\2[^\n]*\n)[\s\S]*?(\n\3\b)/g, '$1<redacted>$4')
}
