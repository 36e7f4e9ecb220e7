/**
 * A started service or database: which of Coolify's statuses count, and what following one over
 * real HTTP against the fake Coolify finds.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { CoolifyClient } from '../src/coolify/client.js'
import { Freshness, isUp, type Look } from '../src/health/readiness.js'
import { awaitStartup } from '../src/health/startup.js'
import { startFakeCoolify, type FakeApp, type FakeCoolify } from '../test/fake-coolify/index.js'

const TOKEN = 'startup-token'
let fake: FakeCoolify | undefined
let client: CoolifyClient | undefined

afterEach(async () => {
  await client?.close()
  await fake?.close()
  fake = client = undefined
})

describe('a status that says it is up', () => {
  it('is running, once a health check passed or when there is none', () => {
    expect(isUp('running:healthy')).toBe(true)
    expect(isUp('running:unknown')).toBe(true)
    expect(isUp('Running:Healthy')).toBe(true)
    expect(isUp('running:starting')).toBe(false)
    expect(isUp('running:unhealthy')).toBe(false)
    for (const status of [
      'exited',
      'restarting:unhealthy',
      'degraded:unhealthy',
      'starting:unknown'
    ]) {
      expect(isUp(status)).toBe(false)
    }
  })
})

describe('a fresh status', () => {
  const look = (refreshedAt: number | undefined, answeredAt?: number): Look => ({
    status: 'running:healthy',
    refreshedAt,
    answeredAt
  })

  it('was refreshed from the second after the first look that follows the start', () => {
    const freshness = new Freshness()
    // Coolify's Date is to the second: a refresh within the first look's second may be older.
    expect(freshness.counts(look(10_500, 10_000))).toBe(false)
    expect(freshness.counts(look(10_999, 12_000))).toBe(false)
    expect(freshness.counts(look(11_000, 12_000))).toBe(true)
    expect(freshness.counts(look(undefined, 13_000))).toBe(false)
  })

  it('after a change that ended mid-second, was refreshed from the next whole second on', () => {
    // A deployment marked finished at 10.5 s: Coolify's 10 s refresh may be of the old container.
    const freshness = new Freshness(10_500)
    expect(freshness.counts(look(10_000, 12_000))).toBe(false)
    expect(freshness.counts(look(10_999, 12_000))).toBe(false)
    expect(freshness.counts(look(11_000, 12_000))).toBe(true)
  })

  it('without a Date, is any refresh later than the one the first look showed', () => {
    const freshness = new Freshness()
    expect(freshness.counts(look(5_000))).toBe(false)
    expect(freshness.counts(look(5_000))).toBe(false)
    expect(freshness.counts(look(5_001))).toBe(true)
  })
})

describe('following a start', () => {
  async function started(resource: FakeApp): Promise<CoolifyClient> {
    fake = await startFakeCoolify({ token: TOKEN, rateLimit: 6000, apps: [resource] })
    client = new CoolifyClient({ apiUrl: `${fake.url}/api/v1`, token: TOKEN })
    await client.deploy({ uuids: [resource.uuid] }, AbortSignal.timeout(5000))
    return client
  }
  const options = { pollIntervalMs: 100, turn: async () => {} }

  it('never takes the running status from before the start for the new one', async () => {
    const service: FakeApp = {
      uuid: 'svc0000000000000000001',
      name: 'queue',
      kind: 'service',
      status: 'running:healthy',
      subs: [{ name: 'web' }, { name: 'worker' }],
      starts: [
        {
          commandMs: 300,
          staleMs: 1200,
          states: [
            { at: 0, status: 'running:healthy', sub: 'web' },
            { at: 0, status: 'exited', sub: 'worker' }
          ]
        }
      ]
    }
    const found = await awaitStartup(
      await started(service),
      { kind: 'service', appUuid: service.uuid, name: service.name },
      options,
      AbortSignal.timeout(3000)
    )
    expect(found.health).toEqual({
      up: false,
      problem: 'Coolify reports it degraded:unhealthy',
      unknown: false
    })
    // The part that is down is the one whose log tells why (Coolify refuses an exited one's).
    expect(found.parts).toEqual(['worker'])
    expect(found.log).toEqual([])
  })

  it("reads a database's log while its container still runs", async () => {
    const database: FakeApp = {
      uuid: 'db00000000000000000003',
      name: 'pg',
      kind: 'database',
      runtimeLogs: ['starting PostgreSQL', 'FATAL: could not open configuration file'],
      starts: [
        {
          staleMs: 1200,
          states: [
            { at: 0, status: 'running:starting' },
            { at: 600, status: 'exited' }
          ]
        }
      ]
    }
    const found = await awaitStartup(
      await started(database),
      { kind: 'database', appUuid: database.uuid, name: database.name },
      options,
      AbortSignal.timeout(3500)
    )
    expect(found.health).toEqual({
      up: false,
      problem: 'Coolify reports it exited',
      unknown: false
    })
    expect(found.log).toEqual(['starting PostgreSQL', 'FATAL: could not open configuration file'])
  })

  it('takes a stopped database that came up fresh as up', async () => {
    const database: FakeApp = {
      uuid: 'db00000000000000000001',
      name: 'pg',
      kind: 'database',
      status: 'exited',
      starts: [{ staleMs: 1200, states: [{ at: 0, status: 'running:healthy' }] }]
    }
    const found = await awaitStartup(
      await started(database),
      { kind: 'database', appUuid: database.uuid, name: database.name },
      options,
      AbortSignal.timeout(4000)
    )
    expect(found.health).toEqual({ up: true })
    const reads = fake!.requests.filter(request => request.path.startsWith('/api/v1/databases/'))
    expect(reads.length).toBeGreaterThan(1)
  })

  it('knows nothing when Coolify never refreshed the status', async () => {
    const database: FakeApp = {
      uuid: 'db00000000000000000002',
      name: 'pg',
      kind: 'database',
      status: 'running:healthy',
      starts: [{ staleMs: 60_000 }]
    }
    const found = await awaitStartup(
      await started(database),
      { kind: 'database', appUuid: database.uuid, name: database.name },
      options,
      AbortSignal.timeout(1500)
    )
    expect(found.health).toMatchObject({ up: false, unknown: true })
    expect(found.health).toHaveProperty(
      'problem',
      expect.stringMatching(/has not refreshed its status since the start/)
    )
  })
})
