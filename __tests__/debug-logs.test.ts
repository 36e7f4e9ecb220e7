/**
 * Coolify's hidden log entries are its deployment job's own commands, one of which writes every
 * variable of the application, base64-encoded, into `.env`. They never leave the job log, and with
 * `debug-logs: true` they reach it with the payload redacted and the values masked. Run through
 * the bundle, with a failed pull request deployment, so that its log goes to the summary, the
 * annotations and the sticky comment.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { startFakeGitHub, type FakeGitHub } from '../test/fake-github/index.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import { APP, fakeCoolifyPerTest, inputsFor } from '../test/support/scenarios.js'

const PR = 7
const SECRET = 'sk_live_0123456789abcdef'
const PAYLOAD = Buffer.from(`DATABASE_URL=postgres://app@db/app\nSTRIPE_KEY=${SECRET}\n`).toString(
  'base64'
)

/** The `.env` write with each `'` of the command as `'\\''`, as `bash -c '…'` needs. */
const ESCAPED_WRITE = `echo '\\''${PAYLOAD}'\\'' | base64 -d | tee /artifacts/x/.env.quoted > /dev/null`

const failedWithSecrets: Scenario = {
  steps: [
    { at: 0, status: 'queued' },
    {
      at: 40,
      status: 'in_progress',
      lines: [
        'Starting deployment of web.',
        {
          command: `echo '${PAYLOAD}' | base64 -d | tee /artifacts/x/.env > /dev/null`,
          output: '',
          hidden: true
        },
        { command: 'cat /artifacts/x/.env', output: `STRIPE_KEY=${SECRET}`, hidden: true },
        // As Coolify 4.3 quotes it for the build container (docker.php, executeInDocker).
        { command: `docker exec b1 bash -c '${ESCAPED_WRITE}'`, output: '', hidden: true },
        // And one such command in a visible entry.
        { command: `bash -c 'echo ${PAYLOAD} | base64 -d > /app/.env.shown'`, output: '' }
      ]
    },
    {
      at: 200,
      status: 'failed',
      lines: [{ output: 'npm ERR! build script failed', type: 'stderr' }]
    }
  ]
}

const start = fakeCoolifyPerTest(() => ({
  abilities: ['deploy', 'read', 'read:sensitive'],
  apps: [
    {
      ...APP,
      previews: [PR],
      envs: [{ key: 'STRIPE_KEY', value: SECRET }],
      scenarios: [failedWithSecrets]
    }
  ]
}))
let github: FakeGitHub | undefined

afterEach(async () => {
  await github?.close()
  github = undefined
})

async function run(server: FakeCoolify, inputs: Record<string, string>): Promise<RunResult> {
  const event = join(tmpdir(), `debug-logs-event-${process.pid}.json`)
  writeFileSync(event, JSON.stringify({ number: PR, pull_request: { number: PR } }))
  return runAction({
    inputs: inputsFor(server, {
      pr: String(PR),
      'github-token': 'ghs_debug-token-1234',
      ...inputs
    }),
    env: {
      GITHUB_API_URL: github!.url,
      GITHUB_EVENT_PATH: event,
      GITHUB_EVENT_NAME: 'pull_request'
    }
  })
}

/** The job log as the runner shows it: every value the step masked is `***`. */
function asShown(stdout: string): string {
  const masked = stdout
    .split('\n')
    .filter(line => line.startsWith('::add-mask::'))
    .map(line => line.slice('::add-mask::'.length))
    .sort((a, b) => b.length - a.length)
  return masked.reduce(
    (text, value) => text.replaceAll(value, '***'),
    stdout
      .split('\n')
      .filter(line => !line.startsWith('::add-mask::'))
      .join('\n')
  )
}

describe("Coolify's hidden entries", () => {
  it('never reach the summary, the annotations or the comment, and stay out of the job log', async () => {
    github = await startFakeGitHub()
    const server = await start()
    const result = await run(server, {})

    expect(result.code).toBe(1)
    for (const text of [result.stdout, result.summary, github.comments(PR)[0].body]) {
      expect(text).toContain('npm ERR! build script failed')
      expect(text).not.toContain(PAYLOAD)
      expect(text).not.toContain('cat /artifacts/x/.env')
      expect(text).not.toContain(SECRET)
    }
    // A visible command that carried a payload is shown redacted in the job log, and only there.
    expect(result.stdout).toContain("bash -c 'echo <redacted> | base64 -d > /app/.env.shown'")
    for (const text of [result.summary, github.comments(PR)[0].body]) {
      expect(text).not.toContain('/app/.env.shown')
    }
  }, 30_000)

  it('with debug-logs, reach the job log only, redacted and masked, with a warning', async () => {
    github = await startFakeGitHub()
    const server = await start()
    const result = await run(server, { 'debug-logs': 'true' })

    expect(result.code).toBe(1)
    const shown = asShown(result.stdout)
    // The commands are there, for debugging, but not what they carry.
    expect(shown).toContain("echo '<redacted>' | base64 -d | tee /artifacts/x/.env")
    expect(shown).toContain('cat /artifacts/x/.env')
    expect(shown).toContain(
      "bash -c 'echo '\\''<redacted>'\\'' | base64 -d | tee /artifacts/x/.env.quoted > /dev/null'"
    )
    expect(shown).toContain('STRIPE_KEY=***')
    expect(shown).not.toContain(PAYLOAD)
    expect(shown).not.toContain(SECRET)
    expect(shown).toMatch(/^::warning::`debug-logs: true` prints Coolify's internal commands/m)
    // Nothing hidden anywhere else, even then.
    const comment = github.comments(PR)[0].body
    for (const text of [result.summary, comment]) {
      expect(text).toContain('npm ERR! build script failed')
      expect(text).not.toContain('/artifacts/x/.env')
      expect(text).not.toContain(SECRET)
    }
    const annotations = result.stdout.split('\n').filter(line => line.startsWith('::error'))
    expect(annotations.join('\n')).not.toContain('/artifacts/x/.env')
  }, 30_000)
})
