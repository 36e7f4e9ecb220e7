import { host } from './host.js'

/**
 * Values shorter than this are not masked: the runner would star out every "true" or "3000" in the
 * log, and the pull request comment leaves out only what the log does.
 */
export const MIN_MASKED_LENGTH = 4

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
