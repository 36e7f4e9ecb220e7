import { readFileSync } from 'node:fs'

/**
 * The CAs Node trusts by default: its own list, the runner's NODE_EXTRA_CA_CERTS and, where Node
 * reads it, the system's store. Node 20 has no call for that store: its own list and the extra
 * file then.
 */
export function defaultCertificates(env: NodeJS.ProcessEnv): string[] {
  // node:tls, and node:crypto with it, only for a run given CAs: they take 5–10 ms to load.
  const tls = process.getBuiltinModule('node:tls')
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
