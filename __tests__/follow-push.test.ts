/**
 * `trigger: false`: Coolify deploys by itself on push, and the step waits for that deployment of
 * the commit, follows it and fails with it, starting nothing. Run through the bundle against the
 * fake Coolify, whose `push` queues a deployment as Coolify's webhook does.
 */
import { describe, expect, it } from '@jest/globals'
import type { FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  endless,
  errorLines,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  FINISHED_LOG,
  inputsFor
} from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest()

/** The commit the workflow runs for (GITHUB_SHA), and another one. */
const COMMIT = '0123456789abcdef0123456789abcdef01234567'
const OTHER = 'fedcba9876543210fedcba9876543210fedcba98'

function ofCommit(scenario: Scenario, commit: string): Scenario {
  return { ...scenario, commit }
}

async function run(server: FakeCoolify, inputs: Record<string, string> = {}): Promise<RunResult> {
  const result = await runAction({ inputs: inputsFor(server, { trigger: 'false', ...inputs }) })
  if (process.env.SHOW_RUN) console.log(result.stdout, result.stderr)
  return result
}

/** The job log's lines as a reader sees them: without the colours. */
function printed(stdout: string): string[] {
  // eslint-disable-next-line no-control-regex
  return stdout.split('\n').map(line => line.replace(/\u001b\[[0-9;]*m/g, '').trim())
}

function sent(server: FakeCoolify, method: string, pattern: RegExp): number {
  return actionRequests(server).filter(
    request => request.method === method && pattern.test(request.path)
  ).length
}

describe('trigger: false', () => {
  it("follows the commit's deployment once it appears, never another commit's", async () => {
    const server = await start({
      apps: [
        { ...APP, scenarios: [ofCommit(endless(), OTHER), ofCommit(build('finished'), COMMIT)] }
      ]
    })
    // Another commit's deployment runs; this commit's webhook comes a moment later.
    const other = server.push(APP.uuid)!
    const pushed = new Promise<void>(resolve =>
      setTimeout(() => {
        server.push(APP.uuid)
        resolve()
      }, 1500)
    )
    const [result] = await Promise.all([run(server), pushed])

    expect(result.code).toBe(0)
    expect(result.outputs.status).toBe('finished')
    const mine = server.deployments().find(deployment => deployment.commit === COMMIT)!
    expect(result.outputs['deployment-uuid']).toBe(mine.uuid)
    expect(JSON.parse(result.outputs.deployments)[0]).toMatchObject({
      deployment_uuid: mine.uuid,
      status: 'finished',
      commit: COMMIT
    })
    // Its whole log, once each, in order.
    const lines = printed(result.stdout)
    const seen = FINISHED_LOG.map(line => lines.indexOf(line))
    expect(seen.every(index => index >= 0)).toBe(true)
    expect([...seen].sort((a, b) => a - b)).toEqual(seen)
    // Nothing started, nothing changed, the other deployment untouched and never read.
    expect(sent(server, 'POST', /\/deploy$/)).toBe(0)
    expect(sent(server, 'PATCH', /./)).toBe(0)
    expect(sent(server, 'POST', /\/cancel$/)).toBe(0)
    expect(sent(server, 'GET', new RegExp(`/deployments/${other.uuid}$`))).toBe(0)
    expect(server.deployments().find(d => d.uuid === other.uuid)!.status).toBe('in_progress')
    expectNoStackTrace(result.stderr)
  }, 30_000)

  it('fails at once with the log of a deployment of the commit that already failed', async () => {
    const server = await start({
      apps: [{ ...APP, scenarios: [ofCommit(build('failed'), COMMIT)] }]
    })
    const failed = server.push(APP.uuid)!
    while (server.deployments()[0].status !== 'failed') {
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    const result = await run(server, { timeout: '60s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('failed')
    expect(result.outputs['deployment-uuid']).toBe(failed.uuid)
    expect(printed(result.stdout)).toContain('npm ERR! build script failed')
    expect(errorLines(result.stdout).join('\n')).toMatch(/web: deployment failed/)
    expect(sent(server, 'POST', /\/deploy$/)).toBe(0)
    // Found on the first look: no waiting for a timeout that is far away.
    expect(sent(server, 'GET', /\/deployments\/applications\//)).toBe(1)
  }, 30_000)

  it('fails at timeout naming the commit and what to check when none appears', async () => {
    const server = await start({
      apps: [{ ...APP, scenarios: [ofCommit(endless(), OTHER)] }]
    })
    const other = server.push(APP.uuid)!
    const result = await run(server, { timeout: '3s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('timeout')
    const errors = errorLines(result.stdout).join('\n')
    expect(errors).toMatch(/web: deployment timeout/)
    expect(errors).toMatch(/no deployment of commit 0123456 appeared/)
    expect(errors).toMatch(/auto-deploy/)
    expect(sent(server, 'POST', /\/deploy$/)).toBe(0)
    expect(sent(server, 'POST', /\/cancel$/)).toBe(0)
    expect(server.deployments().find(d => d.uuid === other.uuid)!.status).toBe('in_progress')
    // The history was read more than once, in the step's pace.
    expect(sent(server, 'GET', /\/deployments\/applications\//)).toBeGreaterThan(2)
    expectNoStackTrace(result.stderr)
  }, 30_000)

  it('leaves the deployment running at timeout, as it did not start it', async () => {
    const server = await start({
      apps: [{ ...APP, scenarios: [ofCommit(endless(), COMMIT)] }]
    })
    const mine = server.push(APP.uuid)!
    const result = await run(server, { timeout: '2s' })

    expect(result.code).toBe(1)
    expect(result.outputs.status).toBe('timeout')
    expect(sent(server, 'POST', /\/cancel$/)).toBe(0)
    expect(server.deployments().find(d => d.uuid === mine.uuid)!.status).toBe('in_progress')
    expect(result.stdout).toMatch(/was started elsewhere, so it is left running in Coolify/)
  }, 30_000)

  it('waits for each application’s own deployment of the commit', async () => {
    const API = { uuid: 'api0app0uuid0000000002', name: 'api', fqdn: 'https://api.example.com' }
    const server = await start({
      apps: [
        { ...APP, scenarios: [ofCommit(build('finished'), COMMIT)] },
        { ...API, scenarios: [ofCommit(build('finished'), COMMIT)] }
      ]
    })
    server.push(APP.uuid)
    const later = new Promise<void>(resolve =>
      setTimeout(() => {
        server.push(API.uuid)
        resolve()
      }, 1000)
    )
    const [result] = await Promise.all([
      run(server, { 'app-uuid': `${APP.uuid},${API.uuid}` }),
      later
    ])

    expect(result.code).toBe(0)
    const records = JSON.parse(result.outputs.deployments) as Array<Record<string, unknown>>
    expect(records.map(record => [record.name, record.status])).toEqual([
      ['web', 'finished'],
      ['api', 'finished']
    ])
    expect(new Set(records.map(record => record.deployment_uuid)).size).toBe(2)
    // Each one's lines carry its name, as for deployments the step starts.
    const lines = printed(result.stdout)
    expect(lines).toContain('web | Rolling update completed.')
    expect(lines).toContain('api | Rolling update completed.')
    expect(sent(server, 'POST', /\/deploy$/)).toBe(0)
  }, 30_000)

  it("finds the commit's deployment behind a page of newer previews in the history", async () => {
    const preview = (): Scenario => ({
      commit: OTHER,
      steps: [
        { at: 0, status: 'queued' },
        { at: 40, status: 'finished', lines: ['Preview done.'] }
      ]
    })
    const server = await start({
      apps: [
        {
          ...APP,
          scenarios: [ofCommit(build('finished'), COMMIT), ...Array.from({ length: 15 }, preview)]
        }
      ]
    })
    // The commit's deployment came first; fifteen pull requests' previews were queued after it.
    const mine = server.push(APP.uuid)!
    for (let pr = 1; pr <= 15; pr++) server.push(APP.uuid, { pr, commit: OTHER })
    const result = await run(server, { timeout: '10s' })

    expect(result.code).toBe(0)
    expect(result.outputs['deployment-uuid']).toBe(mine.uuid)
    expect(result.outputs.status).toBe('finished')
    // Found on the history's second page.
    const pages = actionRequests(server)
      .filter(request => request.path === `/api/v1/deployments/applications/${APP.uuid}`)
      .map(request => request.query.skip ?? '0')
    expect(pages).toContain('10')
    expect(sent(server, 'POST', /\/deploy$/)).toBe(0)
  })

  it('refuses inputs that would start or change something, before any request', async () => {
    const server = await start()
    for (const [input, value] of [
      ['force', 'true'],
      ['git-branch', 'main'],
      ['image-tag', 'v2'],
      ['rollback-on-failure', 'true']
    ]) {
      const result = await run(server, { [input]: value })
      expect(result.code).toBe(1)
      const errors = errorLines(result.stdout)
      expect(errors).toHaveLength(1)
      expect(errors[0]).toContain(`\`${input}\``)
      expect(errors[0]).toContain('`trigger: false`')
    }
    expect(actionRequests(server)).toEqual([])
  }, 30_000)
})
