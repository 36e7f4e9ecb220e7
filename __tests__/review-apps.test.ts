/**
 * Review apps (`review-app: true`) through the bundled action, against the fake Coolify: a whole
 * application per pull request, cloned from a template application on the first run (created
 * from scratch on servers without the clone route), found again by name and description marker,
 * configured completely before it is ever deployed, and deleted with `delete-preview`.
 */
import { describe, expect, it } from '@jest/globals'
import {
  type FakeApp,
  type FakeAppState,
  type FakeCoolify,
  type RecordedRequest
} from '../test/fake-coolify/index.js'
import { BASE_SHA, pullRequestEventEnv, type PullRequestEvent } from '../test/support/events.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  build,
  errorLines,
  expectNoSecrets,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  requestLines,
  TOKEN
} from '../test/support/scenarios.js'

const PR = 7
const HEAD_REF = 'feature/login-form'
const HEAD_SHA = 'c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00'
/** The runner's GITHUB_REPOSITORY. */
const REPOSITORY = 'octo/app'
const PRIMARY = { uuid: 'dst0web0primary000000001', name: 'web-net', serverUuid: 'srv0one' }
/** A destination on a server without production: where review apps go unless a test says otherwise. */
const ISOLATED = { uuid: 'dst0review0own0000000001', name: 'reviews', serverUuid: 'srv0reviews' }

/** Values only production may see: none may reach an app that runs pull request code. */
const PRODUCTION_SECRETS = ['sk_live_production_only_51', 'postgres://prod:prod-db-pass@db/prod']

const TEMPLATE: FakeApp = {
  uuid: 'tpl0web0uuid000000000001',
  name: 'web',
  fqdn: 'https://web.example.com',
  description: 'The production web app',
  tags: ['production'],
  destinations: [PRIMARY, { uuid: 'dst0web0extra00000000001', serverUuid: 'srv0two' }],
  envs: [
    { key: 'API_URL', value: 'https://api.example.com' },
    { key: 'DATABASE_URL', value: PRODUCTION_SECRETS[1] },
    { key: 'STRIPE_SECRET', value: PRODUCTION_SECRETS[0] },
    { key: 'API_URL', value: 'https://api.staging.example.com', isPreview: true },
    { key: 'DATABASE_URL', value: 'postgres://preview@db/preview', isPreview: true },
    { key: 'PREVIEW_BANNER', value: 'on', isPreview: true }
  ],
  // On by default in Coolify, and refused: the clone fetches LFS objects whatever it says.
  columns: { 'settings.is_git_lfs_enabled': false },
  scenarios: [build('finished')]
}

const NAME = `${TEMPLATE.name}-pr-${PR}`
const MARKER = `Review app for pull request #${PR} of ${REPOSITORY}, template ${TEMPLATE.uuid}`
const SETTING_UP = `${MARKER} (being set up)`
const DOMAIN = `https://pr-${PR}.preview.example.com`

/** The review app's production variables: the template's preview ones, then `env`. */
const REVIEW_VARIABLES = {
  API_URL: 'https://api.staging.example.com',
  DATABASE_URL: 'postgres://preview@db/preview',
  PREVIEW_BANNER: 'on',
  PR_NUMBER: String(PR)
}

const start = fakeCoolifyPerTest(() => ({
  abilities: ['read', 'read:sensitive', 'write', 'deploy'],
  apps: [TEMPLATE],
  destinations: [ISOLATED]
}))

function inputs(server: FakeCoolify, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'coolify-url': server.url,
    token: TOKEN,
    'app-uuid': TEMPLATE.uuid,
    pr: String(PR),
    'review-app': 'true',
    'review-domain': 'https://pr-{pr}.preview.example.com',
    'review-destination': ISOLATED.uuid,
    env: `PR_NUMBER=${PR}`,
    // No GitHub in these tests: the comment would only add a warning.
    comment: 'false',
    'poll-interval': '100ms',
    timeout: '20s',
    ...extra
  }
}

async function run(
  server: FakeCoolify,
  extra: Record<string, string> = {},
  event: Partial<PullRequestEvent> = {}
): Promise<RunResult> {
  const result = await runAction({
    inputs: inputs(server, extra),
    env: pullRequestEventEnv({ number: PR, headRef: HEAD_REF, headSha: HEAD_SHA, ...event }),
    killAfterMs: 40_000
  })
  if (process.env.SHOW_RUN) console.log(result.stdout, result.stderr)
  return result
}

/** Applications named as the review app, whoever made them. */
function namesakes(server: FakeCoolify): FakeAppState[] {
  return server.apps().filter(app => app.name === NAME)
}

function productionVariables(app: FakeAppState): Record<string, string | null> {
  return Object.fromEntries(app.envs.filter(e => !e.isPreview).map(e => [e.key, e.value]))
}

/** Requests on an application or anything under it. */
function onApp(request: RecordedRequest, uuid: string): boolean {
  return new RegExp(`^/api/v1/applications/${uuid}(/|$)`).test(request.path)
}

/** Requests that change something: anything but a read. */
function writes(requests: RecordedRequest[], uuid: string): RecordedRequest[] {
  return requests.filter(request => request.method !== 'GET' && onApp(request, uuid))
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function body(request: RecordedRequest): any {
  return JSON.parse(request.body)
}

function deploys(requests: RecordedRequest[]): RecordedRequest[] {
  return requests.filter(request => request.method === 'POST' && request.path === '/api/v1/deploy')
}

function rows(result: RunResult): Array<Record<string, unknown>> {
  return JSON.parse(result.outputs.deployments ?? '[]')
}

/** The review app as a finished run leaves it. */
function expectFinishedReviewApp(app: FakeAppState | undefined): void {
  expect(app).toMatchObject({
    name: NAME,
    description: MARKER,
    fqdn: DOMAIN,
    gitBranch: HEAD_REF,
    tags: []
  })
  expect(productionVariables(app!)).toEqual(REVIEW_VARIABLES)
  for (const env of app!.envs) expect(PRODUCTION_SECRETS).not.toContain(env.value)
}

/** Exactly one finished review app; the run's outputs name it. */
function theReviewApp(server: FakeCoolify): FakeAppState {
  const marked = namesakes(server).filter(app => app.description?.startsWith(MARKER))
  expect(marked).toHaveLength(1)
  return marked[0]
}

async function patchDirectly(server: FakeCoolify, uuid: string, changes: object): Promise<void> {
  const response = await fetch(`${server.url}/api/v1/applications/${uuid}`, {
    method: 'PATCH',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      accept: 'application/json',
      'content-type': 'application/json'
    },
    body: JSON.stringify(changes)
  })
  expect(response.status).toBe(200)
}

describe('the first run for a pull request', () => {
  // Guards: the clone into the primary destination, every setting written before the one deploy,
  // the marker first and last, no production secret and no production tag on the copy.
  it('clones the template and configures the clone completely before deploying it', async () => {
    const server = await start()
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(errorLines(result.stdout)).toEqual([])
    const requests = actionRequests(server)
    const clones = requests.filter(r => r.path === `/api/v1/applications/${TEMPLATE.uuid}/clone`)
    expect(clones.map(r => r.method)).toEqual(['POST'])
    expect(body(clones[0])).toMatchObject({ destination_uuid: ISOLATED.uuid, name: NAME })

    const app = theReviewApp(server)
    expect(app.uuid).not.toBe(TEMPLATE.uuid)
    expectFinishedReviewApp(app)
    expect(app.destination).toBe(ISOLATED.uuid)

    // Marked before anything else is changed, finished only once everything else is done, and
    // deployed after that.
    const changes = writes(requests, app.uuid)
    const appPath = `/api/v1/applications/${app.uuid}`
    expect(changes[0]).toMatchObject({ method: 'PATCH', path: appPath })
    expect(body(changes[0]).description).toBe(SETTING_UP)
    // Marked once: the rest of the set-up does not write the same again.
    const patches = changes.filter(change => change.method === 'PATCH' && change.path === appPath)
    expect(patches.filter(change => body(change).description === SETTING_UP)).toHaveLength(1)
    const last = changes.at(-1)!
    expect(last).toMatchObject({ method: 'PATCH', path: appPath })
    expect(body(last).description).toBe(MARKER)
    const [trigger, ...more] = deploys(requests)
    expect(more).toEqual([])
    expect(requests.indexOf(trigger)).toBeGreaterThan(requests.indexOf(last))
    expect(trigger.query.uuid).toBe(app.uuid)
    expect(trigger.query).not.toHaveProperty('pr')
    expect(trigger.query).not.toHaveProperty('pull_request_id')

    expect(server.deployments()).toEqual([
      expect.objectContaining({ appUuid: app.uuid, status: 'finished' })
    ])
    expect(server.deployments()[0].pr).toBeUndefined()
    expect(result.outputs).toMatchObject({
      'review-app-uuid': app.uuid,
      url: DOMAIN,
      status: 'finished'
    })
    expect(rows(result)[0]).toMatchObject({ app_uuid: app.uuid, status: 'finished' })

    // The template is read and cloned, never changed.
    expect(requestLines(writes(requests, TEMPLATE.uuid))).toEqual([
      `POST /api/v1/applications/${TEMPLATE.uuid}/clone`
    ])
    expect(server.app(TEMPLATE.uuid)).toEqual(template)
    expectNoSecrets(result.stdout + result.stderr, PRODUCTION_SECRETS)
    expect(result.stdout).not.toMatch(/^::add-mask::on$/m)
    expectNoStackTrace(result.stderr)
  })

  it('takes the branch from `git-branch` over the pull request’s head branch', async () => {
    const server = await start()
    const result = await run(server, { 'git-branch': 'release/next' })

    expect(result.code).toBe(0)
    expect(theReviewApp(server).gitBranch).toBe('release/next')
    // The setting is the review app's, not the template's.
    expect(requestLines(writes(actionRequests(server), TEMPLATE.uuid))).toEqual([
      `POST /api/v1/applications/${TEMPLATE.uuid}/clone`
    ])
    expect(server.app(TEMPLATE.uuid)!.gitBranch).toBe('main')
  })
})

describe('under `pull_request_target`', () => {
  // Guards: the base branch's workflow runs with the base branch's GITHUB_REF and GITHUB_SHA; the
  // review app still builds the pull request's branch, named by the event's payload, and nothing
  // deploys the base branch's commit.
  it('builds the pull request’s head branch, not the base branch the workflow runs on', async () => {
    const server = await start()
    const result = await run(server, {}, { name: 'pull_request_target', headSha: HEAD_SHA })

    expect(result.code).toBe(0)
    expect(errorLines(result.stdout)).toEqual([])
    const app = theReviewApp(server)
    expectFinishedReviewApp(app)
    expect(app.gitBranch).toBe(HEAD_REF)
    expect(server.deployments()).toEqual([
      expect.objectContaining({ appUuid: app.uuid, status: 'finished' })
    ])
    const requests = actionRequests(server)
    expect(requests.some(r => JSON.stringify(r).includes(BASE_SHA))).toBe(false)
    expect(requests.some(r => r.body.includes('"main"'))).toBe(false)
    expect(server.app(TEMPLATE.uuid)!.gitBranch).toBe('main')
    expect(result.outputs).toMatchObject({ 'review-app-uuid': app.uuid, url: DOMAIN })
  })
})

describe('a later run for the same pull request', () => {
  // Guards: the marked app is found again by name and marker (no second clone), its domain and
  // branch are set again before it is deployed again.
  it('finds the review app again, sets its domain and branch again and deploys it', async () => {
    const server = await start()
    const first = await run(server)
    expect(first.code).toBe(0)
    const uuid = first.outputs['review-app-uuid']
    // Changed by hand in Coolify meanwhile.
    await patchDirectly(server, uuid, { domains: 'https://elsewhere.example.com', git_branch: 'x' })
    const before = actionRequests(server).length

    const second = await run(server)

    expect(second.code).toBe(0)
    const requests = actionRequests(server).slice(before)
    expect(requests.filter(r => r.path.endsWith('/clone'))).toEqual([])
    expect(
      requests.filter(r => r.method === 'POST' && r.path.includes('private-deploy-key'))
    ).toEqual([])
    const patches = writes(requests, uuid).filter(r => r.path === `/api/v1/applications/${uuid}`)
    expect(patches.some(r => body(r).domains === DOMAIN)).toBe(true)
    expect(patches.some(r => body(r).git_branch === HEAD_REF)).toBe(true)
    const [trigger] = deploys(requests)
    expect(trigger.query.uuid).toBe(uuid)
    for (const change of writes(requests, uuid)) {
      expect(requests.indexOf(change)).toBeLessThan(requests.indexOf(trigger))
    }

    expect(namesakes(server)).toHaveLength(1)
    expectFinishedReviewApp(server.app(uuid))
    expect(server.deployments().map(d => d.appUuid)).toEqual([uuid, uuid])
    expect(second.outputs).toMatchObject({ 'review-app-uuid': uuid, url: DOMAIN })
  }, 60_000)

  // Guards: found by its marker alone, whatever the template is called now; each run pins the
  // head commit its own event names before it deploys, so a push after it is not built by it.
  it('finds it although the template was renamed, and pins the new head commit', async () => {
    const server = await start()
    const first = await run(server)
    expect(first.code).toBe(0)
    const uuid = first.outputs['review-app-uuid']
    await patchDirectly(server, TEMPLATE.uuid, { name: 'site' })
    const next = 'beef0000beef0000beef0000beef0000beef0000'
    const before = actionRequests(server).length

    const second = await run(server, {}, { headSha: next })

    expect(second.code).toBe(0)
    expect(errorLines(second.stdout)).toEqual([])
    const requests = actionRequests(server).slice(before)
    expect(requests.filter(r => r.path.endsWith('/clone'))).toEqual([])
    const pin = requests.findIndex(
      r => onApp(r, uuid) && r.method === 'PATCH' && body(r).git_commit_sha === next
    )
    expect(pin).toBeGreaterThan(-1)
    expect(pin).toBeLessThan(requests.indexOf(deploys(requests)[0]))
    expect(server.apps().map(app => app.uuid)).toEqual([TEMPLATE.uuid, uuid])
    expect(server.app(uuid)).toMatchObject({ name: NAME, gitCommitSha: next })
    expect(server.deployments().map(d => [d.appUuid, d.commit])).toEqual([
      [uuid, HEAD_SHA],
      [uuid, next]
    ])
    expect(second.outputs['review-app-uuid']).toBe(uuid)
  }, 60_000)

  // Guards: a review app found again is held to the table too (one made by an older version of
  // the action kept production's container name): put back before it is deployed again.
  it('puts back what reaches production on a review app found again, before deploying it', async () => {
    const server = await start()
    const first = await run(server)
    expect(first.code).toBe(0)
    const uuid = first.outputs['review-app-uuid']
    await patchDirectly(server, uuid, { custom_internal_name: 'web', ports_mappings: '80:3000' })
    const before = actionRequests(server).length

    const second = await run(server)

    expect(second.code).toBe(0)
    const requests = actionRequests(server).slice(before)
    const reset = requests.findIndex(r => r.method === 'PATCH' && 'custom_internal_name' in body(r))
    expect(body(requests[reset])).toEqual({ custom_internal_name: null, ports_mappings: null })
    expect(reset).toBeLessThan(requests.indexOf(deploys(requests)[0]))
    expect(server.app(uuid)!.columns).toMatchObject({
      'settings.custom_internal_name': null,
      ports_mappings: null
    })
  }, 60_000)
})

describe('applications that only look like the review app', () => {
  const unmarked: FakeApp[] = [
    {
      uuid: 'own0web0pr70000000000001',
      name: NAME,
      description: 'Made by hand for the demo',
      fqdn: 'https://demo.example.com',
      scenarios: [build('finished')]
    },
    {
      uuid: 'own0web0pr70000000000002',
      name: NAME,
      // The marker, but not at the start.
      description: `Copied from: ${MARKER}`,
      fqdn: 'https://copy.example.com',
      scenarios: [build('finished')]
    },
    {
      uuid: 'own0web0pr70000000000003',
      name: NAME,
      // Another template's review app.
      description: `Review app for pull request #${PR} of ${REPOSITORY}, template tpl0other00000000000001`,
      fqdn: 'https://other.example.com',
      scenarios: [build('finished')]
    }
  ]

  // Guards: a namesake without this template's marker at the start of its description is never
  // reused, changed, deployed or deleted; a review app of its own is made beside them.
  it('are left alone, and a review app of its own is made', async () => {
    const server = await start({ apps: [TEMPLATE, ...unmarked] })
    const before = unmarked.map(app => server.app(app.uuid))
    const result = await run(server)

    expect(result.code).toBe(0)
    const requests = actionRequests(server)
    for (const app of unmarked) expect(writes(requests, app.uuid)).toEqual([])
    expect(unmarked.map(app => server.app(app.uuid))).toEqual(before)
    const mine = theReviewApp(server)
    expect(unmarked.map(app => app.uuid)).not.toContain(mine.uuid)
    expectFinishedReviewApp(mine)
    expect(namesakes(server)).toHaveLength(unmarked.length + 1)
    expect(server.deployments().map(d => d.appUuid)).toEqual([mine.uuid])
    expect(result.outputs['review-app-uuid']).toBe(mine.uuid)
  })
})

describe('delete-preview with review-app', () => {
  const REVIEW_APP: FakeApp = {
    uuid: 'rev0web0pr70000000000001',
    name: NAME,
    description: MARKER,
    fqdn: DOMAIN,
    scenarios: [build('finished')]
  }
  const STRANGER: FakeApp = {
    uuid: 'own0web0pr70000000000001',
    name: NAME,
    description: 'Made by hand for the demo',
    scenarios: [build('finished')]
  }

  // Guards: the marked app is deleted; the template and an unmarked namesake never are, and no
  // preview of the template is touched.
  it('deletes the review app and nothing else', async () => {
    const server = await start({ apps: [TEMPLATE, REVIEW_APP, STRANGER] })
    const result = await run(server, { 'delete-preview': 'true' })

    expect(result.code).toBe(0)
    const requests = actionRequests(server)
    const changes = requests.filter(r => r.method !== 'GET')
    expect(requestLines(changes)).toEqual([`DELETE /api/v1/applications/${REVIEW_APP.uuid}`])
    // The default docker_cleanup would prune the whole server's build cache; the review app's
    // own volumes and configuration still go (the other switches keep their defaults).
    expect(changes[0].query).toEqual({ docker_cleanup: 'false' })
    expect(server.app(REVIEW_APP.uuid)).toBeUndefined()
    expect(server.app(STRANGER.uuid)).toBeDefined()
    expect(server.app(TEMPLATE.uuid)).toBeDefined()
    expect(server.deployments()).toEqual([])
    expect(errorLines(result.stdout)).toEqual([])
  })

  // Guards: found by its marker alone (the pull request and the template's uuid): a template
  // renamed since, or deleted, strands no review app running production's copied settings.
  it.each([
    ['renamed', [{ ...TEMPLATE, name: 'site' }]],
    ['deleted', []]
  ])('deletes the review app of a %s template', async (_, templates) => {
    const server = await start({ apps: [...templates, REVIEW_APP, STRANGER] })
    const result = await run(server, { 'delete-preview': 'true' })

    expect(result.code).toBe(0)
    expect(errorLines(result.stdout)).toEqual([])
    const changes = actionRequests(server).filter(r => r.method !== 'GET')
    expect(requestLines(changes)).toEqual([`DELETE /api/v1/applications/${REVIEW_APP.uuid}`])
    expect(server.app(REVIEW_APP.uuid)).toBeUndefined()
    expect(server.app(STRANGER.uuid)).toBeDefined()
    expect(result.stdout).toContain(`Coolify is deleting review app ${NAME} (${REVIEW_APP.uuid})`)
    expectNoStackTrace(result.stderr)
  })

  it('succeeds when there is none, saying so', async () => {
    const server = await start({ apps: [TEMPLATE, STRANGER] })
    const result = await run(server, { 'delete-preview': 'true' })

    expect(result.code).toBe(0)
    expect(errorLines(result.stdout)).toEqual([])
    expect(actionRequests(server).filter(r => r.method !== 'GET')).toEqual([])
    expect(server.app(STRANGER.uuid)).toBeDefined()
    const said = result.stdout
      .split('\n')
      .some(
        line => /review app/i.test(line) && /\b(no|none|nothing|not found|already)\b/i.test(line)
      )
    expect(said).toBe(true)
  })
})

describe('a Coolify without the clone route (4.2)', () => {
  const placement = {
    'review-project': 'prj0web0uuid000000000001',
    'review-server': 'srv0web0uuid000000000001',
    'review-environment': 'previews',
    'review-deploy-key': 'key0web0uuid000000000001',
    'review-destination': ''
  }

  // Guards: the review app is created from the template's repository, build pack and ports where
  // the review-* inputs say, then configured as a clone would be; a missing tags route (older
  // servers) is not an error.
  it('creates the review app through POST /applications/private-deploy-key', async () => {
    const server = await start({ version: '4.2' })
    // Servers before 4.2.0 have no per-application tags route.
    server.inject({
      path: /^\/applications\/[^/]+\/tags/,
      times: Infinity,
      do: { status: 404, body: { message: 'Not found.', docs: 'https://coolify.io/docs' } }
    })
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server, placement)

    expect(result.code).toBe(0)
    expect(errorLines(result.stdout)).toEqual([])
    const requests = actionRequests(server)
    const creates = requests.filter(
      r => r.method === 'POST' && r.path === '/api/v1/applications/private-deploy-key'
    )
    expect(creates).toHaveLength(1)
    const sent = body(creates[0])
    expect(sent).toMatchObject({
      project_uuid: placement['review-project'],
      server_uuid: placement['review-server'],
      environment_name: placement['review-environment'],
      private_key_uuid: placement['review-deploy-key'],
      git_repository: template.gitRepository,
      build_pack: template.buildPack,
      ports_exposes: '3000',
      name: NAME,
      domains: DOMAIN,
      git_branch: HEAD_REF
    })
    expect(String(sent.description).startsWith(MARKER)).toBe(true)
    expect(sent.instant_deploy ?? false).toBe(false)

    const app = theReviewApp(server)
    expectFinishedReviewApp(app)
    expect(app.gitRepository).toBe(template.gitRepository)
    const [trigger] = deploys(requests)
    for (const change of writes(requests, app.uuid)) {
      expect(requests.indexOf(change)).toBeLessThan(requests.indexOf(trigger))
    }
    expect(trigger.query.uuid).toBe(app.uuid)
    expect(server.deployments()).toEqual([
      expect.objectContaining({ appUuid: app.uuid, status: 'finished' })
    ])
    expect(result.outputs).toMatchObject({ 'review-app-uuid': app.uuid, url: DOMAIN })
    expect(writes(requests, TEMPLATE.uuid)).toEqual([])
    expectNoSecrets(result.stdout + result.stderr, PRODUCTION_SECRETS)
  })

  // Guards: on a server with several destinations Coolify's create route needs
  // destination_uuid (else 400): `review-destination` gives it, and without it the error says so.
  it('sends review-destination to a server with several destinations, and asks for it', async () => {
    const server = await start({
      version: '4.2',
      apps: [
        TEMPLATE,
        {
          uuid: 'other0app0uuid0000000001',
          name: 'other',
          destinations: [{ uuid: 'dst0multi0second00000001', serverUuid: PRIMARY.serverUuid }]
        }
      ]
    })
    const onServer = { ...placement, 'review-server': PRIMARY.serverUuid }
    const refused = await run(server, onServer)

    expect(refused.code).toBe(1)
    const [error, ...more] = errorLines(refused.stdout)
    expect(more).toEqual([])
    expect(error).toContain('`review-destination`')
    expect(namesakes(server)).toEqual([])

    const made = await run(server, { ...onServer, 'review-destination': PRIMARY.uuid })
    expect(made.code).toBe(0)
    const creates = actionRequests(server).filter(
      r => r.method === 'POST' && r.path === '/api/v1/applications/private-deploy-key'
    )
    expect(body(creates.at(-1)!).destination_uuid).toBe(PRIMARY.uuid)
    expect(theReviewApp(server).destination).toBe(PRIMARY.uuid)
  })

  it('names the missing review-* inputs in one line and creates nothing', async () => {
    const server = await start({ version: '4.2' })
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    for (const input of Object.keys(placement).filter(input => input !== 'review-destination')) {
      expect(error).toContain(input)
    }
    expect(actionRequests(server).filter(r => r.method !== 'GET')).toEqual([])
    expect(server.apps().map(app => app.uuid)).toEqual([TEMPLATE.uuid])
    expect(server.deployments()).toEqual([])
    expectNoStackTrace(result.stderr)
  })
})

describe('two runs for one pull request at the same time', () => {
  // Guards: both runs clone (their lists are answered before either clone is made), and in the
  // end one marked review app remains, which both runs report and only it is deployed.
  it('end with exactly one review app', async () => {
    const server = await start()
    // Each run's first list is answered 3 s late with what was true when it asked: both say
    // "none yet" unless one run starts that much later than the other, so both clone.
    server.inject({ method: 'GET', path: '/applications', times: 2, do: { delayMs: 3000 } })
    const [a, b] = await Promise.all([run(server), run(server)])

    expect([a.code, b.code]).toEqual([0, 0])
    const clones = actionRequests(server).filter(r => r.path.endsWith('/clone'))
    expect(clones).toHaveLength(2)
    expect(namesakes(server)).toHaveLength(1)
    const app = theReviewApp(server)
    expectFinishedReviewApp(app)
    expect(a.outputs['review-app-uuid']).toBe(app.uuid)
    expect(b.outputs['review-app-uuid']).toBe(app.uuid)
    // The copy that lost was deleted, and never deployed.
    expect(new Set(server.deployments().map(d => d.appUuid))).toEqual(new Set([app.uuid]))
    expect(a.outputs.status).toBe('finished')
    expect(b.outputs.status).toBe('finished')
  }, 60_000)
})

describe('refusals', () => {
  // Guards: a review app needs a domain of its own when the template has one; the check comes
  // after reading the template and before any change.
  it('needs review-domain when the template has a domain, before changing anything', async () => {
    const server = await start()
    const result = await run(server, { 'review-domain': '' })

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('review-domain')
    expect(actionRequests(server).filter(r => r.method !== 'GET')).toEqual([])
    expect(server.apps()).toHaveLength(1)
    expectNoStackTrace(result.stderr)
  })

  const refused: Array<[string, Record<string, string>, Partial<PullRequestEvent>, RegExp]> = [
    ['without pr', { pr: '' }, {}, /\bpr\b|pull request/i],
    ['with tag', { tag: 'production' }, {}, /\btag\b/],
    [
      'with several app-uuids',
      { 'app-uuid': `${TEMPLATE.uuid},api0uuid0000000000000001` },
      {},
      /app-uuid|one (application|template)/i
    ],
    ['for a pull request from a fork', {}, { headRepo: 'mallory/app' }, /fork/i]
  ]
  // Guards: each is one error line, before any request to Coolify.
  it.each(refused)('refuses review-app %s before any request', async (_, extra, event, names) => {
    const server = await start()
    const result = await run(server, extra, event)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toMatch(names)
    expect(actionRequests(server)).toEqual([])
    expectNoStackTrace(result.stderr)
  })

  it('names the `write` ability when Coolify refuses the clone', async () => {
    const server = await start({ abilities: ['read', 'read:sensitive', 'deploy'] })
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('`write`')
    expect(server.apps().map(app => app.uuid)).toEqual([TEMPLATE.uuid])
    expect(server.deployments()).toEqual([])
  })
})

describe('a failure while setting the review app up', () => {
  // Guards: a half-configured copy is never deployed and never left looking finished (it is
  // deleted, or keeps the being-set-up marker); the next run ends with one finished review app.
  it('deploys nothing, and the next run finishes the job', async () => {
    const server = await start()
    server.inject({
      method: 'PATCH',
      path: /\/envs\/bulk$/,
      times: Infinity,
      do: {
        status: 422,
        body: {
          message: 'Validation failed.',
          errors: { key: ['The key field format is invalid.'] }
        }
      }
    })
    const failed = await run(server)

    expect(failed.code).toBe(1)
    expect(server.deployments()).toEqual([])
    expect(deploys(actionRequests(server))).toEqual([])
    const left = namesakes(server)
    expect(left.length).toBeLessThanOrEqual(1)
    for (const app of left) expect(app.description).toBe(SETTING_UP)
    expect(server.app(TEMPLATE.uuid)!.tags).toEqual(['production'])

    server.clearFaults()
    const retried = await run(server)

    expect(retried.code).toBe(0)
    expect(namesakes(server)).toHaveLength(1)
    const app = theReviewApp(server)
    expectFinishedReviewApp(app)
    expect(server.deployments().map(d => d.appUuid)).toEqual([app.uuid])
    expect(retried.outputs['review-app-uuid']).toBe(app.uuid)
  }, 60_000)
})

/** Lines the runner shows as warnings. */
function warningLines(stdout: string): string[] {
  return stdout.split('\n').filter(line => line.startsWith('::warning'))
}

/** A column's value as the fake keeps it: the image's apart, the others as given. */
function columnOf(app: FakeAppState, key: string): unknown {
  if (key === 'docker_registry_image_name') return app.imageName
  if (key === 'docker_registry_image_tag') return app.imageTag
  return app.columns[key] ?? null
}

/** Nothing was written, made or deployed. */
function expectUntouched(server: FakeCoolify, template: FakeAppState): void {
  expect(actionRequests(server).filter(r => r.method !== 'GET')).toEqual([])
  expect(server.apps().map(app => app.uuid)).toEqual([TEMPLATE.uuid])
  expect(server.app(TEMPLATE.uuid)).toEqual(template)
  expect(server.deployments()).toEqual([])
}

describe('what a clone carries from production', () => {
  // Guards: a template whose clone would share production's files is refused before any write,
  // each path named.
  it('refuses a template with a bind mount or a file mount, naming each path', async () => {
    const server = await start({
      apps: [
        {
          ...TEMPLATE,
          storages: {
            persistent: [
              { name: 'web-cache', mountPath: '/cache' },
              { name: 'web-uploads', mountPath: '/app/uploads', hostPath: '/srv/web/uploads' }
            ],
            files: [{ fsPath: '/data/coolify/applications/web/app.db', mountPath: '/app/app.db' }]
          }
        }
      ]
    })
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('/srv/web/uploads')
    expect(error).toContain('/data/coolify/applications/web/app.db')
    expect(error).not.toContain('/cache')
    expectUntouched(server, template)
    expectNoStackTrace(result.stderr)
  })

  // Guards: the first write disarms the clone (auto-deploy, webhook secrets, production's pin) and
  // pins the pull request's head commit; the branch becomes the pull request's only after the
  // template's tasks, tags and variables are gone.
  it('disarms the clone first and sets the branch last; the review app builds the head commit', async () => {
    const server = await start({
      apps: [
        {
          ...TEMPLATE,
          gitCommitSha: 'f00dfeed0pinned',
          webhookSecrets: { manual_webhook_secret_github: 'whsec_production' },
          scheduledTasks: [{ name: 'nightly-prune', command: 'php artisan model:prune' }]
        }
      ]
    })
    const result = await run(server)

    expect(result.code).toBe(0)
    const app = theReviewApp(server)
    expectFinishedReviewApp(app)
    expect(app).toMatchObject({
      autoDeploy: false,
      gitCommitSha: HEAD_SHA,
      webhookSecrets: [],
      scheduledTasks: []
    })
    expect(server.app(TEMPLATE.uuid)).toMatchObject({
      autoDeploy: true,
      gitCommitSha: 'f00dfeed0pinned'
    })

    const requests = actionRequests(server)
    const changes = writes(requests, app.uuid)
    expect(body(changes[0])).toMatchObject({
      description: SETTING_UP,
      is_auto_deploy_enabled: false,
      git_commit_sha: HEAD_SHA,
      manual_webhook_secret_github: ''
    })
    const branch = changes.findIndex(c => c.method === 'PATCH' && 'git_branch' in body(c))
    expect(body(changes[branch]).git_branch).toBe(HEAD_REF)
    const before = changes.slice(0, branch)
    const removed = (part: string): boolean =>
      before.some(c => c.method === 'DELETE' && c.path.includes(part))
    expect(removed('/scheduled-tasks/')).toBe(true)
    expect(removed('/tags/')).toBe(true)
    expect(removed('/envs/')).toBe(true)
    // Nothing production's is taken off after the branch is the pull request's.
    expect(changes.slice(branch).filter(c => c.method === 'DELETE')).toEqual([])
    expect(server.deployments()).toEqual([
      expect.objectContaining({ appUuid: app.uuid, commit: HEAD_SHA })
    ])
    expectNoSecrets(result.stdout + result.stderr, ['whsec_production'])
  })

  // Guards: unpinned, Coolify builds whatever the branch holds when the build starts
  // (bootstrap/helpers/applications.php 16): a push after the run was approved would be built.
  // The event's head commit is pinned, and built, although the branch moved on.
  it('builds the event’s head commit although the branch moved', async () => {
    const moved = 'bad0bad0bad0bad0bad0bad0bad0bad0bad0bad0'
    const server = await start({
      apps: [{ ...TEMPLATE, scenarios: [{ ...build('finished'), commit: moved }] }]
    })
    const result = await run(server)

    expect(result.code).toBe(0)
    const app = theReviewApp(server)
    expect(app.gitCommitSha).toBe(HEAD_SHA)
    expect(server.deployments()).toEqual([
      expect.objectContaining({ appUuid: app.uuid, commit: HEAD_SHA, status: 'finished' })
    ])
  })

  // Guards: compose applications route through docker_compose_domains (PATCH `domains` is 422
  // for them): the routed service gets review-domain.
  // Guards: a compose file is read from the pull request's branch when it deploys, so even a
  // clean compose template could mount the Docker socket from the branch: refused before any write.
  it('refuses a compose template before any write, saying why', async () => {
    const server = await start({
      apps: [
        {
          ...TEMPLATE,
          fqdn: '',
          buildPack: 'dockercompose',
          compose: { services: ['web'], domains: { web: 'https://web.example.com' } }
        }
      ]
    })
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('`build_pack`')
    expect(error).toContain('read from the pull request’s branch')
    expectUntouched(server, template)
  })

  // Guards: with "Readonly labels" off the clone keeps production's labels: refused before any
  // write, whatever the labels say.
  it('refuses a template with "Readonly labels" off', async () => {
    const server = await start({
      apps: [{ ...TEMPLATE, readonlyLabels: false, customLabels: 'traefik.enable=true' }]
    })
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('Readonly labels')
    expectUntouched(server, template)
  })

  // Guards: each of these, copied by the clone, reaches production (src/review-app/fields.ts says how);
  // the first write puts it back to Coolify's default, before any deploy.
  // The switches reach past the review app through what Coolify's deployment job does with them:
  // the built repository copied onto the server, a build server of the team's, submodules cloned
  // with the template's credentials, production's basic-auth password forwarded to the container.
  it.each([
    ['settings.custom_internal_name', 'web-production', null, undefined],
    ['custom_docker_run_options', '--privileged --cap-add=SYS_ADMIN', null, undefined],
    ['docker_registry_image_name', 'registry.example.com/acme/web', null, undefined],
    ['docker_registry_image_tag', 'production', null, undefined],
    ['custom_network_aliases', 'web,api', null, undefined],
    ['ports_mappings', '8080:3000', null, undefined],
    ['settings.is_preview_deployments_enabled', true, false, undefined],
    ['settings.is_preserve_repository_enabled', true, false, undefined],
    ['settings.is_build_server_enabled', true, false, 'use_build_server'],
    ['settings.is_git_submodules_enabled', true, false, undefined],
    ['is_http_basic_auth_enabled', true, false, undefined]
  ])('puts %s back before the first deploy', async (key, value, after, patched) => {
    const credentials = { http_basic_auth_username: 'admin', http_basic_auth_password: 'pw-prod' }
    const server = await start({
      apps: [{ ...TEMPLATE, columns: { ...TEMPLATE.columns, ...credentials, [key]: value } }]
    })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(errorLines(result.stdout)).toEqual([])
    const app = theReviewApp(server)
    expect(columnOf(app, key)).toEqual(after)
    const field = patched ?? key.replace('settings.', '')
    const requests = actionRequests(server)
    const reset = requests.findIndex(
      r => r.method === 'PATCH' && onApp(r, app.uuid) && field in body(r)
    )
    expect(reset).toBeGreaterThan(-1)
    expect(body(requests[reset])[field]).toEqual(after)
    expect(reset).toBeLessThan(requests.findIndex(r => deploys([r]).length > 0))
    expect(columnOf(server.app(TEMPLATE.uuid)!, key)).toEqual(value)
    expect(server.deployments().map(d => d.appUuid)).toEqual([app.uuid])
  })

  // Guards: without `read:sensitive` Coolify leaves the labels out of the answer: labels the
  // read-back never sees would pass it, so the template is refused, naming the ability.
  it('refuses a template whose labels the token cannot see, naming `read:sensitive`', async () => {
    const server = await start({
      abilities: ['read', 'write', 'deploy'],
      apps: [{ ...TEMPLATE, envs: [], customLabels: 'traefik.enable=true' }]
    })
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('labels')
    expect(error).toContain('`read:sensitive`')
    expectUntouched(server, template)
    expectNoStackTrace(result.stderr)
  })

  // Guards: a newer Coolify's column is never copied unexamined: refused before any write.
  it('refuses a template with a field it does not know, naming it, before any write', async () => {
    const server = await start({
      apps: [
        {
          ...TEMPLATE,
          columns: { ...TEMPLATE.columns, sidecar_image: 'redis:7', 'settings.is_future': false }
        }
      ]
    })
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('`sidecar_image`')
    expect(error).not.toContain('settings.is_future')
    expect(error).not.toContain('redis:7')
    expectUntouched(server, template)
  })

  // Guards: Coolify 4.3.11 never skips the LFS smudge (Application.php 1455 only leaves out
  // `git lfs pull`): a template with Git LFS on — Coolify's default — is refused before anything
  // is made, naming the setting and what to do.
  it('refuses a template with Git LFS on, with nothing made', async () => {
    const server = await start({ apps: [{ ...TEMPLATE, columns: {} }] })
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('`settings.is_git_lfs_enabled`')
    expect(error).toContain('turn "Git LFS" off')
    expectUntouched(server, template)
    expectNoStackTrace(result.stderr)
  })

  // Guards: isolation is the default: without review-destination nothing is made, and the error
  // lists the team's destinations, saying which share production's servers.
  it('refuses a review app without review-destination before anything is made', async () => {
    const server = await start()
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server, { 'review-destination': '' })

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('`review-destination`')
    expect(error).toContain(`${ISOLATED.uuid} (reviews) on server ${ISOLATED.serverUuid}: isolated`)
    expect(error).toContain(
      `${PRIMARY.uuid} (web-net) on server srv0one: shares production's server`
    )
    expect(error).toContain(
      "dst0web0extra00000000001 on server srv0two: shares production's server"
    )
    expect(actionRequests(server).filter(r => r.method !== 'GET')).toEqual([])
    expect(server.apps().map(app => app.uuid)).toEqual([TEMPLATE.uuid])
    expect(server.deployments()).toEqual([])
    expectUntouched(server, template)
    expectNoStackTrace(result.stderr)
  })

  // Guards: production deploys to every destination of the template, additional ones too
  // (ApplicationDeploymentJob.php 2214-2249): naming one is allowed, with one warning saying what
  // that server shares.
  it('warns once when review-destination is on a server of an additional destination', async () => {
    const shared = await start()
    const result = await run(shared, { 'review-destination': 'dst0web0extra00000000001' })
    expect(result.code).toBe(0)
    const warned = warningLines(result.stdout).filter(line =>
      line.includes('runs on a server production runs on')
    )
    expect(warned).toHaveLength(1)
    expect(warned[0]).toContain('`review-destination`')
    // What one Docker daemon shares, whatever the settings say.
    for (const what of ['LABEL', 'FROM', 'build cache', 'host network', "Coolify's database"]) {
      expect(warned[0]).toContain(what)
    }
    expect(theReviewApp(shared).destination).toBe('dst0web0extra00000000001')
    expect(result.summary).toContain('runs on a server production runs on')
  })

  it('deploys without a warning on a server of its own, cloned into review-destination', async () => {
    const elsewhere = await start()
    const isolated = await run(elsewhere)
    expect(isolated.code).toBe(0)
    expect(
      warningLines(isolated.stdout).filter(line => line.includes('production runs on'))
    ).toEqual([])
    const clone = actionRequests(elsewhere).find(r => r.path.endsWith('/clone'))!
    expect(body(clone).destination_uuid).toBe(ISOLATED.uuid)
    expect(theReviewApp(elsewhere).destination).toBe(ISOLATED.uuid)
    expect(isolated.summary).not.toContain('production runs on')
    expect(elsewhere.deployments()).toEqual([
      expect.objectContaining({ appUuid: theReviewApp(elsewhere).uuid, status: 'finished' })
    ])
  })

  // Guards: a server without a proxy drops PATCH `domains` and answers 200: the read-back finds
  // production's host still on the clone, deletes it, and nothing is deployed.
  it('deletes the clone and deploys nothing when its domain stays production’s', async () => {
    const server = await start({ apps: [{ ...TEMPLATE, proxy: 'NONE' }] })
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('web.example.com')
    expect(namesakes(server)).toEqual([])
    expect(server.deployments()).toEqual([])
    expect(deploys(actionRequests(server))).toEqual([])
    expect(result.outputs.url ?? '').not.toContain('web.example.com')
    expect(server.app(TEMPLATE.uuid)!.fqdn).toBe(TEMPLATE.fqdn)
  })
})

describe("the template's variables", () => {
  const VARIABLES: FakeApp = {
    ...TEMPLATE,
    envs: [
      { key: 'API_URL', value: 'https://api.example.com' },
      { key: 'STRIPE_SECRET', value: PRODUCTION_SECRETS[0] },
      { key: 'DATABASE_URL', value: PRODUCTION_SECRETS[1] },
      { key: 'SIGNING_KEY', value: 'locked-production-key', isShownOnce: true },
      { key: 'API_URL', value: 'https://api.staging.example.com', isPreview: true },
      // Twins Coolify made with production's values, never edited.
      { key: 'STRIPE_SECRET', value: PRODUCTION_SECRETS[0], isPreview: true },
      { key: 'DATABASE_URL', value: PRODUCTION_SECRETS[1], isPreview: true },
      {
        key: 'GREETING',
        value: 'Hello $USER\nsecond line',
        isPreview: true,
        isLiteral: true,
        isMultiline: true,
        isBuildtime: false
      },
      { key: 'PREVIEW_TOKEN', value: 'pv_token_only_here', isPreview: true, isShownOnce: true }
    ]
  }

  // Coolify keeps an emptied value as null (ConvertEmptyStringsToNull, app/Http/Kernel.php 61) and
  // leaves `value` out only for a token without read:sensitive.
  it('takes a variable emptied in Coolify, listed as null, for an empty one, not a hidden one', async () => {
    const emptied: FakeApp = {
      ...TEMPLATE,
      envs: [
        ...TEMPLATE.envs!,
        { key: 'SENTRY_DSN', value: null },
        { key: 'DEBUG', value: null, isPreview: true }
      ]
    }
    const server = await start({ apps: [emptied] })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(errorLines(result.stdout)).toEqual([])
    expect(result.stdout).not.toMatch(/read:sensitive/)
    expect(productionVariables(theReviewApp(server))).toEqual({ ...REVIEW_VARIABLES, DEBUG: null })
  })

  // Guards: preview twins equal to production are not copied (warned by key, never value); copied
  // ones keep their flags and are masked; locked ones are named, with `env` as the way to give them.
  it('copies preview values of their own with their flags, and names what it leaves out', async () => {
    const server = await start({ apps: [VARIABLES] })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(errorLines(result.stdout)).toEqual([])
    const app = theReviewApp(server)
    expect(productionVariables(app)).toEqual({
      API_URL: 'https://api.staging.example.com',
      GREETING: 'Hello $USER\nsecond line',
      PR_NUMBER: String(PR)
    })
    expect(app.envs.find(e => e.key === 'GREETING' && !e.isPreview)).toMatchObject({
      isLiteral: true,
      isMultiline: true,
      isRuntime: true,
      isBuildtime: false
    })
    for (const env of app.envs) expect(PRODUCTION_SECRETS).not.toContain(env.value)

    const warnings = warningLines(result.stdout).join('\n')
    expect(warnings).toMatch(/STRIPE_SECRET/)
    expect(warnings).toMatch(/DATABASE_URL/)
    expect(warnings).toMatch(/PREVIEW_TOKEN[^\n]*locked/)
    expect(warnings).toContain('`env`')
    expect(result.stdout).not.toMatch(/read:sensitive/)
    expect(result.stdout).toContain('::add-mask::https://api.staging.example.com')
    // Each line of a multi-line value; never one so short it would star out the whole log.
    expect(result.stdout).toContain('::add-mask::second line')
    expectNoSecrets(result.stdout + result.stderr, [
      ...PRODUCTION_SECRETS,
      'https://api.staging.example.com'
    ])
  })

  // Guards: `env` gives what cannot be copied, without a warning about it.
  it('takes a locked variable from env', async () => {
    const server = await start({ apps: [VARIABLES] })
    const result = await run(server, {
      env: `PR_NUMBER=${PR}\nPREVIEW_TOKEN=pv_for_pr\nSTRIPE_SECRET=sk_test_1\nDATABASE_URL=postgres://pr@db/pr`
    })

    expect(result.code).toBe(0)
    expect(productionVariables(theReviewApp(server))).toMatchObject({
      PREVIEW_TOKEN: 'pv_for_pr',
      STRIPE_SECRET: 'sk_test_1'
    })
    expect(warningLines(result.stdout).join('\n')).not.toMatch(/PREVIEW_TOKEN|STRIPE_SECRET/)
  })
  // Guards: a preview value written as a reference to a shared variable differs from production's
  // as text, but resolves in production's environment (which the clone shares) to a value
  // production holds. Coolify shows a literal variable's real_value in single quotes and escapes
  // the others (EnvironmentVariable.php 207-215): compared as shown, the literal secret behind the
  // reference passed. Refused before anything is made, naming the keys, never the values.
  it('refuses a literal production secret behind a preview reference, with nothing made', async () => {
    const password = 'pa"ss-Prod-9'
    const server = await start({
      apps: [
        {
          ...TEMPLATE,
          envs: [
            { key: 'STRIPE_SECRET', value: PRODUCTION_SECRETS[0], isLiteral: true },
            { key: 'DB_PASSWORD', value: password },
            { key: 'STRIPE_SECRET', value: '{{environment.STRIPE_KEY}}', isPreview: true },
            {
              key: 'DATABASE_URL',
              value: 'postgres://app:{{ environment.DB_PASSWORD }}@db/app',
              isPreview: true
            },
            { key: 'PREVIEW_DB', value: '{{team.PREVIEW_DB}}', isPreview: true }
          ]
        }
      ],
      sharedVariables: {
        'environment.STRIPE_KEY': PRODUCTION_SECRETS[0],
        'environment.DB_PASSWORD': password,
        'team.PREVIEW_DB': 'postgres://preview@db/pr'
      }
    })
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain(
      "preview variable STRIPE_SECRET refers to a shared variable that resolves to the value of production's STRIPE_SECRET"
    )
    expect(error).toContain(
      "preview variable DATABASE_URL refers to a shared variable that resolves to the value of production's DB_PASSWORD"
    )
    expect(error).not.toContain('PREVIEW_DB')
    expectUntouched(server, template)
    expectNoSecrets(result.stdout + result.stderr, [...PRODUCTION_SECRETS, password])
  })

  // Guards: a preview-only key holding a value production holds under another key is no value
  // of the review app's own.
  it('refuses a preview-only key holding production’s literal value', async () => {
    const server = await start({
      apps: [
        {
          ...TEMPLATE,
          envs: [
            { key: 'STRIPE_SECRET', value: PRODUCTION_SECRETS[0], isLiteral: true },
            { key: 'PAYMENTS_KEY', value: PRODUCTION_SECRETS[0], isPreview: true }
          ]
        }
      ]
    })
    const template = server.app(TEMPLATE.uuid)!
    const result = await run(server)

    expect(result.code).toBe(1)
    expect(errorLines(result.stdout)[0]).toContain(
      "preview variable PAYMENTS_KEY holds the value of production's STRIPE_SECRET"
    )
    expectUntouched(server, template)
    expectNoSecrets(result.stdout + result.stderr, PRODUCTION_SECRETS)
  })
})

describe('`env` values that refer to shared variables', () => {
  // Guards: `env` is the pull request's own, but a reference in it resolves in production's
  // environment, which the clone shares: checked as the template's preview values are, the
  // clone deleted and nothing deployed when it resolves to production's value.
  it('deletes the clone and deploys nothing when one resolves to production’s value', async () => {
    const server = await start({
      apps: [
        {
          ...TEMPLATE,
          envs: [{ key: 'STRIPE_SECRET', value: '{{environment.STRIPE_KEY}}' }]
        }
      ],
      sharedVariables: { 'environment.STRIPE_KEY': PRODUCTION_SECRETS[0] }
    })
    const result = await run(server, { env: 'PAYMENTS_KEY={{ environment.STRIPE_KEY }}' })

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain('`env` gives PAYMENTS_KEY a shared variable')
    expect(namesakes(server)).toEqual([])
    expect(server.deployments()).toEqual([])
    expectNoSecrets(result.stdout + result.stderr, PRODUCTION_SECRETS)
  })

  it('keeps one that resolves to a value of its own', async () => {
    const server = await start({
      sharedVariables: { 'team.PREVIEW_DB': 'postgres://preview@db/pr' }
    })
    const result = await run(server, { env: 'PREVIEW_DB={{team.PREVIEW_DB}}' })

    expect(result.code).toBe(0)
    expect(productionVariables(theReviewApp(server)).PREVIEW_DB).toBe('{{team.PREVIEW_DB}}')
  })
})

describe('a clone whose answer is lost after Coolify saved it', () => {
  // Guards: the copy — the template's name-pr-N, its description, tags and domain — is found by
  // name and deleted; nothing is deployed.
  it('finds the copy and deletes it', async () => {
    const server = await start()
    server.inject({ method: 'POST', path: `/applications/${TEMPLATE.uuid}/clone`, do: 'lost' })
    const result = await run(server)

    expect(result.code).toBe(1)
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toMatch(/deleted/)
    const clones = actionRequests(server).filter(r => r.path.endsWith('/clone'))
    expect(clones).toHaveLength(1)
    expect(namesakes(server)).toEqual([])
    expect(server.apps().map(app => app.uuid)).toEqual([TEMPLATE.uuid])
    expect(server.deployments()).toEqual([])
  })

  // Guards: when deleting it fails too, the error names the copy to delete.
  it('names the copy when it cannot be deleted', async () => {
    const server = await start()
    server.inject({ method: 'POST', path: `/applications/${TEMPLATE.uuid}/clone`, do: 'lost' })
    server.inject({
      method: 'DELETE',
      path: /^\/applications\/[^/]+$/,
      times: Infinity,
      do: { status: 403, body: { message: 'You are not allowed to delete this application.' } }
    })
    const result = await run(server)

    expect(result.code).toBe(1)
    const [copy] = namesakes(server)
    expect(copy).toBeDefined()
    const [error, ...more] = errorLines(result.stdout)
    expect(more).toEqual([])
    expect(error).toContain(copy.uuid)
    expect(error).toMatch(/delete it/i)
    expect(server.deployments()).toEqual([])
  })
})
