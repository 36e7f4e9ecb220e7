/**
 * The step's reads of the applications over real HTTP against the fake Coolify: names, URLs and
 * health checks due at the same turn share one request.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { actionHost } from '../src/action/host.js'
import { CoolifyClient } from '../src/coolify/client.js'
import { RateGate } from '../src/coolify/pacing.js'
import { ReadPacer } from '../src/follow/pacer.js'
import { sayThrough, setHost } from '../src/host.js'
import { ApplicationReads } from '../src/follow/application-reads.js'
import { Deployment } from '../src/model/deployment.js'
import { describeApplications } from '../src/rollout/launch.js'
import { startFakeCoolify, type FakeApp, type FakeCoolify } from '../test/fake-coolify/index.js'
import { captureStdout } from '../test/support/stdout.js'

const TOKEN = 'application-reads-token'
const printed = captureStdout()
// Its lines go where the action prints them.
setHost(actionHost())
const say = sayThrough(actionHost())
let fake: FakeCoolify | undefined
let client: CoolifyClient | undefined

afterEach(async () => {
  await client?.close()
  await fake?.close()
  fake = client = undefined
})

function appNamed(name: string): FakeApp {
  return { uuid: `${name}uuid`.padEnd(24, '0'), name, fqdn: `https://${name}.example.com` }
}

/** The reader, and a turn that comes only when the test opens it. */
async function readerOf(apps: FakeApp[], expected?: () => number, gatherMs?: number) {
  fake = await startFakeCoolify({ token: TOKEN, rateLimit: 6000, apps })
  client = new CoolifyClient({ apiUrl: `${fake.url}/api/v1`, token: TOKEN })
  let open!: () => void
  const gate = new Promise<void>(resolve => (open = resolve))
  const signal = new AbortController().signal
  const reads = new ApplicationReads(client, () => gate, signal, expected, gatherMs)
  const applicationReads = () =>
    fake!.requests.filter(r => r.path.startsWith('/api/v1/applications'))
  return { reads, open, applicationReads }
}

describe('reads of the applications', () => {
  it('look up names and check health at the same turn in one GET /applications', async () => {
    const apps = ['api', 'web', 'worker'].map(appNamed)
    const { reads, open, applicationReads } = await readerOf(apps)
    const deployments = apps.map(app => new Deployment(app.uuid, app.uuid, undefined, Date.now()))
    const signal = AbortSignal.timeout(5000)

    const described = describeApplications(reads, deployments, undefined, signal, say)
    const looks = Promise.all(apps.map(app => reads.status(app.uuid, signal)))
    open()
    await described

    expect(deployments.map(deployment => [deployment.name, deployment.appUrl])).toEqual([
      ['api', 'https://api.example.com'],
      ['web', 'https://web.example.com'],
      ['worker', 'https://worker.example.com']
    ])
    expect((await looks).map(look => look.status)).toEqual(Array(3).fill('running:healthy'))
    expect((await looks).every(look => look.answeredAt !== undefined)).toBe(true)
    expect(applicationReads().map(request => request.path)).toEqual(['/api/v1/applications'])
  })

  it('read one application alone by its uuid', async () => {
    const { reads, open, applicationReads } = await readerOf([appNamed('api')])
    const uuid = appNamed('api').uuid
    const deployment = new Deployment(uuid, uuid, undefined, Date.now())
    const signal = AbortSignal.timeout(5000)

    const described = describeApplications(reads, [deployment], undefined, signal, say)
    const look = reads.status(deployment.appUuid, signal)
    open()
    await described

    expect(deployment.name).toBe('api')
    expect((await look).status).toBe('running:healthy')
    expect(applicationReads().map(request => request.path)).toEqual([
      `/api/v1/applications/${deployment.appUuid}`
    ])
  })

  it('leave a lookup that failed as a courtesy: the health checks still get their answer', async () => {
    const { reads, open, applicationReads } = await readerOf([appNamed('api'), appNamed('web')])
    const ghost = new Deployment('ghostuuid', 'ghostuuid', undefined, Date.now())
    const web = new Deployment(appNamed('web').uuid, appNamed('web').uuid, undefined, Date.now())
    const signal = AbortSignal.timeout(5000)

    const described = describeApplications(reads, [ghost, web], undefined, signal, say)
    const look = reads.status(appNamed('api').uuid, signal)
    open()
    await described

    expect([ghost.name, web.name]).toEqual(['ghostuuid', 'web'])
    expect(printed).toEqual([
      '::debug::Could not read the applications: GET /applications: application ghostuuid is not in the list Coolify gave\n'
    ])
    expect((await look).status).toBe('running:healthy')
    expect(applicationReads()).toHaveLength(1)
  })

  it('let a reader whose own time ran out leave without ending the read of the others', async () => {
    const apps = ['api', 'web'].map(appNamed)
    const { reads, open, applicationReads } = await readerOf(apps)
    const short = new AbortController()
    const left = reads.status(apps[0].uuid, short.signal)
    const stays = reads.status(apps[1].uuid, AbortSignal.timeout(5000))
    short.abort(new DOMException('time', 'TimeoutError'))
    open()

    await expect(left).rejects.toThrow('did not answer in the time it had')
    expect((await stays).status).toBe('running:healthy')
    expect(applicationReads()).toHaveLength(1)
  })

  it('wait a moment for the other applications expected, then read them together', async () => {
    const apps = ['api', 'web', 'worker'].map(appNamed)
    const { reads, open, applicationReads } = await readerOf(apps, () => 3, 2000)
    open()
    const signal = AbortSignal.timeout(5000)
    const looks: Array<Promise<unknown>> = []
    for (const app of apps) {
      looks.push(reads.status(app.uuid, signal))
      // Due a little apart, as checks of deployments that ended together are.
      await new Promise(resolve => setTimeout(resolve, 30))
    }
    await Promise.all(looks)

    expect(applicationReads().map(request => request.path)).toEqual(['/api/v1/applications'])
  })

  it('read as soon as every application expected waits', async () => {
    const apps = ['api', 'web'].map(appNamed)
    const { reads, open, applicationReads } = await readerOf(apps, () => 2, 10_000)
    open()
    const signal = AbortSignal.timeout(4000)
    const first = reads.status(apps[0].uuid, signal)
    await new Promise(resolve => setTimeout(resolve, 30))
    // The second due ends the wait: the gather would otherwise hold both for ten seconds.
    await Promise.all([first, reads.status(apps[1].uuid, signal)])

    expect(applicationReads().map(request => request.path)).toEqual(['/api/v1/applications'])
  })

  it('confirm that a finished deployment is up with what polls hold back, without waiting', async () => {
    const app = appNamed('api')
    fake = await startFakeCoolify({ token: TOKEN, rateLimit: 10, apps: [app] })
    // The client's budget on a clock the test moves: a turn that waits moves it.
    let now = 1_000_000
    const gate = new RateGate(
      () => now,
      async ms => {
        now += ms
      }
    )
    client = new CoolifyClient({ apiUrl: `${fake.url}/api/v1`, token: TOKEN, gate })
    const pacer = new ReadPacer(
      () => client!.readBudget(),
      () => 1 / 3000,
      () => now
    )
    const signal = new AbortController().signal
    const reads = new ApplicationReads(
      client,
      async (_signal, final) => {
        now += pacer.take(final)
      },
      signal,
      () => 1
    )
    // Polls spend the window down to what it holds back: 2 of 10.
    for (let i = 0; i < 8; i++) await client.listApplicationsDated(signal)
    expect(client.readBudget()).toMatchObject({ spare: 0, held: 2 })

    const before = now
    expect((await reads.status(app.uuid, signal)).status).toBe('running:healthy')
    expect(now).toBe(before)
    // A read for a name alone is a poll: it waits for the next window.
    await reads.read(app.uuid, signal)
    expect(now - before).toBeGreaterThanOrEqual(60_000)
    expect(fake.requests.filter(request => request.status === 429)).toEqual([])
  })
})
