/**
 * Settings applied before a deploy, over real HTTP against the fake Coolify: variables through the
 * bulk route where the server has it, the seed contract's PATCH field where it answers its
 * catch-all 404, and the application's PATCH for the rest.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { captureStdout } from '../test/support/stdout.js'
import { CoolifyClient } from '../src/coolify/client.js'
import { CoolifyError } from '../src/coolify/errors.js'
import { applySettings } from '../src/rollout/configure.js'
import { readConfig } from '../src/config/inputs.js'
import { actionHost } from '../src/action/host.js'
import { sayThrough, setHost } from '../src/host.js'
import {
  startFakeCoolify,
  type FakeApp,
  type FakeCoolify,
  type Fault,
  type Flavor
} from '../test/fake-coolify/index.js'

const TOKEN = 'test-token'
const SECRET = 's3cr3t-value-9876'
const WEB = { uuid: 'webuuid0000000000000000a', name: 'web' }
const API = { uuid: 'apiuuid0000000000000000b', name: 'api' }

let fake: FakeCoolify | undefined
let client: CoolifyClient | undefined
const printed = captureStdout()
// Its lines go where the action prints them.
setHost(actionHost())

afterEach(async () => {
  await client?.close()
  await fake?.close()
  client = fake = undefined
})

/** Runs applySettings with these inputs against a fake holding WEB and API. */
async function apply(
  inputs: Record<string, string>,
  faults: Fault[] = [],
  flavor: Flavor = '4x',
  web: FakeApp = WEB
): Promise<void> {
  fake = await startFakeCoolify({ apps: [web, API], abilities: ['root'], flavor })
  for (const fault of faults) fake.inject(fault)
  const config = readConfig(
    name =>
      ({ 'coolify-url': fake!.url, token: TOKEN, 'app-uuid': WEB.uuid, ...inputs })[name] ?? '',
    () => undefined
  )
  client = new CoolifyClient({
    apiUrl: config.apiUrl,
    token: TOKEN,
    retry: { baseDelayMs: 10, maxDelayMs: 10 }
  })
  await applySettings(client, config, AbortSignal.timeout(10_000), sayThrough(actionHost()))
}

/** `METHOD /path` of each request, relative to /api/v1. */
function sent(): string[] {
  return fake!.requests.map(r => `${r.method} ${r.path.replace('/api/v1', '')}`)
}

function bodyOf(index: number): unknown {
  return JSON.parse(fake!.requests[index].body)
}

const bulkPath = (uuid: string): string => `/applications/${uuid}/envs/bulk`
const envsPath = (uuid: string): string => `/applications/${uuid}/envs`
const saved = (uuid: string): Fault => ({
  method: 'PATCH',
  path: bulkPath(uuid),
  do: { status: 201, body: [{ uuid: 'env1', key: 'VERSION' }] }
})

describe('applySettings', () => {
  it('sets variables through the bulk route and the rest through the PATCH', async () => {
    await apply(
      {
        'app-uuid': `${WEB.uuid} ${API.uuid}`,
        'git-branch': 'staging',
        env: `VERSION=1.2.3\nAPI_KEY=${SECRET}`
      },
      [saved(WEB.uuid), saved(API.uuid)]
    )
    expect(sent()).toEqual([
      `GET ${envsPath(WEB.uuid)}`,
      `PATCH ${bulkPath(WEB.uuid)}`,
      `PATCH /applications/${WEB.uuid}`,
      `GET ${envsPath(API.uuid)}`,
      `PATCH ${bulkPath(API.uuid)}`,
      `PATCH /applications/${API.uuid}`
    ])
    const data = [
      { key: 'VERSION', value: '1.2.3' },
      { key: 'API_KEY', value: SECRET }
    ]
    expect(bodyOf(1)).toEqual({ data })
    expect(bodyOf(2)).toEqual({ git_branch: 'staging' })
    expect(bodyOf(4)).toEqual({ data })
    const log = printed.join('')
    expect(log).toContain(
      `${WEB.uuid}: set git_branch to staging, environment variables VERSION, API_KEY`
    )
    expect(log).not.toContain(SECRET)
    expect(log).not.toContain('1.2.3')
  })

  it('sends no application PATCH when only variables are given', async () => {
    await apply({ env: 'VERSION=1.2.3' }, [saved(WEB.uuid)])
    expect(sent()).toEqual([`GET ${envsPath(WEB.uuid)}`, `PATCH ${bulkPath(WEB.uuid)}`])
  })

  it('sends no bulk request without variables', async () => {
    await apply({ domains: 'https://web.example.com' })
    expect(sent()).toEqual([`PATCH /applications/${WEB.uuid}`])
    expect(bodyOf(0)).toEqual({ domains: 'https://web.example.com' })
  })

  it('falls back to the PATCH field on the catch-all 404, and learns it once', async () => {
    // The seed contract's server: no bulk route, variables in the application's PATCH.
    await apply(
      {
        'app-uuid': `${WEB.uuid},${API.uuid}`,
        domains: 'https://staging.example.com',
        env: `VERSION=1.2.3\nAPI_KEY=${SECRET}`
      },
      [],
      'seed'
    )
    expect(sent()).toEqual([
      `GET ${envsPath(WEB.uuid)}`,
      `PATCH /applications/${WEB.uuid}`,
      `PATCH /applications/${API.uuid}`
    ])
    const fields = {
      domains: 'https://staging.example.com',
      environment_variables: `VERSION=1.2.3\nAPI_KEY=${SECRET}`
    }
    expect(bodyOf(1)).toEqual(fields)
    expect(bodyOf(2)).toEqual(fields)
    const app = await client!.getApplication(API.uuid, AbortSignal.timeout(10_000))
    expect(app.environment_variables?.map(v => [v.key, v.value])).toEqual([
      ['VERSION', '1.2.3'],
      ['API_KEY', SECRET]
    ])
    const log = printed.join('')
    expect(log.match(/no route for bulk variables/g)).toHaveLength(1)
    expect(log).toContain(
      `${API.uuid}: set domains to https://staging.example.com, environment variables VERSION, API_KEY`
    )
    expect(log).not.toContain(SECRET)
  })

  it.each<{ name: string; answer: Exclude<Fault['do'], string>; says: RegExp }>([
    {
      name: '404 "Application not found."',
      answer: { status: 404, body: { message: 'Application not found.' } },
      says: /404 "Application not found\."/
    },
    {
      name: 'a bare 404',
      answer: { status: 404, body: '' },
      says: /bare 404.*`coolify-url`/
    },
    {
      name: '403 "Missing required team role."',
      answer: { status: 403, body: { message: 'Missing required team role.' } },
      says: /admin or owner/
    }
  ])('does not fall back on $name: it fails before the PATCH', async ({ answer, says }) => {
    const error = await apply({ 'git-branch': 'staging', env: 'VERSION=1.2.3' }, [
      { method: 'PATCH', path: bulkPath(WEB.uuid), do: answer }
    ]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CoolifyError)
    expect((error as Error).message).toMatch(says)
    expect(sent()).toEqual([`GET ${envsPath(WEB.uuid)}`, `PATCH ${bulkPath(WEB.uuid)}`])
  })

  it('keeps the 422 hint for variables Coolify refuses', async () => {
    const refused: Fault = {
      method: 'PATCH',
      path: bulkPath(WEB.uuid),
      do: { status: 422, body: { message: 'Validation failed.', errors: { key: ['Bad key.'] } } }
    }
    const error = await apply({ env: 'VERSION=1.2.3' }, [refused]).catch((e: unknown) => e)
    expect((error as Error).message).toMatch(/422 "Validation failed\." \(invalid: key\)/)
    expect((error as Error).message).toMatch(/`env` inputs; nothing was deployed/)
  })

  it("with `pr`, writes the previews' variables and leaves production's as they were", async () => {
    const envs = [
      { key: 'API_URL', value: 'https://api.example.com' },
      { key: 'API_URL', value: 'https://api.example.com', isPreview: true }
    ]
    await apply({ pr: '7', env: 'API_URL=https://pr-7.api.example.com' }, [], '4x', {
      ...WEB,
      envs
    })
    const values = fake!.app(WEB.uuid)!.envs.map(env => [env.key, env.isPreview, env.value])
    expect(values).toEqual([
      ['API_URL', false, 'https://api.example.com'],
      ['API_URL', true, 'https://pr-7.api.example.com']
    ])
  })

  it('updates a locked variable without a 500, and a literal one stays literal', async () => {
    // Left out, Coolify nulls a true is_shown_once and is_multiline, which Postgres refuses, and
    // makes is_literal false.
    const envs = [
      { key: 'API_KEY', value: 'old-key', isShownOnce: true },
      { key: 'GREETING', value: 'hello $USER', isLiteral: true, isMultiline: true }
    ]
    await apply({ env: `API_KEY=${SECRET}\nGREETING=hi $USER` }, [], '4x', { ...WEB, envs })
    const flags = fake!
      .app(WEB.uuid)!
      .envs.map(env => [env.key, env.value, env.isShownOnce, env.isLiteral, env.isMultiline])
    expect(flags).toEqual([
      ['API_KEY', SECRET, true, false, false],
      ['GREETING', 'hi $USER', false, true, true]
    ])
  })
})
