/** Deleting review apps: the pull request's on close, and one this run made that must not stay. */
import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError, isGone } from '../coolify/errors.js'
import { describeError } from '../errors.js'
import type { PullRequestEvent } from '../config/event.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import { markersOf, reviewAppsIn } from './names.js'

/**
 * `delete-preview` with `review-app`: deletes the pull request's review app, if there is one,
 * found by its marker alone — renamed or deleted, the template is not read.
 */
export async function deleteReviewApp(
  client: CoolifyClient,
  config: Config,
  event: PullRequestEvent,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  const found = reviewAppsIn(
    await client.listApplications(signal),
    markersOf(config, event.repository)
  )
  if (found.length === 0) {
    say.note(`No review app of pull request ${config.pr} in Coolify (already deleted)`)
    return
  }
  for (const app of found) {
    await deleteApplication(client, app.uuid, signal)
    say.note(`Coolify is deleting review app ${app.name ?? app.uuid} (${app.uuid})`)
  }
}

/** Deletes an application this run made; on failure, what went wrong. */
export async function removeHalfMade(
  client: CoolifyClient,
  uuid: string,
  signal: AbortSignal,
  say: Say
): Promise<string | undefined> {
  try {
    await deleteApplication(client, uuid, signal)
    say.note(`Deleted review app ${uuid}, which this run made`)
    return undefined
  } catch (error) {
    return describeError(error)
  }
}

/** Deletes an application this run made, and says so when Coolify would not. */
export async function removeOrSay(
  client: CoolifyClient,
  uuid: string,
  signal: AbortSignal,
  say: Say,
  state: string
): Promise<void> {
  const failure = await removeHalfMade(client, uuid, signal, say)
  if (failure)
    say.note(`Could not delete review app ${uuid} (${failure}); ${state}: delete it in Coolify`)
}

/** One already gone counts as deleted. */
async function deleteApplication(
  client: CoolifyClient,
  uuid: string,
  signal: AbortSignal
): Promise<void> {
  try {
    await client.deleteApplication(uuid, signal)
  } catch (error) {
    if (isGone(error)) return
    throw needsWrite(error)
  }
}

/** Removed already, by a run that set the same app up at the same time: done. */
export function unlessGone(error: unknown): void {
  if (isGone(error)) return
  throw error
}

/** A 403 on making or deleting an application: the token lacks `write`. */
export function needsWrite(error: unknown): unknown {
  if (error instanceof CoolifyError && error.status === 403) {
    return error.withHint(
      'Review apps need a token with the `write` ability (to clone, set up and delete applications)'
    )
  }
  return error
}
