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

/**
 * Whether Coolify's `version` ("4.3.11", "v4.0.0-beta.405", "4.0.0-beta.420.7") is `since` or
 * later; undefined when either does not read as one. A beta comes before its release.
 */
export function releaseAtLeast(version: string, since: string): boolean | undefined {
  const [have, want] = [releaseOf(version), releaseOf(since)]
  if (!have || !want) return undefined
  for (let i = 0; i < have.length; i++) {
    if (have[i] !== want[i]) return have[i] > want[i]
  }
  return true
}

/** major, minor, patch, beta (Infinity for a release) and the beta's own fix of a version. */
function releaseOf(version: string): number[] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:-beta\.(\d+)(?:\.(\d+))?)?$/.exec(version.trim())
  if (!match) return undefined
  const [, major, minor, patch, beta, fix] = match
  return [Number(major), Number(minor), Number(patch), Number(beta ?? Infinity), Number(fix ?? 0)]
}
