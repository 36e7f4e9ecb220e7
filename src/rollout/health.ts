import type { CoolifyClient } from '../coolify/client.js'
import { sleep } from '../coolify/pacing.js'
import { describeError } from '../errors.js'
import type { Deployment } from './deployment.js'
import { probe } from './probe.js'
import { isFinished } from './status.js'

export interface HealthOptions {
  /** A path on the application's URL, or a whole URL. */
  healthUrl?: string
  timeoutMs: number
  /** The step's deadline (epoch ms): the check ends by then too. */
  deadline: number
  pollIntervalMs: number
  /** A preview's deployment: the application's status is production's, so only a full URL counts. */
  pr?: number
  note: (message: string) => void
  /** Shows the runtime log of an application that did not come up. */
  showRuntimeLog: (deployment: Deployment) => void
}

/** Lines of the runtime log read for an application that did not come up. */
const RUNTIME_LINES = 100
/** Time to read that log once the check is over. */
const LOG_BUDGET_MS = 5000

/**
 * After `finished`: waits, within `health-timeout` and the step's deadline, until Coolify reports
 * each application running and, with `health-url`, until that URL answers 2xx or 3xx. An
 * application that does not come up in time ends `unhealthy`, with the end of its runtime log. An
 * application that is up at once costs one read of it (and one request to the URL).
 */
export async function checkHealth(
  client: CoolifyClient,
  deployments: readonly Deployment[],
  options: HealthOptions,
  signal: AbortSignal
): Promise<void> {
  await Promise.all(
    deployments
      .filter(deployment => isFinished(deployment.status) && deployment.appUuid)
      .map(deployment => checkOne(client, deployment, options, signal))
  )
}

async function checkOne(
  client: CoolifyClient,
  deployment: Deployment,
  options: HealthOptions,
  signal: AbortSignal
): Promise<void> {
  const preview = options.pr !== undefined
  const url = healthUrlOf(options.healthUrl, deployment.appUrl, preview)
  if (preview && !url) return
  if (options.healthUrl && !url) {
    deployment.unhealthy(
      `\`health-url\` ${options.healthUrl} is a path, but the application has no URL in Coolify`,
      []
    )
    return
  }
  const until = AbortSignal.any([
    signal,
    AbortSignal.timeout(Math.max(0, Math.min(options.timeoutMs, options.deadline - Date.now())))
  ])
  let problem: string | undefined
  for (;;) {
    const found = await findProblem(client, deployment, url, !preview, until)
    // A check cut off by the timeout says less than the one before it.
    if (until.aborted && problem) break
    problem = found
    if (!problem || until.aborted) break
    try {
      await sleep(options.pollIntervalMs, until)
    } catch {
      break
    }
  }
  if (!problem) {
    if (url) options.note(`${deployment.name}: healthy (${url} answers)`)
    return
  }
  const logs = await runtimeLog(client, deployment.appUuid)
  deployment.unhealthy(`it did not come up: ${problem}`, logs)
  options.showRuntimeLog(deployment)
}

/** What is wrong now, or undefined when the application is up. */
async function findProblem(
  client: CoolifyClient,
  deployment: Deployment,
  url: string | undefined,
  checkStatus: boolean,
  signal: AbortSignal
): Promise<string | undefined> {
  if (checkStatus) {
    try {
      const app = await client.getApplication(deployment.appUuid, signal)
      const status = typeof app?.status === 'string' ? app.status : 'unknown'
      if (!isRunning(status)) return `Coolify reports it ${status.slice(0, 40)}`
    } catch (error) {
      return `could not read its status: ${describeError(error)}`
    }
  }
  if (!url) return undefined
  const result = await probe(url, signal)
  return result.ok ? undefined : `${url} ${result.what}`
}

/** `running:healthy`, `running:unknown`…: not `exited`, `restarting`, `degraded` or `starting`. */
export function isRunning(status: string): boolean {
  return status.trim().toLowerCase().split(':')[0] === 'running'
}

/**
 * The URL to check: `health-url` when it is a whole URL, else that path on the application's URL.
 * A preview has its own address, so a path on production's is not its health.
 */
export function healthUrlOf(
  healthUrl: string | undefined,
  appUrl: string | undefined,
  preview: boolean
): string | undefined {
  if (!healthUrl) return undefined
  if (!healthUrl.startsWith('/')) return healthUrl
  if (preview || !appUrl) return undefined
  return appUrl.replace(/\/+$/, '') + healthUrl
}

/** The end of the application's runtime log; none when Coolify has none to give. */
async function runtimeLog(client: CoolifyClient, appUuid: string): Promise<string[]> {
  try {
    const answer = await client.getApplicationLogs(
      appUuid,
      RUNTIME_LINES,
      AbortSignal.timeout(LOG_BUDGET_MS)
    )
    const text = typeof answer?.logs === 'string' ? answer.logs : ''
    return text.split(/\r?\n/).filter(line => line.trim() !== '')
  } catch {
    return []
  }
}
