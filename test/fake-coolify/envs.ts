/** Environment variables: the seed's KEY=value text, and 4.x's bulk, list and delete routes. */
import { attribute, jsonBody, validationFailed } from './context.js'
import type { Ctx } from './context.js'
import { laravelDate, newUuid } from './format.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'
import type { AppRecord } from './state.js'

export interface EnvVar {
  uuid: string
  key: string
  value: string | null
  /** The seed's flag. */
  is_secret: boolean
  is_preview: boolean
  is_literal: boolean
  is_multiline: boolean
  is_shown_once: boolean
  is_runtime: boolean
  is_buildtime: boolean
  comment: string | null
  createdAt: number
  updatedAt: number
}

const FLAGS = [
  'is_preview',
  'is_literal',
  'is_multiline',
  'is_shown_once',
  'is_runtime',
  'is_buildtime'
] as const
const KEY = /^[A-Za-z_][A-Za-z0-9_.]*$/

export function newEnv(key: string, value: string | null, now: number): EnvVar {
  return {
    uuid: newUuid(),
    key,
    value,
    is_secret: false,
    is_preview: false,
    is_literal: false,
    is_multiline: false,
    is_shown_once: false,
    // Coolify's defaults: a variable is there at build and at run time.
    is_runtime: true,
    is_buildtime: true,
    comment: null,
    createdAt: now,
    updatedAt: now
  }
}

/** "KEY=value" lines replace every variable; keys that already existed keep their secret flag. */
export function parseEnvText(text: string, previous: EnvVar[], now: number): EnvVar[] {
  const vars: EnvVar[] = []
  for (const line of text.split(/\r?\n/)) {
    const eq = line.indexOf('=')
    if (eq <= 0) continue
    const key = line.slice(0, eq).trim()
    const env = newEnv(key, line.slice(eq + 1), now)
    env.is_secret = previous.find(v => v.key === key)?.is_secret ?? false
    vars.push(env)
  }
  return vars
}

/** The seed's `environment_variables` item. */
export function seedEnv(env: EnvVar): { key: string; value: string; is_secret: boolean } {
  return { key: env.key, value: env.value ?? '', is_secret: env.is_secret }
}

/** Laravel's `boolean` rule: true, false, 1, 0, '1', '0'. */
function asBoolean(value: unknown): boolean | undefined {
  if (value === true || value === 1 || value === '1') return true
  if (value === false || value === 0 || value === '0') return false
  return undefined
}

/** One item's errors, as Coolify's validator words them. */
function itemErrors(item: Record<string, unknown>): Record<string, string[]> {
  const errors: Record<string, string[]> = {}
  const key = item.key
  if (key === undefined || key === null || (typeof key === 'string' && key.trim() === '')) {
    errors.key = ['This field is required.']
  } else if (typeof key !== 'string') {
    errors.key = ['The key field must be a string.']
  } else if (key.trim().length > 255) {
    errors.key = ['The key field must not be greater than 255 characters.']
  } else if (!KEY.test(key.trim())) {
    errors.key = ['The key field format is invalid.']
  }
  if (item.value !== undefined && item.value !== null && typeof item.value !== 'string') {
    errors.value = ['The value field must be a string.']
  }
  for (const flag of FLAGS) {
    if (item[flag] !== undefined && asBoolean(item[flag]) === undefined) {
      errors[flag] = [`The ${attribute(flag)} field must be true or false.`]
    }
  }
  const comment = item.comment
  if (comment !== undefined && comment !== null) {
    if (typeof comment !== 'string') errors.comment = ['The comment field must be a string.']
    else if (comment.length > 256) {
      errors.comment = ['The comment field must not be greater than 256 characters.']
    }
  }
  return errors
}

/**
 * Creates or updates one variable by key; production and preview variables are kept apart. An
 * existing one takes `is_literal` as given or false, and `is_multiline`/`is_shown_once` as given
 * even when left out, i.e. null (ApplicationsController.php 3591, 3638-3646): those columns are
 * NOT NULL (2024_03_14_214402_add_multiline_envs.php 15), so a left-out flag that was true makes
 * Postgres refuse the row — undefined here, a 500 for the caller.
 */
function upsert(app: AppRecord, item: Record<string, unknown>, now: number): EnvVar | undefined {
  const key = String(item.key).trim()
  const flag = (name: (typeof FLAGS)[number]): boolean | undefined => asBoolean(item[name])
  const isPreview = flag('is_preview') ?? false
  const value = typeof item.value === 'string' ? item.value : null
  let env = app.envs.find(e => e.key === key && e.is_preview === isPreview)
  if (env) {
    // PHP's `true != null` holds, `false != null` does not: only a true flag is nulled.
    for (const name of ['is_multiline', 'is_shown_once'] as const) {
      if (env[name] && flag(name) === undefined) return undefined
    }
  } else {
    env = newEnv(key, value, now)
    app.envs.push(env)
  }
  env.value = value
  env.is_preview = isPreview
  env.is_literal = flag('is_literal') ?? false
  env.is_multiline = flag('is_multiline') ?? env.is_multiline
  env.is_shown_once = flag('is_shown_once') ?? env.is_shown_once
  env.is_runtime = flag('is_runtime') ?? env.is_runtime
  env.is_buildtime = flag('is_buildtime') ?? env.is_buildtime
  if ('comment' in item) env.comment = typeof item.comment === 'string' ? item.comment : null
  env.updatedAt = now
  return env
}

/**
 * real_value as EnvironmentVariable.php 203-216 gives it: the value resolved (state.ts `resolve`),
 * then a JSON object or array as it is (207-209), a literal or multiline one in single quotes
 * (211-212), any other escaped by escapeEnvVariables (214; bootstrap/helpers/docker.php 1516-1522).
 */
function realValue(ctx: Ctx, env: EnvVar): string {
  const resolved = ctx.store.resolve(env.value ?? '')
  if (/^[[{]/.test(resolved) && isJson(resolved)) return resolved
  if (env.is_literal || env.is_multiline) return `'${resolved}'`
  return resolved.replace(/[\\\r\t\0"']/g, char => ESCAPED[char])
}

/** escapeEnvVariables' replacements, docker.php 1518-1519. */
const ESCAPED: Record<string, string> = {
  '\\': '\\\\',
  '\r': '\\r',
  '\t': '\\t',
  '\0': '\\0',
  '"': '\\"',
  "'": "\\'"
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** is_shared, EnvironmentVariable.php 249-260: the whole value is one `{{type.…}}` reference. */
function isShared(value: string): boolean {
  const type = value.includes('{{') ? value.split('{{')[1].split('.')[0] : value
  return value.startsWith(`{{${type}`) && value.endsWith('}}')
}

/**
 * real_value of an emptied variable: null goes through realValue as an empty text, in single
 * quotes for a literal or multiline one, escaped to nothing otherwise (EnvironmentVariable.php
 * 201-216, 310-313; bootstrap/helpers/docker.php 1516-1521).
 */
function emptyRealValue(env: EnvVar): string {
  return env.is_literal || env.is_multiline ? "''" : ''
}

/** A variable as the API shows it: the value only to whoever may read sensitive data. */
function envView(ctx: Ctx, env: EnvVar): Record<string, unknown> {
  const showValue = ctx.canReadSensitive && !env.is_shown_once
  return {
    uuid: env.uuid,
    key: env.key,
    ...(showValue
      ? {
          value: env.value,
          real_value: env.value === null ? emptyRealValue(env) : realValue(ctx, env)
        }
      : {}),
    is_preview: env.is_preview,
    is_literal: env.is_literal,
    is_multiline: env.is_multiline,
    is_shown_once: env.is_shown_once,
    is_runtime: env.is_runtime,
    is_buildtime: env.is_buildtime,
    is_shared: env.value !== null && isShared(env.value),
    is_required: false,
    comment: env.comment,
    created_at: laravelDate(env.createdAt),
    updated_at: laravelDate(env.updatedAt)
  }
}

/**
 * PATCH /applications/{uuid}/envs/bulk: {"data":[{key, value, …}]} → 201 with each variable.
 * Items are checked one by one: the first invalid one answers 422 after the ones before it were
 * saved, as in Coolify.
 */
export function bulkEnvs(ctx: Ctx): Reply {
  const body = jsonBody(ctx)
  if ('error' in body) return body.error
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found' })
  const data = body.data.data
  const items = Array.isArray(data)
    ? data
    : typeof data === 'object' && data !== null
      ? Object.values(data)
      : []
  if (!data || items.length === 0) {
    return json(ctx.flavor, 400, { message: 'Bulk data is required.' })
  }
  const saved: Array<Record<string, unknown>> = []
  for (const raw of items) {
    const item = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {}
    const errors = itemErrors(item)
    if (Object.keys(errors).length > 0) return validationFailed(ctx, errors)
    const env = upsert(app, item, ctx.now)
    // The not-null violation: Laravel's JSON answer for an exception outside debug mode.
    if (!env) return json(ctx.flavor, 500, { message: 'Server Error' })
    saved.push(envView(ctx, env))
  }
  return json(ctx.flavor, 201, saved)
}

/**
 * GET /applications/{uuid}/envs: production variables, then preview ones, each in creation order;
 * values only to whoever may read sensitive data.
 */
export function listEnvs(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  // Coolify writes this one without a period.
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found' })
  const ordered = [...app.envs.filter(e => !e.is_preview), ...app.envs.filter(e => e.is_preview)]
  return json(
    ctx.flavor,
    200,
    ordered.map(env => envView(ctx, env))
  )
}

/** DELETE /applications/{uuid}/envs/{env_uuid}: only a variable of that application. */
export function deleteEnv(ctx: Ctx): Reply {
  const app = ctx.store.application(ctx.params[0])
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found.' })
  const index = app.envs.findIndex(e => e.uuid === ctx.params[1])
  if (index === -1) return json(ctx.flavor, 404, { message: 'Environment variable not found.' })
  app.envs.splice(index, 1)
  return json(ctx.flavor, 200, { message: 'Environment variable deleted.' })
}
