import * as core from '@actions/core'

/**
 * A warning for a GitHub API call that failed: what GitHub answered and, when it refused, the
 * permission the job needs. GitHub's bookkeeping never changes the deploy.
 */
export function warnGitHubFailure(action: string, error: unknown, permission: string): void {
  const { status, response } = error as { status?: number; response?: { data?: unknown } }
  const message = (response?.data as { message?: unknown } | undefined)?.message
  const why = response
    ? `GitHub answered ${status}${typeof message === 'string' ? ` "${message}"` : ''}`
    : `no answer from GitHub (${error instanceof Error ? error.message : String(error)})`
  const hint = status === 403 || status === 404 ? ` The job needs ${permission}.` : ''
  core.warning(`Could not ${action}: ${why}.${hint} This does not change the deploy.`)
}
