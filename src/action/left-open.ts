import { host } from '../host.js'

const KEY = 'github'

/** What the post step finishes on GitHub's side when the main step could not. */
export interface OpenOnGitHub {
  /** The GitHub deployment created, until it has a final status. */
  deployment?: number
  /** The pull request comment, from its first write until it shows the outcome; `id` once known. */
  comment?: { marker: string; id?: number }
}

/**
 * The GitHub deployment and pull request comment this run opened and has not finished, saved after
 * every change: a main step killed outright (Forgejo and Gitea give no grace), or whose grace ran
 * out before GitHub answered, leaves them for the post step, which says there that the run stopped.
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
  if (Number.isSafeInteger(deployment)) open.deployment = deployment as number
  const { marker, id } = (comment ?? {}) as Record<string, unknown>
  if (typeof marker === 'string') {
    open.comment = { marker, ...(Number.isSafeInteger(id) ? { id: id as number } : {}) }
  }
  return open
}
