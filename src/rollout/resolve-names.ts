import { listOf } from '../coolify/answers.js'
import type { CoolifyClient } from '../coolify/client.js'
import { isMissingRoute } from '../coolify/errors.js'
import type { ProjectSummary } from '../coolify/types.js'
import { ActionError } from '../errors.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'

export type ResourceKind = 'application' | 'service' | 'database'

/** A resource as Coolify's lists show it. */
export interface Listed {
  uuid: string
  name: string
  kind: ResourceKind
  /** 4.x: the id of its environment; the seed's lists do not say. */
  environmentId?: number
}

/** What one value of `app` turned out to be. */
export interface Resolved {
  value: string
  resource: Listed
}

/** `project/environment/name`, one way of reading a value with two or more slashes. */
interface Place {
  project: string
  environment: string
  name: string
}

/** The lists are read in this order, each only when a value is not found in those before. */
const KINDS: readonly ResourceKind[] = ['application', 'service', 'database']
/** How many close names an unknown one's error suggests. */
const SUGGESTIONS = 3

/**
 * The resources `app` names — by uuid, by name as Coolify shows it, or as
 * `project/environment/name` — in the order given, before anything is written. Applications are
 * listed first; services, then databases, only for a value not found among applications; projects
 * and their environments only for a value that needs its place checked (or to tell apart the
 * resources an ambiguous name could be). A value that matches nothing, or several, throws.
 */
export async function resolveNames(
  client: CoolifyClient,
  values: readonly string[],
  signal: AbortSignal
): Promise<Resolved[]> {
  const catalog = new Catalog(client, signal)
  const found = new Map<string, Listed[]>()
  for (const kind of KINDS) {
    const pending = values.filter(value => !found.has(value))
    if (pending.length === 0) break
    const listed = await catalog.list(kind)
    for (const value of pending) {
      const matches = await matching(catalog, listed, value)
      if (matches.length > 0) found.set(value, matches)
    }
  }
  const resolved: Resolved[] = []
  for (const value of values) {
    const matches = found.get(value)
    if (!matches) throw await unknown(catalog, value)
    if (matches.length > 1) throw await ambiguous(catalog, value, matches)
    if (!resolved.some(r => r.resource.uuid === matches[0].uuid)) {
      resolved.push({ value, resource: matches[0] })
    }
  }
  return resolved
}

/** The resources of one list `value` names: a uuid first, then a name, then a place and name. */
async function matching(catalog: Catalog, listed: Listed[], value: string): Promise<Listed[]> {
  const byUuid = listed.filter(resource => resource.uuid === value)
  if (byUuid.length > 0) return byUuid
  const byName = listed.filter(resource => resource.name === value)
  if (byName.length > 0) return byName
  const places = placesIn(value)
  const named = listed.filter(resource => places.some(place => place.name === resource.name))
  if (named.length === 0) return []
  const matches: Listed[] = []
  for (const place of places.filter(p => named.some(resource => resource.name === p.name))) {
    const environments = await catalog.environmentsNamed(place.project, place.environment)
    for (const resource of named) {
      if (
        resource.name === place.name &&
        environments.some(id => id === resource.environmentId) &&
        !matches.includes(resource)
      ) {
        matches.push(resource)
      }
    }
  }
  return matches
}

/**
 * Every way to read `value` as `project/environment/name`: names of projects and environments may
 * hold slashes themselves, so each pair of its slashes is a cut.
 */
export function placesIn(value: string): Place[] {
  const slashes: number[] = []
  for (let index = value.indexOf('/'); index >= 0; index = value.indexOf('/', index + 1)) {
    slashes.push(index)
  }
  const places: Place[] = []
  for (const [i, first] of slashes.entries()) {
    for (const second of slashes.slice(i + 1)) {
      const place = {
        project: value.slice(0, first).trim(),
        environment: value.slice(first + 1, second).trim(),
        name: value.slice(second + 1).trim()
      }
      if (place.project && place.environment && place.name) places.push(place)
    }
  }
  return places
}

const HOW_TO =
  "write the name as Coolify shows it on the resource's page, as project/environment/name, or its uuid"

/**
 * No resource is called `value`: for `project/environment/name`, which part was not found, else
 * the name; with the closest names. The lists were all read by then; a project that cannot be read
 * only makes the error plainer.
 */
async function unknown(catalog: Catalog, value: string): Promise<ActionError> {
  const places = placesIn(value)
  const placed =
    places.length > 0 ? await unplaced(catalog, value, places).catch(() => undefined) : undefined
  if (placed) return placed
  const names = (await catalog.all()).map(resource => resource.name)
  return new ActionError(
    `Input \`app\`: no application, service or database named "${value}" is visible to this token${close(value, names)}; ${HOW_TO}.`
  )
}

/** Which part of `project/environment/name` is not there; undefined without projects (the seed). */
async function unplaced(
  catalog: Catalog,
  value: string,
  places: Place[]
): Promise<ActionError | undefined> {
  if (!(await catalog.hasProjects())) return undefined
  const what = `Input \`app\`: "${value}":`
  const projects = await catalog.projects()
  const place = places.find(p => projects.some(project => project.name === p.project)) ?? places[0]
  const inProject = projects.filter(project => project.name === place.project)
  if (inProject.length === 0) {
    const names = projects.map(project => project.name ?? '')
    return new ActionError(
      `${what} no project named "${place.project}"${close(place.project, names)}; ${HOW_TO}.`
    )
  }
  const environments = (
    await Promise.all(inProject.map(project => catalog.environments(project)))
  ).flat()
  const ids = environments.filter(e => e.name === place.environment).map(e => e.id)
  if (ids.length === 0) {
    const names = environments.map(e => e.name ?? '')
    return new ActionError(
      `${what} project "${place.project}" has no environment "${place.environment}"${close(place.environment, names)}; ${HOW_TO}.`
    )
  }
  const there = (await catalog.all()).filter(r => ids.includes(r.environmentId))
  return new ActionError(
    `${what} nothing named "${place.name}" in ${place.project}/${place.environment}${close(
      place.name,
      there.map(r => r.name)
    )}; ${HOW_TO}.`
  )
}

/** Several resources answer to `value`: each as `project/environment/name (uuid)`. */
async function ambiguous(catalog: Catalog, value: string, matches: Listed[]): Promise<ActionError> {
  // Where each lives is a help: a project that cannot be read leaves the name alone.
  const labels = await Promise.all(
    matches.map(resource => catalog.label(resource).catch(() => resource.name))
  )
  const sameLabel = new Set(labels).size < labels.length
  return new ActionError(
    `Input \`app\`: "${value}" names ${matches.length} resources, so nothing was deployed: ${matches
      .map((resource, i) => `${labels[i]} (${resource.uuid})`)
      .join(
        ', '
      )}; write the one to deploy ${sameLabel ? 'by its uuid' : 'as project/environment/name, or by its uuid'}.`
  )
}

/** ` (close: "a", "b")` for the few names nearest to `value`, or "" when none is near. */
function close(value: string, names: readonly string[]): string {
  const nearest = closeNames(value, names)
  return nearest.length > 0 ? ` (close: ${nearest.map(name => `"${name}"`).join(', ')})` : ''
}

/**
 * The few names nearest to `value` by edit distance, ignoring case, and only those near enough to
 * be a slip: at most a third of the value's length apart (two for short names).
 */
export function closeNames(value: string, names: readonly string[]): string[] {
  const target = value.toLowerCase()
  const limit = Math.max(2, Math.floor(target.length / 3))
  return [...new Set(names)]
    .filter(name => name !== '' && name !== value)
    .map(name => ({ name, distance: editDistance(target, name.toLowerCase()) }))
    .filter(({ distance }) => distance <= limit)
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .slice(0, SUGGESTIONS)
    .map(({ name }) => name)
}

/** Levenshtein's distance: the fewest inserts, deletes and substitutions from `a` to `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min(previous[j] + 1, current[j - 1] + 1, substitution))
    }
    previous = current
  }
  return previous[b.length]
}

interface Environment {
  id?: number
  name?: string
}

/** What the token sees in Coolify, each list read once and only when first needed. */
class Catalog {
  readonly #lists = new Map<ResourceKind, Promise<Listed[]>>()
  #projects: Promise<ProjectSummary[] | undefined> | undefined
  readonly #environments = new Map<string, Promise<Environment[]>>()

  constructor(
    private readonly client: CoolifyClient,
    private readonly signal: AbortSignal
  ) {}

  list(kind: ResourceKind): Promise<Listed[]> {
    let list = this.#lists.get(kind)
    if (!list) {
      list = this.read(kind)
      this.#lists.set(kind, list)
    }
    return list
  }

  /** Every kind: for the close names of a value found nowhere (all were read by then). */
  async all(): Promise<Listed[]> {
    return (await Promise.all(KINDS.map(kind => this.list(kind)))).flat()
  }

  /** Whether Coolify has projects to name (4.x); the seed contract has none. */
  async hasProjects(): Promise<boolean> {
    return (await this.projectList()) !== undefined
  }

  async projects(): Promise<ProjectSummary[]> {
    return (await this.projectList()) ?? []
  }

  /** The ids of the environments called `environment` in the projects called `project`. */
  async environmentsNamed(
    project: string,
    environment: string
  ): Promise<Array<number | undefined>> {
    const projects = (await this.projects()).filter(p => p.name === project)
    const environments = (await Promise.all(projects.map(p => this.environments(p)))).flat()
    return environments.filter(e => e.name === environment && e.id !== undefined).map(e => e.id)
  }

  environments(project: ProjectSummary): Promise<Environment[]> {
    const uuid = project.uuid ?? ''
    let environments = this.#environments.get(uuid)
    if (!environments) {
      environments = this.client
        .getProject(uuid, this.signal)
        .then(detail => listOf(detail?.environments))
      this.#environments.set(uuid, environments)
    }
    return environments
  }

  /**
   * `project/environment/name` of a resource, its projects read one by one until its environment
   * is found; its name alone where Coolify does not say where it is.
   */
  async label(resource: Listed): Promise<string> {
    if (resource.environmentId === undefined) return resource.name
    for (const project of await this.projects()) {
      const environment = (await this.environments(project)).find(
        e => e.id === resource.environmentId
      )
      if (environment) return `${project.name}/${environment.name}/${resource.name}`
    }
    return resource.name
  }

  private projectList(): Promise<ProjectSummary[] | undefined> {
    this.#projects ??= this.client.listProjects(this.signal).then(
      projects => listOf(projects),
      (error: unknown) => {
        if (isMissingRoute(error)) return undefined
        throw error
      }
    )
    return this.#projects
  }

  /** A list as Coolify gives it; a kind the server has no route for has nothing to find. */
  private async read(kind: ResourceKind): Promise<Listed[]> {
    let rows: unknown
    try {
      rows =
        kind === 'application'
          ? await this.client.listApplications(this.signal)
          : kind === 'service'
            ? await this.client.listServices(this.signal)
            : await this.client.listDatabases(this.signal)
    } catch (error) {
      if (kind !== 'application' && isMissingRoute(error)) return []
      throw error
    }
    if (!Array.isArray(rows)) {
      throw new ActionError(
        `GET /${kind === 'application' ? 'applications' : `${kind}s`}: Coolify's answer is not a list; check \`coolify-url\`.`
      )
    }
    return rows.flatMap(row => {
      const { uuid, name, environment_id } = (row ?? {}) as {
        uuid?: unknown
        name?: unknown
        environment_id?: unknown
      }
      if (typeof uuid !== 'string' || !uuid) return []
      return [
        {
          uuid,
          name: typeof name === 'string' ? name.trim() : '',
          kind,
          environmentId: typeof environment_id === 'number' ? environment_id : undefined
        }
      ]
    })
  }
}

/** The config with what `app` names resolved into `appUuids`; as it was without `app`. */
export async function resolveApps(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal,
  say: Say
): Promise<Config> {
  if (config.appNames.length === 0) return config
  const resolved = await resolveNames(client, config.appNames, signal)
  for (const { value, resource } of resolved) {
    say.debug(`app "${value}": the ${resource.kind} ${resource.name} (${resource.uuid})`)
  }
  return { ...config, appUuids: resolved.map(({ resource }) => resource.uuid), appNames: [] }
}
