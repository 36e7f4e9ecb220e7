import type { CoolifyClient } from '../coolify/client.js'
import type { HistoryItem } from '../coolify/types.js'
import { sleep } from '../coolify/pacing.js'
import { timeOf } from './deployment.js'
import { isUnderWay } from './status.js'

/** What a trigger asked for, to recognise the deployment it started in an application's history. */
export interface TriggerMark {
  /** When the trigger went out (epoch ms, this machine's clock). */
  at: number
  pr?: number
  /** The commit asked for, when one was. */
  commit?: string
}

/** Coolify's clock and ours may differ a little; a deployment this much older still counts. */
const CLOCK_SLACK_MS = 5000
/** History rows read: the newest few are enough to find one started moments ago. */
const HISTORY_ROWS = 10

/**
 * The deployment a trigger started or joined, from the application's history: the newest one
 * (of the same pull request and commit, where known) that was under way at the trigger or began
 * after it, whatever its status now — a quick deployment may have finished already. Undefined
 * when there is none.
 *
 * This resolves Coolify's placeholder uuids ("already queued" answers carry one it never saved),
 * a trigger whose answer was lost, and a trigger cut off by a cancelled run.
 */
export async function findStarted(
  client: CoolifyClient,
  appUuid: string,
  mark: TriggerMark,
  signal: AbortSignal
): Promise<string | undefined> {
  return (await history(client, appUuid, signal)).find(item => isFrom(item, mark))?.deployment_uuid
}

/**
 * The deployment a trigger created, for the post step to cancel: like `findStarted`, but never one
 * that was under way before it (a trigger that joined another run's deployment did not start it).
 */
export async function findCreated(
  client: CoolifyClient,
  appUuid: string,
  mark: TriggerMark,
  signal: AbortSignal
): Promise<string | undefined> {
  const since = mark.at - CLOCK_SLACK_MS
  const created = (item: HistoryItem): boolean => (timeOf(item.created_at) ?? -Infinity) >= since
  return (await history(client, appUuid, signal)).find(item => isFrom(item, mark) && created(item))
    ?.deployment_uuid
}

/**
 * The newest deployment of `commit` (and of pull request `pr`, or production) in the
 * application's history, whenever it was created and whatever its status: what `trigger: false`
 * follows. Another commit's deployment is never taken.
 */
export async function findOfCommit(
  client: CoolifyClient,
  appUuid: string,
  { commit, pr }: { commit: string; pr?: number },
  signal: AbortSignal
): Promise<string | undefined> {
  const rows = await history(client, appUuid, signal)
  return rows.find(
    item =>
      typeof item?.deployment_uuid === 'string' &&
      Number(item.pull_request_id ?? 0) === (pr ?? 0) &&
      typeof item.commit === 'string' &&
      sameCommit(item.commit, commit)
  )?.deployment_uuid
}

/** `findOfCommit` until it finds one or `signal` aborts (then undefined), in the step's turns. */
export async function findOfCommitWithin(
  client: CoolifyClient,
  appUuid: string,
  wanted: { commit: string; pr?: number; pollIntervalMs: number },
  turn: (signal: AbortSignal) => Promise<void>,
  signal: AbortSignal
): Promise<string | undefined> {
  try {
    for (;;) {
      await turn(signal)
      const found = await findOfCommit(client, appUuid, wanted, signal)
      if (found) return found
      await sleep(wanted.pollIntervalMs, signal)
    }
  } catch (error) {
    if (signal.aborted) return undefined
    throw error
  }
}

async function history(
  client: CoolifyClient,
  appUuid: string,
  signal: AbortSignal
): Promise<HistoryItem[]> {
  const answer = await client.listDeployments(appUuid, HISTORY_ROWS, signal)
  return Array.isArray(answer?.deployments) ? answer.deployments : []
}

function isFrom(item: HistoryItem, mark: TriggerMark): boolean {
  if (typeof item?.deployment_uuid !== 'string') return false
  if (item.pull_request_id !== undefined && Number(item.pull_request_id) !== (mark.pr ?? 0)) {
    return false
  }
  if (mark.commit && item.commit && item.commit !== 'HEAD' && !sameCommit(item.commit, mark.commit))
    return false
  const since = mark.at - CLOCK_SLACK_MS
  const created = timeOf(item.created_at)
  const finished = timeOf(item.finished_at)
  return (
    isUnderWay(item.status) ||
    (created !== undefined && created >= since) ||
    (finished !== undefined && finished >= since)
  )
}

/** Full or abbreviated SHAs of the same commit. */
export function sameCommit(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a]
  return short.length >= 7 && long.toLowerCase().startsWith(short.toLowerCase())
}
