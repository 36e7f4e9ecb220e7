import * as core from '@actions/core'
import type { CoolifyClient } from './coolify/client.js'
import { connect } from './coolify/connect.js'
import { applySettings } from './rollout/configure.js'
import type { Deployment } from './rollout/deployment.js'
import type { TriggerMark } from './rollout/history.js'
import { failsStep, type Status } from './rollout/status.js'
import { findTriggered, trigger } from './rollout/trigger.js'
import {
  pinVersions,
  readVersions,
  restorePins,
  settleImageTag,
  UNDO_BUDGET_MS,
  verifyVersions
} from './rollout/versions.js'
import { Watcher, type WatchOptions } from './rollout/watch.js'
import { rollBack } from './rollout/rollback.js'
import { checkHealth, type HealthOptions } from './rollout/health.js'
import { formatDuration } from './duration.js'
import { ActionError, describeError } from './errors.js'
import { readConfig, type Config } from './inputs.js'
import { annotateFailures } from './report/annotations.js'
import { LogPrinter, printRuntimeLog } from './report/console.js'
import { createGitHubDeployment, type GitHubDeployment } from './report/github-deployment.js'
import { setOutputs } from './report/outputs.js'
import { openPullRequestComment, type PullRequestComment } from './report/pr-comment.js'
import { writeSummary } from './report/summary.js'
import { removePreview } from './remove-preview.js'
import { savePending, saveTrigger } from './state.js'

/** How far the step got: the report works from whatever it reached, on failure too. */
interface Progress {
  config?: Config
  client?: CoolifyClient
  github?: GitHubDeployment
  comment?: PullRequestComment
  /** `delete-preview` removed the preview: nothing was deployed, and that is the outcome. */
  removed?: boolean
  deployments: Deployment[]
  error?: unknown
}

/** Time to find and cancel what a trigger cut off may have started. */
const RECOVERY_BUDGET_MS = 5000
/** How long the application lookup may go on once the deployments have ended. */
const LOOKUP_GRACE_MS = 3000
/** GitHub's last status, after a cancelled run: the runner kills the step 7.5 s after SIGINT. */
const GITHUB_AFTER_ABORT_MS = 1500

/** The main step: inputs → settings → trigger → watch → report. */
export async function run(): Promise<void> {
  const cancelled = new AbortController()
  const onSignal = (): void => cancelled.abort(new ActionError('The workflow run was cancelled.'))
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  const progress: Progress = { deployments: [] }
  try {
    await deploy(progress, cancelled.signal)
  } catch (error) {
    progress.error = error
  }
  await report(progress, cancelled.signal)
  process.off('SIGINT', onSignal)
  process.off('SIGTERM', onSignal)
  await progress.client?.close()
}

/** Everything up to the report, noting in `progress` how far it got. */
async function deploy(progress: Progress, cancelled: AbortSignal): Promise<void> {
  const config = readConfig(name => core.getInput(name), core.setSecret)
  progress.config = config
  const deadline = Date.now() + config.timeoutMs
  // Every request carries it: the step ends by `timeout` whatever hangs, and at once when cancelled.
  const signal = AbortSignal.any([cancelled, AbortSignal.timeout(config.timeoutMs)])
  warnIfPlainHttp(config)
  const client = connect(config)
  progress.client = client
  if (config.deletePreview) {
    await removePreview(client, config, signal)
    progress.removed = true
    return
  }
  await applySettings(client, config, signal)
  const versions = await readVersions(client, config, signal)
  const pins = await pinVersions(client, config, versions, signal, message => core.info(message))
  progress.github = await createGitHubDeployment(config, signal)
  progress.comment = await openPullRequestComment(config)

  const mark: TriggerMark = { at: Date.now(), pr: config.pr, commit: config.commit }
  const keep = config.wait && config.cancelOnAbort
  if (keep) saveTrigger({ appUuids: config.appUuids, pr: config.pr, at: mark.at })
  let deployments: Deployment[]
  try {
    deployments = await triggerDeployments(client, config, mark, signal)
  } finally {
    // Coolify took the commit when it queued the deployment: unpin at once, cancelled or not.
    await restorePins(client, pins, AbortSignal.timeout(UNDO_BUDGET_MS), m => core.warning(m))
  }
  progress.deployments = deployments
  if (config.imageTag && config.pr === undefined) {
    await settleImageTag(client, deployments, config.imageTag, mark, signal, m => core.info(m))
  }
  const running = deployments.filter(deployment => deployment.running)
  if (keep) savePending(running)
  else saveTrigger(undefined)

  const lookupEnd = new AbortController()
  const details = describeApplications(
    client,
    deployments,
    config.pr,
    AbortSignal.any([signal, lookupEnd.signal])
  )
  await progress.github?.inProgress(signal)
  await progress.comment?.building(deployments, signal)
  if (config.wait) {
    const watcher = new Watcher(client, deployments, watchOptions(config, deadline, mark, running))
    if (!cancelled.aborted) await watcher.run(cancelled)
    if (cancelled.aborted) await cancelOnAbort(watcher, config)
    else await verifyVersions(client, deployments, config, signal, m => core.warning(m))
    if (keep) {
      savePending([])
      saveTrigger(undefined)
    }
  }
  const grace = setTimeout(() => lookupEnd.abort(), LOOKUP_GRACE_MS)
  await details
  clearTimeout(grace)
  if (config.wait && !cancelled.aborted) {
    await checkHealth(client, deployments, healthOptions(config, deadline), signal)
  }
  if (config.wait && config.rollbackOnFailure && versions && !cancelled.aborted) {
    await rollBack(client, deployments, versions, signal, {
      follow: async rollbacks => {
        const watcher = new Watcher(
          client,
          rollbacks,
          watchOptions(config, deadline, { at: Date.now() }, rollbacks)
        )
        await watcher.run(cancelled)
        if (cancelled.aborted) return cancelOnAbort(watcher, config)
        await checkHealth(client, rollbacks, healthOptions(config, deadline), signal)
        for (const rollback of rollbacks) core.info(`${rollback.name}: rollback ${rollback.status}`)
      },
      note: message => core.info(message),
      warn: message => core.warning(message)
    })
  }
  if (cancelled.aborted) throw cancelled.reason
}

/**
 * POST /deploy, and a line for each resource it touched. A trigger cut off by the deadline or a
 * cancelled run may still have started deployments: those found in the history are followed (and
 * so cancelled) like any other.
 */
async function triggerDeployments(
  client: CoolifyClient,
  config: Config,
  mark: TriggerMark,
  signal: AbortSignal
): Promise<Deployment[]> {
  const what = config.tags.length ? `tag ${config.tags.join(', ')}` : config.appUuids.join(', ')
  core.info(
    `Deploying ${what} on ${config.instanceUrl}${config.force ? ' (forced rebuild)' : ''}${config.pr ? ` (pull request ${config.pr})` : ''}`
  )
  let deployments: Deployment[]
  try {
    deployments = await trigger(client, {
      appUuids: config.appUuids,
      tags: config.tags,
      force: config.force,
      pr: config.pr,
      // Docker-image previews: Coolify creates or retags the preview with this tag.
      dockerTag: config.pr === undefined ? undefined : config.imageTag,
      mark,
      signal,
      note: message => core.info(message)
    })
  } catch (error) {
    if (!signal.aborted) throw error
    const recovery = AbortSignal.timeout(RECOVERY_BUDGET_MS)
    deployments = await findTriggered(client, config.appUuids, mark, recovery).catch(() => [])
    if (deployments.length === 0) {
      throw error instanceof ActionError
        ? error
        : new ActionError('POST /deploy: Coolify did not answer before `timeout` passed.')
    }
    core.info(
      `The deploy request was cut off, but Coolify started ${deployments.map(d => d.uuid).join(', ')}.`
    )
  }
  for (const deployment of deployments) {
    const state = deployment.running ? `deployment ${deployment.uuid}` : deployment.status
    core.info(`${deployment.name}: ${state}${deployment.reason ? ` — ${deployment.reason}` : ''}`)
  }
  return deployments
}

/** The run was cancelled: stop in Coolify what this step started, within the runner's grace time. */
async function cancelOnAbort(watcher: Watcher, config: Config): Promise<void> {
  const running = watcher.running
  if (running.length === 0) return
  if (!config.cancelOnAbort) {
    core.warning(
      `Left running in Coolify (cancel-on-abort is false): ${running.map(d => d.name).join(', ')}`
    )
    return
  }
  core.info(
    `The workflow run was cancelled: cancelling ${running.map(d => `${d.name} (${d.uuid})`).join(', ')} in Coolify`
  )
  await watcher.cancelRunning('cancelled')
  for (const deployment of running) {
    core.info(`${deployment.name}: ${deployment.status} (${deployment.reason ?? ''})`)
  }
}

/**
 * Names and public URLs of the applications (their previews' with `pr`), read while the
 * deployments run: one read for one application, one list for several.
 */
async function describeApplications(
  client: CoolifyClient,
  deployments: readonly Deployment[],
  pr: number | undefined,
  signal: AbortSignal
): Promise<void> {
  const uuids = [...new Set(deployments.map(deployment => deployment.appUuid).filter(Boolean))]
  if (uuids.length === 0) return
  try {
    const apps =
      uuids.length === 1
        ? [await client.getApplication(uuids[0], signal)]
        : await client.listApplications(signal)
    for (const app of Array.isArray(apps) ? apps : []) {
      for (const deployment of deployments) {
        if (deployment.appUuid === app?.uuid) deployment.describe(app, pr)
      }
    }
  } catch (error) {
    // Names and URLs are a courtesy: the deployments are followed without them.
    core.debug(`Could not read the applications: ${describeError(error)}`)
  }
}

/**
 * The end of the step, reached on failure too: outputs (always, even when nothing was deployed), a
 * line per deployment, annotations and the job summary, the step's result, and last the GitHub
 * deployment's outcome (a network call that must not hold up the rest).
 */
async function report(
  { config, deployments, github, comment, removed, error }: Progress,
  cancelled: AbortSignal
): Promise<void> {
  const nothing: Status = removed ? 'finished' : cancelled.aborted ? 'cancelled' : 'failed'
  setOutputs(deployments, core.setOutput, nothing)
  if (config && deployments.length > 0) {
    for (const deployment of deployments) {
      if (failsStep(deployment.status)) continue
      const took =
        deployment.durationMs === undefined ? '' : ` in ${formatDuration(deployment.durationMs)}`
      const where = deployment.appUrl ? ` — ${deployment.appUrl}` : ''
      core.info(`${deployment.name}: ${deployment.status}${took}${where}`)
    }
    annotateFailures(deployments, config.instanceUrl)
    await writeSummary(deployments, config.instanceUrl)
    if (deployments.some(deployment => failsStep(deployment.status))) {
      process.exitCode = 1 // the annotations above say why; a plain number also works under local runners
    }
  }
  if (error) core.setFailed(describeError(error))
  const githubTime = cancelled.aborted ? GITHUB_AFTER_ABORT_MS : undefined
  await Promise.all([
    github?.finish(deployments, error, githubTime),
    comment?.finish(deployments, error, githubTime)
  ])
}

function watchOptions(
  config: Config,
  deadline: number,
  mark: TriggerMark,
  running: readonly Deployment[]
): WatchOptions {
  return {
    instanceUrl: config.instanceUrl,
    pollIntervalMs: config.pollIntervalMs,
    deadline,
    cancelOnTimeout: config.cancelOnTimeout,
    logs: config.logs,
    showHidden: config.debugLogs,
    sink: new LogPrinter(running.length > 1),
    trigger: mark,
    note: message => core.info(message),
    warn: message => core.warning(message)
  }
}

function healthOptions(config: Config, deadline: number): HealthOptions {
  return {
    healthUrl: config.healthUrl,
    timeoutMs: config.healthTimeoutMs,
    deadline,
    pollIntervalMs: config.pollIntervalMs,
    pr: config.pr,
    note: message => core.info(message),
    showRuntimeLog: deployment => printRuntimeLog(deployment)
  }
}

function warnIfPlainHttp(config: Config): void {
  const { protocol, hostname } = new URL(config.apiUrl)
  const loopback = hostname === 'localhost' || hostname === '[::1]' || /^127\./.test(hostname)
  if (protocol === 'http:' && !loopback) {
    core.warning(
      `The token travels over plain http:// to ${hostname}, readable by anyone on the way; use https:// for \`coolify-url\`.`
    )
  }
}
