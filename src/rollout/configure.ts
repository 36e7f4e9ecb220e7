import type { CoolifyClient } from '../coolify/client.js'
import { listOf } from '../coolify/answers.js'
import { CoolifyError, isMissingRoute } from '../coolify/errors.js'
import type { ApplicationChanges, EnvVariable, ListedEnvVariable } from '../coolify/types.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'

/**
 * Sets `git-branch`, `domains` and `env` on every application before it is deployed: variables
 * through PATCH /applications/{uuid}/envs/bulk (the previews' own with `pr`; the inputs refuse
 * `git-branch` and `domains` there, which have no preview form), the other settings through PATCH
 * /applications/{uuid} carrying only the fields given. A server without the bulk route (the seed
 * contract) takes the variables as one string in that PATCH instead. A change Coolify refuses
 * throws, so nothing is deployed with settings other than those asked for.
 */
export async function applySettings(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  const settings = settingsOf(config)
  const env = config.env
  if (Object.keys(settings).length === 0 && !env) return
  // Learnt from the first answer, so that later applications skip a route that is not there.
  let bulkRoute = true
  for (const uuid of config.appUuids) {
    try {
      const changes = { ...settings }
      const preview = config.pr !== undefined
      if (env && bulkRoute && !(await setVariables(client, uuid, env, preview, signal))) {
        bulkRoute = false
        say.note(
          "This Coolify has no route for bulk variables (an older server): setting them through the application's PATCH."
        )
      }
      if (env && !bulkRoute) changes.environment_variables = joined(env)
      if (Object.keys(changes).length > 0) await client.updateApplication(uuid, changes, signal)
    } catch (error) {
      if (error instanceof CoolifyError && error.status === 422) {
        throw error.withHint(
          'Check the `git-branch`, `domains` and `env` inputs; nothing was deployed'
        )
      }
      throw error
    }
    say.note(`${uuid}: set ${describeSettings(settings, env)}`)
  }
}

/** The application's fields `git-branch` and `domains` set. */
function settingsOf(config: Config): ApplicationChanges {
  const settings: ApplicationChanges = {}
  if (config.gitBranch !== undefined) settings.git_branch = config.gitBranch
  if (config.domains !== undefined) settings.domains = config.domains
  return settings
}

/** What `git-branch`, `domains` and `env` set, in words; undefined when they set nothing. */
export function settingsToApply(config: Config): string | undefined {
  const settings = settingsOf(config)
  if (Object.keys(settings).length === 0 && !config.env) return undefined
  return describeSettings(settings, config.env)
}

/** What was set, for the log: variable names, never their values. */
function describeSettings(settings: ApplicationChanges, env: EnvVariable[] | undefined): string {
  const done = Object.entries(settings).map(([field, value]) => `${field} to ${value}`)
  if (env) done.push(`environment variables ${env.map(variable => variable.key).join(', ')}`)
  return done.join(', ')
}

/**
 * Sets one application's variables: through the bulk route, or, on a server without it, as the
 * application's PATCH of `KEY=value` lines (which keeps no flags).
 */
export async function writeVariables(
  client: CoolifyClient,
  uuid: string,
  env: EnvVariable[],
  signal: AbortSignal
): Promise<void> {
  if (await setVariables(client, uuid, env, false, signal)) return
  await client.updateApplication(uuid, { environment_variables: joined(env) }, signal)
}

/**
 * True once set; false when the server has no bulk route, so nothing was set. Each existing
 * variable keeps its own flags: left out, Coolify would make a literal one interpolated and null
 * the others, which its database refuses.
 */
async function setVariables(
  client: CoolifyClient,
  uuid: string,
  env: EnvVariable[],
  preview: boolean,
  signal: AbortSignal
): Promise<boolean> {
  try {
    const existing = await client.listApplicationEnvs(uuid, signal)
    const items = env.map(variable => withOwnFlags(variable, existing, preview))
    await client.updateApplicationEnvs(uuid, items, signal)
    return true
  } catch (error) {
    if (isMissingRoute(error)) return false
    throw error
  }
}

/** The bulk route's item for `variable`: production's or the previews', with the flags it has. */
function withOwnFlags(
  variable: EnvVariable,
  existing: readonly ListedEnvVariable[],
  preview: boolean
): EnvVariable {
  const item: EnvVariable = preview ? { ...variable, is_preview: true } : { ...variable }
  const own = listOf<ListedEnvVariable>(existing).find(
    found => found?.key === variable.key && (found.is_preview ?? false) === preview
  )
  if (!own) return item
  return {
    ...item,
    is_literal: item.is_literal ?? own.is_literal ?? false,
    is_multiline: item.is_multiline ?? own.is_multiline ?? false,
    is_shown_once: item.is_shown_once ?? own.is_shown_once ?? false
  }
}

/** The seed contract's form: `KEY=value` lines. */
function joined(env: EnvVariable[]): string {
  return env.map(({ key, value }) => `${key}=${value}`).join('\n')
}
