import type { Budget, HealthWindow } from '../time/budget.js'
import type { CoolifyClient } from '../coolify/client.js'
import { describeError } from '../errors.js'
import type { ApplicationReads } from '../follow/application-reads.js'
import type { Follower } from '../follow/follower.js'
import { findOfCommitWithin } from '../follow/history.js'
import { checkHealth, runtimeLog } from '../health/health.js'
import { awaitStartup, containerLog } from '../health/startup.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import type { Deployment, DeploymentView } from '../model/deployment.js'
import type { TriggerMark } from '../model/mark.js'
import { isBadVersion, isFinished } from '../model/status.js'
import { linked } from '../time/signals.js'
import type { RunState } from '../state.js'
import { judgeRollback, startRollback, type Rollback } from './rollback.js'
import { settleImageTag, verifyVersion, type AppVersion } from './versions.js'

/** How long `wait: false` waits for the read that gives a deployment's link. */
const LOCATE_MS = 5000

/** What every rollout of a step shares. */
export interface StepContext {
  client: CoolifyClient
  config: Config
  budget: Budget
  state: RunState
  /** Reads deployments for all rollouts, within one request budget. */
  follower: Follower
  /** Reads the applications for their names and the health checks, within the same budget. */
  applications: ApplicationReads
  /** What the trigger asked for. */
  mark: TriggerMark
  /** Names and URLs of the applications, read while the deployments run; bounded in time. */
  described: () => Promise<void>
  say: Say & { runtimeLog: (deployment: DeploymentView) => void }
}

/**
 * One resource's way from the trigger to its outcome. An application's phases — settle, follow,
 * verify, health, rollback — run in order as soon as the one before ends, whatever its siblings
 * do; a service or database, started without a deployment, has one: coming up. A phase that
 * throws ends the rollout `failed` with the reason; the rollout's deployments, and so its status,
 * change only here.
 */
export class Rollout {
  #rollback: Rollback | undefined
  #healthChecked = false
  private get phases(): ReadonlyArray<() => Promise<void>> {
    return this.deployment.kind === 'application'
      ? [
          () => this.find(),
          () => this.settle(),
          () => this.follow(),
          () => this.verify(),
          async () => {
            await this.checkHealth(this.deployment, this.step.budget.health())
            this.#healthChecked = true
          },
          () => this.rollBack()
        ]
      : [() => this.comeUp()]
  }

  constructor(
    readonly deployment: Deployment,
    private readonly step: StepContext,
    /** The application's version before the deploy, when an input needed it. */
    private readonly version?: AppVersion
  ) {}

  /** The resource's uuid: the key of its saved state. */
  get key(): string {
    return this.deployment.appUuid
  }

  /** Its health check is under way or ahead: it will read the application with the others. */
  get checksHealth(): boolean {
    return this.deployment.kind === 'application' && !this.#healthChecked
  }

  /** Its deployments under way in Coolify. */
  get running(): Deployment[] {
    return [this.deployment, this.#rollback?.deployment].filter(
      (deployment): deployment is Deployment => deployment?.running === true
    )
  }

  async run(): Promise<void> {
    try {
      for (const phase of this.phases) {
        if (this.step.budget.cancelled.aborted) break
        await phase()
      }
      // Its name and URL for the report, also when nothing waited on them (`wait: false`).
      await this.step.described()
    } catch (error) {
      this.deployment.end('failed', describeError(error))
    } finally {
      this.#healthChecked = true
      this.save()
    }
  }

  /**
   * The run was cancelled: cancels in Coolify what this rollout still runs, within
   * `signal` (or leaves it, with `cancel-on-abort: false`).
   */
  async stop(signal: AbortSignal): Promise<void> {
    const why = this.cancelledWhy()
    if (this.deployment.kind !== 'application' && this.deployment.status === 'started') {
      this.step.say.note(
        `${this.deployment.name}: nothing to cancel — Coolify starts a ${this.deployment.kind} without a deployment; its start goes on`
      )
    }
    for (const deployment of this.running) {
      if (deployment.startedElsewhere) {
        this.step.follower.leave(deployment, 'cancelled', `${why}; ${elsewhere(deployment)}`)
      } else if (this.step.config.cancelOnAbort) {
        await this.step.follower.stop(deployment, 'cancelled', why, signal)
      } else {
        this.step.follower.leave(deployment, 'cancelled', `${why}; it goes on in Coolify`)
      }
    }
    this.save()
  }

  /**
   * Saves, for the post step, which of this run's deployments are still under way: never its
   * rollback, which a cancel leaves running.
   */
  save(): void {
    const { config, state } = this.step
    if (!config.wait || !config.cancelOnAbort) return
    // Only what this run started is the post step's to cancel.
    const running = [this.deployment]
      .filter(deployment => deployment.running && !deployment.startedElsewhere)
      .map(deployment => deployment.uuid!)
    state.update(this.key, { running, name: running.length ? this.deployment.name : undefined })
  }

  /**
   * `trigger: false`: the deployment Coolify started by itself for the commit, once it appears in
   * the application's history (webhooks lag), within `timeout`. None is a timeout that says what
   * to check.
   */
  private async find(): Promise<void> {
    const { client, config, budget, follower, mark, say } = this.step
    if (config.trigger || this.deployment.uuid) return
    const commit = mark.commit!
    const uuid = await findOfCommitWithin(
      client,
      this.deployment.appUuid,
      { commit, pr: mark.pr, pollIntervalMs: config.pollIntervalMs },
      signal => follower.turn(signal),
      budget.deploy()
    )
    if (budget.cancelled.aborted) return
    if (!uuid) {
      const branch =
        config.pr === undefined ? 'the branch Coolify deploys' : 'its preview deployments'
      this.deployment.end(
        'timeout',
        `no deployment of commit ${commit.slice(0, 7)} appeared in Coolify within \`timeout\`: check that auto-deploy is on for it and that the commit is on ${branch}`
      )
      return
    }
    this.deployment.follow(uuid)
    this.deployment.joined()
    say.note(
      `${this.deployment.name}: following deployment ${uuid} of commit ${commit.slice(0, 7)} (started by Coolify, not cancelled by this run)`
    )
    this.save()
  }

  /** Image tags: the deployment that runs the tag asked for, when the trigger joined an older one. */
  private async settle(): Promise<void> {
    const { client, config, budget, mark, say } = this.step
    if (!config.imageTag || config.pr !== undefined) return
    await settleImageTag(client, this.deployment, config.imageTag, mark, budget.deploy(), say)
    this.save()
  }

  /** Until the deployment ends or `timeout` passes, when it is cancelled or left running. */
  private async follow(): Promise<void> {
    const { config, budget, follower } = this.step
    if (!config.wait) return this.locate()
    await follower.follow(this.deployment, this.step.mark, budget.deploy())
    if (this.deployment.ended || budget.cancelled.aborted) return
    const why = 'it outlasted `timeout`'
    if (this.deployment.startedElsewhere) {
      follower.leave(this.deployment, 'timeout', `${why}; ${elsewhere(this.deployment)}`)
    } else if (config.cancelOnTimeout) {
      await follower.stop(this.deployment, 'timeout', why, budget.grace())
    } else {
      const left = `${why} and is still running in Coolify (\`cancel-on-timeout\` is false)`
      follower.leave(this.deployment, 'timeout', left)
    }
  }

  /**
   * `wait: false`: one read of the deployment, for the link to its page (`deployment-url`): the
   * trigger's answer has only its uuid. The status stays as the trigger left it.
   */
  private async locate(): Promise<void> {
    const { client, config, budget, say } = this.step
    const { uuid, name } = this.deployment
    if (!uuid) return
    const bounded = linked([budget.deploy()], LOCATE_MS)
    try {
      this.deployment.locate(await client.getDeployment(uuid, bounded.signal), config.instanceUrl)
    } catch (error) {
      say.warn(
        `${name}: could not read deployment ${uuid} for the link to its page, so \`deployment-url\` is empty: ${describeError(error)}`
      )
    } finally {
      bounded.release()
    }
  }

  /** The version asked for is the one that ran. */
  private async verify(): Promise<void> {
    const { client, config, budget } = this.step
    if (!config.wait) return
    const asked = {
      imageTag: config.pr === undefined ? config.imageTag : undefined,
      commit: config.commit
    }
    await verifyVersion(client, this.deployment, asked, budget.deploy())
  }

  /**
   * A finished deployment is up within its window, else `unhealthy` with the end of its runtime
   * log. A check that `timeout` cut short ends `timeout`; one that could never read Coolify's
   * status is a warning, not a verdict.
   */
  private async checkHealth(deployment: Deployment, window: HealthWindow): Promise<void> {
    const { client, config, budget, described, say } = this.step
    if (!config.wait || !isFinished(deployment.status) || !deployment.appUuid) return
    await described()
    const options = {
      healthUrl: config.healthUrl,
      pollIntervalMs: config.pollIntervalMs,
      caCertificate: config.caCertificate,
      pr: config.pr,
      readStatus: (appUuid: string, signal: AbortSignal) =>
        this.step.applications.status(appUuid, signal),
      // Coolify checks the containers once the status turns final, before the post-deployment
      // command and `finished_at`: a refresh counts from the last read that still showed it running.
      since: deployment.seenRunningAt ?? deployment.finishedAt
    }
    const health = await checkHealth(deployment, options, window.signal)
    if (!health || budget.cancelled.aborted) return
    if (health.up) {
      if (health.url) say.note(`${deployment.name}: healthy (${health.url} answers)`)
    } else if (health.unknown) {
      this.doubt(deployment, health.problem)
    } else if (window.cutShort()) {
      deployment.end(
        'timeout',
        `it finished, but its time ran out before it came up: ${health.problem}`
      )
    } else {
      deployment.unhealthy(
        `it did not come up: ${health.problem}`,
        await runtimeLog(client, deployment.appUuid, budget.grace())
      )
      say.runtimeLog(deployment)
    }
  }

  /**
   * A service or database: Coolify reports it running within `health-timeout`, else `unhealthy`
   * with the end of its containers' logs. There is nothing to cancel when time runs out.
   */
  private async comeUp(): Promise<void> {
    const { client, config, budget, follower, say } = this.step
    const resource = this.deployment
    if (!config.wait || resource.status !== 'started') return
    if (!resource.appUuid) {
      resource.end('finished')
      this.doubt(resource, `Coolify did not say which ${resource.kind} it started`)
      return
    }
    const window = budget.health()
    const turn = (signal: AbortSignal, final?: boolean): Promise<void> =>
      follower.turn(signal, final)
    const options = { pollIntervalMs: config.pollIntervalMs, turn }
    const { health, log, parts } = await awaitStartup(client, resource, options, window.signal)
    if (budget.cancelled.aborted) return
    if (health.up) {
      resource.end('finished')
      say.note(`${resource.name}: running`)
    } else if (health.unknown) {
      resource.end('finished')
      this.doubt(resource, health.problem)
    } else if (window.cutShort()) {
      resource.end(
        'timeout',
        `its time ran out before it came up (${health.problem}); a ${resource.kind} has no deployment to cancel, so its start goes on in Coolify`
      )
    } else {
      // Logs are given only while a container runs: one more try, if none came yet.
      const lines = log.length
        ? log
        : await containerLog(client, resource, parts, { turn }, budget.grace())
      resource.unhealthy(`it did not come up: ${health.problem}`, lines)
      say.runtimeLog(resource)
    }
  }

  /** Passes, with a warning that says what could not be confirmed. */
  private doubt(deployment: Deployment, problem: string): void {
    const warning = `could not confirm that ${deployment.name} is up: ${problem}`
    deployment.doubt(warning)
    this.step.say.warn(warning)
  }

  /** `rollback-on-failure`: deploys again what ran before a bad version, in its own time. */
  private async rollBack(): Promise<void> {
    const { client, config, budget, state, follower, say } = this.step
    const failed = this.deployment
    if (
      !config.wait ||
      !config.rollbackOnFailure ||
      !this.version ||
      !isBadVersion(failed.status)
    ) {
      return
    }
    const signal = budget.rollback()
    const undo = (): AbortSignal => budget.grace()
    const rollback = await startRollback(client, failed, this.version, { state, signal, undo, say })
    if (!rollback) return
    this.#rollback = rollback
    this.save()
    await follower.follow(rollback.deployment, { at: rollback.deployment.triggeredAt }, signal)
    if (!rollback.deployment.ended) {
      this.leaveRunning(failed, rollback)
      return
    }
    await this.checkHealth(rollback.deployment, budget.health(signal))
    say.note(`${failed.name}: rollback ${rollback.deployment.status}`)
    judgeRollback(failed, rollback)
  }

  /**
   * A rollback still under way when the run was cancelled or its time ran out is never cancelled:
   * that would leave the application worse off. It goes on in Coolify, and the log, the summary,
   * the annotation and the GitHub deployment say so.
   */
  private leaveRunning(failed: Deployment, { deployment, what }: Rollback): void {
    const { budget, follower, say } = this.step
    const cancelled = budget.cancelled.aborted
    const why = cancelled ? this.cancelledWhy() : 'its time ran out'
    follower.leave(deployment, cancelled ? 'cancelled' : 'timeout', `${why}; it goes on in Coolify`)
    const note = `the rollback to ${what} (deployment ${deployment.uuid}) was started and is left running in Coolify, since ${why}: Coolify shows how it ends`
    failed.rollback(false, note)
    say.note(`${failed.name}: ${note}`)
  }

  /** What cancelled the run, in the host's words, to follow a colon or a comma. */
  private cancelledWhy(): string {
    const said = this.step.budget.why()
    return said.charAt(0).toLowerCase() + said.slice(1)
  }
}

/** Why a deployment this run only joined is left running. */
function elsewhere(deployment: Deployment): string {
  return `deployment ${deployment.uuid} of ${deployment.name} was started elsewhere, so it is left running in Coolify`
}
