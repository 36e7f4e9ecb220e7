/**
 * The review app of a run: checked against the event, found again or made and set up, and, when
 * two runs made one each, the older kept.
 */
import type { CoolifyClient } from '../coolify/client.js'
import { isGone } from '../coolify/errors.js'
import { sleep } from '../coolify/pacing.js'
import { ActionError } from '../errors.js'
import { isFromFork, type PullRequestEvent } from '../config/event.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import { mask, worthMasking } from '../config/secrets.js'
import { deadline, linked } from '../time/signals.js'
import { cloneTemplate, createFromRepository, SHARED_SERVER_WARNING } from './make.js'
import { findReviewApps, namesakesIn, reviewAppsIn, templateOf, type Names } from './names.js'
import { removeOrSay } from './remove.js'
import { planNew, repairFound, setUp, type Setup } from './setup.js'

/** The review app of this run's pull request, made from the template or found again. */
export interface ReviewApp {
  uuid: string
  name: string
  /** The settings the deploy applies to it: its branch and domains, `env`. */
  config: Config
  /** What the summary says beside its deployment: made on a server production runs on. */
  warning?: string
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
 * repository (Coolify builds branches of the template's repository only), its branch and its
 * head commit.
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
  if (!config.deletePreview) headCommit(event)
}

/**
 * The commit the review app builds, pinned: the pull request's head as the event names it
 * (`pull_request.head.sha`; on GitLab the merge request's source branch), never what its branch
 * holds when the build starts — a push after the run was approved is not built by it.
 */
export function headCommit(event: PullRequestEvent): string {
  const sha = event.headSha
  if (!sha || !/^[0-9a-f]{40}$/i.test(sha)) {
    throw new ActionError(
      "Input `review-app` builds the pull request's head commit, which the event does not name as a full SHA: run it on `pull_request_target` (or `pull_request`)."
    )
  }
  return sha.toLowerCase()
}

/**
 * The review app for the pull request: found again by its marker, or made from the
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
  say: Say
): Promise<ReviewApp> {
  const { template, names } = await templateOf(client, config, event.repository, signal)
  const branch = config.gitBranch ?? event.headRef!
  const commit = headCommit(event)
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
  const reviewApp = (uuid: string, setUp: boolean, name = names.name): ReviewApp => ({
    uuid,
    name,
    config: target(uuid, setUp)
  })
  // One another run finished, or one found again: held to the table, pinned to this run's commit.
  const adopted = async (uuid: string, name = names.name): Promise<ReviewApp> => {
    await repairFound(client, uuid, name, commit, signal, say)
    return reviewApp(uuid, false, name)
  }

  const listed = await client.listApplications(signal)
  const found = reviewAppsIn(listed, names)
  const ready = found.find(app => app.description === names.marker)
  if (ready) {
    // Its own name: the template may have been renamed since it was made.
    const name = ready.name ?? names.name
    say.note(`Review app ${name} (${ready.uuid}) found: deploying pull request ${config.pr} to it`)
    return adopted(ready.uuid, name)
  }
  const { destination, facts, plan } = await planNew(
    client,
    config,
    template,
    names,
    { branch, commit },
    signal
  )
  for (const warning of plan.warnings) say.warn(warning)
  // As the variables of debug logs: "true" or "3000" would star out the whole log.
  for (const line of plan.secrets.flatMap(secret => secret.split('\n'))) {
    if (worthMasking(line)) mask(line)
  }
  const setup: Setup = { facts, plan, env: config.env, names }

  const unfinished = found[0]
  if (unfinished) {
    // Another run may be setting it up right now: give it a short while, then finish what it left.
    const name = unfinished.name ?? names.name
    if ((await waitForOtherRun(client, unfinished.uuid, names, signal)) === 'ready') {
      return adopted(unfinished.uuid, name)
    }
    say.note(`Review app ${name} (${unfinished.uuid}) was left half set up: finishing it`)
    await setUp(client, unfinished.uuid, setup, signal, undo, say, { marked: true })
    return reviewApp(unfinished.uuid, true, name)
  }

  const before = new Set(namesakesIn(listed, names.name))
  const warning = destination?.sharesServer ? SHARED_SERVER_WARNING(names.name) : undefined
  if (warning) say.warn(warning)
  const uuid = destination
    ? await cloneTemplate(client, template, destination.uuid, names, before, signal, undo, say)
    : await createFromRepository(client, config, template, { names, branch }, signal)
  say.note(
    `Review app ${names.name} (${uuid}) made from the template for pull request ${config.pr}`
  )
  const other = await setUp(client, uuid, setup, signal, undo, say, { marked: false })
  if (other) return { ...(await adopted(other)), warning }
  const kept = await keepOlder(client, names, uuid, signal, undo, say)
  return { ...(kept === uuid ? reviewApp(kept, true) : await adopted(kept)), warning }
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
  say: Say
): Promise<string> {
  const found = await findReviewApps(client, names, signal)
  const ownIndex = found.findIndex(app => app.uuid === own)
  const older = ownIndex > 0 ? found[0] : undefined
  if (!older) return own
  const other = await waitForOtherRun(client, older.uuid, names, signal)
  if (other === 'gone') {
    say.note(`Review app ${older.uuid} of another run was deleted meanwhile: keeping ${own}`)
    return own
  }
  if (other === 'unfinished') {
    say.note(
      `Review app ${older.uuid} of another run is still being set up after ${OTHER_RUN_WAIT_MS / 1000} s (never deployed so): keeping ${own}`
    )
    return own
  }
  say.note(`Another run made review app ${older.uuid} first: keeping it, deleting ${own}`)
  await removeOrSay(client, own, undo(), say, 'it is a finished review app of this pull request')
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
