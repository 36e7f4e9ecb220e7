/**
 * `app`: resources by name, uuid or project/environment/name, run through the bundle from
 * action.yml against the fake Coolify. Names are looked up before anything is written; an unknown
 * or ambiguous one deploys nothing and says what to write.
 */
import { describe, expect, it } from '@jest/globals'
import type { FakeApp, FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { pullRequestEventEnv } from '../test/support/events.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  errorLines,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  inputsFor,
  requestLines
} from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest(() => ({
  abilities: ['deploy', 'read', 'read:sensitive', 'write']
}))

const WEB: FakeApp = { ...APP, scenarios: [build('finished')] }
const QUEUE: FakeApp = { uuid: 'svc0queue0uuid0000000003', name: 'queue', kind: 'service' }
const PG: FakeApp = { uuid: 'db0pg0uuid00000000000004', name: 'pg', kind: 'database' }
/** Another `web`, in another project. */
const SHOP_WEB: FakeApp = {
  uuid: 'web0shop0uuid00000000005',
  name: 'web',
  fqdn: 'https://shop.example.com',
  project: 'shop',
  environment: 'staging',
  scenarios: [build('finished')]
}
const COMMIT = '0123456789abcdef0123456789abcdef01234567'

async function run(
  server: FakeCoolify,
  inputs: Record<string, string>,
  env?: Record<string, string>
): Promise<RunResult> {
  const result = await runAction({
    inputs: inputsFor(server, { 'app-uuid': '', 'health-timeout': '8s', ...inputs }),
    env
  })
  if (process.env.SHOW_RUN) console.log(result.stdout, result.stderr)
  return result
}

function rows(result: RunResult): Array<Record<string, unknown>> {
  return JSON.parse(result.outputs.deployments ?? '[]')
}

/** The requests before the trigger, and the uuids the trigger asked for. */
function beforeTrigger(server: FakeCoolify): { reads: string[]; uuids: string[] } {
  const requests = actionRequests(server)
  const index = requests.findIndex(r => r.method === 'POST' && r.path === '/api/v1/deploy')
  expect(index).toBeGreaterThanOrEqual(0)
  return {
    reads: requestLines(requests.slice(0, index)).map(line => line.replace('/api/v1', '')),
    uuids: requests[index].query.uuid.split(',')
  }
}

/** Nothing was written to Coolify: no deploy, no change. */
function expectNothingWritten(server: FakeCoolify): void {
  expect(actionRequests(server).filter(request => request.method !== 'GET')).toEqual([])
  expect(server.deployments()).toEqual([])
}

describe('app by name', () => {
  // Guards: an application, a service and a database by name, found with one read of each list
  // before the trigger, deployed and followed as by uuid.
  it('deploys an application, a service and a database named as Coolify shows them', async () => {
    const server = await start({ apps: [WEB, QUEUE, PG] })
    const result = await run(server, { app: 'web\nqueue, pg' })

    expect(result.code).toBe(0)
    expect(errorLines(result.stdout)).toEqual([])
    expect(beforeTrigger(server)).toEqual({
      reads: ['GET /applications', 'GET /services', 'GET /databases'],
      uuids: [WEB.uuid, QUEUE.uuid, PG.uuid]
    })
    expect(rows(result).map(row => [row.name, row.kind, row.app_uuid, row.status])).toEqual([
      ['web', 'application', WEB.uuid, 'finished'],
      ['queue', 'service', QUEUE.uuid, 'finished'],
      ['pg', 'database', PG.uuid, 'finished']
    ])
    expect(result.outputs.url).toBe(APP.fqdn)
  })

  it('reads the applications alone when every name is an application, or a uuid', async () => {
    const server = await start({ apps: [WEB, QUEUE, SHOP_WEB] })
    const result = await run(server, { app: `shop/staging/web\n${WEB.uuid}` })

    expect(result.code).toBe(0)
    const { reads, uuids } = beforeTrigger(server)
    expect(uuids).toEqual([SHOP_WEB.uuid, WEB.uuid])
    expect(reads.filter(read => !read.startsWith('GET /projects'))).toEqual(['GET /applications'])
  })

  it('deploys the one named by project/environment/name where the name repeats', async () => {
    const server = await start({ apps: [WEB, SHOP_WEB] })
    const result = await run(server, { app: 'shop/staging/web' })

    expect(result.code).toBe(0)
    expect(beforeTrigger(server).uuids).toEqual([SHOP_WEB.uuid])
    expect(rows(result)).toEqual([
      expect.objectContaining({ app_uuid: SHOP_WEB.uuid, url: SHOP_WEB.fqdn, status: 'finished' })
    ])
    expect(server.deployments().map(deployment => deployment.appUuid)).toEqual([SHOP_WEB.uuid])
  })

  // Guards: an unknown name fails before any write, naming it and a close name, never the list.
  it('refuses an unknown name, with the close ones, and deploys nothing', async () => {
    const server = await start({ apps: [WEB, QUEUE, PG] })
    const result = await run(server, { app: 'web, wbe' })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      '::error::Input `app`: no application, service or database named "wbe" is visible to this token (close: "web"); write the name as Coolify shows it on the resource\'s page, as project/environment/name, or its uuid.'
    ])
    expect(result.stdout).not.toContain('queue')
    expectNothingWritten(server)
    expectNoStackTrace(result.stderr)
  })

  // Guards: an ambiguous name fails before any write, each candidate in the form to write.
  it('refuses an ambiguous name, listing each candidate, and deploys nothing', async () => {
    const server = await start({ apps: [WEB, SHOP_WEB] })
    const result = await run(server, { app: 'web' })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      `::error::Input \`app\`: "web" names 2 resources, so nothing was deployed: My first project/production/web (${WEB.uuid}), shop/staging/web (${SHOP_WEB.uuid}); write the one to deploy as project/environment/name, or by its uuid.`
    ])
    expectNothingWritten(server)
    expectNoStackTrace(result.stderr)
  })

  it('refuses app and app-uuid together without asking Coolify anything', async () => {
    const server = await start()
    const result = await run(server, { app: 'web', 'app-uuid': APP.uuid })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      '::error::Give either `app` or `app-uuid`, not both: `app` takes uuids as well as names, so put them all there.'
    ])
    expect(actionRequests(server)).toEqual([])
  })

  it('says which ability is missing when the token may not read the list', async () => {
    const server = await start({ abilities: ['deploy'] })
    const result = await run(server, { app: 'web' })

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)).toEqual([
      expect.stringMatching(/^::error::GET \/applications: .*403.*read/)
    ])
    expectNothingWritten(server)
  })
})

describe('a resource by name, as by uuid', () => {
  it("deploys a pull request's preview", async () => {
    const server = await start({ apps: [{ ...WEB, previews: [7] }] })
    const result = await run(server, { app: 'web', pr: '7', comment: 'false' })

    expect(result.code).toBe(0)
    const trigger = actionRequests(server).find(request => request.path === '/api/v1/deploy')!
    expect(trigger.query).toMatchObject({ uuid: WEB.uuid, pr: '7' })
    expect(server.deployments()).toEqual([expect.objectContaining({ pr: 7 })])
  })

  it("removes a pull request's preview", async () => {
    const server = await start({ apps: [{ ...WEB, previews: [7] }] })
    const result = await run(server, {
      app: 'web',
      pr: '7',
      'delete-preview': 'true',
      comment: 'false'
    })

    expect(result.code).toBe(0)
    expect(requestLines(actionRequests(server))).toEqual([
      'GET /api/v1/applications',
      `DELETE /api/v1/applications/${WEB.uuid}/previews/7`
    ])
  })

  it('follows the deployment Coolify started by itself (trigger: false)', async () => {
    const scenario: Scenario = { ...build('finished'), commit: COMMIT }
    const server = await start({ apps: [{ ...WEB, scenarios: [scenario] }, SHOP_WEB] })
    const pushed = server.push(WEB.uuid, { commit: COMMIT })!
    const result = await run(server, {
      app: 'My first project/production/web',
      trigger: 'false',
      commit: COMMIT
    })

    expect(result.code).toBe(0)
    expect(result.outputs['deployment-uuid']).toBe(pushed.uuid)
    expect(actionRequests(server).filter(request => request.method !== 'GET')).toEqual([])
  })

  it('rolls back a named application whose new version fails', async () => {
    const earlier: Scenario = {
      ...build('finished'),
      commit: 'abc1234abc1234abc1234abc1234abc1234abc12'
    }
    const broken: Scenario = { ...build('failed'), commit: 'def5678' }
    const server = await start({ apps: [{ ...WEB, scenarios: [earlier, broken, earlier] }] })
    // The earlier finished deployment, the version to go back to.
    expect((await run(server, { app: 'web' })).code).toBe(0)
    const result = await run(server, { app: 'web', 'rollback-on-failure': 'true' })

    expect(result.code).toBe(1)
    expect(result.outputs['rolled-back']).toBe('true')
    const rollback = actionRequests(server).find(
      request => request.path === `/api/v1/applications/${WEB.uuid}/rollback`
    )
    expect(JSON.parse(rollback!.body)).toEqual({
      commit: 'abc1234abc1234abc1234abc1234abc1234abc12'
    })
  })

  it('makes a review app from a template named by name', async () => {
    // Git LFS off: on (Coolify's default), the template is refused.
    const server = await start({
      apps: [{ ...WEB, columns: { 'settings.is_git_lfs_enabled': false } }]
    })
    const result = await run(
      server,
      {
        app: 'web',
        pr: '7',
        'review-app': 'true',
        'review-domain': 'https://pr-{pr}.preview.example.com',
        'review-destination': 'd0stinationfakecoolify01',
        comment: 'false'
      },
      pullRequestEventEnv({ number: 7, headRef: 'feature/login' })
    )

    expect(result.code).toBe(0)
    const review = server.apps().find(app => app.name === 'web-pr-7')
    expect(review).toBeDefined()
    expect(result.outputs['review-app-uuid']).toBe(review!.uuid)
    expect(requestLines(actionRequests(server)).filter(line => line.endsWith('/clone'))).toEqual([
      `POST /api/v1/applications/${WEB.uuid}/clone`
    ])
  })
})
