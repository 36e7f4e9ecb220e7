import * as core from '@actions/core'
import { connect } from './coolify/connect.js'
import { CoolifyError } from './coolify/errors.js'
import { statusFromCoolify } from './deploy/deployment.js'
import { describeError } from './errors.js'
import { readConfig } from './inputs.js'
import { readPending, savePending } from './state.js'

/**
 * The post step: the safety net for a main step that was killed while it waited. Cancels, in
 * Coolify, every deployment the main step left on its list that is still queued or running.
 * Nothing here fails the job: the run is over, so problems become warnings.
 */
export async function runPost(): Promise<void> {
  const pending = readPending()
  if (pending.length === 0) return
  let client
  try {
    const config = readConfig(name => core.getInput(name), core.setSecret)
    if (!config.cancelOnAbort) return
    client = connect(config)
    const signal = AbortSignal.timeout(20_000)
    await Promise.all(
      pending.map(async ({ uuid, name }) => {
        try {
          const detail = await client!.getDeployment(uuid, signal)
          const status = statusFromCoolify(detail.status)
          if (status !== 'queued' && status !== 'in_progress') return
          await client!.cancelDeployment(uuid, signal)
          core.info(
            `${name}: cancelled deployment ${uuid} in Coolify, left running when the main step stopped`
          )
        } catch (error) {
          if (error instanceof CoolifyError && error.status === 400) return // it ended meanwhile
          core.warning(`${name}: could not cancel deployment ${uuid}: ${describeError(error)}`)
        }
      })
    )
    savePending([])
  } catch (error) {
    core.warning(`Could not cancel the deployments left running: ${describeError(error)}`)
  } finally {
    await client?.close()
  }
}
