/**
 * Fault injection: the committed bundle against a fake Coolify that fails the way real servers and
 * the proxies in front of them do. A fault it can ride out must leave a green step with every log
 * line printed once; a bad answer or a bad input must end the step with one clear line. Neither
 * may print a secret, a raw response body or a stack trace.
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import type { Fault, FakeCoolify, FakeOptions } from '../test/fake-coolify/index.js'
import { buildLogLines, runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  fakeCoolifyPerTest,
  inputsFor,
  APP,
  endless,
  errorLines,
  expectNoSecrets,
  expectNoStackTrace,
  FINISHED_LOG,
  FINISHED_TEXT_LOG,
  requestLines,
  TOKEN
} from '../test/support/scenarios.js'

/** Put in injected bodies where a real server would put configuration: it must never be printed. */
const MARKER = 'ROW-SECRET-42'
/** GET /deployments/{uuid}, not the history under /deployments/applications/. */
const READ = /^\/deployments\/(?!applications\/)[^/]+$/
const HTML = { 'Content-Type': 'text/html; charset=utf-8' }
const CF_HEADERS = {
  'CF-Access-Client-Id': 'cf-id-7f3a0c.access',
  'CF-Access-Client-Secret': 'cf-secret-9b21e4d8'
}
const TLS_DIR = join(dirname(fileURLToPath(import.meta.url)), '../test/fixtures/tls')

const start = fakeCoolifyPerTest()

function run(server: FakeCoolify, inputs: Record<string, string> = {}): Promise<RunResult> {
  return runAction({ inputs: inputsFor(server, inputs) })
}

/** What every run must respect, whatever went wrong. */
function expectCleanOutput(result: RunResult, secrets: readonly string[]): void {
  // A value the action masks may be named in its `::add-mask::` line, nowhere else.
  expectNoSecrets(result.stdout + result.stderr, [...secrets, MARKER])
  expectNoStackTrace(result.stderr)
}

/** `path` requests the action sent, in order. */
function sent(server: FakeCoolify, method: string, path: RegExp | string) {
  return actionRequests(server).filter(
    request =>
      request.method === method &&
      (typeof path === 'string' ? request.path === `/api/v1${path}` : path.test(request.path))
  )
}

const API_READ = /^\/api\/v1\/deployments\/(?!applications\/)[^/]+$/

interface Survived {
  name: string
  fake?: FakeOptions
  faults: Fault[]
  inputs?: Record<string, string>
  /** A line the run printed about the fault (the retry note). */
  note?: RegExp
  /** The build log as the job shows it; default: every line of `build('finished')`. */
  log?: string[]
  check?: (server: FakeCoolify, result: RunResult) => void
}

const survived: Survived[] = [
  {
    name: 'connections reset on deployment reads',
    faults: [{ method: 'GET', path: READ, skip: 1, times: 2, do: 'reset' }],
    note: /GET \/deployments\/\w+: the connection to 127\.0\.0\.1:\d+ failed.*trying again/
  },
  {
    name: 'a deployment read cut short mid-body',
    faults: [{ method: 'GET', path: READ, skip: 2, do: 'truncate' }],
    note: /GET \/deployments\/\w+: the answer \(200\) was cut short.*trying again/
  },
  {
    name: "nginx's 502 Bad Gateway page",
    faults: [{ method: 'GET', path: READ, skip: 1, times: 2, do: 'html' }],
    note: /a proxy in front of Coolify answered 502 with an HTML page\); trying again/
  },
  {
    name: '503 with an HTML maintenance page',
    faults: [
      {
        method: 'GET',
        path: READ,
        skip: 1,
        do: { status: 503, headers: HTML, body: `<html><body>Maintenance ${MARKER}</body></html>` }
      }
    ],
    note: /answered 503 with an HTML page\); trying again/
  },
  {
    name: '504 gateway timeout from a proxy',
    faults: [
      {
        method: 'GET',
        path: READ,
        skip: 2,
        do: { status: 504, headers: HTML, body: `<html>504 Gateway Time-out ${MARKER}</html>` }
      }
    ],
    note: /answered 504 with an HTML page\); trying again/
  },
  {
    name: "500 with Coolify's JSON error",
    faults: [
      {
        method: 'GET',
        path: READ,
        skip: 1,
        do: { status: 500, body: { message: 'Server Error', exception: MARKER } }
      }
    ],
    note: /Coolify answered 500 "Server Error".*trying again/
  },
  {
    name: 'a 200 whose body is not JSON',
    faults: [{ method: 'GET', path: READ, skip: 1, do: { status: 200, body: `oops ${MARKER}` } }],
    note: /the answer \(200\) was not valid JSON\); trying again/
  },
  {
    name: 'a 200 whose JSON stops half-way',
    faults: [
      {
        method: 'GET',
        path: READ,
        skip: 2,
        do: {
          status: 200,
          headers: { 'Content-Type': 'application/json' },
          body: `{"status":"in_progress","logs":"[{\\"output\\":\\"${MARKER}`
        }
      }
    ],
    note: /the answer \(200\) was not valid JSON\); trying again/
  },
  {
    name: 'a 429 with Retry-After on a read: nothing is sent before it passes',
    faults: [
      {
        method: 'GET',
        path: READ,
        skip: 2,
        do: {
          status: 429,
          headers: { 'Retry-After': '1' },
          body: { message: 'Too Many Attempts.' }
        }
      }
    ],
    note: /Coolify answered 429 "Too Many Attempts.": too many requests; waiting 1s as Coolify asks/,
    check: server => {
      const refused = actionRequests(server).findIndex(request => request.fault === 'status 429')
      const limited = actionRequests(server)[refused]
      const after = actionRequests(server).slice(refused + 1)
      expect(after.length).toBeGreaterThan(0)
      for (const request of after) expect(request.at - limited.at).toBeGreaterThanOrEqual(1000)
    }
  },
  {
    name: 'a trigger that got no answer: the history is read and no second deployment starts',
    faults: [{ method: 'POST', path: '/deploy', do: 'reset' }],
    note: /POST \/deploy: the connection to .* failed.*trying again/,
    check: server => {
      const lines = requestLines(actionRequests(server))
      const history = lines.indexOf(`GET /api/v1/deployments/applications/${APP.uuid}`)
      expect(history).toBeGreaterThan(0)
      expect(lines.lastIndexOf('POST /api/v1/deploy')).toBeGreaterThan(history)
    }
  },
  {
    name: 'a forced trigger answered by a 502 page: the history is read first',
    faults: [{ method: 'POST', path: '/deploy', do: 'html' }],
    inputs: { force: 'true' },
    note: /POST \/deploy: a proxy in front of Coolify answered 502.*trying again/,
    check: server => {
      const lines = requestLines(actionRequests(server))
      expect(lines.indexOf(`GET /api/v1/deployments/applications/${APP.uuid}`)).toBe(1)
      expect(sent(server, 'POST', '/deploy')).toHaveLength(2)
    }
  },
  {
    // Coolify queued the deployment and the answer was lost on the way back: a retry must find
    // it in the history instead of starting a second one (force defeats Coolify's own dedup).
    name: 'a forced trigger whose answer was cut short after Coolify acted on it',
    faults: [{ method: 'POST', path: '/deploy', do: 'truncate' }],
    inputs: { force: 'true' },
    check: server => {
      expect(sent(server, 'POST', '/deploy')).toHaveLength(1)
    }
  },
  {
    name: 'the queue-full 429 on the trigger waits for Retry-After and tries again',
    faults: [
      {
        method: 'POST',
        path: '/deploy',
        do: {
          status: 429,
          headers: { 'Retry-After': '1' },
          body: { message: 'Deployment queue is full. Please try again later.' }
        }
      }
    ],
    note: /Coolify's deployment queue is full: web0app0uuid0000000001 asked for again in 1 s\./,
    check: server => {
      const [refused, accepted] = sent(server, 'POST', '/deploy')
      expect(refused.fault).toBe('status 429')
      expect(accepted.at - refused.at).toBeGreaterThanOrEqual(1000)
      // A request of one application refused queued nothing: no need to look for one.
      expect(sent(server, 'GET', /\/deployments\/applications\//)).toHaveLength(0)
    }
  },
  {
    name: "a reset on the application's details: its URL is still found",
    faults: [{ method: 'GET', path: `/applications/${APP.uuid}`, do: 'reset' }],
    check: (_server, result) => expect(result.outputs.url).toBe(APP.fqdn)
  },
  {
    name: 'the seed flavor: resets and a 502 on its newline-separated log',
    fake: { flavor: 'seed' },
    faults: [
      { method: 'GET', path: READ, skip: 1, do: 'reset' },
      { method: 'GET', path: READ, skip: 1, do: 'html' }
    ],
    log: FINISHED_TEXT_LOG
  },
  {
    name: 'several faults in a row on one read',
    faults: [
      { method: 'GET', path: READ, skip: 1, do: 'reset' },
      { method: 'GET', path: READ, skip: 1, do: 'html' },
      { method: 'GET', path: READ, skip: 1, do: 'truncate' },
      { method: 'GET', path: READ, skip: 1, do: { status: 500, body: { message: 'Server Error' } } }
    ]
  }
]

describe('faults the action rides out', () => {
  it.each(survived)('$name', async row => {
    const server = await start(row.fake)
    for (const fault of row.faults) server.inject(fault)
    const result = await run(server, row.inputs)

    expect(result.code).toBe(0)
    expect(errorLines(result.stdout)).toEqual([])
    // Plain http to 127.0.0.1 stays on this machine: no warning about the token.
    expect(result.stdout).not.toContain('::warning::')
    expect(result.outputs.status).toBe('finished')
    // Every line once, in order: none lost to a failed read, none repeated by a retry.
    expect(buildLogLines(result.stdout)).toEqual(row.log ?? FINISHED_LOG)
    expect(server.deployments()).toHaveLength(1)
    expect(result.outputs['deployment-uuid']).toBe(server.deployments()[0].uuid)
    expect(server.deployments()[0].status).toBe('finished')
    // Every fault was actually served.
    const served = actionRequests(server).filter(request => request.fault).length
    expect(served).toBe(row.faults.reduce((sum, fault) => sum + (fault.times ?? 1), 0))
    expect(result.stdout).toMatch(row.note ?? /(?:)/)
    expectCleanOutput(result, [TOKEN])
    row.check?.(server, result)
  })

  it('rides out a read that hangs: the request times out and is sent again', async () => {
    const server = await start()
    server.inject({ method: 'GET', path: READ, skip: 1, do: 'hang' })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(buildLogLines(result.stdout)).toEqual(FINISHED_LOG)
    expect(result.stdout).toMatch(/GET \/deployments\/\w+: .*did not answer in time.*trying again/)
    const reads = sent(server, 'GET', API_READ)
    const hung = reads.findIndex(request => request.fault === 'hang')
    // The request timeout with a 100ms poll interval is 5 s; then the read is sent again.
    expect(reads[hung + 1].at - reads[hung].at).toBeGreaterThanOrEqual(4900)
    expectCleanOutput(result, [TOKEN])
  }, 30_000)
})

interface Refused {
  name: string
  fake?: FakeOptions
  faults?: Fault[]
  inputs?: Record<string, string> | ((url: string) => Record<string, string>)
  /** The `status` output; default `failed`, as when nothing was deployed. */
  status?: string
  /** The one `::error` line. */
  message: RegExp
  /** Besides the token: values that must not be printed. */
  secrets?: string[]
  /** Deployments that exist in Coolify afterwards. */
  deployments?: number
  check?: (server: FakeCoolify, result: RunResult) => void
}

const refused: Refused[] = [
  {
    name: '401 "Invalid token." (malformed or revoked)',
    fake: { tokenWithoutTeam: true },
    message: /POST \/deploy: Coolify answered 401 "Invalid token\.".*Create a new API token/
  },
  {
    name: '403 "Missing required team role." (a member\'s token)',
    fake: { role: 'member' },
    message: /403 "Missing required team role\.".*admin or owner/
  },
  {
    name: "403: the token's abilities exceed its user's role",
    faults: [
      {
        method: 'POST',
        path: '/deploy',
        do: {
          status: 403,
          body: {
            message:
              'This API token has permissions (deploy) that exceed your current role (member). Please create a new token.'
          }
        }
      }
    ],
    message: /the token's abilities \(deploy\) exceed its user's role/
  },
  {
    name: 'a bare 404: coolify-url points at something that is not Coolify',
    faults: [{ method: 'POST', path: '/deploy', do: { status: 404, body: '' } }],
    message: /POST \/deploy: .*404.*`coolify-url`/
  },
  {
    name: '401 Unauthenticated',
    inputs: { token: 'wrong-token-value' },
    message:
      /POST \/deploy: Coolify answered 401 "Unauthenticated.": the token was refused.*`token`/,
    secrets: ['wrong-token-value']
  },
  {
    name: '400 Invalid token (a token of no team)',
    inputs: { token: 'invalid-token-of-no-team' },
    message: /Coolify answered 400 "Invalid token.": the token was refused.*`token`/,
    secrets: ['invalid-token-of-no-team']
  },
  {
    name: '403 without the deploy ability',
    fake: { abilities: ['read', 'read:sensitive'] },
    message: /403 "Missing required permissions: deploy".*lacks the `deploy` ability/
  },
  {
    name: '403 without the read ability: the deployment cannot be followed',
    fake: { abilities: ['deploy'] },
    status: 'failed',
    message: /could not read the deployment: GET \/deployments\/\w+: .*lacks the `read` ability/,
    deployments: 1
  },
  {
    name: '403 "API is disabled." with success: true',
    fake: { apiDisabled: true },
    message: /403 "API is disabled.".*enable API access/
  },
  {
    name: '403 "not allowed to access the API" (IP allow-list) with success: true',
    fake: { ipBlocked: true },
    message:
      /403 "You are not allowed to access the API.".*IP address is not on Coolify's API allow-list/
  },
  {
    name: '404 for an unknown application names its uuid',
    inputs: { 'app-uuid': 'nosuchapp0000000000000' },
    message: /404 "No resources found.".*uuid "nosuchapp0000000000000".*`app-uuid`/
  },
  {
    name: '405 on the trigger (not a Coolify 4 API)',
    faults: [
      {
        method: 'POST',
        path: '/deploy',
        do: { status: 405, body: { message: 'Method not allowed.', allow: MARKER } }
      }
    ],
    message: /405 "Method not allowed.".*Coolify 4/
  },
  {
    name: '422 validation error, without echoing the field errors',
    faults: [
      {
        method: 'POST',
        path: '/deploy',
        do: { status: 422, body: { message: 'Validation failed.', errors: { uuid: [MARKER] } } }
      }
    ],
    message: /POST \/deploy: Coolify answered 422 "Validation failed."/
  },
  {
    name: '302 to a Cloudflare Access login page',
    fake: { requiredHeaders: CF_HEADERS },
    message:
      /302 redirect to fake-team\.cloudflareaccess\.com.*Cloudflare Access or a login page.*`headers`/,
    check: (_server, result) => expect(result.stdout).not.toContain('redirect_url')
  },
  {
    name: 'a Cloudflare challenge (cf-mitigated)',
    faults: [
      {
        method: 'POST',
        path: '/deploy',
        do: {
          status: 403,
          headers: { ...HTML, 'cf-mitigated': 'challenge' },
          body: `<html><title>Just a moment...</title>${MARKER}</html>`
        }
      }
    ],
    message: /Cloudflare stopped the request with a challenge \(cf-mitigated: challenge\)/
  },
  {
    name: 'an HTML page with status 200 where JSON was expected',
    faults: [
      {
        method: 'POST',
        path: '/deploy',
        times: Infinity,
        do: { status: 200, headers: HTML, body: `<html><title>Sign in</title>${MARKER}</html>` }
      }
    ],
    inputs: { timeout: '3s' },
    message:
      /got an HTML page \(200\) where Coolify's JSON was expected: a proxy or login page answered/,
    deployments: 0
  },
  {
    name: "an HTML 404 from Coolify's web UI (coolify-url has a wrong path)",
    inputs: url => ({ 'coolify-url': `${url}/dashboard` }),
    message: /HTML page.*`coolify-url`/,
    check: (_server, result) => expect(result.stdout).not.toMatch(/::error::.*`app-uuid`/)
  },
  {
    name: 'connection refused until the timeout',
    inputs: url => ({ 'coolify-url': url.replace(/:\d+$/, ':1'), timeout: '2s' }),
    message: /POST \/deploy: 127\.0\.0\.1:1 refused the connection.*`coolify-url`/,
    check: (_server, result) => {
      // Never answered: a wrong address, most likely, given a short grace rather than `timeout`.
      expect(result.stdout).toMatch(
        /^http:\/\/127\.0\.0\.1:1 does not answer \(POST \/deploy: .*refused the connection\); trying again for 1m, then giving up\.$/m
      )
      // What was tried, with the last error: not just the last error.
      expect(errorLines(result.stdout)[0]).toMatch(/\b\d+ attempts\b/)
    }
  },
  {
    name: 'a host name that does not resolve',
    inputs: { 'coolify-url': 'http://coolify.invalid:8000', timeout: '2s' },
    message: /POST \/deploy: could not resolve coolify\.invalid:8000 \(E\w+\).*`coolify-url`/,
    check: (_server, result) =>
      // Plain http to a host that is not this machine: the token is readable on the way.
      expect(result.stdout).toMatch(
        /::warning::The token travels over plain http:\/\/ to coolify\.invalid.*https:\/\//
      )
  },
  {
    name: '500 on every read until the timeout: cancelled, and says what was tried',
    faults: [
      {
        method: 'GET',
        path: READ,
        times: Infinity,
        do: { status: 500, body: { message: 'Server Error', trace: MARKER } }
      }
    ],
    fake: { apps: [{ ...APP, scenarios: [endless()] }] },
    inputs: { 'poll-interval': '20ms', timeout: '3s' },
    status: 'timeout',
    message:
      /deployment timeout: it outlasted `timeout` while Coolify could not be read \(GET \/deployments\/\w+: Coolify answered 500 "Server Error" \(\d+ attempts\)\); it was cancelled in Coolify/,
    deployments: 1,
    check: server => expect(server.deployments()[0].status).toBe('cancelled-by-user')
  }
]

const badInputs: Array<[string, Record<string, string>, RegExp]> = [
  ['coolify-url empty', { 'coolify-url': '' }, /Input `coolify-url` is empty/],
  [
    'coolify-url without a scheme',
    { 'coolify-url': 'coolify.example.com' },
    /Input `coolify-url`: "coolify\.example\.com" is not an http\(s\) address.*scheme/
  ],
  [
    'coolify-url that is not a URL',
    { 'coolify-url': 'https://' },
    /Input `coolify-url`: "https:\/\/" is not an http\(s\) address/
  ],
  [
    'coolify-url with another scheme',
    { 'coolify-url': 'ftp://coolify.example.com' },
    /Input `coolify-url`: "ftp:\/\/coolify\.example\.com" is not an http\(s\) address/
  ],
  ['empty token', { token: '' }, /Input `token` is empty/],
  [
    'neither app, app-uuid nor tag',
    { 'app-uuid': '' },
    /Give `app` \(.*\), `app-uuid` or `tag`: all are empty/
  ],
  ['both app-uuid and tag', { tag: 'production' }, /Give either `app-uuid` or `tag`, not both/],
  ['a bad timeout', { timeout: '10 minutes' }, /Input `timeout`: "10 minutes" is not a duration/],
  [
    'a zero poll-interval',
    { 'poll-interval': '0' },
    /Input `poll-interval`: "0" is not a duration/
  ],
  ['a bad boolean', { wait: 'yes' }, /Input `wait` must be true or false, not "yes"/],
  [
    'a headers line without a colon',
    { headers: `CF-Access-Client-Id ${MARKER}` },
    /Input `headers`, line 1: write one `Name: value` a line/
  ],
  [
    'a headers line with an empty value',
    { headers: 'CF-Access-Client-Id: id\nCF-Access-Client-Secret:' },
    /Input `headers`, line 2: write one `Name: value` a line/
  ],
  [
    'a headers line that replaces Authorization',
    { headers: `Authorization: Bearer ${MARKER}` },
    /Input `headers`, line 1: Authorization is set by the action itself/
  ],
  [
    'a token with a line break (it would split the Authorization header)',
    { token: `${TOKEN}\nX-Injected: 1` },
    /Input `token`.*(control character|printable ASCII)/
  ],
  [
    'a header value with a carriage return',
    { headers: `CF-Access-Client-Id: id\rX-Injected: 1` },
    /Input `headers`.*(control character|printable ASCII)/
  ],
  [
    'a git-branch with a line break',
    { 'git-branch': 'main\nX-Injected: 1' },
    /Input `git-branch`.*control character/
  ],
  [
    'a ca-certificate that is neither PEM nor a file',
    { 'ca-certificate': '/nonexistent/ca.pem' },
    /Input `ca-certificate`: "\/nonexistent\/ca\.pem" is neither a PEM certificate nor a readable file/
  ]
]

describe('bad answers end the step with one clear line', () => {
  it.each(refused)('$name', async row => {
    const server = await start(row.fake)
    for (const fault of row.faults ?? []) server.inject(fault)
    const inputs = typeof row.inputs === 'function' ? row.inputs(server.url) : row.inputs
    const result = await run(server, inputs)

    expect(result.code).toBe(1)
    const errors = errorLines(result.stdout)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(row.message)
    expect(result.outputs.status).toBe(row.status ?? 'failed')
    expect(server.deployments()).toHaveLength(row.deployments ?? 0)
    expect(JSON.parse(result.outputs.deployments)).toHaveLength(row.deployments ?? 0)
    // Whatever was printed of the build log came once and in order.
    const lines = buildLogLines(result.stdout)
    expect(lines).toEqual(FINISHED_LOG.slice(0, lines.length))
    expectCleanOutput(result, [TOKEN, ...(row.secrets ?? [])])
    row.check?.(server, result)
  })

  it.each(badInputs)('refuses %s before any request', async (_name, inputs, message) => {
    const server = await start()
    const result = await run(server, inputs)

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([expect.stringMatching(message)])
    expect(result.stderr).toBe('')
    expect(server.requests).toHaveLength(0)
    expectCleanOutput(result, [TOKEN])
  })
})

describe('the headers input (Cloudflare Access)', () => {
  it('sends the headers on every request, and masks their values', async () => {
    const server = await start({ requiredHeaders: CF_HEADERS })
    const headers = Object.entries(CF_HEADERS)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n')
    const result = await run(server, { headers })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(buildLogLines(result.stdout)).toEqual(FINISHED_LOG)
    expect(actionRequests(server).length).toBeGreaterThan(2)
    for (const request of actionRequests(server)) {
      expect(request.headers['cf-access-client-id']).toBe(CF_HEADERS['CF-Access-Client-Id'])
      expect(request.headers['cf-access-client-secret']).toBe(CF_HEADERS['CF-Access-Client-Secret'])
    }
    for (const value of Object.values(CF_HEADERS))
      expect(result.stdout).toContain(`::add-mask::${value}`)
    expectCleanOutput(result, [TOKEN, ...Object.values(CF_HEADERS)])
  })
})

describe('the ca-certificate input (an instance with a private CA)', () => {
  const tls = () => ({
    key: readFileSync(join(TLS_DIR, 'server-key.pem'), 'utf8'),
    cert: readFileSync(join(TLS_DIR, 'server.pem'), 'utf8')
  })

  it('says the certificate is not trusted and names ca-certificate without it', async () => {
    const server = await start({ tls: tls() })
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    const result = await run(server)

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      expect.stringMatching(
        /POST \/deploy: the TLS certificate of 127\.0\.0\.1:\d+ is not trusted \(\w+\).*`ca-certificate`/
      )
    ])
    expect(server.requests).toHaveLength(0)
    expect(server.deployments()).toHaveLength(0)
    expectCleanOutput(result, [TOKEN])
  })

  it.each([
    ['as PEM text', () => readFileSync(join(TLS_DIR, 'ca.pem'), 'utf8')],
    ['as a file path', () => join(TLS_DIR, 'ca.pem')]
  ])('trusts the CA given %s', async (_how, caCertificate) => {
    const server = await start({ tls: tls() })
    const result = await run(server, { 'ca-certificate': caCertificate() })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(buildLogLines(result.stdout)).toEqual(FINISHED_LOG)
    // Loopback: no warning about the token travelling in the clear (it does not, here).
    expect(result.stdout).not.toContain('::warning::')
    expectCleanOutput(result, [TOKEN])
  })
})

describe('the ca-certificate input beside the runner’s own CAs', () => {
  it("adds the CA to the ones Node trusts, keeping the runner's NODE_EXTRA_CA_CERTS", async () => {
    const server = await start({
      tls: {
        key: readFileSync(join(TLS_DIR, 'server-key.pem'), 'utf8'),
        cert: readFileSync(join(TLS_DIR, 'server.pem'), 'utf8')
      }
    })
    // Coolify's CA comes from the runner; `ca-certificate` names another (a second instance's).
    const result = await runAction({
      inputs: inputsFor(server, { 'ca-certificate': join(TLS_DIR, 'coolify-test-ca.pem') }),
      env: { NODE_EXTRA_CA_CERTS: join(TLS_DIR, 'ca.pem') }
    })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expectCleanOutput(result, [TOKEN])
  })
})

describe('answers and output the runner would misread', () => {
  it("neutralises build output that looks like the runner's ##[ markup", async () => {
    const markup = ['##[group]Injected group', '##[error]Injected error', '  ##[endgroup]']
    const server = await start({
      apps: [
        {
          ...APP,
          scenarios: [
            {
              steps: [
                { at: 0, status: 'in_progress', lines: markup },
                {
                  at: 100,
                  status: 'finished',
                  lines: ['Gracefully shutting down build container']
                }
              ]
            }
          ]
        }
      ]
    })
    const result = await run(server)

    expect(result.code).toBe(0)
    // No printed line is markup to the runner, yet each reads the same to a person.
    for (const line of result.stdout.split('\n')) expect(line.trimStart()).not.toMatch(/^##\[/)
    const shown = buildLogLines(result.stdout).map(line => line.replace(/\u200b/g, ''))
    expect(shown).toEqual([...markup, 'Gracefully shutting down build container'])
  })

  it('reads a status in capitals as the status it is', async () => {
    const server = await start()
    server.inject({
      method: 'GET',
      path: READ,
      skip: 1,
      times: Infinity,
      do: { status: 200, body: { deployment_uuid: 'x', status: 'FINISHED', logs: null } }
    })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
  })

  it('says a missing status is missing, and waits for one', async () => {
    const server = await start()
    server.inject({
      method: 'GET',
      path: READ,
      do: { status: 200, body: { deployment_uuid: 'x', logs: null } }
    })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.stdout).toMatch(/::warning::web: Coolify's answer has no status/)
    expect(result.stdout).not.toContain('undefined')
  })
})
