import type { CoolifyClient } from '../coolify/client.js'
import type { HistoryItem } from '../coolify/types.js'
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
