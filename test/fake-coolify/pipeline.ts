/** One request in, one reply out: the guards in Coolify's order, then the route's handler. */
import type { IncomingHttpHeaders } from 'node:http'
import { can } from './context.js'
import {
  RateLimiter,
  apiAllowed,
  authenticate,
  bearerToken,
  cloudflareAccess,
  forBrowser,
  invalidToken,
  memberAbilities,
  teamMembership,
  tooManyAttempts,
  wantsJson
} from './guards.js'
import type { RateState } from './guards.js'
import { html, json } from './reply.js'
import type { Reply } from './reply.js'
import { match, routes } from './routes.js'
import { APP_PREFIX, serveApp } from './runtime.js'
import type { Store } from './state.js'
import type { FakeOptions, Flavor } from './types.js'

export const API_PREFIX = '/api/v1'

export interface Request {
  method: string
  /** Full path, without query. */
  path: string
  query: Record<string, string>
  headers: IncomingHttpHeaders
  body: string
}

export type Handler = (request: Request, home: string) => Reply

export function createPipeline(options: FakeOptions, store: Store): Handler {
  const flavor: Flavor = options.flavor ?? '4x'
  const expected = options.token ?? 'test-token'
  const abilities = options.abilities ?? ['deploy', 'read', 'read:sensitive']
  const limiter = new RateLimiter(options.rateLimit ?? 200)
  const table = routes(flavor, options.version)
  // Only a team's admins and owners see sensitive data, whatever their token says.
  const canReadSensitive = can(abilities, 'read:sensitive') && options.role !== 'member'

  /** Everything after the proxy, in 4.x with the rate-limit headers Laravel adds. */
  function api(request: Request, path: string, now: number): Reply {
    const token = bearerToken(request.headers)
    let rate: RateState | undefined
    if (flavor === '4x') {
      rate = limiter.hit(token, now)
    }
    const reply =
      rate?.retryAfter !== undefined
        ? tooManyAttempts(flavor, rate, now)
        : route(request, path, token, now)
    if (!rate) return reply
    reply.headers['X-RateLimit-Limit'] = String(rate.limit)
    reply.headers['X-RateLimit-Remaining'] = String(rate.remaining)
    return reply
  }

  function route(request: Request, path: string, token: string, now: number): Reply {
    const found = match(table, request.method, path)
    // Coolify's catch-all route needs no token.
    if (!found) return json(flavor, 404, { message: 'Not found.', docs: 'https://coolify.io/docs' })
    const auth = authenticate(flavor, token, expected)
    if (typeof auth !== 'string') return auth
    const outsider = auth === 'ok' ? teamMembership(flavor, options, abilities) : undefined
    if (outsider) return outsider
    const blocked = apiAllowed(flavor, options) ?? memberAbilities(flavor, options.role, abilities)
    if (blocked) return blocked
    const { ability } = found.route
    if (ability && !can(abilities, ability)) {
      return json(flavor, 403, { message: `Missing required permissions: ${ability}` })
    }
    if (auth === 'no-team') return invalidToken(flavor)
    return found.route.handle({
      flavor,
      store,
      method: request.method,
      params: found.params,
      query: request.query,
      headers: request.headers,
      body: request.body,
      abilities,
      canReadSensitive,
      now
    })
  }

  return (request, home) => {
    // The deployed apps are reached directly, not through Coolify's proxy login.
    if (request.path.startsWith(APP_PREFIX)) return serveApp(store, request.path)
    const login = cloudflareAccess(options.requiredHeaders ?? {}, request.headers, request.path)
    if (login) return login
    if (request.path !== API_PREFIX && !request.path.startsWith(API_PREFIX + '/')) {
      // Outside the API Coolify serves its web UI.
      return html(
        404,
        '<!DOCTYPE html><html><head><title>Not Found</title></head><body>404 | Not Found</body></html>'
      )
    }
    const now = store.clock()
    const reply = api(request, request.path.slice(API_PREFIX.length) || '/', now)
    return flavor === '4x' && !wantsJson(request.headers)
      ? forBrowser(reply, request.headers, home)
      : reply
  }
}
