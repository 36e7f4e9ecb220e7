import { readFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import { isIP, type Socket } from 'node:net'
import tls, { TLSSocket } from 'node:tls'
import { proxyFor, type Proxy } from './proxy.js'

/**
 * HTTP on Node's own `http` and `https`, which start in a fraction of the time a client library
 * takes to load: the step's first request goes out as soon as a bare script's would.
 */

/** How the requests to one site are made. */
export interface HttpOptions {
  /** Longest wait to connect, for the answer's headers, and between chunks of its body. */
  timeoutMs: number
  /** CAs to trust (PEM) besides Node's default store (its own list, NODE_EXTRA_CA_CERTS…). */
  ca?: string[]
  /** Keeps connections open between requests (the client's many reads); off for a single request. */
  keepAlive?: boolean
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
/** How a connection the server closed while it sat idle fails the next request on it. */
const STALE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED'])

/** The connections to one site, straight or through the runner's proxy for it. */
export class HttpAgent {
  /** The outbound proxy the requests go through, when the runner has one for this site. */
  readonly proxy: Proxy | undefined
  /** Connections kept open between requests (when `keepAlive`). */
  readonly #agent: http.Agent
  /** A new connection for each request, closed after its answer. */
  readonly #fresh: http.Agent
  readonly #timeoutMs: number
  /** CONNECTs to the proxy still waiting for its answer. */
  readonly #tunnels = new Set<http.ClientRequest>()
  /** How long each kept connection may sit idle, from its last answer's `Keep-Alive`. */
  readonly #idleMs = new WeakMap<Socket, number>()

  constructor(site: URL, options: HttpOptions, env: NodeJS.ProcessEnv = process.env) {
    this.proxy = proxyFor(site, env)
    this.#timeoutMs = options.timeoutMs
    const ca = options.ca?.length ? [...defaultCertificates(env), ...options.ca] : undefined
    const secure = site.protocol === 'https:'
    const Agent = secure ? https.Agent : http.Agent
    this.#agent = new Agent({ keepAlive: options.keepAlive ?? false, ...(ca && { ca }) })
    this.#fresh = new Agent({ keepAlive: false, ...(ca && { ca }) })
    const keep = this.#agent.keepSocketAlive.bind(this.#agent)
    this.#agent.keepSocketAlive = duplex => {
      const socket = duplex as Socket
      const idle = this.#idleMs.get(socket) ?? IDLE_MS
      // Node's own check refuses a connection whose server allows it too short a rest.
      if (idle <= 0 || (keep(socket) as unknown) === false) return false
      // The agent destroys a free connection when its timer fires.
      socket.setTimeout(idle)
      return true
    }
    const proxy = this.proxy
    if (!proxy) return
    for (const agent of [this.#agent, this.#fresh]) {
      agent.createConnection = (target, connected) => {
        this.#tunnel(proxy, target, (error, socket) => {
          if (error || !socket) connected?.(error ?? new ProxyRefusal(0), undefined as never)
          else if (!secure) connected?.(null, socket)
          else {
            // Checked against the target's name or address; SNI carries names only.
            const host = target.host ?? 'localhost'
            const servername = isIP(host) ? undefined : host
            connected?.(null, tls.connect({ socket, host, servername, ca }))
          }
        })
        return undefined
      }
    }
  }

  /**
   * A CONNECT tunnel through `proxy` to the target, for http targets too (so the proxy sees no
   * request), with TLS inside it: the certificate checks and `ca` stay between this step and the
   * target.
   */
  #tunnel(
    proxy: Proxy,
    target: http.ClientRequestArgs,
    done: (error: Error | null, socket?: Socket) => void
  ): void {
    const host = target.host ?? 'localhost'
    const authority = `${host.includes(':') ? `[${host}]` : host}:${target.port}`
    const open = proxy.url.protocol === 'https:' ? https.request : http.request
    // The proxy's own TLS is checked against the proxy, whatever the Host header below says.
    const proxyHost = proxy.url.hostname.replace(/^\[|\]$/g, '')
    const tunnel = open(proxy.url, {
      method: 'CONNECT',
      path: authority,
      agent: false,
      servername: isIP(proxyHost) ? '' : proxyHost,
      // CONNECT names the target in its Host too (RFC 9110, 9.3.6).
      headers: {
        host: authority,
        ...(proxy.credentials && {
          'proxy-authorization': `Basic ${Buffer.from(proxy.credentials).toString('base64')}`
        })
      }
    })
    this.#tunnels.add(tunnel)
    tunnel.setTimeout(this.#timeoutMs, () => tunnel.destroy(new HttpTimeout('CONNECT_TIMEOUT')))
    tunnel.once('connect', (answer, socket) => {
      this.#tunnels.delete(tunnel)
      tunnel.setTimeout(0)
      if (answer.statusCode === 200) return done(null, socket)
      socket.destroy()
      done(new ProxyRefusal(answer.statusCode ?? 0))
    })
    tunnel.once('error', error => {
      this.#tunnels.delete(tunnel)
      done(error instanceof HttpTimeout ? error : new ProxyFailure(error))
    })
    tunnel.end()
  }

  /**
   * Sends a request; resolves once the answer's headers are in. A request that may be sent again
   * is, at once and on a new connection, when a kept connection turns out closed before any
   * answer: the server closed it while it sat idle, and never saw the request.
   */
  async request(url: URL, request: HttpRequest): Promise<HttpAnswer> {
    const agent = request.once ? this.#fresh : this.#agent
    try {
      return await this.#send(url, request, agent)
    } catch (error) {
      const stale = error instanceof StaleConnection
      if (!stale) throw error
      if (!IDEMPOTENT.has(request.method) || request.signal.aborted) throw error.cause
      return this.#send(url, request, this.#fresh).catch((again: unknown) => {
        throw again instanceof StaleConnection ? again.cause : again
      })
    }
  }

  #send(url: URL, request: HttpRequest, agent: http.Agent): Promise<HttpAnswer> {
    const { signal } = request
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason)
      const send = url.protocol === 'https:' ? https.request : http.request
      const headers =
        request.body === undefined
          ? request.headers
          : { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) }
      let sent: http.ClientRequest
      try {
        sent = send(url, { method: request.method, headers, agent })
      } catch (error) {
        // A value HTTP cannot carry (a line break in a header) is refused before anything leaves.
        return reject(error)
      }

      // One timer, restarted by every sign of life: the stage it fires in names the timeout.
      let stage: HttpTimeout['code'] = 'CONNECT_TIMEOUT'
      let timer: NodeJS.Timeout | undefined
      // The request until its answer arrives, then the answer: destroying it ends its body too.
      let current: { destroy(error: unknown): void } = sent
      const stop = (): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', abort)
      }
      const alive = (): void => {
        clearTimeout(timer)
        timer = setTimeout(() => current.destroy(new HttpTimeout(stage)), this.#timeoutMs)
        // The connection keeps the process alive while it matters; the timer alone must not.
        timer.unref()
      }
      const abort = (): void => current.destroy(signal.reason)
      signal.addEventListener('abort', abort, { once: true })
      alive()

      sent.on('socket', (socket: Socket) => {
        const connected = (): void => {
          stage = 'HEADERS_TIMEOUT'
          alive()
        }
        // A new TLS connection is ready after its handshake; a new plain one once it connects.
        if (sent.reusedSocket) connected()
        else if (socket instanceof TLSSocket) socket.once('secureConnect', connected)
        else if (socket.connecting) socket.once('connect', connected)
        else connected()
      })
      sent.on('error', (error: Error & { code?: string }) => {
        stop()
        if (sent.reusedSocket && STALE_CODES.has(error.code ?? '')) {
          reject(new StaleConnection(error))
        } else if (error.code === 'HPE_HEADER_OVERFLOW') {
          reject(new HttpUnreadable('its headers are larger than Node reads (16 KB)'))
        } else reject(error)
      })
      sent.on('response', (response: http.IncomingMessage) => {
        stage = 'BODY_TIMEOUT'
        current = response
        this.#idleMs.set(
          response.socket,
          idleMsOf(response.headers['keep-alive'] as string | undefined)
        )
        // Until its body is read, a failure of the answer is kept (as `errored`), not thrown.
        response.on('error', () => {})
        response.once('close', stop)
        alive()
        resolve({
          status: response.statusCode ?? 0,
          header: name => {
            const value = response.headers[name.toLowerCase()]
            return Array.isArray(value) ? value[0] : value
          },
          text: () => {
            const encoding = response.headers['content-encoding']
            if (!encoding || encoding === 'identity' || request.headers['accept-encoding']) {
              return readText(response, alive)
            }
            response.destroy()
            return Promise.reject(
              new HttpUnreadable(`its body came compressed (${encoding}), which was not asked for`)
            )
          }
        })
      })
      sent.end(request.body)
    })
  }

  /** Closes every connection, those under way included, so that the process can exit. */
  close(): void {
    for (const tunnel of this.#tunnels) tunnel.destroy()
    this.#agent.destroy()
    this.#fresh.destroy()
  }
}

/** A kept connection was found closed before the request got any answer. */
class StaleConnection extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message)
  }
}

/** How long a connection may stay idle after an answer with this `Keep-Alive` header. */
function idleMsOf(keepAlive: string | undefined): number {
  const hint = /(?:^|[\s,])timeout=(\d+)/i.exec(keepAlive ?? '')?.[1]
  if (hint === undefined) return IDLE_MS
  return Math.min(IDLE_MS, Number(hint) * 1000 - IDLE_MARGIN_MS)
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

/** The body of `response` as text, whole or not at all. */
function readText(response: http.IncomingMessage, alive: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    response.on('data', (chunk: Buffer) => {
      alive()
      chunks.push(chunk)
    })
    response.on('error', reject)
    response.on('close', () => {
      // Closed before its end: the connection was cut, or the timer or an abort destroyed it.
      if (response.complete) resolve(Buffer.concat(chunks).toString('utf8'))
      else reject(response.errored ?? cutShort())
    })
  })
}

function cutShort(): Error {
  return Object.assign(new Error('the connection closed before the answer ended'), {
    code: 'ECONNRESET'
  })
}
