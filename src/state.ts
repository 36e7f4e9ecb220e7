import { host } from './host.js'
import type { TriggerMark } from './model/mark.js'

const KEY = 'rollouts'

/** What a trigger asked for, to recognise what it started when its answer was lost. */
export type SavedTrigger = TriggerMark

/** What the post step needs of one rollout, under the resource's uuid. */
export interface SavedRollout {
  /** The resource's name, for the post step's lines. */
  name?: string
  /** Set before POST /deploy goes out, cleared once its answer named the deployment. */
  trigger?: SavedTrigger
  /** Deployments this run started and has not seen end: the new version, never its rollback. */
  running?: string[]
  /** `git_commit_sha` as it was before a pin: set while a pin is on. */
  unpin?: string
  /** The commit pinned: `unpin` is put back only while this is still the one set. */
  pinned?: string
}

/**
 * The one store shared by the main and the post step: a record per rollout, changed field by field
 * and saved whole after every change (the runner keeps the last value), so a main step killed at
 * any point leaves the post step exactly what is still to undo, and no record overwrites another.
 */
export class RunState {
  readonly #rollouts: Map<string, SavedRollout>

  private constructor(rollouts: Map<string, SavedRollout>) {
    this.#rollouts = rollouts
  }

  /** An empty store, for the main step. */
  static empty(): RunState {
    return new RunState(new Map())
  }

  /** What the main step left, for the post step; empty when nothing was saved or it is unreadable. */
  static load(): RunState {
    const rollouts = new Map<string, SavedRollout>()
    const saved = parse(host().getState(KEY))
    if (saved && typeof saved === 'object') {
      for (const [key, value] of Object.entries(saved)) {
        const record = checked(value)
        if (record) rollouts.set(key, record)
      }
    }
    return new RunState(rollouts)
  }

  get(key: string): SavedRollout {
    return this.#rollouts.get(key) ?? {}
  }

  /** Every record with something left to undo. */
  entries(): Array<[string, SavedRollout]> {
    return [...this.#rollouts]
  }

  /** Merges `change` into the rollout's record (an undefined field is removed) and saves. */
  update(key: string, change: SavedRollout): void {
    const merged: SavedRollout = { ...this.get(key), ...change }
    for (const field of Object.keys(merged) as Array<keyof SavedRollout>) {
      const value = merged[field]
      if (value === undefined || (Array.isArray(value) && value.length === 0)) delete merged[field]
    }
    if (Object.keys(merged).length === 0) this.#rollouts.delete(key)
    else this.#rollouts.set(key, merged)
    host().saveState(
      KEY,
      this.#rollouts.size ? JSON.stringify(Object.fromEntries(this.#rollouts)) : ''
    )
  }
}

function checked(value: unknown): SavedRollout | undefined {
  if (!value || typeof value !== 'object') return undefined
  const { name, trigger, running, unpin, pinned } = value as Record<string, unknown>
  const record: SavedRollout = {}
  if (trigger && typeof trigger === 'object' && typeof (trigger as SavedTrigger).at === 'number') {
    const { at, pr, commit } = trigger as SavedTrigger
    record.trigger = {
      at,
      ...(typeof pr === 'number' ? { pr } : {}),
      ...(typeof commit === 'string' ? { commit } : {})
    }
  }
  if (Array.isArray(running)) {
    const uuids = running.filter((uuid): uuid is string => typeof uuid === 'string')
    if (uuids.length) record.running = uuids
  }
  if (typeof unpin === 'string') record.unpin = unpin
  if (typeof unpin === 'string' && typeof pinned === 'string') record.pinned = pinned
  // A name alone leaves nothing to do.
  if (Object.keys(record).length === 0) return undefined
  if (typeof name === 'string') record.name = name
  return record
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined
  } catch {
    return undefined
  }
}
