import type { DeploymentView } from '../model/deployment.js'
import type { LogLine } from '../model/logs.js'
import { failsStep } from '../model/status.js'
import { failureLine, failureTitle } from '../report/failure.js'
import * as commands from './commands.js'

/** Log lines an annotation carries: enough to show the cause, not a log. */
const ANNOTATION_LINES = 5

/**
 * An error annotation per failed deployment: its title names the application and the status, its
 * message gives the reason, the link and the log lines that tell why.
 */
export function annotateFailures(
  deployments: readonly DeploymentView[],
  instanceUrl: string
): void {
  for (const deployment of deployments) {
    if (!failsStep(deployment.status)) continue
    const { stderr, rest } = splitTail(deployment.tail, ANNOTATION_LINES)
    // stderr says why; a log without any (the contract's plain text) ends with the cause instead.
    const lines = (stderr.length > 0 ? stderr : rest).map(line => line.text)
    commands.error([failureLine(deployment, instanceUrl), ...lines].join('\n'), {
      title: failureTitle(deployment)
    })
  }
}

/**
 * At most `max` lines of a log tail, split into its last stderr lines, which tell best why a
 * deployment failed, and the last of the other lines to fill up to `max`; each in log order.
 */
export function splitTail(
  tail: readonly LogLine[],
  max: number
): { stderr: LogLine[]; rest: LogLine[] } {
  const stderr = tail.filter(line => line.kind === 'stderr').slice(-max)
  const others = tail.filter(line => line.kind !== 'stderr')
  return { stderr, rest: others.slice(Math.max(0, others.length - (max - stderr.length))) }
}
