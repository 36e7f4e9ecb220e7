import type { DeploymentView } from '../model/deployment.js'

/**
 * What every host says of a failed deployment: the action's annotation, the command line's
 * `error:` line, the GitHub deployment's status.
 */

/** The application and the status: `web: deployment failed`. */
export function failureTitle(deployment: DeploymentView): string {
  return `${deployment.name}: ${what(deployment)} ${deployment.status}`
}

/**
 * The application, the status and why. `cause` stands in for a reason Coolify did not give: a
 * host without room for the log's tail gives its last stderr line.
 */
export function failureReason(deployment: DeploymentView, cause?: string): string {
  const why = deployment.reason ?? cause
  const reason = why ? `: ${why}` : ''
  const rollback = deployment.rollbackNote ? `; ${deployment.rollbackNote}` : ''
  return `${failureTitle(deployment)}${reason}${rollback}`
}

/** One line: the application, the status, why, and where to look in Coolify. */
export function failureLine(
  deployment: DeploymentView,
  instanceUrl: string,
  cause?: string
): string {
  const link =
    deployment.link ?? (deployment.uuid ? `deployment ${deployment.uuid} on ${instanceUrl}` : '')
  return `${failureReason(deployment, cause)}${link ? ` — ${link}` : ''}`
}

/** The last line the build wrote to stderr, which tells best why it failed. */
export function lastError(deployment: DeploymentView): string | undefined {
  return deployment.tail.findLast(line => line.kind === 'stderr')?.text
}

/** An application's deployment; a service or database itself, which has none. */
function what(deployment: DeploymentView): string {
  return deployment.kind === 'application' ? 'deployment' : deployment.kind
}
