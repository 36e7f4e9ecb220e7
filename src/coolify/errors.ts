import { ActionError } from '../errors.js'
import { ProxyFailure, type ProxyRefusal } from '../transport/errors.js'

export interface FailureDetails {
  /** HTTP status, when an answer came back. */
  status?: number
  /** Coolify's own `message`, when the answer was Coolify's JSON. */
  serverMessage?: string
  /** Worth trying again: the next attempt may well succeed. */
  transient: boolean
  /** No answer came back at all, so the server may or may not have acted on the request. */
  unanswered?: boolean
  /** The request never left: no connection was made, so the server cannot have acted on it. */
  unsent?: boolean
  /** From `Retry-After`: no request before this many milliseconds. */
  retryAfterMs?: number
  /** The caller's time ran out before the first answer: nothing else went wrong. */
  cutOff?: boolean
  /** Something answered, but not as Coolify's API does (a web page where JSON was expected). */
  notCoolify?: boolean
}

/**
 * A request to Coolify that failed. `message` is one line: the request, what came back, and what to
 * do about it. Response bodies are never part of it; only Coolify's short `message` field is.
 */
export class CoolifyError extends ActionError {
  override name = 'CoolifyError'
  constructor(
    readonly request: string,
    readonly reason: string,
    readonly hint: string,
    readonly details: FailureDetails
  ) {
    super(`${request}: ${reason}${hint ? `. ${hint}` : ''}`)
  }

  get status(): number | undefined {
    return this.details.status
  }

  /** The same failure, saying how often it was tried when that was more than once. */
  afterAttempts(attempts: number): CoolifyError {
    if (attempts < 2) return this
    return new CoolifyError(
      this.request,
      `${this.reason} (${attempts} attempts)`,
      this.hint,
      this.details
    )
  }

  /** The same failure with a hint that knows the context (which uuid, which input). */
  withHint(hint: string): CoolifyError {
    return new CoolifyError(this.request, this.reason, hint, this.details)
  }
}

/**
 * Coolify's catch-all answer for a path it has no route for. A 404 about the application ("Application
 * not found.") is a real failure, and so is a bare 404 from something that is not Coolify.
 */
export function isMissingRoute(error: unknown): boolean {
  return (
    error instanceof CoolifyError &&
    error.status === 404 &&
    /^not found\.?$/i.test(error.details.serverMessage ?? '')
  )
}

/** Coolify's 403 for a token without the route's ability (app/Http/Middleware/ApiAbility.php). */
export function isMissingAbility(error: unknown): error is CoolifyError {
  return (
    error instanceof CoolifyError &&
    error.status === 403 &&
    /^missing required permissions/i.test(error.details.serverMessage ?? '')
  )
}

/** A 404 about the thing asked for (it is not there, or no longer), not about a missing route. */
export function isGone(error: unknown): boolean {
  return error instanceof CoolifyError && error.status === 404 && !isMissingRoute(error)
}

/** Sanctum answers an expired token as an unknown one: the hint names both. */
const TOKEN_HINT =
  'Check that the `token` secret holds an API token of this instance that has not expired (Keys & Tokens in Coolify shows when each one expires); if it has, create a new one and store it there'
const ABILITIES =
  'deploy and read, plus read:sensitive to see build logs (and write for `git-branch`, `domains`, `env`, `image-tag`, `commit`, `delete-preview`, `review-app` and `rollback-on-failure`)'
/** Coolify's team members are read-only through the API: anything more takes an admin or owner. */
const ROLE_HINT =
  "A team member's token may only read; deploying, changing settings and reading build logs take a token of an admin or owner: raise the user's role (Team, Members in Coolify) or create the token as an admin or owner"
/** What answers nothing can read come from: a proxy in front of Coolify that rewrites them. */
export const UNREADABLE_HINT =
  'A proxy in front of Coolify changes its answers: let the API through as Coolify sends it (gzip or plain, no other encoding, no added headers)'
const URL_HINT =
  "Check `coolify-url`: the instance's address, like https://coolify.example.com, with or without /api/v1"

/** Why a deployment read carries no `logs` at all: for the watcher to tell the user once. */
export const LOGS_HIDDEN_HINT =
  'Build logs are hidden from this token: Coolify shows them only to a token with the `read:sensitive` ability (or `root`) whose user is an admin or owner of its team.'

/**
 * Coolify's full deployment queue: a 429 like rate limiting, but told by its message. It is not
 * transient for the request: the resources before the full one were queued, so sending it again
 * would deploy them twice.
 */
export function isQueueFull(
  status: number | undefined,
  serverMessage: string | undefined
): boolean {
  return status === 429 && /deployment queue is full/i.test(serverMessage ?? '')
}

/** Turns an HTTP answer that is not a success into the reason and the next step for the user. */
export function describeHttpFailure(
  status: number,
  serverMessage: string | undefined,
  headers: Record<string, string | undefined>,
  /** The address asked for: a redirect to the same host on https says to use https. */
  requested?: URL
): { reason: string; hint: string; transient: boolean } {
  const said = serverMessage ? `${status} "${serverMessage}"` : `${status}`
  const answered = `Coolify answered ${said}`
  if (headers['cf-mitigated']) {
    return {
      reason: `Cloudflare stopped the request with a challenge (cf-mitigated: ${headers['cf-mitigated']})`,
      hint: 'Let the runner through: a WAF skip rule for the API, or a Cloudflare Access service token in `headers`',
      transient: false
    }
  }
  const secure = status >= 300 && status < 400 ? httpsOf(requested, headers.location) : undefined
  if (secure) {
    return {
      reason: `got a ${status} redirect to ${secure}: Coolify's proxy serves it on https only`,
      hint: `Use https:// in \`coolify-url\`: ${secure}`,
      transient: false
    }
  }
  if (status >= 300 && status < 400) {
    const location = hostOf(headers.location)
    return {
      reason: `got a ${status} redirect${location ? ` to ${location}` : ''} instead of Coolify's API`,
      hint: 'This looks like Cloudflare Access or a login page in front of Coolify: pass its service token with the `headers` input (CF-Access-Client-Id and CF-Access-Client-Secret), or check `coolify-url`',
      transient: false
    }
  }
  if (status === 401 && /invalid token/i.test(serverMessage ?? '')) {
    // Coolify's api.token.team middleware: Sanctum knew the token, but its user is no longer in
    // the team it was made for (or it names no team).
    return {
      reason: `${answered}: the token's user is no longer in the team the token was made for`,
      hint: 'Create a new API token in Coolify (Keys & Tokens) as an admin or owner of the team that owns the resources, and store it in the `token` secret',
      transient: false
    }
  }
  if (status === 401) {
    // Sanctum finds no token, or one past its expiry: both are "Unauthenticated.".
    return {
      reason: `${answered}: the token was refused: it has expired, was deleted, or is not one of this instance's`,
      hint: TOKEN_HINT,
      transient: false
    }
  }
  if (status === 400 && /invalid token/i.test(serverMessage ?? '')) {
    return { reason: `${answered}: the token was refused`, hint: TOKEN_HINT, transient: false }
  }
  if (status === 403) {
    const missing = /missing required permissions?:\s*([\w:, -]+)/i
      .exec(serverMessage ?? '')?.[1]
      ?.trim()
    if (missing) {
      return {
        reason: `${answered}`,
        hint: `The token lacks the \`${missing}\` ability: create a token with ${ABILITIES}`,
        transient: false
      }
    }
    if (/missing required team role/i.test(serverMessage ?? '')) {
      return {
        reason: `${answered}: the token's user is only a member of its team`,
        hint: ROLE_HINT,
        transient: false
      }
    }
    const exceeding = /permissions \(([^)]*)\) that exceed your current role/i.exec(
      serverMessage ?? ''
    )?.[1]
    if (exceeding !== undefined) {
      return {
        reason: `Coolify answered ${status}: the token's abilities (${exceeding}) exceed its user's role in the team`,
        hint: ROLE_HINT,
        transient: false
      }
    }
    if (/api is disabled/i.test(serverMessage ?? '')) {
      return {
        reason: answered,
        hint: "The instance's API is turned off: enable API access in Coolify's settings",
        transient: false
      }
    }
    if (/not allowed to access the api/i.test(serverMessage ?? '')) {
      return {
        reason: answered,
        hint: "This runner's IP address is not on Coolify's API allow-list. GitHub-hosted runners change address: widen the allow-list in Coolify's settings or use a self-hosted runner",
        transient: false
      }
    }
    return {
      reason: answered,
      hint: `The token may not reach this resource: tokens belong to one team and need ${ABILITIES}`,
      transient: false
    }
  }
  if (status === 404 && serverMessage === undefined) {
    // Coolify's own 404s always carry a message; a bare one comes from something else.
    return {
      reason: `got a bare ${status} without Coolify's JSON message: something other than Coolify's API answered`,
      hint: URL_HINT,
      transient: false
    }
  }
  if (status === 405) {
    return {
      reason: answered,
      hint: 'Coolify refused the method: check that `coolify-url` points at a Coolify 4 instance',
      transient: false
    }
  }
  if (isQueueFull(status, serverMessage)) {
    return {
      reason: answered,
      hint: "The server's deployment queue is full; wait for deployments to finish, or raise its queue limit in Coolify",
      transient: false
    }
  }
  if (status === 429) {
    return {
      reason: `${answered}: too many requests`,
      hint: "Coolify's rate limit is shared by all of a user's tokens; raise it or deploy less often",
      transient: true
    }
  }
  if (status >= 500) {
    return {
      reason: answered,
      hint: 'Coolify or a proxy in front of it failed; try again later',
      transient: true
    }
  }
  return { reason: answered, hint: '', transient: false }
}

/** The https origin `location` names, when it is `requested`'s own host asked for over http. */
function httpsOf(requested: URL | undefined, location: string | undefined): string | undefined {
  if (requested?.protocol !== 'http:' || !location) return undefined
  try {
    const target = new URL(location, requested)
    const same = target.protocol === 'https:' && target.hostname === requested.hostname
    return same ? target.origin : undefined
  } catch {
    return undefined
  }
}

/** Just the host of a redirect target: enough to recognise a login page, nothing of its query. */
function hostOf(location: string | undefined): string | undefined {
  if (!location) return undefined
  try {
    return new URL(location).host
  } catch {
    return undefined
  }
}

/** Failures before a connection was made. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH'
])

/**
 * The request was refused before it left: a value HTTP cannot carry (a control character in a
 * header) or a programming error. Nothing was sent, and sending it again fails the same way.
 */
const ARGUMENT_CODES = new Set([
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_ARG_VALUE',
  'ERR_INVALID_CHAR',
  'ERR_INVALID_HTTP_TOKEN',
  'ERR_INVALID_URL',
  // undici's word for the same, before anything leaves.
  'UND_ERR_INVALID_ARG'
])

const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID'
])

/** How a connection fails before it reaches anyone: through a proxy, it is the proxy not reached. */
const PROXY_UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH'
])

/** Turns a failure to get any answer into the reason and next step. */
export function describeNetworkFailure(
  error: unknown,
  host: string,
  /** The proxy in between (`host:port`), when there is one: it fails in ways of its own. */
  proxy?: string
): { reason: string; hint: string; transient: boolean; unsent: boolean } {
  const code = errorCode(error)
  if (proxy) {
    const failure = describeProxyFailure(error, code, host, proxy)
    if (failure) return failure
  }
  if (code === 'BROKEN_BODY') {
    // Like an answer cut short: asked for again.
    return { reason: (error as Error).message, hint: '', transient: true, unsent: false }
  }
  if (code === 'UNREADABLE_ANSWER') {
    return {
      reason: `the answer cannot be read: ${(error as Error).message}`,
      hint: UNREADABLE_HINT,
      transient: false,
      unsent: false
    }
  }
  if (ARGUMENT_CODES.has(code)) {
    return {
      reason: `the request was not sent: it holds a value HTTP cannot carry (${code})`,
      hint: 'Look for a stray line break or control character in `token`, `headers` and the other inputs',
      transient: false,
      unsent: true
    }
  }
  const unsent = CONNECT_CODES.has(code) || CERTIFICATE_CODES.has(code)
  if (CERTIFICATE_CODES.has(code)) {
    return {
      reason: `the TLS certificate of ${host} is not trusted (${code})`,
      hint: 'If the instance uses a private CA, give its certificate with the `ca-certificate` input',
      transient: false,
      unsent
    }
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return {
      reason: `could not resolve ${host} (${code})`,
      hint: 'Check `coolify-url`',
      transient: true,
      unsent
    }
  }
  if (code === 'ECONNREFUSED') {
    return {
      reason: `${host} refused the connection`,
      hint: 'Check `coolify-url` and that Coolify is up and reachable from this machine',
      transient: true,
      unsent
    }
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number/i.test(messageOf(error))) {
    return {
      reason: `${host} speaks plain HTTP, not TLS: https:// can never connect to it (${code || 'EPROTO'})`,
      hint: 'Use http:// in `coolify-url`, or the port that serves https (Coolify behind its proxy: 443)',
      transient: true,
      unsent: true
    }
  }
  if (/^ERR_SSL_|^EPROTO$/.test(code)) {
    return {
      reason: `the TLS handshake with ${host} failed (${code})`,
      hint: 'Check `coolify-url`: its port must serve https',
      transient: true,
      unsent: true
    }
  }
  if (/TIMEOUT/.test(code)) {
    return { reason: `${host} did not answer in time (${code})`, hint: '', transient: true, unsent }
  }
  return {
    reason: `the connection to ${host} failed (${code || 'no answer'})`,
    hint: '',
    transient: true,
    unsent
  }
}

/**
 * What the proxy did, when it is the proxy that failed: it could not be reached, or it answered
 * the tunnel with something else than 200 (407: it wants credentials; 5xx: it could not reach
 * Coolify). Undefined when the failure lies past the proxy.
 */
function describeProxyFailure(
  error: unknown,
  code: string,
  host: string,
  proxy: string
): { reason: string; hint: string; transient: boolean; unsent: boolean } | undefined {
  const hint = 'Check HTTPS_PROXY (or HTTP_PROXY) and NO_PROXY on the runner'
  if (error instanceof ProxyFailure && CERTIFICATE_CODES.has(code)) {
    return {
      reason: `the TLS certificate of the proxy ${proxy} is not trusted (${code})`,
      hint: "`ca-certificate` is for Coolify's certificate, not the proxy's: give the proxy's CA to Node on the runner with NODE_EXTRA_CA_CERTS (the path of a PEM file)",
      transient: false,
      unsent: true
    }
  }
  if (error instanceof ProxyFailure && /TIMEOUT/.test(code)) {
    return {
      reason: `the proxy ${proxy} did not answer in time (${code})`,
      hint,
      transient: true,
      unsent: true
    }
  }
  if (PROXY_UNREACHABLE.has(code)) {
    return {
      reason: `could not reach the proxy ${proxy} (${code})`,
      hint,
      transient: true,
      unsent: true
    }
  }
  if (code !== 'PROXY_REFUSED') return undefined
  const status = (error as ProxyRefusal).status
  if (status === 407) {
    return {
      reason: `the proxy ${proxy} wants credentials (407 Proxy Authentication Required)`,
      hint: 'Put the proxy user and password in HTTPS_PROXY, like http://user:password@proxy:3128',
      transient: false,
      unsent: true
    }
  }
  return {
    reason: `the proxy ${proxy} answered ${status} instead of connecting to ${host}`,
    hint: status >= 500 ? '' : hint,
    transient: status >= 500,
    unsent: true
  }
}

function messageOf(error: unknown): string {
  const message = (error as { message?: unknown })?.message
  return typeof message === 'string' ? message : ''
}

function errorCode(error: unknown): string {
  let current: unknown = error
  for (let depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') return code
    current = (current as { cause?: unknown }).cause
  }
  return (error as { code?: string })?.code ?? ''
}
