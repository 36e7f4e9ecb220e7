import type { CoolifyClient } from '../coolify/client.js'
import { timeOf } from '../coolify/dates.js'
import { CoolifyError, isGone, isMissingRoute } from '../coolify/errors.js'
import { sleep } from '../coolify/pacing.js'
import type {
  ApplicationDetail,
  ApplicationSummary,
  Destination,
  EnvVariable
} from '../coolify/types.js'
import { ActionError, describeError } from '../errors.js'
import { isFromFork, type PullRequestEvent } from '../event.js'
import { host } from '../host.js'
import type { Config } from '../inputs.js'
import { writeVariables } from '../rollout/configure.js'
import { mask, MIN_MASKED_LENGTH } from '../secrets.js'
import { deadline, linked } from '../signals.js'
import { flattenApplication } from './fields.js'
import {
  planReviewApp,
  reviewAppRepairs,
  tracesOfProduction,
  WEBHOOK_SECRETS,
  type ReadBack,
  type ReviewPlan,
  type TemplateFacts,
  type Write
} from './plan.js'

/** The review app of this run's pull request, made from the template or found again. */
export interface ReviewApp {
  uuid: string
  name: string
  /** The settings the deploy applies to it: its branch and domains, `env`. */
  config: Config
}

interface Names {
  name: string
  /** What its description says once it is ready; found again by it. */
  marker: string
  /** What its description says while it is being set up: never deployed so. */
  pending: string
}

/** How often a run looks at a review app another run is setting up. */
const WAIT_FOR_OTHER_MS = 1000
/**
 * The longest a run waits for a review app another run is setting up: a setup takes seconds, so
 * one still unfinished after this was left by a run that stopped halfway.
 */
export const OTHER_RUN_WAIT_MS = 15_000

/**
 * Checks, before any request, what a review app needs from the event: a pull request of this
 * repository (Coolify builds branches of the template's repository only) and its branch.
 */
export function checkReviewEvent(config: Config, event: PullRequestEvent): void {
  if (!config.reviewApp) return
  if (isFromFork(event)) {
    throw new ActionError(
      `Pull request ${config.pr} comes from a fork (${event.headRepository}): Coolify builds branches of the template's repository only, so it gets no review app.`
    )
  }
  if (!config.gitBranch && !config.deletePreview && !event.headRef) {
    throw new ActionError(
      "Input `review-app` builds the pull request's branch, which the event does not name: run it on `pull_request`, or give `git-branch`."
    )
  }
}

/**
 * The review app for the pull request: found again by its name and marker, or made from the
 * template — cloned where Coolify can (4.3+), else created from the template's repository — and
 * set up by the plan (plan.ts) before anything deploys it, then read back: any trace of
 * production left on it deletes it and fails the step. A run that made one while another run made
 * one too keeps the older and deletes its own.
 */
export async function openReviewApp(
  client: CoolifyClient,
  config: Config,
  event: PullRequestEvent,
  signal: AbortSignal,
  undo: () => AbortSignal,
  note: (message: string) => void
): Promise<ReviewApp> {
  const { template, names } = await templateOf(client, config, signal)
  const branch = config.gitBranch ?? event.headRef!
  const compose = template.build_pack === 'dockercompose'
  // Set up just now, it needs nothing more; found again, its domain and branch are set again,
  // and `env`, as for any application (compose applications route by service, not `domains`).
  const target = (uuid: string, setUp: boolean): Config => ({
    ...config,
    appUuids: [uuid],
    pr: undefined,
    gitBranch: setUp ? undefined : branch,
    domains: setUp || compose ? undefined : config.reviewDomain,
    env: setUp ? undefined : config.env,
    reviewApp: false
  })
  const reviewApp = (uuid: string, setUp: boolean): ReviewApp => ({
    uuid,
    name: names.name,
    config: target(uuid, setUp)
  })

  const listed = await client.listApplications(signal)
  const found = reviewAppsIn(listed, names)
  const ready = found.find(app => app.description === names.marker)
  if (ready) {
    await repairFound(client, ready.uuid, names.name, signal, note)
    note(
      `Review app ${names.name} (${ready.uuid}) found: deploying pull request ${config.pr} to it`
    )
    return reviewApp(ready.uuid, false)
  }
  const destination = await cloneDestination(client, config, template.uuid, signal)
  const facts = await templateFacts(client, template, destination !== undefined, signal)
  const plan = planReviewApp(facts, {
    branch,
    domain: config.reviewDomain,
    env: config.env,
    pending: names.pending,
    marker: names.marker
  })
  if (plan.refused) {
    throw new ActionError(
      `No review app for pull request ${config.pr}: ${plan.refused.join('; ')}.`
    )
  }
  for (const warning of plan.warnings) host().warning(warning)
  // As the variables of debug logs: short values ("true", "3000") would star out the whole log.
  for (const line of plan.secrets.flatMap(secret => secret.split('\n'))) {
    if (line.length >= MIN_MASKED_LENGTH) mask(line)
  }
  const setup: Setup = { facts, plan, env: config.env, names }

  const unfinished = found[0]
  if (unfinished) {
    // Another run may be setting it up right now: give it a short while, then finish what it left.
    if ((await waitForOtherRun(client, unfinished.uuid, names, signal)) === 'ready') {
      return reviewApp(unfinished.uuid, false)
    }
    note(`Review app ${names.name} (${unfinished.uuid}) was left half set up: finishing it`)
    await setUp(client, unfinished.uuid, setup, signal, undo, note, { marked: true })
    return reviewApp(unfinished.uuid, true)
  }

  const before = new Set(namesakesIn(listed, names.name))
  if (destination?.sharesServer) host().warning(SHARED_SERVER_WARNING(names.name))
  const uuid = destination
    ? await cloneTemplate(client, template, destination.uuid, names, before, signal, undo, note)
    : await createFromRepository(client, config, template, { names, branch }, signal)
  note(`Review app ${names.name} (${uuid}) made from the template for pull request ${config.pr}`)
  const other = await setUp(client, uuid, setup, signal, undo, note, { marked: false })
  if (other) return reviewApp(other, false)
  const kept = await keepOlder(client, names, uuid, signal, undo, note)
  return reviewApp(kept, true)
}

/**
 * A review app found again is held to the table like a new one: what reaches production is put
 * back before it is deployed (one made by an older version of the action may carry it), and one
 * the table refuses is not deployed at all.
 */
async function repairFound(
  client: CoolifyClient,
  uuid: string,
  name: string,
  signal: AbortSignal,
  note: (message: string) => void
): Promise<void> {
  const { changes, refused } = reviewAppRepairs(
    flattenApplication(await client.getApplication(uuid, signal)),
    name
  )
  if (refused.length > 0) {
    throw new ActionError(
      `Review app ${uuid} was not deployed: ${refused.join('; ')}. Delete it (\`delete-preview\`) and run again.`
    )
  }
  const fields = Object.keys(changes)
  if (fields.length === 0) return
  await client.updateApplication(uuid, changes, signal)
  note(`Review app ${name} (${uuid}): put back ${fields.join(', ')} to Coolify's default`)
}

/** `delete-preview` with `review-app`: deletes the pull request's review app, if there is one. */
export async function deleteReviewApp(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal,
  note: (message: string) => void
): Promise<void> {
  const { names } = await templateOf(client, config, signal)
  const found = reviewAppsIn(await client.listApplications(signal), names)
  if (found.length === 0) {
    note(`No review app of pull request ${config.pr} in Coolify (already deleted)`)
    return
  }
  for (const app of found) {
    await deleteApplication(client, app.uuid, signal)
    note(`Coolify is deleting review app ${names.name} (${app.uuid})`)
  }
}

/** The template (`app-uuid`) and the names its review app for this pull request goes by. */
async function templateOf(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal
): Promise<{ template: ApplicationDetail; names: Names }> {
  const uuid = config.appUuids[0]
  const template = await client.getApplication(uuid, signal)
  const repository = process.env.GITHUB_REPOSITORY ?? 'this repository'
  const marker = `Review app for pull request #${config.pr} of ${repository}, template ${uuid}`
  const names = {
    name: `${template.name ?? uuid}-pr-${config.pr}`,
    marker,
    pending: `${marker} (being set up)`
  }
  return { template: { ...template, uuid }, names }
}

/** The uuids of the applications with this name. */
function namesakesIn(listed: unknown, name: string): string[] {
  return (Array.isArray(listed) ? (listed as ApplicationSummary[]) : [])
    .filter(app => app?.name === name && typeof app.uuid === 'string')
    .map(app => app.uuid)
}

/** Applications with the review app's name and marker, the oldest first; never any other. */
function reviewAppsIn(
  listed: unknown,
  names: Names
): Array<ApplicationSummary & { description: string }> {
  return (Array.isArray(listed) ? (listed as ApplicationSummary[]) : [])
    .filter(
      (app): app is ApplicationSummary & { description: string } =>
        app?.name === names.name &&
        typeof app.uuid === 'string' &&
        typeof app.description === 'string' &&
        (app.description === names.marker || app.description === names.pending)
    )
    .sort(olderFirst)
}

async function findReviewApps(
  client: CoolifyClient,
  names: Names,
  signal: AbortSignal
): Promise<Array<ApplicationSummary & { description: string }>> {
  return reviewAppsIn(await client.listApplications(signal), names)
}

/**
 * Coolify's API hides ids: the older is the one created first, and of two created in the same
 * second, the one with the smaller uuid, so that every run picks the same.
 */
function olderFirst(a: ApplicationSummary, b: ApplicationSummary): number {
  const time = (app: ApplicationSummary): number => timeOf(app.created_at) ?? Infinity
  return time(a) - time(b) || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0)
}

/**
 * What the template is, for the plan. A clone starts as the template does; an application created
 * from the repository (before 4.3) starts with none of its storages, labels or compose domains.
 */
async function templateFacts(
  client: CoolifyClient,
  template: ApplicationDetail,
  cloned: boolean,
  signal: AbortSignal
): Promise<TemplateFacts> {
  let variables
  try {
    variables = await client.listApplicationEnvs(template.uuid, signal)
  } catch (error) {
    if (!isMissingRoute(error)) throw error
  }
  variables = Array.isArray(variables) ? variables : []
  // Locked values are hidden from every token; any other hidden one means no `read:sensitive`.
  if (variables.some(v => v?.is_shown_once !== true && typeof v?.value !== 'string')) {
    throw new ActionError(
      "Coolify hides the template's variables from this token: a review app copies its preview variables and checks them against production's, which needs the `read:sensitive` ability."
    )
  }
  const base = {
    name: template.name ?? template.uuid,
    fields: flattenApplication(template),
    cloned,
    fqdn: template.fqdn,
    buildPack: template.build_pack,
    variables
  }
  if (!cloned) return { ...base, composeDomains: {}, persistentStorages: [], fileStorages: [] }
  const storages = await client.listApplicationStorages(template.uuid, signal)
  return {
    ...base,
    composeDomains: composeDomainsOf(template.docker_compose_domains),
    customLabels: labelsOf(template.custom_labels),
    persistentStorages: listOf(storages?.persistent_storages),
    fileStorages: listOf(storages?.file_storages)
  }
}

/** The review app as Coolify now has it, to compare with the plan's target. */
async function readBack(
  client: CoolifyClient,
  uuid: string,
  signal: AbortSignal
): Promise<ReadBack> {
  const app = await client.getApplication(uuid, signal)
  const storages = await client.listApplicationStorages(uuid, signal).catch(error => {
    if (isMissingRoute(error)) return undefined
    throw error
  })
  const variables = await listed(client.listApplicationEnvs(uuid, signal))
  return {
    fields: flattenApplication(app),
    fqdn: app.fqdn,
    composeDomains: composeDomainsOf(app.docker_compose_domains),
    customLabels: labelsOf(app.custom_labels),
    autoDeploy: app.settings?.is_auto_deploy_enabled,
    gitCommitSha: app.git_commit_sha,
    webhookSecrets: WEBHOOK_SECRETS.filter(field => Boolean(app[field])),
    persistentStorages: listOf(storages?.persistent_storages),
    fileStorages: listOf(storages?.file_storages),
    variables
  }
}

function listOf<T>(value: T[] | undefined | null): T[] {
  return Array.isArray(value) ? value : []
}

/** docker_compose_domains, stored as JSON `{service: {domain}}`: each service's domain(s). */
function composeDomainsOf(stored: string | null | undefined): Record<string, string> {
  let parsed: unknown
  try {
    parsed = JSON.parse(stored ?? '{}')
  } catch {
    return {}
  }
  const domains: Record<string, string> = {}
  for (const [service, entry] of Object.entries(parsed ?? {})) {
    const domain = (entry as { domain?: unknown } | null)?.domain
    if (typeof domain === 'string') domains[service] = domain
  }
  return domains
}

/** custom_labels are stored base64-encoded; undefined when Coolify hid them. */
function labelsOf(stored: string | null | undefined): string | undefined {
  if (typeof stored !== 'string') return undefined
  return Buffer.from(stored, 'base64').toString('utf8')
}

interface Setup {
  facts: TemplateFacts
  plan: Exclude<ReviewPlan, { refused: string[] }>
  env?: EnvVariable[]
  names: Names
}

/**
 * Applies the plan to an application this run made, or finishes one a run left half set up.
 * Anything failing deletes it; when even that fails, the error names it. Returns the uuid of
 * another run's review app when that one was finished meanwhile (this run's is then deleted).
 */
async function setUp(
  client: CoolifyClient,
  uuid: string,
  { facts, plan, env, names }: Setup,
  signal: AbortSignal,
  undo: () => AbortSignal,
  note: (message: string) => void,
  state: { marked: boolean }
): Promise<string | undefined> {
  const [first, ...rest] = plan.writes
  const made = !state.marked
  try {
    await applyWrite(client, uuid, first, facts, env, signal)
    state.marked = true
    // One that another run finished meanwhile has passed that run's read-back: it is kept.
    const finished =
      made &&
      (await findReviewApps(client, names, signal)).find(
        app => app.uuid !== uuid && app.description === names.marker
      )
    if (finished) {
      note(`Another run made review app ${finished.uuid} first: keeping it, deleting ${uuid}`)
      await removeOrSay(client, uuid, undo(), note, 'it is marked as being set up')
      return finished.uuid
    }
    for (const write of rest) await applyWrite(client, uuid, write, facts, env, signal)
  } catch (error) {
    const left = await removeHalfMade(client, uuid, undo(), note)
    if (!left) throw error
    const marked = state.marked ? ' (it is marked as being set up, so no run deploys it)' : ''
    throw new ActionError(
      `${describeError(error)} Review app ${uuid} could not be deleted (${left})${marked}: delete it in Coolify.`
    )
  }
  return undefined
}

/** One write of the plan. */
async function applyWrite(
  client: CoolifyClient,
  uuid: string,
  write: Write,
  facts: TemplateFacts,
  env: EnvVariable[] | undefined,
  signal: AbortSignal
): Promise<void> {
  switch (write.kind) {
    case 'update':
      await client.updateApplication(uuid, write.changes, signal)
      return
    case 'delete-scheduled-tasks':
      for (const task of await listed(client.listScheduledTasks(uuid, signal))) {
        if (task?.uuid) await client.deleteScheduledTask(uuid, task.uuid, signal).catch(unlessGone)
      }
      return
    case 'remove-tags':
      // Servers before 4.2 have no tags per application, so a new app there has none.
      for (const tag of await listed(client.listApplicationTags(uuid, signal))) {
        if (tag?.uuid) await client.removeApplicationTag(uuid, tag.uuid, signal).catch(unlessGone)
      }
      return
    case 'delete-variables':
      for (const variable of await listed(client.listApplicationEnvs(uuid, signal))) {
        if (variable?.uuid) {
          await client.deleteApplicationEnv(uuid, variable.uuid, signal).catch(unlessGone)
        }
      }
      return
    case 'set-variables':
      await writeVariables(client, uuid, write.variables, signal)
      return
    case 'verify': {
      const traces = tracesOfProduction(facts, await readBack(client, uuid, signal), env)
      if (traces.length > 0) {
        throw new ActionError(
          `Review app ${uuid} still carried production's settings after its setup — ${traces.join('; ')} — so it was not deployed.`
        )
      }
    }
  }
}

/** A list Coolify answered; none on a server without the route. */
async function listed<T>(answer: Promise<T[]>): Promise<T[]> {
  try {
    return listOf(await answer)
  } catch (error) {
    if (isMissingRoute(error)) return []
    throw error
  }
}

/** Where a review app is cloned to, and whether that is the template's own server. */
interface CloneDestination {
  uuid: string
  /** True on the template's server; undefined when Coolify cannot tell (no such route). */
  sharesServer?: boolean
}

const SHARED_SERVER_WARNING = (name: string): string =>
  `Review app ${name} runs on the template's server: its build uses the host network and its container sits on production's Docker network, so pull request code can reach production's containers by name. Give \`review-destination\` a destination on a server without production to isolate review apps (see docs/review-apps.md).`

/**
 * `review-destination`, else the template's primary destination; none when Coolify has no clone
 * route (before 4.3). Whether it is on the template's server: the template's own destinations say
 * so for theirs, the server's list of destinations for any other.
 */
async function cloneDestination(
  client: CoolifyClient,
  config: Config,
  templateUuid: string,
  signal: AbortSignal
): Promise<CloneDestination | undefined> {
  let list: Destination[]
  try {
    const destinations = await client.listDestinations(templateUuid, signal)
    list = Array.isArray(destinations) ? destinations : []
  } catch (error) {
    if (isMissingRoute(error)) return undefined
    throw error
  }
  const primary = list.find(destination => destination?.is_primary) ?? list[0]
  if (!primary?.uuid) throw new ActionError('Coolify names no destination for the template.')
  const chosen = config.reviewPlacement.destination ?? primary.uuid
  const own = list.find(destination => destination?.uuid === chosen)
  if (own || !primary.server_uuid) {
    return { uuid: chosen, sharesServer: own ? own.server_uuid === primary.server_uuid : undefined }
  }
  try {
    const onServer = await client.listServerDestinations(primary.server_uuid, signal)
    const listed = Array.isArray(onServer) ? onServer : []
    return { uuid: chosen, sharesServer: listed.some(destination => destination?.uuid === chosen) }
  } catch (error) {
    if (isMissingRoute(error) || isGone(error)) return { uuid: chosen }
    throw error
  }
}

/**
 * A clone of the template into `review-destination` or its primary destination, not deployed. The clone is never sent
 * twice; when its answer is lost, the copy Coolify may have saved meanwhile — its name, not there
 * before the request, without a review marker — is found and deleted, or named.
 */
async function cloneTemplate(
  client: CoolifyClient,
  template: ApplicationDetail,
  destination: string,
  names: Names,
  before: Set<string>,
  signal: AbortSignal,
  undo: () => AbortSignal,
  note: (message: string) => void
): Promise<string> {
  let uuid: string | undefined
  try {
    const clone = await client.cloneApplication(
      template.uuid,
      { destination_uuid: destination, name: names.name },
      signal
    )
    uuid = clone?.uuid
  } catch (error) {
    if (!mayHaveActed(error)) throw needsWrite(error)
    throw new ActionError(
      `${describeError(error)} ${await removeLostCopies(client, names, before, undo(), note)}`
    )
  }
  if (typeof uuid !== 'string' || uuid === '') {
    const left = await removeLostCopies(client, names, before, undo(), note)
    throw new ActionError(`Coolify answered the clone without the review app's uuid. ${left}`)
  }
  return uuid
}

/** A failure after which Coolify may have saved what was asked: no answer, or a server error. */
function mayHaveActed(error: unknown): boolean {
  return (
    error instanceof CoolifyError &&
    !error.details.unsent &&
    (error.status === undefined || error.status >= 500)
  )
}

/** Deletes the copies a lost clone answer left behind; says what became of them. */
async function removeLostCopies(
  client: CoolifyClient,
  names: Names,
  before: Set<string>,
  signal: AbortSignal,
  note: (message: string) => void
): Promise<string> {
  let listed: ApplicationSummary[]
  try {
    listed = listOf(await client.listApplications(signal))
  } catch (error) {
    return `Whether Coolify made a copy named ${names.name} could not be checked (${describeError(error)}): look for one without a review marker in its description and delete it.`
  }
  const copies = listed.filter(
    app =>
      app?.name === names.name &&
      typeof app.uuid === 'string' &&
      !before.has(app.uuid) &&
      app.description !== names.marker &&
      app.description !== names.pending
  )
  if (copies.length === 0) return 'Coolify made no copy; nothing was deployed.'
  const left: string[] = []
  for (const copy of copies) {
    const failure = await removeHalfMade(client, copy.uuid, signal, note)
    if (failure) left.push(`${copy.uuid} (${failure})`)
  }
  if (left.length === 0) return 'The copy Coolify had made was deleted; nothing was deployed.'
  return `The copy Coolify made could not be deleted: ${left.join(', ')} — a copy of the template, domain and all: delete it in Coolify.`
}

async function createFromRepository(
  client: CoolifyClient,
  config: Config,
  template: ApplicationDetail,
  { names, branch }: { names: Names; branch: string },
  signal: AbortSignal
): Promise<string> {
  const { project, server, environment, deployKey, destination } = config.reviewPlacement
  const missing = [
    !project && 'review-project',
    !server && 'review-server',
    !environment && 'review-environment',
    !deployKey && 'review-deploy-key'
  ].filter(Boolean)
  if (missing.length > 0) {
    throw new ActionError(
      `This Coolify cannot clone applications (before 4.3): the review app is created from the template's repository, which needs ${missing.map(name => `\`${name}\``).join(', ')}.`
    )
  }
  if (!template.git_repository || !template.build_pack || !template.ports_exposes) {
    throw new ActionError(
      "Coolify did not give the template's repository, build pack and ports, which a review app is created with."
    )
  }
  const made = await client
    .createApplication(
      {
        project_uuid: project!,
        server_uuid: server!,
        environment_name: environment!,
        private_key_uuid: deployKey!,
        git_repository: template.git_repository,
        git_branch: branch,
        build_pack: template.build_pack,
        ports_exposes: template.ports_exposes,
        name: names.name,
        description: names.pending,
        ...(config.reviewDomain ? { domains: config.reviewDomain } : {}),
        ...(destination ? { destination_uuid: destination } : {})
      },
      signal
    )
    .catch(error => {
      if (
        error instanceof CoolifyError &&
        /multiple destinations/i.test(error.details.serverMessage ?? '')
      ) {
        throw error.withHint(
          `The server \`review-server\` has several destinations: give \`review-destination\`, the uuid of the one for review apps (the server's Destinations in Coolify)`
        )
      }
      throw needsWrite(error)
    })
  if (typeof made?.uuid !== 'string' || made.uuid === '') {
    throw new ActionError('Coolify answered without the uuid of the review app it made.')
  }
  return made.uuid
}

/**
 * Two runs for one pull request may each have made a review app: the older is kept, so this run
 * deletes its own when an older one exists, once that one is ready — or keeps its own after all
 * when the other run deleted that one meanwhile, or has not finished it within OTHER_RUN_WAIT_MS.
 */
async function keepOlder(
  client: CoolifyClient,
  names: Names,
  own: string,
  signal: AbortSignal,
  undo: () => AbortSignal,
  note: (message: string) => void
): Promise<string> {
  const found = await findReviewApps(client, names, signal)
  const ownIndex = found.findIndex(app => app.uuid === own)
  const older = ownIndex > 0 ? found[0] : undefined
  if (!older) return own
  const other = await waitForOtherRun(client, older.uuid, names, signal)
  if (other === 'gone') {
    note(`Review app ${older.uuid} of another run was deleted meanwhile: keeping ${own}`)
    return own
  }
  if (other === 'unfinished') {
    note(
      `Review app ${older.uuid} of another run is still being set up after ${OTHER_RUN_WAIT_MS / 1000} s (never deployed so): keeping ${own}`
    )
    return own
  }
  note(`Another run made review app ${older.uuid} first: keeping it, deleting ${own}`)
  await removeOrSay(client, own, undo(), note, 'it is a finished review app of this pull request')
  return older.uuid
}

/**
 * What becomes of a review app another run is setting up, within OTHER_RUN_WAIT_MS: ready, gone,
 * or still unfinished (a run that stopped halfway leaves it so).
 */
async function waitForOtherRun(
  client: CoolifyClient,
  uuid: string,
  names: Names,
  signal: AbortSignal
): Promise<'ready' | 'gone' | 'unfinished'> {
  const bound = deadline(OTHER_RUN_WAIT_MS)
  const waited = linked([signal, bound.signal])
  try {
    for (;;) {
      const app = await client.getApplication(uuid, waited.signal).catch(error => {
        if (isGone(error)) return undefined
        throw error
      })
      if (app?.description === names.marker) return 'ready'
      if (app?.description !== names.pending) return 'gone'
      await sleep(WAIT_FOR_OTHER_MS, waited.signal)
    }
  } catch (error) {
    if (bound.signal.aborted && !signal.aborted) return 'unfinished'
    throw error
  } finally {
    waited.release()
    bound.release()
  }
}

/** Deletes an application this run made; on failure, what went wrong. */
async function removeHalfMade(
  client: CoolifyClient,
  uuid: string,
  signal: AbortSignal,
  note: (message: string) => void
): Promise<string | undefined> {
  try {
    await deleteApplication(client, uuid, signal)
    note(`Deleted review app ${uuid}, which this run made`)
    return undefined
  } catch (error) {
    return describeError(error)
  }
}

/** Deletes an application this run made, and says so when Coolify would not. */
async function removeOrSay(
  client: CoolifyClient,
  uuid: string,
  signal: AbortSignal,
  note: (message: string) => void,
  state: string
): Promise<void> {
  const failure = await removeHalfMade(client, uuid, signal, note)
  if (failure)
    note(`Could not delete review app ${uuid} (${failure}); ${state}: delete it in Coolify`)
}

/** One already gone counts as deleted. */
async function deleteApplication(
  client: CoolifyClient,
  uuid: string,
  signal: AbortSignal
): Promise<void> {
  try {
    await client.deleteApplication(uuid, signal)
  } catch (error) {
    if (isGone(error)) return
    throw needsWrite(error)
  }
}

/** Removed already, by a run that set the same app up at the same time: done. */
function unlessGone(error: unknown): void {
  if (isGone(error)) return
  throw error
}

/** A 403 on making or deleting an application: the token lacks `write`. */
function needsWrite(error: unknown): unknown {
  if (error instanceof CoolifyError && error.status === 403) {
    return error.withHint(
      'Review apps need a token with the `write` ability (to clone, set up and delete applications)'
    )
  }
  return error
}
