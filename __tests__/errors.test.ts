/** How failures are told: which are worth another attempt, and what the user should do next. */
import { describe, expect, it } from '@jest/globals'
import {
  CoolifyError,
  describeHttpFailure,
  describeNetworkFailure,
  LOGS_HIDDEN_HINT
} from '../src/coolify/errors.js'

const HOST = 'coolify.example.com'

describe('describeHttpFailure', () => {
  const http = (
    status: number,
    message?: string,
    headers: Record<string, string | undefined> = {}
  ): ReturnType<typeof describeHttpFailure> => describeHttpFailure(status, message, headers)

  it.each<{ status: number; message?: string; transient: boolean; hint: RegExp }>([
    { status: 401, message: 'Unauthenticated.', transient: false, hint: /`token` secret/ },
    { status: 400, message: 'Invalid token.', transient: false, hint: /`token` secret/ },
    {
      status: 403,
      message: 'Missing required permissions: deploy',
      transient: false,
      hint: /lacks the `deploy` ability.*deploy and read/
    },
    {
      status: 403,
      message: 'Missing required permissions: read',
      transient: false,
      hint: /lacks the `read` ability/
    },
    {
      status: 403,
      message: 'Missing required permission: read:sensitive',
      transient: false,
      hint: /lacks the `read:sensitive` ability/
    },
    { status: 403, message: 'API is disabled.', transient: false, hint: /enable API access/ },
    {
      status: 403,
      message: 'You are not allowed to access the API.',
      transient: false,
      hint: /allow-list/
    },
    { status: 403, message: 'Forbidden', transient: false, hint: /one team/ },
    { status: 403, message: undefined, transient: false, hint: /one team/ },
    {
      status: 405,
      message: 'This endpoint has changed to a POST request.',
      transient: false,
      hint: /Coolify 4/
    },
    { status: 429, message: 'Too Many Attempts.', transient: true, hint: /rate limit/ },
    { status: 500, message: 'Server Error', transient: true, hint: /try again later/ },
    { status: 502, message: undefined, transient: true, hint: /proxy/ },
    { status: 503, message: undefined, transient: true, hint: /try again later/ },
    { status: 504, message: undefined, transient: true, hint: /try again later/ }
  ])('$status, message $message → transient $transient, hint $hint', c => {
    const { reason, hint, transient } = http(c.status, c.message)
    expect(transient).toBe(c.transient)
    expect(hint).toMatch(c.hint)
    const said = c.message ? `${c.status} "${c.message}"` : `${c.status}`
    expect(reason.startsWith(`Coolify answered ${said}`)).toBe(true)
    expect(/token was refused(:|$)/.test(reason)).toBe(c.status === 401 || c.status === 400)
  })

  it('tells an expired token (401 "Unauthenticated.", as Sanctum answers it) to be replaced', () => {
    const { reason, hint, transient } = http(401, 'Unauthenticated.')
    expect(reason).toBe(
      `Coolify answered 401 "Unauthenticated.": the token was refused: it has expired, was deleted, or is not one of this instance's`
    )
    expect(hint).toMatch(/has not expired \(Keys & Tokens in Coolify shows when each one expires\)/)
    expect(hint).toMatch(/create a new one/)
    expect(transient).toBe(false)
  })

  it.each([
    { status: 400, message: 'You must provide uuid or tag.' },
    { status: 404, message: 'Application not found.' },
    { status: 404, message: 'Not found.' },
    { status: 404, message: '' },
    { status: 409, message: 'Conflict' },
    { status: 422, message: 'Validation failed.' }
  ])('$status, message $message: final, no hint', ({ status, message }) => {
    expect(http(status, message)).toEqual({
      reason: `Coolify answered ${message ? `${status} "${message}"` : status}`,
      hint: '',
      transient: false
    })
  })

  it('tells a token whose user left its team (401 "Invalid token.") to be replaced', () => {
    const { reason, hint, transient } = http(401, 'Invalid token.')
    expect(reason).toBe(
      `Coolify answered 401 "Invalid token.": the token's user is no longer in the team the token was made for`
    )
    expect(hint).toMatch(/^Create a new API token in Coolify.*as an admin or owner of the team/)
    expect(hint).toMatch(/`token` secret/)
    expect(transient).toBe(false)
  })

  it('tells a plain team member that deploying takes an admin or owner', () => {
    const { reason, hint, transient } = http(403, 'Missing required team role.')
    expect(reason).toBe(
      `Coolify answered 403 "Missing required team role.": the token's user is only a member of its team`
    )
    expect(hint).toMatch(/admin or owner/)
    expect(hint).toMatch(/raise the user's role/)
    expect(hint).not.toMatch(/lacks the/)
    expect(transient).toBe(false)
  })

  it("names the abilities that exceed the token's team role", () => {
    const message =
      'This API token has permissions (write, deploy) that exceed your current role as a team member. Members are restricted to read-only API access. Please revoke this token and create a new one with only read permissions.'
    const { reason, hint, transient } = http(403, message)
    expect(reason).toBe(
      "Coolify answered 403: the token's abilities (write, deploy) exceed its user's role in the team"
    )
    expect(hint).toMatch(/raise the user's role/)
    expect(hint).toMatch(/create the token as an admin or owner/)
    expect(transient).toBe(false)
  })

  it('sends a bare 404, with no message of Coolify, to `coolify-url`', () => {
    const { reason, hint, transient } = http(404, undefined)
    expect(reason).toBe(
      "got a bare 404 without Coolify's JSON message: something other than Coolify's API answered"
    )
    expect(hint).toMatch(/^Check `coolify-url`/)
    expect(transient).toBe(false)
  })

  it('names both reasons build logs can be hidden, in one sentence', () => {
    expect(LOGS_HIDDEN_HINT).toMatch(/`read:sensitive`/)
    expect(LOGS_HIDDEN_HINT).toMatch(/admin or owner/)
    expect(LOGS_HIDDEN_HINT.match(/\. |\n/g)).toBeNull()
  })

  it('tells a redirect by the host it points to, without its path or query', () => {
    const location = 'https://team.cloudflareaccess.com/cdn-cgi/access/login/x?redirect_url=%2Fapi'
    const { reason, hint, transient } = http(302, undefined, { location })
    expect(reason).toBe("got a 302 redirect to team.cloudflareaccess.com instead of Coolify's API")
    expect(hint).toMatch(/Cloudflare Access/)
    expect(hint).toMatch(/`headers`/)
    expect(hint).toMatch(/CF-Access-Client-Id/)
    expect(transient).toBe(false)
  })

  it.each([undefined, '/login', 'not a url'])('a redirect to %p names no host', location => {
    expect(http(301, undefined, { location }).reason).toBe(
      "got a 301 redirect instead of Coolify's API"
    )
  })

  it('tells a Cloudflare challenge whatever the status', () => {
    for (const status of [403, 503, 200]) {
      const { reason, hint, transient } = http(status, undefined, {
        'cf-mitigated': 'challenge'
      })
      expect(reason).toBe(
        'Cloudflare stopped the request with a challenge (cf-mitigated: challenge)'
      )
      expect(hint).toMatch(/WAF skip rule/)
      expect(hint).toMatch(/`headers`/)
      expect(transient).toBe(false)
    }
  })

  it('is not fooled by a 400 that only mentions a token', () => {
    expect(http(400, 'The token field is required.').hint).toBe('')
    expect(http(400, 'INVALID TOKEN').hint).toMatch(/`token`/)
  })
})

describe('describeNetworkFailure', () => {
  const failure = (code: string): Error & { code: string } =>
    Object.assign(new Error(`failed: ${code}`), { code })

  it.each([
    'SELF_SIGNED_CERT_IN_CHAIN',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'CERT_HAS_EXPIRED',
    'ERR_TLS_CERT_ALTNAME_INVALID'
  ])('%s: an untrusted certificate is final, and nothing was sent', code => {
    expect(describeNetworkFailure(failure(code), HOST)).toEqual({
      reason: `the TLS certificate of ${HOST} is not trusted (${code})`,
      hint: expect.stringContaining('`ca-certificate`'),
      transient: false,
      unsent: true
    })
  })

  it.each(['EHOSTUNREACH', 'ENETUNREACH', 'ECONNREFUSED'])(
    '%s through a proxy: the proxy is named as what could not be reached',
    code => {
      expect(describeNetworkFailure(failure(code), HOST, 'proxy.internal:3128')).toMatchObject({
        reason: `could not reach the proxy proxy.internal:3128 (${code})`,
        transient: true,
        unsent: true
      })
    }
  )

  it.each<{ code: string; reason: string; unsent: boolean }>([
    { code: 'ECONNREFUSED', reason: `${HOST} refused the connection`, unsent: true },
    { code: 'ENOTFOUND', reason: `could not resolve ${HOST} (ENOTFOUND)`, unsent: true },
    { code: 'EAI_AGAIN', reason: `could not resolve ${HOST} (EAI_AGAIN)`, unsent: true },
    {
      code: 'CONNECT_TIMEOUT',
      reason: `${HOST} did not answer in time (CONNECT_TIMEOUT)`,
      unsent: true
    },
    {
      code: 'EHOSTUNREACH',
      reason: `the connection to ${HOST} failed (EHOSTUNREACH)`,
      unsent: true
    },
    {
      code: 'HEADERS_TIMEOUT',
      reason: `${HOST} did not answer in time (HEADERS_TIMEOUT)`,
      unsent: false
    },
    {
      code: 'BODY_TIMEOUT',
      reason: `${HOST} did not answer in time (BODY_TIMEOUT)`,
      unsent: false
    },
    { code: 'ECONNRESET', reason: `the connection to ${HOST} failed (ECONNRESET)`, unsent: false },
    { code: 'EPIPE', reason: `the connection to ${HOST} failed (EPIPE)`, unsent: false }
  ])('$code: transient, unsent $unsent', ({ code, reason, unsent }) => {
    const described = describeNetworkFailure(failure(code), HOST)
    expect(described).toMatchObject({ reason, transient: true, unsent })
  })

  it.each(['ERR_INVALID_HTTP_TOKEN', 'ERR_INVALID_CHAR', 'ERR_INVALID_ARG_VALUE'])(
    '%s: a request HTTP cannot carry is final and unsent, and blames no connection',
    code => {
      const { reason, hint, transient, unsent } = describeNetworkFailure(failure(code), HOST)
      expect(reason).toBe(`the request was not sent: it holds a value HTTP cannot carry (${code})`)
      expect(reason).not.toMatch(/connection|answer/)
      expect(hint).toMatch(/control character/)
      expect(transient).toBe(false)
      expect(unsent).toBe(true)
    }
  )

  it('names `coolify-url` when the host is wrong or down', () => {
    expect(describeNetworkFailure(failure('ECONNREFUSED'), HOST).hint).toMatch(/`coolify-url`/)
    expect(describeNetworkFailure(failure('ENOTFOUND'), HOST).hint).toMatch(/`coolify-url`/)
  })

  it('looks through causes for the code that says what happened', () => {
    const certificate = new Error('request failed', {
      cause: failure('SELF_SIGNED_CERT_IN_CHAIN')
    })
    expect(describeNetworkFailure(certificate, HOST)).toMatchObject({
      transient: false,
      unsent: true,
      hint: expect.stringContaining('`ca-certificate`')
    })

    const deep = new Error('a', { cause: new Error('b', { cause: failure('ECONNRESET') }) })
    expect(describeNetworkFailure(deep, HOST)).toMatchObject({
      reason: `the connection to ${HOST} failed (ECONNRESET)`,
      transient: true,
      unsent: false
    })
  })

  it('names any other code, or none at all', () => {
    const socket = Object.assign(new Error('socket closed'), { code: 'ERR_SOCKET_CLOSED' })
    expect(describeNetworkFailure(socket, HOST)).toEqual({
      reason: `the connection to ${HOST} failed (ERR_SOCKET_CLOSED)`,
      hint: '',
      transient: true,
      unsent: false
    })
    for (const error of [new Error('??'), undefined, null, 'text']) {
      expect(describeNetworkFailure(error, HOST)).toMatchObject({
        reason: `the connection to ${HOST} failed (no answer)`,
        transient: true,
        unsent: false
      })
    }
  })
})

describe('CoolifyError', () => {
  const error = new CoolifyError('POST /deploy', 'Coolify answered 404', 'Check `app-uuid`', {
    status: 404,
    transient: false
  })

  it('reads as one line: request, reason, hint', () => {
    expect(error.message).toBe('POST /deploy: Coolify answered 404. Check `app-uuid`')
    expect(error.name).toBe('CoolifyError')
    expect(error.status).toBe(404)
    expect(new CoolifyError('GET /x', 'reset', '', { transient: true }).message).toBe(
      'GET /x: reset'
    )
  })

  it('takes a better hint and keeps the rest', () => {
    const hinted = error.withHint('No app "abc" is visible to this token')
    expect(hinted).toBeInstanceOf(CoolifyError)
    expect(hinted.message).toBe(
      'POST /deploy: Coolify answered 404. No app "abc" is visible to this token'
    )
    expect(hinted.details).toBe(error.details)
    expect(hinted.request).toBe(error.request)
  })
})
