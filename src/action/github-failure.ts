import * as commands from './commands.js'

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
  commands.warning(`Could not ${action}: ${why}.${hint} This does not change the deploy.`)
}

/**
 * The forge whose runner runs this step when it is not GitHub: Forgejo's runner sets both
 * FORGEJO_ACTIONS and GITEA_ACTIONS, Gitea's act_runner GITEA_ACTIONS. Their APIs answer GitHub's
 * issue-comment paths but have no deployments.
 */
export function otherForge(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.FORGEJO_ACTIONS === 'true') return 'Forgejo'
  if (env.GITEA_ACTIONS === 'true') return 'Gitea'
  return undefined
}

/** A deployments call that failed because the forge has no such API: its 404, on Forgejo or Gitea. */
export function lacksDeploymentsApi(error: unknown): string | undefined {
  const forge = otherForge()
  return forge && (error as { status?: number }).status === 404 ? forge : undefined
}
