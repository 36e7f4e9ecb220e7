/**
 * Everything the action knows about a deployment's status, in one table: Coolify's words for it,
 * whether it has ended, whether it fails the step, how bad it is, and how reporters show it.
 * Every other module asks here; none compares status strings of its own.
 */

/**
 * `started` is a service or database that Coolify starts without a deployment to follow;
 * `timeout` is ours: the wait ended before Coolify's deployment did; `unhealthy` finished in
 * Coolify, but the application did not come up.
 */
export type Status =
  | 'queued'
  | 'in_progress'
  | 'finished'
  | 'failed'
  | 'cancelled'
  | 'timeout'
  | 'unhealthy'
  | 'started'
  | 'dry-run'

/** What a GitHub deployment status says of an outcome. */
export type GitHubState = 'success' | 'failure' | 'error'

interface StatusFacts {
  ended: boolean
  /** The step fails when any deployment ends with such a status. */
  fails: boolean
  /** Lower is worse: the step's `status` output is the worst of its deployments. */
  rank: number
  /** The mark in the job summary. */
  mark: string
  /** The GitHub deployment's outcome; none while Coolify is still at work. */
  github?: GitHubState
}

const STATUSES: Record<Status, StatusFacts> = {
  failed: { ended: true, fails: true, rank: 0, mark: '❌', github: 'failure' },
  unhealthy: { ended: true, fails: true, rank: 1, mark: '🩺', github: 'failure' },
  timeout: { ended: true, fails: true, rank: 2, mark: '⏱️', github: 'error' },
  cancelled: { ended: true, fails: true, rank: 3, mark: '⏹️', github: 'error' },
  in_progress: { ended: false, fails: false, rank: 4, mark: '🔄' },
  queued: { ended: false, fails: false, rank: 5, mark: '⏳' },
  finished: { ended: true, fails: false, rank: 6, mark: '✅', github: 'success' },
  started: { ended: true, fails: false, rank: 7, mark: '▶️', github: 'success' },
  // `dry-run` deploys nothing: the status of the run, never of a deployment.
  'dry-run': { ended: true, fails: false, rank: 8, mark: '🔍' }
}

/** Coolify's words: the contract's, and 4.x's `cancelled-by-user`. */
const FROM_COOLIFY: Record<string, Status> = {
  queued: 'queued',
  in_progress: 'in_progress',
  finished: 'finished',
  failed: 'failed',
  cancelled: 'cancelled',
  'cancelled-by-user': 'cancelled'
}

/**
 * Our status for Coolify's word, read leniently (case and spaces); undefined for a word Coolify
 * does not have, which is treated as not ended.
 */
export function statusFromCoolify(raw: unknown): Status | undefined {
  return typeof raw === 'string' ? FROM_COOLIFY[raw.trim().toLowerCase()] : undefined
}

/** Queued or running: what a cancel can still stop. An unknown word counts as running. */
export function isUnderWay(raw: unknown): boolean {
  const status = statusFromCoolify(raw)
  return status === undefined || !hasEnded(status)
}

/**
 * What an ended status may still become: a finished deployment may turn out unhealthy, of another
 * version (failed, or cancelled when another deploy's version superseded it) or unconfirmed when
 * `timeout` cut its health check; a started service or database comes up or not; a cancel this
 * action sent at `timeout` reads as cancelled first. Nothing else that ended changes again.
 */
const AFTER_END: Partial<Record<Status, readonly Status[]>> = {
  finished: ['unhealthy', 'failed', 'timeout', 'cancelled'],
  started: ['finished', 'unhealthy', 'timeout'],
  cancelled: ['timeout']
}

/** Whether a deployment now `from` may become `to`. */
export function canBecome(from: Status, to: Status): boolean {
  return from === to || !hasEnded(from) || (AFTER_END[from]?.includes(to) ?? false)
}

export function hasEnded(status: Status): boolean {
  return STATUSES[status].ended
}

/** Finished in Coolify: a new version is in place, so it can be checked for health. */
export function isFinished(status: Status | undefined): boolean {
  return status === 'finished'
}

/** The new version did not work: what `rollback-on-failure` undoes (a cancel or timeout is not). */
export function isBadVersion(status: Status): boolean {
  return status === 'failed' || status === 'unhealthy'
}

export function failsStep(status: Status): boolean {
  return STATUSES[status].fails
}

export function summaryMark(status: Status): string {
  return STATUSES[status].mark
}

export function gitHubState(status: Status): GitHubState | undefined {
  return STATUSES[status].github
}

/** The worst of some statuses; `failed` when there are none (nothing was deployed). */
export function worstOf(statuses: readonly Status[]): Status {
  if (statuses.length === 0) return 'failed'
  return statuses.reduce((worst, status) =>
    STATUSES[status].rank < STATUSES[worst].rank ? status : worst
  )
}

/** For sorting: the worse of two statuses first (failed before unhealthy, timeout, cancelled). */
export function worseFirst(a: Status, b: Status): number {
  return STATUSES[a].rank - STATUSES[b].rank
}

/** How a status reads in a sentence: `in progress`. */
export function describeStatus(status: Status): string {
  return status.replace('_', ' ')
}
