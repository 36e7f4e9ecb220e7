import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError, LOGS_HIDDEN_HINT } from '../coolify/errors.js'
import { sleep } from '../coolify/pacing.js'
import type { DeploymentDetail } from '../coolify/types.js'
import { describeError } from '../errors.js'
import { cancelDeployment } from './cancel.js'
import type { Deployment, DeploymentView } from './deployment.js'
import { findStarted, type TriggerMark } from './history.js'
import { LogCursor, type LogLine } from './logs.js'
import { describeStatus, statusFromCoolify } from './status.js'

/** Where build log lines go: the job's output, in the action. */
export interface LogSink {
  /** A deployment is followed from now on. */
  begin(deployment: DeploymentView): void
  lines(deployment: DeploymentView, lines: readonly LogLine[]): void
  /** No more lines will come for it. */
  end(deployment: DeploymentView): void
}

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
  sink: LogSink
  /** What the trigger asked for, to find the real deployment behind an unknown uuid. */
  trigger: TriggerMark
  note: (message: string) => void
  warn: (message: string) => void
}

/** First reads come quickly, so a deployment that fails at once is reported at once. */
const FIRST_DELAY_MS = 500
/**
 * Coolify writes its closing entry 0.4–1.2 s after the final status, with nothing in between:
 * without it, reads go on at this pace until the log has been quiet for longer than that.
 */
const CLOSING_PAUSE_MS = 500
const CLOSING_QUIET_MS = 1500
/** How long a cancel, and the reads after it, may take once the wait is over. */
const CANCEL_BUDGET_MS = 5000

/**
 * Follows deployments to their end, all at once: reads each on its own cadence within one shared
 * read budget, sends new log lines to the sink, and at the deadline cancels what is still running.
 * It owns all the waiting; the client owns the HTTP.
 */
export class Watcher {
  private readonly cursors = new Map<Deployment, LogCursor>()
  /** Why the last reads failed, when the wait ended while Coolify could not be read. */
  private readonly unread = new Map<Deployment, string>()
  private readonly pacer: ReadPacer
  private logsHidden = false

  constructor(
    private readonly client: CoolifyClient,
    private readonly deployments: readonly Deployment[],
    private readonly options: WatchOptions
  ) {
    for (const deployment of deployments)
      this.cursors.set(deployment, new LogCursor(options.showHidden))
    this.pacer = new ReadPacer(() => 60_000 / client.pollBudgetPerMinute())
  }

  /** Deployments that have a Coolify deployment and have not ended. */
  get running(): Deployment[] {
    return this.deployments.filter(deployment => deployment.running)
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

  /**
   * Cancels, in Coolify, every deployment still running, prints the lines they wrote until then,
   * and ends them with `status`: `timeout`, or `cancelled` when the workflow run was. A deployment
   * that ended on its own meanwhile keeps its own status.
   */
  async cancelRunning(status: 'timeout' | 'cancelled'): Promise<void> {
    await Promise.all(this.running.map(deployment => this.stop(deployment, status)))
  }

  private async timeOut(deployment: Deployment): Promise<void> {
    if (this.options.cancelOnTimeout) return this.stop(deployment, 'timeout')
    deployment.end(
      'timeout',
      'it outlasted `timeout` and is still running in Coolify (`cancel-on-timeout` is false)'
    )
    this.options.sink.end(deployment)
  }

  private async stop(deployment: Deployment, status: 'timeout' | 'cancelled'): Promise<void> {
    const signal = AbortSignal.timeout(CANCEL_BUDGET_MS)
    const result = await cancelDeployment(this.client, deployment.uuid!, signal)
    try {
      // The lines written until the cancel; a courtesy that must not hold up the cancel's outcome.
      if (result.detail) this.take(deployment, result.detail)
      else await this.read(deployment, signal)
    } catch {
      // Reported below from what is known.
    }
    this.flush(deployment)
    const unread = this.unread.get(deployment)
    const why =
      (status === 'timeout' ? 'it outlasted `timeout`' : 'the workflow run was cancelled') +
      (unread ? ` while Coolify could not be read (${unread})` : '')
    if (result.cancelled) {
      deployment.end(status, `${why}; it was cancelled in Coolify`)
    } else if (!deployment.ended) {
      deployment.end(
        status,
        `${why}, and it may still be running in Coolify: ${result.problem ?? 'its status is unknown'}`
      )
    }
    this.options.sink.end(deployment)
  }

  private async follow(deployment: Deployment, signal: AbortSignal): Promise<void> {
    this.options.sink.begin(deployment)
    let resolved = false
    for (let reads = 0; !signal.aborted; reads++) {
      try {
        await this.read(deployment, signal)
      } catch (error) {
        if (signal.aborted) {
          if (error instanceof CoolifyError) {
            this.unread.set(deployment, `${error.request}: ${error.reason}`)
          }
          break
        }
        if (error instanceof CoolifyError && error.status === 404 && !resolved) {
          // A uuid Coolify never saved (a placeholder): follow the deployment it stands for.
          resolved = true
          if (await this.resolve(deployment, signal)) continue
        }
        deployment.end('failed', `could not read the deployment: ${describeError(error)}`)
        break
      }
      if (deployment.ended) {
        await this.readClosingLines(deployment, signal)
        break
      }
      try {
        await sleep(Math.min(this.options.pollIntervalMs, FIRST_DELAY_MS * 2 ** reads), signal)
      } catch {
        break
      }
    }
    if (deployment.ended) {
      this.flush(deployment)
      this.options.sink.end(deployment)
    }
  }

  /** Follows the real deployment behind an unknown uuid; false when there is none to follow. */
  private async resolve(deployment: Deployment, signal: AbortSignal): Promise<boolean> {
    const real = await findStarted(
      this.client,
      deployment.appUuid,
      this.options.trigger,
      signal
    ).catch(() => undefined)
    if (!real || real === deployment.uuid) return false
    this.options.note(
      `${deployment.name}: Coolify does not know deployment ${deployment.uuid}; following ${real}, the one it started.`
    )
    deployment.follow(real)
    return true
  }

  /**
   * Coolify writes its last lines (configuration, "Gracefully shutting down build container") up
   * to a few seconds after the final status, many of them hidden: unless its closing entry is
   * already read, read again while the log grows.
   */
  private async readClosingLines(deployment: Deployment, signal: AbortSignal): Promise<void> {
    if (!this.options.logs || this.logsHidden) return
    const cursor = this.cursors.get(deployment)!
    const pause = Math.min(CLOSING_PAUSE_MS, this.options.pollIntervalMs)
    let quietSince = Date.now()
    while (!cursor.closed && Date.now() - quietSince < CLOSING_QUIET_MS) {
      const before = cursor.progress
      try {
        await sleep(pause, signal)
        await this.read(deployment, signal)
      } catch {
        return
      }
      if (cursor.progress !== before) quietSince = Date.now()
    }
  }

  /** Reads the deployment once, in its turn: status, links and new log lines. */
  private async read(deployment: Deployment, signal: AbortSignal): Promise<void> {
    await this.pacer.turn(signal)
    this.take(deployment, await this.client.getDeployment(deployment.uuid!, signal))
  }

  private take(deployment: Deployment, detail: DeploymentDetail): void {
    const changed = deployment.observe(detail, this.options.instanceUrl)
    if (changed && !deployment.ended) this.announce(deployment, detail)
    this.printLogs(deployment, detail)
  }

  private announce(deployment: Deployment, detail: DeploymentDetail): void {
    if (statusFromCoolify(detail.status)) {
      this.options.note(`${deployment.name}: ${describeStatus(deployment.status)}`)
    } else if (typeof detail.status === 'string') {
      this.options.warn(
        `${deployment.name}: Coolify reports the status "${detail.status.slice(0, 40)}", which this action does not know; it is treated as not finished.`
      )
    } else {
      this.options.warn(
        `${deployment.name}: Coolify's answer has no status; the deployment is treated as not finished.`
      )
    }
  }

  private printLogs(deployment: Deployment, detail: DeploymentDetail): void {
    if (!this.options.logs) return
    if (!('logs' in detail)) {
      if (!this.logsHidden) {
        this.logsHidden = true
        this.options.warn(`${LOGS_HIDDEN_HINT} The deployment is followed all the same.`)
      }
      return
    }
    const lines = this.cursors.get(deployment)!.next(detail.logs)
    deployment.remember(lines)
    this.options.sink.lines(deployment, lines)
  }

  private flush(deployment: Deployment): void {
    if (!this.options.logs) return
    const lines = this.cursors.get(deployment)!.flush()
    deployment.remember(lines)
    this.options.sink.lines(deployment, lines)
  }
}

/**
 * Spreads the reads of all deployments evenly within the polling budget: each read takes the next
 * free turn, so however many deployments run, reads go out at the budget's pace, round robin, and
 * never idle while one is waiting.
 */
class ReadPacer {
  private nextTurn = 0

  constructor(private readonly spacingMs: () => number) {}

  async turn(signal: AbortSignal): Promise<void> {
    const now = Date.now()
    const at = Math.max(now, this.nextTurn)
    this.nextTurn = at + this.spacingMs()
    await sleep(at - now, signal)
  }
}
