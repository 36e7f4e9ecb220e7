import * as core from '@actions/core'
import type { CoolifyClient } from './coolify/client.js'
import { connect } from './coolify/connect.js'
import { applySettings } from './deploy/configure.js'
import { isFailure, type Deployment } from './deploy/deployment.js'
import { trigger } from './deploy/trigger.js'
import { Watcher } from './deploy/watch.js'
import { formatDuration } from './duration.js'
import { ActionError, describeError } from './errors.js'
import { readConfig, type Config } from './inputs.js'
import { annotateFailures } from './report/annotations.js'
import { createGitHubDeployment, type GitHubDeployment } from './report/github-deployment.js'
import { setOutputs } from './report/outputs.js'
import { writeSummary } from './report/summary.js'
import { savePending } from './state.js'

/** How far the step got: the report works from whatever it reached, on failure too. */
interface Progress {
  config?: Config
  client?: CoolifyClient
  github?: GitHubDeployment
  deployments: Deployment[]
  error?: unknown
}

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
  await report(progress)
  process.off('SIGINT', onSignal)
  process.off('SIGTERM', onSignal)
  await progress.client?.close()
}

/** Everything up to the report, noting in `progress` how far it got. */
async function deploy(progress: Progress, signal: AbortSignal): Promise<void> {
  const config = readConfig(name => core.getInput(name), core.setSecret)
  progress.config = config
  warnIfPlainHttp(config)
  const client = connect(config)
  progress.client = client
  await applySettings(client, config, signal)
  progress.github = await createGitHubDeployment(config)

  const deadline = Date.now() + config.timeoutMs
  const deployments = await triggerDeployments(client, config, deadline, signal)
  progress.deployments = deployments
  const details = fetchApplications(client, deployments)
  await progress.github?.inProgress()
  if (config.wait) await watch(client, deployments, config, deadline, signal)
  await details
  if (signal.aborted) throw signal.reason
}

/** POST /deploy, and a line for each resource it touched. */
async function triggerDeployments(
  client: CoolifyClient,
  config: Config,
  deadline: number,
  signal: AbortSignal
): Promise<Deployment[]> {
  const what = config.tags.length ? `tag ${config.tags.join(', ')}` : config.appUuids.join(', ')
  core.info(
    `Deploying ${what} on ${config.instanceUrl}${config.force ? ' (forced rebuild)' : ''}${config.pr ? ` (pull request ${config.pr})` : ''}`
  )
  const deployments = await trigger(client, {
    appUuids: config.appUuids,
    tags: config.tags,
    force: config.force,
    pr: config.pr,
    deadline,
    signal,
    note: message => core.info(message)
  })
  for (const deployment of deployments) {
    const state =
      deployment.uuid && !deployment.ended ? `deployment ${deployment.uuid}` : deployment.status
    core.info(`${deployment.name}: ${state}${deployment.reason ? ` — ${deployment.reason}` : ''}`)
  }
  return deployments
}

/** Follows the deployments until they end, the deadline passes or the run is cancelled. */
async function watch(
  client: CoolifyClient,
  deployments: Deployment[],
  config: Config,
  deadline: number,
  signal: AbortSignal
): Promise<void> {
  const watcher = new Watcher(client, deployments, {
    instanceUrl: config.instanceUrl,
    pollIntervalMs: config.pollIntervalMs,
    deadline,
    cancelOnTimeout: config.cancelOnTimeout,
    logs: config.logs,
    showHidden: config.debugLogs,
    note: message => core.info(message),
    warn: message => core.warning(message)
  })
  if (config.cancelOnAbort) savePending(watcher.running)
  // Cancelled during the trigger (which is never cut short): no wait, but still the cancel.
  if (!signal.aborted) await watcher.run(signal)
  if (signal.aborted) await cancelOnAbort(watcher, config)
  savePending([])
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
  await Promise.all(running.map(deployment => watcher.cancel(deployment, 'cancelled')))
  for (const deployment of running)
    core.info(`${deployment.name}: ${deployment.status} (${deployment.reason ?? ''})`)
}

/**
 * Names and public URLs of the applications, read while the deployments run: one read for one
 * application, one list for several.
 */
async function fetchApplications(client: CoolifyClient, deployments: Deployment[]): Promise<void> {
  const uuids = [...new Set(deployments.map(deployment => deployment.appUuid).filter(Boolean))]
  if (uuids.length === 0) return
  try {
    const apps =
      uuids.length === 1 ? [await client.getApplication(uuids[0])] : await client.listApplications()
    for (const app of Array.isArray(apps) ? apps : []) {
      for (const deployment of deployments.filter(d => d.appUuid === app.uuid)) {
        if (app.name && deployment.name === deployment.appUuid) deployment.name = app.name
        const url = app.fqdn?.split(',')[0]?.trim()
        if (url) deployment.appUrl = url
      }
    }
  } catch (error) {
    // Names and URLs are a courtesy: the deployments are followed without them.
    core.debug(`Could not read the applications: ${describeError(error)}`)
  }
}

/**
 * The end of the step, reached on failure too: outputs, a line per deployment, annotations and the
 * job summary, the step's result, and last the GitHub deployment's outcome (a network call that
 * must not hold up the rest).
 */
async function report({ config, deployments, github, error }: Progress): Promise<void> {
  if (config && deployments.length > 0) {
    setOutputs(deployments, core.setOutput)
    for (const deployment of deployments) {
      if (isFailure(deployment.status)) continue
      const took =
        deployment.durationMs === undefined ? '' : ` in ${formatDuration(deployment.durationMs)}`
      const where = deployment.appUrl ? ` — ${deployment.appUrl}` : ''
      core.info(`${deployment.name}: ${deployment.status}${took}${where}`)
    }
    annotateFailures(deployments, config.instanceUrl)
    await writeSummary(deployments, config.instanceUrl)
    if (deployments.some(deployment => isFailure(deployment.status))) {
      process.exitCode = core.ExitCode.Failure
    }
  }
  if (error) core.setFailed(describeError(error))
  await github?.finish(deployments, error)
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
