/**
 * Which row of an application's history a trigger started, read from the fake Coolify over HTTP.
 */
import { describe, expect, it } from '@jest/globals'
import { CoolifyClient } from '../src/coolify/client.js'
import { findStartedRow } from '../src/follow/history.js'
import { startFakeCoolify } from '../test/fake-coolify/index.js'

const TOKEN = 'history-token'
const APP_UUID = 'web0app0uuid000000000001'

describe('the deployment a lost trigger started', () => {
  it("is never a push webhook's row queued after it", async () => {
    const fake = await startFakeCoolify({
      token: TOKEN,
      apps: [{ uuid: APP_UUID, name: 'web', scenarios: [{ steps: [{ at: 0, status: 'queued' }] }] }]
    })
    const client = new CoolifyClient({ apiUrl: `${fake.url}/api/v1`, token: TOKEN })
    try {
      const mark = { at: Date.now() - 2000 }
      // The API request never reached Coolify; a push queued the pushed commit meanwhile.
      expect(
        fake.push(APP_UUID, { commit: '0123456789abcdef0123456789abcdef01234567' })
      ).toBeDefined()
      const signal = new AbortController().signal
      expect(await findStartedRow(client, APP_UUID, mark, signal)).toBeUndefined()
    } finally {
      await client.close()
      await fake.close()
    }
  })
})
