/** Pull request previews: the address Coolify gives them, and deleting one. */
import type { Ctx } from './context.js'
import { newUuid } from './format.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'
import type { AppRecord } from './state.js'

export interface PreviewRecord {
  pr: number
  fqdn: string | null
  /** dockerimage apps: the tag `docker_tag` deployed for this pull request. */
  docker_registry_image_tag: string | null
}

/**
 * Coolify's generate_preview_fqdn(): only the app's first domain counts; its scheme, explicit port
 * and path stay, the template ({{random}}, {{domain}}, {{pr_id}}) replaces the host. No domain, no
 * preview address.
 */
export function previewFqdn(fqdn: string, template: string, pr: number): string | null {
  const first = fqdn.split(',')[0].trim()
  let url: URL
  try {
    url = new URL(first)
  } catch {
    return null
  }
  const host = template
    .replaceAll('{{random}}', newUuid())
    .replaceAll('{{domain}}', url.hostname)
    .replaceAll('{{pr_id}}', String(pr))
  const port = url.port ? `:${url.port}` : ''
  const path = url.pathname === '/' ? '' : url.pathname
  return `${url.protocol}//${host}${port}${path}`
}

export function newPreview(app: AppRecord, pr: number, tag: string | null): PreviewRecord {
  return {
    pr,
    fqdn: previewFqdn(app.fqdn, app.preview_url_template, pr),
    docker_registry_image_tag: tag
  }
}

/**
 * Coolify's upsertDockerImagePreview(): `docker_tag` creates a dockerimage app's preview on the fly
 * or changes its tag; without one only an existing preview counts.
 */
export function dockerImagePreview(
  app: AppRecord,
  pr: number,
  tag: string | null
): PreviewRecord | undefined {
  let preview = app.previews.find(p => p.pr === pr)
  if (!preview && tag === null) return undefined
  if (!preview) {
    preview = newPreview(app, pr, tag)
    app.previews.push(preview)
  } else if (tag !== null) {
    preview.docker_registry_image_tag = tag
  }
  return preview
}

export function deletePreview(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  const raw = ctx.params[1]
  const pr = Math.trunc(Number(raw))
  if (raw.trim() === '' || !Number.isFinite(Number(raw)) || pr <= 0) {
    return json(ctx.flavor, 422, { message: 'Invalid pull_request_id.' })
  }
  const index = app.previews.findIndex(p => p.pr === pr)
  if (index === -1) return json(ctx.flavor, 404, { message: 'Preview not found.' })
  app.previews.splice(index, 1)
  for (const d of ctx.store.deployments) {
    if (d.app === app && d.pr === pr) {
      ctx.store.cancel(d, ctx.now, 'Deployment cancelled: Pull request closed.')
    }
  }
  return json(ctx.flavor, 200, { message: 'Preview deletion request queued.' })
}
