/**
 * What the bundled action reports on GitHub's side, run as the runner runs it against the fake
 * Coolify and a fake GitHub API: the job summary file, the annotations in its output, the GitHub
 * deployment and its statuses as GitHub received them, and the settings PATCHed before a deploy.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { startFakeGitHub, type FakeGitHub } from '../test/fake-github/index.js'
import { buildLogLines, runAction, type RunOptions } from '../test/support/runner.js'
import { APP, fakeCoolifyPerTest, inputsFor } from '../test/support/scenarios.js'

const GITHUB_TOKEN = 'ghs_fake-github-token-5678'
const SHA = '0123456789abcdef0123456789abcdef01234567' // runner.ts sets it as GITHUB_SHA

function build(outcome: 'finished' | 'failed'): Scenario {
  return {
    commit: 'abc1234def5678',
    steps: [
      { at: 0, status: 'in_progress', lines: ['Starting deployment of web.'] },
      {
        at: 100,
        lines: [
          { output: 'warning: deprecated <api>', type: 'stderr' },
          { output: 'npm run build -- --banner ```' }
        ]
      },
      outcome === 'failed'
        ? {
            at: 200,
            status: 'failed',
            lines: [{ output: 'npm ERR! missing script: "build" & more', type: 'stderr' }]
          }
        : {
            at: 200,
            status: 'finished',
            lines: [{ output: 'Rolling update completed.' }]
          },
      { at: 250, lines: [{ output: 'Gracefully shutting down build container' }] }
    ]
  }
}

const FOREVER: Scenario = { steps: [{ at: 0, status: 'in_progress', lines: ['building'] }] }

let github: FakeGitHub | undefined
afterEach(async () => {
  await github?.close()
  github = undefined
})

const start = fakeCoolifyPerTest(() => ({ apps: [{ ...APP, scenarios: [build('finished')] }] }))

function run(
  server: FakeCoolify,
  inputs: Record<string, string> = {},
  options: Partial<RunOptions> = {}
) {
  return runAction({
    inputs: inputsFor(server, inputs),
    ...options,
    env: { ...(github ? { GITHUB_API_URL: github.url } : {}), ...options.env }
  })
}

function annotations(stdout: string, kind: 'error' | 'warning'): string[] {
  return stdout.split('\n').filter(line => line.startsWith(`::${kind}`))
}

function coolifyRequests(server: FakeCoolify): string[] {
  return server.requests.map(request => `${request.method} ${request.path}`)
}

describe('the job summary', () => {
  it('has a row with the status, duration, commit, deployment link and app URL on success', async () => {
    const server = await start()
    const result = await run(server)

    expect(result.code).toBe(0)
    const { uuid } = server.deployments()[0]
    expect(result.summary).toContain('<h3>Deploy to Coolify on <a href=')
    expect(result.summary).toContain(
      '<tr><th>Application</th><th>Status</th><th>Duration</th><th>Commit</th><th>Deployment</th><th>URL</th></tr>'
    )
    expect(result.summary).toMatch(
      new RegExp(
        `<tr><td>web</td><td>✅ finished</td><td>[\\d.]+m?s</td><td><code>abc1234</code></td>` +
          `<td><a href="${server.url}/project/[^"]+/deployment/${uuid}">${uuid}</a></td>` +
          `<td><a href="${APP.fqdn}">${APP.fqdn}</a></td></tr>`
      )
    )
    expect(result.summary).not.toContain('<details>')
  })

  it('shows the end of a failed deployment’s log, stderr first, verbatim, in a collapsible block', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [build('failed')] }] })
    const result = await run(server)

    expect(result.code).toBe(1)
    expect(result.summary).toContain('<td>❌ failed</td>')
    const details = result.summary.slice(result.summary.indexOf('<details>'))
    expect(details).toContain('<summary>web: the end of its log</summary>')
    const stderr = details.indexOf(
      'stderr:\n```text\nwarning: deprecated <api>\nnpm ERR! missing script: "build" & more\n```'
    )
    const others = details.indexOf(
      // A fence longer than any run of backticks in the log, which cannot close it early.
      'Other lines:\n````text\nStarting deployment of web.\nnpm run build -- --banner ```\nGracefully shutting down build container\n````'
    )
    expect(stderr).toBeGreaterThan(0)
    expect(others).toBeGreaterThan(stderr)
    expect(details).toContain('</details>')
  })

  it('is written on a timeout, with the reason', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [FOREVER] }] })
    const result = await run(server, { timeout: '1s' })

    expect(result.code).toBe(1)
    expect(result.summary).toContain('<td>⏱️ timeout<br><sub>it outlasted `timeout`')
    expect(result.summary).toContain('Other lines:\n```text\nbuilding\n')
  })

  it('is written when the workflow run is cancelled', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [FOREVER] }] })
    let signalled = false
    const result = await run(
      server,
      {},
      {
        onStdout: (stdout, child) => {
          if (signalled || !buildLogLines(stdout).includes('building')) return
          signalled = true
          child.kill('SIGINT')
        }
      }
    )

    expect(result.code).toBe(1)
    expect(result.summary).toContain('<td>⏹️ cancelled')
    expect(result.summary).toContain(`<td>web</td>`)
  })
  it('has a row per deployment, and the log of the failed one only', async () => {
    const api = { uuid: 'api0app0uuid0000000002', name: 'api', fqdn: 'https://api.example.com' }
    const server = await start({
      apps: [
        { ...APP, scenarios: [build('finished')] },
        { ...api, scenarios: [build('failed')] }
      ]
    })
    const result = await run(server, { 'app-uuid': `${APP.uuid},${api.uuid}` })

    expect(result.code).toBe(1)
    expect(result.summary).toContain('<tr><td>web</td><td>✅ finished</td>')
    expect(result.summary).toContain('<tr><td>api</td><td>❌ failed</td>')
    expect(result.summary.match(/<details>/g)).toHaveLength(1)
    expect(result.summary).toContain('<summary>api: the end of its log</summary>')
  })
})

describe('the failure annotation', () => {
  it('names the application and carries the reason, the link and the last stderr lines', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [build('failed')] }] })
    const result = await run(server)

    const [error] = annotations(result.stdout, 'error')
    const { uuid } = server.deployments()[0]
    expect(error).toMatch(
      new RegExp(
        `^::error title=web%3A deployment failed::web: deployment failed — ${server.url}/project/\\S+/deployment/${uuid}%0A`
      )
    )
    expect(error.split('%0A').slice(1)).toEqual([
      'warning: deprecated <api>',
      'npm ERR! missing script: "build" & more'
    ])
  })

  it('carries the last lines of a log without stderr (the contract’s plain-text log)', async () => {
    const server = await start({ flavor: 'seed', apps: [{ ...APP, scenarios: [build('failed')] }] })
    const result = await run(server)

    const [error] = annotations(result.stdout, 'error')
    expect(error).toContain('title=web%3A deployment failed')
    expect(error).toContain('%0AGracefully shutting down build container')
  })
})

describe('the GitHub deployment', () => {
  const staging = { environment: 'staging', 'github-token': GITHUB_TOKEN }

  it('is created for the commit, set in progress, then success with the app URL', async () => {
    github = await startFakeGitHub()
    const server = await start()
    const result = await run(server, staging)

    expect(result.code).toBe(0)
    const [create, ...statuses] = github.requests
    expect(create.method).toBe('POST')
    expect(create.path).toBe('/repos/octo/app/deployments')
    expect(create.headers.authorization).toBe(`token ${GITHUB_TOKEN}`)
    expect(create.body).toEqual({
      ref: SHA,
      environment: 'staging',
      description: expect.any(String),
      auto_merge: false,
      required_contexts: [],
      transient_environment: false
    })
    const { uuid } = server.deployments()[0]
    expect(statuses.map(status => status.path)).toEqual([
      '/repos/octo/app/deployments/1/statuses',
      '/repos/octo/app/deployments/1/statuses'
    ])
    expect(statuses.map(status => status.body)).toEqual([
      { state: 'in_progress', description: expect.any(String) },
      {
        state: 'success',
        description: 'Deployed web',
        environment_url: APP.fqdn,
        log_url: expect.stringMatching(new RegExp(`^${server.url}/project/.+/deployment/${uuid}$`))
      }
    ])
    expect(result.stdout.replaceAll(`::add-mask::${GITHUB_TOKEN}`, '')).not.toContain(GITHUB_TOKEN)
  })

  it('ends in failure with the link to the log when the deployment fails', async () => {
    github = await startFakeGitHub()
    const server = await start({ apps: [{ ...APP, scenarios: [build('failed')] }] })
    const result = await run(server, staging)

    expect(result.code).toBe(1)
    const final = github.requests.at(-1)!.body
    expect(final).toMatchObject({
      state: 'failure',
      log_url: expect.stringContaining(`/deployment/${server.deployments()[0].uuid}`)
    })
    expect(final.description).toMatch(/^web: deployment failed/)
    expect(final).not.toHaveProperty('environment_url')
  })

  it('ends in error on a timeout', async () => {
    github = await startFakeGitHub()
    const server = await start({ apps: [{ ...APP, scenarios: [FOREVER] }] })
    const result = await run(server, { ...staging, timeout: '1s' })

    expect(result.code).toBe(1)
    expect(github.requests.map(request => request.body.state)).toEqual([
      undefined,
      'in_progress',
      'error'
    ])
  })

  it('ends in error, saying why, when Coolify deployed nothing', async () => {
    github = await startFakeGitHub()
    const server = await start()
    const result = await run(server, { ...staging, 'app-uuid': 'nosuchapp' })

    expect(result.code).toBe(1)
    const final = github.requests.at(-1)!.body
    expect(final.state).toBe('error')
    expect(final.description).toContain('No resources found')
    expect(String(final.description).length).toBeLessThanOrEqual(140)
  })

  it('is made for the head commit of a pull request', async () => {
    github = await startFakeGitHub()
    const server = await start()
    const event = join(tmpdir(), `pull-request-event-${process.pid}.json`)
    const head = 'fedcba9876543210fedcba9876543210fedcba98'
    writeFileSync(event, JSON.stringify({ pull_request: { number: 7, head: { sha: head } } }))
    await run(server, staging, {
      env: { GITHUB_EVENT_PATH: event, GITHUB_EVENT_NAME: 'pull_request' }
    })

    expect(github.requests[0].body.ref).toBe(head)
  })

  it('is made for the commit deployed, given as `commit`', async () => {
    const older = 'aaaaaaa1111111bbbbbbb2222222ccccccc33333'
    github = await startFakeGitHub({ commits: [SHA, older] })
    const server = await start({ abilities: ['root'] })
    const result = await run(server, { ...staging, commit: older })

    expect(result.code).toBe(0)
    expect(github.requests[0].body.ref).toBe(older)
  })

  it('falls back to the workflow’s commit when GitHub does not have the one deployed', async () => {
    const unknown = 'ddddddd4444444eeeeeee5555555fffffff66666'
    github = await startFakeGitHub({ commits: [SHA] })
    const server = await start({ abilities: ['root'] })
    const result = await run(server, { ...staging, commit: unknown })

    expect(result.code).toBe(0)
    expect(github.requests.map(request => request.body.ref).slice(0, 2)).toEqual([unknown, SHA])
    expect(github.deployments()).toHaveLength(1)
    expect(result.stdout).toContain(`GitHub does not have commit ${unknown}`)
  })

  it('ends in error when the workflow run is cancelled', async () => {
    github = await startFakeGitHub()
    const server = await start({ apps: [{ ...APP, scenarios: [FOREVER] }] })
    let signalled = false
    const result = await run(server, staging, {
      onStdout: (stdout, child) => {
        if (signalled || !buildLogLines(stdout).includes('building')) return
        signalled = true
        child.kill('SIGINT')
      }
    })

    expect(result.code).toBe(1)
    expect(github.requests.map(request => request.body.state)).toEqual([
      undefined,
      'in_progress',
      'error'
    ])
  })

  it('ends handed over with wait: false, linking Coolify, rather than in progress for good', async () => {
    github = await startFakeGitHub()
    const server = await start()
    const result = await run(server, { ...staging, wait: 'false' })

    expect(result.code).toBe(0)
    expect(github.requests.map(request => request.body.state)).toEqual([
      undefined,
      'in_progress',
      'success'
    ])
    expect(github.requests.at(-1)!.body).toMatchObject({
      description: 'Handed to Coolify (wait: false): web; the result is in Coolify',
      environment_url: APP.fqdn,
      log_url: expect.stringContaining(server.url)
    })
  })

  it('is a warning naming the permission when GitHub refuses, and the deploy still succeeds', async () => {
    github = await startFakeGitHub({ refuse: 403 })
    const server = await start()
    const result = await run(server, staging)

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    const warnings = annotations(result.stdout, 'warning')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('GitHub answered 403 "Resource not accessible by integration"')
    expect(warnings[0]).toContain('`permissions: deployments: write`')
    expect(github.requests).toHaveLength(1)
    expect(server.deployments()[0].status).toBe('finished')
  })

  it('gets its statuses through GitHub’s 502s', async () => {
    github = await startFakeGitHub({
      faults: [
        { method: 'POST', path: /\/deployments$/, status: 502 },
        { method: 'POST', path: /\/statuses$/, status: 502, times: 2 }
      ]
    })
    const server = await start({ apps: [{ ...APP, scenarios: [build('failed')] }] })
    const result = await run(server, staging)

    expect(result.code).toBe(1)
    expect(annotations(result.stdout, 'warning')).toEqual([])
    expect(github.deployments()).toHaveLength(1)
    expect(github.deployments()[0].statuses.map(status => status.state)).toEqual([
      'in_progress',
      'failure'
    ])
  })

  it('is not made without `environment`', async () => {
    github = await startFakeGitHub()
    const server = await start()
    const result = await run(server, { 'github-token': GITHUB_TOKEN })

    expect(result.code).toBe(0)
    expect(github.requests).toEqual([])
  })
})

describe('settings before the deploy', () => {
  const SECRET = 's3cr3t-value-9876'
  const settings = {
    'git-branch': 'staging',
    domains: 'https://staging.example.com',
    env: `VERSION=1.2.3\nAPI_KEY=${SECRET}`
  }

  it.each(['4x', 'seed'] as const)(
    "sets the variables (bulk route, or the contract's field without it) and PATCHes the rest, then deploys: %s",
    async flavor => {
      const server = await start({ flavor, abilities: ['root'] })
      const result = await run(server, settings)

      expect(result.code).toBe(0)
      const bulkPath = `/api/v1/applications/${APP.uuid}/envs/bulk`
      const appPath = `/api/v1/applications/${APP.uuid}`
      const patches = server.requests.filter(request => request.method === 'PATCH')
      // Real 4.x has the variables routes; the seed contract has neither the list the step reads
      // first (for each variable's own flags) nor the bulk route, only the application's field.
      expect(patches.map(request => request.path)).toEqual(
        flavor === '4x' ? [bulkPath, appPath] : [appPath]
      )
      const bulk = patches.find(request => request.path === bulkPath)
      const app = patches.find(request => request.path === appPath)!
      const variables = [
        { key: 'VERSION', value: '1.2.3' },
        { key: 'API_KEY', value: SECRET }
      ]
      expect(bulk && { status: bulk.status, body: JSON.parse(bulk.body) }).toEqual(
        flavor === '4x' ? { status: 201, body: { data: variables } } : undefined
      )
      const fields = { git_branch: 'staging', domains: 'https://staging.example.com' }
      expect(JSON.parse(app.body)).toEqual(
        bulk ? fields : { ...fields, environment_variables: `VERSION=1.2.3\nAPI_KEY=${SECRET}` }
      )
      const order = coolifyRequests(server)
      expect(order.indexOf(`PATCH ${appPath}`)).toBeLessThan(order.indexOf('POST /api/v1/deploy'))
      expect(result.outputs.url).toBe('https://staging.example.com')
      expect(result.stdout).toContain('environment variables VERSION, API_KEY')
      expect(result.stdout.replaceAll(`::add-mask::${SECRET}`, '')).not.toContain(SECRET)
      expect(result.summary).not.toContain(SECRET)
      // Either way, the variables are set.
      expect(server.app(APP.uuid)!.envs.map(env => env.key)).toEqual(['VERSION', 'API_KEY'])
    }
  )

  it('sends only the fields given', async () => {
    const server = await start({ abilities: ['root'] })
    await run(server, { 'git-branch': 'release/2.0' })

    const patch = server.requests.find(request => request.method === 'PATCH')!
    expect(JSON.parse(patch.body)).toEqual({ git_branch: 'release/2.0' })
  })

  it('stops before deploying when Coolify rejects the settings', async () => {
    const server = await start({ abilities: ['root'] })
    server.inject({
      method: 'PATCH',
      do: {
        status: 422,
        body: {
          message: 'Validation failed.',
          errors: { domains: ['The domains field is invalid.'] }
        }
      }
    })
    const result = await run(server, { domains: 'not a domain' })

    expect(result.code).toBe(1)
    const [error] = annotations(result.stdout, 'error')
    expect(error).toContain('422 "Validation failed." (invalid: domains)')
    expect(error).toContain('`domains`')
    expect(coolifyRequests(server)).not.toContain('POST /api/v1/deploy')
    expect(server.deployments()).toEqual([])
    // Outputs are set whenever the step ends: nothing was deployed.
    expect(result.outputs).toMatchObject({ status: 'failed', deployments: '[]' })
  })

  it('names the ability a token without `write` lacks, before deploying', async () => {
    const server = await start()
    const result = await run(server, { 'git-branch': 'staging' })

    expect(result.code).toBe(1)
    expect(annotations(result.stdout, 'error')[0]).toContain('lacks the `write` ability')
    expect(server.deployments()).toEqual([])
  })
})
