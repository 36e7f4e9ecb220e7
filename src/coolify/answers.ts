/**
 * Reading values out of Coolify's answers, which older servers and odd rows give in other shapes:
 * its timestamps, and its lists.
 */

/** Epoch ms of one of Coolify's timestamps (ISO 8601, microseconds allowed); undefined if none. */
export function timeOf(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? undefined : ms
}

/** A list in one of Coolify's answers; empty when it gave none, or something other than a list. */
export function listOf<T>(value: readonly T[] | null | undefined): T[]
export function listOf<T>(value: unknown): T[]
export function listOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : []
}
