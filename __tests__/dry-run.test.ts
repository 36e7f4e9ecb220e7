/**
 * `dry-run: true` through the bundled action, started from action.yml, against the fake Coolify:
 * it checks the address, the token (its role and abilities) and the names, says what the run would
 * do, and never sends a request that changes Coolify — the fake records every request.
 */
import { describe, expect, it } from '@jest/globals'
import type { FakeApp, FakeCoolify, RecordedRequest } from '../test/fake-coolify/index.js'
import { pullRequestEventEnv } from '../test/support/events.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import {
  APP,
  build,
  errorLines,
  expectNoSecrets,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  inputsFor,
  TOKEN
} from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest(() => ({
  abilities: ['read', 'read:sensitive', 'write', 'deploy']
}))

function run(
  server: FakeCoolify,
  inputs: Record<string, string> = {},
  env: Record<string, string> = {}
): Promise<RunResult> {
  return runAction({ inputs: inputsFor(server, { 'dry-run': 'true', ...inputs }), env })
}

/** Every request but a read: a dry run sends none. */
function changes(server: FakeCoolify): RecordedRequest[] {
  return server.requests.filter(request => request.method !== 'GET')
}

function expectNothingChanged(server: FakeCoolify, result: RunResult): void {
  expect(changes(server)).toEqual([])
  expect(server.deployments()).toEqual([])
  expectNoStackTrace(result.stderr)
  expectNoSecrets(result.stdout, [TOKEN])
}

/** The step's error annotations, without the workflow command. */
function failures(result: RunResult): string[] {
  return errorLines(result.stdout).map(line => line.replace(/^::error[^:]*::/, ''))
}

/** The lines the step printed, without workflow commands. */
function notes(result: RunResult): string[] {
  return result.stdout.split('\n').filter(line => line !== '' && !line.startsWith('::'))
}

describe('a dry run', () => {
  it('checks the token and says what it would deploy and set, changing nothing', async () => {
    const server = await start()
    const result = await run(server, {
      'git-branch': 'release',
      env: 'API_URL=https://api.example.com\nSECRET_KEY=do-not-print-me',
      'health-url': '/health'
    })

    expect(result.code).toBe(0)
    expect(result.outputs).toMatchObject({
      status: 'dry-run',
      'deployment-uuid': '',
      deployments: '[]'
    })
    expect(notes(result)).toEqual([
      `${server.url}/api/v1 answers as Coolify's API (Coolify 4.3.11); the token is valid and belongs to the team Root Team`,
      'The token holds what this run needs: read, deploy, write',
      `${APP.uuid}: would set git_branch to release, environment variables API_URL, SECRET_KEY`,
      `Would deploy ${APP.uuid} on ${server.url}`,
      'Then would check /health',
      'Dry run: nothing was deployed or changed in Coolify.'
    ])
    // The abilities are asked by GETs that Coolify answers with 405 after its ability check.
    const asked = server.requests.map(request => `${request.method} ${request.path}`)
    expect(asked).toContain('GET /api/v1/deploy')
    expect(asked).toContain('GET /api/v1/servers/ability-check/validate')
    expect(server.requests.find(r => r.path === '/api/v1/deploy')?.query).toEqual({})
    expectNothingChanged(server, result)
    expect(notes(result).join('\n')).not.toContain('do-not-print-me')
  })

  // A run first watches a pin that is already there (`standingPin`): it may be another run's,
  // which that run puts back.
  const COMMIT = 'abcdef1234abcdef1234abcdef1234abcdef1234'
  it.each([
    ['HEAD', 'then put back HEAD'],
    [
      'c0ffee0123c0ffee0123c0ffee0123c0ffee0123',
      "then put back what is pinned once it settles (now c0ffee0123c0ffee0123c0ffee0123c0ffee0123, which may be another run's pin: the run first watches whether it stays)"
    ]
  ])('says what a commit pin on an application pinned to %s puts back', async (pinned, back) => {
    const server = await start({ apps: [{ ...APP, gitCommitSha: pinned }] })
    const result = await run(server, { commit: COMMIT })

    expect(failures(result)).toEqual([])
    expect(result.code).toBe(0)
    expect(notes(result)).toContain(
      `${APP.name}: would pin commit ${COMMIT} for this deploy, ${back}`
    )
    expectNothingChanged(server, result)
  })

  it('fails on a read-only token, naming the ability and what needs it', async () => {
    const server = await start({ abilities: ['read'] })
    const result = await run(server, { 'git-branch': 'release' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('failed')
    expect(failures(result)).toEqual([
      expect.stringMatching(
        /^GET \/deploy: Coolify answered 403 "Missing required permissions: deploy"\. The token lacks the `deploy` ability, which deploying needs/
      )
    ])
    expectNothingChanged(server, result)
  })

  it('fails on a token of a team member that may deploy, saying to use an admin or owner', async () => {
    const server = await start({ role: 'member', abilities: ['read', 'deploy'] })
    const result = await run(server)

    expect(result.code).toBe(1)
    expect(failures(result)).toEqual([
      expect.stringMatching(
        /^GET \/version: Coolify answered 403 "Missing required team role\.": the token's user is only a member of its team\. .*admin or owner/
      )
    ])
    expectNothingChanged(server, result)
  })

  it("fails on a member's read-only token at the first ability the run needs", async () => {
    const server = await start({ role: 'member', abilities: ['read'] })
    const result = await run(server)

    expect(result.code).toBe(1)
    expect(failures(result)[0]).toContain('The token lacks the `deploy` ability')
    expectNothingChanged(server, result)
  })

  it('refuses an input that does not fit the application, as the run would', async () => {
    const server = await start()
    const result = await run(server, { 'image-tag': '2.0' })

    expect(result.code).toBe(1)
    expect(failures(result)).toEqual([
      expect.stringMatching(/^Input `image-tag` is for Docker-image applications; web is built/)
    ])
    expectNothingChanged(server, result)
  })

  it('asks nothing it cannot ask harmlessly of a server without a version route', async () => {
    // The contract's GET /deploy deploys: a dry run must never send it.
    const server = await start({ flavor: 'seed' })
    const result = await run(server)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('dry-run')
    expect(result.stdout).toContain(
      "::warning::The token's `deploy` ability (for deploying) could not be checked"
    )
    expect(server.requests.map(request => request.path)).not.toContain('/api/v1/deploy')
    expectNothingChanged(server, result)
  })
})

describe('a dry run of a review app: the plan, and nothing made', () => {
  const PR = 7
  const TEMPLATE: FakeApp = {
    uuid: 'tpl0web0uuid000000000001',
    name: 'web',
    fqdn: 'https://web.example.com',
    tags: ['production'],
    destinations: [{ uuid: 'dst0web0primary000000001', name: 'web-net', serverUuid: 'srv0one' }],
    envs: [
      { key: 'STRIPE_SECRET', value: 'sk_live_production_only_51' },
      { key: 'API_URL', value: 'https://api.staging.example.com', isPreview: true }
    ],
    columns: { 'settings.is_git_lfs_enabled': false },
    scenarios: [build('finished')]
  }
  const review = (extra: Record<string, string> = {}): Record<string, string> => ({
    'app-uuid': TEMPLATE.uuid,
    pr: String(PR),
    'review-app': 'true',
    'review-domain': 'https://pr-{pr}.preview.example.com',
    'review-destination': 'dst0web0primary000000001',
    env: `PR_NUMBER=${PR}`,
    comment: 'false',
    ...extra
  })
  const HEAD_SHA = 'c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00'
  const event = pullRequestEventEnv({
    number: PR,
    headRef: 'feature/login-form',
    headSha: HEAD_SHA
  })

  it('says where it would be cloned, what is reset and set, and clones nothing', async () => {
    const server = await start({ apps: [TEMPLATE] })
    const result = await run(server, review(), event)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('dry-run')
    const said = notes(result)
    expect(said).toContain(
      `Review app web-pr-${PR} would be cloned from web (${TEMPLATE.uuid}) into destination dst0web0primary000000001, on a server production runs on`
    )
    expect(said).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ {2}reset: is_auto_deploy_enabled, manual_webhook/),
        `  commit: ${HEAD_SHA} pinned (the pull request's head)`,
        `  domains: https://pr-${PR}.preview.example.com`,
        "  removed: the template's scheduled tasks, tags and variables",
        '  variables: API_URL, PR_NUMBER',
        '  branch: feature/login-form'
      ])
    )
    expect(result.stdout).toMatch(
      /::warning::Review app web-pr-7 runs on a server production runs on, as `review-destination` chose/
    )
    expect(server.apps().map(app => app.uuid)).toEqual([TEMPLATE.uuid])
    expectNothingChanged(server, result)
    expectNoSecrets(result.stdout, ['sk_live_production_only_51'])
  })

  // Guards: the dry run finds a review app as the run does, by its marker alone (the template
  // renamed since), and names the head commit the run would pin before deploying it.
  it('finds the review app by its marker and names the commit it would pin', async () => {
    const reviewApp: FakeApp = {
      uuid: 'rev0web0pr70000000000001',
      name: `web-pr-${PR}`,
      description: `Review app for pull request #${PR} of octo/app, template ${TEMPLATE.uuid}`,
      fqdn: `https://pr-${PR}.preview.example.com`,
      scenarios: [build('finished')]
    }
    const server = await start({ apps: [{ ...TEMPLATE, name: 'site' }, reviewApp] })
    const result = await run(server, review(), event)

    expect(result.code).toBe(0)
    expect(notes(result)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `^Review app web-pr-${PR} \\(${reviewApp.uuid}\\) exists: it would be deployed with branch feature/login-form, commit ${HEAD_SHA} pinned`
          )
        )
      ])
    )
    expect(server.apps().map(app => app.uuid)).toEqual([TEMPLATE.uuid, reviewApp.uuid])
    expectNothingChanged(server, result)
  })

  it('refuses as the run would without review-destination, listing the destinations', async () => {
    const server = await start({ apps: [TEMPLATE] })
    const result = await run(server, review({ 'review-destination': '' }), event)

    expect(result.code).toBe(1)
    const [error] = failures(result)
    expect(error).toContain('`review-destination`')
    expect(error).toContain(
      "dst0web0primary000000001 (web-net) on server srv0one: shares production's server"
    )
    expectNothingChanged(server, result)
  })

  it('says what it refuses, and fails as the run would', async () => {
    const server = await start({ apps: [TEMPLATE] })
    const result = await run(server, review({ 'review-domain': '' }), event)

    expect(result.code).toBe(1)
    expect(failures(result)[0]).toMatch(/^No review app for pull request 7: /)
    expectNothingChanged(server, result)
  })

  // Guards: the run's refusals of a template, said by its dry run the same way: Git LFS on, a
  // preview reference to a value production holds, an event without the head commit to pin.
  it.each<[string, FakeApp, Record<string, string>, RegExp]>([
    ['Git LFS on', { ...TEMPLATE, columns: {} }, event, /`settings\.is_git_lfs_enabled`/],
    [
      'a preview reference to a production secret',
      {
        ...TEMPLATE,
        envs: [
          { key: 'STRIPE_SECRET', value: 'sk_live_production_only_51', isLiteral: true },
          { key: 'PAYMENTS', value: 'x-{{environment.STRIPE}}', isPreview: true }
        ]
      },
      event,
      /preview variable PAYMENTS refers to a shared variable that resolves to the value of production's STRIPE_SECRET/
    ],
    [
      'no head commit in the event',
      TEMPLATE,
      pullRequestEventEnv({ number: PR, headRef: 'feature/login-form', headSha: '' }),
      /head commit/
    ]
  ])('refuses as the run would: %s', async (_, template, env, reason) => {
    const server = await start({
      apps: [template],
      sharedVariables: { 'environment.STRIPE': 'sk_live_production_only_51' }
    })
    const result = await run(server, review(), env)

    expect(result.code).toBe(1)
    const [error, ...more] = failures(result)
    expect(more).toEqual([])
    expect(error).toMatch(reason)
    expectNothingChanged(server, result)
    expectNoSecrets(result.stdout, ['sk_live_production_only_51'])
  })
})
