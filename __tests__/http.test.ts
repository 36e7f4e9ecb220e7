/**
 * The action's HTTP over Node's http and https, against servers on loopback: which stage a
 * timeout names, bodies read whole or not at all, aborts, kept-alive connections, and tunnels
 * through a proxy with TLS to the target inside them.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'
import { join } from 'node:path'
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib'
import { describeNetworkFailure } from '../src/coolify/errors.js'
import { HttpAgent } from '../src/transport/agent.js'
import {
  HttpBrokenBody,
  HttpTimeout,
  HttpUnreadable,
  ProxyRefusal
} from '../src/transport/errors.js'
import { startProxy, type ForwardingProxy } from '../test/support/proxy.js'
import { PROJECT } from '../test/support/runner.js'

const TLS_DIR = join(PROJECT, 'test', 'fixtures', 'tls')
const tls = (name: string): string => readFileSync(join(TLS_DIR, name), 'utf8')

type Handler = (request: IncomingMessage, response: ServerResponse) => void

const closing: Array<() => unknown> = []
afterEach(async () => {
  for (const close of closing.splice(0)) await close()
})

/** A server on loopback that answers with `handler`, and counts the connections it was given. */
async function serve(
  handler: Handler,
  options: {
    secure?: boolean
    /** The certificate's files, `NAME.pem` and `NAME-key.pem`: coolify-test by default. */
    certificate?: string
    /** The server's idle timeout, which it announces as `Keep-Alive: timeout=N`. */
    keepAliveMs?: number
    /** Told of each connection the server is given. */
    connected?: (socket: Socket) => void
  } = {}
): Promise<{ url: URL; connections: () => number }> {
  const name = options.certificate ?? 'coolify-test'
  const server = options.secure
    ? createTlsServer({ key: tls(`${name}-key.pem`), cert: tls(`${name}.pem`) }, handler)
    : createServer(handler)
  if (options.keepAliveMs !== undefined) server.keepAliveTimeout = options.keepAliveMs
  let connections = 0
  const sockets = new Set<Socket>()
  server.on(options.secure ? 'secureConnection' : 'connection', (socket: Socket) => {
    connections++
    sockets.add(socket)
    options.connected?.(socket)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  closing.push(
    () =>
      new Promise<void>(resolve => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  )
  const { port } = server.address() as AddressInfo
  return {
    url: new URL(`${options.secure ? 'https' : 'http'}://127.0.0.1:${port}/`),
    connections: () => connections
  }
}

function agentFor(
  url: URL,
  options: { timeoutMs?: number; ca?: string[]; maxBodyBytes?: number } = {},
  env = {}
): HttpAgent {
  const agent = new HttpAgent(url, { timeoutMs: 10_000, keepAlive: true, ...options }, env)
  closing.push(() => agent.close())
  return agent
}

const GET = (signal = new AbortController().signal) => ({ method: 'GET', headers: {}, signal })

describe('HttpAgent', () => {
  it('reads an answer, and sends the next request on the same connection', async () => {
    const server = await serve((request, response) => response.end(`you asked for ${request.url}`))
    const agent = agentFor(server.url)
    for (const path of ['/a', '/b']) {
      const answer = await agent.request(new URL(path, server.url), GET())
      expect(answer.status).toBe(200)
      expect(await answer.text()).toBe(`you asked for ${path}`)
    }
    expect(server.connections()).toBe(1)
  })

  it('sends the body with its length in bytes', async () => {
    const server = await serve((request, response) => {
      let body = ''
      request.on('data', chunk => (body += chunk))
      request.on('end', () => {
        response.setHeader('x-seen', `${request.headers['content-length']}:${body}`)
        response.end()
      })
    })
    const answer = await agentFor(server.url).request(server.url, {
      ...GET(),
      method: 'POST',
      body: '{"ü":1}'
    })
    expect(answer.header('X-Seen')).toBe('8:{"ü":1}')
    expect(answer.header('missing')).toBeUndefined()
    expect(await answer.text()).toBe('')
  })

  it('names the headers as what never came, when the server says nothing', async () => {
    const server = await serve(() => {})
    const error = await agentFor(server.url, { timeoutMs: 100 })
      .request(server.url, GET())
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HttpTimeout)
    expect(error).toMatchObject({ code: 'HEADERS_TIMEOUT' })
  })

  it('names the body when it stalls after the headers, and keeps nothing of it', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': '100' })
      response.write('{"partial":')
    })
    const answer = await agentFor(server.url, { timeoutMs: 100 }).request(server.url, GET())
    expect(answer.status).toBe(200)
    await expect(answer.text()).rejects.toMatchObject({ code: 'BODY_TIMEOUT' })
  })

  it('waits as long as the body keeps coming, however slowly in all', async () => {
    const server = await serve((_request, response) => {
      let sent = 0
      const timer = setInterval(() => {
        response.write('x')
        if (++sent === 6) {
          clearInterval(timer)
          response.end()
        }
      }, 40)
    })
    // Six chunks 40 ms apart: 240 ms in all, longer than the 150 ms allowed between two of them.
    const answer = await agentFor(server.url, { timeoutMs: 150 }).request(server.url, GET())
    expect(await answer.text()).toBe('xxxxxx')
  })

  it('rejects a body cut short by the server', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': '100' })
      response.write('{"partial":', () => response.socket?.destroy())
    })
    const answer = await agentFor(server.url).request(server.url, GET())
    await expect(answer.text()).rejects.toMatchObject({ code: 'ECONNRESET' })
  })

  it('ends with the signal’s reason, before the answer or in its body', async () => {
    const stop = new Error('stop')
    const silent = await serve(() => {})
    const before = new AbortController()
    const pending = agentFor(silent.url).request(silent.url, GET(before.signal))
    setTimeout(() => before.abort(stop), 50)
    await expect(pending).rejects.toBe(stop)

    const stalling = await serve((_request, response) => response.writeHead(200).write('{'))
    const during = new AbortController()
    const answer = await agentFor(stalling.url).request(stalling.url, GET(during.signal))
    const body = answer.text()
    during.abort(stop)
    await expect(body).rejects.toBe(stop)
  })

  it('refuses a header value HTTP cannot carry before anything leaves', async () => {
    const server = await serve((_request, response) => response.end())
    const error = await agentFor(server.url)
      .request(server.url, { ...GET(), headers: { authorization: 'Bearer a\nb' } })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'UND_ERR_INVALID_ARG' })
    expect(server.connections()).toBe(0)
  })
})

/** Whether the client ended the connection (its FIN came) before it closed. */
function endedByClient(socket: Socket): Promise<boolean> {
  return new Promise(resolve => {
    let ended = false
    socket.once('end', () => (ended = true))
    socket.once('close', () => resolve(ended))
  })
}

describe('HttpAgent: kept-alive connections', () => {
  it("closes an idle connection before the server's Keep-Alive timeout, by a margin", async () => {
    const closed: Array<Promise<boolean>> = []
    // The server announces `Keep-Alive: timeout=2` and closes idle connections after 2 s.
    const server = await serve((_request, response) => response.end('ok'), {
      keepAliveMs: 2000,
      connected: socket => closed.push(endedByClient(socket))
    })
    const answer = await agentFor(server.url).request(server.url, GET())
    expect(answer.header('keep-alive')).toBe('timeout=2')
    await answer.text()
    expect(await closed[0]).toBe(true)
  })

  it('closes an idle connection after a few seconds when the server gives no hint', async () => {
    const closed: Array<Promise<boolean>> = []
    // 0: the server keeps idle connections for ever and says nothing about it.
    const server = await serve((_request, response) => response.end('ok'), {
      keepAliveMs: 0,
      connected: socket => closed.push(endedByClient(socket))
    })
    const answer = await agentFor(server.url).request(server.url, GET())
    expect(answer.header('keep-alive')).toBeUndefined()
    await answer.text()
    expect(await closed[0]).toBe(true)
  })

  /** A server that resets each connection when its second request comes, unanswered. */
  async function resettingSecond(): Promise<{
    url: URL
    connections: () => number
    seen: string[]
  }> {
    const seen: string[] = []
    const served = new WeakMap<Socket, number>()
    const server = await serve((request, response) => {
      const socket = request.socket
      const count = (served.get(socket) ?? 0) + 1
      served.set(socket, count)
      seen.push(`${request.method} ${count}`)
      if (count === 2) socket.resetAndDestroy()
      else response.end('ok')
    })
    return { ...server, seen }
  }

  it('sends a GET again at once on a new connection when a kept one turns out closed', async () => {
    const server = await resettingSecond()
    const agent = agentFor(server.url)
    expect(await (await agent.request(server.url, GET())).text()).toBe('ok')
    const again = await agent.request(server.url, GET())
    expect(await again.text()).toBe('ok')
    expect(server.seen).toEqual(['GET 1', 'GET 2', 'GET 1'])
    expect(server.connections()).toBe(2)
  })

  it('never sends a POST twice: a kept connection reset under it fails it', async () => {
    const server = await resettingSecond()
    const agent = agentFor(server.url)
    await (await agent.request(server.url, GET())).text()
    const error = await agent
      .request(server.url, { ...GET(), method: 'POST', body: '{}' })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'ECONNRESET' })
    expect(server.seen).toEqual(['GET 1', 'POST 2'])
  })

  it('sends a request that must not be sent twice on a new connection', async () => {
    const server = await resettingSecond()
    const agent = agentFor(server.url)
    await (await agent.request(server.url, GET())).text()
    const answer = await agent.request(server.url, {
      ...GET(),
      method: 'POST',
      body: '{}',
      once: true
    })
    expect(await answer.text()).toBe('ok')
    expect(server.seen).toEqual(['GET 1', 'POST 1'])
    expect(server.connections()).toBe(2)
  })
})

describe('HttpAgent: answers that can never be read', () => {
  it('fails at once on headers larger than Node reads', async () => {
    const server = await serve((_request, response) => {
      response.setHeader('x-padding', 'x'.repeat(20_000))
      response.end('{}')
    })
    const error = await agentFor(server.url)
      .request(server.url, GET())
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HttpUnreadable)
    expect(error).toMatchObject({
      code: 'UNREADABLE_ANSWER',
      message: expect.stringMatching(/headers are larger/)
    })
  })

  // `constructor` and `__proto__` name what every JavaScript object has, not a decoder.
  it.each(['zstd', 'constructor', '__proto__'])(
    'refuses a compressed body in an encoding it did not ask for: %s',
    async encoding => {
      const server = await serve((_request, response) => {
        response.writeHead(200, {
          'content-encoding': encoding,
          'content-type': 'application/json'
        })
        response.end('(frames)')
      })
      const answer = await agentFor(server.url).request(server.url, GET())
      expect(answer.status).toBe(200)
      await expect(answer.text()).rejects.toMatchObject({
        code: 'UNREADABLE_ANSWER',
        message: `its body came compressed (${encoding}), which was not asked for`
      })
    }
  )

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync]
  ] as Array<[string, (data: Buffer) => Buffer]>)(
    'refuses a %s body over the most it holds, decoded, whatever came on the wire',
    async (encoding, compress) => {
      // 3 MB of one letter compress to a few KB: the cap counts what it would hold.
      const server = await serve((_request, response) => {
        response.writeHead(200, {
          'content-encoding': encoding,
          'content-type': 'application/json'
        })
        response.end(compress(Buffer.from(JSON.stringify('x'.repeat(3 * 1024 * 1024)))))
      })
      const agent = agentFor(server.url, { maxBodyBytes: 2 * 1024 * 1024 })
      const answer = await agent.request(server.url, GET())
      await expect(answer.text()).rejects.toMatchObject({
        code: 'UNREADABLE_ANSWER',
        message: 'its body is over 2 MB'
      })
      // The connection it came on is given up, not left half read: the next request still goes.
      const next = await agent.request(server.url, GET())
      expect(next.status).toBe(200)
    }
  )

  it('refuses a plain body over the most it holds as it comes, without waiting for its end', async () => {
    let written = 0
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      // Endless: only a reader that counts as it goes gets to refuse it.
      const more = (): void => {
        while (written < 64 * 1024 * 1024 && response.write('x'.repeat(64 * 1024)))
          written += 64 * 1024
        if (written < 64 * 1024 * 1024) response.once('drain', more)
      }
      more()
    })
    const agent = agentFor(server.url, { maxBodyBytes: 2 * 1024 * 1024 })
    const answer = await agent.request(server.url, GET())
    await expect(answer.text()).rejects.toMatchObject({
      code: 'UNREADABLE_ANSWER',
      message: 'its body is over 2 MB'
    })
    expect(written).toBeLessThan(16 * 1024 * 1024)
  })
})

describe('HttpAgent: compressed answers', () => {
  const JSON_TEXT = JSON.stringify({ logs: 'Building… ✓'.repeat(200) })

  it.each([
    ['gzip', gzipSync],
    ['x-gzip', gzipSync],
    ['deflate', deflateSync],
    // Without zlib's wrapper, as some servers send it.
    ['deflate', deflateRawSync],
    ['br', brotliCompressSync]
  ] as Array<[string, (data: Buffer) => Buffer]>)(
    'decodes a %s answer (%p)',
    async (encoding, compress) => {
      const server = await serve((_request, response) => {
        response.writeHead(200, {
          'content-encoding': encoding,
          'content-type': 'application/json'
        })
        response.end(compress(Buffer.from(JSON_TEXT)))
      })
      const answer = await agentFor(server.url).request(server.url, GET())
      expect(await answer.text()).toBe(JSON_TEXT)
    }
  )

  it('reads a plain answer as it is, without `Content-Encoding` or with identity', async () => {
    const server = await serve((request, response) => {
      if (request.url === '/identity') response.setHeader('content-encoding', 'identity')
      response.end(JSON_TEXT)
    })
    const agent = agentFor(server.url)
    expect(await (await agent.request(server.url, GET())).text()).toBe(JSON_TEXT)
    const identity = new URL('/identity', server.url)
    expect(await (await agent.request(identity, GET())).text()).toBe(JSON_TEXT)
  })

  it.each([
    ['cut off on the way', (gzipped: Buffer) => gzipped.subarray(0, gzipped.length - 12)],
    [
      'broken in between',
      (gzipped: Buffer) =>
        Buffer.concat([gzipped.subarray(0, 10), Buffer.from('not deflate data at all')])
    ],
    [
      'whose trailer claims 4 GB',
      (gzipped: Buffer) => {
        const lying = Buffer.from(gzipped)
        lying.writeUInt32LE(0xffffffff, lying.length - 4)
        return lying
      }
    ]
  ])('fails a gzip body %s as a broken body, not as an unreadable answer', async (_what, spoil) => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' })
      response.end(spoil(gzipSync(JSON_TEXT)))
    })
    const answer = await agentFor(server.url).request(server.url, GET())
    const error = await answer.text().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HttpBrokenBody)
    expect(error).toMatchObject({
      code: 'BROKEN_BODY',
      message: expect.stringMatching(/^its compressed body does not decode \(Z_[A-Z_]+\)$/)
    })
  })
})

describe('HttpAgent: the CAs it trusts', () => {
  it("adds `ca` to Node's default store, NODE_EXTRA_CA_CERTS included, rather than replacing it", async () => {
    const server = await serve((_request, response) => response.end('secret'), {
      secure: true,
      certificate: 'server'
    })
    const env = { NODE_EXTRA_CA_CERTS: join(TLS_DIR, 'ca.pem') }
    // The certificate's CA comes from the runner's extra file, not from `ca`.
    const agent = agentFor(server.url, { ca: [tls('coolify-test-ca.pem')] }, env)
    expect(await (await agent.request(server.url, GET())).text()).toBe('secret')
  })
})

describe('HttpAgent through a proxy', () => {
  async function proxy(options?: Parameters<typeof startProxy>[0]): Promise<ForwardingProxy> {
    const started = await startProxy(options)
    closing.push(() => started.close())
    return started
  }

  it('tunnels to an https target with TLS inside the tunnel, trusting the CA it is given', async () => {
    const server = await serve((_request, response) => response.end('secret'), { secure: true })
    const forwarder = await proxy()
    // A name only the proxy can reach: the certificate is for it, checked end to end.
    const target = new URL(`https://coolify.test:${server.url.port}/`)
    const agent = agentFor(
      target,
      { ca: [tls('coolify-test-ca.pem')] },
      { HTTPS_PROXY: forwarder.url }
    )
    expect(agent.proxy?.name).toBe(new URL(forwarder.url).host)
    for (let i = 0; i < 2; i++)
      expect(await (await agent.request(target, GET())).text()).toBe('secret')
    expect(forwarder.tunnels.map(tunnel => tunnel.target)).toEqual([
      `coolify.test:${server.url.port}`
    ])
  })

  it('names the target, not the proxy, in the Host of its CONNECT', async () => {
    const server = await serve((_request, response) => response.end('ok'), { secure: true })
    const forwarder = await proxy()
    const target = new URL(`https://coolify.test:${server.url.port}/`)
    const agent = agentFor(
      target,
      { ca: [tls('coolify-test-ca.pem')] },
      { HTTPS_PROXY: forwarder.url }
    )
    expect(await (await agent.request(target, GET())).text()).toBe('ok')
    expect(forwarder.tunnels).toMatchObject([
      { method: 'CONNECT', host: `coolify.test:${server.url.port}` }
    ])
  })

  it('sends a plain http request to the proxy in absolute form, not through a tunnel', async () => {
    const server = await serve((request, response) =>
      response.end(`${request.method} ${request.url}`)
    )
    const forwarder = await proxy()
    const target = new URL(`http://coolify.test:${server.url.port}/api/v1/version?x=1`)
    const agent = agentFor(target, {}, { HTTP_PROXY: forwarder.url })
    expect(await (await agent.request(target, GET())).text()).toBe('GET /api/v1/version?x=1')
    expect(forwarder.tunnels).toEqual([
      {
        method: 'GET',
        target: `coolify.test:${server.url.port}`,
        host: `coolify.test:${server.url.port}`
      }
    ])
  })

  it("checks TLS to an IP address against that address, not against 'localhost'", async () => {
    const forwarder = await proxy()
    const env = { HTTPS_PROXY: forwarder.url }
    const right = await serve((_request, response) => response.end('secret'), {
      secure: true,
      certificate: 'ip-test'
    })
    const address = new URL(`https://192.0.2.10:${right.url.port}/`)
    const agent = agentFor(address, { ca: [tls('ip-test-ca.pem')] }, env)
    expect(await (await agent.request(address, GET())).text()).toBe('secret')

    // A certificate for 127.0.0.1 and localhost is not one for 192.0.2.10.
    const wrong = await serve((_request, response) => response.end('secret'), {
      secure: true,
      certificate: 'server'
    })
    const other = new URL(`https://192.0.2.10:${wrong.url.port}/`)
    const error = await agentFor(other, { ca: [tls('ca.pem')] }, env)
      .request(other, GET())
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' })
  })

  it('fails the certificate check through the tunnel without the CA', async () => {
    const server = await serve((_request, response) => response.end('secret'), { secure: true })
    const forwarder = await proxy()
    const target = new URL(`https://coolify.test:${server.url.port}/`)
    const error = await agentFor(target, {}, { HTTPS_PROXY: forwarder.url })
      .request(target, GET())
      .catch((e: unknown) => e)
    expect((error as { code?: string }).code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE')
  })

  it.each([
    ['sent whole to it', false],
    ['on its CONNECT', true]
  ])(
    'sends the credentials of the proxy URL, and reports a refusal with its status: %s',
    async (_how, secure) => {
      const server = await serve((_request, response) => response.end(), { secure })
      const forwarder = await proxy({ credentials: 'me:p@ss' })
      const url = new URL(forwarder.url)
      const target = new URL(`${secure ? 'https' : 'http'}://coolify.test:${server.url.port}/`)
      const through = (credentials: string): HttpAgent =>
        agentFor(
          target,
          { ca: [tls('coolify-test-ca.pem')] },
          {
            HTTP_PROXY: `http://${credentials}@${url.host}`,
            HTTPS_PROXY: `http://${credentials}@${url.host}`
          }
        )
      const refused = await through('me:wrong')
        .request(target, GET())
        .catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(ProxyRefusal)
      expect(refused).toMatchObject({ status: 407, code: 'PROXY_REFUSED' })
      const answer = await through('me:p%40ss').request(target, GET())
      expect(answer.status).toBe(200)
      expect(forwarder.tunnels.map(tunnel => tunnel.method)).toEqual(
        secure ? ['CONNECT', 'CONNECT'] : ['GET', 'GET']
      )
    }
  )

  it('names the connection as what never came when the proxy never answers CONNECT, and close() ends it', async () => {
    const silent = await silentProxy()
    const env = { HTTPS_PROXY: silent.url }
    const target = new URL('https://coolify.test/')
    const timedOut = await agentFor(target, { timeoutMs: 100 }, env)
      .request(target, GET())
      .catch((e: unknown) => e)
    expect(timedOut).toMatchObject({ code: 'CONNECT_TIMEOUT' })

    const agent = agentFor(target, { timeoutMs: 600_000 }, env)
    const pending = agent.request(target, GET()).catch((e: unknown) => e)
    while (silent.connections() < 2) await new Promise(resolve => setTimeout(resolve, 5))
    agent.close()
    expect(await pending).toMatchObject({ message: expect.any(String) })
  })

  it('names the proxy, not Coolify, as what did not answer when it sits on CONNECT', async () => {
    const silent = await silentProxy()
    const target = new URL('https://coolify.test/')
    const timedOut = await agentFor(target, { timeoutMs: 100 }, { HTTPS_PROXY: silent.url })
      .request(target, GET())
      .catch((e: unknown) => e)
    const proxy = new URL(silent.url).host
    expect(describeNetworkFailure(timedOut, 'coolify.test', proxy)).toMatchObject({
      reason: `the proxy ${proxy} did not answer in time (CONNECT_TIMEOUT)`,
      transient: true,
      unsent: true
    })
  })

  it('ends a request at once when it is cancelled while the proxy sits on its CONNECT', async () => {
    const silent = await silentProxy()
    const target = new URL('https://coolify.test/')
    const agent = agentFor(target, { timeoutMs: 600_000 }, { HTTPS_PROXY: silent.url })
    const cancel = new AbortController()
    const pending = agent.request(target, GET(cancel.signal)).catch((e: unknown) => e)
    while (silent.connections() < 1) await new Promise(resolve => setTimeout(resolve, 5))
    const stop = new Error('cancelled')
    cancel.abort(stop)
    expect(await pending).toBe(stop)
  })
})

describe('HttpAgent: close() ends the connections still being opened', () => {
  it.each([
    ['a TLS handshake the server never answers', 'https://127.0.0.1:{port}/', {}],
    ['a CONNECT the proxy never answers', 'https://coolify.test/', { HTTPS_PROXY: '{url}' }],
    ['a request the proxy never answers', 'http://coolify.test/', { HTTP_PROXY: '{url}' }]
  ])(
    '%s, for several requests cancelled together',
    async (_what, site, proxyEnv) => {
      const silent = await silentProxy()
      const port = new URL(silent.url).port
      const target = new URL(site.replace('{port}', port))
      const env = Object.fromEntries(
        Object.entries(proxyEnv).map(([name, value]) => [name, value.replace('{url}', silent.url)])
      )
      const agent = agentFor(target, { timeoutMs: 600_000 }, env)
      const cancel = new AbortController()
      const pending = [1, 2, 3].map(() =>
        agent.request(target, GET(cancel.signal)).catch((e: unknown) => e)
      )
      while (silent.connections() < 3) await new Promise(resolve => setTimeout(resolve, 5))
      const stop = new Error('cancelled')
      cancel.abort(stop)
      expect(await Promise.all(pending)).toEqual([stop, stop, stop])
      agent.close()
      // Nothing of them is left to hold the process: the server sees every one closed.
      await silent.allClosed()
    },
    10_000
  )
})

/** A proxy that accepts connections and never answers anything on them. */
async function silentProxy(): Promise<{
  url: string
  connections: () => number
  allClosed: () => Promise<void>
}> {
  const sockets = new Set<Socket>()
  let connections = 0
  let closed = (): void => {}
  const silent = createTcpServer(socket => {
    connections++
    sockets.add(socket)
    // Read, never answered: a client's end is seen.
    socket.resume()
    socket.on('close', () => {
      sockets.delete(socket)
      if (sockets.size === 0) closed()
    })
  })
  await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve))
  closing.push(() => {
    for (const socket of sockets) socket.destroy()
    silent.close()
  })
  return {
    url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
    connections: () => connections,
    allClosed: () =>
      sockets.size === 0 ? Promise.resolve() : new Promise<void>(resolve => (closed = resolve))
  }
}
