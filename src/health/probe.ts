import { describeError } from '../errors.js'
import { HttpAgent } from '../transport/agent.js'

/** What one request to the application's health URL found. */
export interface ProbeResult {
  ok: boolean
  /** What it answered, for the log: `answered 503`, `could not connect: …`. */
  what: string
}

/** Longest wait for one answer: a slow application counts as not answering. */
const PROBE_TIMEOUT_MS = 10_000

/**
 * One GET of the application's own address, to see whether it answers 2xx or 3xx (redirects are
 * not followed: a login redirect means it is up). It goes to the application, not to Coolify, so
 * it carries none of the action's headers: never the token, never `headers`.
 */
export async function probe(
  url: string,
  signal: AbortSignal,
  /** `ca-certificate`: an application on the same private PKI as Coolify is trusted alike. */
  ca?: string
): Promise<ProbeResult> {
  // Through the runner's proxy, as a browser on it would reach the application.
  const target = new URL(url)
  let agent: HttpAgent
  try {
    agent = new HttpAgent(target, { timeoutMs: PROBE_TIMEOUT_MS, ca: ca ? [ca] : undefined })
  } catch (error) {
    // A proxy for the application's address that cannot be used (a socks:// one).
    return { ok: false, what: `was not asked: ${describeError(error)}` }
  }
  const { proxy } = agent
  try {
    const response = await agent.request(target, {
      method: 'GET',
      headers: { 'user-agent': 'deploy-to-coolify-action health check' },
      signal
    })
    const status = response.status
    return { ok: status >= 200 && status < 400, what: `answered ${status}` }
  } catch (error) {
    if (signal.aborted) return { ok: false, what: 'did not answer in time' }
    const code = (error as { code?: unknown })?.code
    const through = proxy ? ` through the proxy ${proxy.name}` : ''
    return {
      ok: false,
      what: `did not answer${through} (${typeof code === 'string' ? code : describeError(error)})`
    }
  } finally {
    agent.close()
  }
}
