import type { Budget } from '../time/budget.js'
import type { CoolifyClient } from '../coolify/client.js'
import type { CoolifyError } from '../coolify/errors.js'
import { ActionError, describeError, InputError } from '../errors.js'
import type { PullRequestEvent } from '../config/event.js'
import { ApplicationReads } from '../follow/application-reads.js'
import { GATHER_MS, type Follower } from '../follow/follower.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import { Deployment } from '../model/deployment.js'
import type { TriggerMark } from '../model/mark.js'
import { linked } from '../time/signals.js'
import { applySettings } from './configure.js'
import { guardDebugLogs } from './debug-logs.js'
import { Rollout, type StepContext } from './rollout.js'
import { findTriggered, taggedApplications, trigger } from './trigger.js'
import {
  fullCommit,
  pinVersions,
  readVersions,
  restorePins,
  settlePins,
  type AppVersion
} from './versions.js'

/** What the deploy is about, and the applications' versions before anything is deployed. */
export interface Prepared {
  config: Config
  versions?: AppVersion[]
  /** With `trigger: false`: the commit whose deployment Coolify starts by itself. */
  follow?: string
}

/** Time to find and cancel what a trigger cut off may have started. */
const RECOVERY_MS = 5000
/** How long the step waits for the applications' names and URLs, once they are first due. */
const LOOKUP_GRACE_MS = 3000

/**
 * Before any deployment: the settings (`git-branch`, `domains`, `env`), the versions an input
 * needs, and the wait for other runs' pins to come off. Nothing is deployed when any of it fails;
 * nothing is pinned yet.
 */
export async function prepare(
  client: CoolifyClient,
  config: Config,
  budget: Budget,
  event: PullRequestEvent,
  say: Say
): Promise<Prepared> {
  const follow = config.trigger ? undefined : commitToFollow(config, event)
  const signal = budget.deploy()
  await guardDebugLogs(client, config, signal, say)
  // `trigger: false` changes nothing: no settings, no pins.
  if (follow) return { config, follow }
  if (config.commit) config = { ...config, commit: fullCommit(config.commit, event) }
  await applySettings(client, config, signal, say)
  const versions = await readVersions(client, config, signal)
  await settlePins(client, config, versions, signal, say)
  return { config, versions }
}

/**
 * The versions set, then at once POST /deploy for every resource, and a Rollout for each resource
 * it touched. The trigger is saved before it goes out, and each rollout's deployment as soon as
 * it is known, so that the post step cancels only what this run started. The pins come off once
 * Coolify has queued the deployments, whatever happened: another run finds one on only between
 * the two.
 */
export async function launch(
  step: Omit<StepContext, 'described' | 'mark' | 'follower' | 'applications'>,
  prepared: Prepared,
  follower: (several: boolean) => Follower
): Promise<Rollout[]> {
  const { client, config, budget, state, say } = step
  const undo = (): AbortSignal => budget.grace()
  const { versions } = prepared
  const pins = await pinVersions(client, config, versions, state, budget.deploy(), undo, say)
  const commit = prepared.follow ?? config.commit
  const mark: TriggerMark = { at: Date.now(), pr: config.pr, commit }
  // Only a trigger the step sends may leave something for the post step to find and cancel.
  const saves = config.wait && config.cancelOnAbort && config.trigger
  for (const uuid of config.appUuids) {
    if (saves) state.update(uuid, { trigger: mark })
  }
  let deployments: Deployment[]
  try {
    deployments = config.trigger
      ? await triggerOrRecover(client, config, mark, budget, say)
      : awaitDeployments(config, mark, say)
  } finally {
    // Coolify took the commit when it queued the deployment: unpin at once, cancelled or not.
    await restorePins(client, pins, state, budget.grace(), say)
  }
  // Under way or still to be found (`trigger: false`): each one's lines need its name.
  const reads = follower(deployments.filter(deployment => !deployment.ended).length > 1)
  let rollouts: Rollout[] = []
  const applications = new ApplicationReads(
    client,
    (signal, final) => reads.turn(signal, final),
    budget.lifetime(),
    () => rollouts.filter(rollout => rollout.checksHealth).length,
    Math.min(GATHER_MS, config.pollIntervalMs)
  )
  // Given up once its grace has passed, so that a lookup Coolify never answers does not hold the
  // shared read the health checks wait behind.
  const lookup = new AbortController()
  const lookupSignal = linked([budget.deploy(), lookup.signal])
  const described = describeApplications(
    applications,
    deployments,
    config.pr,
    lookupSignal.signal,
    say
  ).finally(() => lookupSignal.release())
  let lookupWaited: Promise<void> | undefined
  const context: StepContext = {
    ...step,
    mark,
    follower: reads,
    applications,
    // One grace for the whole step: whoever waits later does not wait again.
    described: () =>
      (lookupWaited ??= atMost(described, LOOKUP_GRACE_MS).then(() =>
        lookup.abort(new ActionError('names and URLs were not read in time'))
      ))
  }
  rollouts = deployments.map(
    deployment =>
      new Rollout(
        deployment,
        context,
        versions?.find(version => version.appUuid === deployment.appUuid)
      )
  )
  for (const uuid of config.appUuids) state.update(uuid, { trigger: undefined })
  for (const rollout of rollouts) rollout.save()
  return rollouts
}

/**
 * The trigger, and a line for each resource it touched. A trigger cut off by the deadline or a
 * cancelled run may still have started deployments: those found in the history are followed (and
 * so cancelled) like any other.
 */
async function triggerOrRecover(
  client: CoolifyClient,
  config: Config,
  mark: TriggerMark,
  budget: Budget,
  say: Say
): Promise<Deployment[]> {
  const what = config.tags.length ? `tag ${config.tags.join(', ')}` : config.appUuids.join(', ')
  say.note(
    `Deploying ${what} on ${config.instanceUrl}${config.force ? ' (forced rebuild)' : ''}${config.pr ? ` (pull request ${config.pr})` : ''}`
  )
  const signal = budget.deploy()
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
      deadline: budget.deadline,
      say
    })
  } catch (error) {
    if (!signal.aborted) throw error
    const recovery = budget.grace(RECOVERY_MS)
    const apps = config.tags.length
      ? taggedApplications(client, config.tags, recovery)
      : Promise.resolve(config.appUuids)
    deployments = await apps
      .then(uuids => findTriggered(client, uuids, mark, recovery))
      .catch(() => [])
    if (deployments.length === 0) {
      const cutOff = !(error instanceof ActionError) || (error as CoolifyError).details?.cutOff
      throw cutOff && !budget.cancelled.aborted
        ? new ActionError('POST /deploy: Coolify did not answer before `timeout` passed.')
        : error
    }
    say.note(
      `The deploy request was cut off, but Coolify started ${deployments.map(d => d.uuid).join(', ')}.`
    )
  }
  for (const deployment of deployments) {
    const state = deployment.running ? `deployment ${deployment.uuid}` : deployment.status
    say.note(`${deployment.name}: ${state}${deployment.reason ? ` — ${deployment.reason}` : ''}`)
  }
  return deployments
}

/**
 * With `trigger: false`, the commit to follow: `commit`, else the pull request's head commit with
 * `pr`, else the workflow's commit.
 */
export function commitToFollow(config: Config, event: PullRequestEvent): string {
  const commit = config.commit ?? (config.pr === undefined ? event.sha : event.headSha)
  if (!commit) {
    throw new InputError(
      config.pr === undefined
        ? 'Input `trigger: false` follows the commit the run is for, which the CI does not name: give `commit`.'
        : `Input \`trigger: false\` follows pull request ${config.pr}'s head commit, which the event does not name: run it on \`pull_request\`, or give \`commit\`.`
    )
  }
  return commit.toLowerCase()
}

/** `trigger: false`: a deployment to find for each application, nothing started. */
function awaitDeployments(config: Config, mark: TriggerMark, say: Say): Deployment[] {
  say.note(
    `Waiting for the deployment Coolify starts by itself of commit ${mark.commit!.slice(0, 7)}${config.pr ? ` (pull request ${config.pr})` : ''} on ${config.instanceUrl}: ${config.appUuids.join(', ')}`
  )
  return config.appUuids.map(uuid => new Deployment(uuid, uuid, undefined, mark.at))
}

/**
 * Names and public URLs of the applications (their previews' with `pr`), read while the
 * deployments run, in the same reads as the health checks due then.
 */
export async function describeApplications(
  applications: ApplicationReads,
  deployments: readonly Deployment[],
  pr: number | undefined,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  const described = deployments.filter(deployment => deployment.kind === 'application')
  const uuids = [...new Set(described.map(deployment => deployment.appUuid).filter(Boolean))]
  const reads = await Promise.allSettled(uuids.map(uuid => applications.read(uuid, signal)))
  const failed = reads.find(read => read.status === 'rejected')
  // Names and URLs are a courtesy: the deployments are followed without them.
  if (failed) say.debug(`Could not read the applications: ${describeError(failed.reason)}`)
  for (const [index, read] of reads.entries()) {
    if (read.status === 'rejected') continue
    for (const deployment of described) {
      if (deployment.appUuid === uuids[index]) deployment.describe(read.value.app, pr)
    }
  }
}

/** `promise`, or nothing after `ms`: a courtesy must not hold up what waits on it. */
function atMost(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise(resolve => {
    const timer = setTimeout(resolve, ms)
    void promise.finally(() => {
      clearTimeout(timer)
      resolve()
    })
  })
}
