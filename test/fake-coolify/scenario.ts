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
  /** When the status turned final (or the cancel came). */
  finishedAt: number | null
  /**
   * The row's `finished_at`: written by handle()'s finally (ApplicationDeploymentJob.php 386-392),
   * after the post-deployment command's output and before the configuration write and the closing
   * entry, not when the status turns final (post_deployment(), 529-556, sets FINISHED first). Null
   * until then.
   */
  finallyAt: number | null
  updatedAt: number
}

/** What a running job stopped by a cancel writes, `at` once: its failure, then its `finally`. */
export interface StoppedJob {
  at: number
  failure: Entry[]
  /** Written after `finished_at`, unless the job is killed in its finally. */
  finally: Entry[]
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
  /** What the running job a cancel stopped writes. Without, its `finally` is taken as immediate. */
  stoppedJob?: StoppedJob
  /** Lines the job itself writes when it takes the row, after that step's own lines. */
  job?: (startedAt: number) => Array<string | LogLine>
  /**
   * The finally writes its closing entry after `finished_at` whatever the scenario says, as 4.3.11's
   * does (ApplicationDeploymentJob.php 409-411): a scenario without one gets it CONFIGURATION_MS
   * later. Without, a scenario's log is all there is (a server before 4.0.0-beta.407).
   */
  closes?: boolean
}

/** How long the finally takes to write the configuration when a scenario does not say (0.4–1.2 s). */
export const CONFIGURATION_MS = 400

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

/**
 * One of the job's own lines, or a command's output in `batch`. addLogEntry always writes batch 1
 * (ApplicationDeploymentQueue.php 197); execute_remote_command writes its static counter, raised
 * once per call and never reset (ExecuteRemoteCommand.php 19, 63, 179).
 */
export function entry(line: string | LogLine, timestamp: number, batch = 1): Entry {
  const l = typeof line === 'string' ? { output: line } : line
  return {
    command: l.command ?? null,
    output: l.output,
    type: l.type ?? 'stdout',
    timestamp,
    hidden: l.hidden ?? false,
    batch: l.command ? batch : 1
  }
}

/**
 * Numbers the commands' output: a run of entries from one command is one call of
 * execute_remote_command, and each call raises the counter (ExecuteRemoteCommand.php 63).
 */
class Batches {
  private counter = 0
  private last: string | null = null

  of(line: string | LogLine): number {
    const command = typeof line === 'string' ? null : (line.command ?? null)
    if (command !== null && command !== this.last) this.counter++
    this.last = command
    return this.counter
  }
}

/** As Coolify 4.3.11's closing entry names the deployment: `{{deployment_uuid}}` in a line. */
function withUuid(e: Entry, uuid: string | undefined): Entry {
  if (uuid === undefined || !e.output.includes(UUID_MARK)) return e
  return { ...e, output: e.output.replaceAll(UUID_MARK, uuid) }
}

export const UUID_MARK = '{{deployment_uuid}}'

/** The entry the finally writes last (ApplicationDeploymentJob.php 410). */
const CLOSING = /^Gracefully shutting down build container\b/
const CLOSING_ENTRY = `Gracefully shutting down build container: ${UUID_MARK}`

function textOf(line: string | LogLine): string {
  return typeof line === 'string' ? line : line.output
}

export function isRunning(phase: Phase): boolean {
  return phase === 'queued' || phase === 'in_progress'
}

/** Apply the steps due by `now` (or by the cancel, which freezes the scenario). */
export function progress(t: Timeline, now: number): Progress {
  const until = (t.cancelledAt ?? now) - t.createdAt
  const p: Progress = {
    phase: 'queued',
    entries: [],
    startedAt: null,
    finishedAt: null,
    finallyAt: null,
    updatedAt: t.createdAt
  }
  // Stable sort: steps with the same `at` keep their written order.
  const steps = [...t.scenario.steps].sort((a, b) => a.at - b.at)
  // The finally writes `finished_at` as soon as what came before it is written, then the
  // configuration (no entry, but each remote command moves `updated_at`: a step without status or
  // lines), then the closing entry (ApplicationDeploymentJob.php 389-410; ExecuteRemoteCommand.php
  // 221-223): `finished_at` comes with the last step before the closing entry's that wrote a status
  // or lines, or, without a closing entry, with the last.
  const closing = steps.findIndex(s => (s.lines ?? []).some(l => CLOSING.test(textOf(l))))
  const before = closing > 0 ? steps.slice(0, closing) : steps
  const finallyStep =
    before.findLast(s => s.status !== undefined || (s.lines ?? []).length > 0) ??
    before[before.length - 1]
  const due = steps.filter(s => s.at <= until)
  const batches = new Batches()
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
    for (const line of step.lines ?? []) {
      p.entries.push(withUuid(entry(line, at, batches.of(line)), t.uuid))
    }
    if (started && t.job) {
      for (const line of t.job(at)) p.entries.push(entry(line, at, batches.of(line)))
    }
    if (!isRunning(p.phase) && p.finallyAt === null && !t.scenario.killedInFinally) {
      if (step === finallyStep || steps[closing] === step) p.finallyAt = at
    }
    p.updatedAt = at
  }
  if (t.cancelledAt !== undefined) {
    // The cancel writes no finished_at (DeployController.php 256-300); a job it stops mid-run
    // writes it in its finally once it has written its failure, one still queued never runs.
    const running = p.phase === 'in_progress'
    p.phase = 'cancelled'
    p.finishedAt = p.updatedAt = t.cancelledAt
    p.entries.push(...t.cancelEntries)
    const stopped = t.stoppedJob
    if (running && stopped === undefined) p.finallyAt = t.cancelledAt
    if (running && stopped !== undefined && stopped.at <= now) {
      p.entries.push(...stopped.failure)
      p.updatedAt = stopped.at
      if (!t.scenario.killedInFinally) {
        p.finallyAt = stopped.at
        p.entries.push(...stopped.finally)
      }
    }
  }
  // The finally's own closing entry, where the scenario (or the cancel, which freezes it) left it
  // out: after what the scenario writes, the configuration's commands too.
  const written = p.entries.some(e => CLOSING.test(e.output))
  const lastStep = t.cancelledAt === undefined ? t.createdAt + (steps.at(-1)?.at ?? 0) : 0
  const closingDue =
    p.finallyAt !== null && t.closes && !written
      ? Math.max(p.finallyAt, lastStep) + CONFIGURATION_MS
      : null
  if (closingDue !== null && closingDue <= now) {
    p.entries.push(withUuid(entry(CLOSING_ENTRY, closingDue), t.uuid))
    p.updatedAt = closingDue
  }
  return p
}
