import * as core from '@actions/core'
import type { CoolifyClient } from './coolify/client.js'
import { deletePreview } from './rollout/preview.js'
import { deleteReviewApp } from './rollout/review-app.js'
import type { Config } from './inputs.js'
import { deactivateEnvironment } from './report/github-deployment.js'
import { openPullRequestComment } from './report/pr-comment.js'

/**
 * `delete-preview`: removes the pull request's preview of each application in Coolify (one already
 * gone counts as removed), or with `review-app` the pull request's review app, marks the GitHub deployments of `environment` inactive and says so in
 * the pull request comment. Nothing is deployed.
 */
export async function removePreview(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal
): Promise<void> {
  const pr = config.pr!
  if (config.reviewApp) {
    await deleteReviewApp(client, config, signal, message => core.info(message))
  }
  for (const uuid of config.reviewApp ? [] : config.appUuids) {
    const deleted = await deletePreview(client, uuid, pr, signal)
    core.info(
      deleted
        ? `${uuid}: Coolify is removing the preview of pull request ${pr}`
        : `${uuid}: no preview of pull request ${pr} in Coolify (already removed)`
    )
  }
  await deactivateEnvironment(config, signal)
  const comment = await openPullRequestComment(config)
  await comment?.removed(signal)
}
