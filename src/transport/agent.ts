import type { Socket } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import type { buildConnector as Connector } from 'undici'
import request from 'undici/lib/api/api-request.js'
import buildConnector from 'undici/lib/core/connect.js'
import Agent from 'undici/lib/dispatcher/agent.js'
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js'
import Pool from 'undici/lib/dispatcher/pool.js'
import { MAX_BODY_BYTES, readBody } from './body.js'
import { defaultCertificates } from './certificates.js'
import { codeOf, failure, proxyFailure, ProxyRefusal } from './errors.js'
import { proxyFor, type Proxy } from './proxy.js'
import { defaultPort, openTunnel } from './tunnel.js'

// undici's index gives every dispatcher its request methods (and loads them all); loaded part by
// part, the one used here is given here.
Object.assign(Dispatcher.prototype, { request })

// undici parses HTTP in WebAssembly. Once that code is warm, V8 compiles it again with its
// optimizing compiler in the background: some 60 ms of CPU and 20 MB of memory, more than the
// optimized parser could ever save on the few dozen answers a deployment is followed with. The
// budget a function spends before it is optimized is set out of reach, before the parser loads.
setFlagsFromString('--wasm-tiering-budget=2000000000')

/**
 * HTTP on undici, maintained with Node itself: its connections and timeouts. What is ours stays
 * here, on top: how a connection is opened (straight, or through the proxy a site takes), which
 * requests may be sent again, the CAs added to Node's own, and failures named by what went wrong.
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

type Kind = 'kept' | 'fresh'

/**
 * How a request reaches the site: `straight`; through a `tunnel` the proxy opens on CONNECT (TLS
 * to the site inside it); or sent whole to the proxy (`forward`: `GET http://host:8000/…`, as curl
 * sends plain http, since proxies allow CONNECT to port 443 only). Through an https:// proxy plain
 * http is tunnelled too.
 */
type Route = 'straight' | 'tunnel' | 'forward'

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
  readonly #sockets = new Sockets()
  readonly #route: Route
  /** `Proxy-Authorization`, when the proxy's URL carries credentials. */
  readonly #authorization: string | undefined
  readonly #keepAlive: boolean
  readonly #maxBodyBytes: number

  constructor(site: URL, options: HttpOptions, env: NodeJS.ProcessEnv = process.env) {
    this.proxy = proxyFor(site, env)
    this.#route = !this.proxy
      ? 'straight'
      : site.protocol === 'https:' || this.proxy.url.protocol === 'https:'
        ? 'tunnel'
        : 'forward'
    const credentials = this.proxy?.credentials
    this.#authorization = credentials && `Basic ${Buffer.from(credentials).toString('base64')}`
    this.#keepAlive = options.keepAlive ?? false
    this.#maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES
    const ca = options.ca?.length ? [...defaultCertificates(env), ...options.ca] : undefined
    const connect = this.#connector(options.timeoutMs, ca)
    this.#dispatchers = {
      kept: dispatcher(options.timeoutMs, connect),
      fresh: dispatcher(options.timeoutMs, connect)
    }
  }

  /**
   * Opens a connection as the route says, every socket of it held from the start: close() ends
   * those still connecting too, which undici would let finish (or time out) before it looked.
   */
  #connector(timeoutMs: number, ca: string[] | undefined): Connector.connector {
    const sockets = this.#sockets
    // The site's TLS, checked against its name or address: `ca` trusted besides Node's own.
    const toSite = buildConnector({ timeout: timeoutMs, ...(ca && { ca }) })
    const straight: Connector.connector = (options, callback) =>
      sockets.hold(toSite(options, callback))
    const proxy = this.proxy
    if (!proxy) return straight
    // The proxy's own TLS trusts what Node trusts: `ca` is for the site. No server name is sent
    // to a proxy given by its address (Node warns of one: DEP0123), as none is to such a site.
    const toProxy = buildConnector({ timeout: timeoutMs })
    const { hostname, host, port, protocol } = proxy.url
    const address = {
      hostname: hostname.replace(/^\[|\]$/g, ''),
      host,
      port: port || String(defaultPort(protocol)),
      protocol
    }
    // Before the tunnel, the only peer is the proxy: whatever fails, it is the proxy's.
    const reachProxy = (then: (socket: Socket) => void, callback: Connector.Callback): void => {
      sockets.hold(
        toProxy(address, (error, socket) => {
          if (error) callback(proxyFailure(error), null)
          else then(socket)
        })
      )
    }
    if (this.#route === 'forward') {
      return (_options, callback) => reachProxy(socket => callback(null, socket), callback)
    }
    return (options, callback) =>
      reachProxy(socket => {
        // undici gives the site's `host` as its URL has it: without the port when it is the default.
        const host = options.host ?? options.hostname
        const authority = options.port ? host : `${host}:${defaultPort(options.protocol)}`
        openTunnel(socket, authority, this.#authorization, timeoutMs, error => {
          if (error) callback(error, null)
          else if (options.protocol === 'https:') {
            sockets.hold(toSite({ ...options, httpSocket: socket }, callback))
          } else callback(null, socket)
        })
      }, callback)
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
    // Sent whole to the proxy: its path the full URL, with the proxy's credentials.
    const forward = this.#route === 'forward'
    const path = url.pathname + url.search
    const authorization = forward && this.#authorization
    let abort = (): void => {}
    // Ends at once on an abort, even while its connection is still being opened: undici applies
    // an abort only once the request is on a connection. That connection, once open, serves the
    // next request; close() ends it if none comes.
    const aborted = new Promise<never>((_resolve, reject) => {
      abort = () => reject(signal.reason)
      signal.addEventListener('abort', abort, { once: true })
    })
    aborted.catch(() => {})
    let answer: Dispatcher.ResponseData
    try {
      answer = await Promise.race([
        dispatcher.request({
          origin: url.origin,
          path: forward ? url.origin + path : path,
          method: request.method as Dispatcher.HttpMethod,
          headers: authorization
            ? { ...request.headers, 'proxy-authorization': authorization }
            : request.headers,
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
      signal.removeEventListener('abort', abort)
    }
    const { statusCode, headers, body } = answer
    // Until its body is read, a failure of the answer is kept, not thrown (a probe never reads it).
    body.on('error', () => {})
    // Sent whole to the proxy, a 407 is the proxy's own answer; through a tunnel, the site's.
    if (statusCode === 407 && forward) {
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

  /** Closes every connection, those under way and those still being opened, so that the process can exit. */
  close(): void {
    // The dispatchers first: they open no new connection once closed.
    for (const { dispatcher } of Object.values(this.#dispatchers)) {
      dispatcher.destroy().catch(() => {})
    }
    this.#sockets.destroy()
  }
}

/** A dispatcher whose connections `connect` opens: whether one of them sits idle, too. */
function dispatcher(timeoutMs: number, connect: Connector.connector): Connections {
  const pools = new Set<Pool>()
  const factory = (origin: string | URL, options: object): Pool => {
    const pool = new Pool(origin, {
      ...options,
      connect,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: IDLE_MS,
      keepAliveMaxTimeout: IDLE_MS,
      keepAliveTimeoutThreshold: IDLE_MARGIN_MS
    })
    pools.add(pool)
    return pool
  }
  const idle = (): boolean => [...pools].some(pool => !pool.closed && pool.stats.free > 0)
  return { dispatcher: new Agent({ factory }), idle }
}

/** The sockets an agent opened that are not closed yet, from the moment each is opened. */
class Sockets {
  readonly #open = new Set<Socket>()
  #closed = false

  hold(socket: Socket): void {
    if (this.#closed) return void socket.destroy(new Error('the connections were closed'))
    this.#open.add(socket)
    socket.once('close', () => this.#open.delete(socket))
  }

  /** Ends them all, with an error: a connect still under way calls back, and its timer stops. */
  destroy(): void {
    this.#closed = true
    for (const socket of this.#open) socket.destroy(new Error('the connections were closed'))
  }
}
