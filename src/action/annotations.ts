import type { DeploymentView } from '../model/deployment.js'
import type { LogLine } from '../model/logs.js'
import { describeStatus, failsStep, worseFirst } from '../model/status.js'
import { failureLine, failureTitle } from '../report/failure.js'
import { redactMasked } from '../config/secrets.js'
import * as commands from './commands.js'

/** Log lines an annotation carries: enough to show the cause, not a log. */
const ANNOTATION_LINES = 5
/**
 * The longest log line any report quotes whole: a minified bundle or a base64 blob on one line
 * would otherwise fill a comment or summary alone.
 */
export const QUOTED_LINE_LENGTH = 1000

/**
 * A log line as reports quote it: masked values left out first, so that no cut leaves half of one,
 * then at most `QUOTED_LINE_LENGTH`, saying what was cut.
 */
export function quotedLine(text: string): string {
  const shown = redactMasked(text)
  if (shown.length <= QUOTED_LINE_LENGTH) return shown
  return `${shown.slice(0, QUOTED_LINE_LENGTH)} … (${shown.length - QUOTED_LINE_LENGTH} more characters cut)`
}

/**
 * The runner keeps an annotation's first 4,096 characters (actions/runner
 * `ExecutionContext.AddIssue`, `_maxIssueMessageLength`) and drops the rest.
 */
export const ANNOTATION_LENGTH = 4096

/**
 * An annotation's message within `ANNOTATION_LENGTH`: its first line, which names what failed and
 * why, then the log lines. Log lines give up room first, the earliest first, so that the last,
 * which tells the cause, is kept whole when it can be; the first line last.
 */
export function fittedMessage(lines: readonly string[], room = ANNOTATION_LENGTH): string {
  const fitted = [...lines]
  const order = [...fitted.keys()].slice(1).concat(0)
  for (const index of order) {
    const over = fitted.join('\n').length - room
    if (over <= 0) break
    const line = fitted[index]
    // `…` takes one of the characters given back.
    if (line.length > 1) fitted[index] = `${line.slice(0, Math.max(0, line.length - over - 1))}…`
  }
  return fitted.join('\n').slice(0, room)
}

/**
 * GitHub keeps a step's first 10 error annotations and drops the rest without a word.
 * (actions/runner: `ExecutionContext.AddIssue`, `_maxIssueCount`.)
 */
export const SHOWN_ERRORS = 10

/**
 * An error annotation per failed deployment, the worst first (failed, unhealthy, timed out,
 * cancelled), within `room` of the annotations GitHub shows: its title names the application and
 * the status, its message gives the reason, the link and the log lines that tell why. When more
 * failed than fit, the last one shown names the rest.
 */
export function annotateFailures(
  deployments: readonly DeploymentView[],
  instanceUrl: string,
  room = SHOWN_ERRORS
): void {
  const failed = deployments
    .filter(deployment => failsStep(deployment.status))
    .sort((a, b) => worseFirst(a.status, b.status))
  const shown = failed.length > room ? failed.slice(0, Math.max(0, room - 1)) : failed
  for (const deployment of shown) {
    const { stderr, rest } = splitTail(deployment.tail, ANNOTATION_LINES)
    // stderr says why; a log without any (the contract's plain text) ends with the cause instead.
    const lines = (stderr.length > 0 ? stderr : rest).map(line => quotedLine(line.text))
    const message = fittedMessage([redactMasked(failureLine(deployment, instanceUrl)), ...lines])
    commands.error(message, { title: failureTitle(deployment) })
  }
  const others = failed.slice(shown.length)
  if (others.length === 0 || room === 0) return
  const names = others.map(d => `${d.name} (${describeStatus(d.status)})`).join(', ')
  commands.error(`Also did not succeed: ${names}. The job summary has each one.`, {
    title: `${others.length} more deployments did not succeed`
  })
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
