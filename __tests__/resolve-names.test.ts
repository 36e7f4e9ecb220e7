/**
 * `app` by name, uuid or project/environment/name, resolved over real HTTP against the fake
 * Coolify: which lists are read, and what an unknown or ambiguous name says.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { CoolifyClient } from '../src/coolify/client.js'
import { closeNames, editDistance, placesIn, resolveNames } from '../src/rollout/resolve-names.js'
import { startFakeCoolify, type FakeApp, type FakeCoolify } from '../test/fake-coolify/index.js'

const TOKEN = 'resolve-names-token'
let fake: FakeCoolify | undefined
let client: CoolifyClient | undefined

afterEach(async () => {
  await client?.close()
  await fake?.close()
  fake = client = undefined
})

const WEB: FakeApp = { uuid: 'web0app0uuid0000000001', name: 'web' }
const API: FakeApp = { uuid: 'api0app0uuid0000000002', name: 'api' }
const QUEUE: FakeApp = { uuid: 'svc0queue0uuid0000000003', name: 'queue', kind: 'service' }
const PG: FakeApp = { uuid: 'db0pg0uuid00000000000004', name: 'pg', kind: 'database' }
/** Another `web`, in another project. */
const SHOP_WEB: FakeApp = {
  uuid: 'web0shop0uuid00000000005',
  name: 'web',
  project: 'shop',
  environment: 'staging'
}

async function resolverOf(apps: FakeApp[], flavor: 'seed' | '4x' = '4x') {
  fake = await startFakeCoolify({ token: TOKEN, rateLimit: 6000, apps, flavor })
  client = new CoolifyClient({ apiUrl: `${fake.url}/api/v1`, token: TOKEN })
  const resolve = async (values: string[]): Promise<string[]> =>
    (await resolveNames(client!, values, AbortSignal.timeout(10_000))).map(r => r.resource.uuid)
  const failure = async (values: string[]): Promise<string> => {
    try {
      await resolveNames(client!, values, AbortSignal.timeout(10_000))
    } catch (error) {
      return (error as Error).message
    }
    throw new Error('resolved')
  }
  /** The reads the resolver made, in order. */
  const reads = (): string[] => fake!.requests.map(r => `${r.method} ${r.path.slice(7)}`)
  return { resolve, failure, reads }
}

describe('resolving `app`', () => {
  it('finds applications by name and uuid with one read of the applications', async () => {
    const { resolve, reads } = await resolverOf([WEB, API, QUEUE, PG])
    expect(await resolve(['web', API.uuid])).toEqual([WEB.uuid, API.uuid])
    expect(reads()).toEqual(['GET /applications'])
  })

  it('lists services only for a name not among applications, databases only after them', async () => {
    const { resolve, reads } = await resolverOf([WEB, QUEUE, PG])
    expect(await resolve(['queue'])).toEqual([QUEUE.uuid])
    expect(reads()).toEqual(['GET /applications', 'GET /services'])
    fake!.requests.length = 0
    expect(await resolve(['pg', 'web'])).toEqual([PG.uuid, WEB.uuid])
    expect(reads()).toEqual(['GET /applications', 'GET /services', 'GET /databases'])
  })

  it('keeps the order given and drops a resource named twice', async () => {
    const { resolve } = await resolverOf([WEB, API])
    expect(await resolve(['api', 'web', WEB.uuid])).toEqual([API.uuid, WEB.uuid])
  })

  it('matches exactly: case and inner spaces count', async () => {
    const { failure } = await resolverOf([WEB, { ...API, name: 'my api' }])
    expect(await failure(['Web'])).toMatch(/named "Web".*\(close: "web"\)/)
    expect(await failure(['my  api'])).toMatch(/named "my {2}api".*\(close: "my api"\)/)
  })

  it('takes a known uuid as that uuid, before a resource of that name', async () => {
    const { resolve } = await resolverOf([WEB, { ...API, name: WEB.uuid }])
    expect(await resolve([WEB.uuid])).toEqual([WEB.uuid])
  })

  it('tells apart a repeated name by project/environment/name', async () => {
    const { resolve, reads } = await resolverOf([WEB, SHOP_WEB])
    expect(await resolve(['shop/staging/web'])).toEqual([SHOP_WEB.uuid])
    expect(await resolve(['My first project/production/web'])).toEqual([WEB.uuid])
    const projectReads = reads().filter(read => read.startsWith('GET /projects/'))
    // Each project's environments are read once per resolution, and only the project named.
    expect(projectReads).toHaveLength(2)
    expect(new Set(projectReads).size).toBe(2)
    expect(reads().filter(read => read === 'GET /services')).toEqual([])
  })

  it('finds a service or database by project/environment/name', async () => {
    const { resolve } = await resolverOf([
      WEB,
      { ...QUEUE, name: 'web', project: 'shop', environment: 'staging' },
      { ...PG, project: 'shop', environment: 'staging' }
    ])
    expect(await resolve(['shop/staging/web', 'shop/staging/pg'])).toEqual([QUEUE.uuid, PG.uuid])
  })

  it('reads names of projects and environments that hold slashes', async () => {
    const { resolve } = await resolverOf([
      WEB,
      { ...SHOP_WEB, project: 'acme/shop', environment: 'eu/prod' }
    ])
    expect(await resolve(['acme/shop/eu/prod/web'])).toEqual([SHOP_WEB.uuid])
  })

  it('refuses an ambiguous name, listing each candidate where it lives', async () => {
    const { failure } = await resolverOf([WEB, SHOP_WEB])
    expect(await failure(['web'])).toBe(
      `Input \`app\`: "web" names 2 resources, so nothing was deployed: My first project/production/web (${WEB.uuid}), shop/staging/web (${SHOP_WEB.uuid}); write the one to deploy as project/environment/name, or by its uuid.`
    )
  })

  it('asks for the uuid when two resources share a place and a name', async () => {
    const { failure } = await resolverOf([WEB, { ...API, name: 'web' }])
    expect(await failure(['My first project/production/web'])).toMatch(
      /names 2 resources.*; write the one to deploy by its uuid\.$/
    )
  })

  it('names an unknown name and a few close ones, never the whole list', async () => {
    const many = Array.from({ length: 30 }, (_, i) => ({
      uuid: `app${i}`.padEnd(24, '0'),
      name: `service-${i}`
    }))
    const { failure } = await resolverOf([WEB, ...many])
    const message = await failure(['wbe'])
    expect(message).toBe(
      'Input `app`: no application, service or database named "wbe" is visible to this token (close: "web"); write the name as Coolify shows it on the resource\'s page, as project/environment/name, or its uuid.'
    )
    const far = await failure(['service-3x'])
    expect(far.match(/"service-\d+"/g)).toHaveLength(3)
    expect(await failure(['nothing-like-it'])).not.toMatch(/close/)
  })

  it('says which part of project/environment/name is not there', async () => {
    const { failure } = await resolverOf([WEB, SHOP_WEB])
    expect(await failure(['shp/staging/web'])).toMatch(
      /"shp\/staging\/web": no project named "shp" \(close: "shop"\)/
    )
    expect(await failure(['shop/stagin/web'])).toMatch(
      /project "shop" has no environment "stagin" \(close: "staging"\)/
    )
    expect(await failure(['shop/staging/wbe'])).toMatch(
      /nothing named "wbe" in shop\/staging \(close: "web"\)/
    )
  })

  it('still names the candidates, or the unknown name, when projects cannot be read', async () => {
    const { failure } = await resolverOf([WEB, SHOP_WEB])
    fake!.inject({
      path: /^\/projects/,
      times: Infinity,
      do: { status: 403, body: { message: 'This action is unauthorized.' } }
    })
    expect(await failure(['web'])).toMatch(
      `"web" names 2 resources, so nothing was deployed: web (${WEB.uuid}), web (${SHOP_WEB.uuid}); write the one to deploy by its uuid.`
    )
    expect(await failure(['shop/staging/wbe'])).toMatch(
      /^Input `app`: no application, service or database named "shop\/staging\/wbe" is visible/
    )
  })

  it('works on the seed contract, which has no services, databases or projects', async () => {
    const { resolve, failure } = await resolverOf([WEB, API], 'seed')
    expect(await resolve(['api'])).toEqual([API.uuid])
    expect(await failure(['ap'])).toMatch(/named "ap".*\(close: "api"\)/)
  })
})

describe('the parts of resolving', () => {
  it('cuts a value at every pair of slashes', () => {
    expect(placesIn('web')).toEqual([])
    expect(placesIn('acme/web')).toEqual([])
    expect(placesIn('p/e/n')).toEqual([{ project: 'p', environment: 'e', name: 'n' }])
    expect(placesIn('🚀 p/e/n')).toEqual([{ project: '🚀 p', environment: 'e', name: 'n' }])
    expect(placesIn('a/b/c/d')).toEqual([
      { project: 'a', environment: 'b', name: 'c/d' },
      { project: 'a', environment: 'b/c', name: 'd' },
      { project: 'a/b', environment: 'c', name: 'd' }
    ])
  })

  it('measures edit distance', () => {
    expect(editDistance('web', 'web')).toBe(0)
    expect(editDistance('wbe', 'web')).toBe(2)
    expect(editDistance('kitten', 'sitting')).toBe(3)
    expect(editDistance('', 'abc')).toBe(3)
  })

  it('suggests at most three near names, nearest first', () => {
    expect(closeNames('web', ['web-1', 'api', 'wb', 'Web', 'worker'])).toEqual([
      'Web',
      'wb',
      'web-1'
    ])
    expect(closeNames('web', ['database'])).toEqual([])
  })
})
