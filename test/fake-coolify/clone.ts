/** Cloning an application and the destinations it can go to (Coolify 4.3.0+). */
import { attribute, jsonBody, validationFailed } from './context.js'
import type { Ctx } from './context.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'

export const CLONE_ALLOWED: readonly string[] = ['destination_uuid', 'name', 'clone_volumes']

/** GET /applications/{uuid}/destinations: the primary destination first, then the others. */
export function listDestinations(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  return json(
    ctx.flavor,
    200,
    app.destinations.map((uuid, index) => {
      const d = ctx.store.destinations.get(uuid)!
      return {
        uuid: d.uuid,
        name: d.name,
        network: d.network,
        server_uuid: d.serverUuid,
        server_id: d.serverId,
        is_primary: index === 0
      }
    })
  )
}

/**
 * GET /servers/{uuid}/destinations (DestinationsController::index_by_server): the server's
 * destinations; 404 for a server the team does not have (here: one no destination names).
 */
export function listServerDestinations(ctx: Ctx): Reply {
  const server = ctx.params[0]
  const list = [...ctx.store.destinations.values()].filter(d => d.serverUuid === server)
  if (list.length === 0) return json(ctx.flavor, 404, { message: 'Not found.' })
  return json(
    ctx.flavor,
    200,
    list.map(d => ({
      uuid: d.uuid,
      name: d.name,
      network: d.network,
      type: 'standalone',
      server_uuid: d.serverUuid
    }))
  )
}

/** The body's errors as Coolify's validator words them; the body is checked before the app. */
function cloneErrors(data: Record<string, unknown>): Record<string, string[]> {
  const errors: Record<string, string[]> = {}
  const add = (field: string, message: string): void => {
    ;(errors[field] ??= []).push(message)
  }
  const destination = data.destination_uuid
  if (
    destination === undefined ||
    destination === null ||
    (typeof destination === 'string' && destination.trim() === '')
  ) {
    add('destination_uuid', 'This field is required.')
  } else if (typeof destination !== 'string') {
    add('destination_uuid', 'The destination uuid field must be a string.')
  }
  const name = data.name
  if (name !== undefined && name !== null) {
    if (typeof name !== 'string') add('name', 'The name field must be a string.')
    else if (name.length > 255)
      add('name', 'The name field must not be greater than 255 characters.')
  }
  const volumes = data.clone_volumes
  if (volumes !== undefined && ![true, false, 0, 1, '0', '1'].includes(volumes as never)) {
    add('clone_volumes', `The ${attribute('clone_volumes')} field must be true or false.`)
  }
  for (const field of Object.keys(data)) {
    if (!CLONE_ALLOWED.includes(field)) add(field, 'This field is not allowed.')
  }
  return errors
}

/**
 * POST /applications/{uuid}/clone {destination_uuid, name?, clone_volumes?}: 201 with the new
 * app's uuid. The clone is not deployed; see Store.clone for what it copies.
 */
export function cloneApplication(ctx: Ctx): Reply {
  const body = jsonBody(ctx)
  if ('error' in body) return body.error
  const data = body.data
  const errors = cloneErrors(data)
  if (Object.keys(errors).length > 0) return validationFailed(ctx, errors)
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  const destination = String(data.destination_uuid)
  if (!ctx.store.destinations.has(destination)) {
    return json(ctx.flavor, 404, { message: 'Destination not found.' })
  }
  // An empty name counts as none: Laravel turns '' into null.
  const name = typeof data.name === 'string' && data.name.trim() !== '' ? data.name : undefined
  const clone = ctx.store.clone(app, destination, name, ctx.now)
  return json(ctx.flavor, 201, { uuid: clone.uuid, message: 'Application cloned.' })
}

/**
 * GET /destinations (DestinationsController::index, routes/api.php 178; DestinationsController.php
 * 79-92, transform() 17-28): every destination on the team's servers, with its server's uuid.
 */
export function listTeamDestinations(ctx: Ctx): Reply {
  return json(
    ctx.flavor,
    200,
    [...ctx.store.destinations.values()].map(d => ({
      uuid: d.uuid,
      name: d.name,
      network: d.network,
      type: 'standalone',
      server_uuid: d.serverUuid
    }))
  )
}
