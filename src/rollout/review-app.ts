import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError } from '../coolify/errors.js'
import { sleep } from '../coolify/pacing.js'
import type { ApplicationSummary, EnvVariable } from '../coolify/types.js'
import { ActionError, describeError } from '../errors.js'
import { isFromFork, type PullRequestEvent } from '../event.js'
import type { Config } from '../inputs.js'
import { isMissingRoute } from './configure.js'
import { timeOf } from './deployment.js'

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
/** How long a review app found half set up may still be another run's work in progress. */
const UNFINISHED_WAIT_MS = 15_000

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
 * set up before anything deploys it: no production domain, tags or variables. A run that made one
 * while another run made one too keeps the older and deletes its own.
 */
export async function openReviewApp(
  client: CoolifyClient,
  config: Config,
  event: PullRequestEvent,
  signal: AbortSignal,
  undo: () => AbortSignal,
  note: (message: string) => void
): Promise<ReviewApp> {
  const templateUuid = config.appUuids[0]
  const template = await client.getApplication(templateUuid, signal)
  const templateName = template.name ?? templateUuid
  const names = namesFor(templateName, config, templateUuid)
  const hasDomain = Boolean(template.fqdn?.trim())
  if (hasDomain && !config.reviewDomain) {
    throw new ActionError(
      `Input \`review-domain\` is needed: the template ${templateName} has a domain, which a review app would take over from production; give one like https://pr-{pr}.preview.example.com.`
    )
  }
  const branch = config.gitBranch ?? event.headRef!
  // Set up just now, it needs nothing more; found again, its domain and branch are set again,
  // and `env`, as for any application.
  const target = (uuid: string, setUp: boolean): Config => ({
    ...config,
    appUuids: [uuid],
    pr: undefined,
    gitBranch: setUp ? undefined : branch,
    domains: setUp ? undefined : config.reviewDomain,
    env: setUp ? undefined : config.env,
    reviewApp: false
  })

  const found = await findReviewApps(client, names, signal)
  const ready = found.find(app => app.description === names.marker)
  if (ready) {
    note(
      `Review app ${names.name} (${ready.uuid}) found: deploying pull request ${config.pr} to it`
    )
    return { uuid: ready.uuid, name: names.name, config: target(ready.uuid, false) }
  }
  const variables = withInput(await previewVariables(client, templateUuid, signal), config.env)
  const setup = { names, branch, domains: config.reviewDomain, variables }
  const unfinished = found[0]
  if (unfinished) {
    // Another run may be setting it up right now: give it time, then finish what it left.
    const waited = AbortSignal.any([signal, AbortSignal.timeout(UNFINISHED_WAIT_MS)])
    if (await waitUntilReady(client, unfinished.uuid, names, waited).catch(() => false)) {
      return { uuid: unfinished.uuid, name: names.name, config: target(unfinished.uuid, false) }
    }
    note(`Review app ${names.name} (${unfinished.uuid}) was left half set up: finishing it`)
    await markPending(client, unfinished.uuid, setup, signal)
    await finishSetup(client, unfinished.uuid, setup, signal)
    return { uuid: unfinished.uuid, name: names.name, config: target(unfinished.uuid, true) }
  }

  const uuid = await makeReviewApp(client, config, template, { names, branch }, signal, note)
  try {
    // One that another run finished meanwhile has passed that run's check below: it is kept.
    await markPending(client, uuid, setup, signal)
    const finished = (await findReviewApps(client, names, signal)).find(
      app => app.uuid !== uuid && app.description === names.marker
    )
    if (finished) {
      note(`Another run made review app ${finished.uuid} first: keeping it, deleting ${uuid}`)
      await removeHalfMade(client, uuid, undo(), note)
      return { uuid: finished.uuid, name: names.name, config: target(finished.uuid, false) }
    }
    await finishSetup(client, uuid, setup, signal)
  } catch (error) {
    await removeHalfMade(client, uuid, undo(), note)
    throw error
  }
  const kept = await keepOlder(client, names, uuid, signal, undo, note)
  return { uuid: kept, name: names.name, config: target(kept, true) }
}

/** `delete-preview` with `review-app`: deletes the pull request's review app, if there is one. */
export async function deleteReviewApp(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal,
  note: (message: string) => void
): Promise<void> {
  const templateUuid = config.appUuids[0]
  const template = await client.getApplication(templateUuid, signal)
  const names = namesFor(template.name ?? templateUuid, config, templateUuid)
  const found = await findReviewApps(client, names, signal)
  if (found.length === 0) {
    note(`No review app of pull request ${config.pr} in Coolify (already deleted)`)
    return
  }
  for (const app of found) {
    await deleteApplication(client, app.uuid, signal)
    note(`Coolify is deleting review app ${names.name} (${app.uuid})`)
  }
}

function namesFor(templateName: string, config: Config, templateUuid: string): Names {
  const repository = process.env.GITHUB_REPOSITORY ?? 'this repository'
  const marker = `Review app for pull request #${config.pr} of ${repository}, template ${templateUuid}`
  return {
    name: `${templateName}-pr-${config.pr}`,
    marker,
    pending: `${marker} (being set up)`
  }
}

/** Applications with the review app's name and marker, the oldest first; never any other. */
async function findReviewApps(
  client: CoolifyClient,
  names: Names,
  signal: AbortSignal
): Promise<Array<ApplicationSummary & { description: string }>> {
  const apps = await client.listApplications(signal)
  return (Array.isArray(apps) ? apps : [])
    .filter(
      (app): app is ApplicationSummary & { description: string } =>
        app?.name === names.name &&
        typeof app.uuid === 'string' &&
        typeof app.description === 'string' &&
        (app.description === names.marker || app.description === names.pending)
    )
    .sort(olderFirst)
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
 * A new application for the pull request, not deployed: a clone of the template into its primary
 * destination, or, on servers without the clone route, one created from the template's
 * repository where the `review-*` inputs say. Its description says at once that it is being set
 * up, and its domain is no longer production's.
 */
async function makeReviewApp(
  client: CoolifyClient,
  config: Config,
  template: ApplicationSummary & { ports_exposes?: string },
  { names, branch }: { names: Names; branch: string },
  signal: AbortSignal,
  note: (message: string) => void
): Promise<string> {
  const destination = await primaryDestination(client, template.uuid, signal)
  let uuid: string | undefined
  if (destination) {
    const clone = await client
      .cloneApplication(template.uuid, { destination_uuid: destination, name: names.name }, signal)
      .catch(error => {
        throw needsWrite(error)
      })
    uuid = clone?.uuid
  } else {
    uuid = (await createFromRepository(client, config, template, { names, branch }, signal))?.uuid
  }
  if (typeof uuid !== 'string' || uuid === '') {
    throw new ActionError('Coolify answered without the uuid of the review app it made.')
  }
  note(`Review app ${names.name} (${uuid}) made from the template for pull request ${config.pr}`)
  return uuid
}

/** The template's primary destination; none when the server has no such route (before 4.3). */
async function primaryDestination(
  client: CoolifyClient,
  templateUuid: string,
  signal: AbortSignal
): Promise<string | undefined> {
  try {
    const destinations = await client.listDestinations(templateUuid, signal)
    const list = Array.isArray(destinations) ? destinations : []
    const primary = list.find(destination => destination?.is_primary) ?? list[0]
    if (!primary?.uuid) throw new ActionError('Coolify names no destination for the template.')
    return primary.uuid
  } catch (error) {
    if (isMissingRoute(error)) return undefined
    throw error
  }
}

async function createFromRepository(
  client: CoolifyClient,
  config: Config,
  template: ApplicationSummary & { ports_exposes?: string },
  { names, branch }: { names: Names; branch: string },
  signal: AbortSignal
): Promise<{ uuid?: string }> {
  const { project, server, environment, deployKey } = config.reviewPlacement
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
  return client
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
        ...(config.reviewDomain ? { domains: config.reviewDomain } : {})
      },
      signal
    )
    .catch(error => {
      throw needsWrite(error)
    })
}

/**
 * The template's preview variables, to become the review app's own: pull request code never gets
 * production's. Copying them needs their values, which only `read:sensitive` shows.
 */
async function previewVariables(
  client: CoolifyClient,
  templateUuid: string,
  signal: AbortSignal
): Promise<EnvVariable[]> {
  let listed
  try {
    listed = await client.listApplicationEnvs(templateUuid, signal)
  } catch (error) {
    if (isMissingRoute(error)) return []
    throw error
  }
  const previews = (Array.isArray(listed) ? listed : []).filter(
    variable => variable?.is_preview === true && typeof variable.key === 'string'
  )
  if (previews.some(variable => typeof variable.value !== 'string')) {
    throw new ActionError(
      "Coolify hides the template's preview variables from this token: a review app copies them, which needs the `read:sensitive` ability."
    )
  }
  return previews.map(variable => ({ key: variable.key!, value: variable.value! }))
}

/** The template's preview variables, and `env` over them. */
function withInput(variables: EnvVariable[], env: EnvVariable[] | undefined): EnvVariable[] {
  const byKey = new Map(variables.map(variable => [variable.key, variable.value]))
  for (const variable of env ?? []) byKey.set(variable.key, variable.value)
  return [...byKey].map(([key, value]) => ({ key, value }))
}

/**
 * The rest of what makes an application marked as being set up (`markPending`) a review app,
 * before anything deploys it: none of the template's tags (a `tag` deploy of production must
 * never reach it); none of production's variables, but the template's preview ones and `env`.
 * Done again on an app a run left half set up. The description says it is ready last.
 */
async function finishSetup(
  client: CoolifyClient,
  uuid: string,
  { names, variables }: { names: Names; variables: EnvVariable[] },
  signal: AbortSignal
): Promise<void> {
  try {
    const tags = await client.listApplicationTags(uuid, signal)
    for (const tag of Array.isArray(tags) ? tags : []) {
      if (tag?.uuid) await client.removeApplicationTag(uuid, tag.uuid, signal).catch(unlessGone)
    }
  } catch (error) {
    // Servers before 4.2 have no tags per application, so a new app there has none.
    if (!isMissingRoute(error)) throw error
  }
  const listed = await client.listApplicationEnvs(uuid, signal).catch(error => {
    if (isMissingRoute(error)) return []
    throw error
  })
  for (const variable of Array.isArray(listed) ? listed : []) {
    if (variable?.is_preview !== true && variable?.uuid) {
      await client.deleteApplicationEnv(uuid, variable.uuid, signal).catch(unlessGone)
    }
  }
  if (variables.length > 0) await client.updateApplicationEnvs(uuid, variables, signal)
  await client.updateApplication(uuid, { description: names.marker }, signal)
}

/** First of all: the description says it is being set up, and the domain is no longer production's. */
async function markPending(
  client: CoolifyClient,
  uuid: string,
  { names, branch, domains }: { names: Names; branch: string; domains?: string },
  signal: AbortSignal
): Promise<void> {
  await client.updateApplication(
    uuid,
    { description: names.pending, git_branch: branch, ...(domains ? { domains } : {}) },
    signal
  )
}

/**
 * Two runs for one pull request may each have made a review app: the older is kept, so this run
 * deletes its own when an older one exists, once that one is ready — or keeps its own after all
 * when the other run deleted that one meanwhile.
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
  note(`Another run made review app ${older.uuid} first: keeping it, deleting ${own}`)
  if (!(await waitUntilReady(client, older.uuid, names, signal))) {
    note(`Review app ${older.uuid} was deleted meanwhile: keeping ${own}`)
    return own
  }
  await removeHalfMade(client, own, undo(), note)
  return older.uuid
}

/**
 * Until the other run has set the review app up (it is never deployed before); false when it
 * is gone.
 */
async function waitUntilReady(
  client: CoolifyClient,
  uuid: string,
  names: Names,
  signal: AbortSignal
): Promise<boolean> {
  for (;;) {
    const app = await client.getApplication(uuid, signal).catch(error => {
      if (error instanceof CoolifyError && error.status === 404) return undefined
      throw error
    })
    if (!app || (app.description !== names.marker && app.description !== names.pending)) {
      return false
    }
    if (app.description === names.marker) return true
    await sleep(WAIT_FOR_OTHER_MS, signal)
  }
}

/** Deletes an application this run made; says so when Coolify would not. */
async function removeHalfMade(
  client: CoolifyClient,
  uuid: string,
  signal: AbortSignal,
  note: (message: string) => void
): Promise<void> {
  try {
    await deleteApplication(client, uuid, signal)
    note(`Deleted review app ${uuid}, which this run made`)
  } catch (error) {
    note(
      `Could not delete review app ${uuid}: ${describeError(error)}; it is marked as being set up, so it is never deployed so and the next run finishes it`
    )
  }
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
    if (error instanceof CoolifyError && error.status === 404 && !isMissingRoute(error)) return
    throw needsWrite(error)
  }
}

/** Removed already, by a run that set the same app up at the same time: done. */
function unlessGone(error: unknown): void {
  if (error instanceof CoolifyError && error.status === 404 && !isMissingRoute(error)) return
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
