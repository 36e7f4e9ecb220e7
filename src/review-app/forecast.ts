/**
 * With `dry-run`: what the run would do for the pull request's review app, from reads only — the
 * review app found again or to be made, from which template, where it would land, what the plan
 * resets and removes, what it refuses.
 */
import type { CoolifyClient } from '../coolify/client.js'
import { ActionError } from '../errors.js'
import type { PullRequestEvent } from '../config/event.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import { flattenApplication } from './fields.js'
import { SHARED_SERVER_WARNING } from './make.js'
import { reviewAppsIn, templateOf } from './names.js'
import { headCommit } from './review-app.js'
import { reviewAppRepairs, type Write } from './plan.js'
import { planNew } from './setup.js'

/** Says what the run would do for the review app; throws what the run would refuse. */
export async function forecastReviewApp(
  client: CoolifyClient,
  config: Config,
  event: PullRequestEvent,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  const { template, names } = await templateOf(client, config, event.repository, signal)
  const branch = config.gitBranch ?? event.headRef!
  const commit = headCommit(event)
  const found = reviewAppsIn(await client.listApplications(signal), names)
  const ready = found.find(app => app.description === names.marker)
  if (ready) {
    const name = ready.name ?? names.name
    const app = await client.getApplication(ready.uuid, signal)
    const { changes, refused } = reviewAppRepairs(flattenApplication(app), name, commit)
    if (refused.length > 0) {
      throw new ActionError(
        `Review app ${ready.uuid} would not be deployed: ${refused.join('; ')}. Delete it (\`delete-preview\`) and run again.`
      )
    }
    const reset = Object.keys(changes).filter(field => field !== 'git_commit_sha')
    say.note(
      `Review app ${name} (${ready.uuid}) exists: it would be deployed with branch ${branch}, commit ${commit} pinned${reset.length ? `, after putting back ${reset.join(', ')}` : ''}`
    )
    return
  }
  const { destination, facts, plan } = await planNew(
    client,
    config,
    template,
    names,
    { branch, commit },
    signal
  )
  const made = destination
    ? `cloned from ${facts.name} (${template.uuid}) into destination ${destination.uuid}${destination.sharesServer ? ', on a server production runs on' : destination.sharesServer === false ? ', on another server' : ''}`
    : `created from the repository of ${facts.name} (${template.uuid}) in project ${config.reviewPlacement.project ?? '?'}, server ${config.reviewPlacement.server ?? '?'} (Coolify before 4.3 cannot clone)`
  const unfinished = found[0]
  say.note(
    unfinished
      ? `Review app ${unfinished.name ?? names.name} (${unfinished.uuid}) was left half set up: it would be finished as planned below`
      : `Review app ${names.name} would be ${made}`
  )
  for (const line of describeWrites(plan.writes, plan.target.domains)) say.note(`  ${line}`)
  for (const warning of plan.warnings) say.warn(warning)
  if (!unfinished && destination?.sharesServer) say.warn(SHARED_SERVER_WARNING(names.name))
}

/** The plan's writes in words: field and variable names, never values. */
function describeWrites(writes: readonly Write[], domains: string | undefined): string[] {
  const [first] = writes
  const reset =
    first?.kind === 'update'
      ? Object.keys(first.changes).filter(
          field => field !== 'description' && field !== 'git_commit_sha'
        )
      : []
  const pin = first?.kind === 'update' ? first.changes.git_commit_sha : undefined
  const variables = writes.flatMap(write =>
    write.kind === 'set-variables' ? write.variables.map(variable => variable.key) : []
  )
  const branch = writes.flatMap(write =>
    write.kind === 'update' && write.changes.git_branch ? [write.changes.git_branch] : []
  )
  return [
    `reset: ${reset.join(', ')}`,
    `commit: ${pin} pinned (the pull request's head)`,
    `domains: ${domains ?? 'none'}`,
    "removed: the template's scheduled tasks, tags and variables",
    `variables: ${variables.length ? variables.join(', ') : 'none'}`,
    `branch: ${branch.join(', ')}`,
    'then read back and checked for any trace of production before its first deploy'
  ]
}
