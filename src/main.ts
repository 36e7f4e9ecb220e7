import * as core from '@actions/core'
import { CoolifyClient } from './coolify/client.js'
import { isFailure, type Deployment } from './deploy/deployment.js'
import { trigger } from './deploy/trigger.js'
import { Watcher } from './deploy/watch.js'
import { formatDuration } from './duration.js'
import { ActionError, describeError } from './errors.js'
import { readConfig, type Config } from './inputs.js'
import { LogPrinter } from './report/console.js'
import { setOutputs } from './report/outputs.js'
import { savePending } from './state.js'

/** The main step: inputs → trigger → watch → report. */
export async function run(): Promise<void> {
  const cancelled = new AbortController()
  const onSignal = (): void => cancelled.abort(new ActionError('The workflow run was cancelled.'))
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  let client: CoolifyClient | undefined
  let deployments: Deployment[] = []
  try {
    const config = readConfig(name => core.getInput(name), core.setSecret)
    warnIfPlainHttp(config)
    client = createClient(config)
    deployments = await deploy(client, config, cancelled.signal)
  } catch (error) {
    core.setFailed(describeError(error))
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    if (deployments.length > 0) setOutputs(deployments, core.setOutput)
    await client?.close()
  }
}

export function createClient(config: Config): CoolifyClient {
  return new CoolifyClient({
    apiUrl: config.apiUrl,
    token: config.token,
    headers: config.headers,
    caCertificate: config.caCertificate,
    // A read that takes ten poll intervals is stuck; but give slow proxies at least five seconds.
    requestTimeoutMs: Math.min(30_000, Math.max(5000, config.pollIntervalMs * 10)),
    retry: { baseDelayMs: Math.min(1000, config.pollIntervalMs) },
    onRetry: message => core.info(message)
  })
}

async function deploy(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal
): Promise<Deployment[]> {
  const startedAt = Date.now()
  const deadline = startedAt + config.timeoutMs
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
  const details = fetchApplications(client, deployments)
  for (const deployment of deployments) {
    const state =
      deployment.uuid && !deployment.ended ? `deployment ${deployment.uuid}` : deployment.status
    core.info(`${deployment.name}: ${state}${deployment.reason ? ` — ${deployment.reason}` : ''}`)
  }

  const watcher = new Watcher(client, deployments, {
    instanceUrl: config.instanceUrl,
    pollIntervalMs: config.pollIntervalMs,
    deadline,
    cancelOnTimeout: config.cancelOnTimeout,
    logs: config.logs,
    showHidden: config.debugLogs,
    printer: new LogPrinter(watcherCount(deployments) > 1),
    note: message => core.info(message),
    warn: message => core.warning(message)
  })
  if (config.wait && !signal.aborted) {
    if (config.cancelOnAbort) savePending(watcher.running)
    await watcher.run(signal)
    if (signal.aborted) await cancelOnAbort(watcher, config)
    savePending([])
  }
  await details
  report(deployments, config)
  if (signal.aborted) throw signal.reason
  return deployments
}

function watcherCount(deployments: Deployment[]): number {
  return deployments.filter(deployment => deployment.uuid && !deployment.ended).length
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

/** Names and public URLs of the applications, read while the deployments run. */
async function fetchApplications(client: CoolifyClient, deployments: Deployment[]): Promise<void> {
  await Promise.all(
    deployments
      .filter(deployment => deployment.appUuid)
      .map(async deployment => {
        try {
          const app = await client.getApplication(deployment.appUuid)
          if (app.name && deployment.name === deployment.appUuid) deployment.name = app.name
          const url = app.fqdn?.split(',')[0]?.trim()
          if (url) deployment.appUrl = url
        } catch (error) {
          core.debug(`Could not read application ${deployment.appUuid}: ${describeError(error)}`)
        }
      })
  )
}

/** The end of the step: a line per deployment, and a failed step when any of them failed. */
function report(deployments: Deployment[], config: Config): void {
  const failed = deployments.filter(deployment => isFailure(deployment.status))
  for (const deployment of deployments) {
    if (isFailure(deployment.status)) continue
    const took =
      deployment.durationMs === undefined ? '' : ` in ${formatDuration(deployment.durationMs)}`
    const where = deployment.appUrl ? ` — ${deployment.appUrl}` : ''
    core.info(`${deployment.name}: ${deployment.status}${took}${where}`)
  }
  for (const deployment of failed) {
    core.error(failureLine(deployment, config), {
      title: `${deployment.name}: deployment ${deployment.status}`
    })
  }
  if (failed.length > 0) process.exitCode = core.ExitCode.Failure
}

function failureLine(deployment: Deployment, config: Config): string {
  const reason = deployment.reason ? `: ${deployment.reason}` : ''
  const link =
    deployment.link ??
    (deployment.uuid ? `deployment ${deployment.uuid} on ${config.instanceUrl}` : '')
  return `${deployment.name}: deployment ${deployment.status}${reason}${link ? ` — ${link}` : ''}`
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
