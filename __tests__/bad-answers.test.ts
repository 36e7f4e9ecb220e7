/**
 * Fault injection, continued from faults.test.ts: a bad answer or a bad input must end the step
 * with one clear line, printing no secret, raw response body or stack trace.
 */
import { describe, expect, it } from '@jest/globals'
import type { Fault, FakeCoolify, FakeOptions } from '../test/fake-coolify/index.js'
import { CF_HEADERS, expectCleanOutput, HTML, MARKER, READ, run } from '../test/support/faults.js'
import { buildLogLines, type RunResult } from '../test/support/runner.js'
import {
  APP,
  endless,
  errorLines,
  fakeCoolifyPerTest,
  FINISHED_LOG,
  TOKEN
} from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest()

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
