import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError } from '../coolify/errors.js'
import { sleep } from '../coolify/pacing.js'
import type { DeploymentDetail } from '../coolify/types.js'
import { LogPrinter } from '../report/console.js'
import { statusFromCoolify, type Deployment } from './deployment.js'
import { LogCursor } from './logs.js'
import { findUnderWay } from './trigger.js'

export interface WatchOptions {
  instanceUrl: string
  pollIntervalMs: number
  /** When the wait ends (epoch ms). */
  deadline: number
  cancelOnTimeout: boolean
  /** Print build logs at all. */
  logs: boolean
  /** Print Coolify's hidden entries too. */
  showHidden: boolean
  note: (message: string) => void
  warn: (message: string) => void
}

/** First reads come quickly, so a deployment that fails at once is reported at once. */
const FIRST_DELAY_MS = 500
/** Share of Coolify's per-minute rate limit that polling may use; the rest is for everyone else. */
const POLL_SHARE = 0.5
/** Pause before each read for the lines Coolify writes after the final status, and how many. */
const CLOSING_PAUSE_MS = 1000
const CLOSING_READS = 5
/** How long a cancel, and the read after it, may take once the wait is over. */
const CANCEL_BUDGET_MS = 5000

/**
 * Follows deployments to their end, all at once: reads each on its own cadence, prints new log
 * lines, and at the deadline cancels what is still running. It owns all the waiting; the client
 * owns the HTTP.
 */
export class Watcher {
  private readonly cursors = new Map<Deployment, LogCursor>()
  /** Several deployments at once get their lines grouped per batch and named. */
  private readonly printer: LogPrinter
  private permissionWarned = false

  constructor(
    private readonly client: CoolifyClient,
    private readonly deployments: Deployment[],
    private readonly options: WatchOptions
  ) {
    for (const deployment of deployments)
      this.cursors.set(deployment, new LogCursor(options.showHidden))
    this.printer = new LogPrinter(this.running.length > 1)
  }

  /** Deployments that have a Coolify deployment and have not ended. */
  get running(): Deployment[] {
    return this.deployments.filter(deployment => deployment.uuid && !deployment.ended)
  }

  /** Follows every running deployment until it ends, the deadline passes or `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const untilDeadline = AbortSignal.any([
      signal,
      AbortSignal.timeout(Math.max(0, this.options.deadline - Date.now()))
    ])
    await Promise.all(this.running.map(deployment => this.follow(deployment, untilDeadline)))
    if (signal.aborted) return
    await Promise.all(this.running.map(deployment => this.timeOut(deployment)))
  }

  private async timeOut(deployment: Deployment): Promise<void> {
    if (this.options.cancelOnTimeout) return this.cancel(deployment, 'timeout')
    deployment.end(
      'timeout',
      'it outlasted `timeout` and is still running in Coolify (`cancel-on-timeout` is false)'
    )
    this.printer.end(deployment)
  }

  /**
   * Cancels a running deployment, prints the lines it wrote until then, and ends it with `status`
   * (timeout, or cancelled when the workflow run was). A deployment that ended meanwhile keeps its
   * own status.
   */
  async cancel(deployment: Deployment, status: 'timeout' | 'cancelled'): Promise<void> {
    const signal = AbortSignal.timeout(CANCEL_BUDGET_MS)
    let reason =
      status === 'timeout'
        ? 'it outlasted `timeout` and was cancelled in Coolify'
        : 'cancelled in Coolify'
    try {
      await this.client.cancelDeployment(deployment.uuid!, signal)
    } catch (error) {
      // 400 "cannot be cancelled": it ended on its own meanwhile, which the read below shows.
      if (!(error instanceof CoolifyError && error.status === 400)) {
        reason = `could not cancel it in Coolify: ${error instanceof Error ? error.message : String(error)}`
      }
    }
    try {
      await this.read(deployment, signal)
    } catch {
      // The cancel is what matters here; the last lines are a courtesy.
    }
    this.flush(deployment)
    if (!deployment.ended || deployment.status === 'cancelled') deployment.end(status, reason)
    this.printer.end(deployment)
  }

  private async follow(deployment: Deployment, signal: AbortSignal): Promise<void> {
    this.printer.begin(deployment)
    let resolved = false
    for (let reads = 0; !signal.aborted; reads++) {
      try {
        await this.read(deployment, signal)
      } catch (error) {
        if (signal.aborted) break
        if (error instanceof CoolifyError && error.status === 404 && !resolved) {
          // A uuid Coolify never saved (a placeholder): follow the deployment really under way.
          resolved = true
          const real = await findUnderWay(this.client, deployment.appUuid, signal).catch(
            () => undefined
          )
          if (real && real !== deployment.uuid) {
            this.options.note(
              `${deployment.name}: Coolify does not know deployment ${deployment.uuid}; following ${real}, the one under way.`
            )
            deployment.uuid = real
            continue
          }
        }
        deployment.end(
          'failed',
          `could not read the deployment: ${error instanceof Error ? error.message : String(error)}`
        )
        break
      }
      if (deployment.ended) {
        await this.readClosingLines(deployment, signal)
        break
      }
      try {
        await sleep(this.delay(reads), signal)
      } catch {
        break
      }
    }
    if (deployment.ended) {
      this.flush(deployment)
      this.printer.end(deployment)
    }
  }

  /**
   * Coolify writes its last lines (configuration, "Gracefully shutting down build container") up
   * to a few seconds after the final status, many of them hidden: read again while the log grows.
   */
  private async readClosingLines(deployment: Deployment, signal: AbortSignal): Promise<void> {
    if (!this.options.logs) return
    const cursor = this.cursors.get(deployment)!
    const pause = Math.min(CLOSING_PAUSE_MS, this.options.pollIntervalMs)
    for (let reads = 0; reads < CLOSING_READS; reads++) {
      const before = cursor.progress
      try {
        await sleep(pause, signal)
        await this.read(deployment, signal)
      } catch {
        return
      }
      if (cursor.progress === before) return
    }
  }

  /** Reads the deployment once: status, links and new log lines. */
  private async read(deployment: Deployment, signal: AbortSignal): Promise<void> {
    const detail = await this.client.getDeployment(deployment.uuid!, signal)
    const changed = deployment.observe(detail, this.options.instanceUrl)
    if (changed && !deployment.ended) this.announce(deployment, detail)
    this.printLogs(deployment, detail)
  }

  private announce(deployment: Deployment, detail: DeploymentDetail): void {
    if (statusFromCoolify(detail.status) === undefined) {
      this.options.warn(
        `${deployment.name}: Coolify reports the status "${detail.status}", which this action does not know; it is treated as not finished.`
      )
    } else {
      this.options.note(`${deployment.name}: ${deployment.status.replace('_', ' ')}`)
    }
  }

  private printLogs(deployment: Deployment, detail: DeploymentDetail): void {
    if (!this.options.logs) return
    if (!('logs' in detail)) {
      if (!this.permissionWarned) {
        this.permissionWarned = true
        this.options.warn(
          'Build logs are hidden from this token: give it the `read:sensitive` ability to see them here. The deployment is followed all the same.'
        )
      }
      return
    }
    const lines = this.cursors.get(deployment)!.next(detail.logs)
    deployment.remember(lines)
    this.printer.lines(deployment, lines)
  }

  private flush(deployment: Deployment): void {
    if (!this.options.logs) return
    const lines = this.cursors.get(deployment)!.flush()
    deployment.remember(lines)
    this.printer.lines(deployment, lines)
  }

  /**
   * Time until the next read of one deployment. Polling as a whole stays within its share of the
   * rate limit however many deployments run; within that, the first reads come quickly.
   */
  private delay(reads: number): number {
    const perMinute = (this.client.gate.limitPerMinute ?? 200) * POLL_SHARE
    const floor = Math.ceil((60_000 / perMinute) * Math.max(1, this.running.length))
    const interval = Math.max(this.options.pollIntervalMs, floor)
    return Math.min(interval, Math.max(floor, FIRST_DELAY_MS * 2 ** reads))
  }
}
