/**
 * One request to the application's health URL: trusted with `ca-certificate`, like Coolify.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { probe } from '../src/health/probe.js'
import { PROJECT } from '../test/support/runner.js'

const tls = (name: string): string =>
  readFileSync(join(PROJECT, 'test', 'fixtures', 'tls', name), 'utf8')

const closing: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closing.splice(0)) await close()
})

describe('probe', () => {
  it('trusts the private CA of `ca-certificate` for the health URL', async () => {
    const server = createServer(
      { key: tls('server-key.pem'), cert: tls('server.pem') },
      (_request, response) => response.end('up')
    )
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    closing.push(
      () =>
        new Promise(resolve => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
    )
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/health`
    const signal = new AbortController().signal
    expect(await probe(url, signal, tls('ca.pem'))).toEqual({ ok: true, what: 'answered 200' })
    expect(await probe(url, signal)).toMatchObject({
      ok: false,
      what: expect.stringMatching(/did not answer \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED)/)
    })
  })
})
