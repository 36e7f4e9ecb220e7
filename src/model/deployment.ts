import { timeOf } from '../coolify/answers.js'
import type { ApplicationDetail, ApplicationSummary, DeploymentDetail } from '../coolify/types.js'
import type { LogLine } from './logs.js'
import { canBecome, hasEnded, statusFromCoolify, type Status } from './status.js'

export type { Status } from './status.js'

const TAIL_LINES = 40

/** What Coolify deploys: an application has deployments; services and databases are started. */
export type Kind = 'application' | 'service' | 'database'

/**
 * One deployment a rollout started or joined, and the only place its state changes: the trigger
 * creates it, the rollout's phases advance it through these methods (an ended status changes only
 * as `canBecome` allows), reporters read it as a DeploymentView.
 */
export class Deployment {
  #status: Status = 'queued'
  #uuid: string | undefined
  #name: string
  /** Undefined until read; null when a read carried no status. */
  #coolifyStatus: string | null | undefined
  #reason: string | undefined
  #appUrl: string | undefined
  #stopGraceSeconds: number | undefined
  #link: string | undefined
  #commit: string | undefined
  #endedAt: number | undefined
  /** Coolify's own times, on Coolify's clock: the duration when both are known. */
  #createdAt: number | undefined
  #finishedAt: number | undefined
  #seenRunningAt: number | undefined
  readonly #tail: LogLine[] = []
  #imageTag: string | undefined
  #rolledBack: boolean | undefined
  #rollbackNote: string | undefined
  #runtimeLog: readonly string[] = []
  #warning: string | undefined
  #startedElsewhere = false

  constructor(
    /** The resource's uuid: an application's, or a service's or database's. */
    readonly appUuid: string,
    name: string,
    /** Coolify's deployment uuid; undefined for resources with nothing to follow. */
    uuid: string | undefined,
    readonly triggeredAt: number,
    readonly kind: Kind = 'application'
  ) {
    this.#name = name
    this.#uuid = uuid
  }

  /** The next deployment of the same application (a rollback): same name and URL. */
  static next(earlier: DeploymentView, uuid: string | undefined, at: number): Deployment {
    const next = new Deployment(earlier.appUuid, earlier.name, uuid, at, earlier.kind)
    next.#appUrl = earlier.appUrl
    return next
  }

  get status(): Status {
    return this.#status
  }
  get uuid(): string | undefined {
    return this.#uuid
  }
  get name(): string {
    return this.#name
  }
  /** Coolify's status word as last read, kept when it is one we do not know. */
  get coolifyStatus(): string | undefined {
    return this.#coolifyStatus ?? undefined
  }
  /** Why it ended the way it did, when the status alone does not say. */
  get reason(): string | undefined {
    return this.#reason
  }
  /** Where it is served: the application's first `fqdn`, or its preview's address. */
  get appUrl(): string | undefined {
    return this.#appUrl
  }
  /** The deployment's page in Coolify. */
  get link(): string | undefined {
    return this.#link
  }
  get commit(): string | undefined {
    return this.#commit
  }
  /** The last lines of its log, for summaries and annotations. */
  get tail(): readonly LogLine[] {
    return this.#tail
  }

  /** Docker-image apps: the image tag this deployment runs. */
  get imageTag(): string | undefined {
    return this.#imageTag
  }
  /** After a failure with `rollback-on-failure`: whether what ran before is running again. */
  get rolledBack(): boolean | undefined {
    return this.#rolledBack
  }
  /** What the rollback did: what runs now, or why nothing was rolled back. */
  get rollbackNote(): string | undefined {
    return this.#rollbackNote
  }
  /** The end of the application's runtime log, read when it turned out unhealthy. */
  get runtimeLog(): readonly string[] {
    return this.#runtimeLog
  }
  /** What could not be confirmed, though it did not fail the step. */
  get warning(): string | undefined {
    return this.#warning
  }

  get ended(): boolean {
    return hasEnded(this.#status)
  }

  /** Has a Coolify deployment and has not ended: what the watch loop follows and a cancel stops. */
  get running(): boolean {
    return this.#uuid !== undefined && !this.ended
  }

  /**
   * When Coolify's job wrote its end (`finished_at`), on Coolify's clock; undefined until then.
   * The status turns final earlier: the post-deployment command runs in between.
   */
  get finishedAt(): number | undefined {
    return this.#finishedAt
  }

  /**
   * When a read last showed it running, on Coolify's clock (its `Date`, else its row's
   * `updated_at`): its status turned final later, and the status check Coolify runs then (before
   * `finished_at`) comes after this.
   */
  get seenRunningAt(): number | undefined {
    return this.#seenRunningAt
  }

  /** Coolify's own duration when it gave both times, else from the trigger to when we saw the end. */
  get durationMs(): number | undefined {
    if (this.#createdAt !== undefined && this.#finishedAt !== undefined) {
      return Math.max(0, this.#finishedAt - this.#createdAt)
    }
    return this.#endedAt === undefined ? undefined : this.#endedAt - this.triggeredAt
  }

  /**
   * Started by someone else (the UI, a webhook, another run) and only joined or found by this
   * run: followed and reported, never cancelled by it.
   */
  get startedElsewhere(): boolean {
    return this.#startedElsewhere
  }

  /**
   * Follows another Coolify deployment: the real one behind a placeholder uuid, or (`startedHere`)
   * one this run queued in its place.
   */
  follow(uuid: string, startedHere = false): void {
    this.#uuid = uuid
    if (startedHere) this.#startedElsewhere = false
  }

  /** Marks it as another's: this run follows it but leaves it alone. */
  joined(): void {
    this.#startedElsewhere = true
  }

  /**
   * How long Coolify's job gives the application's container to stop, in seconds, when its
   * record's settings said (the detail of one application shows them, the list does not).
   */
  get stopGraceSeconds(): number | undefined {
    return this.#stopGraceSeconds
  }

  /**
   * Takes the application's name and URL from Coolify's application record: the preview's URL when
   * it deploys pull request `pr` (none rather than production's when that cannot be known).
   */
  describe(app: ApplicationSummary & Pick<ApplicationDetail, 'settings'>, pr?: number): void {
    if (app.name && this.#name === this.appUuid) this.#name = app.name
    const url = pr === undefined ? app.fqdn?.split(',')[0]?.trim() : previewUrl(app, pr)
    if (url) this.#appUrl = url
    if (app.settings) this.#stopGraceSeconds = stopGraceSeconds(app.settings)
  }

  /**
   * Takes in a read of the deployment, answered at `answeredAt` on Coolify's clock when known;
   * returns true when Coolify's status word changed.
   */
  observe(detail: DeploymentDetail, instanceUrl: string, answeredAt?: number): boolean {
    if (detail.application_name) this.#name = detail.application_name
    if (detail.commit) this.#commit = detail.commit
    this.locate(detail, instanceUrl)
    this.#createdAt = timeOf(detail.created_at) ?? this.#createdAt
    this.#finishedAt = timeOf(detail.finished_at) ?? this.#finishedAt
    const previous = this.#coolifyStatus
    this.#coolifyStatus = typeof detail.status === 'string' ? detail.status : null
    const status = statusFromCoolify(detail.status)
    // Coolify's word moves a deployment on until it ended; after that, only the rollout does.
    if (status && !this.ended) {
      this.#status = status
      if (this.ended) this.#endedAt ??= Date.now()
      // The answer's `Date`, or at the least when the row was last written (undated reads).
      else this.#seenRunningAt = answeredAt ?? timeOf(detail.updated_at) ?? this.#seenRunningAt
    }
    return previous !== this.#coolifyStatus
  }

  /** Takes the link to its page in Coolify from a read: `deployment_url`, a path on the instance. */
  locate(detail: DeploymentDetail, instanceUrl: string): void {
    if (detail.deployment_url) this.#link = new URL(detail.deployment_url, `${instanceUrl}/`).href
  }

  /** Ends it with `status`, unless it ended otherwise already; false when that was refused. */
  end(status: Status, reason?: string): boolean {
    if (!canBecome(this.#status, status)) return false
    this.#status = status
    if (reason) this.#reason = reason
    this.#endedAt ??= Date.now()
    return true
  }

  /**
   * Coolify started it (a service or database) and gave nothing to follow: `started`, not yet
   * timed, until its status says whether it came up.
   */
  started(): void {
    if (!this.ended) this.#status = 'started'
  }

  /** Passes, with a warning for the summary: each one said is kept. */
  doubt(warning: string): void {
    this.#warning = this.#warning ? `${this.#warning} ${warning}` : warning
  }

  /** Records the image tag it deploys, as asked or as its log showed. */
  ranImage(tag: string): void {
    this.#imageTag = tag
  }

  /** Finished (or started) in Coolify, but it did not come up; `runtimeLog` tells why. */
  unhealthy(reason: string, runtimeLog: readonly string[]): void {
    if (this.end('unhealthy', reason)) this.#runtimeLog = runtimeLog
  }

  /** The outcome of redeploying what ran before this one failed. */
  rollback(done: boolean, note: string): void {
    this.#rolledBack = done
    this.#rollbackNote = note
  }

  /**
   * Keeps the end of its log for summaries, annotations and the pull request comment: never a
   * hidden entry, which stays in the job log (and there only with `debug-logs`).
   */
  remember(lines: readonly LogLine[]): void {
    const visible = lines.filter(line => !line.hidden)
    for (const line of visible.length > TAIL_LINES ? visible.slice(-TAIL_LINES) : visible) {
      if (this.#tail.length === TAIL_LINES) this.#tail.shift()
      this.#tail.push(line)
    }
  }
}

/** What reporters get: a deployment they can read but not change. */
export type DeploymentView = Pick<
  Deployment,
  | 'appUuid'
  | 'kind'
  | 'warning'
  | 'startedElsewhere'
  | 'triggeredAt'
  | 'status'
  | 'uuid'
  | 'name'
  | 'coolifyStatus'
  | 'reason'
  | 'appUrl'
  | 'link'
  | 'commit'
  | 'tail'
  | 'imageTag'
  | 'rolledBack'
  | 'rollbackNote'
  | 'runtimeLog'
  | 'ended'
  | 'running'
  | 'durationMs'
  | 'finishedAt'
>

/** Coolify's preview address when the application sets none. */
const DEFAULT_PREVIEW_TEMPLATE = '{{pr_id}}.{{domain}}'

/**
 * The address Coolify gives an application's preview of pull request `pr`: the template's host
 * in place of the host of the application's first domain, whose scheme, port and path stay.
 * Undefined without a domain, and when the template holds `{{random}}`, a value Coolify draws
 * when it creates the preview and does not tell.
 */
function previewUrl(app: ApplicationSummary, pr: number): string | undefined {
  const first = app.fqdn?.split(',')[0]?.trim()
  if (!first) return undefined
  const template = app.preview_url_template?.trim() || DEFAULT_PREVIEW_TEMPLATE
  if (template.includes('{{random}}')) return undefined
  let url: URL
  try {
    url = new URL(first)
  } catch {
    return undefined
  }
  const host = template.replaceAll('{{domain}}', url.hostname).replaceAll('{{pr_id}}', String(pr))
  const port = url.port ? `:${url.port}` : ''
  const path = url.pathname === '/' ? '' : url.pathname
  return `${url.protocol}//${host}${port}${path}`
}

/** Coolify's bounds for an application's stop grace period, and what it uses outside them. */
const GRACE_MIN_SECONDS = 1
const GRACE_MAX_SECONDS = 3600
const GRACE_DEFAULT_SECONDS = 30

/**
 * The seconds Coolify's job waits for a container it stops in a deployment: the setting when it
 * lies within Coolify's bounds, else its default (ApplicationSetting.php 124-144; constants.php
 * 38-40).
 */
export function stopGraceSeconds(settings: NonNullable<ApplicationDetail['settings']>): number {
  const set = settings.stop_grace_period
  return typeof set === 'number' && set >= GRACE_MIN_SECONDS && set <= GRACE_MAX_SECONDS
    ? set
    : GRACE_DEFAULT_SECONDS
}
