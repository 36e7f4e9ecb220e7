/** A deployment's status and log at a given moment, computed from its scenario (no timers). */
import type { LogLine, LogType, Scenario } from './types.js'

/** One log entry as Coolify stores it, with its time in ms. */
export interface Entry {
  command: string | null
  output: string
  type: LogType
  timestamp: number
  hidden: boolean
  batch: number
}

/** Flavor-neutral status: 'cancelled' is spelled per flavor by the caller. */
export type Phase = 'queued' | 'in_progress' | 'finished' | 'failed' | 'cancelled'

export interface Progress {
  phase: Phase
  entries: Entry[]
  /** When the job took the row: the first status after 'queued'. */
  startedAt: number | null
  finishedAt: number | null
  updatedAt: number
}

/** What a deployment needs to be evaluated. */
export interface Timeline {
  /** The deployment's uuid: `{{deployment_uuid}}` in a scenario's lines stands for it. */
  uuid?: string
  scenario: Scenario
  createdAt: number
  cancelledAt?: number
  /** Lines written by the cancel request, after everything the scenario wrote before it. */
  cancelEntries: Entry[]
  /** Lines the job itself writes when it takes the row, after that step's own lines. */
  job?: (startedAt: number) => Array<string | LogLine>
}

/**
 * A short success, with a hidden command and, after the terminal status, the closing entry naming
 * the deployment as Coolify 4.3.11 writes it.
 */
export const DEFAULT_SCENARIO: Scenario = {
  steps: [
    { at: 0, status: 'queued' },
    {
      at: 20,
      status: 'in_progress',
      lines: [
        'Starting deployment.',
        { output: 'Docker version 27.0.3', command: 'docker --version', hidden: true }
      ]
    },
    { at: 40, lines: ['Building docker image started.', 'Building docker image completed.'] },
    { at: 60, status: 'finished', lines: ['Rolling update completed.'] },
    { at: 80, lines: ['Gracefully shutting down build container: {{deployment_uuid}}'] }
  ]
}

export function entry(line: string | LogLine, timestamp: number): Entry {
  const l = typeof line === 'string' ? { output: line } : line
  return {
    command: l.command ?? null,
    output: l.output,
    type: l.type ?? 'stdout',
    timestamp,
    hidden: l.hidden ?? false,
    batch: l.batch ?? 1
  }
}

/** As Coolify 4.3.11's closing entry names the deployment: `{{deployment_uuid}}` in a line. */
function withUuid(e: Entry, uuid: string | undefined): Entry {
  if (uuid === undefined || !e.output.includes(UUID_MARK)) return e
  return { ...e, output: e.output.replaceAll(UUID_MARK, uuid) }
}

export const UUID_MARK = '{{deployment_uuid}}'

export function isRunning(phase: Phase): boolean {
  return phase === 'queued' || phase === 'in_progress'
}

/** Apply the steps due by `now` (or by the cancel, which freezes the scenario). */
export function progress(t: Timeline, now: number): Progress {
  const until = (t.cancelledAt ?? now) - t.createdAt
  // Stable sort: steps with the same `at` keep their written order.
  const due = [...t.scenario.steps].sort((a, b) => a.at - b.at).filter(s => s.at <= until)
  const p: Progress = {
    phase: 'queued',
    entries: [],
    startedAt: null,
    finishedAt: null,
    updatedAt: t.createdAt
  }
  for (const step of due) {
    const at = t.createdAt + step.at
    let started = false
    // Once terminal, the status stays; later steps still append lines (cleanup output).
    if (step.status && isRunning(p.phase)) {
      p.phase = step.status
      if (!isRunning(p.phase)) p.finishedAt = at
      started = p.startedAt === null && p.phase !== 'queued'
      if (started) p.startedAt = at
    }
    for (const line of step.lines ?? []) p.entries.push(withUuid(entry(line, at), t.uuid))
    if (started && t.job) for (const line of t.job(at)) p.entries.push(entry(line, at))
    p.updatedAt = at
  }
  if (t.cancelledAt !== undefined) {
    p.phase = 'cancelled'
    p.finishedAt = p.updatedAt = t.cancelledAt
    p.entries.push(...t.cancelEntries)
  }
  return p
}
