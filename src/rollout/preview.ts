/** Pull request previews on Coolify's side: what a deploy without one means, and removing one. */
import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError } from '../coolify/errors.js'

const NO_PREVIEW = /^Pull request \d+ not found for this resource/i

/**
 * Coolify's answer for a git application without a preview of the pull request, turned into what
 * to do about it; other messages are returned as they are.
 */
export function explainDeployMessage(message: string): string {
  if (!NO_PREVIEW.test(message)) return message
  return (
    `${message} Coolify creates a git application's preview itself, when its GitHub App or ` +
    'webhook reports the pull request: turn on Preview Deployments in the application’s ' +
    'settings (with a GitHub App as its source), open or push to the pull request, then deploy ' +
    'with `pr`. Docker-image applications get one from `pr` with `image-tag`.'
  )
}

/**
 * Removes the preview of pull request `pr`. True when Coolify removed it, false when it was already
 * gone; anything else throws.
 */
export async function deletePreview(
  client: CoolifyClient,
  appUuid: string,
  pr: number,
  signal: AbortSignal
): Promise<boolean> {
  try {
    await client.deletePreview(appUuid, pr, signal)
    return true
  } catch (error) {
    const gone =
      error instanceof CoolifyError &&
      error.status === 404 &&
      /preview not found/i.test(error.details.serverMessage ?? '')
    if (gone) return false
    throw error
  }
}
