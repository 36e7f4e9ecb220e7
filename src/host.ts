/**
 * What differs between the places the deploy runs: GitHub's runner (and Forgejo's and Gitea's,
 * which run the action as it is), or a command line in any other CI. The core reads its options,
 * prints, masks and saves through the one host of the process, and imports nothing of GitHub's.
 */
export interface Host {
  /** An option by its action.yml input name, as given; '' when unset. */
  input(name: string): string
  info(message: string): void
  notice(message: string): void
  warning(message: string): void
  /** A failure, with a title where the host shows one (an annotation). */
  error(message: string, title?: string): void
  /** Shown only when the user asks for more (the runner's debug logging). */
  debug(message: string): void
  /** Hides a secret in everything printed from now on. */
  mask(value: string): void
  /** How build logs and other text from outside are printed. */
  readonly log: LogFormat
  /**
   * What stopped the run on SIGINT or SIGTERM, in the host's words and without a final period:
   * a cancelled workflow run on GitHub, a cancelled job or a signal elsewhere.
   */
  cancelled(signal: NodeJS.Signals): string
  /**
   * How long after SIGINT or SIGTERM the host lets the process run before it kills it, for the
   * cancels and the report; budget.ts's CANCEL_GRACE_MS, GitHub's runner's, when unset.
   */
  readonly cancelGraceMs?: number
  /** Sets one result for later steps or jobs. */
  setOutput(name: string, value: string): void
  /** Keeps a value for a later cleanup step; '' when none was kept. */
  saveState(key: string, value: string): void
  getState(key: string): string
}

/** Groups and verbatim text, in the host's own markup. */
export interface LogFormat {
  /** Writes text as it is: whole lines, ending in a line break. */
  write(text: string): void
  /** The line that opens a foldable group, and the one that closes it. */
  startGroup(title: string): string
  endGroup(): string
  /**
   * Lines written by someone else (a build, an application) as the host prints them without
   * acting on them: the runner must not take a build's `::error::` for its own command.
   */
  verbatim(lines: readonly string[]): string
  /** A name from Coolify made safe for a group title or a line prefix. */
  oneLine(text: string): string
}

/**
 * What the core says as it goes: made once from the host by the entry (`run.ts`) and handed
 * down, so that no module below prints on its own.
 */
export interface Say {
  note(message: string): void
  warn(message: string): void
  /** Shown only when the user asks for more. */
  debug(message: string): void
}

export function sayThrough(host: Host): Say {
  return {
    note: message => host.info(message),
    warn: message => host.warning(message),
    debug: message => host.debug(message)
  }
}

let current: Host | undefined

/** The host of this process: set once, by the entry point, before anything else runs. */
export function host(): Host {
  if (!current) throw new Error('No host: the entry point sets one before it runs the core.')
  return current
}

export function setHost(next: Host): void {
  current = next
}
