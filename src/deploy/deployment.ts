import type { DeploymentDetail } from '../coolify/types.js'
import type { LogLine } from './logs.js'

/**
 * Where a deployment stands. `started` is a service or database that Coolify starts without a
 * deployment to follow; `timeout` is ours: the wait ended before Coolify's deployment did.
 */
export type Status =
  'queued' | 'in_progress' | 'finished' | 'failed' | 'cancelled' | 'timeout' | 'started'

const ENDED: ReadonlySet<Status> = new Set([
  'finished',
  'failed',
  'cancelled',
  'timeout',
  'started'
])
const FAILED: ReadonlySet<Status> = new Set(['failed', 'cancelled', 'timeout'])

/** Coolify's status names to ours; undefined for a name Coolify does not have (not terminal). */
export function statusFromCoolify(raw: string | undefined): Status | undefined {
  switch (raw) {
    case 'queued':
    case 'in_progress':
    case 'finished':
    case 'failed':
      return raw
    case 'cancelled':
    case 'cancelled-by-user':
      return 'cancelled'
    default:
      return undefined
  }
}

export function isFailure(status: Status): boolean {
  return FAILED.has(status)
}

const TAIL_LINES = 40

/** One resource the trigger touched: the watch loop advances it, reporters only read it. */
export class Deployment {
  status: Status = 'queued'
  /** Coolify's status word as last read, kept when it is one we do not know. */
  coolifyStatus?: string
  /** Why it ended the way it did, when Coolify's status alone does not say. */
  reason?: string
  /** The application's public URL (its first `fqdn`). */
  appUrl?: string
  /** The deployment's page in Coolify. */
  link?: string
  commit?: string
  endedAt?: number
  /** The last lines of its log, for summaries and annotations. */
  readonly tail: LogLine[] = []

  constructor(
    readonly appUuid: string,
    public name: string,
    /** Coolify's deployment uuid; undefined for resources with nothing to follow. */
    public uuid: string | undefined,
    readonly triggeredAt: number
  ) {}

  get ended(): boolean {
    return ENDED.has(this.status)
  }

  get durationMs(): number | undefined {
    return this.endedAt === undefined ? undefined : this.endedAt - this.triggeredAt
  }

  /** Takes in a read of the deployment; returns true when its status changed. */
  observe(detail: DeploymentDetail, instanceUrl: string): boolean {
    if (detail.application_name) this.name = detail.application_name
    if (detail.commit) this.commit = detail.commit
    if (detail.deployment_url) this.link = new URL(detail.deployment_url, `${instanceUrl}/`).href
    const previous = this.coolifyStatus
    this.coolifyStatus = detail.status
    const status = statusFromCoolify(detail.status)
    if (status) {
      this.status = status
      if (this.ended && this.endedAt === undefined) this.endedAt = Date.now()
    }
    return previous !== detail.status
  }

  end(status: Status, reason?: string): void {
    this.status = status
    if (reason) this.reason = reason
    this.endedAt ??= Date.now()
  }

  remember(lines: readonly LogLine[]): void {
    for (const line of lines.length > TAIL_LINES ? lines.slice(-TAIL_LINES) : lines) {
      if (this.tail.length === TAIL_LINES) this.tail.shift()
      this.tail.push(line)
    }
  }
}

/** What reporters get: a deployment they can read but not change. */
export type DeploymentView = Readonly<Omit<Deployment, 'observe' | 'end' | 'remember'>>
