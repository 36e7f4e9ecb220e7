/** Event payloads as the runner hands them to a step (the file GITHUB_EVENT_PATH names). */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface PullRequestEvent {
  number: number
  /** The head branch, `pull_request.head.ref`. */
  headRef: string
  headSha?: string
  /** The repository the head branch lives in; differs from `baseRepo` for a fork. */
  headRepo?: string
  /** The repository the workflow runs in (the runner's GITHUB_REPOSITORY). */
  baseRepo?: string
  /**
   * `pull_request_target` runs the base branch's workflow: GITHUB_REF and GITHUB_SHA are the base
   * branch's, the pull request's branch and commit are only in the payload.
   */
  name?: 'pull_request' | 'pull_request_target'
}

/** The base branch's newest commit in the payloads written here. */
export const BASE_SHA = '0123456789abcdef0123456789abcdef01234567'

/**
 * Writes a `pull_request` (or `pull_request_target`) event payload to a fresh file; returns the
 * variables a step sees for it.
 * GITHUB_HEAD_REF is left out on purpose: the head branch must come from the payload.
 */
export function pullRequestEventEnv(event: PullRequestEvent): Record<string, string> {
  const baseRepo = event.baseRepo ?? 'octo/app'
  const headRepo = event.headRepo ?? baseRepo
  const repo = (fullName: string) => ({
    full_name: fullName,
    name: fullName.split('/')[1],
    owner: { login: fullName.split('/')[0] },
    fork: fullName !== baseRepo
  })
  const payload = {
    action: 'synchronize',
    number: event.number,
    pull_request: {
      number: event.number,
      state: 'open',
      head: {
        ref: event.headRef,
        sha: event.headSha ?? 'fedcba9876543210fedcba9876543210fedcba98',
        repo: repo(headRepo)
      },
      base: { ref: 'main', sha: BASE_SHA, repo: repo(baseRepo) }
    },
    repository: repo(baseRepo)
  }
  const path = join(mkdtempSync(join(tmpdir(), 'pull-request-event-')), 'event.json')
  writeFileSync(path, JSON.stringify(payload))
  if (event.name === 'pull_request_target') {
    return {
      GITHUB_EVENT_PATH: path,
      GITHUB_EVENT_NAME: 'pull_request_target',
      GITHUB_REF: 'refs/heads/main',
      GITHUB_SHA: BASE_SHA,
      GITHUB_BASE_REF: 'main'
    }
  }
  return { GITHUB_EVENT_PATH: path, GITHUB_EVENT_NAME: 'pull_request' }
}
