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
import { HttpAgent, HttpTimeout, ProxyRefusal } from '../src/http.js'
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
  options: { secure?: boolean } = {}
): Promise<{ url: URL; connections: () => number }> {
  const server = options.secure
    ? createTlsServer({ key: tls('coolify-test-key.pem'), cert: tls('coolify-test.pem') }, handler)
    : createServer(handler)
  let connections = 0
  const sockets = new Set<Socket>()
  server.on(options.secure ? 'secureConnection' : 'connection', (socket: Socket) => {
    connections++
    sockets.add(socket)
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
  options: { timeoutMs?: number; ca?: string[] } = {},
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
    expect(error).toMatchObject({ code: 'ERR_INVALID_CHAR' })
    expect(server.connections()).toBe(0)
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

  it('fails the certificate check through the tunnel without the CA', async () => {
    const server = await serve((_request, response) => response.end('secret'), { secure: true })
    const forwarder = await proxy()
    const target = new URL(`https://coolify.test:${server.url.port}/`)
    const error = await agentFor(target, {}, { HTTPS_PROXY: forwarder.url })
      .request(target, GET())
      .catch((e: unknown) => e)
    expect((error as { code?: string }).code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE')
  })

  it('sends the credentials of the proxy URL, and reports a refusal with its status', async () => {
    const server = await serve((_request, response) => response.end())
    const forwarder = await proxy({ credentials: 'me:p@ss' })
    const url = new URL(forwarder.url)
    const through = (credentials: string): HttpAgent =>
      agentFor(
        new URL('http://coolify.test/'),
        {},
        {
          HTTP_PROXY: `http://${credentials}@${url.host}`
        }
      )
    const target = new URL(`http://coolify.test:${server.url.port}/`)
    const refused = await through('me:wrong')
      .request(target, GET())
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ProxyRefusal)
    expect(refused).toMatchObject({ status: 407, code: 'PROXY_REFUSED' })
    const answer = await through('me:p%40ss').request(target, GET())
    expect(answer.status).toBe(200)
  })

  it('names the connection as what never came when the proxy never answers, and close() ends it', async () => {
    const sockets = new Set<Socket>()
    const silent = createTcpServer(socket => void sockets.add(socket))
    await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve))
    closing.push(() => {
      for (const socket of sockets) socket.destroy()
      silent.close()
    })
    const env = { HTTP_PROXY: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` }
    const target = new URL('http://coolify.test/')
    const timedOut = await agentFor(target, { timeoutMs: 100 }, env)
      .request(target, GET())
      .catch((e: unknown) => e)
    expect(timedOut).toMatchObject({ code: 'CONNECT_TIMEOUT' })

    const agent = agentFor(target, { timeoutMs: 600_000 }, env)
    const pending = agent.request(target, GET()).catch((e: unknown) => e)
    while (sockets.size < 2) await new Promise(resolve => setTimeout(resolve, 5))
    agent.close()
    expect(await pending).toMatchObject({ message: expect.any(String) })
  })
})
