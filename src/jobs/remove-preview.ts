import type { CoolifyClient } from '../coolify/client.js'
import type { PullRequestEvent } from '../config/event.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import { deleteReviewApp } from '../review-app/remove.js'
import { deletePreview } from '../rollout/preview.js'

/**
 * `delete-preview`: removes the pull request's preview of each application in Coolify (one already
 * gone counts as removed), or with `review-app` the pull request's review app. Nothing is deployed.
 */
export async function removePreview(
  client: CoolifyClient,
  config: Config,
  event: PullRequestEvent,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  const pr = config.pr!
  if (config.reviewApp) await deleteReviewApp(client, config, event, signal, say)
  for (const uuid of config.reviewApp ? [] : config.appUuids) {
    const deleted = await deletePreview(client, uuid, pr, signal)
    say.note(
      deleted
        ? `${uuid}: Coolify is removing the preview of pull request ${pr}`
        : `${uuid}: no preview of pull request ${pr} in Coolify (already removed)`
    )
  }
}
