import { readFileSync } from 'node:fs'
import type { Readable, Transform } from 'node:stream'
import tls from 'node:tls'
import zlib from 'node:zlib'
import api from 'undici/lib/api/index.js'
import Agent from 'undici/lib/dispatcher/agent.js'
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js'
import Pool from 'undici/lib/dispatcher/pool.js'
import ProxyAgent from 'undici/lib/dispatcher/proxy-agent.js'
import { proxyFor, type Proxy } from './proxy.js'

// undici's index gives every dispatcher its request methods; loaded part by part, they are given here.
Object.assign(Dispatcher.prototype, api)

/**
 * HTTP on undici, maintained with Node itself: its connections, timeouts and proxying. What is
 * ours stays here, on top: which proxy a site takes, which requests may be sent again, the CAs
 * added to Node's own, and failures named by what went wrong.
 */

/** How the requests to one site are made. */
export interface HttpOptions {
  /** Longest wait to connect, for the answer's headers, and between chunks of its body. */
  timeoutMs: number
  /** CAs to trust (PEM) besides Node's default store (its own list, NODE_EXTRA_CA_CERTS…). */
  ca?: string[]
  /** Keeps connections open between requests (the client's many reads); off for a single request. */
  keepAlive?: boolean
  /** The most a body may hold, decoded: MAX_BODY_BYTES unless given. */
  maxBodyBytes?: number
}

export interface HttpRequest {
  method: string
  headers: Record<string, string>
  body?: string
  signal: AbortSignal
  /**
   * Never sent twice (a deploy): it goes on a new connection, which no server can have closed
   * while it sat idle.
   */
  once?: boolean
}

/** An answer whose headers have arrived; its body is still to be read. */
export interface HttpAnswer {
  status: number
  /** A header's value (the first, when it came more than once). */
  header(name: string): string | undefined
  /** The body as text: rejected when the connection ends or stalls before the body's end. */
  text(): Promise<string>
  /** Bytes the body took on the wire, compressed or not: all of it once `text()` has read it. */
  wireBytes(): number
}

/**
 * Why a request got no answer in time. Its code says at which stage: before a connection
 * (`CONNECT_TIMEOUT`: nothing was sent), before the headers, or between chunks of the body.
 */
export class HttpTimeout extends Error {
  constructor(readonly code: 'CONNECT_TIMEOUT' | 'HEADERS_TIMEOUT' | 'BODY_TIMEOUT') {
    super(`no answer in time (${code})`)
  }
}

/**
 * An answer that can never be read, however often it is asked for (headers larger than Node
 * reads): the reason says what was wrong with it.
 */
export class HttpUnreadable extends Error {
  readonly code = 'UNREADABLE_ANSWER'
}

/**
 * A compressed body that does not decode: cut off on the way, or broken by something in between.
 * Asked for again like an answer cut short.
 */
export class HttpBrokenBody extends Error {
  readonly code = 'BROKEN_BODY'
}

/** A failure of the connection to the proxy itself (its TLS certificate, say), not past it. */
export class ProxyFailure extends Error {
  readonly code: string
  constructor(override readonly cause: Error & { code?: string }) {
    super(`the proxy failed: ${cause.message}`)
    this.code = cause.code ?? ''
  }
}

/** The proxy's refusal to open a tunnel: its status says why (407: it wants credentials). */
export class ProxyRefusal extends Error {
  readonly code = 'PROXY_REFUSED'
  constructor(readonly status: number) {
    super(`the proxy answered ${status} to CONNECT`)
  }
}

/**
 * How long a connection may sit idle before it is closed: servers and the proxies before them
 * close idle ones (Apache after 5 s; firewalls drop them silently), and a request sent on one
 * they closed is lost. Shorter when the server's `Keep-Alive: timeout=N` says so, by a margin.
 */
const IDLE_MS = 4000
const IDLE_MARGIN_MS = 1000
/** Methods a request may be sent again with: the server does the same however often it gets it. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])
/** How a connection the server closed fails the request on it, before any answer. */
const STALE_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'ECONNABORTED'])
/** undici's timeouts, by the stage they name. */
const TIMEOUTS: Record<string, HttpTimeout['code']> = {
  UND_ERR_CONNECT_TIMEOUT: 'CONNECT_TIMEOUT',
  UND_ERR_HEADERS_TIMEOUT: 'HEADERS_TIMEOUT',
  UND_ERR_BODY_TIMEOUT: 'BODY_TIMEOUT'
}

type Kind = 'kept' | 'fresh'

/** The connections of one kind, and whether one sits idle, kept from an earlier answer. */
interface Connections {
  dispatcher: Dispatcher
  idle(): boolean
}

/** The connections to one site, straight or through the runner's proxy for it. */
export class HttpAgent {
  /** The outbound proxy the requests go through, when the runner has one for this site. */
  readonly proxy: Proxy | undefined
  /**
   * `kept`: connections kept open between requests (when `keepAlive`); `fresh`: a new connection
   * for each request, closed after its answer.
   */
  readonly #dispatchers: Record<Kind, Connections>
  readonly #make: () => Connections
  readonly #keepAlive: boolean
  readonly #maxBodyBytes: number
  /** CONNECTs to the proxy still waiting for its answer. */
  readonly #tunnels = new Set<AbortController>()
  /** Requests still waiting for their answer's headers. */
  #waiting = 0

  constructor(site: URL, options: HttpOptions, env: NodeJS.ProcessEnv = process.env) {
    this.proxy = proxyFor(site, env)
    this.#keepAlive = options.keepAlive ?? false
    this.#maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES
    const ca = options.ca?.length ? [...defaultCertificates(env), ...options.ca] : undefined
    this.#make = () => this.#dispatcher(site, options.timeoutMs, ca)
    this.#dispatchers = { kept: this.#make(), fresh: this.#make() }
  }

  #dispatcher(site: URL, timeoutMs: number, ca: string[] | undefined): Connections {
    const timing = {
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: IDLE_MS,
      keepAliveMaxTimeout: IDLE_MS,
      keepAliveTimeoutThreshold: IDLE_MARGIN_MS
    }
    // The target's TLS, checked against its name or address: `ca` trusted besides Node's own.
    const targetTls = { timeout: timeoutMs, ...(ca && { ca }) }
    // Every pool of connections it opens, to the site or to the proxy: whether one sits idle.
    const pools = new Set<Pool>()
    const factory = (origin: string | URL, opts: object): Pool => {
      const pool = new Pool(origin, { ...opts, ...timing })
      pools.add(pool)
      return pool
    }
    const idle = (): boolean => [...pools].some(pool => !pool.closed && pool.stats.free > 0)
    const proxy = this.proxy
    if (!proxy) return { dispatcher: new Agent({ connect: targetTls, factory }), idle }
    const tunnels = this.#tunnels
    const dispatcher = new ProxyAgent({
      ...timing,
      uri: proxy.url.href,
      ...(proxy.credentials && {
        token: `Basic ${Buffer.from(proxy.credentials).toString('base64')}`
      }),
      // Plain http goes to the proxy in absolute form (`GET http://host:8000/…`), as curl sends
      // it: proxies allow CONNECT to port 443 only. https is tunnelled, TLS inside the tunnel;
      // so is plain http through an https:// proxy, which undici sends nothing else to.
      proxyTunnel: site.protocol === 'https:' || proxy.url.protocol === 'https:',
      requestTls: targetTls,
      // The proxy's own TLS trusts what Node trusts: `ca` is for the target.
      proxyTls: { timeout: timeoutMs },
      clientFactory: (origin, opts) => new TunnelPool(origin, { ...opts, ...timing }, tunnels),
      factory
    })
    return { dispatcher, idle }
  }

  /**
   * Sends a request; resolves once the answer's headers are in. A request that may be sent again
   * is, at once and on a new connection, when a kept connection turns out closed before any
   * answer: the server closed it while it sat idle, and never saw the request.
   */
  async request(url: URL, request: HttpRequest): Promise<HttpAnswer> {
    const kept = this.#keepAlive && !request.once
    // It goes on a connection kept from an earlier answer, which the server may have closed.
    const reused = kept && this.#dispatchers.kept.idle()
    try {
      return await this.#send(url, request, kept ? 'kept' : 'fresh')
    } catch (error) {
      const stale = reused && STALE_CODES.has(codeOf(error))
      if (!stale || !IDEMPOTENT.has(request.method) || request.signal.aborted) throw error
      return this.#send(url, request, 'fresh')
    }
  }

  async #send(url: URL, request: HttpRequest, kind: Kind): Promise<HttpAnswer> {
    const { signal } = request
    const { dispatcher } = this.#dispatchers[kind]
    if (signal.aborted) throw signal.reason
    this.#waiting++
    let abort = (): void => {}
    // Ends at once on an abort, even while a tunnel is still being opened: undici applies an
    // abort only once the request is on a connection.
    const aborted = new Promise<never>((_resolve, reject) => {
      abort = () => {
        reject(signal.reason)
        // A tunnel no other request waits for is closed with the request that waits for it;
        // undici would open another for the request, which it ends only once connected.
        if (this.#waiting === 1 && this.#tunnels.size > 0) {
          for (const tunnel of this.#tunnels) tunnel.abort(signal.reason)
          this.#dispatchers[kind] = this.#make()
          dispatcher.destroy().catch(() => {})
        }
      }
      signal.addEventListener('abort', abort, { once: true })
    })
    aborted.catch(() => {})
    let answer: Dispatcher.ResponseData
    try {
      answer = await Promise.race([
        dispatcher.request({
          origin: url.origin,
          path: url.pathname + url.search,
          method: request.method as Dispatcher.HttpMethod,
          headers: request.headers,
          body: request.body,
          signal,
          // Closed after its answer: the next one of its kind gets a new connection.
          reset: kind === 'fresh'
        }),
        aborted
      ])
    } catch (error) {
      throw signal.aborted ? signal.reason : failure(error)
    } finally {
      this.#waiting--
      signal.removeEventListener('abort', abort)
    }
    const { statusCode, headers, body } = answer
    // Until its body is read, a failure of the answer is kept, not thrown (a probe never reads it).
    body.on('error', () => {})
    // Through a proxy in absolute form, a 407 is the proxy's own answer.
    if (statusCode === 407 && this.proxy && url.protocol === 'http:') {
      body.destroy()
      throw new ProxyRefusal(407)
    }
    const header = (name: string): string | undefined => {
      const value = headers[name.toLowerCase()]
      return Array.isArray(value) ? value[0] : value
    }
    let wire = 0
    return {
      status: statusCode,
      header,
      wireBytes: () => wire,
      text: async () => {
        try {
          const max = this.#maxBodyBytes
          const text = await readBody(body, header('content-encoding'), max, n => (wire += n))
          // undici frees the connection for the next request a turn after the body's end.
          await new Promise(resolve => setImmediate(resolve))
          return text
        } catch (error) {
          throw signal.aborted ? signal.reason : failure(error)
        }
      }
    }
  }

  /** Closes every connection, those under way included, so that the process can exit. */
  close(): void {
    for (const tunnel of this.#tunnels) tunnel.abort()
    for (const { dispatcher } of Object.values(this.#dispatchers)) {
      dispatcher.destroy().catch(() => {})
    }
  }
}

/**
 * The connections to the proxy that carry CONNECT: each tunnel cancellable (the request that
 * waits for it may end), and its failures in words of the proxy, not of the target.
 */
class TunnelPool extends Pool {
  constructor(
    origin: string | URL,
    options: Pool.Options,
    private readonly tunnels: Set<AbortController>
  ) {
    super(origin, options)
  }

  // ProxyAgent asks for its tunnels with the promise form.
  override connect(options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData>
  override connect(
    options: Dispatcher.ConnectOptions,
    callback: (err: Error | null, data: Dispatcher.ConnectData) => void
  ): void
  override connect(
    options: Dispatcher.ConnectOptions,
    callback?: (err: Error | null, data: Dispatcher.ConnectData) => void
  ): Promise<Dispatcher.ConnectData> | void {
    if (callback) return super.connect(options, callback)
    const tunnel = new AbortController()
    this.tunnels.add(tunnel)
    return super
      .connect({ ...options, signal: tunnel.signal })
      .then(
        answer => {
          if (answer.statusCode === 200) return answer
          answer.socket.on('error', () => {}).destroy()
          throw new ProxyRefusal(answer.statusCode)
        },
        (error: Error & { code?: string }) => {
          if (tunnel.signal.aborted) throw tunnel.signal.reason ?? error
          const stage = TIMEOUTS[error.code ?? '']
          // Before the tunnel, the only peer is the proxy: whatever failed, it is the proxy's.
          throw new ProxyFailure(stage ? new HttpTimeout('CONNECT_TIMEOUT') : error)
        }
      )
      .finally(() => this.tunnels.delete(tunnel))
  }
}

/**
 * The encodings every request accepts (`Accept-Encoding`), each with its decoder: Coolify's image
 * gzips JSON, and a build log's JSON shrinks about tenfold.
 */
const DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress()
}
export const ACCEPT_ENCODING = 'gzip, deflate, br'
/** The most a body may hold decoded: a long build log is a few MB; past this it is refused, not held. */
export const MAX_BODY_BYTES = 256 * 1024 * 1024

/**
 * A body as text, decoded as its `Content-Encoding` says, within `maxBytes`; `received` is told of
 * each chunk's size as it came on the wire.
 */
async function readBody(
  body: Readable,
  contentEncoding = '',
  maxBytes: number,
  received: (bytes: number) => void
): Promise<string> {
  const encoding = contentEncoding.trim().toLowerCase()
  const plain = encoding === '' || encoding === 'identity'
  const decoder = plain ? undefined : DECODERS[encoding]
  if (!plain && decoder === undefined) {
    body.destroy()
    throw new HttpUnreadable(`its body came compressed (${encoding}), which was not asked for`)
  }
  const decoded = decoder ? body.pipe(decoder()) : body
  // A failure of the connection ends the reading of what it decodes.
  if (decoded !== body) {
    body.on('error', error => decoded.destroy(error))
    body.on('data', (chunk: Buffer) => received(chunk.length))
  }
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of decoded as AsyncIterable<Buffer>) {
      if (decoded === body) received(chunk.length)
      size += chunk.length
      if (size > maxBytes) throw new HttpUnreadable(`its body is over ${megabytes(maxBytes)} MB`)
      chunks.push(chunk)
    }
  } finally {
    // Left unread, the rest would hold the connection: it is closed instead.
    if (!body.readableEnded) body.destroy()
  }
  return Buffer.concat(chunks).toString('utf8')
}

function megabytes(bytes: number): string {
  return String(Math.round((bytes / 1024 / 1024) * 100) / 100)
}

/** The failure as the client reads it: ours when we have a word for it, undici's otherwise. */
function failure(error: unknown): unknown {
  // undici wraps a failure of the tunnel in errors of its own.
  let current = error
  for (let depth = 0; current instanceof Error && depth < 3; depth++) {
    if (current instanceof ProxyFailure || current instanceof ProxyRefusal) return current
    if (current instanceof HttpTimeout) return current
    current = current.cause
  }
  const code = codeOf(error)
  if (TIMEOUTS[code]) return new HttpTimeout(TIMEOUTS[code])
  // zlib's codes: Z_DATA_ERROR, Z_BUF_ERROR (cut off); brotli's: ERR__ERROR_FORMAT_…
  if (code.startsWith('Z_') || code.startsWith('ERR__ERROR')) {
    return new HttpBrokenBody(`its compressed body does not decode (${code})`)
  }
  if (code === 'UND_ERR_HEADERS_OVERFLOW') {
    return new HttpUnreadable('its headers are larger than Node reads (16 KB)')
  }
  if (code === 'UND_ERR_SOCKET') {
    return Object.assign(new Error('the connection closed before the answer ended'), {
      code: 'ECONNRESET',
      cause: error
    })
  }
  if (/Proxy Authentication Required/.test((error as Error)?.message ?? '')) {
    return new ProxyRefusal(407)
  }
  return error
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' ? code : ''
}

/**
 * The CAs Node trusts by default: its own list, the runner's NODE_EXTRA_CA_CERTS and, where Node
 * reads it, the system's store. Node 20 has no call for that store: its own list and the extra
 * file then.
 */
function defaultCertificates(env: NodeJS.ProcessEnv): string[] {
  const store = (tls as { getCACertificates?: (type: string) => string[] }).getCACertificates
  if (store) return store('default')
  const extra = env.NODE_EXTRA_CA_CERTS
  let added: string[] = []
  if (extra) {
    try {
      added = readFileSync(extra, 'utf8').match(PEM_CERTIFICATE) ?? []
    } catch {
      // Node itself only warns about a file it cannot read.
    }
  }
  return [...tls.rootCertificates, ...added]
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g
