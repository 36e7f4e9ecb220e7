/** An application's Coolify tags (4.2.0+): list them, take one off. */
import type { Ctx } from './context.js'
import { laravelDate } from './format.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'
import type { TagRecord } from './state.js'

function tagView(tag: TagRecord): Record<string, unknown> {
  const date = laravelDate(tag.createdAt)
  return { uuid: tag.uuid, name: tag.name, created_at: date, updated_at: date }
}

/** GET /applications/{uuid}/tags. */
export function listTags(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  return json(
    ctx.flavor,
    200,
    app.tags.map(name => tagView(ctx.store.tag(name, ctx.now)))
  )
}

/**
 * DELETE /applications/{uuid}/tags/{tag_uuid}: detaches the tag from this application only, so a
 * tag deploy no longer reaches it; a tag no resource carries any more is deleted.
 */
export function removeTag(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  const tag = [...ctx.store.tags.values()].find(t => t.uuid === ctx.params[1])
  if (!tag) return json(ctx.flavor, 404, { message: 'Tag not found.' })
  if (!app.tags.includes(tag.name)) {
    return json(ctx.flavor, 404, { message: 'Tag not found on resource.' })
  }
  app.tags = app.tags.filter(name => name !== tag.name)
  const orphaned = [...ctx.store.apps.values()].every(r => !r.tags.includes(tag.name))
  if (orphaned) ctx.store.tags.delete(tag.name)
  return json(ctx.flavor, 200, { message: 'Tag removed.' })
}
