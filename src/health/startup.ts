import { listOf, timeOf } from '../coolify/answers.js'
import type { CoolifyClient } from '../coolify/client.js'
import { sleep } from '../coolify/pacing.js'
import type { ServicePart } from '../coolify/types.js'
import { ActionError, describeError } from '../errors.js'
import type { DeploymentView } from '../model/deployment.js'
import { Freshness, isUp, type Health, type Look } from './readiness.js'

/** Lines read of each container's log when it did not come up. */
const LOG_LINES = 100

export interface StartupOptions {
  pollIntervalMs: number
  /**
   * Waits for the next turn among the step's reads of Coolify; a `final` read, whose answer can
   * end the following, may spend what the window holds back from polls.
   */
  turn: (signal: AbortSignal, final?: boolean) => Promise<void>
}

/** What following a started service or database found, and its containers' logs if it is down. */
export interface Startup {
  health: Health
  log: string[]
  /** Services: the parts that were not up at the last look. */
  parts: string[]
}

type Resource = Pick<DeploymentView, 'kind' | 'appUuid' | 'name'>

/** One read of a service or database; `refreshedAt` is, for a service, its part refreshed longest ago. */
export interface ResourceLook extends Look {
  status: string
  /** Services: Coolify's start command still runs, or their containers are being created. */
  starting: boolean
  /** Services: the parts whose logs tell why it is not up. */
  parts: string[]
}

/**
 * A service or database has no deployment: `/deploy` starts it in the background. Coolify's
 * status of it says whether it came up, but only once Coolify refreshed it after the start: until
 * then it is the status from before (a stale `running` of the old containers, or `exited` of a
 * stopped database), and decides nothing. Waits, until `signal` aborts, for a fresh `running`;
 * a fresh `exited`, `restarting` or `degraded` (or `starting`) at the end is down, with the end of
 * its logs, read while its containers still ran (Coolify refuses them afterwards). A status that
 * was never fresh, or never read, is unknown.
 */
export async function awaitStartup(
  client: CoolifyClient,
  resource: Resource,
  options: StartupOptions,
  signal: AbortSignal
): Promise<Startup> {
  const freshness = new Freshness()
  let health: Health = {
    up: false,
    problem: 'Coolify has not reported its status yet',
    unknown: true
  }
  let log: string[] = []
  let parts: string[] = []
  let loggedStatus: string | undefined
  for (;;) {
    let look: ResourceLook
    try {
      // A status read can say it is up, which ends the following.
      await options.turn(signal, true)
      look = await readStatus(client, resource, signal)
    } catch (error) {
      // Cut off by the end of the wait, a read says less than the look before it.
      if (signal.aborted) break
      if (health.unknown) {
        health = {
          up: false,
          problem: `could not read its status: ${describeError(error)}`,
          unknown: true
        }
      }
      if (await paused(options, signal)) break
      continue
    }
    if (look.starting) {
      health = { up: false, problem: `Coolify reports it ${short(look.status)}`, unknown: false }
    } else if (!freshness.counts(look)) {
      const problem = `Coolify has not refreshed its status since the start (it still reports ${short(look.status)})`
      health = { up: false, problem, unknown: true }
    } else if (isUp(look.status)) {
      return { health: { up: true }, log: [], parts: [] }
    } else {
      health = { up: false, problem: `Coolify reports it ${short(look.status)}`, unknown: false }
      parts = look.parts
      if (log.length === 0 || look.status !== loggedStatus) {
        const lines = await containerLog(client, resource, look.parts, options, signal)
        if (lines.length > 0) {
          log = lines
          loggedStatus = look.status
        }
      }
    }
    if (await paused(options, signal)) break
  }
  return { health, log, parts }
}

async function readStatus(
  client: CoolifyClient,
  resource: Resource,
  signal: AbortSignal
): Promise<ResourceLook> {
  if (resource.kind === 'database') {
    const { body, date } = await client.getDatabase(resource.appUuid, signal, { final: true })
    const status = statusIn(body?.status, resource)
    return {
      status,
      refreshedAt: timeOf(body.last_online_at),
      answeredAt: date,
      starting: false,
      parts: []
    }
  }
  const { body, date } = await client.getService(resource.appUuid, signal, { final: true })
  const status = statusIn(body?.status, resource)
  const all = [...arrayOf(body.applications), ...arrayOf(body.databases)]
  const watched = all.filter(part => !part.exclude_from_status)
  const parts = watched.length ? watched : all
  const times = parts.map(part => timeOf(part.last_online_at))
  const down = parts.filter(part => typeof part.status === 'string' && !isUp(part.status))
  return {
    status,
    refreshedAt:
      times.length && times.every(time => time !== undefined) ? Math.min(...times) : undefined,
    answeredAt: date,
    starting: status.toLowerCase().startsWith('starting'),
    parts: (down.length ? down : parts).flatMap(part => (part.name ? [part.name] : []))
  }
}

function statusIn(status: unknown, resource: Resource): string {
  if (typeof status === 'string' && status.trim() !== '') return status.trim()
  throw new ActionError(`Coolify's answer about ${resource.kind} ${resource.appUuid} had no status`)
}

function arrayOf(parts: ServicePart[] | undefined): ServicePart[] {
  return listOf(parts).filter(part => part && typeof part === 'object')
}

/**
 * The end of the containers' logs: the database's, or each named part's of a service (its lines
 * marked with the part). None where Coolify refuses them (a container that is not running).
 */
export async function containerLog(
  client: CoolifyClient,
  resource: Resource,
  parts: readonly string[],
  options: Pick<StartupOptions, 'turn'>,
  signal: AbortSignal
): Promise<string[]> {
  const lines: string[] = []
  for (const part of resource.kind === 'database' ? [undefined] : parts) {
    try {
      await options.turn(signal)
      const answer =
        part === undefined
          ? await client.getDatabaseLogs(resource.appUuid, LOG_LINES, signal)
          : await client.getServiceLogs(resource.appUuid, part, LOG_LINES, signal)
      const text = typeof answer?.logs === 'string' ? answer.logs : ''
      for (const line of text.split(/\r?\n/)) {
        if (line.trim() !== '') lines.push(part === undefined ? line : `${part} | ${line}`)
      }
    } catch {
      // Not running, or unreadable: the status already says it did not come up.
    }
  }
  return lines
}

/** Waits a poll interval; true when the wait is over. */
async function paused(options: StartupOptions, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(options.pollIntervalMs, signal)
    return false
  } catch {
    return true
  }
}

function short(status: string): string {
  return status.slice(0, 40)
}
