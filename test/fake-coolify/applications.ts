/** /applications: list, read, create from a private repository, update, delete. */
import { checkFields, jsonBody, validationFailed } from './context.js'
import type { Ctx } from './context.js'
import { newUuid } from './format.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'
import type { AppRecord, EnvVar } from './state.js'
import type { Flavor } from './types.js'

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
const PATCH_FIELDS = [
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

/** Coolify 4.x stores status and health together. */
function runtimeStatus(flavor: Flavor): string {
  return flavor === '4x' ? 'running:healthy' : 'running'
}

function notFound(ctx: Ctx): Reply {
  return json(ctx.flavor, 404, { message: 'Application not found.' })
}

export function listApplications(ctx: Ctx): Reply {
  const apps = [...ctx.store.apps.values()].filter(a => a.kind === 'application')
  return json(
    ctx.flavor,
    200,
    apps.map(a => ({
      id: a.id,
      uuid: a.uuid,
      name: a.name,
      status: runtimeStatus(ctx.flavor),
      fqdn: a.fqdn,
      git_repository: a.git_repository,
      git_branch: a.git_branch,
      build_pack: a.build_pack
    }))
  )
}

/** The detail has no id. */
function detail(app: AppRecord, flavor: Flavor): Record<string, unknown> {
  return {
    uuid: app.uuid,
    name: app.name,
    status: runtimeStatus(flavor),
    fqdn: app.fqdn,
    git_repository: app.git_repository,
    git_branch: app.git_branch,
    build_pack: app.build_pack,
    ports_exposes: app.ports_exposes,
    dockerfile_location: app.dockerfile_location,
    environment_variables: app.envs
  }
}

export function getApplication(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  return app ? json(ctx.flavor, 200, detail(app, ctx.flavor)) : notFound(ctx)
}

export function createApplication(ctx: Ctx): Reply {
  const body = jsonBody(ctx)
  if ('error' in body) return body.error
  const data = body.data
  const errors = checkFields(data, CREATE_REQUIRED, CREATE_OPTIONAL)
  if (typeof data.build_pack === 'string' && !BUILD_PACKS.includes(data.build_pack)) {
    errors.build_pack = ['The selected build pack is invalid.']
  }
  if (typeof data.ports_exposes === 'string' && !/^(\d+)(,\d+)*$/.test(data.ports_exposes)) {
    errors.ports_exposes = ['The ports exposes field format is invalid.']
  }
  if (Object.keys(errors).length > 0) return validationFailed(ctx, errors)

  const uuid = newUuid()
  const repository = String(data.git_repository)
  const branch = String(data.git_branch)
  const app = ctx.store.addApp({
    uuid,
    name: typeof data.name === 'string' ? data.name : `${repository.replace(/^.*:/, '')}:${branch}`,
    // A new app gets an http address under sslip.io built from the server's IP.
    fqdn: typeof data.domains === 'string' ? data.domains : `http://${uuid}.127.0.0.1.sslip.io`
  })
  app.git_repository = repository
  app.git_branch = branch
  app.build_pack = String(data.build_pack)
  app.ports_exposes = String(data.ports_exposes)
  if (typeof data.dockerfile_location === 'string')
    app.dockerfile_location = data.dockerfile_location
  return json(ctx.flavor, 201, { uuid: app.uuid, domains: app.fqdn })
}

/** "KEY=value" lines; keys that already existed keep their secret flag. */
function parseEnv(text: string, previous: EnvVar[]): EnvVar[] {
  const vars: EnvVar[] = []
  for (const line of text.split(/\r?\n/)) {
    const eq = line.indexOf('=')
    if (eq <= 0) continue
    const key = line.slice(0, eq).trim()
    const old = previous.find(v => v.key === key)
    vars.push({ key, value: line.slice(eq + 1), is_secret: old?.is_secret ?? false })
  }
  return vars
}

export function updateApplication(ctx: Ctx): Reply {
  const body = jsonBody(ctx)
  if ('error' in body) return body.error
  const app = ctx.store.application(ctx.params[0])
  if (!app) return notFound(ctx)
  const data = body.data
  const errors = checkFields(data, [], PATCH_FIELDS)
  if (Object.keys(errors).length > 0) return validationFailed(ctx, errors)

  const text = (field: string): string | undefined =>
    typeof data[field] === 'string' ? (data[field] as string) : undefined
  app.name = text('name') ?? app.name
  // Written as `domains`, read back as `fqdn`.
  app.fqdn = text('domains') ?? app.fqdn
  app.git_branch = text('git_branch') ?? app.git_branch
  app.git_repository = text('git_repository') ?? app.git_repository
  app.build_pack = text('build_pack') ?? app.build_pack
  app.ports_exposes = text('ports_exposes') ?? app.ports_exposes
  app.dockerfile_location = text('dockerfile_location') ?? app.dockerfile_location
  const env = text('environment_variables')
  if (env !== undefined) app.envs = parseEnv(env, app.envs)
  return json(ctx.flavor, 200, { uuid: app.uuid })
}

export function deleteApplication(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return notFound(ctx)
  ctx.store.apps.delete(app.uuid)
  return json(ctx.flavor, 200, { message: 'Application deletion request queued.' })
}
