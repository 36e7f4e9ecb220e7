import * as core from '@actions/core'
import { Budget, GRACE_MS } from './budget.js'
import type { CoolifyClient } from './coolify/client.js'
import { connect } from './coolify/connect.js'
import { ActionError } from './errors.js'
import { readConfig, type Config } from './inputs.js'
import { pullRequestEvent, type PullRequestEvent } from './event.js'
import { removePreview } from './remove-preview.js'
import { report, type Reporters } from './report/index.js'
import { LogPrinter, printRuntimeLog } from './report/console.js'
import { createGitHubDeployment } from './report/github-deployment.js'
import { openPullRequestComment } from './report/pr-comment.js'
import { launch, prepare } from './rollout/launch.js'
import { checkReviewEvent } from './rollout/review-app.js'
import { decide, type Ending } from './rollout/outcome.js'
import type { Rollout } from './rollout/rollout.js'
import { Follower } from './rollout/watch.js'
import { isLoopback } from './proxy.js'
import { mask } from './secrets.js'
import { RunState } from './state.js'

/** The main step: config → rollouts → run them → one outcome → report. */
export async function run(): Promise<void> {
  const cancelled = new AbortController()
  const onSignal = (): void => cancelled.abort(new ActionError('The workflow run was cancelled.'))
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  const reporters: Reporters = {}
  let client: CoolifyClient | undefined
  let budget: Budget | undefined
  let rollouts: Rollout[] = []
  const ending: Ending = { cancelled: false }
  try {
    const config = readConfig(name => core.getInput(name), mask)
    const event = pullRequestEvent()
    checkReviewEvent(config, event)
    reporters.config = config
    budget = new Budget(config.timeoutMs, config.healthTimeoutMs, cancelled.signal)
    warnIfPlainHttp(config)
    client = connect(config)
    if (config.deletePreview) {
      await removePreview(client, config, budget.deploy())
      ending.removed = true
    } else {
      rollouts = await deploy(client, config, event, budget, reporters)
    }
    if (cancelled.signal.aborted) throw cancelled.signal.reason
  } catch (error) {
    ending.error = error
  }
  ending.cancelled = cancelled.signal.aborted
  const outcome = decide(
    rollouts.map(rollout => rollout.deployment),
    { ...ending, reviewAppUuid: reporters.reviewAppUuid }
  )
  await report(outcome, reporters, budget?.grace() ?? AbortSignal.timeout(GRACE_MS))
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
  reporters: Reporters
): Promise<Rollout[]> {
  const state = RunState.empty()
  const say = {
    note: (message: string) => core.info(message),
    warn: (message: string) => core.warning(message),
    runtimeLog: printRuntimeLog
  }
  const prepared = await prepare(client, config, budget, state, event, say.note)
  reporters.reviewAppUuid = prepared.reviewApp?.uuid
  reporters.github = await createGitHubDeployment(config, budget.deploy())
  reporters.comment = await openPullRequestComment(config)
  const follower = (several: boolean): Follower =>
    new Follower(client, {
      instanceUrl: config.instanceUrl,
      pollIntervalMs: config.pollIntervalMs,
      logs: config.logs,
      showHidden: config.debugLogs,
      sink: new LogPrinter(several),
      note: say.note,
      warn: say.warn
    })
  const rollouts = await launch(
    { client, config: prepared.config, budget, state, say },
    prepared,
    follower
  )
  const deployments = rollouts.map(rollout => rollout.deployment)
  await reporters.github?.inProgress(budget.deploy())
  await reporters.comment?.building(deployments, budget.deploy())
  await Promise.all(rollouts.map(rollout => rollout.run()))
  if (budget.cancelled.aborted) await stop(rollouts, config, budget)
  return rollouts
}

/** The run was cancelled: stop in Coolify what the rollouts started, within the grace time. */
async function stop(rollouts: readonly Rollout[], config: Config, budget: Budget): Promise<void> {
  // Deployments started elsewhere and only joined are left running: each says so as it stops.
  const running = rollouts
    .flatMap(rollout => rollout.running)
    .filter(deployment => !deployment.startedElsewhere)
  // Services and databases under way have no deployment: each says so as it stops.
  if (running.length > 0 && config.cancelOnAbort) {
    core.info(
      `The workflow run was cancelled: cancelling ${running.map(d => `${d.name} (${d.uuid})`).join(', ')} in Coolify`
    )
  } else if (running.length > 0) {
    core.warning(
      `Left running in Coolify (cancel-on-abort is false): ${running.map(d => d.name).join(', ')}`
    )
  }
  const signal = budget.grace()
  await Promise.all(rollouts.map(rollout => rollout.stop(signal)))
  if (!config.cancelOnAbort) return
  for (const deployment of running) {
    core.info(`${deployment.name}: ${deployment.status} (${deployment.reason ?? ''})`)
  }
}

function warnIfPlainHttp(config: Config): void {
  const { protocol, hostname } = new URL(config.apiUrl)
  if (protocol === 'http:' && !isLoopback(hostname)) {
    core.warning(
      `The token travels over plain http:// to ${hostname}, readable by anyone on the way; use https:// for \`coolify-url\`.`
    )
  }
}
