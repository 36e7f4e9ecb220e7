/** What a route handler gets, and the request-body checks Coolify's controllers share. */
import type { IncomingHttpHeaders } from 'node:http'
import { json } from './reply.js'
import type { Reply } from './reply.js'
import type { Store } from './state.js'
import type { Flavor } from './types.js'

export interface Ctx {
  flavor: Flavor
  store: Store
  method: string
  /** Captures of the route's pattern, e.g. the uuid. */
  params: string[]
  query: Record<string, string>
  headers: IncomingHttpHeaders
  body: string
  abilities: string[]
  /** Coolify's can_read_sensitive: root or read:sensitive, and an admin or owner in the team. */
  canReadSensitive: boolean
  now: number
}

export function can(abilities: string[], ability: string): boolean {
  return abilities.includes('root') || abilities.includes(ability)
}

/**
 * 422 as Coolify's controllers write it: {"message":"Validation failed.","errors":{field:[msg]}}
 * (a few checks give a bare string instead of the list).
 */
export function validationFailed(ctx: Ctx, errors: Record<string, string[] | string>): Reply {
  return json(ctx.flavor, 422, { message: 'Validation failed.', errors })
}

/** 422 as Laravel's $request->validate() writes it: the first message, "(and N more errors)". */
export function laravelValidation(ctx: Ctx, errors: Record<string, string[]>): Reply {
  const all = Object.values(errors).flat()
  const more = all.length - 1
  const message = more > 0 ? `${all[0]} (and ${more} more error${more > 1 ? 's' : ''})` : all[0]
  return json(ctx.flavor, 422, { message, errors })
}

/** Coolify's validateIncomingRequest(): a non-empty JSON object with Content-Type application/json. */
export function jsonBody(ctx: Ctx): { data: Record<string, unknown> } | { error: Reply } {
  const invalid = (error: string): { error: Reply } => ({
    error: json(ctx.flavor, 400, { message: 'Invalid request.', error })
  })
  if (!String(ctx.headers['content-type'] ?? '').includes('json')) {
    return invalid('Content-Type must be application/json.')
  }
  let data: unknown
  try {
    data = JSON.parse(ctx.body)
  } catch {
    return invalid('Invalid JSON.')
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return invalid('Invalid JSON.')
  if (Object.keys(data).length === 0) return invalid('Empty JSON.')
  return { data: laravelInput(data) as Record<string, unknown> }
}

/** Fields Laravel's TrimStrings leaves as sent (app/Http/Middleware/TrimStrings.php 14-18). */
const UNTRIMMED = new Set(['current_password', 'password', 'password_confirmation'])
/**
 * TrimStrings' pattern (Laravel 12's Str::trim, composer.lock 1777-1778): blanks, the byte order
 * mark, zero-width space and LRM at either end. PHP's `/u` makes `\s` Unicode's White_Space: JS's
 * `\s` and NEL (U+0085).
 */
const TRIMMED = /^[\s\u0085\u200B\u200E]+|[\s\u0085\u200B\u200E]+$/g

/**
 * The JSON body as controllers read it: Coolify's global middleware trims every string and turns
 * an empty one into null, at any depth (app/Http/Kernel.php 60-61: TrimStrings,
 * ConvertEmptyStringsToNull). validateIncomingRequest() checks the raw body before that.
 */
function laravelInput(value: unknown, path = ''): unknown {
  if (typeof value === 'string') {
    // The exceptions are named by their dotted path: a nested `password` is trimmed.
    const trimmed = UNTRIMMED.has(path) ? value : value.replace(TRIMMED, '')
    return trimmed === '' ? null : trimmed
  }
  if (value && typeof value === 'object') {
    const prefix = path ? `${path}.` : ''
    const entries = Object.entries(value).map(([name, item]) => [
      name,
      laravelInput(item, prefix + name)
    ])
    return Array.isArray(value) ? entries.map(([, item]) => item) : Object.fromEntries(entries)
  }
  return value
}

/** Laravel's field name in messages: project_uuid → "project uuid". */
export function attribute(field: string): string {
  return field.replace(/_/g, ' ')
}

/**
 * Checks fields of a JSON body: required ones present, every known one a string, no unknown ones.
 * Returns Laravel-style errors, empty when the body is valid.
 */
export function checkFields(
  data: Record<string, unknown>,
  required: string[],
  optional: string[]
): Record<string, string[]> {
  const errors: Record<string, string[]> = {}
  const add = (field: string, message: string): void => {
    ;(errors[field] ??= []).push(message)
  }
  for (const field of required) {
    const value = data[field]
    if (value === undefined || value === null || value === '') {
      add(field, `The ${attribute(field)} field is required.`)
    }
  }
  for (const [field, value] of Object.entries(data)) {
    if (!required.includes(field) && !optional.includes(field)) {
      add(field, 'This field is not allowed.')
    } else if (value !== undefined && value !== null && typeof value !== 'string') {
      add(field, `The ${attribute(field)} field must be a string.`)
    }
  }
  return errors
}
