import { Budget, GRACE_MS } from '../time/budget.js'
import { connect } from '../transport/connect.js'
import type { CoolifyClient } from '../coolify/client.js'
import { checkAccess, forecast } from './dry-run.js'
import { ActionError } from '../errors.js'
import type { PullRequestEvent } from '../config/event.js'
import { Follower } from '../follow/follower.js'
import { host, sayThrough, type Say } from '../host.js'
import { readConfig, type Config } from '../config/inputs.js'
import { fullCommit } from '../rollout/versions.js'
import type { DeploymentView } from '../model/deployment.js'
import { decide, type Ending, type Outcome } from '../model/outcome.js'
import { isLoopback } from '../transport/proxy.js'
import { removePreview } from './remove-preview.js'
import { LogPrinter, printRuntimeLog } from '../report/console.js'
import { checkReviewEvent, openReviewApp } from '../review-app/review-app.js'
import { launch, prepare } from '../rollout/launch.js'
import { resolveApps } from '../rollout/resolve-names.js'
import type { Rollout } from '../rollout/rollout.js'
import { mask } from '../config/secrets.js'
import { deadline, sharedController } from '../time/signals.js'
import { RunState } from '../state.js'

/** Told of the deploy as it goes, besides the log: a GitHub deployment, a pull request comment. */
export interface Watcher {
  /** Coolify has taken the deployments on. */
  building(deployments: readonly DeploymentView[], signal: AbortSignal): Promise<void>
  /** The outcome; `signal` bounds it, as the step has only its grace time left. */
  finish(outcome: Outcome, signal: AbortSignal): Promise<void>
}

/** What a host adds to the one deploy pipeline. */
export interface Front {
  /** What the CI says about the pull request being deployed, where it says anything. */
  event(): PullRequestEvent
  /** Opened once the deploy's target is known, before the versions are set and the trigger. */
  watchers(config: Config, budget: Budget): Promise<Watcher[]>
  /** With `delete-preview`, once Coolify was asked to remove it. */
  removed(config: Config, signal: AbortSignal): Promise<void>
  /** The end, reached on failure too: outputs, summary, the exit status, then the watchers. */
  report(
    outcome: Outcome,
    config: Config | undefined,
    watchers: readonly Watcher[],
    signal: AbortSignal
  ): Promise<void>
}

/**
 * The deploy, from options to outcome, for any host: config → rollouts → run them → one outcome →
 * the front's report. SIGINT and SIGTERM cancel what this run started, within the grace time.
 */
export async function deployAndFollow(front: Front): Promise<void> {
  const say = sayThrough(host())
  const cancelled = sharedController()
  const onSignal = (signal: NodeJS.Signals): void =>
    cancelled.abort(new ActionError(`${host().cancelled(signal)}.`))
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  let config: Config | undefined
  let client: CoolifyClient | undefined
  let budget: Budget | undefined
  let rollouts: Rollout[] = []
  const watchers: Watcher[] = []
  const ending: Ending = { cancelled: false }
  try {
    const read = readConfig(name => host().input(name), mask)
    const event = front.event()
    checkReviewEvent(read, event)
    // An abbreviated commit is an input error, found before anything is read, in a dry run too.
    if (read.commit && read.trigger) fullCommit(read.commit, event)
    budget = new Budget(
      read.timeoutMs,
      read.healthTimeoutMs,
      cancelled.signal,
      undefined,
      undefined,
      host().cancelGraceMs
    )
    warnIfPlainHttp(read, say)
    client = connect(read, say)
    const access = read.dryRun ? await checkAccess(client, read, budget.deploy(), say) : undefined
    // Names become uuids before anything is written: a name that is not one resource's is an
    // input the config cannot hold.
    config = await resolveApps(client, read, budget.deploy(), say)
    if (access) {
      await forecast(client, config, event, access, budget.deploy(), say)
      ending.dryRun = true
    } else if (config.deletePreview) {
      await removePreview(client, config, event, budget.deploy(), say)
      await front.removed(config, budget.deploy())
      ending.removed = true
    } else {
      rollouts = await deploy(client, config, event, budget, front, watchers, ending, say)
    }
    if (cancelled.signal.aborted) throw cancelled.signal.reason
  } catch (error) {
    // A call cut short by the cancel throws the last failure it retried: the cancel is what
    // stopped the run, not Coolify.
    ending.error = cancelled.signal.aborted ? cancelled.signal.reason : error
  }
  ending.cancelled = cancelled.signal.aborted
  const outcome = decide(
    rollouts.map(rollout => rollout.deployment),
    ending
  )
  const grace = deadline(GRACE_MS)
  await front.report(outcome, config, watchers, budget?.grace() ?? grace.signal)
  grace.release()
  budget?.release()
  process.off('SIGINT', onSignal)
  process.off('SIGTERM', onSignal)
  await client?.close()
}

/** Prepares, triggers, and runs a rollout per resource; on a cancelled run, stops them. */
async function deploy(
  client: CoolifyClient,
  config: Config,
  event: PullRequestEvent,
  budget: Budget,
  front: Front,
  watchers: Watcher[],
  ending: Ending,
  say: Say
): Promise<Rollout[]> {
  const state = RunState.empty()
  // With `review-app`, the pull request's application is what the rest deploys.
  const reviewApp = config.reviewApp
    ? await openReviewApp(client, config, event, budget.deploy(), () => budget.grace(), say)
    : undefined
  ending.reviewAppUuid = reviewApp?.uuid
  const prepared = await prepare(client, reviewApp?.config ?? config, budget, event, say)
  // Opened before any pin: the GitHub deployment may take seconds, which a pin must not outlast.
  watchers.push(...(await front.watchers(config, budget)))
  const follower = (several: boolean): Follower =>
    new Follower(client, {
      instanceUrl: config.instanceUrl,
      pollIntervalMs: config.pollIntervalMs,
      logs: config.logs,
      showHidden: config.debugLogs,
      sink: new LogPrinter(several),
      say
    })
  const rollouts = await launch(
    {
      client,
      config: prepared.config,
      budget,
      state,
      say: { ...say, runtimeLog: printRuntimeLog }
    },
    prepared,
    follower
  )
  const deployments = rollouts.map(rollout => rollout.deployment)
  if (reviewApp?.warning) for (const deployment of deployments) deployment.doubt(reviewApp.warning)
  for (const watcher of watchers) await watcher.building(deployments, budget.deploy())
  await Promise.all(rollouts.map(rollout => rollout.run()))
  if (budget.cancelled.aborted) await stop(rollouts, config, budget, say)
  return rollouts
}

/** The run was cancelled: stop in Coolify what the rollouts started, within the grace time. */
async function stop(
  rollouts: readonly Rollout[],
  config: Config,
  budget: Budget,
  say: Say
): Promise<void> {
  // Deployments started elsewhere and only joined are left running: each says so as it stops.
  const running = rollouts
    .flatMap(rollout => rollout.running)
    .filter(deployment => !deployment.startedElsewhere)
  // Services and databases under way have no deployment: each says so as it stops.
  if (running.length > 0 && config.cancelOnAbort) {
    say.note(
      `${budget.why()}: cancelling ${running.map(d => `${d.name} (${d.uuid})`).join(', ')} in Coolify`
    )
  } else if (running.length > 0) {
    say.warn(
      `Left running in Coolify (cancel-on-abort is false): ${running.map(d => d.name).join(', ')}`
    )
  }
  const signal = budget.grace()
  await Promise.all(rollouts.map(rollout => rollout.stop(signal)))
  if (!config.cancelOnAbort) return
  for (const deployment of running) {
    say.note(`${deployment.name}: ${deployment.status} (${deployment.reason ?? ''})`)
  }
}

function warnIfPlainHttp(config: Config, say: Say): void {
  const { protocol, hostname } = new URL(config.apiUrl)
  if (protocol === 'http:' && !isLoopback(hostname)) {
    say.warn(
      `The token travels over plain http:// to ${hostname}, readable by anyone on the way; use https:// for \`coolify-url\`.`
    )
  }
}
