/**
 * An error the user can act on: its message is one line that says what went wrong and what to do.
 * Anything else that reaches the top is a defect and is reported as such.
 */
export class ActionError extends Error {
  override name = 'ActionError'
}

/**
 * An input the run cannot take, found out only once Coolify was read (an image tag for an
 * application built from git): a bad input like any other, and nothing was changed for it.
 */
export class InputError extends ActionError {
  override name = 'InputError'
}

/** One line, never a stack: the last word on any failure. */
export function describeError(error: unknown): string {
  if (error instanceof ActionError) return error.message
  const text = error instanceof Error ? error.message : String(error)
  return `Unexpected error: ${text.split('\n')[0]}. Please report it with the step's log.`
}
