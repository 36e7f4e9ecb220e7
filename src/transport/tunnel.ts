import type { Socket } from 'node:net'
import { HttpTimeout, ProxyFailure, ProxyRefusal, proxyFailure } from './errors.js'

/** The most an answer to CONNECT may hold before its end: Node's limit for headers. */
const MAX_TUNNEL_HEAD_BYTES = 16 * 1024

/**
 * Asks the proxy on `socket` for a tunnel to `authority` (`host:port`); calls back without an
 * error once it answered 2xx, the socket then the tunnel. Its status line is read here: a refusal
 * is told by its status (407: it wants credentials), a silence by what never came.
 */
export function openTunnel(
  socket: Socket,
  authority: string,
  token: string | undefined,
  timeoutMs: number,
  callback: (error?: Error) => void
): void {
  let head = Buffer.alloc(0)
  const timer = setTimeout(
    () => done(new ProxyFailure(new HttpTimeout('CONNECT_TIMEOUT'))),
    timeoutMs
  )
  const done = (error?: Error, rest?: Buffer): void => {
    clearTimeout(timer)
    socket.off('data', read).off('error', failed).off('close', closed)
    if (error) {
      socket.destroy()
      return callback(error)
    }
    socket.pause()
    // Nothing should come before the client speaks; whatever did is the tunnel's.
    if (rest?.length) socket.unshift(rest)
    callback()
  }
  const failed = (error: Error): void => done(proxyFailure(error))
  const closed = (): void =>
    done(
      proxyFailure(
        Object.assign(new Error('the proxy closed the connection'), { code: 'ECONNRESET' })
      )
    )
  const read = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk])
    const end = head.indexOf('\r\n\r\n')
    if (end < 0 && head.length <= MAX_TUNNEL_HEAD_BYTES) return
    const status = /^HTTP\/1\.[01] (\d{3})\b/.exec(head.toString('latin1', 0, Math.max(end, 0)))
    if (!status) return done(proxyFailure(new Error('its answer to CONNECT is not HTTP')))
    const code = Number(status[1])
    if (code < 200 || code > 299) return done(new ProxyRefusal(code))
    done(undefined, head.subarray(end + 4))
  }
  socket.on('data', read).on('error', failed).on('close', closed)
  socket.write(
    [
      `CONNECT ${authority} HTTP/1.1`,
      `Host: ${authority}`,
      ...(token ? [`Proxy-Authorization: ${token}`] : []),
      '',
      ''
    ].join('\r\n')
  )
}

export function defaultPort(protocol: string): number {
  return protocol === 'https:' ? 443 : 80
}
