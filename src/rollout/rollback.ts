import type { CoolifyClient } from '../coolify/client.js'
import { isMissingRoute } from '../coolify/errors.js'
import { ActionError, describeError } from '../errors.js'
import type { Say } from '../host.js'
import { Deployment } from '../model/deployment.js'
import { describeStatus, failsStep } from '../model/status.js'
import type { RunState } from '../state.js'
import { trigger } from './trigger.js'
import { ownPin, pin, restorePins, type AppVersion } from './versions.js'

/** A rollback under way: the deployment of what ran before, and how to name it. */
export interface Rollback {
  deployment: Deployment
  what: string
}

/**
 * `rollback-on-failure`, for a deployment whose new version failed or is unhealthy: queues again
 * what ran before (noted in `version` before deploying). Git apps go back to the commit of their
 * last finished deployment, through Coolify's rollback route (4.3+) or, on older servers, a pin
 * of that commit for one deploy; Docker-image apps go back to the tag their container ran, never
 * to the one that just failed. Undefined, with
 * the reason recorded on `failed`, when there is nothing to go back to or it could not start.
 */
export async function startRollback(
  client: CoolifyClient,
  failed: Deployment,
  version: AppVersion,
  { state, signal, undo, say }: RollbackContext
): Promise<Rollback | undefined> {
  const target = version.dockerImage ? version.runningTag : version.runningCommit
  if (!target) {
    failed.rollback(false, 'nothing to roll back to: no earlier version is known')
    return undefined
  }
  if (version.dockerImage && target === (failed.imageTag ?? version.imageTag)) {
    // Deploying the tag that just failed again is no rollback.
    failed.rollback(
      false,
      `nothing to roll back to: image tag ${target}, which failed, is what ran before`
    )
    return undefined
  }
  const what = version.dockerImage ? `image tag ${target}` : `commit ${target.slice(0, 12)}`
  say.note(`${failed.name}: rolling back to ${what}`)
  try {
    const deployment = await redeploy(client, failed, version, target, { state, signal, undo, say })
    return { deployment, what }
  } catch (error) {
    failed.rollback(false, `the rollback to ${what} could not start: ${describeError(error)}`)
    return undefined
  }
}

/** Records on the failed deployment how its rollback ended. */
export function judgeRollback(failed: Deployment, { deployment, what }: Rollback): void {
  if (deployment.ended && !failsStep(deployment.status)) {
    failed.rollback(true, `rolled back: ${what} runs again (deployment ${deployment.uuid})`)
  } else {
    const why = deployment.reason ? `: ${deployment.reason}` : ''
    failed.rollback(
      false,
      `the rollback to ${what} ended ${describeStatus(deployment.status)}${why}`
    )
  }
}

export interface RollbackContext {
  state: RunState
  signal: AbortSignal
  /** The time to undo a pin in, whatever happened. */
  undo: () => AbortSignal
  say: Say
}

/** Queues the deployment of the earlier version, and returns it to follow. */
async function redeploy(
  client: CoolifyClient,
  failed: Deployment,
  version: AppVersion,
  target: string,
  { state, signal, undo, say }: RollbackContext
): Promise<Deployment> {
  const appUuid = failed.appUuid
  const at = Date.now()
  if (version.dockerImage) {
    await client.updateApplication(appUuid, { docker_registry_image_tag: target }, signal)
    const rollback = Deployment.next(
      failed,
      await deployOnce(client, appUuid, true, at, undefined, signal, say),
      at
    )
    rollback.ranImage(target)
    return rollback
  }
  try {
    const answer = await client.rollback(appUuid, target, signal)
    if (answer?.deployment_uuid) return Deployment.next(failed, answer.deployment_uuid, at)
    throw new ActionError(answer?.message ?? 'Coolify queued no rollback deployment')
  } catch (error) {
    if (!isMissingRoute(error)) throw error
  }
  // A server before 4.3 has no rollback route: pin the commit for one deploy, as `commit` does,
  // in front of the application's own commit: what was read before the deploy may have been
  // another run's pin. One of this run's own left on has its recorded value to go back to.
  const previous = state.get(appUuid).unpin ?? (await ownPin(client, version, signal, say))
  const pins = [{ appUuid, previous, commit: target }]
  try {
    await pin(client, pins[0], target, { state, signal })
    return Deployment.next(
      failed,
      await deployOnce(client, appUuid, false, at, target, signal, say),
      at
    )
  } finally {
    await restorePins(client, pins, state, undo(), say)
  }
}

/** One deploy of one application; the uuid of the deployment it started. */
async function deployOnce(
  client: CoolifyClient,
  appUuid: string,
  force: boolean,
  at: number,
  commit: string | undefined,
  signal: AbortSignal,
  say: Say
): Promise<string> {
  const deployments = await trigger(client, {
    appUuids: [appUuid],
    tags: [],
    force,
    mark: { at, commit },
    signal,
    // The rollback's own lines say what it does; the trigger's would repeat them.
    say: { ...say, note: () => undefined }
  })
  const [rollback] = deployments
  if (!rollback?.uuid) throw new ActionError(rollback?.reason ?? 'Coolify started no deployment')
  return rollback.uuid
}
