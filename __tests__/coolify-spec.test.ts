/** The download of Coolify's OpenAPI document for the conformance suites, over real HTTP. */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { download, PINNED_URL } from '../test/support/coolify-spec.js'
import { startProxy } from '../test/support/proxy.js'

const DOCUMENT = Buffer.from('openapi: 3.1.0\npaths: {}\n')
const SHA256 = createHash('sha256').update(DOCUMENT).digest('hex')

let server: Server
let base: string
let dir: string
let proxyVariables: Record<string, string | undefined>

beforeEach(async () => {
  server = createServer((request, response) => {
    if (request.url === '/openapi.yaml') response.end(DOCUMENT)
    else if (request.url === '/altered.yaml') response.end(Buffer.concat([DOCUMENT, DOCUMENT]))
    else response.writeHead(404).end()
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  dir = mkdtempSync(join(tmpdir(), 'coolify-spec-'))
  proxyVariables = {}
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy']) {
    proxyVariables[name] = process.env[name]
    delete process.env[name]
  }
})

afterEach(async () => {
  for (const [name, value] of Object.entries(proxyVariables)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  await new Promise(resolve => server.close(resolve))
})

describe('download', () => {
  it('pins a commit of Coolify, not a branch', () => {
    expect(PINNED_URL).toMatch(
      /^https:\/\/raw\.githubusercontent\.com\/coollabsio\/coolify\/[0-9a-f]{40}\/openapi\.yaml$/
    )
  })

  it('writes the document when its SHA-256 is the expected one', async () => {
    const dest = join(dir, 'cache', 'spec.yaml')
    await download(`${base}/openapi.yaml`, SHA256, dest)
    expect(readFileSync(dest)).toEqual(DOCUMENT)
    expect(readdirSync(join(dir, 'cache'))).toEqual(['spec.yaml'])
  })

  it('writes nothing when the checksum differs, and says both', async () => {
    const dest = join(dir, 'spec.yaml')
    const actual = createHash('sha256')
      .update(Buffer.concat([DOCUMENT, DOCUMENT]))
      .digest('hex')
    await expect(download(`${base}/altered.yaml`, SHA256, dest)).rejects.toThrow(
      `SHA-256 ${actual}, expected ${SHA256}`
    )
    expect(existsSync(dest)).toBe(false)
  })

  it('names the status of a failed answer', async () => {
    const dest = join(dir, 'spec.yaml')
    await expect(download(`${base}/missing.yaml`, SHA256, dest)).rejects.toThrow(
      `GET ${base}/missing.yaml answered 404`
    )
    expect(existsSync(dest)).toBe(false)
  })

  it('goes through the proxy the environment names', async () => {
    const proxy = await startProxy()
    try {
      process.env.HTTP_PROXY = proxy.url
      const port = (server.address() as AddressInfo).port
      // A name that resolves nowhere: only the proxy can reach the server.
      await download(`http://spec.test:${port}/openapi.yaml`, SHA256, join(dir, 'spec.yaml'))
      expect(proxy.tunnels.map(tunnel => tunnel.target)).toEqual([`spec.test:${port}`])
    } finally {
      await proxy.close()
    }
  })
})
