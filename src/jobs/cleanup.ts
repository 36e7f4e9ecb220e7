import { connect } from '../transport/connect.js'
import type { CoolifyClient } from '../coolify/client.js'
import { describeError } from '../errors.js'
import { cancelDeployment } from '../follow/cancel.js'
import { findCreated } from '../follow/history.js'
import { host, sayThrough, type Say } from '../host.js'
import { readConfig } from '../config/inputs.js'
import { isUnderWay } from '../model/status.js'
import { restorePins } from '../rollout/versions.js'
import { mask } from '../config/secrets.js'
import { deadline } from '../time/signals.js'
import { RunState, type SavedRollout } from '../state.js'

/** The post step's time for all of it: the runner is winding the job down. */
const POST_BUDGET_MS = 20_000

/**
 * The post step: the safety net for a main step that was killed while it deployed. From the
 * state the main step saved, it puts back every commit pin still on, and (with `cancel-on-abort`)
 * cancels in Coolify every deployment this run started that is still queued or running: those
 * saved by uuid, and, for a trigger whose answer never came, the one the application's history
 * shows it started (same pull request and commit it queued, created after it, and no other row
 * like it: then it cancels none and warns). Nothing here fails the job:
 * the run is over, so problems become warnings.
 */
export async function run(): Promise<void> {
  const state = RunState.load()
  const records = state.entries()
  if (records.length === 0) return
  const say = sayThrough(host())
  let client: CoolifyClient | undefined
  try {
    const config = readConfig(name => host().input(name), mask)
    client = connect(config, say)
    const { signal } = deadline(POST_BUDGET_MS)
    const pins = records.flatMap(([appUuid, { unpin, pinned }]) =>
      unpin === undefined ? [] : [{ appUuid, previous: unpin, commit: pinned }]
    )
    const left = await restorePins(client, pins, state, signal, say)
    const done = pins.filter(pin => !left.includes(pin)).map(pin => pin.appUuid)
    if (done.length) say.note(`Set git_commit_sha back as it was on ${done.join(', ')}`)
    if (!config.cancelOnAbort) return
    await Promise.all(
      records.map(([appUuid, record]) => cancelLeftRunning(client!, appUuid, record, signal, say))
    )
  } catch (error) {
    say.warn(`Could not clean up after the main step: ${describeError(error)}`)
  } finally {
    await client?.close()
  }
}

/** Cancels what one rollout left under way. */
async function cancelLeftRunning(
  client: CoolifyClient,
  appUuid: string,
  { name = appUuid, running = [], trigger }: SavedRollout,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  const uuids = [...running]
  if (trigger) {
    try {
      const created = await findCreated(client, appUuid, trigger, signal)
      if (created.uuid && !uuids.includes(created.uuid)) uuids.push(created.uuid)
      if (created.candidates > 1) {
        // Another deployment like it was created in the same seconds: cancelling either could stop
        // someone else's.
        say.warn(
          `${name}: the trigger's answer never came, and ${created.candidates} deployments created after it could be the one it queued; none was cancelled: check them in Coolify.`
        )
      }
    } catch (error) {
      say.warn(
        `${appUuid}: could not look for a deployment started by the trigger: ${describeError(error)}`
      )
    }
  }
  for (const uuid of uuids) await stopIfRunning(client, name, uuid, signal, say)
}

async function stopIfRunning(
  client: CoolifyClient,
  name: string,
  uuid: string,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  try {
    const detail = await client.getDeployment(uuid, signal)
    if (!isUnderWay(detail.status)) return
  } catch (error) {
    say.warn(`${name}: could not read deployment ${uuid}: ${describeError(error)}`)
    return
  }
  const result = await cancelDeployment(client, uuid, signal)
  if (result.cancelled) {
    say.note(
      `${name}: cancelled deployment ${uuid} in Coolify, left running when the main step stopped`
    )
  } else if (result.problem) {
    say.warn(`${name}: deployment ${uuid} may still be running in Coolify: ${result.problem}`)
  }
}
