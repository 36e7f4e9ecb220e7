import type { GitHubApi, GitHubRun } from './github-api.js'
import { callGitHub } from './github-failure.js'

/** Asking Gitea its version must not hold up the comment. */
const VERSION_MS = 3000

/**
 * This workflow run's page, as the forge's web UI addresses it. GitHub and Gitea from 1.26 take the
 * run's id; Forgejo and Gitea up to 1.25 take its number in the repository (GITHUB_RUN_NUMBER)
 * and answer an id with another run or none. Forgejo's runner says it is Forgejo; Gitea's says only
 * Gitea, so Gitea is asked its version. When it does not tell, the number: it is what every
 * Forgejo and every Gitea before 1.26 take, and Gitea 1.26 still follows a number to its run when
 * no run of the repository has that id.
 */
export async function runLink(
  context: GitHubRun,
  github: GitHubApi,
  env: NodeJS.ProcessEnv = process.env
): Promise<string> {
  const runs = `${context.serverUrl}/${context.repo.owner}/${context.repo.repo}/actions/runs`
  const byId = `${runs}/${context.runId}`
  // A runner that leaves GITHUB_RUN_NUMBER out has nothing better than the id.
  if (!(context.runNumber > 0)) return byId
  const byNumber = `${runs}/${context.runNumber}`
  if (env.FORGEJO_ACTIONS === 'true') return byNumber
  if (env.GITEA_ACTIONS !== 'true') return byId
  return takesRunIds(await giteaVersion(github)) ? byId : byNumber
}

/** Gitea 1.26 and later: its web routes moved from run numbers to ids. */
export function takesRunIds(version: string | undefined): boolean {
  // Forgejo names its own version first and Gitea's after `+gitea-`: its routes take numbers.
  const [, major, minor] = /^(\d+)\.(\d+)\./.exec(version ?? '') ?? []
  if (major === undefined || version!.includes('+gitea-')) return false
  return Number(major) > 1 || Number(minor) >= 26
}

/** What Gitea's API says at `/version`; undefined when it does not answer. */
async function giteaVersion(github: GitHubApi): Promise<string | undefined> {
  try {
    const { data } = await callGitHub(
      attempt => github.request('GET', '/version', { signal: attempt }),
      new AbortController().signal,
      { totalMs: VERSION_MS }
    )
    const version = (data as { version?: unknown }).version
    return typeof version === 'string' ? version : undefined
  } catch {
    return undefined
  }
}
