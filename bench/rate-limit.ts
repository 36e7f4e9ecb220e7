/**
 * Many apps under a rate limit: 30 applications deployed in one step, each deployment ending
 * 4–10 s after the trigger, at 60 requests a minute and at Coolify's default (200), with Coolify
 * 4.3.11's closing entry and without it (an older server), with statuses that refresh a second
 * after each end and with statuses that refresh only when Coolify's status check runs, on its own
 * clock. How long after
 * the last deployment ended the step ends, how many requests it sends and how many Coolify refuses,
 * and whether the log survives the sharing.
 */
import type { FakeCoolify } from '../test/fake-coolify/index.js'
import { buildLogLines, type RunResult } from '../test/support/runner.js'
import { steadyBuild } from './builds.js'
import {
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
 * Coolify's status check, on its own clock: an application's status and last_online_at move only
 * when it runs, so the read that says a finished app is up must come after the next one.
 */
const STATUS_CHECK_EVERY_MS = 2000

interface Measured {
  limit: number
  /** Whether Coolify writes its closing entry (4.3.11), or nothing after the final status. */
  closing: boolean
  /** Statuses refresh at Coolify's status check every this many ms; undefined: a second after the end. */
  checkEveryMs?: number
  result: RunResult
  afterLastEndMs: number
  requests: number
  reads: number
  refused: number
  once: { ok: boolean; detail: string }
  /** Every request, with its time from the step's start, and where the last deployment ended. */
  timeline: string
}

/** The requests in order, each with its time after the step's start: `0.15 s POST /deploy`. */
function timeline(server: FakeCoolify, startedAt: number, lastEnd: number): string {
  const at = (ms: number): string => `${seconds(ms - startedAt)} s`
  const entries = server.requests.map(r => ({
    at: r.at,
    text: `${at(r.at)} ${r.method} ${r.path.replace(/^\/api\/v1/, '')}${r.status === 429 ? ' (429)' : ''}`
  }))
  if (Number.isFinite(lastEnd))
    entries.push({ at: lastEnd, text: `${at(lastEnd)} last deployment ended` })
  return entries
    .sort((a, b) => a.at - b.at)
    .map(entry => entry.text)
    .join('; ')
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
  checkEveryMs?: number
): Promise<Measured> {
  await sleep(delayMs)
  const apps = builds(closing)
  const server: FakeCoolify = await fake(
    apps.map(a => app(a.name, a.build)),
    {
      rateLimit: limit,
      queueLimit: ROOMY_QUEUE,
      statusCheckEveryMs: checkEveryMs,
      ...(closing ? {} : { version: '4.0-beta' as const })
    }
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
    checkEveryMs,
    timeline: timeline(server, result.startedAt, lastEnd),
    result,
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

function labelOf(m: Measured): string {
  const refresh = m.checkEveryMs
    ? `, statuses refreshed by a status check every ${seconds(m.checkEveryMs)} s`
    : ''
  return `${APPS} apps in one step, rate limit ${m.limit}/minute${m.closing ? '' : ', without the closing entry'}${refresh}`
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

export async function manyAppsLimited(): Promise<Part> {
  log(`${APPS} apps in one step at ${LOW_LIMIT} and at ${DEFAULT_LIMIT} requests a minute`)
  // Each against a fake of its own, two at once: only times and requests are measured.
  const runs: Measured[] = []
  for (const checkEveryMs of [undefined, STATUS_CHECK_EVERY_MS]) {
    for (const closing of [true, false]) {
      runs.push(
        ...(await Promise.all([
          measure(LOW_LIMIT, 0, closing, checkEveryMs),
          measure(DEFAULT_LIMIT, 200, closing, checkEveryMs)
        ]))
      )
    }
  }
  const slowest = runs
    .filter(m => m.closing)
    .reduce((a, b) => (b.afterLastEndMs > a.afterLastEndMs ? b : a))
  const visible = builds().map(a => a.build.visible.length)
  const notes = [
    `- ${APPS} apps in one step (\`app-uuid\` with ${APPS} uuids): deployments that turn \`finished\``,
    `  ${seconds(FIRST_END_MS)}–${seconds(LAST_END_MS)} s after the trigger, spread evenly (not in the order of \`app-uuid\`), with`,
    `  ${LINES_PER_TICK} log lines every ${seconds(LINES_EVERY_MS)} s (${Math.min(...visible)}–${Math.max(...visible)} visible lines each) and Coolify's closing entry`,
    `  ${seconds(CLOSING_MIN_MS)}–${seconds(CLOSING_MAX_MS)} s after the final status. A deployment's end is its \`finished_at\` in the fake;`,
    '  the step cannot end before the closing entry of the last one. One run at each limit, each against',
    "  a fake of its own, at once, whose limiter is Coolify's fixed window. The floor is not run: it",
    '  has no rate-limit handling.',
    '- The same again without the closing entry (a server before 4.0.0-beta.407): the step asks',
    "  Coolify's version once, and knows a log has ended only once it stayed quiet for 1.5 s after",
    '  `finished_at`. Reported, 429 and lines held.',
    `- All of it again with statuses that Coolify refreshes only when its status check runs, every`,
    `  ${seconds(STATUS_CHECK_EVERY_MS)} s on its own clock (to the second): the read that says a finished app is up must come after`,
    '  the next check; the targets are the same.',
    ...runs.map(
      m =>
        `- ${labelOf(m)}: wall time ${seconds(m.result.exitedAt - m.result.startedAt)} s, exit code ` +
        `${m.result.code ?? m.result.signal}, \`status\` ${m.result.outputs.status || '(none)'}, ` +
        `${fixed(m.requests / ((m.result.exitedAt - m.result.startedAt) / 60_000))} requests a minute.`
    ),
    `- The slowest run with the closing entry (${labelOf(slowest)}), request by request: ${slowest.timeline}.`
  ]
  return { rows: runs.flatMap(rowsOf), notes }
}
