/**
 * `npm run bench`: the bundled action (dist/index.js, run as GitHub's runner runs it, on Node 24)
 * and the floor, bench/reference.mjs (the least a client can do), side by side against the fake
 * Coolify, scenario by scenario. Prints a table of ratios (action / reference) with the figures
 * beside them and writes it to bench/RESULTS.md.
 *
 * The fake Coolify runs in this process; every measured client is a child process of its own. CPU
 * and memory are measured one client at a time; scenarios that only measure time or requests run
 * their clients at once, each against a fake of its own.
 *
 * `npm run bench -- NAME…` runs only the groups named (see GROUPS) and prints their table without
 * writing bench/RESULTS.md. ACTION_DIR measures another checkout of the action (a folder with
 * action.yml and dist/) instead of this project's.
 */
import { execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync
} from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { FakeCoolify } from '../test/fake-coolify/index.js'
import { findNode24 } from '../test/support/node.js'
import { buildLogLines, runAction, type RunResult } from '../test/support/runner.js'
import { bigBuild, steadyBuild } from './builds.js'
import {
  ACTION,
  ACTION_DIR,
  API,
  app,
  exactlyOnce,
  fake,
  fixed,
  isRead,
  ROOMY_QUEUE,
  log,
  PROJECT,
  REFERENCE,
  sleep,
  snapshotAction,
  TOKEN,
  uuidOf,
  type Part,
  type Row
} from './common.js'
import { bytes } from './bytes.js'
import { hangs } from './hangs.js'
import type { PollCost } from './poll-cost.js'
import { manyAppsLimited } from './rate-limit.js'
import { recovery } from './recovery.js'

const HERE = dirname(fileURLToPath(import.meta.url))
const USAGE = pathToFileURL(join(PROJECT, 'bench/usage.mjs')).href

type Client = 'action' | 'reference'
const CLIENTS: Client[] = ['action', 'reference']

interface Usage {
  userMs: number
  systemMs: number
  maxRssKb: number
}

interface Measured {
  result: RunResult
  usage?: Usage
}

/** Runs one client against `server`, as the runner runs the action: Node 24, INPUT_* variables. */
async function runClient(
  client: Client,
  server: FakeCoolify,
  inputs: Record<string, string>,
  { usage = false, killAfterMs = 180_000 } = {}
): Promise<Measured> {
  const usageFile = join(mkdtempSync(join(tmpdir(), 'coolify-bench-')), 'usage.json')
  const result = await runAction({
    inputs: { 'coolify-url': server.url, token: TOKEN, ...inputs },
    script: client === 'reference' ? REFERENCE : ACTION,
    nodeArgs: usage ? [`--import=${USAGE}`] : [],
    env: usage ? { BENCH_USAGE_FILE: usageFile } : {},
    killAfterMs
  })
  if (result.code !== 0) {
    throw new Error(
      `${client} exited with ${result.code ?? result.signal}:\n${result.stderr}\n${result.stdout.slice(-2000)}`
    )
  }
  return {
    result,
    usage: usage ? (JSON.parse(readFileSync(usageFile, 'utf8')) as Usage) : undefined
  }
}

/** The build log lines a client printed: the action's between its markers, the floor's all. */
function printedLines(client: Client, stdout: string): string[] {
  if (client === 'action') return buildLogLines(stdout)
  const lines = stdout.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

function traffic(server: FakeCoolify): { requests: number; reads: number; bytes: number } {
  return {
    requests: server.requests.length,
    reads: server.requests.filter(r => r.method === 'GET' && isRead(r.path)).length,
    bytes: server.requests.reduce((sum, r) => sum + (r.responseBytes ?? 0), 0)
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length

const MB = 1024 * 1024

// ---------------------------------------------------------------------------------------------
// 1. Startup

async function startup(runs = 7): Promise<Row[]> {
  const build = steadyBuild('quick', 0)
  const times: Record<Client | 'cli', number[]> = { action: [], reference: [], cli: [] }
  for (let i = -1; i < runs; i++) {
    // Alternate who goes first; the first round warms the disk cache and is not counted.
    for (const client of i % 2 ? CLIENTS : [...CLIENTS].reverse()) {
      const server = await fake([app('quick', build)])
      const { result } = await runClient(client, server, { 'app-uuid': uuidOf('quick') })
      await server.close()
      if (i >= 0) times[client].push(server.requests[0].at - result.startedAt)
    }
    const server = await fake([app('quick', build)])
    const cli = await runCommandLine(server, uuidOf('quick'))
    await server.close()
    if (i >= 0) times.cli.push(server.requests[0].at - cli.startedAt)
    if (i >= 0) log(`startup ${i + 1}/${runs}`)
  }
  const action = median(times.action)
  const reference = median(times.reference)
  const cli = median(times.cli)
  return [
    {
      metric: `Startup: spawn → first request, median of ${runs} (ms)`,
      action: fixed(action),
      reference: fixed(reference),
      ratio: action / reference,
      target: '≤ 1.15×',
      met: action / reference <= 1.15
    },
    {
      metric: `Startup of the command line (dist/cli/) in the action's column, median of ${runs} (ms)`,
      action: fixed(cli),
      reference: fixed(reference),
      ratio: cli / reference,
      target: '≤ 1.5×',
      met: cli / reference <= 1.5
    }
  ]
}

/** The command line's bundle, run as `npx` runs its bin, with the token in the environment. */
async function runCommandLine(server: FakeCoolify, appUuid: string): Promise<RunResult> {
  const result = await runAction({
    inputs: { 'coolify-url': server.url, token: TOKEN },
    script: join(ACTION_DIR, 'dist/cli/index.js'),
    args: ['--url', server.url, '--app-uuid', appUuid],
    env: { COOLIFY_TOKEN: TOKEN }
  })
  if (result.code !== 0)
    throw new Error(`the command line exited with ${result.code}:\n${result.stdout}`)
  return result
}

// ---------------------------------------------------------------------------------------------
// 2. Big log

const BIG_SIZES = [10_000, 20_000, 36_000]
const BIG_DURATION_MS = 15_000
/** Runs of each client at each size; the best counts: a single run moves by ±10% with the machine. */
const BIG_ROUNDS = 3

interface BigRun {
  cpuMs: number
  rssMb: number
  reads: number
  mbRead: number
  once: { ok: boolean; detail: string }
}

async function bigLog(): Promise<{ rows: Row[]; details: string[] }> {
  const rows: Row[] = []
  const details: string[] = []
  for (const size of BIG_SIZES) {
    const build = bigBuild(size, BIG_DURATION_MS)
    const runs = {} as Record<Client, BigRun>
    for (let round = 0; round < BIG_ROUNDS; round++) {
      for (const client of round % 2 ? [...CLIENTS].reverse() : CLIENTS) {
        const server = await fake([app('web', build)])
        const { result, usage } = await runClient(
          client,
          server,
          { 'app-uuid': uuidOf('web') },
          { usage: true }
        )
        await server.close()
        const { reads, bytes } = traffic(server)
        const run: BigRun = {
          cpuMs: usage!.userMs + usage!.systemMs,
          rssMb: usage!.maxRssKb / 1024,
          reads,
          mbRead: bytes / MB,
          once: exactlyOnce(build.visible, printedLines(client, result.stdout))
        }
        log(`big log ${size} lines, ${client}: ${JSON.stringify(run)}`)
        // Other work on the machine only ever adds: keep the best run, and any failed check.
        const kept = runs[client]
        runs[client] = kept
          ? {
              ...run,
              cpuMs: Math.min(kept.cpuMs, run.cpuMs),
              rssMb: Math.min(kept.rssMb, run.rssMb),
              once: kept.once.ok ? run.once : kept.once
            }
          : run
      }
    }
    const { action, reference } = runs
    const label = `Big log, ${fixed(size)} lines (${fixed(action.mbRead / action.reads, 1)} MB a read on average)`
    rows.push(
      {
        metric: `${label}: CPU user+sys (ms)`,
        action: fixed(action.cpuMs),
        reference: fixed(reference.cpuMs),
        ratio: action.cpuMs / reference.cpuMs,
        target: '≤ 1.1×',
        met: action.cpuMs / reference.cpuMs <= 1.1
      },
      {
        metric: `${label}: peak RSS (MB)`,
        action: fixed(action.rssMb, 1),
        reference: fixed(reference.rssMb, 1),
        ratio: action.rssMb / reference.rssMb,
        target: '≤ 1.2×',
        met: action.rssMb / reference.rssMb <= 1.2
      },
      {
        metric: `${label}: every visible line printed exactly once`,
        action: action.once.detail,
        reference: reference.once.detail,
        target: 'yes',
        met: action.once.ok
      }
    )
    details.push(
      `| ${fixed(size)} | ${fixed(build.entries)} | ${action.reads} / ${reference.reads} | ` +
        `${fixed(action.mbRead, 1)} / ${fixed(reference.mbRead, 1)} | ` +
        `${fixed(action.cpuMs / action.mbRead, 1)} / ${fixed(reference.cpuMs / reference.mbRead, 1)} |`
    )
  }
  return { rows, details }
}

// ---------------------------------------------------------------------------------------------
// Cost of one poll (in-process, Node 24)

function pollCost(): { rows: Row[]; details: string[] } {
  const script = join(HERE, 'poll-cost.js')
  const costs = JSON.parse(
    execFileSync(findNode24(), [script], { encoding: 'utf8', maxBuffer: 1 << 20 })
  ) as PollCost[]
  const growing = costs.filter(c => c.fresh === costs[0].fresh)
  const small = growing[0]
  const large = growing[growing.length - 1]
  const perMb = (c: PollCost): number => c.parseResponseMs / (c.responseBytes / MB)
  const after = (c: PollCost): number => c.cursorMs + c.printMs
  const details = costs.map(
    c =>
      `| ${fixed(c.entries)} | ${fixed(c.fresh)} | ${fixed(c.responseBytes / MB, 2)} | ${fixed(c.parseResponseMs, 2)} | ` +
      `${fixed(c.cursorMs, 3)} | ${fixed(c.printMs, 3)} |`
  )
  const linear = perMb(large) / perMb(small)
  const flat = after(large) / after(small)
  return {
    rows: [
      {
        metric: `Poll cost per MB of answer (JSON.parse), ${fixed(large.entries)}-entry ÷ ${fixed(small.entries)}-entry log`,
        action: `${fixed(perMb(large), 1)} / ${fixed(perMb(small), 1)} ms/MB`,
        reference: '',
        ratio: linear,
        target: 'grows with the answer: ≤ 1.5×',
        met: linear <= 1.5
      },
      {
        metric: `Work after parsing the answer (log cursor + printer), ${fixed(large.entries)}-entry ÷ ${fixed(small.entries)}-entry log, ${fixed(small.fresh)} new entries each`,
        action: `${fixed(after(large), 3)} / ${fixed(after(small), 3)} ms`,
        reference: '',
        ratio: flat,
        target: 'grows with new lines only: ≤ 1.5×',
        met: flat <= 1.5
      }
    ],
    details
  }
}

// ---------------------------------------------------------------------------------------------
// 3. From a deployment's end to the step's end

interface Latency {
  toExitMs: number
  toReadMs: number
  once: { ok: boolean; detail: string }
}

/** Closing entries come 0.4–1.2 s after the final status, as real Coolify writes them. */
const CLOSING_MIN_MS = 400
const CLOSING_MAX_MS = 1200

/**
 * Ends spread evenly over one poll interval, in the steady cadence of both clients, each run on a
 * fake of its own, all at once. With `closing`, a deployment ends when Coolify writes its closing
 * entry (0.4–1.2 s after the final status, varied across the runs); without it (an older server),
 * when its status turns final.
 */
async function detection(
  interval: string | undefined,
  intervalMs: number,
  baseMs: number,
  closing: boolean,
  phases = 8
): Promise<{ rows: Row[]; details: string[] }> {
  const servers: FakeCoolify[] = []
  const tasks: Array<Promise<[Client, Latency]>> = []
  const closingAfter: number[] = []
  let started = 0
  for (let k = 0; k < phases; k++) {
    const endAt = baseMs + Math.round(((k + 0.5) / phases) * intervalMs)
    // Stepped through in another order than the ends, so that the two do not move together.
    const step = (k * 3) % phases
    const closingAfterMs = closing
      ? CLOSING_MIN_MS + Math.round((step * (CLOSING_MAX_MS - CLOSING_MIN_MS)) / (phases - 1))
      : undefined
    if (closingAfterMs !== undefined) closingAfter.push(closingAfterMs)
    const build = steadyBuild('web', endAt - (closingAfterMs ?? 0), { perTick: 2, closingAfterMs })
    for (const client of CLIENTS) {
      const delay = started++ * 120
      tasks.push(
        (async (): Promise<[Client, Latency]> => {
          await sleep(delay)
          const server = await fake([app('web', build)], closing ? {} : { version: '4.0-beta' })
          servers.push(server)
          const inputs: Record<string, string> = { 'app-uuid': uuidOf('web') }
          if (interval) inputs['poll-interval'] = interval
          const { result } = await runClient(client, server, inputs)
          const end = server.deployments()[0].createdAt + endAt
          const seen = server.requests.find(
            r => r.method === 'GET' && isRead(r.path) && r.at >= end
          )
          return [
            client,
            {
              toExitMs: result.exitedAt - end,
              // A client that stopped reading before the end never saw it.
              toReadMs: seen ? seen.at - end : NaN,
              once: exactlyOnce(build.visible, printedLines(client, result.stdout))
            }
          ]
        })()
      )
    }
  }
  const results = await Promise.all(tasks)
  const requestMs = await oneRequest(servers[0])
  await Promise.all(servers.map(server => server.close()))
  const of = (client: Client): Latency[] => results.filter(([c]) => c === client).map(([, l]) => l)
  const name =
    (interval ? `poll-interval ${interval}` : `default poll-interval (3s)`) +
    (closing ? ', with the closing entry' : ', without the closing entry')
  const label = `Deployment's end → step's end, ${name}`
  const meanTarget = intervalMs / 2 + requestMs
  const maxTarget = intervalMs + requestMs
  const action = of('action').map(l => l.toExitMs)
  const reference = of('reference').map(l => l.toExitMs)
  const ratio = (a: number, r: number): number | undefined => (r > 0 ? a / r : undefined)
  const reads = (client: Client): number[] =>
    of(client)
      .map(l => l.toReadMs)
      .filter(ms => !Number.isNaN(ms))
  const readMean = (client: Client): number => mean(reads(client))
  const readText = (client: Client): string => {
    const read = reads(client).length
    if (read === 0) return 'none: no read after the end'
    return (
      fixed(readMean(client)) +
      (read < phases ? ` (${phases - read} runs without a read after the end)` : '')
    )
  }
  const onceOf = (client: Client): { ok: boolean; detail: string } => {
    const failed = of(client).filter(l => !l.once.ok)
    return failed.length === 0
      ? { ok: true, detail: 'yes' }
      : {
          ok: false,
          detail: `no, in ${failed.length} of ${phases} runs (${failed[0].once.detail})`
        }
  }
  const rows: Row[] = [
    {
      metric: `${label}: mean of ${phases} (ms)`,
      action: fixed(mean(action)),
      reference: fixed(mean(reference)),
      ratio: ratio(mean(action), mean(reference)),
      ...(closing
        ? {
            target: `≤ ${fixed(meanTarget)} (½ interval + 1 request)`,
            met: mean(action) <= meanTarget
          }
        : { target: 'reported' })
    },
    {
      metric: `${label}: max (ms)`,
      action: fixed(Math.max(...action)),
      reference: fixed(Math.max(...reference)),
      ratio: ratio(Math.max(...action), Math.max(...reference)),
      ...(closing
        ? {
            target: `≤ ${fixed(maxTarget)} (1 interval + 1 request)`,
            met: Math.max(...action) <= maxTarget
          }
        : { target: 'reported' })
    },
    {
      metric: `${label}: end → first read after it, mean (ms)`,
      action: readText('action'),
      reference: readText('reference'),
      ratio: ratio(readMean('action'), readMean('reference'))
    },
    {
      metric: `${label}: every visible line printed exactly once`,
      action: onceOf('action').detail,
      reference: onceOf('reference').detail,
      target: 'yes',
      met: onceOf('action').ok
    }
  ]
  const run = (l: Latency): string =>
    `${Number.isNaN(l.toReadMs) ? '—' : fixed(l.toReadMs)} → ${fixed(l.toExitMs)}${l.once.ok ? '' : ' (line lost)'}`
  const details = CLIENTS.map(
    client => `| ${name} | ${client} | ${of(client).map(run).join(', ')} |`
  )
  if (closing) {
    details.push(
      `| ${name} | closing entry written after the final status (ms) | ${closingAfter.map(ms => fixed(ms)).join(', ')} |`
    )
  }
  details.push(
    `| ${name} | one request (GET /deployments/{uuid}, median) | ${fixed(requestMs, 1)} ms |`
  )
  return { rows, details }
}

/** How long one read of a deployment takes, median of ten, from this process. */
async function oneRequest(server: FakeCoolify): Promise<number> {
  const uuid = server.deployments()[0].uuid
  const times: number[] = []
  for (let i = 0; i < 10; i++) {
    const start = performance.now()
    const response = await fetch(`${server.url}${API}/deployments/${uuid}`, {
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' }
    })
    await response.text()
    times.push(performance.now() - start)
  }
  return median(times)
}

// ---------------------------------------------------------------------------------------------
// 4. Many apps, and 5. requests per deployment

const APPS = 20
const SLOWEST_MS = 40_000
const FASTEST_MS = 20_000

async function manyApps(): Promise<{ rows: Row[]; requestRows: Row[] }> {
  const builds = Array.from({ length: APPS }, (_, i) => {
    const name = `app${String(i).padStart(2, '0')}`
    const duration = FASTEST_MS + Math.round((i * (SLOWEST_MS - FASTEST_MS)) / (APPS - 1))
    return { name, build: steadyBuild(name, duration) }
  })
  const slowest = builds[builds.length - 1]
  const slowestApp = app(slowest.name, slowest.build)

  // The slowest deployment alone: both clients at 3s, and both at 10s (the interface document's
  // reference procedure), all at once, each against a fake of its own.
  const alone = async (client: Client, interval: string | undefined, delay: number) => {
    await sleep(delay)
    const server = await fake([slowestApp])
    const inputs: Record<string, string> = { 'app-uuid': slowestApp.uuid }
    if (interval) inputs['poll-interval'] = interval
    const { result } = await runClient(client, server, inputs)
    await server.close()
    return { wallMs: result.exitedAt - result.startedAt, ...traffic(server) }
  }
  log(`many apps: the slowest deployment (${SLOWEST_MS / 1000}s) alone`)
  const [action, reference, action10, procedure] = await Promise.all([
    alone('action', undefined, 0),
    alone('reference', undefined, 150),
    alone('action', '10s', 300),
    alone('reference', '10s', 450)
  ])

  log(`many apps: ${APPS} deployments at once`)
  const together = async (client: Client, delay: number) => {
    await sleep(delay)
    const server = await fake(builds.map(b => app(b.name, b.build)))
    const { result } = await runClient(client, server, {
      'app-uuid': builds.map(b => uuidOf(b.name)).join(',')
    })
    await server.close()
    const printed = printedLines(client, result.stdout).map(line => line.replace(/^\S+ \| /, ''))
    const expected = builds.flatMap(b => b.build.visible)
    const wallMs = result.exitedAt - result.startedAt
    return {
      wallMs,
      perMinute: server.requests.length / (wallMs / 60_000),
      refused: server.requests.filter(r => r.status === 429).length,
      once: exactlyOnce(expected, printed)
    }
  }
  const [many, manyReference] = await Promise.all([
    together('action', 0),
    together('reference', 200)
  ])

  const s = (ms: number): string => fixed(ms / 1000, 1)
  const rows: Row[] = [
    {
      metric: `Many apps: slowest deployment (${SLOWEST_MS / 1000} s) alone, wall time (s)`,
      action: s(action.wallMs),
      reference: s(reference.wallMs),
      ratio: action.wallMs / reference.wallMs
    },
    {
      metric: `Many apps: ${APPS} deployments (${FASTEST_MS / 1000}–${SLOWEST_MS / 1000} s) at once, wall time (s)`,
      action: s(many.wallMs),
      reference: s(manyReference.wallMs),
      ratio: many.wallMs / manyReference.wallMs
    },
    {
      metric: `Many apps: ${APPS} at once ÷ slowest alone`,
      action: `${fixed(many.wallMs / action.wallMs, 2)}×`,
      reference: `${fixed(manyReference.wallMs / reference.wallMs, 2)}×`,
      target: '≤ 1.2×',
      met: many.wallMs / action.wallMs <= 1.2
    },
    {
      metric: `Many apps: requests per minute (Coolify's default limit: 200)`,
      action: fixed(many.perMinute),
      reference: fixed(manyReference.perMinute),
      ratio: many.perMinute / manyReference.perMinute,
      target: 'printed'
    },
    {
      metric: 'Many apps: answers 429 (rate limited)',
      action: fixed(many.refused),
      reference: fixed(manyReference.refused)
    },
    {
      metric: 'Many apps: every visible line printed exactly once',
      action: many.once.detail,
      reference: manyReference.once.detail,
      target: 'yes',
      met: many.once.ok
    }
  ]

  const kb = (bytes: number): string => fixed(bytes / 1024)
  const requestRows: Row[] = [
    {
      metric: `Requests, one ${SLOWEST_MS / 1000} s deployment: action (3s) vs reference procedure (10 s)`,
      action: fixed(action.requests),
      reference: fixed(procedure.requests),
      ratio: action.requests / procedure.requests
    },
    {
      metric: `Bytes received (KB), same: action (3s) vs reference procedure (10 s)`,
      action: kb(action.bytes),
      reference: kb(procedure.bytes),
      ratio: action.bytes / procedure.bytes
    },
    {
      metric: `Requests, same, both at poll-interval 10s`,
      action: fixed(action10.requests),
      reference: fixed(procedure.requests),
      ratio: action10.requests / procedure.requests
    },
    {
      metric: `Bytes received (KB), same, both at poll-interval 10s`,
      action: kb(action10.bytes),
      reference: kb(procedure.bytes),
      ratio: action10.bytes / procedure.bytes
    },
    {
      metric: `Requests, same, both at 3s (the floor)`,
      action: fixed(action.requests),
      reference: fixed(reference.requests),
      ratio: action.requests / reference.requests
    }
  ]
  return { rows, requestRows }
}

// ---------------------------------------------------------------------------------------------
// 6. Many apps under a low rate limit

const LIMITED_APPS = 30
const LIMIT_PER_MINUTE = 60
/** The share of the rate limit the action's reads may use. */
const READ_SHARE = 0.5
const LIMITED_FIRST_END_MS = 3000
const LIMITED_LAST_END_MS = 10_000

interface Recorded {
  deployment_uuid: string | null
  duration: number | null
}

/**
 * The action alone (the floor has no rate-limit handling): every deployment ends within the first
 * seconds, and all reads share one budget, so the step should end within one budget cycle, the
 * time it takes to read each deployment once, after the last deployment ended.
 */
async function rateLimited(): Promise<{ rows: Row[]; notes: string[] }> {
  const builds = Array.from({ length: LIMITED_APPS }, (_, i) => {
    const name = `svc${String(i).padStart(2, '0')}`
    const endAt =
      LIMITED_FIRST_END_MS +
      Math.round((i * (LIMITED_LAST_END_MS - LIMITED_FIRST_END_MS)) / (LIMITED_APPS - 1))
    const step = (i * 7) % LIMITED_APPS
    const closingAfterMs =
      CLOSING_MIN_MS + Math.round((step * (CLOSING_MAX_MS - CLOSING_MIN_MS)) / (LIMITED_APPS - 1))
    return { name, endAt, build: steadyBuild(name, endAt - closingAfterMs, { closingAfterMs }) }
  })
  const server = await fake(
    builds.map(b => app(b.name, b.build)),
    { rateLimit: LIMIT_PER_MINUTE, queueLimit: ROOMY_QUEUE }
  )
  const { result } = await runClient('action', server, {
    'app-uuid': builds.map(b => uuidOf(b.name)).join(',')
  })
  await server.close()

  const deployments = server.deployments()
  const lastEnd = Math.max(
    ...deployments.map(d => d.createdAt + builds.find(b => uuidOf(b.name) === d.appUuid)!.endAt)
  )
  const afterLastEndMs = result.exitedAt - lastEnd
  const cycleMs = (LIMITED_APPS * 60_000) / (LIMIT_PER_MINUTE * READ_SHARE)
  const refused = server.requests.filter(r => r.status === 429).length
  const recorded = JSON.parse(result.outputs.deployments ?? '[]') as Recorded[]
  const off = deployments.filter(d => {
    const own = recorded.find(r => r.deployment_uuid === d.uuid)
    const coolify = ((d.finishedAt ?? NaN) - d.createdAt) / 1000
    // NaN (no time from Coolify, no duration) counts as off.
    return !(Math.abs((own?.duration ?? NaN) - coolify) <= 1)
  })
  const printed = buildLogLines(result.stdout).map(line => line.replace(/^\S+ \| /, ''))
  const once = exactlyOnce(
    builds.flatMap(b => b.build.visible),
    printed
  )
  const wallMs = result.exitedAt - result.startedAt
  const label = `${LIMITED_APPS} apps under a ${LIMIT_PER_MINUTE}/minute rate limit`
  const s = (ms: number): string => fixed(ms / 1000, 1)
  const rows: Row[] = [
    {
      metric: `${label}: last deployment's end → step's end (s)`,
      action: s(afterLastEndMs),
      reference: 'not run',
      target: `≤ ${s(cycleMs)} (one budget cycle: ${LIMITED_APPS} × 60 s ÷ (${LIMIT_PER_MINUTE} × ½))`,
      met: afterLastEndMs <= cycleMs
    },
    {
      metric: `${label}: answers 429 (rate limited)`,
      action: fixed(refused),
      reference: 'not run',
      target: '0',
      met: refused === 0
    },
    {
      metric: `${label}: every \`duration\` in the \`deployments\` output = Coolify's finished_at − created_at (±1 s)`,
      action:
        off.length === 0 && recorded.length === LIMITED_APPS
          ? 'yes'
          : `no: ${off.length} of ${deployments.length} off, ${recorded.length} recorded`,
      reference: 'not run',
      target: 'yes',
      met: off.length === 0 && recorded.length === LIMITED_APPS
    },
    {
      metric: `${label}: every visible line printed exactly once`,
      action: once.detail,
      reference: 'not run',
      target: 'yes',
      met: once.ok
    }
  ]
  const notes = [
    `- ${label}: ${LIMITED_APPS} deployments that end ${s(LIMITED_FIRST_END_MS)}–${s(LIMITED_LAST_END_MS)} s after the`,
    `  trigger (closing entry included), one run of the action: wall time ${s(wallMs)} s,`,
    `  ${server.requests.length} requests (${fixed(server.requests.filter(r => r.method === 'GET' && isRead(r.path)).length)} reads of a deployment). The floor is not run: it has no`,
    '  rate-limit handling and would only collect 429 answers.'
  ]
  return { rows, notes }
}

// ---------------------------------------------------------------------------------------------

function table(rows: Row[], previous: Previous | undefined): string {
  const before = previous ? ` action on ${previous.date} |` : ''
  const lines = [
    `| metric | action |${before} reference | ratio | target | met? |`,
    `|---|--:|${previous ? '--:|' : ''}--:|--:|---|---|`
  ]
  for (const row of rows) {
    const ratio =
      row.ratio === undefined || !Number.isFinite(row.ratio) ? '' : `${fixed(row.ratio, 2)}×`
    const met = row.met === undefined ? '' : row.met ? 'yes' : '**no**'
    const then = previous ? ` ${previous.action.get(metricKey(row.metric)) ?? ''} |` : ''
    lines.push(
      `| ${row.metric} | ${row.action} |${then} ${row.reference} | ${ratio} | ${row.target ?? ''} | ${met} |`
    )
  }
  return lines.join('\n')
}

/** The action's figures in the results a full run wrote last, to show beside the new ones. */
interface Previous {
  date: string
  action: Map<string, string>
}

function previousResults(file: string): Previous | undefined {
  if (!existsSync(file)) return undefined
  const text = readFileSync(file, 'utf8')
  const date = /^Written by `npm run bench` on (\d{4}-\d{2}-\d{2})/m.exec(text)?.[1]
  if (!date) return undefined
  const action = new Map<string, string>()
  const header = text.split('\n').find(line => line.startsWith('| metric |'))
  const column = header?.split(' | ').indexOf('action') ?? -1
  for (const line of text.split('\n')) {
    const cells = line.split(' | ')
    if (!line.startsWith('| ') || line.startsWith('| metric |') || column < 0) continue
    action.set(metricKey(cells[0].slice(2)), cells[column])
  }
  return { date, action }
}

/** A metric's name without what a run measured in it (the size of a read), to match runs. */
function metricKey(metric: string): string {
  return metric.replace(/ \([^)]*on average\)/, '')
}

/** The groups, in the order of the results. `npm run bench -- NAME…` runs only those named. */
const GROUPS: Array<{ name: string; run: () => Promise<Part> }> = [
  {
    name: 'startup',
    run: async () => {
      log('startup')
      return { rows: await startup() }
    }
  },
  {
    name: 'big-log',
    run: async () => {
      log('big log')
      const big = await bigLog()
      return {
        rows: big.rows,
        sections: [
          '## Big log: reads and cost per MB read',
          '',
          `Each build writes its lines evenly over ${BIG_DURATION_MS / 1000} s and ends with its last chunk; both clients at the default poll-interval (3s).`,
          '',
          '| lines | entries | reads (action / reference) | MB read | CPU ms per MB read |',
          '|--:|--:|--:|--:|--:|',
          ...big.details
        ],
        notes: [
          `- Big log: CPU and peak RSS are the best of ${BIG_ROUNDS} runs per client and size; other work on the`,
          '  machine only adds to them. These builds end, as real ones do, with the closing entry 0.8 s',
          '  after the final status; the action reads until it has that entry, the floor reads once more.'
        ]
      }
    }
  },
  {
    name: 'poll-cost',
    run: async () => {
      log('cost of one poll')
      const poll = pollCost()
      return {
        rows: poll.rows,
        sections: [
          "## Cost of one poll (the action's code on Node 24, best of 15)",
          '',
          "Parsing the answer grows with its size for any client; after that, the action's log cursor",
          '(which parses only what the log grew by) and printer should only grow with the new entries.' +
            (ACTION_DIR === PROJECT ? '' : ' Measured from src/ of this project, not ACTION_DIR.'),
          '',
          '| log entries | new entries | answer (MB) | JSON.parse answer (ms) | cursor.next (ms, parses what the log grew by) | printing (ms) |',
          '|--:|--:|--:|--:|--:|--:|',
          ...poll.details
        ]
      }
    }
  },
  {
    name: 'end-to-exit',
    run: async () => {
      log("deployment's end → step's end")
      const detections = []
      for (const [interval, intervalMs, baseMs] of [
        [undefined, 3000, 9000],
        ['1s', 1000, 4000]
      ] as const) {
        for (const closing of [true, false]) {
          detections.push(await detection(interval, intervalMs, baseMs, closing))
        }
      }
      return {
        rows: detections.flatMap(d => d.rows),
        notes: [
          "- Deployment's end → step's end, with the closing entry: real Coolify writes",
          '  `Gracefully shutting down build container: <deployment uuid>` as the last entry of a job,',
          `  ${fixed(CLOSING_MIN_MS / 1000, 1)}–${fixed(CLOSING_MAX_MS / 1000, 1)} s after the final status (varied evenly across the runs); the deployment ends when`,
          '  that entry is written. Once the action has read a final status and that entry, it ends at once.',
          "- Deployment's end → step's end, without the closing entry (a server before 4.0.0-beta.407): the",
          '  deployment ends with its final status and `finished_at`, and Coolify may still write lines then.',
          "  The closing entry late, the action asks Coolify's version once, learns that this one writes",
          '  none, and reads on until the log has been quiet for 1.5 s: no line is lost, at the cost of up to',
          '  about 2 s. These rows are reported, not held to a target.',
          '- The floor reads once more right after it sees the final status, then exits. With the closing',
          '  entry it often leaves before that entry is written: it loses that line (the "exactly once" rows',
          '  say in how many runs) and its times can be negative (it exited before the end). It is the floor',
          '  for speed, not a correct client; ratios are left out where its time is not positive.'
        ],
        appendix: [
          "## Deployment's end → step's end: each run, end → first read after it → exit (ms)",
          '',
          'Ends are spread evenly over one poll interval; the runs of one interval and variant go at once,',
          'each against its own fake. "—": no read after the end.',
          '',
          '| interval | client | runs |',
          '|---|---|---|',
          ...detections.flatMap(d => d.details)
        ]
      }
    }
  },
  {
    name: 'many-apps',
    run: async () => {
      const many = await manyApps()
      return {
        rows: [...many.rows, ...many.requestRows],
        notes: [
          `- Many apps: one run each; a client notices an end up to one read interval late, so the ratio`,
          `  of 20 at once to one alone moves by up to ±${fixed(3000 / SLOWEST_MS, 2)} between runs at 3s.`,
          `- Many apps: the action's reads share one budget, half of Coolify's default limit (200 a minute), so`,
          `  ${APPS} deployments are each read about every ${fixed((APPS * 60) / (200 * READ_SHARE))} s and the last end is noticed up to that late.`
        ]
      }
    }
  },
  {
    name: 'low-limit',
    run: async () => {
      log(`${LIMITED_APPS} apps under a ${LIMIT_PER_MINUTE}/minute rate limit`)
      return rateLimited()
    }
  },
  { name: 'bytes', run: bytes },
  { name: 'limits', run: manyAppsLimited },
  { name: 'hangs', run: hangs },
  { name: 'recovery', run: recovery }
]

/** The groups named on the command line (`npm run bench -- hangs limits`), else all of them. */
function selectedGroups(names: string[]): typeof GROUPS {
  const unknown = names.filter(name => !GROUPS.some(group => group.name === name))
  if (unknown.length > 0) {
    throw new Error(
      `No benchmark group ${unknown.join(', ')}; the groups: ${GROUPS.map(g => g.name).join(', ')}`
    )
  }
  return names.length === 0 ? GROUPS : GROUPS.filter(group => names.includes(group.name))
}

/** Bytes of the files in `dist`, the command line's folder left out: what the runner fetches and runs. */
function actionBytes(dist: string): number {
  return readdirSync(dist, { recursive: true, encoding: 'utf8' })
    .filter(name => !name.startsWith('cli'))
    .map(name => statSync(join(dist, name)))
    .filter(stat => stat.isFile())
    .reduce((sum, stat) => sum + stat.size, 0)
}

async function main(): Promise<void> {
  const began = Date.now()
  const groups = selectedGroups(process.argv.slice(2))
  const all = groups.length === GROUPS.length
  if (!existsSync(join(ACTION_DIR, 'dist/index.js'))) {
    throw new Error(`No ${join(ACTION_DIR, 'dist/index.js')}: npm run bundle`)
  }
  snapshotAction()
  const node24 = findNode24()
  const childNode = execFileSync(node24, ['--version'], { encoding: 'utf8' }).trim()
  const bundle = statSync(ACTION).size
  const actionFiles = actionBytes(dirname(ACTION))
  const reference = statSync(REFERENCE).size
  const bundleName = ACTION_DIR === PROJECT ? 'dist/index.js' : join(ACTION_DIR, 'dist/index.js')

  const results = join(PROJECT, 'bench/RESULTS.md')
  const previous = all ? previousResults(results) : undefined
  const loadBefore = loadavg()[0]
  const parts: Part[] = []
  for (const group of groups) parts.push(await group.run())
  const loadAfter = loadavg()[0]

  const rows: Row[] = [
    ...parts.flatMap(part => part.rows),
    {
      metric: 'Bundle: dist/index.js, both steps (KB)',
      action: fixed(bundle / 1024),
      reference: fixed(reference / 1024, 1),
      target: 'reported'
    },
    {
      metric: 'What the action runs: dist/ outside dist/cli/ (MB)',
      action: fixed(actionFiles / 1e6, 2),
      reference: '',
      target: '≤ 2.0',
      met: actionFiles <= 2e6
    }
  ]
  const missed = rows.filter(row => row.met === false).length
  const cpu = cpus()
  const text = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench${all ? '' : ` -- ${groups.map(g => g.name).join(' ')}`}\` on ${new Date(began).toISOString().slice(0, 10)}: the bundled action`,
    `(${bundleName}) and the floor client (bench/reference.mjs), both run on Node ${childNode} as`,
    `GitHub's runner runs the action, against the fake Coolify (4.x flavor) in the benchmark's own`,
    `process (Node ${process.version}). Machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}).`,
    `Took ${fixed((Date.now() - began) / 1000)} s. Targets missed: ${missed} of ${rows.filter(row => row.met !== undefined).length}.`,
    ...(previous
      ? [
          `The column "action on ${previous.date}" holds the previous full run's figures, for comparison.`
        ]
      : []),
    '',
    table(rows, previous),
    '',
    ...parts.flatMap(part => (part.sections ? [...part.sections, ''] : [])),
    '## Notes',
    '',
    `- Machine load (1-minute load average): ${fixed(loadBefore, 1)} at the start, ${fixed(loadAfter, 1)} at the end, on`,
    `  ${cpu.length} cores.${
      Math.max(loadBefore, loadAfter) > cpu.length / 2
        ? ' Other work shared the machine meanwhile: it adds to times and CPU, and single runs move with it.'
        : ''
    }`,
    ...parts.flatMap(part => part.notes ?? []),
    '',
    ...parts.flatMap(part => (part.appendix ? [...part.appendix, ''] : []))
  ].join('\n')
  process.stdout.write(`${text}\n`)
  if (all) {
    writeFileSync(results, text)
    log(`wrote bench/RESULTS.md in ${fixed((Date.now() - began) / 1000)} s`)
  } else {
    log(`only some groups ran: bench/RESULTS.md left as it was`)
  }
}

await main()
