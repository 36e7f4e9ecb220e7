import type { CoolifyClient } from '../coolify/client.js'
import type { CoolifyError } from '../coolify/errors.js'
import type { DeploymentDetail } from '../coolify/types.js'
import { describeError } from '../errors.js'
import { isUnderWay, statusFromCoolify } from '../model/status.js'

export interface CancelResult {
  /** Coolify's deployment is cancelled, by this request or by one before it. */
  cancelled: boolean
  /**
   * The deployment after an answer other than 200: as read, or as far as Coolify's refusal
   * ("Current status: finished") tells when it cannot be read.
   */
  detail?: DeploymentDetail
  /** Why it may still be running; undefined when it is cancelled or ended on its own. */
  problem?: string
}

/**
 * Asks Coolify to cancel a deployment, and tells the truth about what happened. Only a 200 means
 * cancelled; after any other answer the deployment is read: a 400 usually means it ended
 * meanwhile (or lost a race), and Coolify 4.1.0–4.3.6 answered 500 after saving the cancel.
 */
export async function cancelDeployment(
  client: CoolifyClient,
  uuid: string,
  signal: AbortSignal
): Promise<CancelResult> {
  for (let attempt = 1; ; attempt++) {
    let problem: string
    let transient = false
    let detail: DeploymentDetail | undefined
    try {
      await client.cancelDeployment(uuid, signal)
      return { cancelled: true }
    } catch (error) {
      problem = `could not cancel it in Coolify: ${describeError(error)}`
      transient = (error as CoolifyError).details?.transient === true
      const status = CURRENT_STATUS.exec((error as CoolifyError).details?.serverMessage ?? '')?.[1]
      if (status) detail = { status }
    }
    try {
      detail = await client.getDeployment(uuid, signal)
    } catch {
      // What the refusal told, if anything, is all there is to know.
    }
    if (detail && statusFromCoolify(detail.status) === 'cancelled')
      return { cancelled: true, detail }
    if (detail && !isUnderWay(detail.status)) return { cancelled: false, detail }
    // Still running after a failure that may pass (a proxy's 502, a reset): ask once more.
    if (!transient || attempt === CANCEL_ATTEMPTS || signal.aborted) {
      return { cancelled: false, detail, problem }
    }
  }
}

const CANCEL_ATTEMPTS = 2

/** Coolify's refusal names the status: "Deployment cannot be cancelled. Current status: finished". */
const CURRENT_STATUS = /current status:\s*([\w-]+)/i
