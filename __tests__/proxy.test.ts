/**
 * Where self-hosted runners live: behind an outbound proxy, and next to GitHub Enterprise
 * Server. The bundle runs from action.yml with the runner's proxy variables; a forwarding proxy
 * on loopback connects every tunnel to the fakes, so a host name like `coolify.test`, which
 * resolves nowhere, is reached only through it.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PROJECT } from '../test/support/runner.js'
import type { FakeCoolify } from '../test/fake-coolify/index.js'
import { startFakeGitHub, type FakeGitHub } from '../test/fake-github/index.js'
import { startProxy, type ForwardingProxy, type ProxyOptions } from '../test/support/proxy.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  errorLines,
  expectNoSecrets,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  inputsFor
} from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest()
const TLS_DIR = join(PROJECT, 'test', 'fixtures', 'tls')
const fixture = (name: string): string => readFileSync(join(TLS_DIR, name), 'utf8')
let proxy: ForwardingProxy | undefined
let github: FakeGitHub | undefined

afterEach(async () => {
  await proxy?.close()
  await github?.close()
  proxy = github = undefined
})

async function withProxy(options: ProxyOptions = {}): Promise<ForwardingProxy> {
  proxy = await startProxy(options)
  return proxy
}

/** The fake's port, under a name only the proxy can reach. */
function unresolvable(server: FakeCoolify, host = 'coolify.test'): string {
  return `http://${host}:${new URL(server.url).port}`
}

async function run(
  server: FakeCoolify,
  env: Record<string, string>,
  inputs: Record<string, string> = {}
): Promise<RunResult> {
  const result = await runAction({
    inputs: inputsFor(server, { 'coolify-url': unresolvable(server), ...inputs }),
    env
  })
  if (process.env.SHOW_RUN) console.log(result.stdout, result.stderr)
  return result
}

describe('behind a proxy', () => {
  it('reaches Coolify through HTTP_PROXY, and says so', async () => {
    const server = await start()
    const { url, tunnels } = await withProxy()
    const result = await run(server, { HTTP_PROXY: url })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    const target = `coolify.test:${new URL(server.url).port}`
    expect(tunnels.length).toBeGreaterThan(0)
    expect(tunnels.every(tunnel => tunnel.target === target)).toBe(true)
    expect(actionRequests(server).some(request => request.path === '/api/v1/deploy')).toBe(true)
    expect(result.stdout).toContain(`through the proxy ${new URL(url).host}`)
    expectNoStackTrace(result.stderr)
  }, 30_000)

  it('goes straight to a host NO_PROXY names, in each of its forms', async () => {
    const server = await start()
    const { url, tunnels } = await withProxy()
    const port = new URL(server.url).port
    const forms = ['coolify.test', '.test', 'test', `coolify.test:${port}`, 'other, *']
    const results = await Promise.all(
      forms.map(noProxy => run(server, { http_proxy: url, no_proxy: noProxy }, { timeout: '2s' }))
    )
    for (const result of results) {
      // Straight to a name that resolves nowhere: the error is about that name, not the proxy.
      expect(result.code).toBe(1)
      expect(errorLines(result.stdout).join('\n')).toMatch(/could not resolve coolify\.test/)
    }
    expect(tunnels).toEqual([])
    expect(actionRequests(server)).toEqual([])
  }, 60_000)

  it('names the proxy, not coolify-url, when the proxy wants credentials', async () => {
    const server = await start()
    const { url } = await withProxy({ credentials: 'deploy:s3cret-proxy-pass' })
    const result = await run(server, { HTTP_PROXY: url }, { timeout: '3s' })

    expect(result.code).toBe(1)
    const errors = errorLines(result.stdout)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain(`the proxy ${new URL(url).host} wants credentials (407`)
    expect(errors[0]).not.toContain('coolify-url')
    expect(actionRequests(server)).toEqual([])
  }, 30_000)

  it('names the proxy when it cannot reach Coolify', async () => {
    const server = await start()
    const { url } = await withProxy({ refuse: 502 })
    const result = await run(server, { HTTP_PROXY: url }, { timeout: '3s' })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout).join('\n')).toContain(
      `the proxy ${new URL(url).host} or Coolify behind it answered 502`
    )
  }, 30_000)

  it('sends the credentials in the proxy URL and never prints them', async () => {
    const server = await start()
    const secret = 's3cret-proxy-pass'
    const { url, tunnels } = await withProxy({ credentials: `deploy:${secret}` })
    const withCredentials = url.replace('http://', `http://deploy:${secret}@`)
    const result = await run(server, { HTTPS_PROXY: withCredentials, HTTP_PROXY: withCredentials })

    expect(result.code).toBe(0)
    expect(tunnels[0].authorization).toBe(
      `Basic ${Buffer.from(`deploy:${secret}`).toString('base64')}`
    )
    expect(result.stdout).toContain(`::add-mask::${secret}`)
    expectNoSecrets(result.stdout + result.stderr + result.summary, [secret])
  }, 30_000)

  it('says it is the proxy’s own certificate that is not trusted, and how to trust it', async () => {
    const server = await start()
    const { url } = await withProxy({
      tls: { key: fixture('server-key.pem'), cert: fixture('server.pem') }
    })
    const refused = await run(server, { HTTP_PROXY: url }, { timeout: '3s' })

    expect(refused.code).toBe(1)
    const errors = errorLines(refused.stdout)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(
      new RegExp(`the TLS certificate of the proxy ${new URL(url).host} is not trusted \\(\\w+\\)`)
    )
    expect(errors[0]).toContain('NODE_EXTRA_CA_CERTS')
    expect(actionRequests(server)).toEqual([])

    // Trusted as the message says, the same proxy works.
    const trusted = await run(server, {
      HTTP_PROXY: url,
      NODE_EXTRA_CA_CERTS: join(TLS_DIR, 'ca.pem')
    })
    expect(trusted.code).toBe(0)
    expect(trusted.outputs.status).toBe('finished')
    expectNoStackTrace(refused.stderr + trusted.stderr)
  }, 30_000)

  it('says nothing of TLS server names through an https proxy given by its address', async () => {
    const server = await start()
    const { url } = await withProxy({
      tls: { key: fixture('server-key.pem'), cert: fixture('server.pem') }
    })
    // https://127.0.0.1:PORT: an address has no name to send in TLS (Node warns DEP0123 if one is).
    const result = await run(server, {
      HTTP_PROXY: url,
      NODE_EXTRA_CA_CERTS: join(TLS_DIR, 'ca.pem')
    })

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    expect(result.stdout + result.stderr).not.toMatch(/DEP0123|DeprecationWarning/)
    expect(result.stderr).toBe('')
  }, 30_000)

  it('reads a 407 that comes through an https proxy’s tunnel as Coolify’s, not the proxy’s', async () => {
    const server = await start()
    server.inject({ path: /./, times: 100, do: { status: 407 } })
    const { url } = await withProxy({
      tls: { key: fixture('server-key.pem'), cert: fixture('server.pem') }
    })
    // Through an https:// proxy even plain http goes through a tunnel: what answers is Coolify.
    const result = await run(server, {
      HTTP_PROXY: url,
      NODE_EXTRA_CA_CERTS: join(TLS_DIR, 'ca.pem')
    })

    expect(result.code).toBe(1)
    const errors = errorLines(result.stdout)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain('Coolify answered 407')
    expect(errors[0]).not.toContain('wants credentials')
  }, 30_000)

  it('fails at once, naming the variable, on a malformed % in the proxy password, and masks it', async () => {
    const server = await start()
    const { url } = await withProxy({ credentials: 'deploy:50%off' })
    const raw = '50%off'
    const result = await run(server, {
      HTTP_PROXY: url.replace('http://', `http://deploy:${raw}@`)
    })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      // The workflow command writes % as %25.
      expect.stringMatching(
        /^::error::HTTP_PROXY: the proxy's user or password holds a %25 that starts no escape: write a %25 in them as %2525/
      )
    ])
    expect(result.stdout).toContain('::add-mask::50%25off')
    expectNoSecrets(result.stdout + result.stderr + result.summary, [raw])
    expectNoStackTrace(result.stderr)
    expect(actionRequests(server)).toEqual([])
  }, 30_000)

  it('refuses a socks proxy rather than going around it', async () => {
    const server = await start()
    const result = await run(server, { http_proxy: 'socks5://127.0.0.1:1080' })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      expect.stringMatching(
        /^::error::http_proxy names a socks5:\/\/ proxy, but only HTTP and HTTPS proxies are supported/
      )
    ])
    expectNoStackTrace(result.stderr)
    expect(actionRequests(server)).toEqual([])
  }, 30_000)

  it('checks health-url through the proxy too', async () => {
    const server = await start({ apps: [] })
    server.addApp({
      ...APP,
      fqdn: `${unresolvable(server, 'web.test')}/_app/${APP.uuid}`,
      runtime: [{ at: 0, status: 'running:healthy' }],
      scenarios: [build('finished')]
    })
    const { url, tunnels } = await withProxy()
    const result = await run(server, { HTTP_PROXY: url }, { 'health-url': '/health' })

    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      /web: healthy \(http:\/\/web\.test:\d+\/_app\/.+\/health answers\)/
    )
    expect(tunnels.some(tunnel => tunnel.target.startsWith('web.test:'))).toBe(true)
  }, 30_000)
})

describe('on GitHub Enterprise Server', () => {
  it('calls GITHUB_API_URL and links to GITHUB_SERVER_URL', async () => {
    github = await startFakeGitHub({ prefix: '/api/v3' })
    const server = await start({
      apps: [{ ...APP, previews: [7], scenarios: [build('finished')] }]
    })
    const event = join(mkdtempSync(join(tmpdir(), 'ghes-')), 'event.json')
    writeFileSync(
      event,
      JSON.stringify({
        number: 7,
        pull_request: { number: 7, head: { sha: 'c0ffee0c0ffee0c0ffee0c0ffee0c0ffee0c0ff' } }
      })
    )
    const result = await runAction({
      inputs: inputsFor(server, {
        pr: '7',
        environment: 'pr-7',
        'github-token': 'ghs_enterprise-token-1234'
      }),
      env: {
        GITHUB_API_URL: github.url,
        GITHUB_SERVER_URL: 'https://github.example.com',
        GITHUB_EVENT_PATH: event,
        GITHUB_EVENT_NAME: 'pull_request'
      }
    })

    expect(result.code).toBe(0)
    expect(github.requests.length).toBeGreaterThan(0)
    // The repository's routes, and who the token is (to know its own comment).
    expect(
      github.requests.every(
        request =>
          request.path.startsWith('/api/v3/repos/octo/app/') || request.path === '/api/v3/user'
      )
    ).toBe(true)
    expect(github.deployments()).toMatchObject([{ environment: 'pr-7', transient: true }])
    const [comment] = github.comments(7)
    expect(comment.body).toContain('https://github.example.com/octo/app/actions/runs/42')
    expect(comment.body).not.toContain('https://github.com/')
  }, 30_000)
})
