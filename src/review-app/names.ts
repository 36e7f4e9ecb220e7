/**
 * How a review app is known: its name, `<template>-pr-<N>`, and the marker its description carries,
 * by which runs find it again and never take another application for it.
 */
import { listOf, timeOf } from '../coolify/answers.js'
import type { CoolifyClient } from '../coolify/client.js'
import type { ApplicationDetail, ApplicationSummary } from '../coolify/types.js'
import type { Config } from '../inputs.js'

/** What a pull request's review app is called, and what its description says. */
export interface Names {
  name: string
  /** What its description says once it is ready; found again by it. */
  marker: string
  /** What its description says while it is being set up: never deployed so. */
  pending: string
}

/**
 * The template (`app-uuid`) and the names its review app for this pull request goes by; the
 * marker names the repository the event says the run is in.
 */
export async function templateOf(
  client: CoolifyClient,
  config: Config,
  repository: string | undefined,
  signal: AbortSignal
): Promise<{ template: ApplicationDetail; names: Names }> {
  const uuid = config.appUuids[0]
  const template = await client.getApplication(uuid, signal)
  const where = repository ?? 'this repository'
  const marker = `Review app for pull request #${config.pr} of ${where}, template ${uuid}`
  const names = {
    name: `${template.name ?? uuid}-pr-${config.pr}`,
    marker,
    pending: `${marker} (being set up)`
  }
  return { template: { ...template, uuid }, names }
}

/** The uuids of the applications with this name. */
export function namesakesIn(listed: unknown, name: string): string[] {
  return listOf<ApplicationSummary>(listed)
    .filter(app => app?.name === name && typeof app.uuid === 'string')
    .map(app => app.uuid)
}

/** Applications with the review app's name and marker, the oldest first; never any other. */
export function reviewAppsIn(
  listed: unknown,
  names: Names
): Array<ApplicationSummary & { description: string }> {
  return listOf<ApplicationSummary>(listed)
    .filter(
      (app): app is ApplicationSummary & { description: string } =>
        app?.name === names.name &&
        typeof app.uuid === 'string' &&
        typeof app.description === 'string' &&
        (app.description === names.marker || app.description === names.pending)
    )
    .sort(olderFirst)
}

export async function findReviewApps(
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
