/**
 * Services and databases (4x): /deploy starts them without a deployment to follow, and Coolify
 * learns their containers' state later, in the background. Their status is computed from the
 * starts recorded on the resource, from the fake's clock (no timers).
 */
import type { Ctx } from './context.js'
import { columnDate, laravelDate } from './format.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'
import { lineCount } from './runtime.js'
import type { AppRecord, Store, SubRecord } from './state.js'
import type { ResourceStart } from './types.js'

/** Before the fake started, services and databases were last seen online this long ago. */
const SEEN_BEFORE_MS = 10 * 60_000
const COMMAND_MS = 1000
const STALE_MS = 1500
const UP: NonNullable<ResourceStart['states']> = [{ at: 0, status: 'running:healthy' }]

/** A status and the time Coolify last wrote it (last_online_at). */
interface Seen {
  status: string
  onlineAt: number
}

/** The start command runs only for services: a database's start job is not visible. */
function commandMs(resource: AppRecord, start: ResourceStart): number {
  return resource.kind === 'service' ? (start.commandMs ?? COMMAND_MS) : 0
}

/**
 * A database's state, or one sub-resource's of a service (`sub`), at `now`: the status before any
 * deploy, then what each start's states set once Coolify refreshed it. A start that is followed by
 * another before its refresh never shows.
 */
export function partState(
  store: Store,
  resource: AppRecord,
  sub: string | undefined,
  now: number
): Seen {
  let seen: Seen = { status: resource.status, onlineAt: store.bootedAt - SEEN_BEFORE_MS }
  resource.started.forEach(({ at, start }, i) => {
    if (at > now) return
    const until = Math.min(now, resource.started[i + 1]?.at ?? Infinity)
    const refresh = at + commandMs(resource, start) + (start.staleMs ?? STALE_MS)
    // Stable: entries at the same time keep their written order.
    const states = [...(start.states ?? UP)].sort((a, b) => a.at - b.at)
    for (const state of states) {
      const applied = refresh + state.at
      if (applied > until) break
      if (state.sub === undefined || state.sub === sub) {
        seen = { status: state.status, onlineAt: applied }
      }
    }
  })
  return seen
}

/**
 * Coolify's ContainerStatusAggregator::aggregateFromStrings() without restart counts, as a
 * service's status uses it: a restarting part makes the whole service degraded.
 */
export function aggregateStatuses(statuses: string[]): string {
  if (statuses.length === 0) return 'exited'
  let running = false
  let restarting = false
  let unhealthy = false
  let unknown = false
  let exited = false
  let starting = false
  let paused = false
  let dead = false
  let degraded = false
  // The first word that matches decides, in Coolify's order.
  for (const status of statuses) {
    if (status.includes('degraded')) {
      degraded = true
    } else if (status.includes('restarting')) {
      restarting = true
    } else if (status.includes('running')) {
      running = true
      unhealthy ||= status.includes('unhealthy')
      unknown ||= status.includes('unknown')
    } else if (status.includes('exited')) {
      exited = true
    } else if (status.includes('created') || status.includes('starting')) {
      starting = true
    } else if (status.includes('paused')) {
      paused = true
    } else if (status.includes('dead') || status.includes('removing')) {
      dead = true
    }
  }
  if (degraded || restarting || (running && exited)) return 'degraded:unhealthy'
  if (running && starting) return 'starting:unknown'
  if (running)
    return unhealthy ? 'running:unhealthy' : unknown ? 'running:unknown' : 'running:healthy'
  if (dead) return 'degraded:unhealthy'
  if (paused) return 'paused:unknown'
  if (starting) return 'starting:unknown'
  return 'exited'
}

/** Service::getStatusAttribute(): 'starting:unhealthy' while the start command runs. */
export function serviceStatus(store: Store, service: AppRecord, now: number): string {
  const last = service.started.filter(s => s.at <= now).pop()
  if (last && now < last.at + commandMs(service, last.start)) return 'starting:unhealthy'
  // No sub-resource counts towards the status: Coolify marks it as not monitored.
  if (service.subs.length === 0) return 'unknown:unknown:excluded'
  return aggregateStatuses(service.subs.map(sub => partState(store, service, sub.name, now).status))
}

/** The status a service or database shows now. */
export function resourceStatus(store: Store, resource: AppRecord, now: number): string {
  return resource.kind === 'service'
    ? serviceStatus(store, resource, now)
    : partState(store, resource, undefined, now).status
}

/**
 * Coolify's logs routes read a container only while Docker says it is `running`: not while it is
 * created (`starting:*`) or restarting.
 */
function runs(status: string): boolean {
  return status.startsWith('running')
}

/** Str::headline(), as Coolify names a service's parts for people. */
function headline(name: string): string {
  return name
    .split(/[-_\s]+/)
    .filter(word => word !== '')
    .map(word => word[0].toUpperCase() + word.slice(1))
    .join(' ')
}

function timestamps(ctx: Ctx): Record<string, string> {
  const created = laravelDate(ctx.store.bootedAt - 24 * 3600_000)
  return { created_at: created, updated_at: created }
}

function subDetail(ctx: Ctx, service: AppRecord, sub: SubRecord): Record<string, unknown> {
  const seen = partState(ctx.store, service, sub.name, ctx.now)
  return {
    uuid: sub.uuid,
    name: sub.name,
    human_name: headline(sub.name),
    description: null,
    ...(sub.kind === 'application' ? { fqdn: null } : {}),
    image: sub.kind === 'application' ? `acme/${sub.name}:latest` : 'postgres:16-alpine',
    status: seen.status,
    exclude_from_status: false,
    last_online_at: columnDate(seen.onlineAt),
    ...timestamps(ctx)
  }
}

/** A service with its parts; without id, as Coolify's API hides it. */
function serviceDetail(ctx: Ctx, service: AppRecord): Record<string, unknown> {
  const subs = (kind: SubRecord['kind']): Array<Record<string, unknown>> =>
    service.subs.filter(sub => sub.kind === kind).map(sub => subDetail(ctx, service, sub))
  return {
    uuid: service.uuid,
    name: service.name,
    description: null,
    status: serviceStatus(ctx.store, service, ctx.now),
    server_status: true,
    applications: subs('application'),
    databases: subs('database'),
    ...timestamps(ctx)
  }
}

function databaseDetail(ctx: Ctx, database: AppRecord): Record<string, unknown> {
  const seen = partState(ctx.store, database, undefined, ctx.now)
  return {
    uuid: database.uuid,
    name: database.name,
    description: null,
    database_type: 'standalone-postgresql',
    image: 'postgres:16-alpine',
    is_public: false,
    status: seen.status,
    last_online_at: columnDate(seen.onlineAt),
    server_status: true,
    ...timestamps(ctx)
  }
}

function ofKind(ctx: Ctx, kind: AppRecord['kind']): AppRecord[] {
  return [...ctx.store.apps.values()].filter(resource => resource.kind === kind)
}

function found(ctx: Ctx, kind: AppRecord['kind']): AppRecord | undefined {
  const resource = ctx.store.apps.get(ctx.params[0])
  return resource?.kind === kind ? resource : undefined
}

function lastLines(ctx: Ctx, log: string[]): Reply {
  return json(ctx.flavor, 200, { logs: log.slice(-lineCount(ctx.query.lines)).join('\n') })
}

/** In lists each resource carries its environment_id, a column of its row. */
export function listServices(ctx: Ctx): Reply {
  return json(
    ctx.flavor,
    200,
    ofKind(ctx, 'service').map(service => ({
      ...serviceDetail(ctx, service),
      environment_id: service.environmentId
    }))
  )
}

export function getService(ctx: Ctx): Reply {
  const service = found(ctx, 'service')
  if (!service) return json(ctx.flavor, 404, { message: 'Service not found.' })
  return json(ctx.flavor, 200, serviceDetail(ctx, service))
}

/** GET /services/{uuid}/logs?sub_service_name=NAME&lines=N: one part's container log. */
export function serviceLogs(ctx: Ctx): Reply {
  const name = ctx.query.sub_service_name
  if (!name) return json(ctx.flavor, 400, { message: 'Sub service name is required.' })
  const service = found(ctx, 'service')
  if (!service) return json(ctx.flavor, 404, { message: 'Service not found.' })
  if (!service.subs.some(sub => sub.name === name)) {
    return json(ctx.flavor, 404, { message: 'Container not found.' })
  }
  if (!runs(partState(ctx.store, service, name, ctx.now).status)) {
    return json(ctx.flavor, 400, { message: 'Container is not running.' })
  }
  return lastLines(ctx, service.subLogs[name] ?? [])
}

export function listDatabases(ctx: Ctx): Reply {
  return json(
    ctx.flavor,
    200,
    ofKind(ctx, 'database').map(database => ({
      ...databaseDetail(ctx, database),
      environment_id: database.environmentId
    }))
  )
}

export function getDatabase(ctx: Ctx): Reply {
  const database = found(ctx, 'database')
  if (!database) return json(ctx.flavor, 404, { message: 'Database not found.' })
  return json(ctx.flavor, 200, databaseDetail(ctx, database))
}

/** GET /databases/{uuid}/logs?lines=N: the container's log while it runs. */
export function databaseLogs(ctx: Ctx): Reply {
  const database = found(ctx, 'database')
  if (!database) return json(ctx.flavor, 404, { message: 'Database not found.' })
  if (!runs(partState(ctx.store, database, undefined, ctx.now).status)) {
    return json(ctx.flavor, 400, { message: 'Database is not running.' })
  }
  return lastLines(ctx, database.runtimeLogs)
}
