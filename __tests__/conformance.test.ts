/** The conformance checker, on requests recorded by the fake Coolify over real HTTP. */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { CoolifyClient } from '../src/coolify/client.js'
import { startFakeCoolify } from '../test/fake-coolify/index.js'
import type { FakeCoolify, RecordedRequest } from '../test/fake-coolify/index.js'
import { checkRequest, loadSpec } from '../test/support/conformance.js'
import { pullRequestEventEnv } from '../test/support/events.js'
import { runAction } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  endless,
  fakeCoolifyPerTest,
  inputsFor,
  startElsewhere
} from '../test/support/scenarios.js'

let fake: FakeCoolify

beforeEach(async () => {
  fake = await startFakeCoolify({ abilities: ['root'], apps: [{ uuid: 'web', name: 'Web' }] })
})

afterEach(async () => {
  await fake.close()
})

/** Sends one request as the action would, unless `headers` say otherwise; returns its record. */
async function sent(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
): Promise<RecordedRequest> {
  await fetch(`${fake.url}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      authorization: 'Bearer test-token',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
  })
  return fake.requests.at(-1)!
}

// Downloaded once where the copy beside the repository is missing (GitHub's hosted CI).
beforeAll(loadSpec, 90_000)

describe('checkRequest', () => {
  // Every route the client has, called once: a method added to the client without a line here
  // fails the first check, and a request the spec does not describe fails the second.
  it('passes every request the client can send', async () => {
    const client = new CoolifyClient({ apiUrl: `${fake.url}/api/v1`, token: 'test-token' })
    const signal = AbortSignal.timeout(10_000)
    const calls: Record<string, () => Promise<unknown>> = {
      listApplications: () => client.listApplications(signal),
      getApplication: () => client.getApplication('web', signal),
      getApplicationDated: () => client.getApplicationDated('web', signal),
      listApplicationsDated: () => client.listApplicationsDated(signal),
      updateApplication: () =>
        client.updateApplication('web', { git_branch: 'main', description: 'd' }, signal),
      updateApplicationEnvs: () =>
        client.updateApplicationEnvs('web', [{ key: 'A', value: '1' }], signal),
      deploy: () =>
        client.deploy({ uuids: ['web'], force: true, pr: 7, dockerTag: 'pr-7' }, signal),
      listDeployments: () => client.listDeployments('web', 10, signal),
      getDeployment: () => client.getDeployment('abc', signal),
      getDeploymentDated: () => client.getDeploymentDated('abc', signal),
      cancelDeployment: () => client.cancelDeployment('abc', signal),
      deletePreview: () => client.deletePreview('web', 7, signal),
      getApplicationLogs: () => client.getApplicationLogs('web', 100, signal),
      rollback: () => client.rollback('web', 'abc1234', signal),
      rollbackImages: () => client.rollbackImages('web', signal),
      listDestinations: () => client.listDestinations('web', signal),
      listServerDestinations: () => client.listServerDestinations('srv', signal),
      listTeamDestinations: () => client.listTeamDestinations(signal),
      cloneApplication: () =>
        client.cloneApplication('web', { destination_uuid: 'd', name: 'web-pr-7' }, signal),
      createApplication: () =>
        client.createApplication(
          {
            project_uuid: 'p',
            server_uuid: 's',
            environment_name: 'production',
            private_key_uuid: 'k',
            git_repository: 'git@git.example.com:acme/web.git',
            git_branch: 'main',
            build_pack: 'dockerfile',
            ports_exposes: '3000',
            name: 'web-pr-7',
            description: 'Review app',
            domains: 'https://pr-7.example.com'
          },
          signal
        ),
      deleteApplication: () => client.deleteApplication('web', signal),
      listApplicationTags: () => client.listApplicationTags('web', signal),
      removeApplicationTag: () => client.removeApplicationTag('web', 't', signal),
      listApplicationEnvs: () => client.listApplicationEnvs('web', signal),
      deleteApplicationEnv: () => client.deleteApplicationEnv('web', 'e', signal),
      listApplicationStorages: () => client.listApplicationStorages('web', signal),
      listScheduledTasks: () => client.listScheduledTasks('web', signal),
      deleteScheduledTask: () => client.deleteScheduledTask('web', 't', signal),
      listServices: () => client.listServices(signal),
      getService: () => client.getService('svc', signal),
      getServiceLogs: () => client.getServiceLogs('svc', 'app', 100, signal),
      listDatabases: () => client.listDatabases(signal),
      listProjects: () => client.listProjects(signal),
      getProject: () => client.getProject('p', signal),
      getDatabase: () => client.getDatabase('db', signal),
      getDatabaseLogs: () => client.getDatabaseLogs('db', 100, signal),
      runningDeployments: () => client.runningDeployments(signal),
      runningDeploymentsDated: () => client.runningDeploymentsDated(signal),
      version: () => client.version(signal),
      team: () => client.team(signal),
      checkAbility: () =>
        client.checkAbility('deploy', signal).then(() => client.checkAbility('write', signal))
    }
    const routes = Object.getOwnPropertyNames(CoolifyClient.prototype).filter(
      name =>
        ![
          'constructor',
          'retryDelay',
          'readBudget',
          'holdBack',
          'close',
          'call',
          'dated',
          'send'
        ].includes(name)
    )
    expect(Object.keys(calls).sort()).toEqual(routes.sort())
    try {
      for (const call of Object.values(calls)) await call().catch(() => undefined)
    } finally {
      await client.close()
    }
    // checkAbility asks for two abilities, by two routes.
    expect(fake.requests).toHaveLength(routes.length + 1)
    for (const request of fake.requests) {
      expect([request.path, checkRequest(request)]).toEqual([request.path, []])
    }
  })

  it('names the route, parameter, header and body problems', async () => {
    const problems = async (...args: Parameters<typeof sent>): Promise<string[]> =>
      checkRequest(await sent(...args))

    // GET /deploy is known as an ability check only: it never deploys.
    expect(await problems('GET', '/api/v1/deploy?uuid=web')).toEqual([
      'GET /deploy: query parameter uuid is not declared'
    ])
    expect(await problems('DELETE', '/api/v1/deploy')).toEqual([
      'DELETE /api/v1/deploy: /deploy has no DELETE (only POST, GET)'
    ])
    expect(await problems('GET', '/api/v1/nothing/here')).toEqual([
      'GET /api/v1/nothing/here: no such path in the spec'
    ])
    expect(await problems('GET', '/v1/applications')).toEqual([
      'GET /v1/applications: not under /api/v1'
    ])
    expect(await problems('POST', '/api/v1/deploy?uuid=web&commit=abc&pr=x')).toEqual([
      'POST /deploy: query parameter commit is not declared',
      'POST /deploy: query parameter pr is not an integer'
    ])
    expect(await problems('POST', '/api/v1/deploy', { uuid: 'web' })).toEqual([
      'POST /deploy: sends a body, but the operation takes none'
    ])
    expect(await problems('GET', '/api/v1/applications', undefined, { accept: '*/*' })).toEqual([
      'GET /applications: Accept is not application/json'
    ])
    expect(
      await problems('GET', '/api/v1/applications', undefined, { authorization: 'Basic x' })
    ).toEqual(['GET /applications: no Authorization: Bearer token'])
    expect(await problems('DELETE', '/api/v1/applications/web/previews/seven')).toEqual([
      'DELETE /applications/{uuid}/previews/{pull_request_id}: path parameter pull_request_id is not an integer'
    ])
  })

  it('checks JSON bodies against the schema and the PATCH allow-list', async () => {
    const problems = async (path: string, body: unknown, method = 'PATCH'): Promise<string[]> =>
      checkRequest(await sent(method, path, body))

    expect(
      await problems('/api/v1/applications/web', {
        environment_variables: 'A=1',
        server_uuid: 's1',
        name: 5
      })
    ).toEqual([
      "PATCH /applications/{uuid}: body must NOT have additional properties 'environment_variables'",
      'PATCH /applications/{uuid}: body/name must be string',
      'PATCH /applications/{uuid}: field environment_variables is refused by Coolify (not in PATCH_ALLOWED)',
      'PATCH /applications/{uuid}: field server_uuid is refused by Coolify (not in PATCH_ALLOWED)'
    ])
    expect(
      await problems('/api/v1/applications/web/envs/bulk', {
        data: [{ key: 'A', value: 1, is_secret: true }]
      })
    ).toEqual([
      "PATCH /applications/{uuid}/envs/bulk: body/data/0 must NOT have additional properties 'is_secret'",
      'PATCH /applications/{uuid}/envs/bulk: body/data/0/value must be string'
    ])
    expect(await problems('/api/v1/applications/web/rollback', {}, 'POST')).toEqual([
      "POST /applications/{uuid}/rollback: body must have required property 'commit'"
    ])
    expect(await problems('/api/v1/applications/web/envs/bulk', 'data=x')).toEqual([
      'PATCH /applications/{uuid}/envs/bulk: the body is not JSON'
    ])
    const missing = await sent('POST', '/api/v1/applications/web/rollback')
    expect(checkRequest(missing)).toEqual([
      'POST /applications/{uuid}/rollback: the JSON body is missing'
    ])
  })
})

/**
 * Every input that changes a request, run through the bundled action against the 4.x fake: each
 * request it sent must be one the spec and Coolify's PATCH allow-list accept.
 */
describe('every request the action sends', () => {
  const start = fakeCoolifyPerTest(() => ({
    abilities: ['root'],
    apps: [
      { ...APP, previews: [7], tags: ['prod'], scenarios: [build('finished')] },
      { uuid: 'api0app0uuid0000000002', name: 'api', tags: ['prod'] }
    ]
  }))

  it.each<{
    name: string
    inputs: Record<string, string>
    before?: (server: FakeCoolify) => unknown
    /** The pull request's event, where the run needs one. */
    env?: Record<string, string>
  }>([
    { name: 'a plain deploy', inputs: {} },
    { name: 'force', inputs: { force: 'true' } },
    {
      name: 'several applications',
      inputs: { 'app-uuid': `${APP.uuid},api0app0uuid0000000002` }
    },
    { name: 'a tag', inputs: { 'app-uuid': '', tag: 'prod' } },
    { name: 'a pull request preview', inputs: { pr: '7' } },
    {
      name: 'a Docker-image preview made from its tag',
      inputs: { pr: '12', 'image-tag': 'pr-12' },
      before: server =>
        server.addApp({
          ...APP,
          buildPack: 'dockerimage',
          image: { name: 'ghcr.io/octo/web' },
          scenarios: [build('finished')]
        })
    },
    { name: 'removing a preview', inputs: { pr: '7', 'delete-preview': 'true' } },
    { name: 'removing a preview already gone', inputs: { pr: '8', 'delete-preview': 'true' } },
    {
      name: 'settings before the deploy',
      inputs: { 'git-branch': 'staging', domains: 'https://s.example.com', env: 'A=1\nB=two' }
    },
    { name: 'wait: false', inputs: { wait: 'false' } },
    {
      name: 'a review app',
      inputs: {
        pr: '7',
        'review-app': 'true',
        'review-domain': 'https://pr-{pr}.example.com',
        'review-destination': 'd0stinationfakecoolify01',
        'git-branch': 'feature/x',
        env: 'A=1'
      },
      // Git LFS off: on (Coolify's default), the template is refused.
      before: server =>
        server.addApp({
          ...APP,
          columns: { 'settings.is_git_lfs_enabled': false },
          scenarios: [build('finished')]
        }),
      env: pullRequestEventEnv({ number: 7, headRef: 'feature/x' })
    },
    {
      name: 'a timeout that cancels',
      inputs: { timeout: '1s' },
      before: server => server.addApp({ ...APP, scenarios: [endless()] })
    },
    {
      name: 'a trigger whose answer was lost',
      inputs: {},
      before: server => server.inject({ method: 'POST', path: '/deploy', do: 'lost' })
    },
    {
      name: 'an "already queued" answer',
      inputs: {},
      before: async server => {
        await startElsewhere(server)
      }
    },
    {
      name: 'image-tag, with a deployment of the old tag running',
      inputs: { 'image-tag': '2.0', 'rollback-on-failure': 'true' },
      before: async server => {
        server.addApp({
          ...APP,
          buildPack: 'dockerimage',
          image: { name: 'ghcr.io/acme/web', tag: '1.0' },
          scenarios: [endless(), build('failed'), build('finished')]
        })
        await startElsewhere(server)
      }
    },
    { name: 'commit', inputs: { commit: '0123456789abcdef0123456789abcdef01234567' } },
    {
      name: 'health-url and health-timeout',
      inputs: { 'health-url': '/health', 'health-timeout': '1s' }
    },
    {
      name: 'rollback-on-failure of a git app',
      inputs: { 'rollback-on-failure': 'true' },
      before: async server => {
        server.addApp({
          ...APP,
          scenarios: [{ ...build('finished'), commit: 'abc1234' }, build('failed')]
        })
        await startElsewhere(server)
        while (server.deployments()[0]?.status !== 'finished') {
          await new Promise(resolve => setTimeout(resolve, 20))
        }
      }
    }
  ])('$name', async ({ inputs, before, env }) => {
    const server = await start()
    await before?.(server)
    const result = await runAction({ inputs: inputsFor(server, inputs), env })
    expect(result.stderr).toBe('')
    const requests = actionRequests(server)
    expect(requests.length).toBeGreaterThan(0)
    const problems = requests.flatMap(request => checkRequest(request))
    expect(problems).toEqual([])
  })
})
