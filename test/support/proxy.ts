/**
 * A forwarding proxy on loopback, as companies put in front of self-hosted runners: it answers
 * CONNECT (the tunnel the action opens for https targets) and requests in absolute form (plain
 * http ones), records each, and sends every one to 127.0.0.1 on the port asked for, whatever the
 * host name — so names that resolve nowhere (`coolify.test`) reach the fakes only through it.
 */
import {
  createServer,
  request as forward,
  type IncomingMessage,
  type ServerResponse
} from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import { connect, type AddressInfo, type Socket } from 'node:net'

export interface ProxyOptions {
  /** `user:password` it requires (Basic), answering 407 without. */
  credentials?: string
  /** Answer every request with this status instead of passing it on. */
  refuse?: number
  /** Serve the proxy itself over TLS (an https:// proxy) with this key and certificate. */
  tls?: { key: string; cert: string }
}

export interface Tunnel {
  /** `host:port` as asked for: by CONNECT, or by the absolute URL of a plain request. */
  target: string
  /** `CONNECT`, or the method of a request in absolute form. */
  method: string
  /** The request's Host header. */
  host?: string
  authorization?: string
}

export interface ForwardingProxy {
  /** `http://127.0.0.1:PORT`, or https with `tls`. */
  url: string
  tunnels: Tunnel[]
  close(): Promise<void>
}

export async function startProxy(options: ProxyOptions = {}): Promise<ForwardingProxy> {
  const tunnels: Tunnel[] = []
  const sockets = new Set<Socket>()
  const expected =
    options.credentials && `Basic ${Buffer.from(options.credentials).toString('base64')}`
  /** The status to answer instead of passing the request on, if any. */
  const refusal = (request: IncomingMessage, target: string): number | undefined => {
    const authorization = request.headers['proxy-authorization']
    tunnels.push({
      target,
      method: request.method ?? '',
      host: request.headers.host,
      authorization
    })
    if (expected && authorization !== expected) return 407
    return options.refuse
  }
  const plain = (request: IncomingMessage, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', 'http://invalid')
    const refused = refusal(request, url.host)
    if (refused) return void response.writeHead(refused).end()
    const headers = { ...request.headers }
    delete headers['proxy-authorization']
    const upstream = forward(
      {
        host: '127.0.0.1',
        port: url.port || 80,
        method: request.method,
        path: url.pathname + url.search,
        headers
      },
      answer => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      }
    )
    upstream.on('error', () => response.destroy())
    request.pipe(upstream)
  }
  const server = options.tls ? createTlsServer(options.tls, plain) : createServer(plain)
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  server.on('connect', (request: IncomingMessage, client: Socket) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => client.destroy())
    const target = request.url ?? ''
    const refused = refusal(request, target)
    if (refused) {
      client.end(`HTTP/1.1 ${refused} Refused\r\nContent-Length: 0\r\n\r\n`)
      return
    }
    const port = Number(target.split(':').pop())
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      upstream.pipe(client)
      client.pipe(upstream)
    })
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.on('error', () => client.destroy())
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tunnels,
    close: () =>
      new Promise<void>(resolve => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
