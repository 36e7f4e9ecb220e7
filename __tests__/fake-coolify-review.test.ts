/**
 * The fake Coolify's routes for review apps, over real HTTP: cloning (4.3.0+), destinations, an
 * application's tags and variables, descriptions in reads, deleting an application, and a slow
 * answer for races.
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { CLONE_ALLOWED, DEFAULT_DESTINATION, startFakeCoolify } from '../test/fake-coolify/index.js'
import type { FakeApp, FakeCoolify, FakeOptions } from '../test/fake-coolify/index.js'

let fake: FakeCoolify | undefined

afterEach(async () => {
  await fake?.close()
  fake = undefined
})

async function start(options: FakeOptions): Promise<FakeCoolify> {
  fake = await startFakeCoolify(options)
  return fake
}

interface Answer {
  status: number
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = {
    Accept: 'application/json',
    Authorization: 'Bearer test-token'
  }
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(`${fake!.url}/api/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, json: text ? JSON.parse(text) : undefined }
}

const UUID = /^[a-z][a-z0-9]{23}$/

const TEMPLATE: FakeApp = {
  uuid: 'web',
  name: 'A web application name',
  fqdn: 'https://web.example.com',
  description: 'Production web',
  tags: ['production', 'frontend'],
  previews: [3],
  destinations: [
    { uuid: 'dst-main', name: 'main-net', network: 'main', serverUuid: 'srv-1', serverId: 1 },
    { uuid: 'dst-extra', name: 'extra-net', serverUuid: 'srv-2', serverId: 2 }
  ],
  envs: [
    { key: 'API_URL', value: 'https://api.example.com' },
    { key: 'SECRET', value: 'prod-only' },
    { key: 'API_URL', value: 'https://api.preview.example.com', isPreview: true },
    { key: 'ONCE', value: 'hidden', isShownOnce: true }
  ]
}

const ALL = ['read', 'read:sensitive', 'write', 'deploy']

describe('cloning an application, 4x', () => {
  it('copies settings, domain, description, tags, previews and variables into a new app', async () => {
    // Readonly labels off: the clone keeps the template's domain (see below for on).
    await start({ abilities: ALL, apps: [{ ...TEMPLATE, readonlyLabels: false }] })
    const res = await call('POST', '/applications/web/clone', {
      destination_uuid: 'dst-extra',
      name: 'web-pr-7'
    })
    expect(res.status).toBe(201)
    expect(res.json).toEqual({ uuid: expect.stringMatching(UUID), message: 'Application cloned.' })

    const template = fake!.app('web')!
    const clone = fake!.app(res.json.uuid)!
    expect(clone).toMatchObject({
      name: 'web-pr-7',
      description: 'Production web',
      fqdn: 'https://web.example.com',
      tags: ['production', 'frontend'],
      destination: 'dst-extra',
      gitRepository: template.gitRepository,
      gitBranch: 'main',
      buildPack: 'dockerfile',
      status: 'exited',
      previews: [{ pr: 3, fqdn: 'https://3.web.example.com', imageTag: null }]
    })
    expect(clone.id).toBeGreaterThan(template.id)
    // Copied row by row: same keys, values, kinds and uuids as the template's.
    expect(clone.envs).toEqual(template.envs)
    expect(fake!.deployments()).toEqual([])
    expect(fake!.apps().map(app => app.uuid)).toEqual(['web', res.json.uuid])

    const named = await call('POST', '/applications/web/clone', { destination_uuid: 'dst-main' })
    expect(fake!.app(named.json.uuid)!.name).toBe(
      `clone-of-A web application na...-${named.json.uuid}`
    )
  })

  // As clone_application: everything that could build, route or mount production comes along.
  it('copies auto-deploy, webhook secrets, the pin, labels, mounts, tasks and compose domains', async () => {
    const source: FakeApp = {
      ...TEMPLATE,
      gitCommitSha: 'abc1234',
      webhookSecrets: { manual_webhook_secret_github: 'whsec' },
      readonlyLabels: false,
      customLabels: 'traefik.http.routers.web.rule=Host(`web.example.com`)',
      storages: {
        persistent: [
          { name: 'web-data', mountPath: '/data' },
          { name: 'web-uploads', mountPath: '/uploads', hostPath: '/srv/uploads' }
        ],
        files: [{ fsPath: '/data/coolify/web/config.yml', mountPath: '/app/config.yml' }]
      },
      scheduledTasks: [{ name: 'nightly', command: 'php artisan prune' }]
    }
    await start({ abilities: ALL, apps: [source] })
    const uuid = (await call('POST', '/applications/web/clone', { destination_uuid: 'dst-main' }))
      .json.uuid
    const clone = fake!.app(uuid)!
    const template = fake!.app('web')!
    expect(clone).toMatchObject({
      gitCommitSha: 'abc1234',
      autoDeploy: true,
      webhookSecrets: ['manual_webhook_secret_github'],
      fqdn: 'https://web.example.com',
      customLabels: source.customLabels,
      scheduledTasks: [{ name: 'nightly', uuid: expect.stringMatching(UUID) }]
    })
    expect(clone.scheduledTasks[0].uuid).not.toBe(template.scheduledTasks[0].uuid)
    expect(clone.persistentStorages.map(v => [v.name, v.hostPath])).toEqual([
      [`${uuid}-data`, null],
      [`${uuid}-uploads`, '/srv/uploads']
    ])
    expect(clone.fileStorages.map(f => f.fsPath)).toEqual(['/data/coolify/web/config.yml'])

    const storages = (await call('GET', `/applications/${uuid}/storages`)).json
    expect(storages.persistent_storages[1]).toMatchObject({
      name: `${uuid}-uploads`,
      mount_path: '/uploads',
      host_path: '/srv/uploads'
    })
    expect(storages.file_storages[0]).toMatchObject({
      fs_path: '/data/coolify/web/config.yml',
      mount_path: '/app/config.yml'
    })
    const tasks = (await call('GET', `/applications/${uuid}/scheduled-tasks`)).json
    expect(tasks).toEqual([
      expect.objectContaining({ name: 'nightly', command: 'php artisan prune' })
    ])
    const deleted = await call('DELETE', `/applications/${uuid}/scheduled-tasks/${tasks[0].uuid}`)
    expect(deleted.json).toEqual({ message: 'Scheduled task deleted.' })
    expect(fake!.app(uuid)!.scheduledTasks).toEqual([])
    expect(fake!.app('web')!.scheduledTasks).toHaveLength(1)
    const again = await call('DELETE', `/applications/${uuid}/scheduled-tasks/${tasks[0].uuid}`)
    expect([again.status, again.json]).toEqual([404, { message: 'Scheduled task not found.' }])

    const detail = (await call('GET', `/applications/${uuid}`)).json
    expect(detail).toMatchObject({
      manual_webhook_secret_github: 'whsec',
      settings: { is_auto_deploy_enabled: true, is_container_label_readonly_enabled: false }
    })
    expect(Buffer.from(detail.custom_labels, 'base64').toString()).toBe(source.customLabels)
  })

  it('with readonly labels on a proxied server, gives the clone a generated domain and labels', async () => {
    await start({ abilities: ALL, apps: [TEMPLATE, { ...TEMPLATE, uuid: 'bare', proxy: 'NONE' }] })
    const proxied = (
      await call('POST', '/applications/web/clone', { destination_uuid: 'dst-main' })
    ).json.uuid
    const clone = fake!.app(proxied)!
    expect(clone.fqdn).toBe(`http://${proxied}.127.0.0.1.sslip.io`)
    expect(clone.customLabels).toContain(`Host(\`${proxied}.127.0.0.1.sslip.io\`)`)
    expect(clone.customLabels).not.toContain('web.example.com')

    const bare = (await call('POST', '/applications/bare/clone', { destination_uuid: 'dst-main' }))
      .json.uuid
    expect(fake!.app(bare)!.fqdn).toBe('https://web.example.com')
  })

  it('checks the body before the app, then the app, then the destination', async () => {
    await start({ abilities: ALL, apps: [TEMPLATE] })
    expect(CLONE_ALLOWED).toEqual(['destination_uuid', 'name', 'clone_volumes'])
    const invalid = await call('POST', '/applications/nope/clone', {
      name: 5,
      clone_volumes: 'yes',
      domains: 'x'
    })
    expect(invalid.status).toBe(422)
    expect(invalid.json).toEqual({
      message: 'Validation failed.',
      errors: {
        destination_uuid: ['This field is required.'],
        name: ['The name field must be a string.'],
        clone_volumes: ['The clone volumes field must be true or false.'],
        domains: ['This field is not allowed.']
      }
    })
    expect((await call('POST', '/applications/web/clone', {})).json).toEqual({
      message: 'Invalid request.',
      error: 'Empty JSON.'
    })
    const app = await call('POST', '/applications/nope/clone', { destination_uuid: 'dst-main' })
    expect(app.status).toBe(404)
    expect(app.json).toEqual({ message: 'Application not found.' })
    const destination = await call('POST', '/applications/web/clone', { destination_uuid: 'x' })
    expect(destination.status).toBe(404)
    expect(destination.json).toEqual({ message: 'Destination not found.' })
    expect(fake!.apps()).toHaveLength(1)
  })

  it('hides labels and webhook secrets without read:sensitive', async () => {
    await start({
      abilities: ['read'],
      apps: [{ ...TEMPLATE, webhookSecrets: { manual_webhook_secret_gitea: 's' } }]
    })
    const detail = (await call('GET', '/applications/web')).json
    expect(detail).not.toHaveProperty('custom_labels')
    expect(detail).not.toHaveProperty('manual_webhook_secret_gitea')
    expect(detail.settings).toMatchObject({
      is_auto_deploy_enabled: true,
      is_container_label_readonly_enabled: true
    })
  })

  it('needs `write`, and is missing before 4.3', async () => {
    await start({ abilities: ['read', 'deploy'], apps: [TEMPLATE] })
    const denied = await call('POST', '/applications/web/clone', { destination_uuid: 'dst-main' })
    expect(denied.status).toBe(403)
    expect(denied.json).toEqual({ message: 'Missing required permissions: write' })
    await fake!.close()

    await start({ version: '4.2', abilities: ALL, apps: [TEMPLATE] })
    for (const [method, path] of [
      ['POST', '/applications/web/clone'],
      ['GET', '/applications/web/destinations'],
      ['GET', '/applications/web/storages'],
      ['GET', '/applications/web/scheduled-tasks']
    ]) {
      const res = await call(
        method,
        path,
        method === 'POST' ? { destination_uuid: 'x' } : undefined
      )
      expect(res.status).toBe(404)
      expect(res.json).toEqual({ message: 'Not found.', docs: 'https://coolify.io/docs' })
    }
    expect(fake!.apps()).toHaveLength(1)
  })
})

describe('destinations, 4x', () => {
  it('lists the primary destination first, by default the fake’s one', async () => {
    await start({ abilities: ['read'], apps: [TEMPLATE, { uuid: 'api', name: 'API' }] })
    expect((await call('GET', '/applications/web/destinations')).json).toEqual([
      {
        uuid: 'dst-main',
        name: 'main-net',
        network: 'main',
        server_uuid: 'srv-1',
        server_id: 1,
        is_primary: true
      },
      {
        uuid: 'dst-extra',
        name: 'extra-net',
        network: 'dst-extra',
        server_uuid: 'srv-2',
        server_id: 2,
        is_primary: false
      }
    ])
    expect((await call('GET', '/applications/api/destinations')).json).toEqual([
      {
        uuid: DEFAULT_DESTINATION.uuid,
        name: DEFAULT_DESTINATION.name,
        network: DEFAULT_DESTINATION.network,
        server_uuid: DEFAULT_DESTINATION.serverUuid,
        server_id: DEFAULT_DESTINATION.serverId,
        is_primary: true
      }
    ])
    const missing = await call('GET', '/applications/nope/destinations')
    expect(missing.status).toBe(404)
    expect(missing.json).toEqual({ message: 'Application not found.' })
  })
})

describe("an application's tags, 4x", () => {
  it('lists and removes them from one app only, so a tag deploy no longer reaches it', async () => {
    await start({ abilities: ALL, apps: [TEMPLATE] })
    const clone = (await call('POST', '/applications/web/clone', { destination_uuid: 'dst-main' }))
      .json.uuid
    const tags = (await call('GET', `/applications/${clone}/tags`)).json
    expect(tags).toEqual([
      expect.objectContaining({ uuid: expect.stringMatching(UUID), name: 'production' }),
      expect.objectContaining({ uuid: expect.stringMatching(UUID), name: 'frontend' })
    ])
    expect(tags[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    // One tag for the team: the template shows the same uuid.
    expect((await call('GET', '/applications/web/tags')).json).toEqual(tags)

    const removed = await call('DELETE', `/applications/${clone}/tags/${tags[0].uuid}`)
    expect(removed.status).toBe(200)
    expect(removed.json).toEqual({ message: 'Tag removed.' })
    expect(fake!.app(clone)!.tags).toEqual(['frontend'])
    expect(fake!.app('web')!.tags).toEqual(['production', 'frontend'])

    const deployed = await call('POST', '/deploy?tag=production')
    expect(deployed.json.details.map((d: { resource_uuid: string }) => d.resource_uuid)).toEqual([
      'web'
    ])

    const again = await call('DELETE', `/applications/${clone}/tags/${tags[0].uuid}`)
    expect(again.status).toBe(404)
    expect(again.json).toEqual({ message: 'Tag not found on resource.' })
    const unknown = await call('DELETE', `/applications/${clone}/tags/nope`)
    expect(unknown.json).toEqual({ message: 'Tag not found.' })
    expect((await call('GET', '/applications/nope/tags')).json).toEqual({
      message: 'Application not found.'
    })
  })

  it('are there on 4.2 too, and removing one needs `write`', async () => {
    await start({ version: '4.2', abilities: ['read'], apps: [TEMPLATE] })
    const tags = await call('GET', '/applications/web/tags')
    expect(tags.status).toBe(200)
    const denied = await call('DELETE', `/applications/web/tags/${tags.json[0].uuid}`)
    expect(denied.status).toBe(403)
    expect(denied.json).toEqual({ message: 'Missing required permissions: write' })
  })
})

describe("an application's variables, 4x", () => {
  it('lists production variables then preview ones, values only with read:sensitive', async () => {
    await start({
      abilities: ALL,
      apps: [
        {
          ...TEMPLATE,
          envs: [{ key: 'PREVIEW_FIRST', value: 'p', isPreview: true }, ...(TEMPLATE.envs ?? [])]
        }
      ]
    })
    const listed = (await call('GET', '/applications/web/envs')).json
    expect(listed.map((e: { key: string; is_preview: boolean }) => [e.key, e.is_preview])).toEqual([
      ['API_URL', false],
      ['SECRET', false],
      ['ONCE', false],
      ['PREVIEW_FIRST', true],
      ['API_URL', true]
    ])
    expect(listed[0]).toMatchObject({
      uuid: fake!.app('web')!.envs[1].uuid,
      value: 'https://api.example.com',
      real_value: 'https://api.example.com'
    })
    expect(listed[2]).not.toHaveProperty('value')
    expect((await call('GET', '/applications/nope/envs')).json).toEqual({
      message: 'Application not found'
    })
    await fake!.close()

    await start({ abilities: ['read'], apps: [TEMPLATE] })
    const hidden = (await call('GET', '/applications/web/envs')).json
    expect(hidden).toHaveLength(4)
    for (const env of hidden) {
      expect(env).not.toHaveProperty('value')
      expect(env).not.toHaveProperty('real_value')
    }
  })

  it("deletes one of this app's variables, leaving the template's of the same uuid", async () => {
    await start({ abilities: ALL, apps: [TEMPLATE] })
    const clone = (await call('POST', '/applications/web/clone', { destination_uuid: 'dst-main' }))
      .json.uuid
    const secret = fake!.app(clone)!.envs.find(e => e.key === 'SECRET')!
    const res = await call('DELETE', `/applications/${clone}/envs/${secret.uuid}`)
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ message: 'Environment variable deleted.' })
    expect(fake!.app(clone)!.envs.map(e => e.key)).toEqual(['API_URL', 'API_URL', 'ONCE'])
    expect(fake!.app('web')!.envs.map(e => e.key)).toEqual(['API_URL', 'SECRET', 'API_URL', 'ONCE'])

    const again = await call('DELETE', `/applications/${clone}/envs/${secret.uuid}`)
    expect(again.status).toBe(404)
    expect(again.json).toEqual({ message: 'Environment variable not found.' })
    expect((await call('DELETE', `/applications/nope/envs/${secret.uuid}`)).json).toEqual({
      message: 'Application not found.'
    })
  })

  it('keeps one model: bulk writes show up in the list', async () => {
    await start({ abilities: ALL, apps: [{ uuid: 'web', name: 'Web' }] })
    await call('PATCH', '/applications/web/envs/bulk', { data: [{ key: 'A', value: '1' }] })
    const listed = (await call('GET', '/applications/web/envs')).json
    expect(listed).toEqual([expect.objectContaining({ key: 'A', value: '1', is_preview: false })])
    expect(listed[0].uuid).toBe(fake!.app('web')!.envs[0].uuid)
  })
})

describe('descriptions, reads and deleting an application, 4x', () => {
  it('shows description and whole-second dates in reads, and no id', async () => {
    await start({ abilities: ALL, apps: [TEMPLATE, { uuid: 'api', name: 'API' }] })
    const list = (await call('GET', '/applications')).json
    expect(list[0]).toMatchObject({ uuid: 'web', description: 'Production web' })
    expect(list[1]).toMatchObject({ uuid: 'api', description: null })
    expect(list[0]).not.toHaveProperty('id')
    expect(list[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000000Z$/)
    const detail = (await call('GET', '/applications/web')).json
    expect(detail).toMatchObject({ description: 'Production web' })
    expect(detail).not.toHaveProperty('id')

    const patched = await call('PATCH', '/applications/web', {
      description: 'Review app',
      domains: 'https://pr-7.example.com',
      git_branch: 'feature/x'
    })
    expect(patched.json).toEqual({ uuid: 'web' })
    expect(fake!.app('web')).toMatchObject({
      description: 'Review app',
      fqdn: 'https://pr-7.example.com',
      gitBranch: 'feature/x'
    })
    await call('PATCH', '/applications/web', { description: null })
    expect(fake!.app('web')!.description).toBeNull()
    await fake!.close()

    await start({ flavor: 'seed', apps: [TEMPLATE] })
    expect((await call('GET', '/applications')).json[0]).toHaveProperty('id', 1)
  })

  it('deletes an application with its query switches; it is gone from every read', async () => {
    await start({ abilities: ALL, apps: [TEMPLATE, { uuid: 'api', name: 'API' }] })
    const query = 'delete_configurations=false&delete_volumes=true&docker_cleanup=1'
    const res = await call('DELETE', `/applications/api?${query}`)
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ message: 'Application deletion request queued.' })
    expect((await call('GET', '/applications/api')).status).toBe(404)
    expect((await call('GET', '/applications')).json.map((a: { uuid: string }) => a.uuid)).toEqual([
      'web'
    ])
    expect(fake!.app('api')).toBeUndefined()
    const again = await call('DELETE', '/applications/api')
    expect(again.status).toBe(404)
    expect(again.json).toEqual({ message: 'Application not found' })
  })

  it('starts apps made through the API exited until their first deployment finished', async () => {
    await start({ abilities: ALL, apps: [TEMPLATE] })
    const created = await call('POST', '/applications/private-deploy-key', {
      project_uuid: 'p',
      server_uuid: 's',
      environment_name: 'production',
      private_key_uuid: 'k',
      git_repository: 'git@git.example.com:acme/web.git',
      git_branch: 'feature/x',
      build_pack: 'dockerfile',
      ports_exposes: '3000',
      name: 'web-pr-7',
      description: 'Review app',
      domains: 'https://pr-7.example.com'
    })
    expect(created.status).toBe(201)
    expect(fake!.app(created.json.uuid)).toMatchObject({
      name: 'web-pr-7',
      description: 'Review app',
      fqdn: 'https://pr-7.example.com',
      gitBranch: 'feature/x',
      tags: [],
      envs: [],
      status: 'exited'
    })
    // The fake's own apps run from the start.
    expect(fake!.app('web')!.status).toBe('running:healthy')
    expect(fake!.deployments()).toEqual([])
  })

  it("takes 4.3's other create fields; instant_deploy deploys at once", async () => {
    await start({ abilities: ALL, apps: [] })
    const body = {
      project_uuid: 'p',
      server_uuid: 's',
      environment_name: 'production',
      private_key_uuid: 'k',
      git_repository: 'git@git.example.com:acme/web.git',
      git_branch: 'main',
      build_pack: 'dockerfile',
      ports_exposes: '3000'
    }
    const created = await call('POST', '/applications/private-deploy-key', {
      ...body,
      is_auto_deploy_enabled: false,
      instant_deploy: true
    })
    expect(created.status).toBe(201)
    expect(fake!.deployments().map(d => d.appUuid)).toEqual([created.json.uuid])
    const unknown = await call('POST', '/applications/private-deploy-key', { ...body, color: 'x' })
    expect(unknown.json.errors).toEqual({ color: ['This field is not allowed.'] })
  })
})

describe('the whole row, 4x (4.3.11)', () => {
  it('shows every column and the settings row; a clone copies them; PATCH puts them back', async () => {
    const carried = {
      custom_docker_run_options: '--privileged',
      ports_mappings: '8080:3000',
      'settings.custom_internal_name': 'web-production',
      'settings.is_preview_deployments_enabled': true,
      future_column: 'x'
    }
    await start({ abilities: ALL, apps: [{ ...TEMPLATE, columns: carried }] })
    const uuid = (await call('POST', '/applications/web/clone', { destination_uuid: 'dst-main' }))
      .json.uuid
    const detail = (await call('GET', `/applications/${uuid}`)).json
    expect(detail).toMatchObject({
      custom_docker_run_options: '--privileged',
      ports_mappings: '8080:3000',
      health_check_path: '/',
      future_column: 'x',
      server_status: false,
      settings: { custom_internal_name: 'web-production', is_preview_deployments_enabled: true }
    })
    expect(detail).not.toHaveProperty('id')
    expect(detail.settings).not.toHaveProperty('application_id')

    const patched = await call('PATCH', `/applications/${uuid}`, {
      custom_docker_run_options: null,
      ports_mappings: null,
      custom_internal_name: null,
      is_preview_deployments_enabled: false
    })
    expect(patched.status).toBe(200)
    const after = (await call('GET', `/applications/${uuid}`)).json
    expect(after).toMatchObject({
      custom_docker_run_options: null,
      ports_mappings: null,
      settings: { custom_internal_name: null, is_preview_deployments_enabled: false }
    })
    expect(fake!.app('web')!.columns).toEqual(carried)
  })

  it('resolves shared variables in real_value, alike for a clone', async () => {
    await start({
      abilities: ALL,
      apps: [
        { ...TEMPLATE, envs: [{ key: 'K', value: 'x-{{ environment.STRIPE }}-{{team.NONE}}' }] }
      ],
      sharedVariables: { 'environment.STRIPE': 'sk_live' }
    })
    const uuid = (await call('POST', '/applications/web/clone', { destination_uuid: 'dst-main' }))
      .json.uuid
    for (const app of ['web', uuid]) {
      expect((await call('GET', `/applications/${app}/envs`)).json[0]).toMatchObject({
        value: 'x-{{ environment.STRIPE }}-{{team.NONE}}',
        real_value: 'x-sk_live-{{team.NONE}}'
      })
    }
  })

  // EnvironmentVariable.php 203-216: a JSON object or array as it is, a literal or multiline
  // value in single quotes, any other escaped (docker.php 1516-1522); is_shared for a value that
  // is one reference (249-260).
  it('shows real_value as Coolify does: quoted, escaped, or JSON as it is', async () => {
    await start({
      abilities: ALL,
      apps: [
        {
          ...TEMPLATE,
          envs: [
            { key: 'LITERAL', value: 'a$b', isLiteral: true },
            { key: 'MULTI', value: 'x\ny', isMultiline: true },
            { key: 'PLAIN', value: `p"q'r\\s\tt` },
            { key: 'JSON', value: '{"a":"b"}', isLiteral: true },
            { key: 'SHARED', value: '{{environment.STRIPE}}', isLiteral: true }
          ]
        }
      ],
      sharedVariables: { 'environment.STRIPE': 'sk_live' }
    })
    const listed = (await call('GET', '/applications/web/envs')).json
    expect(
      listed.map((env: Record<string, unknown>) => [env.key, env.real_value, env.is_shared])
    ).toEqual([
      ['LITERAL', "'a$b'", false],
      ['MULTI', "'x\ny'", false],
      ['PLAIN', `p\\"q\\'r\\\\s\\tt`, false],
      ['JSON', '{"a":"b"}', false],
      ['SHARED', "'sk_live'", true]
    ])
  })
})

describe('PATCH of what a clone carries, 4x', () => {
  it('turns off auto-deploy, clears webhook secrets, unpins, and makes labels from new domains', async () => {
    await start({
      abilities: ALL,
      apps: [
        {
          ...TEMPLATE,
          gitCommitSha: 'abc1234',
          webhookSecrets: { manual_webhook_secret_github: 's' }
        }
      ]
    })
    const res = await call('PATCH', '/applications/web', {
      is_auto_deploy_enabled: false,
      manual_webhook_secret_github: '',
      git_commit_sha: 'HEAD',
      domains: 'https://pr-7.example.com'
    })
    expect(res.status).toBe(200)
    expect(fake!.app('web')).toMatchObject({
      autoDeploy: false,
      webhookSecrets: [],
      gitCommitSha: 'HEAD',
      fqdn: 'https://pr-7.example.com'
    })
    expect(fake!.app('web')!.customLabels).toContain('Host(`pr-7.example.com`)')
    const labels = await call('PATCH', '/applications/web', { custom_labels: 'not base64!' })
    expect([labels.status, labels.json.errors]).toEqual([
      422,
      { custom_labels: 'The custom_labels should be base64 encoded.' }
    ])
  })

  it('drops `domains` on a server without a proxy, and still answers 200', async () => {
    await start({ abilities: ALL, apps: [{ ...TEMPLATE, proxy: 'NONE' }] })
    const res = await call('PATCH', '/applications/web', { domains: 'https://pr-7.example.com' })
    expect(res.status).toBe(200)
    expect(fake!.app('web')!.fqdn).toBe('https://web.example.com')
  })

  it('refuses `domains` for compose applications and takes docker_compose_domains', async () => {
    await start({
      abilities: ALL,
      apps: [
        {
          ...TEMPLATE,
          fqdn: '',
          buildPack: 'dockercompose',
          compose: { services: ['web', 'worker'], domains: { web: 'https://web.example.com' } }
        }
      ]
    })
    const refused = await call('PATCH', '/applications/web', {
      domains: 'https://pr-7.example.com'
    })
    expect(refused.status).toBe(422)
    expect(Object.keys(refused.json.errors)).toEqual(['domains'])
    const detail = (await call('GET', '/applications/web')).json
    expect(JSON.parse(detail.docker_compose_domains)).toEqual({
      web: { domain: 'https://web.example.com' }
    })
    const res = await call('PATCH', '/applications/web', {
      docker_compose_domains: [{ name: 'web', domain: 'https://pr-7.example.com' }]
    })
    expect(res.status).toBe(200)
    expect(fake!.app('web')!.composeDomains).toEqual({ web: 'https://pr-7.example.com' })
  })
})

describe('a slow answer', () => {
  it('is decided on arrival and delivered later', async () => {
    await start({ abilities: ALL, apps: [TEMPLATE] })
    fake!.inject({ method: 'GET', path: '/applications', do: { delayMs: 400 } })
    const sent = Date.now()
    const slow = call('GET', '/applications')
    // Made while the list's answer is on its way: the list does not show it.
    await new Promise(resolve => setTimeout(resolve, 100))
    await call('POST', '/applications/web/clone', { destination_uuid: 'dst-main' })
    const answer = await slow
    expect(Date.now() - sent).toBeGreaterThanOrEqual(400)
    expect(answer.json.map((a: { uuid: string }) => a.uuid)).toEqual(['web'])
    expect(fake!.requests[0]).toMatchObject({ fault: 'delay 400ms', status: 200 })
  })
})
