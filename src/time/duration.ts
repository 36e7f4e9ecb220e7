const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/y

/**
 * Milliseconds for `90` (seconds), `500ms`, `15m`, `1h30m`; undefined when the text is none of
 * those.
 */
export function parseDuration(text: string): number | undefined {
  const value = text.trim().toLowerCase()
  if (/^\d+(?:\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000)
  if (value === '') return undefined
  let total = 0
  PART.lastIndex = 0
  while (PART.lastIndex < value.length) {
    const match = PART.exec(value)
    if (!match) return undefined
    total += Number(match[1]) * UNIT_MS[match[2]]
  }
  return Math.round(total)
}

/** `1h 2m 3s`, `4.5s`, `120ms`: short and exact enough for a log line. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))}s`
  const seconds = Math.round(ms / 1000)
  const h = Math.floor(seconds / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  return [h && `${h}h`, m && `${m}m`, s && `${s}s`].filter(Boolean).join(' ')
}
