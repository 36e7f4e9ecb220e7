/**
 * How a review app is known: the marker its description carries — the pull request, the
 * repository and the template's uuid — by which runs find it again, whatever the template is
 * called now or whether it still exists, and never take another application for it; and the name
 * a new one is given, `<template>-pr-<N>`.
 */
import { listOf, timeOf } from '../coolify/answers.js'
import type { CoolifyClient } from '../coolify/client.js'
import type { ApplicationDetail, ApplicationSummary } from '../coolify/types.js'
import type { Config } from '../config/inputs.js'

/** What a pull request's review app's description says: all it is found by. */
export interface Markers {
  /** What its description says once it is ready; found again by it. */
  marker: string
  /** What its description says while it is being set up: never deployed so. */
  pending: string
}

/** The markers, and the name a new review app is given. */
export interface Names extends Markers {
  name: string
}

/**
 * The markers of the pull request's review app of the template (`app-uuid`), naming the
 * repository the event says the run is in. No read of the template: it may be gone.
 */
export function markersOf(config: Config, repository: string | undefined): Markers {
  const where = repository ?? 'this repository'
  const marker = `Review app for pull request #${config.pr} of ${where}, template ${config.appUuids[0]}`
  return { marker, pending: `${marker} (being set up)` }
}

/** The template (`app-uuid`), the markers and the name of a new review app for this pull request. */
export async function templateOf(
  client: CoolifyClient,
  config: Config,
  repository: string | undefined,
  signal: AbortSignal
): Promise<{ template: ApplicationDetail; names: Names }> {
  const uuid = config.appUuids[0]
  const template = await client.getApplication(uuid, signal)
  const names = {
    name: `${template.name ?? uuid}-pr-${config.pr}`,
    ...markersOf(config, repository)
  }
  return { template: { ...template, uuid }, names }
}

/** The uuids of the applications with this name. */
export function namesakesIn(listed: unknown, name: string): string[] {
  return listOf<ApplicationSummary>(listed)
    .filter(app => app?.name === name && typeof app.uuid === 'string')
    .map(app => app.uuid)
}

/** A review app as the list shows it. */
export type FoundReviewApp = ApplicationSummary & { description: string }

/** Applications with the review app's marker, the oldest first; never any other. */
export function reviewAppsIn(listed: unknown, names: Markers): FoundReviewApp[] {
  return listOf<ApplicationSummary>(listed)
    .filter(
      (app): app is FoundReviewApp =>
        typeof app?.uuid === 'string' &&
        typeof app.description === 'string' &&
        (app.description === names.marker || app.description === names.pending)
    )
    .sort(olderFirst)
}

export async function findReviewApps(
  client: CoolifyClient,
  names: Markers,
  signal: AbortSignal
): Promise<FoundReviewApp[]> {
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
