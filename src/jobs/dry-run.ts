import type { CoolifyClient } from '../coolify/client.js'
import { releaseAtLeast } from '../coolify/answers.js'
import { isMissingAbility, isMissingRoute } from '../coolify/errors.js'
import type { PullRequestEvent } from '../config/event.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import { forecastReviewApp } from '../review-app/forecast.js'
import { settingsToApply } from '../rollout/configure.js'
import { commitToFollow } from '../rollout/launch.js'
import { readVersions, type AppVersion } from '../rollout/versions.js'

/** What the first reads of a dry run found out. */
export interface Access {
  /** Coolify's version ("4.3.11"); undefined where it has no version route. */
  version?: string
}

/**
 * `dry-run`, before the names are looked up: the address answers as Coolify's API, and which
 * version; the token is valid, of a team, and its user may use it (Coolify refuses a member's token
 * with more than `read` on every route, 403 "Missing required team role.").
 */
export async function checkAccess(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal,
  say: Say
): Promise<Access> {
  const version = await coolifyVersion(client, signal)
  const team = await teamName(client, signal)
  say.note(
    `${config.apiUrl} answers as Coolify's API${version ? ` (Coolify ${version})` : ' (no version route)'}; the token is valid${team ? ` and belongs to the team ${team}` : ''}`
  )
  return { version }
}

/**
 * `dry-run`, once the names resolved: the inputs fit the applications, the token holds the
 * abilities the run needs, and what the run would do — the deployments, the settings written, a
 * review app's plan — from reads only, not one request that changes Coolify. Throws what the run
 * would fail with.
 */
export async function forecast(
  client: CoolifyClient,
  config: Config,
  event: PullRequestEvent,
  { version }: Access,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  const versions =
    config.reviewApp || config.deletePreview
      ? undefined
      : await readVersions(client, config, signal)
  await checkAbilities(client, config, version, versions, signal, say)
  if (config.deletePreview) {
    say.note(
      config.reviewApp
        ? `Would delete pull request ${config.pr}'s review app of ${config.appUuids[0]}`
        : `Would remove the preview of pull request ${config.pr} of ${config.appUuids.join(', ')}`
    )
  } else if (config.reviewApp) {
    await forecastReviewApp(client, config, event, signal, say)
  } else {
    describeDeploy(config, event, versions, say)
  }
  say.note('Dry run: nothing was deployed or changed in Coolify.')
}

/** GET /version: "4.3.11"; undefined where Coolify has no such route. */
async function coolifyVersion(
  client: CoolifyClient,
  signal: AbortSignal
): Promise<string | undefined> {
  try {
    return (await client.version(signal)).replace(/^v/, '') || undefined
  } catch (error) {
    if (isMissingRoute(error)) return undefined
    throw error
  }
}

/** The token's team, by name; undefined before 4.3.0 (no GET /team). */
async function teamName(client: CoolifyClient, signal: AbortSignal): Promise<string | undefined> {
  try {
    const team = await client.team(signal)
    return typeof team?.name === 'string' && team.name ? team.name : undefined
  } catch (error) {
    if (isMissingRoute(error)) return undefined
    throw error
  }
}

/** Coolify 4.`minor` or later, its betas included; false for a version that does not say. */
function atLeast(version: string | undefined, minor: number): boolean {
  return version !== undefined && (releaseAtLeast(version, `4.${minor}.0-beta.0`) ?? false)
}

/**
 * The abilities the run needs beyond `read` (which every read so far proved), each with what needs
 * it: `deploy` to deploy and cancel, `write` for every setting the run writes.
 */
function abilitiesNeeded(
  config: Config,
  version: string | undefined,
  versions: readonly AppVersion[] | undefined
): Array<{ ability: 'deploy' | 'write'; why: string }> {
  const needed: Array<{ ability: 'deploy' | 'write'; why: string }> = []
  if (!config.deletePreview && (config.trigger || config.cancelOnTimeout || config.cancelOnAbort)) {
    needed.push({ ability: 'deploy', why: config.trigger ? 'deploying' : 'cancelling' })
  }
  // Rolling back edits the application on image apps, and everywhere before 4.3's rollback route.
  const rollbackWrites =
    config.rollbackOnFailure && ((versions ?? []).some(v => v.dockerImage) || !atLeast(version, 3))
  const writing = [
    config.gitBranch && '`git-branch`',
    config.domains && '`domains`',
    config.env && '`env`',
    config.imageTag && config.pr === undefined && '`image-tag`',
    config.commit && config.trigger && '`commit`',
    config.deletePreview && '`delete-preview`',
    config.reviewApp && '`review-app`',
    rollbackWrites && '`rollback-on-failure`'
  ].filter(Boolean)
  if (writing.length > 0) needed.push({ ability: 'write', why: writing.join(', ') })
  return needed
}

async function checkAbilities(
  client: CoolifyClient,
  config: Config,
  version: string | undefined,
  versions: readonly AppVersion[] | undefined,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  const needed = abilitiesNeeded(config, version, versions)
  // 4.2.0 and later answer a GET of a POST route with 405, after the ability check.
  if (!atLeast(version, 2)) {
    for (const { ability, why } of needed) {
      say.warn(
        `The token's \`${ability}\` ability (for ${why}) could not be checked: Coolify ${version ?? 'without a version route'} has no route that tells without acting (4.2.0 and later have).`
      )
    }
    return
  }
  for (const { ability, why } of needed) {
    try {
      await client.checkAbility(ability, signal)
    } catch (error) {
      if (!isMissingAbility(error)) throw error
      throw error.withHint(
        `The token lacks the \`${ability}\` ability, which ${why} needs: create a token with it (Keys & Tokens in Coolify, by an admin or owner of the team)`
      )
    }
  }
  const held = ['read', ...needed.map(({ ability }) => ability)]
  say.note(`The token holds what this run needs: ${held.join(', ')}`)
}

/** The deployments and the settings written before them, in words: variable names, never values. */
function describeDeploy(
  config: Config,
  event: PullRequestEvent,
  versions: readonly AppVersion[] | undefined,
  say: Say
): void {
  const named = (uuid: string): string => {
    const name = versions?.find(version => version.appUuid === uuid)?.name
    return name && name !== uuid ? `${name} (${uuid})` : uuid
  }
  const targets = config.tags.length
    ? `every resource tagged ${config.tags.join(', ')}`
    : config.appUuids.map(named).join(', ')
  if (!config.trigger) {
    const commit = commitToFollow(config, event)
    say.note(
      `Would start nothing: it would wait for the deployment Coolify starts by itself of commit ${commit.slice(0, 7)} of ${targets}`
    )
    return
  }
  const settings = settingsToApply(config)
  if (settings)
    for (const uuid of config.appUuids) say.note(`${named(uuid)}: would set ${settings}`)
  for (const version of versions ?? []) {
    if (config.imageTag && config.pr === undefined) {
      say.note(
        `${version.name}: would set the image tag to ${config.imageTag} (now ${version.imageTag ?? 'none'})`
      )
    } else if (config.commit) {
      // A pin already there may be another run's, which that run puts back: the run watches it
      // first (`standingPin`), and puts back what is set once it has settled.
      const back =
        version.pinned === 'HEAD'
          ? 'HEAD'
          : `what is pinned once it settles (now ${version.pinned}, which may be another run's pin: the run first watches whether it stays)`
      say.note(
        `${version.name}: would pin commit ${config.commit} for this deploy, then put back ${back}`
      )
    }
  }
  const how = [
    config.force && 'forced rebuild',
    config.pr !== undefined && `pull request ${config.pr}`,
    config.pr !== undefined && config.imageTag && `image tag ${config.imageTag}`
  ].filter(Boolean)
  say.note(
    `Would deploy ${targets} on ${config.instanceUrl}${how.length ? ` (${how.join(', ')})` : ''}`
  )
  if (config.rollbackOnFailure) {
    for (const version of versions ?? []) {
      const back = version.dockerImage ? version.imageTag : version.runningCommit
      say.note(
        `${version.name}: on failure would roll back to ${back ?? 'nothing (no earlier version found)'}`
      )
    }
  }
  if (config.healthUrl) say.note(`Then would check ${config.healthUrl}`)
}
