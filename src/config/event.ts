import { readFileSync } from 'node:fs'

/**
 * What the CI says about the code it runs for: its repository and commit, and the pull request's
 * branch.
 */
export interface PullRequestEvent {
  /** `owner/repo` the workflow (pipeline) runs in; a review app's marker names it. */
  repository?: string
  /** The commit the workflow (pipeline) runs for. */
  sha?: string
  /** The branch the pull request brings, and its newest commit. */
  headRef?: string
  headSha?: string
  /** `owner/repo` the pull request's branch lives in, and the one it targets. */
  headRepository?: string
  baseRepository?: string
}

/**
 * The pull request of the event the workflow runs for, read from the event payload the runner
 * writes (GITHUB_EVENT_PATH); GITHUB_HEAD_REF gives the branch when there is no payload, and
 * GITHUB_REPOSITORY the repository.
 */
export function pullRequestEvent(env: NodeJS.ProcessEnv = process.env): PullRequestEvent {
  let payload: unknown
  try {
    payload = env.GITHUB_EVENT_PATH ? JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, 'utf8')) : {}
  } catch {
    payload = {}
  }
  const pull = (payload as { pull_request?: Record<string, unknown> } | null)?.pull_request
  type Side = { ref?: unknown; sha?: unknown; repo?: { full_name?: unknown } }
  const side = (name: 'head' | 'base'): Side => (pull?.[name] as Side | undefined) ?? {}
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' && value !== '' ? value : undefined
  return {
    repository: text(env.GITHUB_REPOSITORY),
    sha: text(env.GITHUB_SHA),
    headRef: text(side('head').ref) ?? text(env.GITHUB_HEAD_REF),
    headSha: text(side('head').sha),
    headRepository: text(side('head').repo?.full_name),
    baseRepository: text(side('base').repo?.full_name)
  }
}

/** A pull request from a fork: its branch is not in the repository Coolify builds from. */
export function isFromFork(event: PullRequestEvent): boolean {
  return (
    event.headRepository !== undefined &&
    event.baseRepository !== undefined &&
    event.headRepository.toLowerCase() !== event.baseRepository.toLowerCase()
  )
}
