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
  /** The CAs to trust (PEM), in place of Node's own list; the caller adds that list if it wants it. */
  ca?: string[]
  /** Keeps connections open between requests (the client's many reads); off for a single request. */
  keepAlive?: boolean
}

export interface HttpRequest {
  method: string
  headers: Record<string, string>
  body?: string
  signal: AbortSignal
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

/** The proxy's refusal to open a tunnel: its status says why (407: it wants credentials). */
export class ProxyRefusal extends Error {
  readonly code = 'PROXY_REFUSED'
  constructor(readonly status: number) {
    super(`the proxy answered ${status} to CONNECT`)
  }
}

/** The connections to one site, straight or through the runner's proxy for it. */
export class HttpAgent {
  /** The outbound proxy the requests go through, when the runner has one for this site. */
  readonly proxy: Proxy | undefined
  readonly #agent: http.Agent
  readonly #timeoutMs: number
  /** CONNECTs to the proxy still waiting for its answer. */
  readonly #tunnels = new Set<http.ClientRequest>()

  constructor(site: URL, options: HttpOptions, env: NodeJS.ProcessEnv = process.env) {
    this.proxy = proxyFor(site, env)
    this.#timeoutMs = options.timeoutMs
    const settings = {
      keepAlive: options.keepAlive ?? false,
      ...(options.ca && { ca: options.ca })
    }
    const secure = site.protocol === 'https:'
    this.#agent = secure ? new https.Agent(settings) : new http.Agent(settings)
    const proxy = this.proxy
    if (proxy) {
      this.#agent.createConnection = (target, connected) => {
        this.#tunnel(proxy, target, (error, socket) => {
          if (error || !socket) connected?.(error ?? new ProxyRefusal(0), undefined as never)
          else if (!secure) connected?.(null, socket)
          else {
            const host = target.host ?? ''
            const servername = isIP(host) ? undefined : host
            connected?.(null, tls.connect({ socket, servername, ca: settings.ca }))
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
    const { username, password } = proxy.url
    const credentials =
      username && `${decodeURIComponent(username)}:${decodeURIComponent(password)}`
    const host = target.host ?? 'localhost'
    const open = proxy.url.protocol === 'https:' ? https.request : http.request
    const tunnel = open(proxy.url, {
      method: 'CONNECT',
      path: `${host.includes(':') ? `[${host}]` : host}:${target.port}`,
      agent: false,
      headers: credentials
        ? { 'proxy-authorization': `Basic ${Buffer.from(credentials).toString('base64')}` }
        : {}
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
      done(error)
    })
    tunnel.end()
  }

  /** Sends a request; resolves once the answer's headers are in. */
  request(url: URL, request: HttpRequest): Promise<HttpAnswer> {
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
        sent = send(url, { method: request.method, headers, agent: this.#agent })
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
      sent.on('error', error => {
        stop()
        reject(error)
      })
      sent.on('response', (response: http.IncomingMessage) => {
        stage = 'BODY_TIMEOUT'
        current = response
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
          text: () => readText(response, alive)
        })
      })
      sent.end(request.body)
    })
  }

  /** Closes every connection, those under way included, so that the process can exit. */
  close(): void {
    for (const tunnel of this.#tunnels) tunnel.destroy()
    this.#agent.destroy()
  }
}

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
