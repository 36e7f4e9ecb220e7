/** The deployed application itself: its container log, and its address on the fake's port. */
import type { Ctx } from './context.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'
import type { Store } from './state.js'

/** Where the fake serves each app: `{{self}}/_app/<uuid>` in FakeApp.fqdn. */
export const APP_PREFIX = '/_app/'

/** Coolify's normalizeLogLines(): a positive integer up to 10000, else 100. */
export function lineCount(raw: string | undefined): number {
  const n = raw !== undefined && /^[+-]?\d+$/.test(raw.trim()) ? Number(raw) : NaN
  return Number.isInteger(n) && n > 0 ? Math.min(n, 10_000) : 100
}

/** GET /applications/{uuid}/logs?lines=N: the container's last lines, while it runs. */
export function applicationLogs(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  if (!ctx.store.runtime(app, ctx.now).status.startsWith('running')) {
    return json(ctx.flavor, 400, { message: 'Application is not running.' })
  }
  const lines = app.runtimeLogs.slice(-lineCount(ctx.query.lines))
  return json(ctx.flavor, 200, { logs: lines.join('\n') })
}

/** A request for `/_app/<uuid>/…`: the app's current RuntimeState.http, as plain text. */
export function serveApp(store: Store, path: string): Reply {
  const app = store.apps.get(path.slice(APP_PREFIX.length).split('/')[0])
  const status = app ? store.runtime(app).http : 404
  return {
    status,
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
    body: app && status < 400 ? `${app.name} is up` : `${status}`
  }
}
