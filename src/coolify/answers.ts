/**
 * Reading values out of Coolify's answers, which older servers and odd rows give in other shapes:
 * its timestamps, and its lists.
 */

/** A date and time with no zone: `2026-11-28 12:00:01`, or with a `T`, fractions allowed. */
const ZONELESS = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?$/

/**
 * Epoch ms of one of Coolify's timestamps (ISO 8601, microseconds allowed); undefined if none.
 * A column no model casts (`last_online_at`) comes as Postgres prints it, without a zone: Coolify
 * stores UTC, so it is read as UTC, never in the runner's own time zone.
 */
export function timeOf(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined
  const trimmed = value.trim()
  const ms = Date.parse(ZONELESS.test(trimmed) ? `${trimmed.replace(' ', 'T')}Z` : trimmed)
  return Number.isNaN(ms) ? undefined : ms
}

/** A list in one of Coolify's answers; empty when it gave none, or something other than a list. */
export function listOf<T>(value: readonly T[] | null | undefined): T[]
export function listOf<T>(value: unknown): T[]
export function listOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : []
}
