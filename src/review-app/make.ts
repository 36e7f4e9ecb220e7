/**
 * Making a review app: a clone of the template where Coolify can clone (4.3+), else an application
 * created from the template's repository. Either is left for setup.ts to make safe to deploy.
 */
import { listOf } from '../coolify/answers.js'
import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError, isGone, isMissingRoute } from '../coolify/errors.js'
import type { ApplicationDetail, ApplicationSummary, Destination } from '../coolify/types.js'
import { ActionError, describeError } from '../errors.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import type { Names } from './names.js'
import { needsWrite, removeHalfMade } from './remove.js'

/** Where a review app is cloned to, and whether that is a server production runs on. */
export interface CloneDestination {
  uuid: string
  /** True on a server of one of the template's destinations; undefined when Coolify cannot tell. */
  sharesServer?: boolean
}

export const SHARED_SERVER_WARNING = (name: string): string =>
  `Review app ${name} runs on a server production runs on, as \`review-destination\` chose: pull request code shares that server's Docker daemon (an image LABEL can claim production's Traefik routes, FROM can build on production's image, the build cache is shared), its builds run on the host network, production's containers answer it by name on the destination's network, and on Coolify's own server Coolify's database and Redis are beside it. Give \`review-destination\` a destination on a server without production to isolate review apps (see docs/review-apps.md).`

/**
 * `review-destination`, refused when not given; none when Coolify has no clone route (before
 * 4.3). It shares production's server when that server holds any of the template's destinations,
 * primary or additional: production deploys to each (ApplicationDeploymentJob.php 2214-2249).
 */
export async function cloneDestination(
  client: CoolifyClient,
  config: Config,
  templateUuid: string,
  signal: AbortSignal
): Promise<CloneDestination | undefined> {
  let list: Destination[]
  try {
    const destinations = await client.listDestinations(templateUuid, signal)
    list = listOf(destinations)
  } catch (error) {
    if (isMissingRoute(error)) return undefined
    throw error
  }
  if (!list.some(destination => destination?.uuid)) {
    throw new ActionError('Coolify names no destination for the template.')
  }
  const production = new Set(
    list.map(destination => destination?.server_uuid).filter((uuid): uuid is string => !!uuid)
  )
  const chosen = config.reviewPlacement.destination
  if (!chosen) throw await noDestination(client, list, production, signal)
  if (list.some(destination => destination?.uuid === chosen)) {
    return { uuid: chosen, sharesServer: true }
  }
  let unknown = production.size === 0
  for (const server of production) {
    try {
      const onServer = listOf(await client.listServerDestinations(server, signal))
      if (onServer.some(destination => destination?.uuid === chosen)) {
        return { uuid: chosen, sharesServer: true }
      }
    } catch (error) {
      if (!isMissingRoute(error) && !isGone(error)) throw error
      unknown = true
    }
  }
  return { uuid: chosen, sharesServer: unknown ? undefined : false }
}

/** The refusal when `review-destination` is not given: the team's destinations, isolated or not. */
async function noDestination(
  client: CoolifyClient,
  template: Destination[],
  production: Set<string>,
  signal: AbortSignal
): Promise<ActionError> {
  let team = template
  try {
    team = listOf(await client.listTeamDestinations(signal))
  } catch (error) {
    if (!isMissingRoute(error)) throw error
  }
  const described = team
    .filter(destination => destination?.uuid)
    .map(destination => {
      const where = `${destination.uuid}${destination.name && destination.name !== destination.uuid ? ` (${destination.name})` : ''} on server ${destination.server_uuid ?? '?'}`
      return `${where}: ${destination.server_uuid && production.has(destination.server_uuid) ? "shares production's server" : 'isolated'}`
    })
  return new ActionError(
    `Review apps need \`review-destination\`: the uuid of a destination on a server without production, where pull request code cannot reach production's containers, Docker daemon or network. The team's destinations: ${described.join('; ')}.`
  )
}

/**
 * A clone of the template into `review-destination` or its primary destination, not deployed. The clone is never sent
 * twice; when its answer is lost, the copy Coolify may have saved meanwhile — its name, not there
 * before the request, without a review marker — is found and deleted, or named.
 */
export async function cloneTemplate(
  client: CoolifyClient,
  template: ApplicationDetail,
  destination: string,
  names: Names,
  before: Set<string>,
  signal: AbortSignal,
  undo: () => AbortSignal,
  say: Say
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
      `${describeError(error)} ${await removeLostCopies(client, names, before, undo(), say)}`
    )
  }
  if (typeof uuid !== 'string' || uuid === '') {
    const left = await removeLostCopies(client, names, before, undo(), say)
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
  say: Say
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
    const failure = await removeHalfMade(client, copy.uuid, signal, say)
    if (failure) left.push(`${copy.uuid} (${failure})`)
  }
  if (left.length === 0) return 'The copy Coolify had made was deleted; nothing was deployed.'
  return `The copy Coolify made could not be deleted: ${left.join(', ')} — a copy of the template, domain and all: delete it in Coolify.`
}

export async function createFromRepository(
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
