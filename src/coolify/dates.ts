/** Epoch ms of one of Coolify's timestamps (ISO 8601, microseconds allowed); undefined if none. */
export function timeOf(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? undefined : ms
}
