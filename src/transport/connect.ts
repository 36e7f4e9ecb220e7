import { CoolifyClient } from '../coolify/client.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import { proxySecrets } from './proxy.js'
import { mask } from '../config/secrets.js'

/**
 * The client for the instance and credentials in `config`, with timeouts scaled to its cadence,
 * through the runner's proxy when it has one (its password masked first).
 */
export function connect(config: Config, say: Say): CoolifyClient {
  for (const secret of proxySecrets()) mask(secret)
  const client = new CoolifyClient({
    apiUrl: config.apiUrl,
    token: config.token,
    headers: config.headers,
    caCertificate: config.caCertificate,
    // A read that takes ten poll intervals is stuck; but give slow proxies at least five seconds.
    requestTimeoutMs: Math.min(30_000, Math.max(5000, config.pollIntervalMs * 10)),
    // Retries back off, but never so far that Coolify's return goes unnoticed for long.
    retry: {
      baseDelayMs: Math.min(1000, config.pollIntervalMs),
      maxDelayMs: Math.max(5000, 2 * config.pollIntervalMs)
    },
    note: say.note
  })
  if (client.proxy) say.note(`Requests to Coolify go through the proxy ${client.proxy.name}`)
  return client
}
