/** What stands between a request and its handler: proxy login, rate limit, token, instance settings. */
import type { IncomingHttpHeaders } from 'node:http'
import { errorPage, html, json, redirect } from './reply.js'
import type { Reply } from './reply.js'
import type { FakeOptions, Flavor } from './types.js'

const WINDOW_MS = 60_000

/** Cloudflare Access sends anyone without its service-token headers to a login page. */
export function cloudflareAccess(
  required: Record<string, string>,
  headers: IncomingHttpHeaders,
  path: string
): Reply | undefined {
  const ok = Object.entries(required).every(
    ([name, value]) => headers[name.toLowerCase()] === value
  )
  if (ok) return undefined
  const login = 'https://fake-team.cloudflareaccess.com/cdn-cgi/access/login/127.0.0.1'
  const page = '<html><head><title>Sign in - Cloudflare Access</title></head><body></body></html>'
  return html(302, page, { Location: `${login}?redirect_url=${encodeURIComponent(path)}` })
}

export interface RateState {
  limit: number
  remaining: number
  /** Seconds until a request is allowed again, when over the limit. */
  retryAfter?: number
}

/**
 * Requests per token in Laravel's fixed window (`throttle:api`, `Limit::perMinute`): the first
 * request opens a one-minute window, every request in it counts against the limit, and the count
 * starts over with the first request after the window has expired.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { opened: number; hits: number }>()

  constructor(private readonly limit: number) {}

  hit(key: string, now: number): RateState {
    let window = this.windows.get(key)
    if (!window || now >= window.opened + WINDOW_MS) {
      window = { opened: now, hits: 0 }
      this.windows.set(key, window)
    }
    if (window.hits >= this.limit) {
      // A refused request does not count, as in Laravel's throttle.
      const retryAfter = Math.max(1, Math.ceil((window.opened + WINDOW_MS - now) / 1000))
      return { limit: this.limit, remaining: 0, retryAfter }
    }
    window.hits++
    return { limit: this.limit, remaining: this.limit - window.hits }
  }
}

export function tooManyAttempts(flavor: Flavor, rate: RateState, now: number): Reply {
  return json(
    flavor,
    429,
    { message: 'Too Many Attempts.' },
    {
      'Retry-After': String(rate.retryAfter),
      'X-RateLimit-Reset': String(Math.floor(now / 1000) + (rate.retryAfter ?? 0))
    }
  )
}

/** The bearer token, as Laravel reads it ('' when there is none). */
export function bearerToken(headers: IncomingHttpHeaders): string {
  const header = headers.authorization ?? ''
  const at = header.lastIndexOf('Bearer ')
  return at === -1
    ? ''
    : header
        .slice(at + 7)
        .split(',')[0]
        .trim()
}

/**
 * 'ok' for the configured token; 'no-team' for tokens starting with 'invalid' (Sanctum accepts
 * them, the controller then finds no team); a 401 reply otherwise.
 */
export function authenticate(
  flavor: Flavor,
  token: string,
  expected: string
): 'ok' | 'no-team' | Reply {
  if (token !== '' && sameToken(token, expected)) return 'ok'
  if (token.startsWith('invalid')) return 'no-team'
  return json(flavor, 401, { message: 'Unauthenticated.' })
}

/**
 * Sanctum's `PersonalAccessToken::findToken` (laravel/sanctum `src/PersonalAccessToken.php`, which
 * Coolify's `app/Models/PersonalAccessToken.php` extends without changing it): `ID|SECRET` is the
 * token with that id whose hash is the secret's; a token without `|` is looked up by its hash
 * alone, so the secret part by itself is taken too. The configured token is what Coolify showed.
 */
function sameToken(presented: string, expected: string): boolean {
  const [id, secret] = idAndSecret(expected)
  if (!presented.includes('|')) return presented === secret
  const [presentedId, presentedSecret] = idAndSecret(presented)
  return id !== undefined && presentedId === id && presentedSecret === secret
}

/** Split at the first `|`, as `explode('|', $token, 2)`. */
function idAndSecret(token: string): [string | undefined, string] {
  const bar = token.indexOf('|')
  return bar === -1 ? [undefined, token] : [token.slice(0, bar), token.slice(bar + 1)]
}

/** Abilities only a team's admins and owners may hold (members are read-only). */
const MEMBER_DISALLOWED = ['root', 'write', 'write:sensitive', 'deploy', 'read:sensitive']

/**
 * Coolify's api.token.team middleware: the token's owner must still be in the token's team, and a
 * mere member's token may not go beyond reading (4.2 checked root and the write abilities only).
 */
export function teamMembership(
  flavor: Flavor,
  options: Pick<FakeOptions, 'role' | 'tokenWithoutTeam' | 'version'>,
  abilities: string[]
): Reply | undefined {
  if (options.tokenWithoutTeam) return json(flavor, 401, { message: 'Invalid token.' })
  if (options.role !== 'member') return undefined
  const elevated =
    (options.version ?? '4.3') !== '4.3' ? ['root', 'write', 'write:sensitive'] : MEMBER_DISALLOWED
  if (abilities.some(ability => elevated.includes(ability))) {
    return json(flavor, 403, { message: 'Missing required team role.' })
  }
  return undefined
}

/** Coolify's api.ability middleware on a member's token, before it looks at the route's ability. */
export function memberAbilities(
  flavor: Flavor,
  role: FakeOptions['role'],
  abilities: string[]
): Reply | undefined {
  const beyond = abilities.filter(ability => MEMBER_DISALLOWED.includes(ability))
  if (role !== 'member' || beyond.length === 0) return undefined
  return json(flavor, 403, {
    message:
      `This API token has permissions (${beyond.join(', ')}) that exceed your current role as a ` +
      'team member. Members are restricted to read-only API access. Please revoke this token ' +
      'and create a new one with only read permissions.'
  })
}

export function invalidToken(flavor: Flavor): Reply {
  return json(flavor, 400, {
    message: 'Invalid token.',
    docs: 'https://coolify.io/docs/api-reference/authorization'
  })
}

/** Coolify's ApiAllowed middleware: `success: true` on a 403 is what Coolify sends. */
export function apiAllowed(
  flavor: Flavor,
  settings: { apiDisabled?: boolean; ipBlocked?: boolean }
): Reply | undefined {
  if (settings.apiDisabled) return json(flavor, 403, { success: true, message: 'API is disabled.' })
  if (settings.ipBlocked) {
    return json(flavor, 403, { success: true, message: 'You are not allowed to access the API.' })
  }
  return undefined
}

/** Laravel's expectsJson(): the first type in Accept is JSON. */
export function wantsJson(headers: IncomingHttpHeaders): boolean {
  const first = (headers.accept ?? '').split(',')[0]
  return first.includes('/json') || first.includes('+json')
}

/**
 * Laravel renders some errors for browsers unless the client asks for JSON: validation errors
 * redirect back, 429 and 500 become HTML pages. Rate-limit headers stay.
 */
export function forBrowser(reply: Reply, headers: IncomingHttpHeaders, home: string): Reply {
  const keep = Object.fromEntries(
    Object.entries(reply.headers).filter(([k]) => /^(x-ratelimit-|retry-after)/i.test(k))
  )
  let page: Reply
  if (reply.status === 422) page = redirect(headers.referer ?? home)
  else if (reply.status === 429) page = errorPage(429, 'Too Many Requests')
  else if (reply.status === 500) page = errorPage(500, 'Server Error')
  else return reply
  return { ...page, headers: { ...page.headers, ...keep } }
}
