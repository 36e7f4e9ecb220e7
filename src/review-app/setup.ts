/**
 * Setting a review app up: the plan (plan.ts) applied to one just made or left half set up, read
 * back and checked for traces of production; and a found one put back to the table.
 */
import { listOf } from '../coolify/answers.js'
import type { CoolifyClient } from '../coolify/client.js'
import { isMissingRoute } from '../coolify/errors.js'
import type { ApplicationDetail, EnvVariable } from '../coolify/types.js'
import { ActionError, describeError } from '../errors.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import { writeVariables } from '../rollout/configure.js'
import { flattenApplication } from './fields.js'
import { cloneDestination, type CloneDestination } from './make.js'
import { findReviewApps, type Names } from './names.js'
import {
  listedValue,
  planReviewApp,
  reviewAppRepairs,
  tracesOfProduction,
  WEBHOOK_SECRETS,
  type ReadBack,
  type ReviewPlan,
  type TemplateFacts,
  type Write
} from './plan.js'
import { removeHalfMade, removeOrSay, unlessGone } from './remove.js'

/**
 * A review app found again is held to the table like a new one: what reaches production is put
 * back before it is deployed (one made by an older version of the action may carry it), the pull
 * request's head commit is pinned, and one the table refuses is not deployed at all.
 */
export async function repairFound(
  client: CoolifyClient,
  uuid: string,
  name: string,
  commit: string,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  const { changes, refused } = reviewAppRepairs(
    flattenApplication(await client.getApplication(uuid, signal)),
    name,
    commit
  )
  if (refused.length > 0) {
    throw new ActionError(
      `Review app ${uuid} was not deployed: ${refused.join('; ')}. Delete it (\`delete-preview\`) and run again.`
    )
  }
  const { git_commit_sha: pin, ...reset } = changes
  const fields = Object.keys(reset)
  if (fields.length === 0 && !pin) return
  await client.updateApplication(uuid, changes, signal)
  if (pin) say.note(`Review app ${name} (${uuid}): pinned to commit ${pin}`)
  if (fields.length > 0) {
    say.note(`Review app ${name} (${uuid}): put back ${fields.join(', ')} to Coolify's default`)
  }
}

/**
 * Where a new review app would go and the writes that make it, refused before anything is made as
 * the run refuses it: what a run does next, and what a dry run says.
 */
export async function planNew(
  client: CoolifyClient,
  config: Config,
  template: ApplicationDetail & { uuid: string },
  names: Names,
  { branch, commit }: { branch: string; commit: string },
  signal: AbortSignal
): Promise<{
  destination?: CloneDestination
  facts: TemplateFacts
  plan: Exclude<ReviewPlan, { refused: string[] }>
}> {
  const destination = await cloneDestination(client, config, template.uuid, signal)
  const facts = await templateFacts(client, template, destination !== undefined, signal)
  const plan = planReviewApp(facts, {
    branch,
    commit,
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
  return { destination, facts, plan }
}

/**
 * What the template is, for the plan. A clone starts as the template does; an application created
 * from the repository (before 4.3) starts with none of its storages, labels or compose domains.
 */
export async function templateFacts(
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
  variables = listOf(variables)
  // Locked values are hidden from every token; any other hidden one means no `read:sensitive`.
  if (variables.some(v => v?.is_shown_once !== true && (!v || listedValue(v) === undefined))) {
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
  // Absent, not null, when hidden: labels the read-back cannot see would pass it unchecked.
  if (template.custom_labels === undefined) throw new ActionError(HIDDEN_LABELS)
  const storages = await client.listApplicationStorages(template.uuid, signal)
  return {
    ...base,
    composeDomains: composeDomainsOf(template.docker_compose_domains),
    customLabels: labelsOf(template.custom_labels),
    persistentStorages: listOf(storages?.persistent_storages),
    fileStorages: listOf(storages?.file_storages)
  }
}

const HIDDEN_LABELS =
  "Coolify hides the template's labels from this token: a review app's labels are checked for production's hosts before it is deployed, which needs the `read:sensitive` ability."

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

/** custom_labels are stored base64-encoded; undefined when Coolify hid them, '' when none. */
function labelsOf(stored: string | null | undefined): string | undefined {
  if (stored === undefined) return undefined
  if (typeof stored !== 'string') return ''
  return Buffer.from(stored, 'base64').toString('utf8')
}

export interface Setup {
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
export async function setUp(
  client: CoolifyClient,
  uuid: string,
  setup: Setup,
  signal: AbortSignal,
  undo: () => AbortSignal,
  say: Say,
  state: { marked: boolean }
): Promise<string | undefined> {
  const { plan, names } = setup
  const [first, ...rest] = plan.writes
  const made = !state.marked
  try {
    await applyWrite(client, uuid, first, setup, signal)
    state.marked = true
    // One that another run finished meanwhile has passed that run's read-back: it is kept.
    const finished =
      made &&
      (await findReviewApps(client, names, signal)).find(
        app => app.uuid !== uuid && app.description === names.marker
      )
    if (finished) {
      say.note(`Another run made review app ${finished.uuid} first: keeping it, deleting ${uuid}`)
      await removeOrSay(client, uuid, undo(), say, 'it is marked as being set up')
      return finished.uuid
    }
    for (const write of rest) await applyWrite(client, uuid, write, setup, signal)
  } catch (error) {
    const left = await removeHalfMade(client, uuid, undo(), say)
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
  { facts, plan, env }: Setup,
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
      const traces = tracesOfProduction(facts, await readBack(client, uuid, signal), {
        env,
        commit: plan.target.commit
      })
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
