/** The HTTP side: read and record each request, apply an injected fault or write the reply. */
import { createServer } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { Faults, faultName, statusReply, writeGarbled, writeTruncated } from './faults.js'
import { API_PREFIX } from './pipeline.js'
import type { Handler } from './pipeline.js'
import { nginxBadGateway } from './reply.js'
import type { Reply } from './reply.js'
import type { RecordedRequest } from './types.js'

export interface Listening {
  url: string
  close(): Promise<void>
}

/** What nginx's `gzip_min_length` leaves plain, its default. */
const GZIP_MIN_LENGTH = 20

/**
 * Writes the reply, its JSON gzipped when `gzip` (see FakeOptions.gzip); returns its body's size
 * on the wire and before compression.
 */
function write(
  res: ServerResponse,
  reply: Reply,
  gzip = false
): { responseBytes: number; decodedBytes: number } {
  const plain = Buffer.from(reply.body)
  const json = /^application\/json\b/i.test(reply.headers['Content-Type'] ?? '')
  const compress = gzip && json && plain.length >= GZIP_MIN_LENGTH
  const body = compress ? gzipSync(plain, { level: 6 }) : plain
  const headers = compress ? { 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' } : {}
  res.writeHead(reply.status, {
    ...reply.headers,
    ...headers,
    'Content-Length': String(body.length)
  })
  res.end(body)
  return { responseBytes: body.length, decodedBytes: plain.length }
}

/** Whether an `Accept-Encoding` admits gzip (`gzip;q=0` refuses it). */
function acceptsGzip(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '')
  return value.split(',').some(part => {
    const [coding, ...params] = part.trim().toLowerCase().split(';')
    const q = params.map(p => p.trim()).find(p => p.startsWith('q='))
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0)
  })
}

/** Faults name paths relative to /api/v1. */
function faultPath(path: string): string {
  return path === API_PREFIX || path.startsWith(API_PREFIX + '/')
    ? path.slice(API_PREFIX.length) || '/'
    : path
}

export async function listen(
  handler: Handler,
  faults: Faults,
  requests: RecordedRequest[],
  {
    tls,
    gzip = false,
    clock = Date.now
  }: { tls?: { key: string; cert: string }; gzip?: boolean; clock?: () => number } = {}
): Promise<Listening> {
  let home = ''

  function respond(req: IncomingMessage, res: ServerResponse, body: string): void {
    const url = new URL(req.url ?? '/', home)
    const method = req.method ?? 'GET'
    const query = Object.fromEntries(url.searchParams)
    const recorded: RecordedRequest = {
      method,
      path: url.pathname,
      query,
      headers: { ...req.headers },
      body,
      at: Date.now()
    }
    requests.push(recorded)
    // Coolify's nginx dates its answers by the clock its PHP writes `updated_at` and `finished_at`
    // by, one container's (docker/production/Dockerfile 3, 71). Node would date them by the real one.
    // Read once the request is counted, as a clock may move with each (scripts/pictures.ts).
    res.setHeader('Date', new Date(clock()).toUTCString())
    const request = { method, path: url.pathname, query, headers: req.headers, body }
    const reply = (): Reply => {
      try {
        return handler(request, home)
      } catch (error) {
        // A bug in the fake, not a scripted failure: make it visible to the test.
        return { status: 500, headers: {}, body: `fake-coolify: ${String(error)}` }
      }
    }

    const compress = gzip && acceptsGzip(req.headers['accept-encoding'])
    const fault = faults.take(method, faultPath(url.pathname))
    if (fault === undefined) {
      const answer = reply()
      recorded.status = answer.status
      Object.assign(recorded, write(res, answer, compress))
      return
    }
    recorded.fault = faultName(fault)
    if (fault === 'reset') req.socket.resetAndDestroy()
    else if (fault === 'hang')
      return // answered never; close() drops the socket
    else if (fault === 'lost')
      void reply() // acted on, answered never
    else if (fault === 'html') write(res, nginxBadGateway())
    else if (fault === 'truncate') writeTruncated(res, reply())
    else if (fault === 'garbled') writeGarbled(res, reply())
    else if ('delayMs' in fault) {
      // Decided now, delivered later; close() drops the socket if the test ends first.
      const answer = reply()
      recorded.status = answer.status
      setTimeout(() => {
        if (!res.destroyed) Object.assign(recorded, write(res, answer, compress))
      }, fault.delayMs).unref()
    } else {
      if (fault.acted) reply()
      write(res, statusReply(fault))
    }
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => respond(req, res, Buffer.concat(chunks).toString('utf8')))
  }
  const server = tls ? createTlsServer(tls, onRequest) : createServer(onRequest)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  home = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    url: home,
    close: () =>
      new Promise<void>(resolve => {
        server.close(() => resolve())
        // Keep-alive and hanging connections would hold close() open.
        server.closeAllConnections()
      })
  }
}
