import { formatDuration } from '../time/duration.js'
import { host } from '../host.js'
import type { Config } from '../config/inputs.js'
import type { Outcome } from '../model/outcome.js'
import { failsStep } from '../model/status.js'
import { setOutputs } from '../report/outputs.js'
import type { Watcher } from '../jobs/run.js'
import { annotateFailures, SHOWN_ERRORS } from './annotations.js'
import * as commands from './commands.js'
import { writeSummary } from './summary.js'

/**
 * The end of the step, reached on failure too, from the one outcome: outputs (always, even when
 * nothing was deployed), a line per deployment, annotations and the job summary, the step's
 * result, and last, within `signal`, the watchers: the GitHub deployment and the pull request comment.
 */
export async function report(
  outcome: Outcome,
  config: Config | undefined,
  watchers: readonly Watcher[],
  signal: AbortSignal
): Promise<void> {
  setOutputs(outcome, (name, value) => host().setOutput(name, value))
  const { deployments } = outcome
  if (config && deployments.length > 0) {
    for (const deployment of deployments) {
      if (failsStep(deployment.status)) continue
      const took =
        deployment.durationMs === undefined ? '' : ` in ${formatDuration(deployment.durationMs)}`
      const where = deployment.appUrl ? ` — ${deployment.appUrl}` : ''
      host().info(`${deployment.name}: ${deployment.status}${took}${where}`)
    }
    // The step's own error comes last: room is kept for it among those GitHub shows.
    annotateFailures(deployments, config.instanceUrl, SHOWN_ERRORS - (outcome.error ? 1 : 0))
    await writeSummary(deployments, config.instanceUrl)
  }
  if (outcome.error) commands.setFailed(outcome.error)
  // The annotations say why; a plain number also works under local runners.
  else if (outcome.fails) process.exitCode = 1
  await Promise.all(watchers.map(watcher => watcher.finish(outcome, signal)))
}
