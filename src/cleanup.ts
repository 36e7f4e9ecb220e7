import * as core from '@actions/core'
import type { CoolifyClient } from './coolify/client.js'
import { connect } from './coolify/connect.js'
import { cancelDeployment } from './rollout/cancel.js'
import { isUnderWay } from './rollout/status.js'
import { findTriggered } from './rollout/trigger.js'
import { describeError } from './errors.js'
import { readConfig } from './inputs.js'
import { restorePins } from './rollout/versions.js'
import {
  readPending,
  readPins,
  readTrigger,
  savePending,
  saveTrigger,
  type PendingDeployment
} from './state.js'

/** The post step's time for all of it: the runner is winding the job down. */
const POST_BUDGET_MS = 20_000

/**
 * The post step: the safety net for a main step that was killed while it deployed. Cancels, in
 * Coolify, every deployment the main step left on its list, and any its trigger started before
 * the answer came, that is still queued or running. Nothing here fails the job: the run is over,
 * so problems become warnings.
 */
export async function run(): Promise<void> {
  await unpin()
  const pending = readPending()
  const trigger = readTrigger()
  if (pending.length === 0 && !trigger) return
  let client: CoolifyClient | undefined
  try {
    const config = readConfig(name => core.getInput(name), core.setSecret)
    if (!config.cancelOnAbort) return
    client = connect(config)
    const signal = AbortSignal.timeout(POST_BUDGET_MS)
    const targets = [...pending]
    if (trigger) {
      const started = await findTriggered(client, trigger.appUuids, trigger, signal).catch(
        (error: unknown) => {
          core.warning(
            `Could not look for deployments started by the trigger: ${describeError(error)}`
          )
          return []
        }
      )
      for (const found of started) {
        if (!targets.some(target => target.uuid === found.uuid)) {
          targets.push({ uuid: found.uuid!, name: found.name })
        }
      }
    }
    await Promise.all(targets.map(target => stopIfRunning(client!, target, signal)))
    savePending([])
    saveTrigger(undefined)
  } catch (error) {
    core.warning(`Could not cancel the deployments left running: ${describeError(error)}`)
  } finally {
    await client?.close()
  }
}

/** Puts back the commit pins a killed main step left on the applications. */
async function unpin(): Promise<void> {
  const pins = readPins()
  if (pins.length === 0) return
  let client: CoolifyClient | undefined
  try {
    client = connect(readConfig(name => core.getInput(name), core.setSecret))
    const signal = AbortSignal.timeout(POST_BUDGET_MS)
    const left = await restorePins(client, pins, signal, m => core.warning(m))
    const done = pins.filter(pin => !left.includes(pin)).map(pin => pin.appUuid)
    if (done.length) core.info(`Set git_commit_sha back as it was on ${done.join(', ')}`)
  } catch (error) {
    core.warning(`Could not unpin the applications: ${describeError(error)}`)
  } finally {
    await client?.close()
  }
}

async function stopIfRunning(
  client: CoolifyClient,
  { uuid, name }: PendingDeployment,
  signal: AbortSignal
): Promise<void> {
  try {
    const detail = await client.getDeployment(uuid, signal)
    if (!isUnderWay(detail.status)) return
  } catch (error) {
    core.warning(`${name}: could not read deployment ${uuid}: ${describeError(error)}`)
    return
  }
  const result = await cancelDeployment(client, uuid, signal)
  if (result.cancelled) {
    core.info(
      `${name}: cancelled deployment ${uuid} in Coolify, left running when the main step stopped`
    )
  } else if (result.problem) {
    core.warning(`${name}: deployment ${uuid} may still be running in Coolify: ${result.problem}`)
  }
}
