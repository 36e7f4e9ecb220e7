import { listOf, timeOf } from '../coolify/answers.js'
import type { CoolifyClient } from '../coolify/client.js'
import { sleep } from '../coolify/pacing.js'
import type { HistoryItem } from '../coolify/types.js'
import type { TriggerMark } from '../model/mark.js'
import { isUnderWay } from '../model/status.js'

/** Coolify's clock and ours may differ a little; a deployment this much older still counts. */
const CLOCK_SLACK_MS = 5000
/** History rows read at a time: the newest few are enough to find one started moments ago. */
const HISTORY_ROWS = 10
/** Pages `trigger: false` reads at most in one search: a busy history's rows of other pull requests. */
const PAGES_SEARCHED = 20

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
  return (await findStartedRow(client, appUuid, mark, signal))?.deployment_uuid
}

/**
 * `findStarted`'s row, and whether it was created before the trigger: then another's, joined. The
 * slack that finds rows is no proof of ownership: a row from a second before the trigger's own
 * (Coolify stores whole seconds) is another's, which a cancel must leave alone.
 */
export async function findStartedRow(
  client: CoolifyClient,
  appUuid: string,
  mark: TriggerMark,
  signal: AbortSignal
): Promise<{ deployment_uuid: string; joined: boolean } | undefined> {
  const joined = (item: HistoryItem): boolean => {
    const created = timeOf(item.created_at)
    return created !== undefined && created < mark.at - (mark.at % 1000)
  }
  // One queued since the trigger is its own only where the API could have queued it: not a push
  // webhook's, nor one Coolify queued itself (another server's, once a deployment finished).
  const row = (await history(client, appUuid, signal)).find(
    item => isFrom(item, mark) && (joined(item) || queuedBy(item, mark))
  )
  if (!row) return undefined
  return { deployment_uuid: row.deployment_uuid, joined: joined(row) }
}

/** What the history shows of a trigger whose answer never came. */
export interface Created {
  /** The deployment it queued, when one row alone can be it. */
  uuid?: string
  /** Rows that could each be it; with more than one, none is taken. */
  candidates: number
}

/**
 * The deployment a trigger created, for the post step to cancel: a row created after it that
 * matches what it queued (see `queuedBy`), never one under way before it (a trigger that joined
 * another's deployment did not start it), and only when no other row could be it as well.
 */
export async function findCreated(
  client: CoolifyClient,
  appUuid: string,
  mark: TriggerMark,
  signal: AbortSignal
): Promise<Created> {
  const since = mark.at - CLOCK_SLACK_MS
  const created = (item: HistoryItem): boolean => (timeOf(item.created_at) ?? -Infinity) >= since
  const rows = (await history(client, appUuid, signal)).filter(
    item => queuedBy(item, mark) && created(item)
  )
  return rows.length === 1
    ? { uuid: rows[0].deployment_uuid, candidates: 1 }
    : { candidates: rows.length }
}

/**
 * Whether the row can be what an API trigger of `mark` queued: of its pull request, not a
 * webhook's nor the UI's (where Coolify says), and of its commit: the pinned one with `commit`,
 * else `HEAD`, which the job turns into the head's sha once it starts, so a row of a sha counts
 * only when Coolify says the API queued it. A push webhook always queues a sha.
 */
function queuedBy(item: HistoryItem, mark: TriggerMark): boolean {
  if (typeof item?.deployment_uuid !== 'string') return false
  if (Number(item.pull_request_id ?? 0) !== (mark.pr ?? 0)) return false
  if (item.is_webhook === true || item.is_api === false) return false
  const commit = typeof item.commit === 'string' && item.commit ? item.commit : 'HEAD'
  if (mark.commit) return sameCommit(commit, mark.commit)
  return commit === 'HEAD' || item.is_api === true
}

/**
 * The newest deployment of `commit` (and of pull request `pr`, or production) in the
 * application's history, whenever it was created and whatever its status: what `trigger: false`
 * follows. Another commit's deployment is never taken. Pages through the history, newest first,
 * until it finds one, reaches `seen` (the newest row an earlier search read: older ones were
 * searched then), the end of the history, or PAGES_SEARCHED pages.
 */
export async function findOfCommit(
  client: CoolifyClient,
  appUuid: string,
  { commit, pr }: { commit: string; pr?: number },
  signal: AbortSignal,
  seen?: string
): Promise<{ uuid?: string; newest?: string }> {
  const ofCommit = (item: HistoryItem): boolean =>
    typeof item?.deployment_uuid === 'string' &&
    Number(item.pull_request_id ?? 0) === (pr ?? 0) &&
    typeof item.commit === 'string' &&
    sameCommit(item.commit, commit)
  let newest: string | undefined
  for (let page = 0; page < PAGES_SEARCHED; page++) {
    const rows = await history(client, appUuid, signal, page * HISTORY_ROWS)
    newest ??= rows[0]?.deployment_uuid
    for (const item of rows) {
      if (ofCommit(item)) return { uuid: item.deployment_uuid, newest }
      if (seen !== undefined && item?.deployment_uuid === seen) return { newest }
    }
    if (rows.length < HISTORY_ROWS) break
  }
  return { newest }
}

/** `findOfCommit` until it finds one or `signal` aborts (then undefined), in the step's turns. */
export async function findOfCommitWithin(
  client: CoolifyClient,
  appUuid: string,
  wanted: { commit: string; pr?: number; pollIntervalMs: number },
  turn: (signal: AbortSignal) => Promise<void>,
  signal: AbortSignal
): Promise<string | undefined> {
  let seen: string | undefined
  try {
    for (;;) {
      await turn(signal)
      const found = await findOfCommit(client, appUuid, wanted, signal, seen)
      if (found.uuid) return found.uuid
      seen = found.newest ?? seen
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
  signal: AbortSignal,
  skip = 0
): Promise<HistoryItem[]> {
  const answer = await client.listDeployments(appUuid, HISTORY_ROWS, signal, skip)
  return listOf(answer?.deployments)
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
