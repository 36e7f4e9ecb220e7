import * as core from '@actions/core'
import { formatDuration } from '../duration.js'
import type { Config } from '../inputs.js'
import type { Outcome } from '../rollout/outcome.js'
import { failsStep } from '../rollout/status.js'
import { annotateFailures } from './annotations.js'
import type { GitHubDeployment } from './github-deployment.js'
import { setOutputs } from './outputs.js'
import type { PullRequestComment } from './pr-comment.js'
import { writeSummary } from './summary.js'

/** Where the outcome goes besides the step's own output: whatever the step got to set up. */
export interface Reporters {
  config?: Config
  /** With `review-app`: the pull request's application, once found or made. */
  reviewAppUuid?: string
  github?: GitHubDeployment
  comment?: PullRequestComment
}

/**
 * The end of the step, reached on failure too, from the one outcome: outputs (always, even when
 * nothing was deployed), a line per deployment, annotations and the job summary, the step's
 * result, and last, within `signal`, the GitHub deployment and the pull request comment.
 */
export async function report(
  outcome: Outcome,
  { config, github, comment }: Reporters,
  signal: AbortSignal
): Promise<void> {
  setOutputs(outcome, core.setOutput)
  const { deployments } = outcome
  if (config && deployments.length > 0) {
    for (const deployment of deployments) {
      if (failsStep(deployment.status)) continue
      const took =
        deployment.durationMs === undefined ? '' : ` in ${formatDuration(deployment.durationMs)}`
      const where = deployment.appUrl ? ` — ${deployment.appUrl}` : ''
      core.info(`${deployment.name}: ${deployment.status}${took}${where}`)
    }
    annotateFailures(deployments, config.instanceUrl)
    await writeSummary(deployments, config.instanceUrl)
  }
  if (outcome.error) core.setFailed(outcome.error)
  // The annotations say why; a plain number also works under local runners.
  else if (outcome.fails) process.exitCode = 1
  await Promise.all([github?.finish(outcome, signal), comment?.finish(outcome, signal)])
}
