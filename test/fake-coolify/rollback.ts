/** Rollback (Coolify 4.3.0+): the images an app can go back to, and queueing a rollback. */
import { ROLLBACK_ALLOWED } from './allow-list.js'
import { jsonBody, validationFailed } from './context.js'
import type { Ctx } from './context.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'
import { QUEUE_FULL } from './state.js'

/** How `docker images` prints CreatedAt: 2024-05-01 10:00:00 +0000 UTC. */
function dockerDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' +0000 UTC')
}

/**
 * GET /applications/{uuid}/rollback-images: the images on the server, one per finished production
 * deployment (git apps tag theirs with the commit, dockerimage apps pull a tag), newest first;
 * `current` is what the running container was started from, when Coolify can find it.
 */
export function rollbackImages(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  const images: Array<{ tag: string; created_at: string; is_current: boolean }> = []
  for (const { d, p } of ctx.store.finished(app, ctx.now)) {
    const tag =
      app.build_pack === 'dockerimage'
        ? ctx.store.ranTag(d, p.startedAt ?? d.createdAt)
        : ctx.store.commit(d, ctx.now)
    if (images.some(image => image.tag === tag)) continue
    images.push({ tag, created_at: dockerDate(p.finishedAt ?? d.createdAt), is_current: false })
  }
  // ApplicationsController.php 5488-5490: `current` is what `docker inspect <uuid>` finds, and a
  // container is named by the bare uuid only with "consistent container name" on
  // (bootstrap/helpers/docker.php 345-359; off by default: `uuid-Hisu`). None for a digest
  // (currentRollbackImageTag). An image is current only when its tag is `current` (5508).
  const consistent = app.columns['settings.is_consistent_container_name_enabled'] === true
  const ran = images[0] && !images[0].tag.startsWith('sha256-') ? images[0].tag : null
  const current = consistent ? ran : null
  for (const image of images) image.is_current = image.tag === current
  return json(ctx.flavor, 200, { current, images })
}

/** Coolify's validateGitRef(), as the rollback reports it. */
function refError(commit: string): string | undefined {
  if (commit === '' || commit === 'HEAD') return undefined
  if (commit.startsWith('-')) return 'Invalid rollback commit: must not start with a hyphen.'
  if (!/^[a-zA-Z0-9][a-zA-Z0-9._\-/]*$/.test(commit)) {
    return (
      'Invalid rollback commit: contains disallowed characters. Only alphanumeric characters, ' +
      'dots, hyphens, underscores, and slashes are allowed.'
    )
  }
  return undefined
}

/**
 * POST /applications/{uuid}/rollback {"commit"}: queues a deployment of that commit, never "already
 * queued"; it follows the app's next scenario like any deployment.
 */
export function rollback(ctx: Ctx): Reply {
  const body = jsonBody(ctx)
  if ('error' in body) return body.error
  const data = body.data
  const errors: Record<string, string[]> = {}
  if (data.commit === undefined || data.commit === null || data.commit === '') {
    errors.commit = ['This field is required.']
  } else if (typeof data.commit !== 'string') {
    errors.commit = ['The commit field must be a string.']
  }
  for (const field of Object.keys(data)) {
    if (!ROLLBACK_ALLOWED.includes(field)) (errors[field] ??= []).push('This field is not allowed.')
  }
  if (Object.keys(errors).length > 0) return validationFailed(ctx, errors)

  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  const commit = String(data.commit).trim()
  const invalid = refError(commit)
  if (invalid) return validationFailed(ctx, { commit: [invalid] })
  const queued = ctx.store.queue(app, { rollback: commit }, ctx.now)
  // This route answers a full queue with 400, not 429.
  if (queued.kind === 'queue-full') return json(ctx.flavor, 400, { message: QUEUE_FULL })
  if (queued.kind === 'already-queued') {
    return json(ctx.flavor, 200, { message: 'Deployment already queued for this commit.' })
  }
  return json(ctx.flavor, 200, {
    message: 'Rollback deployment queued.',
    deployment_uuid: queued.deployment.uuid
  })
}
