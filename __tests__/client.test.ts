/**
 * The Coolify client against the fake Coolify over real HTTP on loopback: what goes on the wire,
 * what comes back, how failures read, and when requests are repeated.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from '@jest/globals'
import { CoolifyClient } from '../src/coolify/client.js'
import type { ClientOptions } from '../src/coolify/client.js'
import { CoolifyError } from '../src/coolify/errors.js'
import { ActionError } from '../src/errors.js'
import { FIRST_ANSWER_GRACE_MS, sleep } from '../src/coolify/pacing.js'
import { startFakeCoolify } from '../test/fake-coolify/index.js'
import type {
  FakeApp,
  FakeCoolify,
  FakeOptions,
  Fault,
  Flavor,
  RecordedRequest,
  Scenario
} from '../test/fake-coolify/index.js'

const TOKEN = 'test-token'
const API = '/api/v1'

/** Stays in progress for a minute, so it can be cancelled. */
const LONG: Scenario = {
  commit: 'c0ffee',
  steps: [
    { at: 0, status: 'in_progress', lines: ['Starting deployment.', 'Building.'] },
    { at: 60_000, status: 'finished' }
  ]
}
const WEB: FakeApp = { uuid: 'webuuid0000000000000000a', name: 'web', scenarios: [LONG] }
const API_APP: FakeApp = {
  uuid: 'apiuuid0000000000000000b',
  name: 'api',
  tags: ['backend'],
  previews: [7],
  scenarios: [LONG]
}

let fake: FakeCoolify | undefined
let client: CoolifyClient | undefined
/** What the client said of Coolify's reachability. */
let notes: string[] = []

/** A signal for a call that must succeed: long enough for any retry here. */
const S = (): AbortSignal => AbortSignal.timeout(20_000)

afterEach(async () => {
  await client?.close()
  await fake?.close()
  client = fake = undefined
  notes = []
})

interface Setup {
  fake?: FakeOptions
  client?: Partial<ClientOptions>
}

/** A fake with WEB and API_APP, and a client for it that retries fast and records its retries. */
async function setup(options: Setup = {}): Promise<{ fake: FakeCoolify; client: CoolifyClient }> {
  fake = await startFakeCoolify({ apps: [WEB, API_APP], ...options.fake })
  client = clientFor(fake.url, options.client)
  return { fake, client }
}

function clientFor(url: string, options: Partial<ClientOptions> = {}): CoolifyClient {
  return new CoolifyClient({
    apiUrl: `${url}${API}`,
    token: TOKEN,
    requestTimeoutMs: 5000,
    note: message => notes.push(message),
    ...options,
    retry: { baseDelayMs: 10, maxDelayMs: 50, ...options.retry }
  })
}

/** The CoolifyError a call fails with, checked for what every such error must be. */
async function failure(promise: Promise<unknown>): Promise<CoolifyError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail')
    },
    (e: unknown) => e
  )
  expect(error).toBeInstanceOf(CoolifyError)
  const coolify = error as CoolifyError
  expect(coolify.message).not.toMatch(/[\r\n]/)
  expect(coolify.message).not.toContain(TOKEN)
  return coolify
}

/** Polls until `done`, for at most two seconds. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done() && waited < 2000; waited += 5) {
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

/** The one request the fake saw. */
function onlyRequest(): RecordedRequest {
  expect(fake!.requests).toHaveLength(1)
  return fake!.requests[0]
}

function expectRequest(
  request: RecordedRequest,
  method: string,
  path: string,
  query: Record<string, string> = {}
): void {
  expect({ method: request.method, path: request.path, query: request.query }).toEqual({
    method,
    path: API + path,
    query
  })
}

const FLAVORS: Record<
  Flavor,
  { appStatus: string; idField: string; cancelled: string; cancelMessage: string }
> = {
  '4x': {
    appStatus: 'running:healthy',
    idField: 'deployment_uuid',
    cancelled: 'cancelled-by-user',
    cancelMessage: 'Deployment cancelled successfully.'
  },
  seed: {
    appStatus: 'running',
    idField: 'uuid',
    cancelled: 'cancelled',
    cancelMessage: 'Deployment cancelled.'
  }
}

describe.each(Object.keys(FLAVORS) as Flavor[])('endpoints, %s flavor', flavor => {
  const expected = FLAVORS[flavor]
  const start = (): ReturnType<typeof setup> => setup({ fake: { flavor, abilities: ['root'] } })

  /** Deploys WEB through the fake's own state, and forgets that request. */
  async function deployed(c: CoolifyClient): Promise<string> {
    const answer = await c.deploy({ uuids: [WEB.uuid] }, S())
    fake!.requests.length = 0
    return answer.deployments![0].deployment_uuid!
  }

  it('listApplications: GET /applications, parsed', async () => {
    const { client } = await start()
    const apps = await client.listApplications(S())
    expectRequest(onlyRequest(), 'GET', '/applications')
    expect(apps.map(a => a.uuid)).toEqual([WEB.uuid, API_APP.uuid])
    expect(apps[0]).toMatchObject({
      name: 'web',
      status: expected.appStatus,
      // 4.x escapes slashes (`http:\/\/`); parsing undoes it.
      fqdn: `http://${WEB.uuid}.127.0.0.1.sslip.io`,
      build_pack: 'dockerfile'
    })
  })

  it('getApplication: GET /applications/{uuid}, escaped in the path', async () => {
    const { client } = await start()
    const app = await client.getApplication(WEB.uuid, S())
    expectRequest(onlyRequest(), 'GET', `/applications/${WEB.uuid}`)
    expect(app).toMatchObject({ uuid: WEB.uuid, name: 'web', ports_exposes: '3000' })
    expect(app).not.toHaveProperty('id')

    const error = await failure(client.getApplication('a/b?c', S()))
    expect(fake!.requests[1].path).toBe(`${API}/applications/a%2Fb%3Fc`)
    expect(error.status).toBe(404)
  })

  it('updateApplication: PATCH /applications/{uuid} with only the changed fields', async () => {
    const { client } = await start()
    // Real 4.x servers refuse environment_variables on this route.
    const env = flavor === 'seed' ? { environment_variables: 'A=1\nB=two' } : {}
    const changes = { domains: 'https://web.example.com', ...env }
    await client.updateApplication(WEB.uuid, changes, S())
    const request = onlyRequest()
    expectRequest(request, 'PATCH', `/applications/${WEB.uuid}`)
    expect(request.headers['content-type']).toBe('application/json')
    expect(JSON.parse(request.body)).toEqual(changes)
    const app = await client.getApplication(WEB.uuid, S())
    expect(app.fqdn).toBe('https://web.example.com')
    expect(app.environment_variables ?? []).toEqual(
      flavor === 'seed'
        ? [
            { key: 'A', value: '1', is_secret: false },
            { key: 'B', value: 'two', is_secret: false }
          ]
        : []
    )
  })

  it('updateApplicationEnvs: PATCH /applications/{uuid}/envs/bulk with {data: [...]}', async () => {
    const { fake, client } = await start()
    const saved = [
      { uuid: 'env1', key: 'A', value: '1' },
      { uuid: 'env2', key: 'B', value: 'two words' }
    ]
    fake.inject({
      method: 'PATCH',
      path: `/applications/${WEB.uuid}/envs/bulk`,
      do: { status: 201, body: saved }
    })
    const variables = [
      { key: 'A', value: '1' },
      { key: 'B', value: 'two words' }
    ]
    expect(await client.updateApplicationEnvs(WEB.uuid, variables, S())).toEqual(saved)
    const request = onlyRequest()
    expectRequest(request, 'PATCH', `/applications/${WEB.uuid}/envs/bulk`)
    expect(request.headers['content-type']).toBe('application/json')
    expect(JSON.parse(request.body)).toEqual({ data: variables })
  })

  it('updateApplicationEnvs: a server without the route answers its catch-all 404', async () => {
    const { fake, client } = await start()
    fake.inject({
      path: `/applications/${WEB.uuid}/envs/bulk`,
      do: { status: 404, body: { message: 'Not found.' } }
    })
    const error = await failure(
      client.updateApplicationEnvs(WEB.uuid, [{ key: 'A', value: '1' }], S())
    )
    expect(error.request).toBe(`PATCH /applications/${WEB.uuid}/envs/bulk`)
    expect(error.status).toBe(404)
    expect(error.details.serverMessage).toBe('Not found.')
  })

  it('deploy: POST /deploy with uuids in the query string, no body', async () => {
    const { fake, client } = await start()
    const answer = await client.deploy({ uuids: [WEB.uuid, API_APP.uuid] }, S())
    const request = onlyRequest()
    expectRequest(request, 'POST', '/deploy', { uuid: `${WEB.uuid},${API_APP.uuid}` })
    expect(request.body).toBe('')
    expect(request.headers['content-type']).toBeUndefined()
    const queued = fake.deployments()
    expect(queued.map(d => d.appUuid)).toEqual([WEB.uuid, API_APP.uuid])
    expect(answer.deployments).toEqual([
      {
        message: 'Application web deployment queued.',
        resource_uuid: WEB.uuid,
        deployment_uuid: queued[0].uuid
      },
      {
        message: 'Application api deployment queued.',
        resource_uuid: API_APP.uuid,
        deployment_uuid: queued[1].uuid
      }
    ])
    expect(queued.every(d => !d.force)).toBe(true)
  })

  it('deploy: force=true, pr and tags go in the query string too', async () => {
    const { fake, client } = await start()
    await client.deploy({ uuids: [API_APP.uuid], force: true, pr: 7 }, S())
    expectRequest(fake.requests[0], 'POST', '/deploy', {
      uuid: API_APP.uuid,
      force: 'true',
      pr: '7'
    })
    expect(fake.deployments()[0]).toMatchObject({ appUuid: API_APP.uuid, force: true, pr: 7 })

    const byTag = await client.deploy({ tags: ['backend', 'none'] }, S())
    expectRequest(fake.requests[1], 'POST', '/deploy', { tag: 'backend,none' })
    expect(byTag.details).toEqual([
      { resource_uuid: API_APP.uuid, deployment_uuid: fake.deployments()[1].uuid }
    ])
  })

  it('listDeployments: GET /deployments/applications/{uuid}?skip=0&take=N', async () => {
    const { client } = await start()
    const id = await deployed(client)
    const history = await client.listDeployments(WEB.uuid, 5, S())
    expectRequest(onlyRequest(), 'GET', `/deployments/applications/${WEB.uuid}`, {
      skip: '0',
      take: '5'
    })
    expect(history.count).toBe(1)
    expect(history.deployments).toHaveLength(1)
    expect(history.deployments[0]).toMatchObject({
      deployment_uuid: id,
      status: 'in_progress',
      commit: 'c0ffee'
    })
  })

  it('getDeployment: GET /deployments/{uuid}', async () => {
    const { client } = await start()
    const id = await deployed(client)
    const detail = await client.getDeployment(id, S())
    expectRequest(onlyRequest(), 'GET', `/deployments/${id}`)
    expect(detail).toHaveProperty(expected.idField, id)
    expect(detail.status).toBe('in_progress')
    expect(detail.finished_at).toBeNull()
    expect(detail.logs).toContain('Starting deployment.')
  })

  it('getDeploymentDated: the same row, its 4.x log left as it stands in the answer', async () => {
    const { client } = await start()
    const id = await deployed(client)
    const whole = await client.getDeployment(id, S())
    const dated = await client.getDeploymentDated(id, S())
    expect(dated.body).toEqual(whole)
    expect(dated.log?.text()).toBe(flavor === '4x' ? whole.logs : undefined)
    expect(dated.date).toBeGreaterThan(0)
  })

  it('cancelDeployment: POST /deployments/{uuid}/cancel, no body', async () => {
    const { fake, client } = await start()
    const id = await deployed(client)
    const answer = await client.cancelDeployment(id, S())
    const request = onlyRequest()
    expectRequest(request, 'POST', `/deployments/${id}/cancel`)
    expect(request.body).toBe('')
    expect(answer).toMatchObject({ message: expected.cancelMessage })
    expect(fake.deployments()[0].status).toBe(expected.cancelled)
  })
})

describe('request headers and parameters', () => {
  const access = { 'CF-Access-Client-Id': 'id.access', 'CF-Access-Client-Secret': 'shh' }

  it('keeps its own accept and authorization over extra headers of the same name', async () => {
    const { fake, client } = await setup({
      client: { headers: { Authorization: 'Basic abc', ACCEPT: 'text/html' } }
    })
    await client.listApplications(S())
    expect(fake.requests[0].headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(fake.requests[0].headers.accept).toBe('application/json')
  })

  it('sends accept, authorization and the extra headers on every request', async () => {
    const { fake, client } = await setup({
      fake: { requiredHeaders: access, abilities: ['root'] },
      client: { headers: access }
    })
    await client.listApplications(S())
    await client.updateApplication(WEB.uuid, { name: 'renamed' }, S())
    const { deployments } = await client.deploy({ uuids: [WEB.uuid] }, S())
    await client.cancelDeployment(deployments![0].deployment_uuid!, S())
    expect(fake.requests).toHaveLength(4)
    for (const request of fake.requests) {
      expect(request.fault).toBeUndefined()
      expect(request.headers).toMatchObject({
        accept: 'application/json',
        authorization: `Bearer ${TOKEN}`,
        'cf-access-client-id': 'id.access',
        'cf-access-client-secret': 'shh'
      })
    }
    expect(fake.requests.map(r => r.headers['content-type'])).toEqual([
      undefined,
      'application/json',
      undefined,
      undefined
    ])
  })

  it.each([
    { force: false, query: {} },
    { force: undefined, query: {} },
    { force: true, query: { force: 'true' } }
  ])('deploy({force: $force}) sends $query besides the uuid', async ({ force, query }) => {
    const { fake, client } = await setup()
    await client.deploy({ uuids: [WEB.uuid], force }, S())
    expect(onlyRequest().query).toEqual({ uuid: WEB.uuid, ...query })
    expect(fake.deployments()[0].force).toBe(force === true)
  })

  it('deploy leaves out empty lists', async () => {
    const { client } = await setup()
    await failure(client.deploy({ uuids: [], tags: [] }, S()))
    expect(onlyRequest().query).toEqual({})
  })
})

interface ErrorCase {
  name: string
  fake?: FakeOptions
  client?: Partial<ClientOptions>
  fault?: Fault
  call: (client: CoolifyClient, signal: AbortSignal) => Promise<unknown>
  request: string
  status: number | undefined
  transient?: boolean
  /** All must match the message. */
  says: RegExp[]
  /** None may appear in the message. */
  hides?: string[]
}

const list = (c: CoolifyClient, s: AbortSignal): Promise<unknown> => c.listApplications(s)
const deployWeb = (c: CoolifyClient, s: AbortSignal): Promise<unknown> =>
  c.deploy({ uuids: [WEB.uuid] }, s)
const PAGE = '<html><head><title>Just a moment...</title></head><body>SECRET=abc</body></html>'

const ERROR_CASES: ErrorCase[] = [
  {
    name: '401 Unauthenticated',
    client: { token: 'wrong-token-9f8e' },
    call: list,
    request: 'GET /applications',
    status: 401,
    says: [
      /401 "Unauthenticated\."/,
      /token was refused: it has expired/,
      /not expired/,
      /`token`/
    ],
    hides: ['wrong-token-9f8e']
  },
  {
    name: '400 Invalid token (a token of no team)',
    client: { token: 'invalid-token-77' },
    call: list,
    request: 'GET /applications',
    status: 400,
    says: [/400 "Invalid token\."/, /`token`/],
    hides: ['invalid-token-77', 'docs']
  },
  {
    name: '403 without the deploy ability',
    fake: { abilities: ['read'] },
    call: deployWeb,
    request: 'POST /deploy',
    status: 403,
    says: [/Missing required permissions: deploy/, /lacks the `deploy` ability/]
  },
  {
    name: '403 without the read ability',
    fake: { abilities: ['deploy'] },
    call: list,
    request: 'GET /applications',
    status: 403,
    says: [/lacks the `read` ability/]
  },
  {
    name: '403 API disabled',
    fake: { apiDisabled: true },
    call: list,
    request: 'GET /applications',
    status: 403,
    says: [/"API is disabled\."/, /enable API access/]
  },
  {
    name: '403 IP not on the allow-list',
    fake: { ipBlocked: true },
    call: deployWeb,
    request: 'POST /deploy',
    status: 403,
    says: [/not allowed to access the API/, /allow-list/]
  },
  {
    name: '404 unknown application',
    call: (c, s) => c.getApplication('nosuchapp', s),
    request: 'GET /applications/nosuchapp',
    status: 404,
    says: [/404 "Application not found\."/]
  },
  {
    name: '404 no resources to deploy',
    call: (c, s) => c.deploy({ uuids: ['nosuchapp'] }, s),
    request: 'POST /deploy',
    status: 404,
    says: [/404 "No resources found\."/]
  },
  {
    name: '405 method refused',
    fault: {
      method: 'POST',
      path: '/deploy',
      do: { status: 405, body: { message: 'This endpoint has changed to a POST request.' } }
    },
    call: deployWeb,
    request: 'POST /deploy',
    status: 405,
    says: [/405 "This endpoint has changed/, /Coolify 4/]
  },
  {
    name: '422 validation failed',
    fake: { abilities: ['root'] },
    call: (c, s) => c.updateApplication(WEB.uuid, { name: 'x', fqdn: 'nope' } as never, s),
    request: `PATCH /applications/${WEB.uuid}`,
    status: 422,
    // The fields' names, never their messages: those may quote the values sent.
    says: [/422 "Validation failed\."/, /\(invalid: fqdn\)/],
    hides: ['not allowed', 'nope']
  },
  {
    name: '302 to a Cloudflare Access login page',
    fake: { requiredHeaders: { 'CF-Access-Client-Id': 'id', 'CF-Access-Client-Secret': 's' } },
    call: list,
    request: 'GET /applications',
    status: 302,
    says: [/302 redirect to fake-team\.cloudflareaccess\.com/, /Cloudflare Access/, /`headers`/],
    hides: ['redirect_url', 'Sign in', '<']
  },
  {
    name: '301 from http:// to https:// on the same host',
    fault: {
      do: { status: 301, headers: { location: 'https://127.0.0.1/api/v1/applications' }, body: '' }
    },
    call: list,
    request: 'GET /applications',
    status: 301,
    says: [
      /301 redirect to https:\/\/127\.0\.0\.1: Coolify's proxy serves it on https only/,
      /Use https:\/\/ in `coolify-url`: https:\/\/127\.0\.0\.1$/
    ],
    hides: ['Cloudflare']
  },
  {
    name: 'headers larger than Node reads',
    fault: {
      times: Infinity,
      do: { status: 200, headers: { 'x-padding': 'x'.repeat(20_000) }, body: [] }
    },
    call: list,
    request: 'GET /applications',
    status: undefined,
    says: [
      /the answer cannot be read: its headers are larger than Node reads/,
      /proxy in front of Coolify/
    ],
    hides: ['xxx']
  },
  {
    name: 'a body in an encoding that was not asked for',
    fault: {
      times: Infinity,
      do: { status: 200, headers: { 'content-encoding': 'zstd' }, body: [] }
    },
    call: list,
    request: 'GET /applications',
    status: 200,
    says: [
      /the answer \(200\) cannot be read: its body came compressed \(zstd\), which was not asked for/,
      /gzip or plain, no other encoding/
    ]
  },
  {
    name: '403 Cloudflare challenge (cf-mitigated)',
    fault: { do: { status: 403, headers: { 'cf-mitigated': 'challenge' }, body: PAGE } },
    call: list,
    request: 'GET /applications',
    status: 403,
    says: [/Cloudflare/, /cf-mitigated: challenge/, /`headers`/],
    hides: ['Just a moment', 'SECRET=abc', '<']
  },
  {
    name: '502 HTML page from a proxy',
    fault: { times: Infinity, do: 'html' },
    call: list,
    request: 'GET /applications',
    status: 502,
    transient: true,
    says: [/a proxy in front of Coolify answered 502 with an HTML page/, /try again later/],
    hides: ['nginx', 'Bad Gateway', '<']
  },
  {
    name: '404 HTML page: not the API',
    fault: {
      do: { status: 404, body: '<!DOCTYPE html><html><body>404 | Not Found</body></html>' }
    },
    call: list,
    request: 'GET /applications',
    status: 404,
    says: [/HTML page \(404\)/, /`coolify-url`/],
    hides: ['<', 'Not Found']
  },
  {
    name: '404 with an empty body: not the API',
    fault: { do: { status: 404, body: '' } },
    call: list,
    request: 'GET /applications',
    status: 404,
    says: [/bare 404 without Coolify's JSON message/, /`coolify-url`/]
  },
  {
    name: '404 with plain text: not the API',
    fault: { do: { status: 404, body: '404 page not found' } },
    call: deployWeb,
    request: 'POST /deploy',
    status: 404,
    says: [/bare 404 without Coolify's JSON message/, /`coolify-url`/],
    hides: ['page not found']
  },
  {
    name: "404 Coolify's catch-all route",
    fault: {
      do: { status: 404, body: { message: 'Not found.', docs: 'https://coolify.io/docs' } }
    },
    call: list,
    request: 'GET /applications',
    status: 404,
    says: [/Coolify answered 404 "Not found\."$/],
    hides: ['coolify-url', 'docs']
  },
  {
    name: "401 Invalid token (its user left the token's team)",
    fault: { do: { status: 401, body: { message: 'Invalid token.' } } },
    call: list,
    request: 'GET /applications',
    status: 401,
    says: [
      /401 "Invalid token\.": the token's user is no longer in the team the token was made for/,
      /Create a new API token.*admin or owner/
    ]
  },
  {
    name: '403 Missing required team role',
    fault: { do: { status: 403, body: { message: 'Missing required team role.' } } },
    call: deployWeb,
    request: 'POST /deploy',
    status: 403,
    says: [/only a member of its team/, /admin or owner/]
  },
  {
    name: "403 abilities beyond the user's role",
    fault: {
      do: {
        status: 403,
        body: {
          message:
            'This API token has permissions (deploy, read:sensitive) that exceed your current role as a team member. Members are restricted to read-only API access. Please revoke this token and create a new one with only read permissions.'
        }
      }
    },
    call: deployWeb,
    request: 'POST /deploy',
    status: 403,
    says: [/abilities \(deploy, read:sensitive\) exceed its user's role/, /admin or owner/],
    hides: ['Please revoke']
  },
  {
    name: '200 with an HTML page',
    fault: { times: Infinity, do: { status: 200, body: PAGE } },
    call: list,
    request: 'GET /applications',
    status: 200,
    transient: true,
    says: [/HTML page \(200\)/, /proxy or login page/],
    hides: ['Just a moment', 'SECRET=abc', '<']
  },
  {
    name: '500 whose JSON body carries more than a message',
    fault: {
      times: Infinity,
      do: { status: 500, body: { message: 'Server Error', env: 'SECRET=abc' } }
    },
    call: list,
    request: 'GET /applications',
    status: 500,
    transient: true,
    says: [/500 "Server Error"/],
    hides: ['SECRET=abc', 'env']
  },
  {
    name: '400 whose message runs over several lines',
    fault: { do: { status: 400, body: { message: 'Bad request.\nSECRET=abc\n' } } },
    call: deployWeb,
    request: 'POST /deploy',
    status: 400,
    says: [/400 "Bad request\."$/],
    hides: ['SECRET=abc']
  },
  {
    name: '400 whose message breaks its line with a carriage return',
    fault: { do: { status: 400, body: { message: 'Bad\rSECRET=abc' } } },
    call: deployWeb,
    request: 'POST /deploy',
    status: 400,
    says: [/400 "Bad"$/],
    hides: ['SECRET=abc']
  },
  {
    name: '400 whose message is not a string',
    fault: { do: { status: 400, body: { message: { env: 'SECRET=abc' } } } },
    call: deployWeb,
    request: 'POST /deploy',
    status: 400,
    says: [/Coolify answered 400$/],
    hides: ['SECRET=abc']
  }
]

describe('errors', () => {
  it.each(ERROR_CASES)('$name', async c => {
    // A transient failure is retried until the signal aborts: here, at the first retry.
    const once = new AbortController()
    const { fake, client } = await setup({
      fake: c.fake,
      client: { ...c.client, note: () => once.abort() }
    })
    if (c.fault) fake.inject(c.fault)
    const error = await failure(c.call(client, once.signal))
    expect(error.request).toBe(c.request)
    expect(error.message.startsWith(`${c.request}: `)).toBe(true)
    expect(error.status).toBe(c.status)
    expect(error.details.transient).toBe(c.transient ?? false)
    for (const pattern of c.says) expect(error.message).toMatch(pattern)
    for (const text of c.hides ?? []) expect(error.message).not.toContain(text)
    expect(fake.requests).toHaveLength(1)
  })

  it('keeps long server messages short', async () => {
    const { fake, client } = await setup()
    fake.inject({ do: { status: 400, body: { message: 'x'.repeat(5000) } } })
    const error = await failure(client.deploy({ uuids: [WEB.uuid] }, S()))
    expect(error.details.serverMessage).toBe(`${'x'.repeat(200)}…`)
    expect(error.message.length).toBeLessThan(400)
  })

  it("asks for compression and reads the gzip Coolify's image answers", async () => {
    const { fake, client } = await setup()
    expect(await client.listApplications(S())).toHaveLength(2)
    const [read] = fake.requests
    expect(read.headers['accept-encoding']).toBe('gzip, deflate, br')
    expect(read.responseBytes).toBeLessThan(read.decodedBytes!)
  })

  it('succeeds once the required Cloudflare Access headers are given', async () => {
    const access = { 'CF-Access-Client-Id': 'id', 'CF-Access-Client-Secret': 's' }
    const { client } = await setup({
      fake: { requiredHeaders: access },
      client: { headers: access }
    })
    expect(await client.listApplications(S())).toHaveLength(2)
  })
})

describe('retries', () => {
  const UNREACHABLE = /^Coolify is unreachable since \d\d:\d\d:\d\d UTC \(/
  const BACK = /^Coolify answers again, after [\d.]+m?s\.$/

  it.each<{ name: string; fault: Fault['do']; reason: RegExp }>([
    { name: 'reset', fault: 'reset', reason: /connection to 127\.0\.0\.1:\d+ failed/ },
    { name: 'html', fault: 'html', reason: /a proxy in front of Coolify answered 502/ },
    { name: '503', fault: { status: 503, body: 'Service Unavailable' }, reason: /answered 503/ },
    { name: 'truncate', fault: 'truncate', reason: /the answer \(200\) was cut short/ },
    {
      name: 'garbled',
      fault: 'garbled',
      reason:
        /the answer \(200\) was cut short: its compressed body does not decode \(Z_DATA_ERROR\)/
    }
  ])('a read gets through two $name faults, said once', async ({ fault, reason }) => {
    const { fake, client } = await setup()
    fake.inject({ method: 'GET', path: '/applications', times: 2, do: fault })
    expect((await client.listApplications(S())).map(a => a.uuid)).toEqual([WEB.uuid, API_APP.uuid])
    expect(fake.requests.map(r => r.fault)).toEqual([
      expect.any(String),
      expect.any(String),
      undefined
    ])
    expect(notes).toEqual([expect.stringMatching(UNREACHABLE), expect.stringMatching(BACK)])
    expect(notes[0]).toMatch(reason)
    expect(notes[0]).toContain('(GET /applications: ')
    for (const line of notes) expect(line).not.toContain('\n')
  })

  it('gives up on a hanging request after requestTimeoutMs and tries again', async () => {
    const { fake, client } = await setup({ client: { requestTimeoutMs: 300 } })
    fake.inject({ path: `/deployments/applications/${WEB.uuid}`, do: 'hang' })
    const started = Date.now()
    const history = await client.listDeployments(WEB.uuid, 10, S())
    expect(Date.now() - started).toBeGreaterThanOrEqual(280)
    expect(history).toEqual({ count: 0, deployments: [] })
    expect(fake.requests.map(r => r.fault)).toEqual(['hang', undefined])
    expect(notes).toEqual([
      expect.stringMatching(/did not answer in time/),
      expect.stringMatching(BACK)
    ])
  })

  it('keeps trying until its signal aborts, then throws the last failure', async () => {
    const { fake, client } = await setup()
    fake.inject({ do: { status: 503, body: { message: 'Busy' } }, times: 2 })
    fake.inject({ do: { status: 504, body: { message: 'Too slow' } }, times: Infinity })
    const error = await failure(client.getApplication(WEB.uuid, AbortSignal.timeout(400)))
    expect(error.status).toBe(504)
    expect(error.message).toContain('"Too slow"')
    expect(error.message).toMatch(/\(\d+ attempts\)/)
    expect(error.details.transient).toBe(true)
    expect(fake.requests.length).toBeGreaterThan(3)
    // An outage is told once, however many attempts it takes.
    expect(notes).toEqual([expect.stringMatching(/503 "Busy"/)])
  })

  it('waits no longer than maxDelayMs between attempts', async () => {
    const waits: number[] = []
    const { fake, client } = await setup({
      client: {
        retry: { baseDelayMs: 50, maxDelayMs: 100 },
        sleep: async ms => void waits.push(ms)
      }
    })
    fake.inject({ do: 'reset', times: 6 })
    await client.listApplications(S())
    expect(fake.requests).toHaveLength(7)
    // Doubling from 50 and held at the cap, each with up to half of it left to chance.
    const bounds = [50, 100, 100, 100, 100, 100]
    expect(waits).toHaveLength(bounds.length)
    waits.forEach((wait, i) => {
      expect(wait).toBeGreaterThanOrEqual(bounds[i] / 2)
      expect(wait).toBeLessThanOrEqual(bounds[i])
    })
  })

  it('does not repeat a failure that is not transient', async () => {
    const { fake, client } = await setup()
    expect((await failure(client.getApplication('nosuchapp', S()))).details.transient).toBe(false)
    expect(fake.requests).toHaveLength(1)
    expect(notes).toEqual([])
  })

  it('repeats updates, which are safe to run twice; a cancel is left to its caller', async () => {
    const { fake, client } = await setup({ fake: { abilities: ['root'] } })
    const { deployments } = await client.deploy({ uuids: [WEB.uuid] }, S())
    const id = deployments![0].deployment_uuid!
    const bulk = `/applications/${WEB.uuid}/envs/bulk`
    fake.inject({ method: 'PATCH', path: `/applications/${WEB.uuid}`, do: 'reset' })
    fake.inject({ method: 'PATCH', path: bulk, do: { status: 502, body: 'Bad Gateway' } })
    fake.inject({ method: 'PATCH', path: bulk, do: { status: 201, body: [{ key: 'A' }] } })
    fake.inject({ method: 'POST', path: `/deployments/${id}/cancel`, do: 'reset' })
    await client.updateApplication(WEB.uuid, { name: 'renamed' }, S())
    await client.updateApplicationEnvs(WEB.uuid, [{ key: 'A', value: '1' }], S())
    // Any answer but 200 needs a read of the deployment before a second try (deploy/cancel.ts).
    expect((await failure(client.cancelDeployment(id, S()))).details.transient).toBe(true)
    expect(fake.requests.map(r => `${r.method} ${r.fault ?? 'ok'}`)).toEqual([
      'POST ok',
      'PATCH reset',
      'PATCH ok',
      'PATCH status 502',
      'PATCH status 201',
      'POST reset'
    ])
    expect(notes.filter(line => UNREACHABLE.test(line))).toHaveLength(2)
  })

  it('sends deploy once: a reset leaves it unanswered', async () => {
    const { fake, client } = await setup({ fake: { abilities: ['root'] } })
    fake.inject({ method: 'POST', do: 'reset', times: Infinity })
    const error = await failure(deployWeb(client, S()))
    expect(onlyRequest().fault).toBe('reset')
    expect(error.details).toMatchObject({ transient: true, unanswered: true })
    expect(error.details.unsent).toBeFalsy()
    expect(error.status).toBeUndefined()
    expect(notes).toEqual([])
    expect(fake.deployments()).toEqual([])
  })

  it('deploy is sent once on a 503 as well', async () => {
    const { fake, client } = await setup()
    fake.inject({ path: '/deploy', do: { status: 503, body: { message: 'Busy' } } })
    const error = await failure(client.deploy({ uuids: [WEB.uuid] }, S()))
    expect(error.status).toBe(503)
    expect(error.details.unanswered).toBeFalsy()
    expect(fake.requests).toHaveLength(1)
  })

  it('a token HTTP cannot carry fails at once: final, unsent, no connection blamed', async () => {
    const { fake, client } = await setup({ client: { token: 'bad\ntoken-4d2c' } })
    const error = await failure(client.listApplications(S()))
    expect(error.message).toMatch(/^GET \/applications: the request was not sent/)
    expect(error.message).toContain('UND_ERR_INVALID_ARG')
    expect(error.message).not.toMatch(/connection|token-4d2c/)
    expect(error.details).toMatchObject({ transient: false, unanswered: true, unsent: true })
    expect(fake.requests).toEqual([])
    expect(notes).toEqual([])
  })

  it('a refused connection is unsent: nothing reached the server', async () => {
    const closed = await startFakeCoolify()
    const url = closed.url
    await closed.close()
    client = clientFor(url)

    const deployError = await failure(client.deploy({ uuids: [WEB.uuid] }, S()))
    expect(deployError.details).toMatchObject({ transient: true, unanswered: true, unsent: true })
    expect(deployError.message).toContain(`${new URL(url).host} refused the connection`)
    expect(deployError.message).not.toContain('attempts')
    expect(notes).toEqual([])

    const readError = await failure(client.listApplications(AbortSignal.timeout(300)))
    expect(readError.details.unsent).toBe(true)
    expect(readError.message).toMatch(/refused the connection.*\(\d+ attempts\)/)
    expect(notes).toEqual([expect.stringMatching(/refused the connection/)])
  })
})

describe('an address that never answers', () => {
  /** A clock the retries' waits move, and nothing else: minutes pass in milliseconds. */
  function movingClock(after?: { ms: number; abort: AbortController }) {
    let now = 1_000_000
    const start = now
    return {
      now: () => now,
      sleep: async (ms: number, signal: AbortSignal): Promise<void> => {
        now += ms
        if (after && now - start >= after.ms) after.abort.abort()
        signal.throwIfAborted()
      },
      elapsed: () => now - start
    }
  }

  /** A loopback port nothing listens on: every connection is refused. */
  /**
   * A loopback port nothing listens on. Not one freed after listen(0): while this test waits, a
   * server of another test file may be given that port again, and answer.
   */
  async function refusingUrl(): Promise<string> {
    return 'http://127.0.0.1:1022'
  }

  it('is given up after a stated grace, naming the address and what was tried', async () => {
    const url = await refusingUrl()
    const clock = movingClock()
    const forever = new AbortController()
    const error = await failure(
      clientFor(url, { now: clock.now, sleep: clock.sleep }).getApplication(
        WEB.uuid,
        forever.signal
      )
    )
    expect(clock.elapsed()).toBeGreaterThanOrEqual(FIRST_ANSWER_GRACE_MS)
    expect(clock.elapsed()).toBeLessThan(FIRST_ANSWER_GRACE_MS + 10_000)
    expect(error.message).toMatch(
      new RegExp(
        `^GET /applications/${WEB.uuid}: ${url} never answered: 127\\.0\\.0\\.1:\\d+ refused the connection, \\d+ attempts in 1m`
      )
    )
    expect(error.details.transient).toBe(false)
    expect(notes).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${url} does not answer \\(GET .*refused the connection\\); trying again for 1m, then giving up\\.$`
        )
      )
    ])
  })

  it('gives up on https:// in front of a plain-http port as soon, saying it speaks plain HTTP', async () => {
    const fake = await startFakeCoolify()
    const url = fake.url.replace(/^http:/, 'https:')
    const clock = movingClock()
    const error = await failure(
      clientFor(url, { now: clock.now, sleep: clock.sleep }).getApplication(WEB.uuid, S())
    )
    await fake.close()
    expect(clock.elapsed()).toBeLessThan(FIRST_ANSWER_GRACE_MS + 10_000)
    expect(error.message).toMatch(
      /never answered: 127\.0\.0\.1:\d+ speaks plain HTTP, not TLS: https:\/\/ can never connect to it .*Use http:\/\/ in `coolify-url`/
    )
    expect(error.details.transient).toBe(false)
  })

  it('gives up on an address that answers every path 200 with a web page, within the same grace', async () => {
    const server = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>Welcome</html>')
    )
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const clock = movingClock()
    const error = await failure(
      clientFor(url, { now: clock.now, sleep: clock.sleep }).getApplication(WEB.uuid, S())
    )
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
    expect(clock.elapsed()).toBeGreaterThanOrEqual(FIRST_ANSWER_GRACE_MS)
    expect(clock.elapsed()).toBeLessThan(FIRST_ANSWER_GRACE_MS + 10_000)
    expect(error.message).toMatch(
      new RegExp(
        `^GET /applications/${WEB.uuid}: ${url} does not answer as Coolify's API: got an HTML page \\(200\\)`
      )
    )
    expect(error.details.transient).toBe(false)
  })

  it('keeps today’s patience once the address answered anything', async () => {
    // It answers once, a refusal at that, then goes away: an outage, not a wrong address.
    const server = createServer((_request, response) =>
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"message":"Not found."}')
    )
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const abort = new AbortController()
    const clock = movingClock({ ms: 5 * 60_000, abort })
    const patient = clientFor(url, { now: clock.now, sleep: clock.sleep })
    expect((await failure(patient.getApplication(WEB.uuid, S()))).status).toBe(404)
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))

    const error = await failure(patient.getApplication(WEB.uuid, abort.signal))
    expect(clock.elapsed()).toBeGreaterThanOrEqual(5 * 60_000)
    expect(error.message).toMatch(/refused the connection \(\d+ attempts\)/)
    expect(error.message).not.toContain('never answered')
    expect(notes).toEqual([expect.stringMatching(/^Coolify is unreachable since /)])
    await patient.close()
  })
})

describe('TLS with a private CA', () => {
  const fixture = (name: string): string =>
    readFileSync(fileURLToPath(new URL(`../test/fixtures/tls/${name}`, import.meta.url)), 'utf8')
  const tls = (): FakeOptions['tls'] => ({
    key: fixture('server-key.pem'),
    cert: fixture('server.pem')
  })

  it('an untrusted certificate is final and unsent, and names `ca-certificate`', async () => {
    const { fake, client } = await setup({ fake: { tls: tls() } })
    expect(fake.url).toMatch(/^https:/)
    const error = await failure(client.listApplications(S()))
    expect(error.message).toMatch(/the TLS certificate of 127\.0\.0\.1:\d+ is not trusted \(\w+\)/)
    expect(error.message).toContain('`ca-certificate`')
    expect(error.details).toMatchObject({ transient: false, unanswered: true, unsent: true })
    expect(fake.requests).toEqual([])
    expect(notes).toEqual([])
  })

  it('trusts the CA given as caCertificate', async () => {
    const { fake, client } = await setup({
      fake: { tls: tls() },
      client: { caCertificate: fixture('ca.pem') }
    })
    expect(await client.listApplications(S())).toHaveLength(2)
    expect(fake.requests).toHaveLength(1)
  })
})

describe('rate limit', () => {
  it('waits out Retry-After before trying again', async () => {
    const { fake, client } = await setup()
    fake.inject({
      method: 'GET',
      do: { status: 429, headers: { 'retry-after': '1' }, body: { message: 'Too Many Attempts.' } }
    })
    await client.getApplication(WEB.uuid, S())
    const [refused, retried] = fake.requests
    expect(refused.fault).toBe('status 429')
    expect(retried.fault).toBeUndefined()
    expect(retried.at - refused.at).toBeGreaterThanOrEqual(990)
    expect(notes).toEqual([
      expect.stringMatching(
        /^GET \/applications\/\w+: Coolify answered 429 "Too Many Attempts\.": too many requests; waiting 1s as Coolify asks\.$/
      )
    ])
  })

  it('holds other requests until Retry-After has passed too', async () => {
    const { fake, client } = await setup()
    fake.inject({
      path: '/applications',
      do: { status: 429, headers: { 'retry-after': '1' }, body: { message: 'Too Many Attempts.' } }
    })
    const first = client.listApplications(S())
    await until(() => notes.length > 0)
    await Promise.all([first, client.getApplication(WEB.uuid, S())])
    const [refused, ...after] = fake.requests
    expect(refused.fault).toBe('status 429')
    expect(after.map(r => r.path).sort()).toEqual([
      `${API}/applications`,
      `${API}/applications/${WEB.uuid}`
    ])
    for (const request of after) expect(request.at - refused.at).toBeGreaterThanOrEqual(990)
  })

  it('lets a final read of a deployment spend the share kept for other tools', async () => {
    const { client } = await setup({ fake: { rateLimit: 10 } })
    const { deployments } = await client.deploy({ uuids: [WEB.uuid] }, S())
    const uuid = deployments![0].deployment_uuid!
    // 10 a minute, 2 kept for other tools: 7 polls after the deploy leave nothing to poll with.
    for (let i = 0; i < 7; i++) await client.getDeployment(uuid, S())
    expect(client.readBudget()).toMatchObject({ spare: 0 })
    // A poll now waits for the window's end; the read that ends the deployment does not.
    const poll = new AbortController()
    const waiting = client.getDeployment(uuid, poll.signal).catch((e: unknown) => e)
    const final = await client.getDeployment(uuid, S(), { final: true })
    expect(final.deployment_uuid).toBe(uuid)
    poll.abort(new Error('the test is done'))
    expect(await waiting).toMatchObject({ message: 'the test is done' })
  })

  it("learns Coolify's window from the answers, keeping a fifth of it for other tools", async () => {
    const { client } = await setup({ fake: { rateLimit: 120 } })
    // Nothing is known until an answer tells.
    expect(client.readBudget()).toBeUndefined()
    await client.listApplications(S())
    await client.listApplications(S())
    // 118 left of 120, 24 of them kept; the window ends about a minute after it opened.
    expect(client.readBudget()).toEqual({ spare: 94, held: 24, endsInMs: expect.any(Number) })
    expect(client.readBudget()!.endsInMs).toBeGreaterThan(55_000)
    expect(client.readBudget()!.endsInMs).toBeLessThanOrEqual(60_250)
  })
})

describe('abort signal', () => {
  const stop = new Error('stopped by the test')

  it('ends a retry loop during its backoff, with the failure it met', async () => {
    const controller = new AbortController()
    const waits: number[] = []
    // A backoff of ten minutes, aborted the moment it starts: only the signal can end it.
    const { fake, client } = await setup({
      client: {
        retry: { baseDelayMs: 600_000, maxDelayMs: 600_000 },
        sleep: (ms, signal) => {
          waits.push(ms)
          controller.abort(stop)
          return sleep(ms, signal)
        }
      }
    })
    fake.inject({ do: 'reset', times: Infinity })
    const error = await client.listApplications(controller.signal).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CoolifyError)
    expect((error as CoolifyError).message).toMatch(/connection to 127\.0\.0\.1:\d+ failed/)
    expect(waits).toEqual([expect.any(Number)])
    expect(waits[0]).toBeGreaterThanOrEqual(300_000)
    expect(fake.requests).toHaveLength(1)
    expect(notes).toHaveLength(1)
  })

  it('ends a request that hangs', async () => {
    const controller = new AbortController()
    // Ten minutes before the client would give up on it by itself.
    const { fake, client } = await setup({ client: { requestTimeoutMs: 600_000 } })
    fake.inject({ do: 'hang' })
    const call = client.getDeployment('abc', controller.signal).catch((e: unknown) => e)
    while (fake.requests.length === 0) await sleep(5)
    controller.abort(stop)
    expect(await call).toBe(stop)
    expect(fake.requests).toHaveLength(1)
    expect(notes).toEqual([])
  })

  it('close() ends a call still under way, without trying it again', async () => {
    const { fake, client } = await setup({ client: { requestTimeoutMs: 600_000 } })
    fake.inject({ do: 'hang' })
    const call = client.getApplication(WEB.uuid, S()).catch((e: unknown) => e)
    while (fake.requests.length === 0) await sleep(5)
    await client.close()
    expect(await call).toEqual(new ActionError('the step is done with Coolify'))
    expect(fake.requests).toHaveLength(1)
    // Not an outage: nothing is said.
    expect(notes).toEqual([])
  })

  it('sends nothing when already aborted', async () => {
    const { fake, client } = await setup()
    const error = await client.listApplications(AbortSignal.abort(stop)).catch((e: unknown) => e)
    expect(error).toBe(stop)
    expect(fake.requests).toEqual([])
  })
})
