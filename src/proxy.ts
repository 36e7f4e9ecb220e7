import { ActionError } from './errors.js'

/** The outbound proxy a request goes through. */
export interface Proxy {
  url: URL
  /** `host:port`: how messages name it, never with its credentials. */
  name: string
  /** `user:password`, decoded, when the proxy's URL carries them. */
  credentials?: string
}

/**
 * The proxy for a request to `target`, chosen as the runner's own tools (`@actions/http-client`)
 * choose it: `https_proxy`/`HTTPS_PROXY` for https, `http_proxy`/`HTTP_PROXY` for http (the
 * lower-case name first); none for loopback addresses, nor for a host that `no_proxy`/`NO_PROXY`
 * names — `*`, the host, `host:port`, or a domain it ends in (`example.com` or `.example.com`).
 */
export function proxyFor(target: URL, env: NodeJS.ProcessEnv = process.env): Proxy | undefined {
  if (bypasses(target, env)) return undefined
  const [lower, upper] =
    target.protocol === 'https:' ? ['https_proxy', 'HTTPS_PROXY'] : ['http_proxy', 'HTTP_PROXY']
  const variable = env[lower] ? lower : upper
  const value = env[variable]
  if (!value) return undefined
  let url: URL
  try {
    // A bare `host:port` is an http proxy.
    url = new URL(value.includes('://') ? value : `http://${value}`)
  } catch {
    return undefined
  }
  if (!/^https?:$/.test(url.protocol)) {
    throw new ActionError(
      `${variable} names a ${url.protocol.slice(0, -1)}:// proxy, but only HTTP and HTTPS proxies are supported: give an http:// or https:// proxy, or add ${target.hostname} to NO_PROXY.`
    )
  }
  let credentials: string | undefined
  try {
    if (url.username || url.password) {
      credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
    }
  } catch {
    throw new ActionError(
      `${variable}: the proxy's user or password holds a % that starts no escape: write a % in them as %25 (and other reserved characters as %XX).`
    )
  }
  return { url, name: url.host, credentials }
}

/** The password of a proxy URL, to mask before anything could print it. */
export function proxySecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  const secrets: string[] = []
  for (const name of ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY']) {
    const value = env[name]
    if (!value) continue
    try {
      const { password } = new URL(value.includes('://') ? value : `http://${value}`)
      if (password) secrets.push(password, decoded(password))
    } catch {
      // Not a URL: nothing that reads as a password.
    }
  }
  return [...new Set(secrets)]
}

/** `value` with its %XX escapes decoded; as it is when one is malformed. */
function decoded(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/** This machine: `localhost`, 127.x.x.x or [::1]. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase()
  return host === 'localhost' || host.startsWith('127.') || host === '[::1]'
}

function bypasses(target: URL, env: NodeJS.ProcessEnv): boolean {
  const host = target.hostname.toLowerCase()
  if (!host) return false
  if (isLoopback(host)) return true
  const list = env.no_proxy || env.NO_PROXY || ''
  const port = target.port || (target.protocol === 'https:' ? '443' : '80')
  const names = [host, `${host}:${port}`]
  return list
    .split(',')
    .map(item => item.trim().toLowerCase())
    .filter(Boolean)
    .some(
      item =>
        item === '*' ||
        names.some(name => name === item || name.endsWith(item.startsWith('.') ? item : `.${item}`))
    )
}
