/** An application's storages and scheduled tasks, as the 4.3 API lists them. */
import type { Ctx } from './context.js'
import { laravelDate } from './format.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'

/**
 * GET /applications/{uuid}/storages: {persistent_storages, file_storages}, each sorted by id; a
 * file's content only to whoever may read sensitive data.
 */
export function listStorages(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found' })
  const dates = { created_at: laravelDate(app.createdAt), updated_at: laravelDate(app.createdAt) }
  return json(ctx.flavor, 200, {
    persistent_storages: app.persistentStorages.map(v => ({
      id: v.id,
      uuid: v.uuid,
      name: v.name,
      mount_path: v.mount_path,
      host_path: v.host_path,
      container_id: null,
      resource_type: 'App\\Models\\Application',
      resource_id: app.id,
      is_preview_suffix_enabled: true,
      ...dates
    })),
    file_storages: app.fileStorages.map(f => ({
      id: f.id,
      uuid: f.uuid,
      fs_path: f.fs_path,
      mount_path: f.mount_path,
      ...(ctx.canReadSensitive ? { content: f.content } : {}),
      resource_type: 'App\\Models\\Application',
      resource_id: app.id,
      is_directory: false,
      chown: null,
      chmod: null,
      is_based_on_git: false,
      is_preview_suffix_enabled: true,
      is_binary: false,
      is_too_large: false,
      ...dates
    }))
  })
}

/** GET /applications/{uuid}/scheduled-tasks: a plain array, ids hidden. */
export function listScheduledTasks(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  return json(
    ctx.flavor,
    200,
    app.scheduledTasks.map(t => ({
      uuid: t.uuid,
      name: t.name,
      command: t.command,
      frequency: t.frequency,
      container: null,
      enabled: true,
      timeout: 300,
      created_at: laravelDate(t.createdAt),
      updated_at: laravelDate(t.createdAt)
    }))
  )
}

/** DELETE /applications/{uuid}/scheduled-tasks/{task_uuid}: only a task of that application. */
export function deleteScheduledTask(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  const index = app.scheduledTasks.findIndex(t => t.uuid === ctx.params[1])
  if (index === -1) return json(ctx.flavor, 404, { message: 'Scheduled task not found.' })
  app.scheduledTasks.splice(index, 1)
  return json(ctx.flavor, 200, { message: 'Scheduled task deleted.' })
}
