import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError, LOGS_HIDDEN_HINT } from '../coolify/errors.js'
import type { EscapedLog } from '../coolify/escaped-log.js'
import { sleep } from '../coolify/pacing.js'
import { releaseAtLeast, timeOf } from '../coolify/answers.js'
import type { DeploymentDetail } from '../coolify/types.js'
import { describeError } from '../errors.js'
import type { Say } from '../host.js'
import { stopGraceSeconds, type Deployment } from '../model/deployment.js'
import type { LogSink } from '../model/log-sink.js'
import { LogCursor } from '../model/logs.js'
import type { TriggerMark } from '../model/mark.js'
import { describeStatus, statusFromCoolify } from '../model/status.js'
import { cancelDeployment } from './cancel.js'
import { DeploymentReads, type OwnRead } from './deployment-reads.js'
import { findStarted } from './history.js'
import { ReadPacer } from './pacer.js'

export interface FollowOptions {
  instanceUrl: string
  pollIntervalMs: number
  /** Print build logs at all. */
  logs: boolean
  /** Print Coolify's hidden entries too. */
  showHidden: boolean
  sink: LogSink
  say: Say
}

/** First reads come quickly, so a deployment that fails at once is reported at once. */
const FIRST_DELAY_MS = 500
/**
 * Coolify most often writes its closing entry 0.4–1.2 s after `finished_at`. A row that cannot
 * tell (a server without the column) ends once the log has been quiet for longer than that past
 * the final status. Reads wait for the quiet, at least this pause apart.
 */
const CLOSING_PAUSE_MS = 500
const CLOSING_QUIET_MS = 1500
/**
 * Once `finished_at` is written, the closing entry follows (ApplicationDeploymentJob.php 389-411)
 * on every server since 4.0.0-beta.443. The configuration is written in between, its remote
 * commands writing no entry but moving `updated_at` as each starts (ExecuteRemoteCommand.php
 * 221-223), the file storages not even that. On a remote server that takes seconds; while SSH is
 * in trouble, before a command starts, a check of the shared connection (5 s), a wait for its lock
 * (10 s) and a new connection (10 s) may pass without a write (config/constants.php 73-78), and a
 * failed attempt writes an entry, then sleeps 2 s, then 4 s (SshRetryable.php 59-68). The wait
 * ends without it once the row has been still this long: a job killed in its finally.
 */
const PROMISED_QUIET_MS = 45_000
/**
 * The first release whose finally always writes the closing entry: from 4.0.0-beta.407 it did
 * unless writing the configuration failed, which then ended the finally (a cancel, say).
 */
const CLOSING_ENTRY_SINCE = '4.0.0-beta.443'
/** Longest a read for a closing entry waits for Coolify to say its version. */
const VERSION_WAIT_MS = 3000
/** A timer may fire a millisecond early by `Date.now()`: a pause for a quiet ends this much later. */
const TIMER_SLACK_MS = 5
/** Coolify's `Date` and `updated_at` keep whole seconds: a quiet read from them may be this short. */
const SECOND_MS = 1000
/**
 * A deployment that left the list of running ones ended within the last turn: read a moment later,
 * its closing entry is most often there already, and one read gives the status and the last lines.
 */
const LEFT_PAUSE_MS = 1000
/** What a stop or removal of the container's own takes beyond its wait: over SSH, a few seconds. */
const STOP_MARGIN_MS = 5000
/**
 * How long a failed or cancelled row may stay quiet without `finished_at` before its job is taken
 * for gone: the job's own failure path removes the new container, writing nothing until it ends,
 * before its finally (ApplicationDeploymentJob.php 3991-4018), for up to 60 s and, when the
 * removal ignores that end, 10 s more (`timeout -k 10s 60s`, docker.php 267-272), while a job that
 * failed outside it never writes one (a server not functional, 313-317; Coolify restarted under
 * it, Init.php 94-100). Longer when the job's last line says it is at something longer.
 */
const FAILED_JOB_QUIET_MS = 70_000 + STOP_MARGIN_MS
/**
 * The job's last line before it stops a container, giving it the application's stop grace period
 * (30 s unless set, up to an hour): the new one found unhealthy, or the old ones
 * (ApplicationDeploymentJob.php 3971-3984, 4021-4047).
 */
const STOPPING = new Set([
  'New container is not healthy, rolling back to the old container.',
  'Removing old containers.'
])
/**
 * The job's line before its post-deployment command, which runs after a failed rollout too,
 * hidden and silent until it ends, for up to Coolify's command timeout, an hour
 * (ApplicationDeploymentJob.php 526-557, 4822-4866; config/constants.php 80).
 */
const POST_DEPLOYMENT_RUNS = 'Executing post-deployment command (see debug log for output).'
/** Coolify's own line when the post-deployment command failed (ApplicationDeploymentJob.php 4863). */
const POST_DEPLOYMENT_FAILED = 'Post-deployment command failed.'
/**
 * Coolify has no log offset: every read of a deployment carries its whole log. Reads of one are
 * spaced so that they carry about this many bytes a millisecond on the wire (a quarter of a MB a
 * second), however big the log and whether compressed or not, and never further apart than
 * LONGEST_PACE_MS, so that no line waits longer than that to be printed.
 */
const WIRE_BYTES_PER_MS = 250
const LONGEST_PACE_MS = 10_000
/** Longest the first deployment due waits for the others, so that one read serves them all. */
export const GATHER_MS = 250

/**
 * Follows deployments to their end, each on its own cadence within one shared read budget, and
 * sends new log lines to the sink. Every rollout follows its deployments through the one Follower
 * of the step, so however many there are, reads go out at the budget's pace. It owns the reading;
 * the client owns the HTTP, the rollout decides what an unfinished deployment becomes.
 */
export class Follower {
  private readonly cursors = new Map<Deployment, LogCursor>()
  /** Why the last reads failed, when the wait ended while Coolify could not be read. */
  private readonly unread = new Map<Deployment, string>()
  /** Deployments followed now, until they end. */
  private readonly running = new Set<Deployment>()
  /** Deployments no longer in the list of running ones: read by uuid from then on. */
  private readonly unlisted = new Set<Deployment>()
  /**
   * One of the deployments followed together ended: those still running with it may be ending
   * too. Cleared once none runs, so that a later one (a rollback) is followed at its own pace.
   */
  private someEnded = false
  /**
   * How long each deployment's log had been quiet when Coolify last answered, at the least, on
   * its clock: its answer's `Date` less its `updated_at`, which moves with every entry written.
   */
  private readonly quietAtAnswer = new Map<Deployment, { ms: number; at: number }>()
  /** When Coolify last wrote each deployment's row (`updated_at`), as its last answer told. */
  private readonly rowWrittenAt = new Map<Deployment, number>()
  /**
   * Whether Coolify's job has ended, as the last read told: `finished_at` written, still null
   * (the job writes on after the final status: the post-deployment command), or not told at all.
   */
  private readonly jobEnd = new Map<Deployment, 'written' | 'pending' | 'untold'>()
  /** Deployments Coolify's job took, as a read showed: in progress, or with its worker. */
  private readonly jobTook = new Set<Deployment>()
  /** What the last read of each deployment took on the wire: its own part of a shared one. */
  private readonly carried = new Map<Deployment, number>()
  private readonly pacer: ReadPacer
  private readonly reads: DeploymentReads
  private logsHidden = false
  /** Whether this Coolify's job writes a closing entry, asked once a closing entry is late. */
  private closingEntries?: Promise<boolean>
  /** Each application's stop grace period (s), read once a failed job of it was long quiet. */
  private readonly graces = new Map<string, Promise<number | undefined>>()

  constructor(
    private readonly client: CoolifyClient,
    private readonly options: FollowOptions
  ) {
    this.pacer = new ReadPacer(
      () => client.readBudget(),
      () => this.reads.perTurn(this.running.size) / this.interval()
    )
    this.reads = new DeploymentReads(
      client,
      signal => this.pacer.turn(signal),
      () => this.listed(),
      Math.min(GATHER_MS, options.pollIntervalMs)
    )
    // What is still to come to end what is followed: each deployment's read by uuid, and the read
    // of the list that shows it left.
    client.holdBack(() => this.running.size + Math.min(this.listed(), 1))
  }

  /**
   * Time between reads of a running deployment: `poll-interval`, or half of it (not under the
   * first delay) once one of the deployments followed with it ended: those started together end
   * together, and one read of the list serves them all, so each end is seen sooner for little.
   */
  private interval(): number {
    const interval = this.options.pollIntervalMs
    if (!this.someEnded) return interval
    return Math.min(interval, Math.max(FIRST_DELAY_MS, interval / 2))
  }

  /**
   * How long the reads of `deployment` wait for what its last answer carried on the wire: a
   * small log is read at `poll-interval`, a big one no more than WIRE_BYTES_PER_MS allows.
   */
  private paceOf(deployment: Deployment): number {
    return Math.min(LONGEST_PACE_MS, (this.carried.get(deployment) ?? 0) / WIRE_BYTES_PER_MS)
  }

  /** Deployments followed through the list of running ones. */
  private listed(): number {
    let listed = 0
    for (const deployment of this.running) if (!this.unlisted.has(deployment)) listed++
    return listed
  }

  /**
   * Follows the deployment until it ends or `signal` aborts. `mark`, what its trigger asked for,
   * finds the real deployment behind a uuid Coolify does not know.
   */
  async follow(deployment: Deployment, mark: TriggerMark, signal: AbortSignal): Promise<void> {
    if (!deployment.running) return
    this.options.sink.begin(deployment)
    this.running.add(deployment)
    try {
      await this.followRunning(deployment, mark, signal)
    } finally {
      this.running.delete(deployment)
      this.quietAtAnswer.delete(deployment)
      this.rowWrittenAt.delete(deployment)
      this.jobEnd.delete(deployment)
      this.jobTook.delete(deployment)
      this.carried.delete(deployment)
      if (this.running.size === 0) this.someEnded = false
      else if (deployment.ended) this.someEnded = true
    }
  }

  private async followRunning(
    deployment: Deployment,
    mark: TriggerMark,
    signal: AbortSignal
  ): Promise<void> {
    let resolved = false
    for (let reads = 0; !signal.aborted; reads++) {
      const began = Date.now()
      try {
        await this.read(deployment, signal)
      } catch (error) {
        if (signal.aborted) {
          // A read the deadline merely cut short is no sign of trouble; one Coolify left
          // unanswered for longer than a turn, or that failed, is.
          const waited = Date.now() - began >= Math.max(this.options.pollIntervalMs, 1000)
          if (error instanceof CoolifyError && (!error.details.cutOff || waited)) {
            this.unread.set(deployment, `${error.request}: ${error.reason}`)
          }
          break
        }
        if (error instanceof CoolifyError && error.status === 404 && !resolved) {
          // A uuid Coolify never saved (a placeholder): follow the deployment it stands for.
          resolved = true
          if (await this.resolve(deployment, mark, signal)) continue
        }
        deployment.end('failed', `could not read the deployment: ${describeError(error)}`)
        break
      }
      if (deployment.ended) {
        await this.readClosingLines(deployment, signal)
        break
      }
      try {
        const due = Math.min(this.interval(), FIRST_DELAY_MS * 2 ** reads)
        await sleep(Math.max(due, this.paceOf(deployment)), signal)
      } catch {
        break
      }
    }
    if (deployment.ended) this.close(deployment)
  }

  /**
   * Cancels the deployment in Coolify within `signal`, prints the lines it wrote until then, and
   * ends it with `status` and `why` — unless it ended on its own meanwhile, which it keeps.
   */
  async stop(
    deployment: Deployment,
    status: 'timeout' | 'cancelled',
    why: string,
    signal: AbortSignal
  ): Promise<void> {
    const result = await cancelDeployment(this.client, deployment.uuid!, signal)
    try {
      // The lines written until the cancel; a courtesy that must not hold up the cancel's outcome.
      // A refusal names the status but carries no log: that is not a log hidden from the token.
      if (result.detail && 'logs' in result.detail) this.take(deployment, { detail: result.detail })
      else if (result.detail) deployment.observe(result.detail, this.options.instanceUrl)
      else await this.readOne(deployment, signal)
    } catch {
      // Reported below from what is known.
    }
    const unread = this.unread.get(deployment)
    const reason = why + (unread ? ` while Coolify could not be read (${unread})` : '')
    if (result.cancelled) {
      deployment.end(status, `${reason}; it was cancelled in Coolify`)
    } else if (!deployment.ended) {
      deployment.end(
        status,
        `${reason}, and it may still be running in Coolify: ${result.problem ?? 'its status is unknown'}`
      )
    }
    this.close(deployment)
  }

  /** Ends the deployment with `status` without cancelling it: it goes on in Coolify. */
  leave(deployment: Deployment, status: 'timeout' | 'cancelled', reason: string): void {
    deployment.end(status, reason)
    this.close(deployment)
  }

  /** No more lines will come: the last one, then the sink's end. */
  private close(deployment: Deployment): void {
    this.flush(deployment)
    this.options.sink.end(deployment)
  }

  /** Follows the real deployment behind an unknown uuid; false when there is none to follow. */
  private async resolve(
    deployment: Deployment,
    mark: TriggerMark,
    signal: AbortSignal
  ): Promise<boolean> {
    const real = await findStarted(this.client, deployment.appUuid, mark, signal).catch(
      () => undefined
    )
    if (!real || real === deployment.uuid) return false
    this.options.say.note(
      `${deployment.name}: Coolify does not know deployment ${deployment.uuid}; following ${real}, the one it started.`
    )
    deployment.follow(real)
    return true
  }

  /**
   * After the final status Coolify's job goes on: the post-deployment command (for minutes, maybe),
   * then its finally writes `finished_at`, the configuration and the closing entry. Reads go on
   * until the closing entry is read: at `poll-interval` while `finished_at` is null, then once the
   * log may have been quiet long enough: 1.5 s, or, with `finished_at` written, the row dated and
   * a Coolify that writes closing entries (asked once), PROMISED_QUIET_MS. A row without
   * `finished_at` (a server before 4.0.0-beta.381) or one whose closing entry never comes ends
   * after that quiet, and so does the wait when `signal` ends it; unless `finished_at` was read,
   * the log says that the job's end was not seen. How long the log
   * has been quiet is what the reads showed: from the answer that brought its last entries,
   * `finished_at` or a later `updated_at` to a later read that brought nothing, or by Coolify's own
   * clock when its answer tells.
   */
  private async readClosingLines(deployment: Deployment, signal: AbortSignal): Promise<void> {
    if (!this.options.logs || this.logsHidden) return
    const cursor = this.cursorOf(deployment)
    let quietSince = Date.now()
    let askedAt = quietSince
    let awaited = false
    while (!cursor.closed) {
      const before = cursor.progress
      const endBefore = this.jobEnd.get(deployment)
      const writtenBefore = this.rowWrittenAt.get(deployment)
      const told = this.quietAtAnswer.get(deployment)
      // The quiet the answers showed: a read asked for after `quietSince` that brought nothing new,
      // or Coolify's own clock. Time since the last answer is not counted: on a busy runner the
      // closing entry may have come meanwhile, unread.
      const seen = Math.max(askedAt - quietSince, told?.ms ?? 0)
      const pending = endBefore === 'pending' && !(await this.jobGone(deployment, seen, signal))
      let answeredAt: number
      try {
        if (pending) {
          await sleep(Math.max(this.options.pollIntervalMs, this.paceOf(deployment)), signal)
          askedAt = Date.now()
          answeredAt = await this.readOne(deployment, signal)
        } else {
          // With `finished_at` written and the closing entry late, a Coolify whose job writes
          // one is waited for until the row has been still for long, since the configuration is
          // written without an entry. A server that does not say when it wrote the row tells
          // nothing.
          let needed = CLOSING_QUIET_MS
          const dated = endBefore === 'written' && this.rowWrittenAt.has(deployment)
          if (dated && seen >= CLOSING_QUIET_MS) awaited ||= await this.writesClosingEntry(signal)
          if (awaited) needed = PROMISED_QUIET_MS
          if (seen >= needed) break
          // The next read once the quiet it can show is long enough, or, for a closing entry
          // late to come, twice what it is: a few reads, whatever `poll-interval`.
          const next = Math.min(needed, Math.max(CLOSING_QUIET_MS, 2 * seen))
          const due = Math.min(quietSince + next, told ? told.at - told.ms + next : Infinity)
          await sleep(Math.max(CLOSING_PAUSE_MS, due - Date.now() + TIMER_SLACK_MS), signal)
          askedAt = Date.now()
          answeredAt = await this.readFinal(deployment, signal)
        }
      } catch {
        break
      }
      // The quiet starts again with what a read brought: new entries, `finished_at` written after
      // a silent post-deployment command (the closing entry follows it), or the row written since
      // (a remote command of the job's moves `updated_at` as it starts, ExecuteRemoteCommand.php
      // 221-223).
      const ended = endBefore !== 'written' && this.jobEnd.get(deployment) === 'written'
      const written = (this.rowWrittenAt.get(deployment) ?? 0) > (writtenBefore ?? Infinity)
      if (cursor.progress !== before || ended || written) askedAt = quietSince = answeredAt
    }
    // A cancelled job fails to stop its build container after the closing entry, and says so.
    if (cursor.closed && deployment.status === 'cancelled') {
      await sleep(CLOSING_PAUSE_MS, signal)
        .then(() => this.readFinal(deployment, signal))
        .catch(() => undefined)
    }
    // `finished_at` is written after everything but the configuration and the closing entry.
    const end = this.jobEnd.get(deployment)
    if (!cursor.closed && (end !== 'written' || awaited)) {
      this.options.say.note(
        `${deployment.name}: the end of Coolify's deployment job could not be seen (no closing entry${end === 'pending' ? ' and no `finished_at`' : ''}); lines it writes after this are not printed.`
      )
    }
  }

  /**
   * Whether the job of a failed or cancelled row, quiet without `finished_at` for `seen` ms, is
   * gone: quiet for longer than what its last line says it is at can take — its post-deployment
   * command, which only the deadline bounds; a stop of a container, for its grace period; anything
   * else, FAILED_JOB_QUIET_MS.
   */
  private async jobGone(
    deployment: Deployment,
    seen: number,
    signal: AbortSignal
  ): Promise<boolean> {
    if (!['failed', 'cancelled'].includes(deployment.status) || seen < FAILED_JOB_QUIET_MS)
      return false
    // The job's own last line: not a cancel's, nor the `$ command` a cancel in the UI shows.
    const last =
      deployment.tail.findLast(line => line.kind !== 'command' && !writtenByCancel(line.text))
        ?.text ?? ''
    if (last === POST_DEPLOYMENT_RUNS) return false
    if (!STOPPING.has(last)) return true
    const grace = await this.stopGraceOf(deployment, signal)
    return seen >= (grace ?? 0) * 1000 + STOP_MARGIN_MS
  }

  /**
   * The stop grace period of the deployment's application, in seconds: from its record when read
   * before, else read now, once (a list of applications does not show it); undefined when Coolify
   * does not tell.
   */
  private stopGraceOf(deployment: Deployment, signal: AbortSignal): Promise<number | undefined> {
    if (deployment.stopGraceSeconds !== undefined || deployment.kind !== 'application') {
      return Promise.resolve(deployment.stopGraceSeconds)
    }
    let grace = this.graces.get(deployment.appUuid)
    if (!grace) {
      grace = this.client.getApplicationDated(deployment.appUuid, signal, { final: true }).then(
        ({ body }) => (body?.settings ? stopGraceSeconds(body.settings) : undefined),
        () => undefined
      )
      this.graces.set(deployment.appUuid, grace)
    }
    return grace
  }

  /**
   * Whether this Coolify's job writes a closing entry: unless its version says it is too old.
   * Asked once, apart from any deployment's deadline (the client's end ends the request); each
   * read waits for the answer until VERSION_WAIT_MS or `signal`, and takes the entry as coming.
   */
  private async writesClosingEntry(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return true
    this.closingEntries ??= this.client.version(new AbortController().signal, { final: true }).then(
      version => releaseAtLeast(version, CLOSING_ENTRY_SINCE) ?? true,
      () => true
    )
    const waited = new AbortController()
    const stop = (): void => waited.abort()
    signal.addEventListener('abort', stop, { once: true })
    try {
      const unanswered = sleep(VERSION_WAIT_MS, waited.signal).then(
        () => true,
        () => true
      )
      return await Promise.race([this.closingEntries, unanswered])
    } finally {
      waited.abort()
      signal.removeEventListener('abort', stop)
    }
  }

  /**
   * Resolves when the next read of Coolify may go out: every rollout's reads (deployments, health)
   * take turns within one budget. A `final` read, whose answer can end a following, may spend what
   * the window holds back from polls.
   */
  turn(signal: AbortSignal, final = false): Promise<void> {
    return this.pacer.turn(signal, final)
  }

  /**
   * Reads the deployment once, in its turn, with the others due then: status, links and new log
   * lines. One that left the list of running ones is read by uuid, a moment later.
   */
  private async read(deployment: Deployment, signal: AbortSignal): Promise<void> {
    if (!this.unlisted.has(deployment)) {
      const read = await this.reads.running(deployment.uuid!, signal)
      if ('detail' in read) {
        this.take(deployment, read)
        return
      }
      this.unlisted.add(deployment)
      this.someEnded = true
      await sleep(LEFT_PAUSE_MS, signal)
      await this.readFinal(deployment, signal)
      return
    }
    await this.readOne(deployment, signal)
  }

  /** Reads the deployment by uuid, in its turn; resolves with when its answer came. */
  private async readOne(deployment: Deployment, signal: AbortSignal): Promise<number> {
    const read = await this.reads.one(deployment.uuid!, signal)
    const answeredAt = Date.now()
    this.take(deployment, read)
    return answeredAt
  }

  /** Reads an ended deployment by uuid, as soon as the window allows; resolves with when its answer came. */
  private async readFinal(deployment: Deployment, signal: AbortSignal): Promise<number> {
    const { body, date, wireBytes, log } = await this.reads.final(deployment.uuid!, signal)
    const answeredAt = Date.now()
    this.take(deployment, { detail: body, answeredAt: date, wireBytes, log })
    return answeredAt
  }

  /**
   * Takes in a read of the deployment: its row, answered at `answeredAt` on Coolify's clock when
   * known, what the answer took on the wire, and its log as it stands in the answer when 4.x's.
   */
  private take(
    deployment: Deployment,
    { detail, answeredAt, wireBytes, log }: OwnRead & { answeredAt?: number }
  ): void {
    if (wireBytes !== undefined) this.carried.set(deployment, wireBytes)
    // A read that does not tell leaves nothing known: an earlier answer's quiet would outlive
    // entries written since.
    const written = timeOf(detail.updated_at)
    if (written === undefined) this.rowWrittenAt.delete(deployment)
    else this.rowWrittenAt.set(deployment, written)
    if (answeredAt !== undefined && written !== undefined) {
      const ms = answeredAt - written - SECOND_MS
      this.quietAtAnswer.set(deployment, { ms, at: Date.now() })
    } else {
      this.quietAtAnswer.delete(deployment)
    }
    // Taken by the job: seen in progress, or its worker written, which a row cancelled in the
    // queue never gets, however quickly the cancel followed.
    if (statusFromCoolify(detail.status) === 'in_progress' || detail.horizon_job_worker) {
      this.jobTook.add(deployment)
    }
    this.jobEnd.set(deployment, jobEndOf(detail, this.jobTook.has(deployment)))
    const changed = deployment.observe(detail, this.options.instanceUrl, answeredAt)
    if (changed && !deployment.ended) this.announce(deployment, detail)
    this.printLogs(deployment, detail, log)
  }

  private announce(deployment: Deployment, detail: DeploymentDetail): void {
    if (statusFromCoolify(detail.status)) {
      this.options.say.note(`${deployment.name}: ${describeStatus(deployment.status)}`)
    } else if (typeof detail.status === 'string') {
      this.options.say.warn(
        `${deployment.name}: Coolify reports the status "${detail.status.slice(0, 40)}", which this action does not know; it is treated as not finished.`
      )
    } else {
      this.options.say.warn(
        `${deployment.name}: Coolify's answer has no status; the deployment is treated as not finished.`
      )
    }
  }

  private printLogs(deployment: Deployment, detail: DeploymentDetail, log?: EscapedLog): void {
    if (!this.options.logs) return
    if (!('logs' in detail)) {
      if (!this.logsHidden) {
        this.logsHidden = true
        this.options.say.warn(`${LOGS_HIDDEN_HINT} The deployment is followed all the same.`)
      }
      return
    }
    const lines = this.cursorOf(deployment).next(log ?? detail.logs)
    deployment.remember(lines)
    this.options.sink.lines(deployment, lines)
    // Coolify's status stays as it was; the failure is the user's to see.
    if (lines.some(line => !line.hidden && line.text === POST_DEPLOYMENT_FAILED)) {
      this.options.say.warn(
        `${deployment.name}: Coolify ran the post-deployment command after the deployment ${deployment.status === 'finished' ? 'finished' : 'ended'}, and it failed; its output is in the log above.`
      )
    }
  }

  private cursorOf(deployment: Deployment): LogCursor {
    let cursor = this.cursors.get(deployment)
    if (!cursor) this.cursors.set(deployment, (cursor = new LogCursor(this.options.showHidden)))
    return cursor
  }

  private flush(deployment: Deployment): void {
    if (!this.options.logs) return
    const lines = this.cursorOf(deployment).flush()
    deployment.remember(lines)
    this.options.sink.lines(deployment, lines)
  }
}

/**
 * A line a cancel writes into the job's log while the job runs on until its next command: from
 * the API, the UI, MCP, or a pull request closed (DeployController.php 278-288;
 * DeploymentNavbar.php 119-143; CancelDeployment.php 75-84; CleanupPreviewDeployment.php 112;
 * DeleteResourceJob.php 197-209). Each says it cancels, or that it stopped the build container.
 */
function writtenByCancel(text: string): boolean {
  return /\bcancel/i.test(text) || text === 'Deployment container stopped.'
}

/**
 * What a row tells of the job's end. The job's own final statuses promise a `finished_at` to come,
 * and so does a cancel of a job `took` (seen in progress or with its worker): it fails at its next
 * command and runs its finally (ExecuteRemoteCommand.php 92-97; ApplicationDeploymentJob.php
 * 380-392). A deployment cancelled before the job took it never gets one (303-306).
 */
function jobEndOf(detail: DeploymentDetail, took: boolean): 'written' | 'pending' | 'untold' {
  if (!('finished_at' in detail)) return 'untold'
  if (detail.finished_at) return 'written'
  const status = statusFromCoolify(detail.status)
  const promised = status === 'finished' || status === 'failed' || (status === 'cancelled' && took)
  return promised ? 'pending' : 'untold'
}
