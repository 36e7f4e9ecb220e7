/**
 * How soon the step recovers or lets go, where the tests assert only order and counts: reads
 * through an outage of Coolify's proxy, a courtesy lookup (the applications' names) that never
 * answers, and a cancelled workflow run, whose main step the runner follows with SIGTERM after
 * 7.5 s.
 */
import type { FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import { timedBuild } from '../test/support/builds.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import { ACTION, fake, isRead, log, seconds, TOKEN, uuidOf, type Part, type Row } from './common.js'

const NAME = 'web'
const UUID = uuidOf(NAME)
const KILL_AFTER_MS = 90_000
/** Coolify's proxy answers 502 pages this long, from the second read on. */
const OUTAGE_MS = 8000
/** The backoff's cap at a 1 s poll-interval (max(5 s, 2 × poll-interval)), plus one request. */
const MAX_GAP_MS = 5600
/**
 * From the read that saw the deployment's end: the grace the applications' lookup gets once due
 * (LOOKUP_GRACE_MS, 3 s), and a second for the health read, the report and the exit.
 */
const MAX_AFTER_END_MS = 3000 + 1000
/** The runner's time between SIGINT and SIGTERM. */
const RUNNER_GRACE_MS = 7500

function run(
  server: FakeCoolify,
  inputs: Record<string, string>,
  onStdout?: Parameters<typeof runAction>[0]['onStdout']
): Promise<RunResult> {
  return runAction({
    inputs: { 'coolify-url': server.url, token: TOKEN, 'app-uuid': UUID, ...inputs },
    script: ACTION,
    killAfterMs: KILL_AFTER_MS,
    onStdout
  })
}

const exit = (result: RunResult): string =>
  result.code === null ? `killed (${result.signal})` : `exit ${result.code}`

async function outage(): Promise<Row> {
  const server = await fake([{ uuid: UUID, name: NAME, scenarios: [scenario(2000)] }])
  server.inject({
    path: /^\/deployments\/(?!applications\/)[^/]+$/,
    skip: 1,
    forMs: OUTAGE_MS,
    do: 'html'
  })
  const result = await run(server, { 'poll-interval': '1s', timeout: '60s' })
  await server.close()
  const times = server.requests.filter(r => isRead(r.path)).map(r => r.at)
  const gap = Math.max(...times.slice(1).map((at, i) => at - times[i]))
  return {
    metric: `Outage: ${seconds(OUTAGE_MS)} s of 502 pages from the second read, poll-interval 1s: longest gap between reads (s)`,
    action: `${seconds(gap)} (${exit(result)}, \`${result.outputs.status ?? ''}\`)`,
    reference: 'not run',
    target: `≤ ${seconds(MAX_GAP_MS)}`,
    met: result.code === 0 && gap <= MAX_GAP_MS
  }
}

async function lookupHangs(): Promise<Row> {
  const server = await fake([{ uuid: UUID, name: NAME, scenarios: [scenario(2000)] }])
  // The first read of the application, the lookup of its name and URL; the health check's reads
  // after it are answered.
  server.inject({ method: 'GET', path: `/applications/${UUID}`, do: 'hang' })
  const result = await run(server, { 'poll-interval': '1s', timeout: '10m' })
  await server.close()
  const reads = server.requests.filter(r => isRead(r.path)).map(r => r.at)
  const afterEnd =
    server.deployments()[0]?.finishedAt === undefined
      ? undefined
      : result.exitedAt - Math.max(...reads)
  return {
    metric:
      "The applications' lookup never answers, poll-interval 1s, timeout 10m: the read that saw the end → step's exit (s)",
    action: `${afterEnd === undefined ? '(never ended)' : seconds(afterEnd)} (${exit(result)})`,
    reference: 'not run',
    target: `≤ ${seconds(MAX_AFTER_END_MS)}`,
    met: result.code === 0 && afterEnd !== undefined && afterEnd <= MAX_AFTER_END_MS
  }
}

async function cancelled(): Promise<Row> {
  const server = await fake([{ uuid: UUID, name: NAME, scenarios: [scenario(600_000, 600)] }])
  let sentAt: number | undefined
  const result = await run(server, { timeout: '10m' }, (stdout, child) => {
    if (sentAt !== undefined || !stdout.includes(`${NAME} step 1/600`)) return
    sentAt = Date.now()
    child.kill('SIGINT')
  })
  await server.close()
  const afterSignal = sentAt === undefined ? undefined : result.exitedAt - sentAt
  const status = server.deployments()[0]?.status
  return {
    metric: "Cancelled run: SIGINT during the build → main step's exit (s)",
    action: `${afterSignal === undefined ? '(never signalled)' : seconds(afterSignal)} (${exit(result)}, Coolify: \`${status}\`)`,
    reference: 'not run',
    target: `< ${seconds(RUNNER_GRACE_MS)} (the runner's SIGTERM)`,
    met:
      afterSignal !== undefined &&
      result.signal === null &&
      afterSignal < RUNNER_GRACE_MS &&
      status === 'cancelled-by-user'
  }
}

function scenario(durationMs: number, lines?: number): Scenario {
  return timedBuild(NAME, { durationMs, lines }).scenario
}

export async function recovery(): Promise<Part> {
  log('outage, a hanging lookup, a cancelled run')
  // Each against a fake of its own, at once: only times and outputs are measured.
  const rows = await Promise.all([outage(), lookupHangs(), cancelled()])
  return {
    rows,
    notes: [
      '- Recovery: one run each, at once, against fakes of their own. The outage answers every read',
      `  of the deployment with a 502 page for ${seconds(OUTAGE_MS)} s from the second one on; the build takes 2 s.`,
      "  The hanging lookup is the read of the applications' names and URLs, never answered; the build",
      '  takes 2 s. The cancelled run gets SIGINT once the first build line is printed.'
    ]
  }
}
