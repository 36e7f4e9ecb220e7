import * as core from '@actions/core'
import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError } from '../coolify/errors.js'
import type { ApplicationChanges } from '../coolify/types.js'
import type { Config } from '../inputs.js'

/**
 * Sets `git-branch`, `domains` and `env` on every application before it is deployed, with PATCH
 * /applications/{uuid} carrying only the fields given. A change Coolify refuses throws, so nothing
 * is deployed with settings other than those asked for.
 */
export async function applySettings(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal
): Promise<void> {
  const changes: ApplicationChanges = {
    git_branch: config.gitBranch,
    domains: config.domains,
    environment_variables: config.env
  }
  const given = Object.entries(changes).filter(([, value]) => value !== undefined)
  if (given.length === 0) return
  for (const uuid of config.appUuids) {
    try {
      await client.updateApplication(uuid, Object.fromEntries(given), signal)
    } catch (error) {
      if (error instanceof CoolifyError && error.status === 422) {
        throw error.withHint(
          'Check the `git-branch`, `domains` and `env` inputs; nothing was deployed'
        )
      }
      throw error
    }
    core.info(
      `${uuid}: set ${given.map(([field, value]) => describeChange(field, value!)).join(', ')}`
    )
  }
}

/** What a change sets, for the log: variable names, never their values. */
function describeChange(field: string, value: string): string {
  if (field !== 'environment_variables') return `${field} to ${value}`
  const names = value.split('\n').map(line => line.slice(0, line.indexOf('=')))
  return `environment variables ${names.join(', ')}`
}
