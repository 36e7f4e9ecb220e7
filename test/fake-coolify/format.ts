/** How Coolify (Laravel/PHP) spells ids, dates and JSON. */
import { randomBytes } from 'node:crypto'

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** A 24-char lowercase id that starts with a letter, like Coolify's cuid2. */
export function newUuid(): string {
  const bytes = randomBytes(24)
  let id = ALPHABET[bytes[0] % 26]
  for (let i = 1; i < 24; i++) id += ALPHABET[bytes[i] % ALPHABET.length]
  return id
}

/** Laravel serializes dates with microseconds: 2024-05-01T10:00:00.123000Z. */
export function laravelDate(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z')
}

/**
 * A timestamp column no model casts, as Postgres prints it through PDO: `2026-11-28 12:00:01`,
 * UTC (config/app.php 126), whole seconds, no zone (Application.php casts() leaves
 * last_online_at out, as Service and the database models do).
 */
export function columnDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

export function isoDate(ms: number): string {
  return new Date(ms).toISOString()
}

/** json_encode without flags, as Laravel's JsonResponse and Coolify's log column use: `\/` and `\uXXXX`. */
export function phpJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, c => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
}
