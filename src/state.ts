import * as core from '@actions/core'
import type { DeploymentView } from './rollout/deployment.js'

const TRIGGER = 'trigger'
const PENDING = 'pending-deployments'
const PINS = 'commit-pins'

/** What the main step is about to deploy, saved before the trigger goes out. */
export interface SavedTrigger {
  appUuids: string[]
  pr?: number
  /** When the trigger went out (epoch ms). */
  at: number
}

export interface PendingDeployment {
  uuid: string
  name: string
}

/**
 * Records, for the post step, what the main step deploys: the trigger before it goes out, then the
 * deployments it waits on. Cleared when the wait is over, so a main step killed in between leaves
 * them behind for the post step to cancel — also a deployment whose trigger's answer never came.
 */
export function saveTrigger(trigger: SavedTrigger | undefined): void {
  core.saveState(TRIGGER, trigger ? JSON.stringify(trigger) : '')
}

export function readTrigger(): SavedTrigger | undefined {
  const value = parse(core.getState(TRIGGER)) as Partial<SavedTrigger> | undefined
  if (!value || !Array.isArray(value.appUuids) || typeof value.at !== 'number') return undefined
  const appUuids = value.appUuids.filter(uuid => typeof uuid === 'string')
  return { appUuids, at: value.at, pr: typeof value.pr === 'number' ? value.pr : undefined }
}

export function savePending(deployments: readonly DeploymentView[]): void {
  const pending: PendingDeployment[] = deployments.flatMap(({ uuid, name }) =>
    uuid ? [{ uuid, name }] : []
  )
  core.saveState(PENDING, JSON.stringify(pending))
}

export function readPending(): PendingDeployment[] {
  const value = parse(core.getState(PENDING))
  return Array.isArray(value)
    ? value.filter(item => typeof item?.uuid === 'string' && typeof item?.name === 'string')
    : []
}

/** An application's `git_commit_sha` as it was before `commit` pinned it. */
export interface SavedPin {
  appUuid: string
  previous: string
}

/**
 * Records the pins to undo, before they are set: a main step killed between the pin and its undo
 * leaves them for the post step, so that no later deploy builds the pinned commit.
 */
export function savePins(pins: readonly SavedPin[]): void {
  core.saveState(PINS, pins.length ? JSON.stringify(pins) : '')
}

export function readPins(): SavedPin[] {
  const value = parse(core.getState(PINS))
  return Array.isArray(value)
    ? value.filter(pin => typeof pin?.appUuid === 'string' && typeof pin?.previous === 'string')
    : []
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined
  } catch {
    return undefined
  }
}
