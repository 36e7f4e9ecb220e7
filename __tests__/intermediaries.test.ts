/**
 * The bundle through the servers that stand between runners and Coolify in real life, started
 * from Debian's packages: Squid and tinyproxy as the runner's proxy, with their default rules
 * (CONNECT to port 443 only), and nginx as the reverse proxy in front of Coolify.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { HttpAgent } from '../src/transport/agent.js'
import { startFakeCoolify, type FakeCoolify, type FakeOptions } from '../test/fake-coolify/index.js'
import { startFakeGitHub, type FakeGitHub } from '../test/fake-github/index.js'
import {
  makeCertificates,
  missing,
  startNginx,
  startSquid,
  startTinyproxy,
  type Certificates,
  type Nginx,
  type Running
} from '../test/support/intermediaries.js'
import { PROJECT, runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  errorLines,
  expectNoStackTrace,
  inputsFor,
  TOKEN
} from '../test/support/scenarios.js'

const fixture = (name: string): string =>
  readFileSync(join(PROJECT, 'test', 'fixtures', 'tls', name), 'utf8')
/** A name only the proxies resolve: loopback addresses go around proxies by convention. */
const NAME = 'coolify.test.invalid'

/** A fake Coolify for the whole file: each deploy builds and finishes. */
function fake(options: FakeOptions = {}): Promise<FakeCoolify> {
  return startFakeCoolify({
    token: TOKEN,
    rateLimit: 6000,
    apps: [{ ...APP, scenarios: Array.from({ length: 10 }, () => build('finished')) }],
    ...options
  })
}

const absent = missing(['squid', 'tinyproxy', 'nginx', 'openssl'])
if (absent) console.warn(`Skipping the tests through real intermediaries: ${absent}`)
const through = absent ? describe.skip : describe

async function deploy(
  server: FakeCoolify,
  coolifyUrl: string,
  env: Record<string, string>,
  inputs: Record<string, string> = {}
): Promise<RunResult> {
  const result = await runAction({
    inputs: inputsFor(server, { 'coolify-url': coolifyUrl, ...inputs }),
    env
  })
  if (process.env.SHOW_RUN) console.log(result.stdout, result.stderr)
  return result
}

through('through Squid and tinyproxy with their default rules', () => {
  let plain: FakeCoolify
  let secure: FakeCoolify
  let squid: Running
  let tinyproxy: Running
  /** GitHub's API over https, at a port Squid allows CONNECT to, under the name `coolify.test`. */
  let github: FakeGitHub
  beforeAll(async () => {
    plain = await fake()
    secure = await fake({
      tls: { key: fixture('coolify-test-key.pem'), cert: fixture('coolify-test.pem') }
    })
    github = await startFakeGitHub({
      tls: { key: fixture('coolify-test-key.pem'), cert: fixture('coolify-test.pem') }
    })
    const sslPorts = [secure.url, github.url].map(url => Number(new URL(url).port))
    ;[squid, tinyproxy] = await Promise.all([
      startSquid({ [NAME]: '127.0.0.1', 'coolify.test': '127.0.0.1' }, sslPorts),
      startTinyproxy()
    ])
  }, 30_000)
  afterAll(async () => {
    await Promise.all([plain, secure, github, squid, tinyproxy].map(each => each?.close()))
  })

  /** A deploy on plain http (straight: loopback) that records a GitHub deployment at `apiUrl`. */
  function deployRecorded(apiUrl: string): Promise<RunResult> {
    return deploy(
      plain,
      plain.url,
      {
        HTTPS_PROXY: squid.url,
        GITHUB_API_URL: apiUrl,
        // The runner's extra CAs, which GitHub's calls trust as every Node request does.
        NODE_EXTRA_CA_CERTS: join(PROJECT, 'test', 'fixtures', 'tls', 'coolify-test-ca.pem')
      },
      { environment: 'production', 'github-token': 'ghs_proxy-token-1234' }
    )
  }

  it('deploys to Coolify on plain http through Squid, which refuses CONNECT to its port', async () => {
    const url = `http://${NAME}:${new URL(plain.url).port}`
    const result = await deploy(plain, url, { HTTP_PROXY: squid.url })
    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(squid.log()).toMatch(new RegExp(`TCP_MISS/200 \\d+ POST ${url}/api/v1/deploy`))
    expect(squid.log()).not.toContain('CONNECT')
    expectNoStackTrace(result.stderr)
  }, 60_000)

  it('deploys to Coolify on https through Squid, TLS inside its tunnel', async () => {
    const url = `https://coolify.test:${new URL(secure.url).port}`
    const result = await deploy(
      secure,
      url,
      { HTTPS_PROXY: squid.url },
      { 'ca-certificate': fixture('coolify-test-ca.pem') }
    )
    expect(result.code).toBe(0)
    expect(squid.log()).toMatch(/TCP_TUNNEL\/200 \d+ CONNECT coolify\.test:\d+/)
    expectNoStackTrace(result.stderr)
  }, 60_000)

  it('deploys to Coolify on plain http through tinyproxy, which allows CONNECT to 443 and 563 only', async () => {
    // tinyproxy resolves names as the system does: an address loopback only in its IPv6 form.
    const url = `http://[::ffff:127.0.0.1]:${new URL(plain.url).port}`
    const before = actionRequests(plain).length
    const result = await deploy(plain, url, { http_proxy: tinyproxy.url })
    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(actionRequests(plain).length).toBeGreaterThan(before)
    expect(tinyproxy.log()).toMatch(/Request \(file descriptor \d+\): POST http:\/\/\[/)
    expectNoStackTrace(result.stderr)
  }, 60_000)

  it('goes straight to what NO_PROXY names by CIDR range, around Squid', async () => {
    // Loopback in its IPv6 form, which only NO_PROXY keeps away from Squid.
    const url = `http://[::ffff:127.0.0.1]:${new URL(plain.url).port}`
    const result = await deploy(plain, url, {
      HTTP_PROXY: squid.url,
      NO_PROXY: '10.0.0.0/8, ::ffff:7f00:0/104'
    })
    expect(result.code).toBe(0)
    expect(squid.log()).not.toContain('[::ffff:')
  }, 60_000)

  it('ends a request cancelled while Squid has not answered its CONNECT yet, at once', async () => {
    // Squid asks its resolver (127.0.0.1, where none answers) before it answers CONNECT.
    const target = new URL('https://blackhole.test.invalid/')
    const agent = new HttpAgent(target, { timeoutMs: 600_000 }, { HTTPS_PROXY: squid.url })
    const cancel = new AbortController()
    const stop = new Error('cancelled')
    setTimeout(() => cancel.abort(stop), 1500)
    const started = Date.now()
    const error = await agent
      .request(target, { method: 'GET', headers: {}, signal: cancel.signal })
      .catch((e: unknown) => e)
    agent.close()
    expect(error).toBe(stop)
    expect(Date.now() - started).toBeLessThan(4000)
  }, 30_000)

  // After the Coolify tests: these open tunnels to Squid, which the first says it never had.
  it('records the GitHub deployment through Squid given by HTTPS_PROXY, TLS inside its tunnel', async () => {
    const port = new URL(github.url).port
    const result = await deployRecorded(`https://coolify.test:${port}`)
    expect(result.code).toBe(0)
    expect(result.stdout).not.toContain('::warning::')
    expect(squid.log()).toMatch(new RegExp(`TCP_TUNNEL/200 \\d+ CONNECT coolify\\.test:${port} `))
    const [deployment] = github.deployments()
    expect(deployment.environment).toBe('production')
    expect(deployment.statuses.map(status => status.state)).toEqual(['in_progress', 'success'])
    expectNoStackTrace(result.stderr)
  }, 60_000)

  it('goes straight to a GitHub that NO_PROXY names by CIDR range, around Squid', async () => {
    const straight = await startFakeGitHub()
    try {
      // Loopback in its IPv6 form, which only NO_PROXY keeps away from Squid.
      const apiUrl = `http://[::ffff:127.0.0.1]:${new URL(straight.url).port}`
      const result = await deploy(
        plain,
        plain.url,
        {
          HTTP_PROXY: squid.url,
          NO_PROXY: '10.0.0.0/8, ::ffff:7f00:0/104',
          GITHUB_API_URL: apiUrl
        },
        { environment: 'production', 'github-token': 'ghs_proxy-token-1234' }
      )
      expect(result.code).toBe(0)
      expect(result.stdout).not.toContain('::warning::')
      expect(straight.deployments()).toHaveLength(1)
      expect(squid.log()).not.toContain('[::ffff:')
    } finally {
      await straight.close()
    }
  }, 60_000)

  it('names the proxy when it refuses the tunnel to GitHub, and deploys all the same', async () => {
    // A port Squid's default rules refuse CONNECT to.
    const port = new URL(plain.url).port
    const result = await deployRecorded(`https://coolify.test:${port}`)
    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.stdout).toMatch(
      /::warning::Could not record a GitHub deployment in environment "production": no answer from GitHub \(the proxy answered 403 to CONNECT\)/
    )
    expectNoStackTrace(result.stderr)
  }, 60_000)
})

through('behind nginx as Coolify is served', () => {
  let server: FakeCoolify
  let nginx: Nginx
  let certificates: Certificates
  beforeAll(async () => {
    server = await fake()
    certificates = makeCertificates()
    nginx = await startNginx(new URL(server.url).host, certificates)
  }, 30_000)
  afterAll(async () => {
    await Promise.all([server, nginx].map(each => each?.close()))
  })

  it('deploys over https with ca-certificate, the health URL trusted the same way', async () => {
    const result = await deploy(
      server,
      `${nginx.httpsUrl}`,
      {},
      {
        'ca-certificate': certificates.ca,
        'health-url': `${nginx.httpsUrl}/_app/${'{uuid}'}/health`.replace(
          '{uuid}',
          inputsFor(server)['app-uuid']
        )
      }
    )
    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.stdout).toMatch(/healthy \(https:\/\/127\.0\.0\.1:\d+\/_app\/.*answers\)/)
    expectNoStackTrace(result.stderr)
  }, 60_000)

  it('says to use https when nginx redirects http there', async () => {
    const result = await deploy(server, nginx.url, {}, { 'ca-certificate': certificates.ca })
    expect(result.code).toBe(1)
    expect(errorLines(result.stdout).join('\n')).toMatch(/Use https:\/\/ in `coolify-url`/)
  }, 60_000)

  it('names the proxy’s 502 page while Coolify is down behind it', async () => {
    const down = await startNginx('127.0.0.1:9', certificates)
    try {
      const result = await deploy(
        server,
        down.httpsUrl,
        {},
        {
          'ca-certificate': certificates.ca,
          timeout: '3s'
        }
      )
      expect(result.code).toBe(1)
      expect(errorLines(result.stdout).join('\n')).toMatch(
        /a proxy in front of Coolify answered 502 with an HTML page/
      )
    } finally {
      await down.close()
    }
  }, 60_000)
})
