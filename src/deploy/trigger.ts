import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError } from '../coolify/errors.js'
import { backoffDelay, sleep } from '../coolify/pacing.js'
import type { DeployAnswer, DeployEntry } from '../coolify/types.js'
import { ActionError } from '../errors.js'
import { Deployment } from './deployment.js'

export interface TriggerOptions {
  appUuids: string[]
  tags: string[]
  force: boolean
  pr?: number
  /** No new attempt starts after this moment (epoch ms). */
  deadline: number
  signal?: AbortSignal
  note: (message: string) => void
}

const ALREADY_QUEUED = /already queued/i
const QUEUED = /deployment queued/i
const STARTED = /^(service|database) .* started/i

/**
 * POST /deploy, and one Deployment for every resource it touched, with the deployment to follow.
 *
 * A trigger is repeated only when it is safe: when Coolify cannot have acted on it (a refused
 * connection, a 429), or when the answer was lost on the way and the applications' history shows
 * nothing under way yet.
 */
export async function trigger(
  client: CoolifyClient,
  options: TriggerOptions
): Promise<Deployment[]> {
  const triggeredAt = Date.now()
  const answer = await deployOnce(client, options)
  const entries = entriesOf(answer)
  const deployments: Deployment[] = []
  for (const entry of entries) {
    const appUuid = entry.resource_uuid ?? ''
    const message = entry.message ?? ''
    const deployment = new Deployment(
      appUuid,
      nameIn(message) ?? (appUuid || 'tag deploy'),
      entry.deployment_uuid,
      triggeredAt
    )
    deployments.push(deployment)
    if (ALREADY_QUEUED.test(message)) {
      // Coolify answers with a uuid it never saved; the deployment under way is in the history.
      deployment.uuid =
        (await findUnderWay(client, appUuid, options.signal)) ?? entry.deployment_uuid
      options.note(
        `${deployment.name}: a deployment of this commit is already under way; following it.`
      )
    } else if (!entry.deployment_uuid) {
      if (STARTED.test(message)) deployment.end('started', message)
      else deployment.end('failed', message || 'Coolify started no deployment for it')
    }
  }
  for (const uuid of options.appUuids) {
    if (!entries.some(entry => entry.resource_uuid === uuid)) {
      const skipped = new Deployment(uuid, uuid, undefined, triggeredAt)
      skipped.end(
        'failed',
        'Coolify skipped it: no resource with this uuid is visible to the token'
      )
      deployments.push(skipped)
    }
  }
  if (deployments.length === 0) {
    throw new ActionError('Coolify answered the deploy request without any deployment.')
  }
  return deployments
}

async function deployOnce(client: CoolifyClient, options: TriggerOptions): Promise<DeployAnswer> {
  const request = {
    uuids: options.appUuids,
    tags: options.tags,
    force: options.force,
    pr: options.pr
  }
  for (let attempt = 1; ; attempt++) {
    try {
      // Never aborted half-way: a trigger cut off could start a deployment nobody knows of.
      return await client.deploy(request)
    } catch (error) {
      if (!(error instanceof CoolifyError)) throw error
      // Coolify's own 404 (a JSON message); a web page's 404 means a wrong address instead.
      if (error.status === 404 && error.details.serverMessage !== undefined) {
        throw notFound(error, options)
      }
      const wait = retryDelay(error, attempt)
      if (wait === undefined || Date.now() + wait > options.deadline) {
        throw error.afterAttempts(attempt)
      }
      const status = error.status ?? 0
      // No answer, a 5xx, or a success mangled on the way back: Coolify may have acted on it.
      const mayHaveArrived =
        (error.details.unanswered && !error.details.unsent) ||
        status >= 500 ||
        (status >= 200 && status < 300)
      if (mayHaveArrived) {
        // Coolify may have acted on it. Follow what it started rather than start a second one;
        // when its history cannot be read, stop here rather than risk that. A tag names no
        // applications to look up: only Coolify's own check ("already queued", off when forcing)
        // keeps a repeated tag deploy from starting twice.
        if (options.tags.length > 0 && options.force) throw error.afterAttempts(attempt)
        const underWay = await findAllUnderWay(client, options).catch(() => {
          throw error
        })
        if (underWay) return underWay
      }
      options.note(`POST /deploy: ${error.reason}; trying again in ${Math.ceil(wait / 1000)}s.`)
      await sleep(wait, options.signal)
    }
  }
}

/** Attempts at the trigger, and their backoff: a deploy is worth a shorter wait than a read. */
const TRIGGER_RETRY = { attempts: 6, baseDelayMs: 1000, maxDelayMs: 30_000 }

/**
 * How long before the next attempt, or undefined when the failure is final. A full queue (429)
 * without `Retry-After` frees up in a minute, as Coolify's own answer says.
 */
function retryDelay(error: CoolifyError, attempt: number): number | undefined {
  if (!error.details.transient || attempt >= TRIGGER_RETRY.attempts) return undefined
  if (error.status === 429) return error.details.retryAfterMs ?? 60_000
  return backoffDelay(TRIGGER_RETRY, attempt)
}

/**
 * After a trigger that got no answer: when every application already has a deployment queued or
 * in progress, that is what the trigger started (or would have joined), so it is followed instead.
 */
async function findAllUnderWay(
  client: CoolifyClient,
  options: TriggerOptions
): Promise<DeployAnswer | undefined> {
  if (options.appUuids.length === 0) return undefined // tags name no applications to look up
  const found = await Promise.all(
    options.appUuids.map(uuid => findUnderWay(client, uuid, options.signal))
  )
  if (found.some(uuid => uuid === undefined)) return undefined
  return {
    deployments: options.appUuids.map((uuid, index) => ({
      resource_uuid: uuid,
      deployment_uuid: found[index],
      message: 'Deployment queued.'
    }))
  }
}

/** The newest queued or running deployment of an application, from its history. */
export async function findUnderWay(
  client: CoolifyClient,
  appUuid: string,
  signal?: AbortSignal
): Promise<string | undefined> {
  const history = await client.listDeployments(appUuid, 10, signal)
  const items = Array.isArray(history?.deployments) ? history.deployments : []
  return items.find(item => item.status === 'queued' || item.status === 'in_progress')
    ?.deployment_uuid
}

function entriesOf(answer: DeployAnswer): DeployEntry[] {
  if (Array.isArray(answer.deployments)) return answer.deployments
  // Deploy by tag: a message for every resource, in order, and `details` for the applications
  // that got a deployment; the n-th detail belongs to the n-th "queued" message.
  const details = Array.isArray(answer.details) ? answer.details : []
  const messages = Array.isArray(answer.message)
    ? answer.message
    : answer.message
      ? [answer.message]
      : []
  const isQueued = (message: string): boolean =>
    QUEUED.test(message) || ALREADY_QUEUED.test(message)
  const queued = messages.filter(isQueued)
  const entries: DeployEntry[] = details.map((detail, index) => ({
    ...detail,
    message: queued.length === details.length ? queued[index] : undefined
  }))
  for (const message of messages) if (!isQueued(message)) entries.push({ message })
  return entries
}

/** The resource's name in "Application NAME deployment queued." and its kin. */
function nameIn(message: string): string | undefined {
  return /^(?:application|service|database)\s+(.+?)\s+(?:deployment queued|started)/i.exec(
    message
  )?.[1]
}

function notFound(error: CoolifyError, options: TriggerOptions): CoolifyError {
  const what = options.tags.length
    ? `tag ${options.tags.map(tag => `"${tag}"`).join(', ')}`
    : `uuid ${options.appUuids.map(uuid => `"${uuid}"`).join(', ')}`
  return error.withHint(
    `No resource with ${what} is visible to this token: check \`${options.tags.length ? 'tag' : 'app-uuid'}\` and that the token belongs to the application's team`
  )
}
