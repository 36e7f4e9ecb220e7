/**
 * Fault injection: the committed bundle against a fake Coolify that fails the way real servers and
 * the proxies in front of them do. A fault it can ride out must leave a green step with every log
 * line printed once, and print no secret, raw response body or stack trace. (The faults that end
 * the step: bad-answers.test.ts.)
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import type { Fault, FakeCoolify, FakeOptions } from '../test/fake-coolify/index.js'
import {
  API_READ,
  CF_HEADERS,
  expectCleanOutput,
  HTML,
  MARKER,
  READ,
  run,
  sent
} from '../test/support/faults.js'
import { buildLogLines, runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  fakeCoolifyPerTest,
  inputsFor,
  APP,
  errorLines,
  FINISHED_LOG,
  FINISHED_TEXT_LOG,
  requestLines,
  TOKEN
} from '../test/support/scenarios.js'

const TLS_DIR = join(dirname(fileURLToPath(import.meta.url)), '../test/fixtures/tls')

const start = fakeCoolifyPerTest()

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
    // The fake's own deployment is still running, so its status is never refreshed: the health
    // check's doubt is not what this test is about.
    const result = await run(server, { 'health-timeout': '1s' })

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
