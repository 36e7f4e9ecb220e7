/**
 * Text that reaches GitHub from outside the action (an application's name, build output), through
 * the bundle against the fake Coolify and a fake GitHub: it issues no workflow command, mentions
 * nobody, carries no masked value in any form the runner would hide, and an annotation keeps its
 * cause within the runner's limit.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GitHubApi } from '../src/action/github-api.js'
import { COMMENT_LENGTH, markerFor, PullRequestComment } from '../src/action/pr-comment.js'
import type { DeploymentView } from '../src/model/deployment.js'
import type { FakeCoolify, LogLine, Scenario } from '../test/fake-coolify/index.js'
import { startFakeGitHub, type FakeGitHub } from '../test/fake-github/index.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import { APP, fakeCoolifyPerTest, inputsFor } from '../test/support/scenarios.js'

const PR = 7

let github: FakeGitHub | undefined
afterEach(async () => {
  await github?.close()
  github = undefined
})

function failing(stderr: readonly string[]): Scenario {
  const lines: LogLine[] = stderr.map(output => ({ output, type: 'stderr' }))
  return {
    commit: 'abc1234',
    steps: [
      { at: 0, status: 'in_progress', lines: ['Starting deployment.'] },
      { at: 100, status: 'failed', lines }
    ]
  }
}

const start = fakeCoolifyPerTest(() => ({
  apps: [{ ...APP, previews: [PR], scenarios: [failing(['npm ERR! build failed'])] }]
}))

async function run(server: FakeCoolify, inputs: Record<string, string> = {}): Promise<RunResult> {
  const event = join(tmpdir(), `github-text-event-${process.pid}.json`)
  writeFileSync(event, JSON.stringify({ number: PR, pull_request: { number: PR } }))
  return runAction({
    inputs: inputsFor(server, { pr: String(PR), 'github-token': 'ghs_text-token-1234', ...inputs }),
    env: {
      GITHUB_API_URL: github!.url,
      GITHUB_EVENT_PATH: event,
      GITHUB_EVENT_NAME: 'pull_request'
    }
  })
}

/** The commands the runner registers (actions/runner `ActionCommandManager`, its extensions). */
const REGISTERED = new Set([
  'add-mask',
  'add-path',
  'set-env',
  'set-output',
  'save-state',
  'error',
  'warning',
  'notice',
  'debug',
  'group',
  'endgroup',
  'echo',
  'add-matcher',
  'remove-matcher',
  'stop-commands'
])

interface Command {
  name: string
  data: string
}

/**
 * The commands the runner takes from a step's output, as actions/runner reads each line:
 * `::name props::data` after leading blanks (`ActionCommand.TryParseV2`), else `##[name props]data`
 * anywhere in it (`TryParse`); after `stop-commands`, only its token, which starts them again.
 */
function runnerCommands(stdout: string): Command[] {
  const issued: Command[] = []
  let token: string | undefined
  for (const line of stdout.split(/\r\n|\r|\n/)) {
    const text = line.trimStart()
    const v2 = text.startsWith('::') ? /^::([^:]*?)::(.*)$/.exec(text) : null
    const name = v2?.[1].split(' ')[0]
    if (token !== undefined) {
      if (name === token) token = undefined
      continue
    }
    if (v2 && REGISTERED.has(name!)) {
      issued.push({ name: name!, data: v2[2] })
      if (name === 'stop-commands') token = v2[2]
      continue
    }
    const legacy = /##\[([^\]]*)\](.*)/.exec(line)
    const legacyName = legacy?.[1].split(' ')[0]
    if (legacy && REGISTERED.has(legacyName!)) issued.push({ name: legacyName!, data: legacy[2] })
  }
  return issued
}

describe("an application's name", () => {
  it.each([
    ['::stop-commands::x', '::stop-commands::x'],
    ['a line break and a forged annotation', 'web\n::error title=forged::forged\n##[add-mask]web']
  ])('issues no workflow command: %s', async (_, name) => {
    github = await startFakeGitHub()
    const server = await start({
      apps: [{ ...APP, name, previews: [PR], scenarios: [failing(['npm ERR! build failed'])] }]
    })
    const result = await run(server)

    expect(result.code).toBe(1)
    const commands = runnerCommands(result.stdout)
    // Every stop-commands is the action's own, with a token nobody can guess, and ends.
    for (const stop of commands.filter(command => command.name === 'stop-commands')) {
      expect(stop.data).toMatch(/^[0-9a-f]{24}$/)
    }
    expect(commands.filter(command => command.name === 'add-mask').map(c => c.data)).not.toContain(
      'web'
    )
    const errors = commands.filter(command => command.name === 'error').map(c => c.data)
    expect(errors).not.toContain('forged')
    // The failure's annotation is still read by the runner, and is the last command.
    expect(errors.some(data => /deployment failed — .*%0Anpm ERR! build failed$/.test(data))).toBe(
      true
    )
    expect(commands.at(-1)?.name).toBe('error')
  })

  it('mentions nobody and stays in its cell in the comment and the summary', async () => {
    github = await startFakeGitHub()
    const name = '@org/team\n\n# Approved by @admin'
    const server = await start({
      apps: [{ ...APP, name, previews: [PR], scenarios: [failing(['npm ERR! build failed'])] }]
    })
    const result = await run(server)

    expect(result.code).toBe(1)
    const comment = github.comments(PR)[0].body
    for (const text of [comment, result.summary]) {
      expect(text).toContain('@&#8203;org/team # Approved by @&#8203;admin')
      // An @ followed by a name is a mention, in the HTML as in markdown.
      expect(text).not.toMatch(/@[A-Za-z]/)
      expect(text).not.toContain('\n# Approved')
    }
  })
})

describe('a masked value', () => {
  const SECRET = 'p@ss/w0rd+Zq9'
  const KEY = '-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----'
  const ENV_FILE = Buffer.from(`API_KEY=${SECRET}\nDEBUG=1\n`).toString('base64')

  it('is absent from the comment, the summary and the annotations in every form the runner masks', async () => {
    github = await startFakeGitHub()
    const stderr = [
      `curl https://api.example.com/items?key=${encodeURIComponent(SECRET)}`,
      `env: ${ENV_FILE}`,
      'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC',
      // Across the 1,000th character, where a quoted line is cut.
      `${'x'.repeat(995)}${SECRET}${'y'.repeat(50)}`
    ]
    const server = await start({
      abilities: ['deploy', 'read', 'read:sensitive', 'write'],
      apps: [
        {
          ...APP,
          previews: [PR],
          envs: [{ key: 'SIGNING_KEY', value: KEY, isMultiline: true }],
          scenarios: [failing(stderr)]
        }
      ]
    })
    const result = await run(server, { env: `API_KEY=${SECRET}`, 'debug-logs': 'true' })

    expect(result.code).toBe(1)
    const annotations = runnerCommands(result.stdout)
      .filter(command => command.name === 'error')
      .map(command => decodeURIComponent(command.data))
      .join('\n')
    const comment = github.comments(PR)[0].body
    for (const text of [comment, result.summary, annotations]) {
      expect(text).toContain('curl https://api.example.com/items?key=***')
      expect(text).toContain('xxx***yy')
      expect(text).not.toContain(encodeURIComponent(SECRET))
      // `API_KEY=` before it: the value is encoded from its second byte.
      expect(text).not.toContain(Buffer.from(SECRET.slice(1)).toString('base64'))
      expect(text).not.toContain('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC')
      expect(text).not.toContain(SECRET.slice(0, 6))
    }
  })
})

describe('an error annotation', () => {
  it('keeps its last line, the cause, within the 4,096 characters the runner keeps', async () => {
    github = await startFakeGitHub()
    const long = (n: number): string => `${n} ${'z'.repeat(1200)}`
    const cause = 'Error: the cause, said last'
    const server = await start({
      apps: [
        {
          ...APP,
          previews: [PR],
          scenarios: [failing([long(1), long(2), long(3), long(4), `${cause} ${'w'.repeat(900)}`])]
        }
      ]
    })
    const result = await run(server)

    const [annotation] = runnerCommands(result.stdout).filter(command =>
      command.data.includes('deployment failed')
    )
    const message = annotation.data.replace(/%0A/g, '\n').replace(/%0D/g, '\r').replace(/%25/g, '%')
    expect(message.length).toBeLessThanOrEqual(4096)
    expect(message.split('\n').at(-1)).toBe(`${cause} ${'w'.repeat(900)}`)
    expect(message.split('\n')[0]).toMatch(/^web: deployment failed — /)
  })
})

describe('a key in the query of `health-url`', () => {
  it('reaches neither the log, the summary nor the GitHub deployment’s description', async () => {
    github = await startFakeGitHub()
    const KEY = 'hk_0123456789abcdef'
    const server = await start({
      apps: [
        {
          ...APP,
          fqdn: `{{self}}/_app/${APP.uuid}`,
          runtime: [{ at: 0, status: 'running:healthy', http: 503 }],
          scenarios: [
            {
              steps: [
                { at: 0, status: 'in_progress' },
                { at: 100, status: 'finished' }
              ]
            }
          ]
        }
      ]
    })
    const result = await runAction({
      inputs: inputsFor(server, {
        'health-url': `${server.url}/_app/${APP.uuid}/health?key=${KEY}`,
        'health-timeout': '1s',
        environment: 'staging',
        'github-token': 'ghs_text-token-1234'
      }),
      env: { GITHUB_API_URL: github.url }
    })

    expect(result.code).toBe(1)
    const descriptions = github
      .deployments()
      .flatMap(deployment => deployment.statuses.map(status => status.description ?? ''))
    expect(descriptions.join('\n')).toContain(`/_app/${APP.uuid}/health?… answered 503`)
    for (const text of [result.stdout, result.summary, descriptions.join('\n')]) {
      expect(text).not.toContain(KEY)
    }
  })
})

describe('the pull request comment under a long marker', () => {
  it('leaves the logs out whole rather than cutting inside their fence', async () => {
    github = await startFakeGitHub()
    // 2,400 resources: a marker of about 55,000 characters, leaving less room than the logs take.
    const resources = Array.from({ length: 2400 }, (_, n) => `app${String(n).padStart(19, '0')}`)
    const marker = markerFor('Preview', resources)
    const tail = Array.from({ length: 15 }, (_, n) => ({
      kind: 'stderr' as const,
      text: `${n} ${'e'.repeat(1000)}`
    }))
    const failed = { name: 'web', uuid: 'd1', status: 'failed', tail } as unknown as DeploymentView
    const api = new GitHubApi('ghs_text-token-1234', github.url)
    const facts = {
      pr: PR,
      instanceUrl: 'https://coolify.example.com',
      workflow: 'Preview',
      runUrl: 'https://github.com/octo/app/actions/runs/1'
    }
    const comment = new PullRequestComment(api, { owner: 'octo', repo: 'app' }, marker, facts)
    await comment.finish(
      { status: 'failed', deployments: [failed], fails: true, byCoolify: false, byInput: false },
      new AbortController().signal
    )

    const [{ body }] = github.comments(PR)
    expect(body.length).toBeLessThanOrEqual(COMMENT_LENGTH)
    expect(body.startsWith(marker)).toBe(true)
    expect(body).toContain('The logs are left out')
    // Every fence opened is closed.
    expect((body.match(/^````*/gm) ?? []).length % 2).toBe(0)
    expect(body).not.toContain('(cut: GitHub takes')
  })
})
