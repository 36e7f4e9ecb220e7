/**
 * Checks a request the action sent against Coolify's published OpenAPI spec, corrected where the
 * spec is wrong about requests, and against what the server itself refuses:
 * - the method and path are an operation of the spec;
 * - every query parameter is declared, with a value of its type;
 * - a JSON body is sent exactly when the operation takes one, and fits its schema: declared field
 *   names only, of the declared types (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses);
 * - PATCH /applications/{uuid} names only fields of PATCH_ALLOWED;
 * - the request carries `Authorization: Bearer …` and `Accept: application/json` (coolify-4x.md).
 *
 * Request-side errata of the spec (read from Coolify 4.3.11's controllers):
 * - PATCH /applications/{uuid} lists project_uuid, server_uuid, environment_name, github_app_uuid,
 *   destination_uuid and dockerfile, which the server refuses with 422, and omits fields it
 *   accepts (static_image, dockerfile_target_build, health_check_type, health_check_command, …).
 * - PATCH /applications/{uuid}/envs/bulk items also take is_runtime, is_buildtime and comment.
 * - The POST /applications/… creations require both environment_name and environment_uuid; the
 *   server wants one of them.
 * - POST /deploy says its parameters may come "as query parameters or a JSON body" but declares
 *   only the query; servers before 4.2 read no body, so a body counts as a problem here.
 * - GET /deploy and GET /servers/{uuid}/validate are not in the spec: since 4.2.0 they only answer
 *   405, after the route's ability check (routes/api.php 144 and 185), which is how a dry run asks
 *   for `deploy` and `write` without acting. They take no parameter.
 */
import { readFileSync } from 'node:fs'
import ajv2020 from 'ajv/dist/2020.js'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import { parse } from 'yaml'
import { PATCH_ALLOWED } from '../fake-coolify/allow-list.js'
import type { RecordedRequest } from '../fake-coolify/index.js'
import { coolifySpec } from './coolify-spec.js'

const API_PREFIX = '/api/v1'
const SPEC_ID = 'coolify-openapi'
// A CommonJS module: its class is the default export's `default`.
const Ajv2020 = ajv2020.default

type Schema = Record<string, unknown>

interface Parameter {
  name: string
  in: 'path' | 'query' | 'header' | 'cookie'
  schema?: Schema
}

interface Operation {
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> }
  security?: unknown[]
}

interface Spec {
  paths: Record<string, Record<string, Operation | Parameter[]>>
  components?: Schema
}

interface Route {
  template: string
  pattern: RegExp
  literals: number
}

interface Loaded {
  spec: Spec
  routes: Route[]
  ajv: InstanceType<typeof Ajv2020>
  validators: Map<string, ValidateFunction>
}

let loaded: Loaded | undefined

/** Reads Coolify's OpenAPI document (see coolify-spec.ts); before any checkRequest. */
export async function loadSpec(): Promise<void> {
  if (loaded) return
  const spec = parse(readFileSync(await coolifySpec(), 'utf8')) as Spec
  applyErrata(spec)
  const routes = Object.keys(spec.paths).map(template => {
    const segments = template.split('/')
    const pattern = segments.map(s => (/^\{.+\}$/.test(s) ? '[^/]+' : escape(s))).join('/')
    return {
      template,
      pattern: new RegExp(`^${pattern}$`),
      literals: segments.filter(s => !s.startsWith('{')).length
    }
  })
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false })
  const schemas = (spec.components?.schemas ?? {}) as Schema
  ajv.addSchema({ $id: SPEC_ID, components: { schemas: strictSchema(schemas, true) } })
  loaded = { spec, routes, ajv, validators: new Map() }
}

function load(): Loaded {
  if (!loaded) throw new Error('checkRequest before loadSpec(): call it in beforeAll')
  return loaded
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function jsonBodySchema(operation: Operation | undefined): Schema | undefined {
  return operation?.requestBody?.content?.['application/json']?.schema
}

/** Where the spec is wrong about requests (see the header), corrected in the parsed spec. */
function applyErrata(spec: Spec): void {
  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item)) {
      const body = Array.isArray(operation) ? undefined : jsonBodySchema(operation)
      const required = body?.required
      // Coolify wants one of the two, not both.
      if (Array.isArray(required) && required.includes('environment_uuid')) {
        body!.required = required.filter(f => f !== 'environment_name' && f !== 'environment_uuid')
        body!.anyOf = [{ required: ['environment_name'] }, { required: ['environment_uuid'] }]
      }
    }
  }
  for (const path of ['/deploy', '/servers/{uuid}/validate']) {
    const item = (spec.paths[path] ??= {})
    const parameters: Parameter[] = path.includes('{uuid}')
      ? [{ name: 'uuid', in: 'path', schema: { type: 'string' } }]
      : []
    item.get ??= { parameters }
  }
  const patch = jsonBodySchema(spec.paths['/applications/{uuid}']?.patch as Operation)
  if (patch) {
    const properties = (patch.properties ??= {}) as Record<string, Schema>
    // The server's own list decides; PATCH_ALLOWED is checked on its own below.
    for (const field of PATCH_ALLOWED) properties[field] ??= {}
  }
  const bulk = jsonBodySchema(spec.paths['/applications/{uuid}/envs/bulk']?.patch as Operation)
  const item = ((bulk?.properties as Record<string, Schema> | undefined)?.data?.items ??
    undefined) as Schema | undefined
  if (item) {
    const properties = (item.properties ??= {}) as Record<string, Schema>
    properties.is_runtime ??= { type: 'boolean' }
    properties.is_buildtime ??= { type: 'boolean' }
    properties.comment ??= { type: ['string', 'null'] }
  }
}

/**
 * The schema as ajv should check a request: OpenAPI 3.0's `nullable` as a null type, objects that
 * declare properties closed to others (field names are checked), refs into the loaded spec.
 * `isMap` marks a map of schemas (properties, components.schemas) rather than one schema.
 */
function strictSchema(node: unknown, isMap = false): Schema {
  if (Array.isArray(node)) return node.map(n => strictSchema(n)) as unknown as Schema
  if (typeof node !== 'object' || node === null) return node as Schema
  const source = node as Schema
  const out: Schema = {}
  for (const [key, value] of Object.entries(source)) {
    if (isMap) out[key] = strictSchema(value)
    else if (key === 'properties' || key === '$defs') out[key] = strictSchema(value, true)
    else if (key === '$ref' && typeof value === 'string' && value.startsWith('#/')) {
      out[key] = `${SPEC_ID}${value}`
    } else if (key !== 'nullable' && typeof value === 'object') out[key] = strictSchema(value)
    else if (key !== 'nullable') out[key] = value
  }
  if (isMap) return out
  if (source.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null']
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false
  return out
}

function find(path: string): Route | undefined {
  return load()
    .routes.filter(route => route.pattern.test(path))
    .sort((a, b) => b.literals - a.literals)[0]
}

function header(request: RecordedRequest, name: string): string {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(', ') : (value ?? '')
}

/** A query or path value against its declared type; Laravel reads booleans as true/false/1/0. */
function valueProblem(value: string, schema: Schema | undefined): string | undefined {
  const type = schema?.type
  if (type === 'integer' && !/^-?\d+$/.test(value)) return 'is not an integer'
  if (type === 'boolean' && !['true', 'false', '1', '0'].includes(value)) return 'is not a boolean'
  return undefined
}

/** The problems of one request the action sent; empty when it conforms. */
export function checkRequest(request: RecordedRequest): string[] {
  const { spec, ajv, validators } = load()
  const method = request.method.toUpperCase()
  const line = `${method} ${request.path}`
  if (request.path !== API_PREFIX && !request.path.startsWith(`${API_PREFIX}/`)) {
    return [`${line}: not under ${API_PREFIX}`]
  }
  const path = request.path.slice(API_PREFIX.length) || '/'
  const route = find(path)
  if (!route) return [`${line}: no such path in the spec`]
  const item = spec.paths[route.template]
  const operation = item[method.toLowerCase()] as Operation | undefined
  if (!operation || Array.isArray(operation)) {
    const methods = Object.keys(item)
      .filter(k => k !== 'parameters')
      .map(k => k.toUpperCase())
    return [`${line}: ${route.template} has no ${method} (only ${methods.join(', ')})`]
  }

  const problems: string[] = []
  const where = `${method} ${route.template}`
  const parameters = [...((item.parameters as Parameter[]) ?? []), ...(operation.parameters ?? [])]
  const declared = (kind: Parameter['in'], name: string): Parameter | undefined =>
    parameters.find(p => p.in === kind && p.name === name)

  const names = route.template.split('/')
  path.split('/').forEach((segment, i) => {
    const name = /^\{(.+)\}$/.exec(names[i])?.[1]
    const problem =
      name && valueProblem(decodeURIComponent(segment), declared('path', name)?.schema)
    if (problem) problems.push(`${where}: path parameter ${name} ${problem}`)
  })
  for (const [name, value] of Object.entries(request.query)) {
    const parameter = declared('query', name)
    if (!parameter) problems.push(`${where}: query parameter ${name} is not declared`)
    const problem = parameter && valueProblem(value, parameter.schema)
    if (problem) problems.push(`${where}: query parameter ${name} ${problem}`)
  }

  if (!/^Bearer \S/.test(header(request, 'authorization'))) {
    problems.push(`${where}: no Authorization: Bearer token`)
  }
  if (!header(request, 'accept').split(',')[0].includes('application/json')) {
    problems.push(`${where}: Accept is not application/json`)
  }

  const schema = jsonBodySchema(operation)
  if (!schema) {
    if (request.body !== '') problems.push(`${where}: sends a body, but the operation takes none`)
    return problems
  }
  if (request.body === '') {
    if (operation.requestBody?.required) problems.push(`${where}: the JSON body is missing`)
    return problems
  }
  if (!header(request, 'content-type').includes('application/json')) {
    problems.push(`${where}: Content-Type is not application/json`)
  }
  let body: unknown
  try {
    body = JSON.parse(request.body)
  } catch {
    return [...problems, `${where}: the body is not JSON`]
  }
  const key = `${method} ${route.template}`
  const validate = validators.get(key) ?? ajv.compile(strictSchema(schema))
  validators.set(key, validate)
  if (!validate(body)) {
    for (const error of validate.errors ?? []) {
      const extra = error.keyword === 'additionalProperties'
      const field = extra ? ` '${String(error.params.additionalProperty)}'` : ''
      problems.push(`${where}: body${error.instancePath} ${error.message}${field}`)
    }
  }
  if (key === 'PATCH /applications/{uuid}' && typeof body === 'object' && body !== null) {
    for (const field of Object.keys(body)) {
      if (!PATCH_ALLOWED.includes(field)) {
        problems.push(`${where}: field ${field} is refused by Coolify (not in PATCH_ALLOWED)`)
      }
    }
  }
  return problems
}
