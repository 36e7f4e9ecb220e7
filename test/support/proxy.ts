/**
 * A forwarding proxy on loopback, as companies put in front of self-hosted runners: it answers
 * CONNECT (the tunnel the action opens for http and https targets alike), records each one, and
 * connects every tunnel to 127.0.0.1 on the port asked for, whatever the host name — so names
 * that resolve nowhere (`coolify.test`) reach the fakes only through it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import { connect, type AddressInfo, type Socket } from 'node:net'

export interface ProxyOptions {
  /** `user:password` it requires (Basic), answering 407 without. */
  credentials?: string
  /** Answer every tunnel with this status instead of connecting it. */
  refuse?: number
  /** Serve the proxy itself over TLS (an https:// proxy) with this key and certificate. */
  tls?: { key: string; cert: string }
}

export interface Tunnel {
  /** `host:port` as asked for. */
  target: string
  /** The CONNECT request's Host header. */
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
  const refuse = (_request: IncomingMessage, response: ServerResponse): void => {
    // Plain forwarding of absolute URLs is not needed: the action always tunnels.
    response.writeHead(405).end()
  }
  const server = options.tls ? createTlsServer(options.tls, refuse) : createServer(refuse)
  server.on('connect', (request: IncomingMessage, client: Socket) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => client.destroy())
    const target = request.url ?? ''
    const authorization = request.headers['proxy-authorization']
    tunnels.push({ target, host: request.headers.host, authorization })
    const expected =
      options.credentials && `Basic ${Buffer.from(options.credentials).toString('base64')}`
    if (expected && authorization !== expected) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n')
      return
    }
    if (options.refuse) {
      client.end(`HTTP/1.1 ${options.refuse} Refused\r\nContent-Length: 0\r\n\r\n`)
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
