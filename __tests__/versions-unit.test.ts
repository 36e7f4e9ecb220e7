import { describe, expect, it } from '@jest/globals'
import { CoolifyClient } from '../src/coolify/client.js'
import { healthUrlOf } from '../src/health/health.js'
import { isUp } from '../src/health/readiness.js'
import { builtCommit, pinVersions, ranImageTag, standingPin } from '../src/rollout/versions.js'
import { RunState } from '../src/state.js'
import { actionHost } from '../src/action/host.js'
import { setHost } from '../src/host.js'
import { startFakeCoolify } from '../test/fake-coolify/index.js'
import { ActionError } from '../src/errors.js'
import { readConfig } from '../src/config/inputs.js'

const BASE = { 'coolify-url': 'https://coolify.example.com', token: 'tok-123456', 'app-uuid': 'a1' }

function config(inputs: Record<string, string>) {
  return readConfig(
    name => ({ ...BASE, ...inputs })[name] ?? '',
    () => undefined
  )
}

function failure(inputs: Record<string, string>): string {
  try {
    config(inputs)
  } catch (error) {
    expect(error).toBeInstanceOf(ActionError)
    return (error as Error).message
  }
  throw new Error('no failure')
}

/** A 4.x log: a JSON array of entries in a string. */
function logOf(...lines: string[]): string {
  return JSON.stringify(lines.map((output, order) => ({ output, type: 'stdout', order, batch: 1 })))
}

describe('version inputs', () => {
  it('reads them with their defaults', () => {
    expect(config({})).toMatchObject({ healthTimeoutMs: 120_000, rollbackOnFailure: false })
    expect(config({ commit: 'ABCDEF1', 'health-url': '/up' })).toMatchObject({
      commit: 'abcdef1',
      healthUrl: '/up'
    })
    expect(config({ 'image-tag': 'v1.2.3-rc_1' }).imageTag).toBe('v1.2.3-rc_1')
  })

  it('refuses values and combinations that cannot work, naming the input', () => {
    expect(failure({ commit: 'abc12' })).toContain('Input `commit`')
    expect(failure({ commit: 'g'.repeat(40) })).toContain('Input `commit`')
    expect(failure({ 'image-tag': '-bad' })).toContain('Input `image-tag`')
    expect(failure({ 'image-tag': 'a:b' })).toContain('Input `image-tag`')
    expect(failure({ 'health-url': 'health' })).toContain('Input `health-url`')
    expect(failure({ 'health-url': '//evil.example.com' })).toContain('Input `health-url`')
    expect(failure({ 'health-timeout': 'soon' })).toContain('Input `health-timeout`')
    expect(failure({ 'rollback-on-failure': 'yes' })).toContain('`rollback-on-failure`')
    expect(failure({ 'image-tag': '1', commit: 'abcdef1' })).toContain('not both')
    expect(failure({ 'app-uuid': '', tag: 'prod', commit: 'abcdef1' })).toContain('`app-uuid`')
    expect(failure({ pr: '3', commit: 'abcdef1' })).toContain('Input `commit`')
    expect(failure({ pr: '3', 'rollback-on-failure': 'true' })).toContain('`rollback-on-failure`')
  })
})

describe('health', () => {
  it('puts a path on the application URL, and not on production for a preview', () => {
    expect(healthUrlOf('/up', 'https://web.example.com/', false)).toBe('https://web.example.com/up')
    expect(healthUrlOf('/up', 'https://web.example.com', true)).toBeUndefined()
    expect(healthUrlOf('https://x.example.com/up', undefined, true)).toBe(
      'https://x.example.com/up'
    )
    expect(healthUrlOf(undefined, 'https://web.example.com', false)).toBeUndefined()
  })

  it('counts running states only, and not a failing health check', () => {
    expect(isUp('running:healthy')).toBe(true)
    expect(isUp('running:unknown')).toBe(true)
    for (const status of [
      'running:unhealthy',
      'running:starting',
      'exited:unhealthy',
      'restarting:unhealthy',
      'degraded:unhealthy',
      ''
    ]) {
      expect(isUp(status)).toBe(false)
    }
  })
})

describe('what a deployment log says it ran', () => {
  it('reads the image tag of the Starting line', () => {
    const detail = { logs: logOf('Starting deployment of ghcr.io/acme/web:2.0 to localhost.') }
    expect(ranImageTag(detail)).toBe('2.0')
    expect(ranImageTag({ logs: logOf('Starting deployment of nginx to srv.') })).toBe('latest')
    expect(
      ranImageTag({ logs: logOf(`Starting deployment of acme/web@sha256:${'a'.repeat(64)} to x.`) })
    ).toBe(`sha256-${'a'.repeat(64)}`)
    expect(ranImageTag({ logs: null, docker_registry_image_tag: 'pr-7' })).toBe('pr-7')
    expect(ranImageTag({ logs: logOf('other') })).toBeUndefined()
  })

  it('reads the commit of the Importing line', () => {
    const line =
      'Importing git@git.example.com:acme/web.git:main (commit sha abc1234) to /artifacts/x.'
    expect(builtCommit({ logs: logOf('Starting deployment of web.', line) })).toBe('abc1234')
    expect(builtCommit({ logs: 'plain text log' })).toBeUndefined()
  })
})

describe('a pin found before this run pins its own', () => {
  const TOKEN = 'versions-unit-token'
  const THEIRS = 'cccc3333cccc3333cccc3333cccc3333cccc3333'
  const APP_UUID = 'web0app0uuid000000000001'
  const OTHER_UUID = 'api0app0uuid000000000001'

  /**
   * Another run pinned THEIRS and holds it for `heldMs` (its trigger met a full queue, which
   * Coolify asks to try again in 60 s), then puts HEAD back. The watch runs on a clock of its own,
   * moved on by each of its waits.
   */
  async function watched(
    heldMs: number,
    queue: 'full' | 'empty' = 'full'
  ): Promise<{ previous: string; notes: string[] }> {
    const fake = await startFakeCoolify({
      token: TOKEN,
      abilities: ['read', 'write'],
      apps: [
        { uuid: APP_UUID, name: 'web', gitCommitSha: THEIRS },
        // A deployment that stays queued: the queue has some waiting.
        { uuid: OTHER_UUID, name: 'api', scenarios: [{ steps: [{ at: 0, status: 'queued' }] }] }
      ]
    })
    if (queue === 'full') fake.push(OTHER_UUID)
    const client = new CoolifyClient({ apiUrl: `${fake.url}/api/v1`, token: TOKEN })
    let now = 0
    const clock = {
      now: () => now,
      sleep: async (ms: number) => {
        now += ms
        if (now >= heldMs && fake.app(APP_UUID)?.gitCommitSha === THEIRS) {
          await fetch(`${fake.url}/api/v1/applications/${APP_UUID}`, {
            method: 'PATCH',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify({ git_commit_sha: 'HEAD' })
          })
        }
      }
    }
    const notes: string[] = []
    const say = { note: (m: string) => notes.push(m), warn: () => {}, debug: () => {} }
    const version = { appUuid: APP_UUID, name: 'web', dockerImage: false, pinned: THEIRS }
    try {
      const signal = new AbortController().signal
      return { previous: await standingPin(client, version, signal, say, clock), notes }
    } finally {
      await client.close()
      await fake.close()
    }
  }

  it("is another run's while a full queue holds it: HEAD is what to put back", async () => {
    const { previous, notes } = await watched(61_000)
    expect(previous).toBe('HEAD')
    expect(notes).toEqual([
      expect.stringMatching(/pinned to cccc3333.* already, maybe by another run/)
    ])
  })

  it("is the application's own when it stays longer than any run holds one", async () => {
    expect((await watched(10 * 60_000)).previous).toBe(THEIRS)
  })

  it("is the application's own after 10 s when no deployment waits in Coolify's queue", async () => {
    const { previous, notes } = await watched(11_000, 'empty')
    expect(previous).toBe(THEIRS)
    expect(notes).toEqual([expect.stringMatching(/waiting up to 10 s to see whether it stays/)])
  })
})

describe('a pin cut off by the run stopping', () => {
  const TOKEN = 'versions-unit-token'
  const APP_UUID = 'web0app0uuid000000000001'
  const OURS = 'dddd4444dddd4444dddd4444dddd4444dddd4444'

  it('is put back: Coolify may have set it though its answer never came', async () => {
    setHost(actionHost())
    const fake = await startFakeCoolify({
      token: TOKEN,
      abilities: ['read', 'write'],
      apps: [{ uuid: APP_UUID, name: 'web' }]
    })
    // Coolify saves the pin; the answer is lost, and the run is stopped (SIGINT) while it waits.
    fake.inject({ method: 'PATCH', path: `/applications/${APP_UUID}`, do: 'lost' })
    const client = new CoolifyClient({ apiUrl: `${fake.url}/api/v1`, token: TOKEN })
    const stop = new AbortController()
    const stopped = setInterval(() => {
      if (fake.app(APP_UUID)?.gitCommitSha === OURS) stop.abort(new Error('SIGINT'))
    }, 20)
    const warnings: string[] = []
    const say = { note: () => {}, warn: (m: string) => warnings.push(m), debug: () => {} }
    const version = { appUuid: APP_UUID, name: 'web', dockerImage: false, pinned: 'HEAD' }
    try {
      await expect(
        pinVersions(
          client,
          config({ 'app-uuid': APP_UUID, commit: OURS }),
          [version],
          RunState.empty(),
          stop.signal,
          () => new AbortController().signal,
          say
        )
      ).rejects.toThrow('SIGINT')
      expect(fake.app(APP_UUID)?.gitCommitSha ?? 'HEAD').toBe('HEAD')
      expect(warnings).toEqual([])
    } finally {
      clearInterval(stopped)
      await client.close()
      await fake.close()
    }
  })
})
