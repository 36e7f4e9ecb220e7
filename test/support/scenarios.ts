/**
 * What the end-to-end suites share: a build whose log grows over time, the lines a reader must see,
 * and checks for what must never be printed.
 */
import { afterEach, expect } from '@jest/globals'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { SavedRollout } from '../../src/state.js'
import {
  startFakeCoolify,
  type FakeCoolify,
  type FakeOptions,
  type LogLine,
  type Scenario
} from '../fake-coolify/index.js'
import { PROJECT } from './runner.js'

export const TOKEN = 'e2e-secret-token-1234'
export const APP = { uuid: 'web0app0uuid0000000001', name: 'web', fqdn: 'https://web.example.com' }

/**
 * Starts a fake Coolify for one test and closes it after the test: `TOKEN`, quick rate limits and
 * `APP` running `build('finished')`, unless `defaults` or the call's options say otherwise.
 */
export function fakeCoolifyPerTest(
  defaults: () => FakeOptions = () => ({})
): (options?: FakeOptions) => Promise<FakeCoolify> {
  // Every server a test started, closed after it: a test may start more than one.
  let started: FakeCoolify[] = []
  afterEach(async () => {
    await Promise.all(started.map(server => server.close()))
    started = []
  })
  return async options => {
    const server = await startFakeCoolify({
      token: TOKEN,
      rateLimit: 6000,
      apps: [{ ...APP, scenarios: [build('finished')] }],
      ...defaults(),
      ...options
    })
    started.push(server)
    return server
  }
}

/** The inputs a run starts from: this server, the test token and app, quick polling. */
export function inputsFor(
  server: FakeCoolify,
  inputs: Record<string, string> = {}
): Record<string, string> {
  return {
    'coolify-url': server.url,
    token: TOKEN,
    'app-uuid': APP.uuid,
    'poll-interval': '100ms',
    timeout: '20s',
    ...inputs
  }
}

/**
 * A build whose log lines arrive over time, with a hidden command and a closing line written after
 * the final status. The fake numbers batches as Coolify does: a command's output shares its call's.
 */
export function build(outcome: 'finished' | 'failed', closingAt = 60): Scenario {
  const hidden: LogLine = {
    output: 'internal: docker inspect',
    command: 'docker inspect x',
    hidden: true
  }
  const lastLine: LogLine =
    outcome === 'failed'
      ? { output: 'npm ERR! build script failed', type: 'stderr' }
      : { output: 'Rolling update completed.' }
  const building = { command: 'docker build .' }
  return {
    commit: 'abc1234',
    steps: [
      { at: 0, status: 'queued' },
      { at: 40, status: 'in_progress', lines: ['Starting deployment of web.', hidden] },
      {
        at: 120,
        lines: [
          { output: 'npm ci', ...building },
          { output: 'added 312 packages', ...building }
        ]
      },
      {
        at: 260,
        lines: [
          { output: 'warning: deprecated', type: 'stderr' as const, ...building },
          { output: 'npm run build\nbuilt in 2s', ...building }
        ]
      },
      { at: 400, status: outcome, lines: [lastLine] },
      {
        at: 400 + closingAt,
        lines: [{ output: 'Gracefully shutting down build container' }]
      }
    ]
  }
}

/** Every visible line of `build('finished')`, once each and in order, as the job log shows them. */
export const FINISHED_LOG = [
  'Starting deployment of web.',
  '$ docker build .',
  'npm ci',
  'added 312 packages',
  'warning: deprecated',
  'npm run build',
  'built in 2s',
  'Rolling update completed.',
  'Gracefully shutting down build container'
]

/** The same log in the contract's plain text, which carries no commands. */
export const FINISHED_TEXT_LOG = FINISHED_LOG.filter(line => !line.startsWith('$ '))

/** A build that runs until it is cancelled, writing a line now and then. */
export function endless(): Scenario {
  return {
    steps: [
      { at: 0, status: 'queued' },
      { at: 40, status: 'in_progress', lines: ['Starting deployment of web.'] },
      { at: 120, lines: ['building...'] },
      ...Array.from({ length: 20 }, (_, i) => ({ at: 1000 * (i + 1), lines: [`step ${i + 1}`] }))
    ]
  }
}

/** A build that never ends and logs a line every 100 ms: the log grows for minutes. */
export function chatty(): Scenario {
  return {
    steps: [
      { at: 0, status: 'queued' },
      { at: 40, status: 'in_progress', lines: ['Starting deployment of web.'] },
      ...Array.from({ length: 3000 }, (_, i) => ({ at: 100 * (i + 1), lines: [`line ${i + 1}`] }))
    ]
  }
}

/** Node's options that collect garbage every few milliseconds through the whole run. */
export const COLLECT_GARBAGE = [
  '--expose-gc',
  '--import',
  pathToFileURL(join(PROJECT, 'test', 'support', 'collect-garbage.mjs')).href
]

/** The `::error` annotations a run printed. */
export function errorLines(stdout: string): string[] {
  return stdout.split('\n').filter(line => line.startsWith('::error'))
}

/** Secrets may appear only where the runner is told to mask them. */
export function expectNoSecrets(text: string, secrets: readonly string[]): void {
  const printed = text
    .split('\n')
    .filter(line => !line.startsWith('::add-mask::'))
    .join('\n')
  for (const secret of secrets) expect(printed).not.toContain(secret)
}

/** A stack trace has `    at ` frames; a clean failure has none. */
export function expectNoStackTrace(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m)
}

/** The requests the action sent, without those a test made itself. */
export function actionRequests(server: FakeCoolify): FakeCoolify['requests'] {
  return server.requests.filter(request => request.headers['user-agent'] === USER_AGENT)
}

const USER_AGENT = 'deploy-to-coolify-action'

/** `METHOD /path` of each request, for readable assertions. */
export function requestLines(requests: FakeCoolify['requests']): string[] {
  return requests.map(request => `${request.method} ${request.path}`)
}

/**
 * A deployment of `appUuid` started by someone else (a webhook, another run): POST /deploy as that
 * client would send it, not the action. Returns its uuid.
 */
export async function startElsewhere(server: FakeCoolify, appUuid = APP.uuid): Promise<string> {
  const response = await fetch(`${server.url}/api/v1/deploy?uuid=${appUuid}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' }
  })
  const answer = (await response.json()) as { deployments: Array<{ deployment_uuid: string }> }
  return answer.deployments[0].deployment_uuid
}

/** The state key under which the main step saves a record per rollout for the post step. */
const STATE_KEY = 'rollouts'

/** The records the main step saved, by resource uuid; none when it saved nothing. */
export function savedRollouts(state: Record<string, string>): Record<string, SavedRollout> {
  const text = state[STATE_KEY]
  return text ? (JSON.parse(text) as Record<string, SavedRollout>) : {}
}

/**
 * State as a main step would have saved these records, for a post step to start from: with the
 * `post` the main step saves first, which tells the one bundle it runs as the post step.
 */
export function savedState(rollouts: Record<string, SavedRollout>): Record<string, string> {
  return { post: 'true', [STATE_KEY]: JSON.stringify(rollouts) }
}
