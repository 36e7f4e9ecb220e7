import { listOf, timeOf } from '../coolify/answers.js'
import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError, isMissingRoute } from '../coolify/errors.js'
import { sleep } from '../coolify/pacing.js'
import type { ApplicationDetail, DeploymentDetail, HistoryItem } from '../coolify/types.js'
import { describeError, ActionError, InputError } from '../errors.js'
import { findStarted, sameCommit } from '../follow/history.js'
import type { PullRequestEvent } from '../config/event.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import type { Deployment } from '../model/deployment.js'
import { LogCursor } from '../model/logs.js'
import type { TriggerMark } from '../model/mark.js'
import { hasEnded, isFinished, statusFromCoolify } from '../model/status.js'
import type { RunState } from '../state.js'
import { QUEUE_FULL_WAIT_MS } from './trigger.js'

/** An application's version settings, read before anything is changed. */
export interface AppVersion {
  appUuid: string
  name: string
  dockerImage: boolean
  /**
   * `git_commit_sha` as found: 'HEAD' when unpinned. With `commit`, the application's own once
   * `settlePins` has seen another run's pin come off: what this run's pin is replaced with after.
   */
  pinned: string
  /** `docker_registry_image_tag` as found. */
  imageTag?: string
  /**
   * Docker-image apps: the tag the running container was started from, as Coolify says
   * (`rollback-images`); the configured tag on a server before 4.3, which does not say.
   */
  runningTag?: string
  /** The commit of the newest finished production deployment: what runs now (git apps). */
  runningCommit?: string
}

/**
 * The full SHA of `commit`: Coolify fetches a pinned commit by name (with shallow clone, on by
 * default, `git fetch --depth=1 origin SHA`, which takes no abbreviation). An abbreviated one is
 * taken as the workflow's or the pull request's commit when it starts it, else refused.
 */
export function fullCommit(commit: string, event: PullRequestEvent): string {
  if (commit.length >= 40) return commit
  const known = [event.sha, event.headSha].find(
    sha => sha !== undefined && /^[0-9a-f]{40}$/i.test(sha) && sameCommit(sha, commit)
  )
  if (known) return known.toLowerCase()
  throw new InputError(
    `Input \`commit\`: ${commit} is abbreviated, and Coolify fetches a pinned commit by its full SHA: give all 40 digits. A short one is taken only when it starts the commit the run is for (GITHUB_SHA or the pull request's head on GitHub, CI_COMMIT_SHA on GitLab).`
  )
}

/** An application's `git_commit_sha` as it was before a pin, and the commit pinned. */
export interface Pin {
  appUuid: string
  previous: string
  /** The commit this run pinned: put back only while it is still the one set. */
  commit?: string
}

/** History rows searched for what runs now. */
const HISTORY_ROWS = 20
/** How long to wait for a joined deployment's first log line, to learn which tag it runs. */
const STARTING_WAIT_MS = 10_000
const STARTING_POLL_MS = 500
/**
 * How long a pin found before this run's own is watched: another run pins right before its
 * trigger and takes its pin off as soon as Coolify queued the deployment, within seconds; one that
 * stays longer is the application's own.
 * Only a full queue keeps it on longer, by the queue's wait and the request that follows it: so
 * the longer watch is kept for a Coolify whose list of running deployments has some waiting (or
 * cannot be read).
 */
const PIN_WAIT_MS = 10_000
const FOREIGN_PIN_WAIT_MS = QUEUE_FULL_WAIT_MS + 15_000
const FOREIGN_PIN_POLL_MS = 1000

/** Time as the watch of a pin reads it; tests give their own. */
export interface Clock {
  now: () => number
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
}
const SYSTEM_CLOCK: Clock = { now: () => Date.now(), sleep }

/** `Starting deployment of NAME:TAG to SERVER.` (or `NAME@sha256:…`), the first line of an image deploy. */
const STARTING = /^Starting deployment of (\S+?)(?::([\w][\w.-]*)|@(sha256:[0-9a-f]+))? to /
/** `Importing REPO:BRANCH (commit sha SHA) to DIR.`, the line where the job checks out the commit. */
const IMPORTING = /^Importing .* \(commit sha ([^)\s]+)\)/

/**
 * Reads the applications when `image-tag`, `commit` or `rollback-on-failure` needs them, and checks
 * that each is of the kind its input is for. Undefined when no such input is set.
 */
export async function readVersions(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal
): Promise<AppVersion[] | undefined> {
  if (!config.imageTag && !config.commit && !config.rollbackOnFailure) return undefined
  const versions: AppVersion[] = []
  for (const uuid of config.appUuids) {
    const app = await client.getApplication(uuid, signal)
    const version = versionOf(uuid, app)
    if (config.imageTag && config.pr === undefined && !version.dockerImage) {
      throw new InputError(
        `Input \`image-tag\` is for Docker-image applications; ${version.name} is built from git (build pack ${app.build_pack ?? 'unknown'}): use \`commit\` for it.`
      )
    }
    if (config.commit && version.dockerImage) {
      throw new InputError(
        `Input \`commit\` is for applications built from git; ${version.name} deploys a Docker image: use \`image-tag\` for it.`
      )
    }
    refuseOtherServers(config, version, app)
    if (config.rollbackOnFailure && !version.dockerImage) {
      const history = await client.listDeployments(uuid, HISTORY_ROWS, signal)
      version.runningCommit = runningCommit(history?.deployments)
    } else if (config.rollbackOnFailure) {
      version.runningTag = await runningTag(client, version, signal)
    }
    versions.push(version)
  }
  return versions
}

/**
 * A git application's deployments to its other servers are queued by Coolify once the main one
 * finishes, without a commit (ApplicationDeploymentJob `deploy_to_additional_destinations`, 4.3.11):
 * they build whatever is pinned then, the branch's head once this run's pin is put back. So neither
 * `commit` nor a rollback can reach them; refused before anything changes. Image tags stay set and
 * reach them, and previews are never deployed there.
 */
function refuseOtherServers(config: Config, version: AppVersion, app: ApplicationDetail): void {
  const servers = Number(app?.additional_networks_count ?? 0)
  if (version.dockerImage || config.pr !== undefined || !(servers > 0)) return
  const input = config.commit ? 'commit' : config.rollbackOnFailure ? 'rollback-on-failure' : ''
  if (!input) return
  throw new InputError(
    `Input \`${input}\` cannot reach all of ${version.name}: it also runs on ${servers} more server${servers === 1 ? '' : 's'}, which Coolify deploys after the main one without a commit, at the branch's head. Leave \`${input}\` out for this application.`
  )
}

function versionOf(uuid: string, app: ApplicationDetail): AppVersion {
  return {
    appUuid: uuid,
    name: app?.name || uuid,
    dockerImage: app?.build_pack === 'dockerimage',
    pinned: app?.git_commit_sha || 'HEAD',
    imageTag: app?.docker_registry_image_tag || undefined
  }
}

/**
 * The tag the application's container runs now, read before the deploy: what a rollback goes
 * back to. The configured tag may be one that never ran, set by an earlier failed deploy.
 * Coolify's `current` comes from `docker inspect <uuid>`, which finds the container only with
 * "consistent container name" on (off by default): otherwise what ran is in the history.
 */
async function runningTag(
  client: CoolifyClient,
  version: AppVersion,
  signal: AbortSignal
): Promise<string | undefined> {
  try {
    const current = (await client.rollbackImages(version.appUuid, signal))?.current
    if (current) return current
  } catch (error) {
    if (isMissingRoute(error)) return version.imageTag
    throw error
  }
  const history = await client.listDeployments(version.appUuid, HISTORY_ROWS, signal)
  return lastRanTag(history?.deployments)
}

/** The tag the newest finished production deployment ran, as its row or log names it. */
function lastRanTag(items: HistoryItem[] | undefined): string | undefined {
  for (const item of listOf(items)) {
    if (Number(item?.pull_request_id ?? 0) !== 0) continue
    if (!isFinished(statusFromCoolify(item.status))) continue
    return ranImageTag(item)
  }
  return undefined
}

/**
 * The commit of the newest finished production deployment; undefined when there is none, or when
 * Coolify recorded it abbreviated (a pin given so), which a rollback could not fetch.
 */
function runningCommit(items: HistoryItem[] | undefined): string | undefined {
  for (const item of listOf(items)) {
    if (Number(item?.pull_request_id ?? 0) !== 0) continue
    if (!isFinished(statusFromCoolify(item.status))) continue
    if (item.commit && item.commit !== 'HEAD') {
      return /^[0-9a-f]{40}([0-9a-f]{24})?$/i.test(item.commit) ? item.commit : undefined
    }
  }
  return undefined
}

/**
 * With `commit`, waits for every pin found on the applications to settle (see `standingPin`)
 * before this run writes any: a wait after a pin of its own would keep that pin on for as long,
 * and another run watching it would take it for the application's own.
 */
export async function settlePins(
  client: CoolifyClient,
  config: Config,
  versions: readonly AppVersion[] | undefined,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  if (!config.commit) return
  for (const version of versions ?? []) {
    version.pinned = await standingPin(client, version, signal, say)
  }
}

/**
 * Sets the version to deploy on every application: the image tag, or the commit pin (saved for
 * the post step before it is set, so that a killed run still undoes it), in front of what was
 * settled (`settlePins`). Called right before the trigger, so that a pin is on only until Coolify
 * answers it. Returns the pins to undo once the deploy is queued; on failure, undoes those
 * already set within `undo` and throws.
 */
export async function pinVersions(
  client: CoolifyClient,
  config: Config,
  versions: readonly AppVersion[] | undefined,
  state: RunState,
  signal: AbortSignal,
  undo: () => AbortSignal,
  say: Say
): Promise<Pin[]> {
  const pins: Pin[] = []
  try {
    for (const version of versions ?? []) {
      if (config.imageTag && config.pr === undefined) {
        const changes = { docker_registry_image_tag: config.imageTag }
        await client.updateApplication(version.appUuid, changes, signal)
        say.note(`${version.name}: image tag set to ${config.imageTag}`)
      } else if (config.commit) {
        const ours = { appUuid: version.appUuid, previous: version.pinned, commit: config.commit }
        // Counted before the PATCH: one cut off (SIGINT, SIGTERM) may still have been saved.
        pins.push(ours)
        await pin(client, ours, config.commit, { state, signal }).catch((error: unknown) => {
          if (isRefused(error)) pins.pop()
          throw error
        })
        say.note(`${version.name}: pinned to commit ${config.commit} for this deploy`)
      }
    }
  } catch (error) {
    await restorePins(client, pins, state, undo(), say)
    throw error
  }
  return pins
}

/**
 * The application's own `git_commit_sha`, to put back after this run's pin. A commit pinned when
 * the run starts may be another run's, on only until Coolify queued that run's deployment:
 * recorded as the value to restore, it would be put back after that run restored its own, and
 * leave the application pinned for good. So a pin is watched for a while, and taken as the
 * application's own only when it stays.
 */
export async function standingPin(
  client: CoolifyClient,
  version: AppVersion,
  signal: AbortSignal,
  say: Say,
  clock: Clock = SYSTEM_CLOCK
): Promise<string> {
  let pinned = version.pinned
  if (pinned === 'HEAD') return pinned
  const running = await client.runningDeployments(signal).catch(() => undefined)
  const waiting = !running || running.some(row => row?.status === 'queued')
  const watchMs = waiting ? FOREIGN_PIN_WAIT_MS : PIN_WAIT_MS
  say.note(
    `${version.name}: pinned to ${pinned} already, maybe by another run; waiting up to ${watchMs / 1000} s to see whether it stays`
  )
  const until = clock.now() + watchMs
  while (clock.now() < until) {
    await clock.sleep(FOREIGN_PIN_POLL_MS, signal)
    const now = (await client.getApplication(version.appUuid, signal))?.git_commit_sha || 'HEAD'
    if (now === pinned) continue
    // Another run put its pin back (or moved it): watch what is set now.
    pinned = now
    if (pinned === 'HEAD') break
  }
  return pinned
}

/**
 * The application's own `git_commit_sha` now, read afresh and settled as `standingPin` does: what
 * a later pin (a rollback's, on a server before 4.3) puts back.
 */
export async function ownPin(
  client: CoolifyClient,
  version: AppVersion,
  signal: AbortSignal,
  say: Say
): Promise<string> {
  const pinned = (await client.getApplication(version.appUuid, signal))?.git_commit_sha || 'HEAD'
  return standingPin(client, { ...version, pinned }, signal, say)
}

/** Pins `commit` on the application, recording first what to put back. */
export async function pin(
  client: CoolifyClient,
  { appUuid, previous }: Pin,
  commit: string,
  { state, signal }: { state: RunState; signal: AbortSignal }
): Promise<void> {
  // Recorded first, and kept if an earlier pin of the same application is still to undo.
  state.update(appUuid, { unpin: state.get(appUuid).unpin ?? previous, pinned: commit })
  try {
    await client.updateApplication(appUuid, { git_commit_sha: commit }, signal)
  } catch (error) {
    // Refused: nothing to undo. Unanswered: it may be set, so the record stays.
    if (isRefused(error)) {
      state.update(appUuid, { unpin: undefined, pinned: undefined })
    }
    throw error
  }
}

/**
 * Puts every pinned application's `git_commit_sha` back as it was: Coolify took the commit into
 * the deployment when it queued it, and a pin left behind would make every later deploy build
 * it. Problems are reported, never thrown: the deploy itself is not at stake. Returns the pins
 * left on, which stay recorded for the post step.
 */
export async function restorePins(
  client: CoolifyClient,
  pins: readonly Pin[],
  state: RunState,
  signal: AbortSignal,
  say: Say
): Promise<Pin[]> {
  const left: Pin[] = []
  for (const pin of pins) {
    try {
      const now = pin.commit && (await currentPin(client, pin, signal))
      if (now === pin.previous) {
        // A pin cut off before Coolify saved it: nothing to put back.
        state.update(pin.appUuid, { unpin: undefined, pinned: undefined })
        continue
      }
      if (pin.commit && !(now === undefined || (now !== 'HEAD' && sameCommit(now, pin.commit)))) {
        // Another run pinned its own commit since: it puts back what it found, and only then.
        state.update(pin.appUuid, { unpin: undefined, pinned: undefined })
        say.warn(
          `${pin.appUuid}: git_commit_sha is no longer ${pin.commit} but another run's pin; left for that run to set back.`
        )
        continue
      }
      await client.updateApplication(pin.appUuid, { git_commit_sha: pin.previous }, signal)
      state.update(pin.appUuid, { unpin: undefined, pinned: undefined })
    } catch (error) {
      left.push(pin)
      say.warn(
        `${pin.appUuid}: could not set git_commit_sha back to ${pin.previous} (${describeError(error)}); set it in Coolify, or later deploys build the pinned commit.`
      )
    }
  }
  return left
}

/**
 * The application's `git_commit_sha` now, to tell whether it is still this run's pin. Coolify has
 * no compare-and-set, so this narrows the race rather than closing it; `concurrency:` closes it.
 * Undefined when unreadable: then the pin is taken as ours, a pin left on being the worse outcome.
 */
async function currentPin(
  client: CoolifyClient,
  pin: Pin,
  signal: AbortSignal
): Promise<string | undefined> {
  try {
    return (await client.getApplication(pin.appUuid, signal))?.git_commit_sha || 'HEAD'
  } catch {
    return undefined
  }
}

/** Coolify answered and said no: nothing was saved. */
function isRefused(error: unknown): boolean {
  return error instanceof CoolifyError && error.status !== undefined && error.status < 500
}

/**
 * Makes sure a Docker-image deployment runs `tag`. Coolify's "already queued" check ignores the
 * tag: a deploy while another of the app is under way joins that one. A joined deployment that
 * has not started yet reads the new tag when it starts; one that started with another tag gets a
 * forced deployment queued after it, which Coolify runs once it is done (forcing rebuilds nothing
 * for an image, and only skips that check).
 */
export async function settleImageTag(
  client: CoolifyClient,
  deployment: Deployment,
  tag: string,
  mark: TriggerMark,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  if (!deployment.running) return
  deployment.ranImage(tag)
  let ran: string | undefined
  try {
    ran = await startedTag(client, deployment.uuid!, mark.at, signal)
  } catch (error) {
    // A placeholder the trigger could not resolve: the deployment it joined is in the history.
    if (!(error instanceof CoolifyError) || error.status !== 404) throw error
    const real = await findStarted(client, deployment.appUuid, mark, signal)
    if (!real) throw error
    deployment.follow(real)
    ran = await startedTag(client, real, mark.at, signal)
  }
  if (ran === undefined || ran === tag) return
  const answer = await client.deploy({ uuids: [deployment.appUuid], force: true }, signal)
  const next = answer.deployments?.find(entry => entry.resource_uuid === deployment.appUuid)
  if (!next?.deployment_uuid) {
    throw new ActionError(
      `Coolify queued no deployment of image tag ${tag}: ${next?.message ?? 'no answer for it'}`
    )
  }
  say.note(
    `${deployment.name}: deployment ${deployment.uuid}, already under way, runs ${ran}; deployment ${next.deployment_uuid} deploys ${tag} after it.`
  )
  deployment.follow(next.deployment_uuid, true)
}

/**
 * The tag a deployment started with, when it started before the tag was set (`pinnedAt`); undefined
 * when it has not started, so that it will read the new tag, or started after the tag was set.
 */
async function startedTag(
  client: CoolifyClient,
  uuid: string,
  pinnedAt: number,
  signal: AbortSignal
): Promise<string | undefined> {
  const until = Date.now() + STARTING_WAIT_MS
  for (;;) {
    const detail = await client.getDeployment(uuid, signal)
    const status = statusFromCoolify(detail.status)
    const created = timeOf(detail.created_at)
    if (created !== undefined && created >= pinnedAt) return undefined
    if (status === 'queued') return undefined
    const ran = ranImageTag(detail)
    if (ran !== undefined) return ran
    // Started without its first line yet, or its log is hidden from this token.
    if ((status && hasEnded(status)) || !('logs' in detail) || Date.now() >= until) {
      return 'an earlier tag'
    }
    await sleep(STARTING_POLL_MS, signal)
  }
}

/**
 * The tag named in a deployment's `Starting deployment of NAME:TAG` line, if its log shows it. A
 * digest, `NAME@sha256:HEX`, is the tag `sha256-HEX` as Coolify takes it in.
 */
export function ranImageTag(detail: DeploymentDetail): string | undefined {
  const match = firstMatch(detail, STARTING)
  if (!match) return detail.docker_registry_image_tag || undefined
  return match[2] ?? match[3]?.replace(':', '-') ?? 'latest'
}

/** The commit named in a deployment's `Importing … (commit sha SHA)` line. */
export function builtCommit(detail: DeploymentDetail): string | undefined {
  return firstMatch(detail, IMPORTING)?.[1]
}

function firstMatch(detail: DeploymentDetail, pattern: RegExp): RegExpExecArray | undefined {
  const lines = new LogCursor(false).next(detail.logs)
  for (const line of lines) {
    const match = pattern.exec(line.text)
    if (match) return match
  }
  return undefined
}

/**
 * Checks, once it finished, that the deployment ran the version asked for: one that ran another
 * tag or commit failed (its success is not this version's), or was superseded when another
 * deploy's version was set before it started (tag) or was queued (commit). The log is read once;
 * a deployment whose log this token cannot read is taken as asked.
 */
export async function verifyVersion(
  client: CoolifyClient,
  deployment: Deployment,
  asked: { imageTag?: string; commit?: string },
  signal: AbortSignal
): Promise<void> {
  if (!asked.imageTag && !asked.commit) return
  if (!deployment.uuid || !isFinished(deployment.status)) return
  let detail: DeploymentDetail
  try {
    detail = await client.getDeployment(deployment.uuid, signal)
  } catch {
    return
  }
  if (asked.imageTag) {
    const ran = ranImageTag(detail) ?? asked.imageTag
    deployment.ranImage(ran)
    if (ran === asked.imageTag) return
    if (await supersededBy(client, deployment.appUuid, ran, signal)) {
      // Another run set its tag before this deployment started: its success is that run's to
      // report, and a rollback would undo it.
      deployment.end(
        'cancelled',
        `superseded: the application's image tag was set to ${ran} by another deploy before this one started, and it ran that`
      )
    } else {
      deployment.end('failed', `it ran image tag ${ran}, not ${asked.imageTag}`)
    }
  } else if (asked.commit) {
    // Another commit passing green would be a lie, as another image tag would.
    const built = builtCommit(detail)
    if (!built || sameCommit(built, asked.commit)) return
    // Coolify queues the application's git_commit_sha as it is at the trigger (applications.php
    // 16, 4.3.11) and builds the row's commit: a row of another commit means another deploy
    // replaced this run's pin before Coolify queued it. Its success is that deploy's to report,
    // and a rollback would undo it.
    if (detail.commit && !sameCommit(detail.commit, asked.commit)) {
      deployment.end(
        'cancelled',
        `superseded: another deploy changed the application's commit before Coolify queued this one, which built ${built} (see the Importing line of its log)`
      )
    } else {
      deployment.end(
        'failed',
        `Coolify built commit ${built}, not ${asked.commit} (see the Importing line of its log)`
      )
    }
  }
}

/** Whether the application is set to `ran` now: another deploy's tag, in place of this run's. */
async function supersededBy(
  client: CoolifyClient,
  appUuid: string,
  ran: string,
  signal: AbortSignal
): Promise<boolean> {
  try {
    return (await client.getApplication(appUuid, signal))?.docker_registry_image_tag === ran
  } catch {
    return false
  }
}
