/** How the transport's failures are named: by the stage and the party that failed. */

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

/** undici's timeouts, by the stage they name. */
const TIMEOUTS: Record<string, HttpTimeout['code']> = {
  UND_ERR_CONNECT_TIMEOUT: 'CONNECT_TIMEOUT',
  UND_ERR_HEADERS_TIMEOUT: 'HEADERS_TIMEOUT',
  UND_ERR_BODY_TIMEOUT: 'BODY_TIMEOUT'
}

/** A failure on the way to the proxy, or of its answer to CONNECT: the proxy's, not the site's. */
export function proxyFailure(error: Error & { code?: string }): ProxyFailure {
  const stage = TIMEOUTS[error.code ?? '']
  return new ProxyFailure(stage ? new HttpTimeout(stage) : error)
}

/** The failure as the client reads it: ours when we have a word for it, undici's otherwise. */
export function failure(error: unknown): unknown {
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
  return error
}

export function codeOf(error: unknown): string {
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' ? code : ''
}
