/** /applications: list, read, create from a private repository, update, delete. */
import { CREATE_ALLOWED, PATCH_ALLOWED } from './allow-list.js'
import { rowView, storedColumn } from './columns.js'
import { attribute, checkFields, jsonBody, validationFailed } from './context.js'
import type { Ctx } from './context.js'
import { parseEnvText, seedEnv } from './envs.js'
import { columnDate, laravelDate, newUuid } from './format.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'
import { labelsFor, WEBHOOK_SECRET_FIELDS } from './state.js'
import type { AppRecord, JobField } from './state.js'

const BUILD_PACKS = ['dockerfile', 'nixpacks', 'static']
const CREATE_REQUIRED = [
  'project_uuid',
  'server_uuid',
  'environment_name',
  'private_key_uuid',
  'git_repository',
  'git_branch',
  'build_pack',
  'ports_exposes'
]
const CREATE_OPTIONAL = ['name', 'description', 'domains', 'dockerfile_location']
/** The seed's PATCH fields (interface.md 4.2). */
const SEED_PATCH_FIELDS = [
  'name',
  'description',
  'domains',
  'git_branch',
  'git_repository',
  'build_pack',
  'ports_exposes',
  'dockerfile_location',
  'environment_variables'
]

/**
 * Coolify 4.x stores status and health together, as last refreshed, with the refresh's time; the
 * seed shows the container's state alone, at once.
 */
function statusFields(ctx: Ctx, app: AppRecord): Record<string, unknown> {
  if (ctx.flavor === 'seed') return { status: ctx.store.runtime(app, ctx.now).status.split(':')[0] }
  const { status, onlineAt } = ctx.store.seen(app, ctx.now)
  return { status, last_online_at: columnDate(onlineAt) }
}

/** What 4.x adds to both list and detail about the version an app deploys. */
function versionFields(ctx: Ctx, app: AppRecord): Record<string, unknown> {
  if (ctx.flavor === 'seed') return {}
  return {
    git_commit_sha: app.git_commit_sha,
    docker_registry_image_name: app.docker_registry_image_name,
    docker_registry_image_tag: app.docker_registry_image_tag,
    preview_url_template: app.preview_url_template
  }
}

/**
 * 4.x shows the description, the environment and the row's dates. Its timestamp columns keep whole seconds, so
 * two apps made within one second show the same created_at.
 */
function rowFields(ctx: Ctx, app: AppRecord): Record<string, unknown> {
  if (ctx.flavor === 'seed') return {}
  const seconds = (ms: number): string => laravelDate(Math.floor(ms / 1000) * 1000)
  return {
    description: app.description,
    environment_id: app.environmentId,
    created_at: seconds(app.createdAt),
    updated_at: seconds(app.updatedAt)
  }
}

function notFound(ctx: Ctx): Reply {
  return json(ctx.flavor, 404, { message: 'Application not found.' })
}

/**
 * The seed's list items carry the numeric id; 4.x hides it in every application read. 4.x takes one
 * tag name in `?tag=` and lists only the applications with that tag (ApplicationsController.php
 * 254-265, 4.3.11); the seed knows no such parameter and lists them all.
 */
export function listApplications(ctx: Ctx): Reply {
  const tag = ctx.flavor === '4x' ? ctx.query.tag : undefined
  const apps = [...ctx.store.apps.values()].filter(
    a => a.kind === 'application' && (!tag || a.tags.includes(tag))
  )
  return json(
    ctx.flavor,
    200,
    apps.map(a => ({
      ...(ctx.flavor === 'seed' ? { id: a.id } : {}),
      uuid: a.uuid,
      name: a.name,
      ...statusFields(ctx, a),
      fqdn: a.fqdn,
      git_repository: a.git_repository,
      git_branch: a.git_branch,
      build_pack: a.build_pack,
      ...versionFields(ctx, a),
      ...rowFields(ctx, a)
    }))
  )
}

/**
 * What 4.x's detail adds: compose domains, the settings row, and — only to whoever may read
 * sensitive data — the labels (base64) and webhook secrets.
 */
function settingFields(ctx: Ctx, app: AppRecord): Record<string, unknown> {
  if (ctx.flavor === 'seed') return {}
  const domains = Object.entries(app.composeDomains)
  return {
    docker_compose_domains:
      domains.length > 0
        ? JSON.stringify(Object.fromEntries(domains.map(([name, domain]) => [name, { domain }])))
        : null,
    ...(ctx.canReadSensitive
      ? {
          custom_labels: Buffer.from(app.customLabels).toString('base64'),
          ...Object.fromEntries(
            WEBHOOK_SECRET_FIELDS.map(field => [field, app.webhookSecrets[field] ?? null])
          )
        }
      : {}),
    settings: {
      is_auto_deploy_enabled: app.autoDeploy,
      is_container_label_readonly_enabled: app.readonlyLabels
    }
  }
}

/**
 * The detail has no id. 4.x shows the whole row and its settings (columns.ts), the seed the
 * fields interface.md names.
 */
function detail(ctx: Ctx, app: AppRecord): Record<string, unknown> {
  if (ctx.flavor !== 'seed') {
    const { settings, ...modelled } = modelledFields(ctx, app)
    return rowView(
      {
        ...modelled,
        docker_compose_raw:
          app.composeServices.length > 0
            ? `services:\n${app.composeServices.map(name => `  ${name}: {}`).join('\n')}\n`
            : null
      },
      settings as Record<string, unknown>,
      app.columns,
      ctx.canReadSensitive
    )
  }
  return { ...modelledFields(ctx, app), environment_variables: app.envs.map(seedEnv) }
}

/** The columns the fake models itself. */
function modelledFields(ctx: Ctx, app: AppRecord): Record<string, unknown> {
  return {
    uuid: app.uuid,
    name: app.name,
    ...statusFields(ctx, app),
    fqdn: app.fqdn,
    git_repository: app.git_repository,
    git_branch: app.git_branch,
    build_pack: app.build_pack,
    ports_exposes: app.ports_exposes,
    dockerfile_location: app.dockerfile_location,
    ...versionFields(ctx, app),
    ...rowFields(ctx, app),
    ...settingFields(ctx, app)
  }
}

export function getApplication(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  return app ? json(ctx.flavor, 200, detail(ctx, app)) : notFound(ctx)
}

export function createApplication(ctx: Ctx): Reply {
  const body = jsonBody(ctx)
  if ('error' in body) return body.error
  const data = body.data
  // 4.x takes many more fields; the fake checks the seed's and lets the others through unread.
  const unchecked = (field: string): boolean =>
    ctx.flavor === '4x' &&
    CREATE_ALLOWED.includes(field) &&
    !CREATE_REQUIRED.includes(field) &&
    !CREATE_OPTIONAL.includes(field)
  const checked = Object.fromEntries(Object.entries(data).filter(([field]) => !unchecked(field)))
  const errors = checkFields(checked, CREATE_REQUIRED, CREATE_OPTIONAL)
  if (typeof data.build_pack === 'string' && !BUILD_PACKS.includes(data.build_pack)) {
    errors.build_pack = ['The selected build pack is invalid.']
  }
  if (typeof data.ports_exposes === 'string' && !/^(\d+)(,\d+)*$/.test(data.ports_exposes)) {
    errors.ports_exposes = ['The ports exposes field format is invalid.']
  }
  if (Object.keys(errors).length > 0) return validationFailed(ctx, errors)
  // As Coolify: a server with several destinations needs to be told which one.
  const onServer = [...ctx.store.destinations.values()].filter(
    d => d.serverUuid === data.server_uuid
  )
  if (ctx.flavor === '4x' && onServer.length > 1) {
    if (!('destination_uuid' in data)) {
      return json(ctx.flavor, 400, {
        message: 'Server has multiple destinations and you do not set destination_uuid.'
      })
    }
    if (!onServer.some(d => d.uuid === data.destination_uuid)) {
      return validationFailed(ctx, {
        destination_uuid: 'Provided destination_uuid does not belong to the specified server.'
      })
    }
  }

  const uuid = newUuid()
  const repository = String(data.git_repository)
  const branch = String(data.git_branch)
  const app = ctx.store.addApp(
    {
      uuid,
      name:
        typeof data.name === 'string' ? data.name : `${repository.replace(/^.*:/, '')}:${branch}`,
      ...(typeof data.description === 'string' ? { description: data.description } : {}),
      // A new app gets an http address under sslip.io built from the server's IP.
      fqdn: typeof data.domains === 'string' ? data.domains : `http://${uuid}.127.0.0.1.sslip.io`,
      ...(onServer.length > 0
        ? { destinations: [onServer.find(d => d.uuid === data.destination_uuid) ?? onServer[0]] }
        : {})
    },
    ctx.now
  )
  app.idle = { status: 'exited', http: 404 }
  app.git_repository = repository
  app.git_branch = branch
  app.build_pack = String(data.build_pack)
  app.ports_exposes = String(data.ports_exposes)
  if (typeof data.dockerfile_location === 'string')
    app.dockerfile_location = data.dockerfile_location
  // Deployed at once, as configured so far.
  if (ctx.flavor === '4x' && data.instant_deploy) ctx.store.queue(app, {}, ctx.now)
  return json(ctx.flavor, 201, { uuid: app.uuid, domains: app.fqdn })
}

/** The allowed fields the fake checks, with Laravel's message when a value breaks the rule. */
const PATCH_RULES: Record<string, (value: unknown) => string | undefined> = {
  name: text,
  description: nullable(text),
  domains: text,
  git_repository: text,
  git_branch: text,
  git_commit_sha: matching(/^[a-zA-Z0-9][a-zA-Z0-9._\-/]*$/),
  docker_registry_image_name: nullable(matching(/^[a-z0-9]+(?:[._\-/:@][a-z0-9]+)*$/)),
  docker_registry_image_tag: nullable(matching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/)),
  // BuildPackTypes: 'dockerimage' is not among them, so no app becomes one through PATCH.
  build_pack: value =>
    ['nixpacks', 'static', 'dockerfile', 'dockercompose', 'railpack'].includes(String(value))
      ? undefined
      : 'The selected :field is invalid.',
  dockerfile_location: text,
  preview_url_template: text,
  // `string`, not nullable (update_by_uuid's rules, ApplicationsController.php 2816-2817).
  http_basic_auth_username: text,
  http_basic_auth_password: text,
  docker_compose_domains: nullable(value =>
    Array.isArray(value) ? undefined : 'The :field field must be an array.'
  )
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? undefined : 'The :field field must be a string.'
}

function nullable(rule: (value: unknown) => string | undefined) {
  return (value: unknown): string | undefined => (value === null ? undefined : rule(value))
}

function matching(pattern: RegExp) {
  return (value: unknown): string | undefined =>
    text(value) ?? (pattern.test(String(value)) ? undefined : 'The :field field format is invalid.')
}

/** The allowed fields Laravel checks with its `boolean` rule. */
const SWITCHES = new Set([
  ...PATCH_ALLOWED.filter(field => field.startsWith('is_')),
  'health_check_enabled',
  'use_build_secrets',
  'disable_build_cache',
  'inject_build_args_to_dockerfile',
  'include_source_commit_in_build'
])

function patchErrors(data: Record<string, unknown>): Record<string, string[]> {
  const errors: Record<string, string[]> = {}
  for (const [field, value] of Object.entries(data)) {
    let message: string | undefined
    if (!PATCH_ALLOWED.includes(field)) message = 'This field is not allowed.'
    else if (PATCH_RULES[field]) message = PATCH_RULES[field](value)
    else if (SWITCHES.has(field) && ![true, false, 0, 1, '0', '1'].includes(value as never)) {
      message = 'The :field field must be true or false.'
    }
    if (message) errors[field] = [message.replace(':field', attribute(field))]
  }
  return errors
}

export function updateApplication(ctx: Ctx): Reply {
  const body = jsonBody(ctx)
  if ('error' in body) return body.error
  const app = ctx.store.application(ctx.params[0])
  if (ctx.flavor === 'seed') {
    if (!app) return notFound(ctx)
    return updateSeed(ctx, app, body.data)
  }
  // Coolify writes this one without a period.
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found' })
  const data = body.data
  // Checked before the validator, and answered with a bare string.
  if ('ports_exposes' in data) {
    const ports = String(data.ports_exposes).split(',')
    if (ports.some(port => port.trim() === '' || !Number.isFinite(Number(port)))) {
      return validationFailed(ctx, {
        ports_exposes: 'The ports_exposes should be a comma separated list of numbers.'
      })
    }
  }
  if (typeof data.custom_labels === 'string' && !isBase64(data.custom_labels)) {
    return validationFailed(ctx, { custom_labels: 'The custom_labels should be base64 encoded.' })
  }
  const errors = patchErrors(data)
  if (Object.keys(errors).length > 0) return validationFailed(ctx, errors)
  // Basic auth turned on needs a user and password, given or kept (ApplicationsController.php 2896-2910).
  const credentials = ['http_basic_auth_username', 'http_basic_auth_password']
  if (data.is_http_basic_auth_enabled === true && credentials.some(field => !app.columns[field])) {
    const missing = credentials.filter(field => !data[field])
    if (missing.length > 0) {
      return validationFailed(
        ctx,
        Object.fromEntries(missing.map(field => [field, `The ${field} is required.`]))
      )
    }
  }
  // As update_by_uuid: compose applications route by service, never by `domains`.
  if (app.build_pack === 'dockercompose' && 'domains' in data) {
    return validationFailed(ctx, {
      domains:
        'The domains field cannot be used for dockercompose applications. Use docker_compose_domains instead to set domains for individual services.'
    })
  }
  if ('docker_compose_domains' in data && app.composeServices.length === 0) {
    return validationFailed(ctx, {
      docker_compose_domains:
        'Cannot set docker_compose_domains without docker_compose_raw. Reload the compose file from the git repository first.'
    })
  }

  const text = (field: string): string | undefined =>
    typeof data[field] === 'string' ? (data[field] as string) : undefined
  app.name = text('name') ?? app.name
  if ('description' in data) app.description = text('description') ?? null
  // A server without a proxy takes no domains: Coolify drops the field and still answers 200.
  if (app.proxy !== 'NONE') app.fqdn = text('domains') ?? app.fqdn
  if ('is_auto_deploy_enabled' in data)
    app.autoDeploy = [true, 1, '1'].includes(data.is_auto_deploy_enabled as never)
  for (const field of WEBHOOK_SECRET_FIELDS) {
    if (!(field in data)) continue
    // Laravel reads '' as null.
    const value = text(field)
    if (value) app.webhookSecrets[field] = value
    else delete app.webhookSecrets[field]
  }
  if (Array.isArray(data.docker_compose_domains)) {
    const domains: Record<string, string> = {}
    for (const item of data.docker_compose_domains as Array<Record<string, unknown>>) {
      const name = String(item?.name ?? '')
      if (app.composeServices.includes(name)) domains[name] = String(item?.domain ?? '')
    }
    // The services named replace the whole list; a list naming none changes nothing.
    if (Object.keys(domains).length > 0) app.composeDomains = domains
  }
  if (typeof data.custom_labels === 'string') {
    app.customLabels = Buffer.from(data.custom_labels, 'base64').toString('utf8')
  }
  if (app.readonlyLabels && 'domains' in data && app.proxy !== 'NONE') {
    app.customLabels = labelsFor(app)
  }
  app.build_pack = text('build_pack') ?? app.build_pack
  app.ports_exposes = text('ports_exposes') ?? app.ports_exposes
  app.dockerfile_location = text('dockerfile_location') ?? app.dockerfile_location
  // Saved as given, trimmed (Application.php 309-310); a deploy queues what is set then.
  app.git_commit_sha = text('git_commit_sha')?.trim() ?? app.git_commit_sha
  app.preview_url_template = text('preview_url_template') ?? app.preview_url_template
  for (const field of JOB_FIELDS) {
    if (field in data)
      ctx.store.setField(app, field, (data[field] as string | null) ?? null, ctx.now)
  }
  // Every other field update_by_uuid takes lands in its column as given.
  for (const [field, value] of Object.entries(data)) {
    if (MODELLED_PATCH_FIELDS.has(field)) continue
    const stored = storedColumn(field, value)
    if (stored) app.columns[stored[0]] = stored[1]
  }
  app.updatedAt = ctx.now
  if (data.instant_deploy) {
    // Coolify queues a deployment but answers without its uuid.
    const queued = ctx.store.queue(app, {}, ctx.now)
    if (queued.kind === 'already-queued') {
      return json(ctx.flavor, 200, { message: 'Deployment already queued for this commit.' })
    }
  }
  return json(ctx.flavor, 200, { uuid: app.uuid })
}

function isBase64(text: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(text) && text.length % 4 === 0
}

const JOB_FIELDS: JobField[] = [
  'git_repository',
  'git_branch',
  'docker_registry_image_name',
  'docker_registry_image_tag'
]

/** The PATCH fields written to what the fake models itself, above. */
const MODELLED_PATCH_FIELDS = new Set<string>([
  ...JOB_FIELDS,
  ...WEBHOOK_SECRET_FIELDS,
  'name',
  'description',
  'domains',
  'is_auto_deploy_enabled',
  'docker_compose_domains',
  'custom_labels',
  'build_pack',
  'ports_exposes',
  'dockerfile_location',
  'git_commit_sha',
  'preview_url_template',
  'instant_deploy'
])

/** interface.md's PATCH: the fields it lists, environment variables as KEY=value text. */
function updateSeed(ctx: Ctx, app: AppRecord, data: Record<string, unknown>): Reply {
  const errors = checkFields(data, [], SEED_PATCH_FIELDS)
  if (Object.keys(errors).length > 0) return validationFailed(ctx, errors)

  const text = (field: string): string | undefined =>
    typeof data[field] === 'string' ? (data[field] as string) : undefined
  app.name = text('name') ?? app.name
  app.description = text('description') ?? app.description
  // Written as `domains`, read back as `fqdn`.
  app.fqdn = text('domains') ?? app.fqdn
  app.git_branch = text('git_branch') ?? app.git_branch
  app.git_repository = text('git_repository') ?? app.git_repository
  app.build_pack = text('build_pack') ?? app.build_pack
  app.ports_exposes = text('ports_exposes') ?? app.ports_exposes
  app.dockerfile_location = text('dockerfile_location') ?? app.dockerfile_location
  const env = text('environment_variables')
  if (env !== undefined) app.envs = parseEnvText(env, app.envs, ctx.now)
  return json(ctx.flavor, 200, { uuid: app.uuid })
}

/**
 * DELETE /applications/{uuid}: Coolify queues the removal and answers at once; the fake removes it
 * at once. Its query booleans (delete_configurations, delete_volumes, docker_cleanup,
 * delete_connected_networks, all default true; docker_cleanup prunes the whole server's build
 * cache) are read leniently and change nothing here: tests read them from the recorded request.
 */
export function deleteApplication(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app && ctx.flavor === '4x')
    return json(ctx.flavor, 404, { message: 'Application not found' })
  if (!app) return notFound(ctx)
  ctx.store.apps.delete(app.uuid)
  return json(ctx.flavor, 200, { message: 'Application deletion request queued.' })
}
