import { CoolifyError } from '../coolify/errors.js'
import { describeError, InputError } from '../errors.js'
import type { DeploymentView } from './deployment.js'
import { failsStep, worstOf, type Status } from './status.js'

/** The step's result, decided once: every reporter reads this, none works it out again. */
export interface Outcome {
  /** The `status` output: the worst of the deployments, or why there is none. */
  status: Status
  deployments: readonly DeploymentView[]
  /** Why the step stopped short, in one line: a bad input, a refused trigger, a cancelled run. */
  error?: string
  /** The step fails. */
  fails: boolean
  /** With `review-app`: the pull request's application. */
  reviewAppUuid?: string
  /** The error is Coolify's: it could not be reached, or it refused a request. */
  byCoolify: boolean
  /** The error is an input the run cannot take, known once Coolify was read. */
  byInput: boolean
}

export interface Ending {
  error?: unknown
  /** The workflow run was cancelled. */
  cancelled: boolean
  /** `delete-preview` removed the preview: nothing was to be deployed. */
  removed?: boolean
  /** `dry-run` checked everything and changed nothing. */
  dryRun?: boolean
  reviewAppUuid?: string
}

/**
 * The status table's verdict on the deployments, or, without any, on why there are none. An error
 * that stopped the step is never reported as a status that would pass (`queued` after a failure
 * once the deployments were queued): it is `failed`, or `cancelled` with the run.
 */
export function decide(deployments: readonly DeploymentView[], ending: Ending): Outcome {
  const stopped: Status = ending.cancelled ? 'cancelled' : 'failed'
  let status: Status = ending.dryRun
    ? 'dry-run'
    : ending.removed
      ? 'finished'
      : deployments.length
        ? worstOf(deployments.map(deployment => deployment.status))
        : stopped
  if (ending.error !== undefined && !failsStep(status)) status = stopped
  const error = ending.error === undefined ? undefined : describeError(ending.error)
  const fails = error !== undefined || failsStep(status)
  const byCoolify = ending.error instanceof CoolifyError
  const byInput = ending.error instanceof InputError
  return {
    status,
    deployments,
    error,
    fails,
    reviewAppUuid: ending.reviewAppUuid,
    byCoolify,
    byInput
  }
}
