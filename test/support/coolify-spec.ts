/**
 * Where the conformance suites get Coolify's OpenAPI document. Beside the repository
 * (../shared/spec, where the project is developed) when it is there; anywhere else, as on GitHub's
 * CI, the document of a pinned Coolify release, downloaded once into node_modules/.cache and used
 * only when its SHA-256 is the one recorded here. The document is not kept in the repository: it
 * is Coolify's, and a pinned commit with a checksum says exactly which one the tests hold to.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { HttpAgent } from '../../src/transport/agent.js'

const PROJECT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Coolify v4.3.10, whose openapi.yaml is the copy in ../shared/spec. */
export const PINNED = {
  commit: '83f1a2e50374c27125671084b445b2599815f114',
  sha256: '789e6ad3796ce1299c8cc5b1055c2b955ec3a5b210a8b5151ad7f59b80c30258'
}
export const PINNED_URL = `https://raw.githubusercontent.com/coollabsio/coolify/${PINNED.commit}/openapi.yaml`
export const SHARED_SPEC = join(PROJECT, '..', 'shared', 'spec', 'coolify-openapi.yaml')
export const CACHED_SPEC = join(
  PROJECT,
  'node_modules',
  '.cache',
  'coolify-openapi',
  `${PINNED.commit}.yaml`
)

const DOWNLOAD_TIMEOUT_MS = 60_000

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

/** The path of the document to check requests against, downloading the pinned one if needed. */
export async function coolifySpec(): Promise<string> {
  if (existsSync(SHARED_SPEC)) return SHARED_SPEC
  if (existsSync(CACHED_SPEC) && sha256(readFileSync(CACHED_SPEC)) === PINNED.sha256) {
    return CACHED_SPEC
  }
  try {
    await download(PINNED_URL, PINNED.sha256, CACHED_SPEC)
  } catch (error) {
    throw new Error(
      `Coolify's OpenAPI document is neither at ${SHARED_SPEC} nor downloadable: ` +
        `${reason(error)}. Put openapi.yaml of Coolify ${PINNED.commit} at one of ` +
        `${SHARED_SPEC} or ${CACHED_SPEC}.`
    )
  }
  return CACHED_SPEC
}

/** An error's message, with its cause's. */
function reason(error: unknown): string {
  const { message, cause } = error as Error
  return cause instanceof Error ? `${message} (${cause.message})` : message
}

/**
 * Fetches `url` into `dest` if its body's SHA-256 is `expected`; nothing is written otherwise.
 * Goes through the proxy the environment names, chosen as the action chooses its own.
 */
export async function download(url: string, expected: string, dest: string): Promise<void> {
  const target = new URL(url)
  const agent = new HttpAgent(target, { timeoutMs: DOWNLOAD_TIMEOUT_MS })
  let body: Buffer
  try {
    const response = await agent.request(target, {
      method: 'GET',
      headers: {},
      signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS)
    })
    if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`)
    body = Buffer.from(await response.text())
  } finally {
    agent.close()
  }
  const actual = sha256(body)
  if (actual !== expected) {
    throw new Error(`GET ${url}: SHA-256 ${actual}, expected ${expected}`)
  }
  mkdirSync(dirname(dest), { recursive: true })
  // Written whole or not at all: a parallel suite never reads half a file.
  const partial = `${dest}.${process.pid}.partial`
  writeFileSync(partial, body)
  renameSync(partial, dest)
}
