import { host } from '../host.js'
import type { GitHubState } from '../model/status.js'

const KEY = 'github'
const STATES: readonly GitHubState[] = ['success', 'failure', 'error']

/** A GitHub deployment's final status, as the main step writes it. */
export interface FinalStatus {
  state: GitHubState
  description: string
  log_url?: string
  environment_url?: string
}

/** What the post step finishes on GitHub's side when the main step could not. */
export interface OpenOnGitHub {
  /**
   * The GitHub deployment created, until it has a final status; `outcome`, that status, from when
   * the main step knows it.
   */
  deployment?: { id: number; outcome?: FinalStatus }
  /**
   * The pull request comment, from its first write until it shows the outcome; `id` once known;
   * `outcome`, the body that shows it, from when the main step knows it.
   */
  comment?: { marker: string; id?: number; outcome?: string }
}

/**
 * The GitHub deployment and pull request comment this run opened and has not finished, saved after
 * every change: a main step killed outright (Forgejo and Gitea give no grace), or whose grace ran
 * out before GitHub answered, leaves them for the post step. The outcome is saved before it is
 * written: the post step writes it if GitHub did not take it (a 502, the grace over), and says
 * that the run stopped only when the main step never knew it.
 */
export class LeftOpen {
  #open: OpenOnGitHub

  private constructor(open: OpenOnGitHub) {
    this.#open = open
  }

  /** Nothing open yet, for the main step. */
  static empty(): LeftOpen {
    return new LeftOpen({})
  }

  /** What the main step left open, for the post step; nothing when unreadable. */
  static load(): LeftOpen {
    return new LeftOpen(checked(host().getState(KEY)))
  }

  get open(): Readonly<OpenOnGitHub> {
    return this.#open
  }

  /** Merges `change` in (an undefined field is finished) and saves. */
  update(change: OpenOnGitHub): void {
    const merged: OpenOnGitHub = { ...this.#open, ...change }
    if (merged.deployment === undefined) delete merged.deployment
    if (merged.comment === undefined) delete merged.comment
    this.#open = merged
    host().saveState(KEY, Object.keys(merged).length ? JSON.stringify(merged) : '')
  }
}

function checked(text: string): OpenOnGitHub {
  let saved: unknown
  try {
    saved = text ? JSON.parse(text) : undefined
  } catch {
    return {}
  }
  if (!saved || typeof saved !== 'object') return {}
  const { deployment, comment } = saved as Record<string, unknown>
  const open: OpenOnGitHub = {}
  const { id: deploymentId, outcome: status } = (deployment ?? {}) as Record<string, unknown>
  if (Number.isSafeInteger(deploymentId)) {
    const outcome = finalStatus(status)
    open.deployment = { id: deploymentId as number, ...(outcome ? { outcome } : {}) }
  }
  const { marker, id, outcome } = (comment ?? {}) as Record<string, unknown>
  if (typeof marker === 'string') {
    open.comment = {
      marker,
      ...(Number.isSafeInteger(id) ? { id: id as number } : {}),
      ...(typeof outcome === 'string' ? { outcome } : {})
    }
  }
  return open
}

function finalStatus(saved: unknown): FinalStatus | undefined {
  const { state, description, log_url, environment_url } = (saved ?? {}) as Record<string, unknown>
  if (!STATES.includes(state as GitHubState) || typeof description !== 'string') {
    return undefined
  }
  return {
    state: state as GitHubState,
    description,
    ...(typeof log_url === 'string' ? { log_url } : {}),
    ...(typeof environment_url === 'string' ? { environment_url } : {})
  }
}
