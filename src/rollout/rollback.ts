import type { CoolifyClient } from '../coolify/client.js'
import { ActionError, describeError } from '../errors.js'
import { savePins } from '../state.js'
import { isMissingRoute } from './configure.js'
import { Deployment } from './deployment.js'
import { describeStatus, failsStep, isBadVersion } from './status.js'
import { trigger } from './trigger.js'
import { restorePins, UNDO_BUDGET_MS, type AppVersion } from './versions.js'

export interface RollbackHooks {
  /** Follows the rollback deployments to their end, like any deployment (logs, health). */
  follow: (deployments: Deployment[]) => Promise<void>
  note: (message: string) => void
  warn: (message: string) => void
}

/**
 * `rollback-on-failure`: for every deployment whose new version failed or is unhealthy, deploys
 * again what ran before (noted in `versions` before deploying) and follows it. Git apps go back to
 * the commit of their last finished deployment, through Coolify's rollback route (4.3+) or, on
 * older servers, a pin of that commit for one deploy; Docker-image apps go back to their earlier
 * tag. The failed deployment records what runs now; its status, and the step's, stay failed.
 */
export async function rollBack(
  client: CoolifyClient,
  deployments: readonly Deployment[],
  versions: readonly AppVersion[],
  signal: AbortSignal,
  hooks: RollbackHooks
): Promise<void> {
  const started: Array<{ failed: Deployment; rollback: Deployment; what: string }> = []
  for (const failed of deployments) {
    if (!isBadVersion(failed.status)) continue
    const version = versions.find(item => item.appUuid === failed.appUuid)
    if (!version) continue
    const target = version.dockerImage ? version.imageTag : version.runningCommit
    if (!target) {
      failed.rollback(false, 'nothing to roll back to: no earlier version is known')
      continue
    }
    const what = version.dockerImage ? `image tag ${target}` : `commit ${target.slice(0, 12)}`
    hooks.note(`${failed.name}: rolling back to ${what}`)
    try {
      const rollback = await redeploy(client, failed, version, target, signal, hooks.warn)
      started.push({ failed, rollback, what })
    } catch (error) {
      failed.rollback(false, `the rollback to ${what} could not start: ${describeError(error)}`)
    }
  }
  if (started.length === 0) return
  await hooks.follow(started.map(item => item.rollback))
  for (const { failed, rollback, what } of started) {
    if (!failsStep(rollback.status) && rollback.ended) {
      failed.rollback(true, `rolled back: ${what} runs again (deployment ${rollback.uuid})`)
    } else {
      const why = rollback.reason ? `: ${rollback.reason}` : ''
      failed.rollback(
        false,
        `the rollback to ${what} ended ${describeStatus(rollback.status)}${why}`
      )
    }
  }
}

/** Queues the deployment of the earlier version, and returns it to follow. */
async function redeploy(
  client: CoolifyClient,
  failed: Deployment,
  version: AppVersion,
  target: string,
  signal: AbortSignal,
  warn: (message: string) => void
): Promise<Deployment> {
  const appUuid = failed.appUuid
  const at = Date.now()
  if (version.dockerImage) {
    await client.updateApplication(appUuid, { docker_registry_image_tag: target }, signal)
    const [rollback] = await deployOnce(client, appUuid, true, at, undefined, signal)
    rollback.ranImage(target)
    return rollback
  }
  try {
    const answer = await client.rollback(appUuid, target, signal)
    if (answer?.deployment_uuid) {
      return new Deployment(appUuid, failed.name, answer.deployment_uuid, at)
    }
    throw new ActionError(answer?.message ?? 'Coolify queued no rollback deployment')
  } catch (error) {
    if (!isMissingRoute(error)) throw error
  }
  // A server before 4.3 has no rollback route: pin the commit for one deploy, as `commit` does.
  const pins = [{ appUuid, previous: version.pinned }]
  savePins(pins)
  try {
    await client.updateApplication(appUuid, { git_commit_sha: target }, signal)
    const [rollback] = await deployOnce(client, appUuid, false, at, target, signal)
    return rollback
  } finally {
    await restorePins(client, pins, AbortSignal.timeout(UNDO_BUDGET_MS), warn)
  }
}

async function deployOnce(
  client: CoolifyClient,
  appUuid: string,
  force: boolean,
  at: number,
  commit: string | undefined,
  signal: AbortSignal
): Promise<Deployment[]> {
  const deployments = await trigger(client, {
    appUuids: [appUuid],
    tags: [],
    force,
    mark: { at, commit },
    signal,
    note: () => undefined
  })
  const [rollback] = deployments
  if (!rollback?.uuid) throw new ActionError(rollback?.reason ?? 'Coolify started no deployment')
  return deployments
}
