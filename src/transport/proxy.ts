import { BlockList, isIP } from 'node:net'
import { ActionError } from '../errors.js'

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
 * names (see `names`).
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
    throw new ActionError(
      `${variable} is not a proxy URL: give it as http://host:port (or https://, with user:password@ before the host if the proxy asks for them), or add ${target.hostname} to NO_PROXY.`
    )
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
  // The proxy is its origin: a path, query or fragment after it means nothing to a proxy.
  return { url: new URL(url.origin), name: url.host, credentials }
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
  if (!target.hostname) return false
  if (isLoopback(target.hostname)) return true
  const host = target.hostname.toLowerCase().replace(/^\[|\]$/g, '')
  const port = target.port || (target.protocol === 'https:' ? '443' : '80')
  return (env.no_proxy || env.NO_PROXY || '')
    .split(',')
    .map(item => item.trim().toLowerCase())
    .filter(Boolean)
    .some(item => names(item, host, port))
}

/**
 * Whether a `NO_PROXY` item names `host` on `port`, as curl (7.86 and later) and Go read it: `*`,
 * a name or a domain it ends in (`example.com`, `.example.com`, `*.example.com`), an address or a
 * CIDR range (`10.0.0.0/8`, `fd00::/8`; IPv6 with or without brackets), each with an optional
 * `:port` (IPv6 in brackets then).
 */
function names(item: string, host: string, port: string): boolean {
  if (item === '*') return true
  const { name, port: only } = splitPort(item)
  if (only && only !== port) return false
  const range = /^(.+)\/(\d{1,3})$/.exec(name)
  const address = range ? range[1] : name
  const family = isIP(address)
  if (family) {
    const hostFamily = isIP(host)
    if (hostFamily !== family) return false
    const type = family === 4 ? 'ipv4' : 'ipv6'
    const list = new BlockList()
    try {
      list.addSubnet(address, range ? Number(range[2]) : family === 4 ? 32 : 128, type)
    } catch {
      return false
    }
    return list.check(host, type)
  }
  const domain = name.startsWith('*.') ? name.slice(1) : name
  return host === domain || host.endsWith(domain.startsWith('.') ? domain : `.${domain}`)
}

/** `host:port`, `[v6]:port`, or an IPv6 address (or range) without brackets, which has no port. */
function splitPort(item: string): { name: string; port?: string } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(item)
  if (bracketed) return { name: bracketed[1], port: bracketed[2] }
  if ((item.match(/:/g) ?? []).length > 1) return { name: item }
  const at = item.lastIndexOf(':')
  return at < 0 ? { name: item } : { name: item.slice(0, at), port: item.slice(at + 1) }
}
