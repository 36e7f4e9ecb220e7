import { listOf } from '../coolify/answers.js'
import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError, isQueueFull } from '../coolify/errors.js'
import { sleep } from '../coolify/pacing.js'
import type { DeployAnswer, DeployEntry } from '../coolify/types.js'
import { ActionError, describeError } from '../errors.js'
import { findCreated, findStarted, findStartedRow } from '../follow/history.js'
import type { Say } from '../host.js'
import { Deployment, type Kind } from '../model/deployment.js'
import type { TriggerMark } from '../model/mark.js'
import { explainDeployMessage } from './preview.js'

export interface TriggerOptions {
  appUuids: string[]
  tags: string[]
  force: boolean
  pr?: number
  /** With `pr`: the Docker-image preview's tag. */
  dockerTag?: string
  /** When the trigger goes out, to recognise what it started in the applications' histories. */
  mark: TriggerMark
  /** The step's deadline and cancellation: no attempt starts, and none goes on, after it. */
  signal: AbortSignal
  /** When `timeout` passes (epoch ms): a wait for a full queue that ends later is not begun. */
  deadline?: number
  say: Say
}

const NOTHING_STARTED = 'Coolify started no deployment for it'
const LOST_TAG_ANSWER =
  "POST /deploy: Coolify's answer was lost after it queued the tag's applications; following the deployments found in their histories (the tag's services, if it has any, are not followed)."
const ALREADY_QUEUED = /already queued/i
/** Coolify's answer when it joined the request to a deployment under way. */
const JOINED = 'Deployment already queued for this commit.'
const QUEUED = /deployment queued/i
const STARTED = /^(service|database) .* started/i
const KIND_OF_STARTED: Record<string, Kind> = { service: 'service', database: 'database' }
/** A full queue (429) without `Retry-After` may have room in a minute, as Coolify says. */
export const QUEUE_FULL_WAIT_MS = 60_000
/** Rate limited (429) without `Retry-After`: Coolify's limits are per minute. */
const LIMITED_WAIT_MS = 60_000

/**
 * POST /deploy, and one Deployment for every resource it touched, with the deployment to follow.
 *
 * Transient failures are tried again until the deadline, but a trigger is repeated only where that
 * cannot deploy twice: when Coolify cannot have acted on it (a refused connection, a 429), or when
 * the answer was lost on the way and an application's history shows nothing started by it.
 */
export async function trigger(
  client: CoolifyClient,
  options: TriggerOptions
): Promise<Deployment[]> {
  const triggeredAt = options.mark.at
  const entries = entriesOf(await deployUntilAnswered(client, options))
  const deployments: Deployment[] = []
  for (const entry of entries) {
    const message = entry.message ?? ''
    const name = nameIn(message)
    const kind = KIND_OF_STARTED[STARTED.exec(message)?.[1].toLowerCase() ?? ''] ?? 'application'
    // A tag deploy names a service only in its message: its uuid is found by that name.
    const appUuid =
      entry.resource_uuid ??
      (kind === 'service' && name ? await serviceNamed(client, name, options) : undefined) ??
      ''
    const deployment = new Deployment(
      appUuid,
      name ?? (appUuid || 'tag deploy'),
      entry.deployment_uuid,
      triggeredAt,
      kind
    )
    deployments.push(deployment)
    if (ALREADY_QUEUED.test(message) && appUuid) {
      // Coolify answers with a uuid it never saved; the deployment it joined is in the history.
      // Unresolved here, the watch loop resolves it when the uuid reads as unknown.
      const real = await findStarted(client, appUuid, options.mark, options.signal).catch(
        () => undefined
      )
      if (real) deployment.follow(real)
      // Someone else started it: this run follows it but never cancels it.
      deployment.joined()
      options.say.note(
        `${deployment.name}: a deployment of this commit, started elsewhere, is already under way; following it (it is not cancelled by this run).`
      )
    } else if (!entry.deployment_uuid) {
      if (kind !== 'application') deployment.started()
      else deployment.end('failed', explainDeployMessage(message) || NOTHING_STARTED)
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

/**
 * The deployments a trigger may have started when its answer was lost, or when it was cut off (the
 * run cancelled, the deadline reached) or killed, found in the applications' histories. Throws
 * when a history cannot be read.
 */
export async function findTriggered(
  client: CoolifyClient,
  appUuids: readonly string[],
  mark: TriggerMark,
  signal: AbortSignal
): Promise<Deployment[]> {
  const found = await Promise.all(appUuids.map(uuid => findStartedRow(client, uuid, mark, signal)))
  return appUuids.flatMap((appUuid, index) => {
    const row = found[index]
    if (!row) return []
    const deployment = new Deployment(appUuid, appUuid, row.deployment_uuid, mark.at)
    // Under way before the trigger: Coolify joined it to another's, which is not this run's.
    if (row.joined) deployment.joined()
    return [deployment]
  })
}

/**
 * The applications a request for `tags` deploys, as Coolify lists them (`?tag=`, 4.0.0 and later;
 * older servers list every application, whose histories then show what the request started).
 */
export async function taggedApplications(
  client: CoolifyClient,
  tags: readonly string[],
  signal: AbortSignal
): Promise<string[]> {
  const listed = await Promise.all(tags.map(tag => client.listApplications(signal, tag)))
  const uuids = listed.flatMap(list => listOf(list).map(app => app?.uuid))
  return [...new Set(uuids)].filter((uuid): uuid is string => typeof uuid === 'string' && !!uuid)
}

/**
 * What a request whose answer was lost started: for a tag, in its applications' histories. A
 * forced tag deploy whose tag has no application to look at throws: Coolify's "already queued"
 * check is off when forcing, so nothing else would keep a repeat from deploying twice.
 */
async function lookUpLost(
  client: CoolifyClient,
  uuids: readonly string[],
  { tags, force, mark, signal }: TriggerOptions
): Promise<Deployment[]> {
  const apps = tags.length > 0 ? await taggedApplications(client, tags, signal) : uuids
  if (tags.length > 0 && force && apps.length === 0) throw new Error('nothing to look at')
  return findTriggered(client, apps, mark, signal)
}

async function deployUntilAnswered(
  client: CoolifyClient,
  options: TriggerOptions
): Promise<DeployAnswer> {
  const { signal } = options
  /** Entries for applications whose deployment a lost answer started, found in their history. */
  const recovered: DeployEntry[] = []
  let uuids = options.appUuids
  /** Said when the deadline cuts an attempt off: more use than the abort. */
  let last: CoolifyError | undefined
  for (let attempt = 1; ; attempt++) {
    try {
      const answer = await client.deploy(
        {
          uuids,
          tags: options.tags,
          force: options.force,
          pr: options.pr,
          dockerTag: options.dockerTag
        },
        signal
      )
      return recovered.length ? { deployments: [...recovered, ...entriesOf(answer)] } : answer
    } catch (error) {
      if (signal.aborted) throw last?.afterAttempts(attempt - 1) ?? error
      if (!(error instanceof CoolifyError)) throw error
      last = error
      if (isQueueFull(error.status, error.details.serverMessage)) {
        const rest = await afterFullQueue(client, options, uuids, error, attempt)
        recovered.push(...rest.queued)
        uuids = rest.uuids
        if (rest.refused.length) return { deployments: [...recovered, ...rest.refused] }
        if (uuids.length === 0) return { deployments: recovered }
        continue
      }
      // Coolify's own 404 (a JSON message); a web page's 404 means a wrong address instead.
      if (error.status === 404 && error.details.serverMessage !== undefined) {
        throw notFound(error, options)
      }
      if (!error.details.transient) throw error
      client.reachability.failed(error)
      const givenUp = client.reachability.givenUp(error, attempt)
      if (givenUp) throw givenUp
      if (mayHaveArrived(error)) {
        // Coolify may have acted on it: follow what it started rather than start a second one.
        // A history that cannot be read proves nothing: then stop rather than risk a second one.
        const found = await lookUpLost(client, uuids, options).catch(() => {
          throw error.afterAttempts(attempt)
        })
        const entries = found.map(deployment => ({
          resource_uuid: deployment.appUuid,
          deployment_uuid: deployment.uuid,
          message: deployment.startedElsewhere ? JOINED : 'Deployment queued.'
        }))
        if (options.tags.length > 0) {
          // Coolify queues all of a tag's applications in the one request: one queued after the
          // trigger shows that it arrived, and asking again would start them twice.
          if (found.some(deployment => !deployment.startedElsewhere)) {
            options.say.warn(LOST_TAG_ANSWER)
            return { deployments: entries }
          }
        } else {
          recovered.push(...entries)
          uuids = uuids.filter(uuid => !found.some(deployment => deployment.appUuid === uuid))
          if (uuids.length === 0) return { deployments: recovered }
        }
      }
      const limited = error.status === 429 ? LIMITED_WAIT_MS : undefined
      try {
        await sleep(client.retryDelay(attempt, error.details.retryAfterMs ?? limited), signal)
      } catch {
        throw error.afterAttempts(attempt)
      }
    }
  }
}

/**
 * Coolify queues a request's resources one by one, and answers a full queue (429) for the whole
 * request after queueing those before the full one. Those are found in their histories (created
 * after the trigger, as an API trigger queues them) and followed; the rest are asked for again
 * once the queue may have room, or, when `timeout` leaves no time to wait, reported refused with
 * Coolify's reason. Tags name no applications to look up: their queue-full answer is final.
 */
async function afterFullQueue(
  client: CoolifyClient,
  options: TriggerOptions,
  uuids: readonly string[],
  error: CoolifyError,
  attempt: number
): Promise<{ queued: DeployEntry[]; uuids: string[]; refused: DeployEntry[] }> {
  if (options.tags.length > 0) {
    throw error
      .withHint(
        "Some of the tag's applications may have been queued before the queue was full: check them in Coolify"
      )
      .afterAttempts(attempt)
  }
  const { signal, mark } = options
  // A history that cannot be read proves nothing: then stop rather than risk a second deployment.
  // A request of one resource refused has queued nothing.
  const found = await Promise.all(
    (uuids.length > 1 ? uuids : []).map(uuid =>
      findCreated(client, uuid, mark, signal).then(
        created => created.uuid,
        () => {
          throw error.afterAttempts(attempt)
        }
      )
    )
  )
  const queued = uuids.flatMap((uuid, index) =>
    found[index]
      ? [{ resource_uuid: uuid, deployment_uuid: found[index], message: 'Deployment queued.' }]
      : []
  )
  const rest = uuids.filter((_, index) => !found[index])
  const wait = error.details.retryAfterMs ?? QUEUE_FULL_WAIT_MS
  if (rest.length === 0) return { queued, uuids: rest, refused: [] }
  if (Date.now() + wait < (options.deadline ?? Infinity)) {
    options.say.note(
      `Coolify's deployment queue is full: ${rest.join(', ')} asked for again in ${Math.round(wait / 1000)} s.`
    )
    try {
      await sleep(wait, signal)
    } catch {
      throw error.afterAttempts(attempt)
    }
    return { queued, uuids: rest, refused: [] }
  }
  const reason = `${error.details.serverMessage ?? 'the deployment queue is full'} (\`timeout\` leaves no time to wait and ask again)`
  return {
    queued,
    uuids: rest,
    refused: rest.map(uuid => ({ resource_uuid: uuid, message: reason }))
  }
}

/** No answer, a 5xx, or a success mangled on the way back: Coolify may have acted on it. */
function mayHaveArrived(error: CoolifyError): boolean {
  const status = error.status ?? 0
  return (
    (error.details.unanswered === true && !error.details.unsent) ||
    status >= 500 ||
    (status >= 200 && status < 300)
  )
}

function entriesOf(answer: DeployAnswer): DeployEntry[] {
  if (Array.isArray(answer.deployments)) return answer.deployments
  // Deploy by tag: a message for every resource, in order, and `details` for the applications
  // that got a deployment; the n-th detail belongs to the n-th "queued" message.
  const details = listOf(answer.details)
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
  return onePerResource(entries)
}

/**
 * An application carrying two of the tags is queued once: the later tag's entry says "already
 * queued", with a uuid Coolify never saved. The first entry of each resource stands for it.
 */
function onePerResource(entries: DeployEntry[]): DeployEntry[] {
  return entries.filter(
    (entry, index) =>
      !entry.resource_uuid ||
      entries.findIndex(other => other.resource_uuid === entry.resource_uuid) === index
  )
}

/**
 * The uuid of the service a tag deploy started, by its name; none when the name is not one
 * service's alone or the list cannot be read (it is then reported as not confirmed).
 */
async function serviceNamed(
  client: CoolifyClient,
  name: string,
  options: TriggerOptions
): Promise<string | undefined> {
  try {
    const services = await client.listServices(options.signal)
    const named = listOf(services).filter(service => service?.name === name)
    if (named.length === 1 && named[0].uuid) return named[0].uuid
    options.say.note(
      `Service ${name}: ${named.length ? 'several services have this name' : 'not in the list of services'}, so its status cannot be followed.`
    )
  } catch (error) {
    options.say.note(
      `Service ${name}: could not read the list of services: ${describeError(error)}`
    )
  }
  return undefined
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
