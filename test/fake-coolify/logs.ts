/** The `logs` field of a deployment in each flavor. */
import { laravelDate, phpJson } from './format.js'
import type { Entry } from './scenario.js'

/**
 * 4x: a string holding a JSON array, or null before the first line. Coolify sets `order` from the
 * count of previous entries when it appends, over the whole log: the first entry has none when
 * addLogEntry wrote it (ApplicationDeploymentQueue.php 210-211), 1 when a command's output did
 * (ExecuteRemoteCommand.php 181-182).
 */
export function coolifyLogs(entries: Entry[]): string | null {
  if (entries.length === 0) return null
  const rows = entries.map((e, i) => ({
    command: e.command,
    output: e.output,
    type: e.type,
    timestamp: laravelDate(e.timestamp),
    hidden: e.hidden,
    batch: e.batch,
    ...(i > 0 || e.command !== null ? { order: i + 1 } : {})
  }))
  return phpJson(rows)
}

/** Seed: the visible lines' output, newline-separated. */
export function seedLogs(entries: Entry[]): string {
  return entries
    .filter(e => !e.hidden)
    .map(e => e.output)
    .join('\n')
}
