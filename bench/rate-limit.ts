/**
 * Many apps under a rate limit: 30 applications deployed in one step, each deployment ending
 * 4–10 s after the trigger, at 60 requests a minute and at Coolify's default (200), with Coolify
 * 4.3.11's closing entry and without it (an older server), and with the applications' statuses
 * refreshed right after each deployment or only by Coolify's own status check, every few seconds.
 * How long after the last deployment ended the step ends, how many requests it sends and how many
 * Coolify refuses, whether the log survives the sharing, and the slowest run's requests in time.
 */
import type { FakeCoolify, RecordedRequest } from '../test/fake-coolify/index.js'
import { buildLogLines, type RunResult } from '../test/support/runner.js'
import { steadyBuild } from './builds.js'
import {
  API,
  app,
  exactlyOnce,
  fake,
  fixed,
  isRead,
  ROOMY_QUEUE,
  log,
  runStep,
  seconds,
  sleep,
  uuidOf,
  type Part,
  type Row
} from './common.js'

const APPS = 30
/** When the deployments turn `finished`, after the trigger: spread evenly over this range. */
const FIRST_END_MS = 4000
const LAST_END_MS = 10_000
/** Coolify's closing entry follows the final status by 0.4–1.2 s, as real Coolify writes it. */
const CLOSING_MIN_MS = 400
const CLOSING_MAX_MS = 1200
/** A log entry of two lines every 1.5 s while the build runs. */
const LINES_EVERY_MS = 1500
const LINES_PER_TICK = 2
/** Requests a minute: a low limit, and Coolify's default. */
const LOW_LIMIT = 60
const DEFAULT_LIMIT = 200
/** The targets: the step's end after the last deployment's, and requests, at each limit. */
const MAX_AFTER_END_MS: Record<number, number> = { [LOW_LIMIT]: 10_000, [DEFAULT_LIMIT]: 4000 }
const MAX_REQUESTS = 50
const KILL_AFTER_MS = 300_000
/**
 * How the applications' statuses refresh: a second after each deployment's end, or only when
 * Coolify's own status check runs, every STATUS_CHECK_EVERY_MS to the second, so that "up" needs a
 * read after the next check.
 */
type Refresh = 'instant' | 'clock'
const STATUS_CHECK_EVERY_MS = 2000

interface Measured {
  limit: number
  /** Whether Coolify writes its closing entry (4.3.11), or nothing after the final status. */
  closing: boolean
  refresh: Refresh
  result: RunResult
  /** When each deployment turned final, in the fake. */
  ends: number[]
  /** Every request the fake answered. */
  log: RecordedRequest[]
  afterLastEndMs: number
  requests: number
  reads: number
  refused: number
  once: { ok: boolean; detail: string }
}

/**
 * The builds, in the order of `app-uuid`: the i-th app does not end i-th (ends and closing delays
 * are stepped through in two other orders), so that neither follows the order the action reads in.
 */
function builds(closing = true) {
  return Array.from({ length: APPS }, (_, i) => {
    const name = `api${String(i).padStart(2, '0')}`
    const endAt =
      FIRST_END_MS + Math.round((((i * 7) % APPS) * (LAST_END_MS - FIRST_END_MS)) / (APPS - 1))
    const closingAfterMs =
      CLOSING_MIN_MS +
      Math.round((((i * 11) % APPS) * (CLOSING_MAX_MS - CLOSING_MIN_MS)) / (APPS - 1))
    const build = steadyBuild(name, endAt, {
      everyMs: LINES_EVERY_MS,
      perTick: LINES_PER_TICK,
      closingAfterMs: closing ? closingAfterMs : undefined
    })
    return { name, build }
  })
}

async function measure(
  limit: number,
  delayMs: number,
  closing: boolean,
  refresh: Refresh
): Promise<Measured> {
  await sleep(delayMs)
  const apps = builds(closing)
  const statusCheckEveryMs = refresh === 'clock' ? STATUS_CHECK_EVERY_MS : undefined
  const server: FakeCoolify = await fake(
    apps.map(a => ({ ...app(a.name, a.build), statusCheckEveryMs })),
    { rateLimit: limit, queueLimit: ROOMY_QUEUE }
  )
  const result = await runStep(
    server,
    { 'app-uuid': apps.map(a => uuidOf(a.name)).join(',') },
    KILL_AFTER_MS
  )
  await server.close()
  // The fake's own record of when each deployment turned final; none unfinished is NaN.
  const ends = server.deployments().map(d => d.finishedAt ?? NaN)
  const lastEnd = ends.length === APPS ? Math.max(...ends) : NaN
  const printed = buildLogLines(result.stdout).map(line => line.replace(/^\S+ \| /, ''))
  return {
    limit,
    closing,
    refresh,
    result,
    ends,
    log: [...server.requests],
    afterLastEndMs: result.exitedAt - lastEnd,
    requests: server.requests.length,
    reads: server.requests.filter(r => r.method === 'GET' && isRead(r.path)).length,
    refused: server.requests.filter(r => r.status === 429).length,
    once: exactlyOnce(
      apps.flatMap(a => a.build.visible),
      printed
    )
  }
}

function rowsOf(m: Measured): Row[] {
  const label = labelOf(m)
  const afterEnd = Number.isNaN(m.afterLastEndMs)
    ? 'not every deployment ended'
    : seconds(m.afterLastEndMs)
  const maxAfterEnd = MAX_AFTER_END_MS[m.limit]
  if (!m.closing) {
    // An older server: the end of a log is known only once it stayed quiet a while. Reported.
    return [
      {
        metric: `${label}: last deployment's end → step's end (s)`,
        action: afterEnd,
        reference: 'not run',
        target: 'reported'
      },
      {
        metric: `${label}: requests sent (reads of a deployment)`,
        action: `${fixed(m.requests)} (${fixed(m.reads)})`,
        reference: 'not run',
        target: 'reported'
      },
      {
        metric: `${label}: answers 429 (rate limited)`,
        action: fixed(m.refused),
        reference: 'not run',
        target: '0',
        met: m.refused === 0
      },
      {
        metric: `${label}: every visible line printed exactly once`,
        action: m.once.detail,
        reference: 'not run',
        target: 'yes',
        met: m.once.ok
      }
    ]
  }
  return [
    {
      metric: `${label}: last deployment's end → step's end (s)`,
      action: afterEnd,
      reference: 'not run',
      target: `≤ ${seconds(maxAfterEnd)}`,
      met: m.afterLastEndMs <= maxAfterEnd
    },
    {
      metric: `${label}: requests sent (reads of a deployment)`,
      action: `${fixed(m.requests)} (${fixed(m.reads)})`,
      reference: 'not run',
      target: `≤ ${MAX_REQUESTS}`,
      met: m.requests <= MAX_REQUESTS
    },
    {
      metric: `${label}: answers 429 (rate limited)`,
      action: fixed(m.refused),
      reference: 'not run',
      target: '0',
      met: m.refused === 0
    },
    {
      metric: `${label}: every visible line printed exactly once`,
      action: m.once.detail,
      reference: 'not run',
      target: 'yes',
      met: m.once.ok
    }
  ]
}

function labelOf(m: Measured): string {
  const refresh = m.refresh === 'clock' ? ", statuses on Coolify's own check" : ''
  return `${APPS} apps in one step, rate limit ${m.limit}/minute${m.closing ? '' : ', without the closing entry'}${refresh}`
}

/**
 * The run whose step ended longest after its last deployment, among those held to the targets, and
 * every request it sent, in time from the trigger: where the time after the last end went.
 */
function timelineOf(runs: Measured[]): string[] {
  const held = runs.filter(m => m.closing)
  const slowest = held.reduce((a, b) =>
    Number.isNaN(b.afterLastEndMs) || b.afterLastEndMs > a.afterLastEndMs ? b : a
  )
  const trigger = slowest.log.find(r => r.method === 'POST')?.at ?? slowest.result.startedAt
  const at = (ms: number): string => `${seconds(ms - trigger)} s`
  const lastEnd = Math.max(...slowest.ends)
  const lines = slowest.log.map(
    (r, i) =>
      `| ${i + 1} | ${at(r.at)} | ${r.method} ${r.path.replace(API, '')} | ${r.status ?? r.fault ?? ''} |`
  )
  const ended = slowest.log.findIndex(r => r.at > lastEnd)
  lines.splice(
    ended < 0 ? lines.length : ended,
    0,
    `| | ${at(lastEnd)} | the last deployment ends | |`
  )
  lines.push(`| | ${at(slowest.result.exitedAt)} | the step ends | |`)
  return [
    `## The slowest run of the limits group, request by request`,
    '',
    `${labelOf(slowest)}: its step ended ${seconds(slowest.afterLastEndMs)} s after the last deployment.`,
    'Times from the trigger (`POST /deploy`), as the fake received each request.',
    '',
    '| # | at | request | answer |',
    '|--:|--:|---|---|',
    ...lines
  ]
}

export async function manyAppsLimited(): Promise<Part> {
  log(`${APPS} apps in one step at ${LOW_LIMIT} and at ${DEFAULT_LIMIT} requests a minute`)
  // Each against a fake of its own, two at once: only times and requests are measured.
  const runs: Measured[] = []
  for (const closing of [true, false]) {
    for (const refresh of ['instant', 'clock'] as const) {
      runs.push(
        ...(await Promise.all([
          measure(LOW_LIMIT, 0, closing, refresh),
          measure(DEFAULT_LIMIT, 200, closing, refresh)
        ]))
      )
    }
  }
  const visible = builds().map(a => a.build.visible.length)
  const notes = [
    `- ${APPS} apps in one step (\`app-uuid\` with ${APPS} uuids): deployments that turn \`finished\``,
    `  ${seconds(FIRST_END_MS)}–${seconds(LAST_END_MS)} s after the trigger, spread evenly (not in the order of \`app-uuid\`), with`,
    `  ${LINES_PER_TICK} log lines every ${seconds(LINES_EVERY_MS)} s (${Math.min(...visible)}–${Math.max(...visible)} visible lines each) and Coolify's closing entry`,
    `  ${seconds(CLOSING_MIN_MS)}–${seconds(CLOSING_MAX_MS)} s after the final status. A deployment's end is its \`finished_at\` in the fake;`,
    '  the step cannot end before the closing entry of the last one. One run at each limit, each against',
    "  a fake of its own, at once, whose limiter is Coolify's fixed window. The floor is not run: it",
    '  has no rate-limit handling.',
    '- The same again without the closing entry (an older server): the step knows a log has ended',
    '  only once it stayed quiet for 1.5 s after the final status. Reported, 429 and lines held.',
    "- Each of these twice: with the fake refreshing an application's status a second after its",
    "  deployment ends, and with statuses refreshed only by Coolify's own status check, every",
    `  ${seconds(STATUS_CHECK_EVERY_MS)} s to the second (\`last_online_at\` moves only then), so that "up" needs a read after the next check.`,
    ...runs.map(
      m =>
        `- … ${labelOf(m).replace(`${APPS} apps in one step, rate limit `, 'at ')}: wall time ${seconds(m.result.exitedAt - m.result.startedAt)} s, exit code ` +
        `${m.result.code ?? m.result.signal}, \`status\` ${m.result.outputs.status || '(none)'}, ` +
        `${fixed(m.requests / ((m.result.exitedAt - m.result.startedAt) / 60_000))} requests a minute.`
    )
  ]
  return { rows: runs.flatMap(rowsOf), notes, appendix: timelineOf(runs) }
}
