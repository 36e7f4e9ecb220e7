/**
 * A hang in each phase against `timeout`: one application, `timeout: 10s`, and one kind of request
 * to Coolify that never answers: reading or changing the application before the deploy, the
 * trigger, the reads of the deployment, the status read of the health check, the rollback. The
 * step must still end soon after `timeout`, with a status, and never call the application
 * unhealthy when only Coolify's API hung.
 */
import type { FakeCoolify, Fault, Scenario } from '../test/fake-coolify/index.js'
import { timedBuild } from '../test/support/builds.js'
import type { RunResult } from '../test/support/runner.js'
import {
  API,
  fake,
  log,
  runStep,
  seconds,
  sleep,
  TOKEN,
  uuidOf,
  type Part,
  type Row
} from './common.js'

const TIMEOUT = '10s'
const TIMEOUT_MS = 10_000
const HEALTH_TIMEOUT = '3s'
/** The step may end this long after `timeout`: its report, undoing pins, cancelling. */
const GRACE_MS = 5000
const KILL_AFTER_MS = 90_000
const NAME = 'web'
const UUID = uuidOf(NAME)
/** `commit`: build exactly this one. */
const COMMIT = '0123456789abcdef0123456789abcdef01234567'
const BUILD_MS = 2000
/** What the builds resolve HEAD to: whole SHAs, as Coolify records them once the job cloned. */
const EARLIER = 'abc1234'.padEnd(40, '0')
const LATER = 'def5678'.padEnd(40, '0')

/** A build that ends `finished` (or `failed`) after BUILD_MS, with a few lines and a closing one. */
function build(outcome: 'finished' | 'failed', commit: string): Scenario {
  return { ...timedBuild(NAME, { durationMs: BUILD_MS, outcome }).scenario, commit }
}

interface Phase {
  name: string
  /** The request that hangs. */
  request: string
  fault: Fault
  inputs?: Record<string, string>
  /** The app's successive deploys; default one that finishes. */
  scenarios?: Scenario[]
  /** A deployment finished before the step (what a rollback goes back to). */
  deployedBefore?: boolean
  /** The request hangs only once the step's deployment is final in Coolify. */
  afterEnd?: boolean
}

const hang = (method: string, path: string | RegExp): Fault => ({
  method,
  path,
  times: Infinity,
  do: 'hang'
})

const PHASES: Phase[] = [
  {
    name: 'prepare, with `commit`',
    request: `GET /applications/{uuid}`,
    fault: hang('GET', `/applications/${UUID}`),
    inputs: { commit: COMMIT }
  },
  {
    name: 'prepare, with `commit`',
    request: `PATCH /applications/{uuid}`,
    fault: hang('PATCH', `/applications/${UUID}`),
    inputs: { commit: COMMIT }
  },
  {
    name: 'trigger',
    request: 'POST /deploy',
    fault: hang('POST', '/deploy')
  },
  {
    name: 'follow',
    request: 'GET /deployments/{uuid}',
    fault: hang('GET', /^\/deployments\/(?!applications\/)[^/]+$/)
  },
  {
    name: 'health, after the deployment finished',
    request: 'GET /applications/{uuid}',
    fault: hang('GET', `/applications/${UUID}`),
    afterEnd: true
  },
  {
    name: 'rollback, after a failed deployment',
    request: 'POST /applications/{uuid}/rollback',
    fault: hang('POST', `/applications/${UUID}/rollback`),
    inputs: { 'rollback-on-failure': 'true' },
    scenarios: [build('finished', EARLIER), build('failed', LATER)],
    deployedBefore: true
  }
]

interface Measured {
  phase: Phase
  result: RunResult
  wallMs: number
  /** Requests that hung: none means the step never reached the phase. */
  hung: number
}

/** Deploys the app from outside the step and waits until that deployment finished. */
async function deployBefore(server: FakeCoolify): Promise<void> {
  const response = await fetch(`${server.url}${API}/deploy?uuid=${UUID}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' }
  })
  if (!response.ok) throw new Error(`deploy before the step: ${response.status}`)
  while (server.deployments()[0]?.status !== 'finished') await sleep(50)
}

/** Arms the fault once a deployment the step started is final, unless the step ended first. */
async function armAfterEnd(server: FakeCoolify, fault: Fault, done: () => boolean): Promise<void> {
  while (!done()) {
    if (server.deployments().some(d => d.finishedAt !== undefined)) {
      server.inject(fault)
      return
    }
    await sleep(20)
  }
}

async function measure(phase: Phase, delayMs: number): Promise<Measured> {
  await sleep(delayMs)
  const server = await fake([
    { uuid: UUID, name: NAME, scenarios: phase.scenarios ?? [build('finished', EARLIER)] }
  ])
  if (phase.deployedBefore) await deployBefore(server)
  let ended = false
  const armed = phase.afterEnd ? armAfterEnd(server, phase.fault, () => ended) : undefined
  if (!phase.afterEnd) server.inject(phase.fault)
  const result = await runStep(
    server,
    { 'app-uuid': UUID, timeout: TIMEOUT, 'health-timeout': HEALTH_TIMEOUT, ...phase.inputs },
    KILL_AFTER_MS
  )
  ended = true
  await armed
  await server.close()
  return {
    phase,
    result,
    wallMs: result.exitedAt - result.startedAt,
    hung: server.requests.filter(r => r.fault === 'hang').length
  }
}

function rowsOf(m: Measured): Row[] {
  const label = `Hang in ${m.phase.name}: ${m.phase.request} never answers`
  const status = m.result.outputs.status ?? ''
  const exit =
    m.result.code === null
      ? `killed (${m.result.signal}) after ${seconds(KILL_AFTER_MS)} s`
      : `exit ${m.result.code}`
  const limit = TIMEOUT_MS + GRACE_MS
  const reached = m.hung > 0
  return [
    {
      metric: `${label}: step's start → exit (s), timeout ${TIMEOUT}`,
      action: reached ? seconds(m.wallMs) : `${seconds(m.wallMs)} (never reached the hang)`,
      reference: 'not run',
      target: `≤ ${seconds(limit)} (timeout + ${seconds(GRACE_MS)} s)`,
      met: reached && m.result.code !== null && m.wallMs <= limit
    },
    {
      metric: `${label}: exit code, \`status\``,
      action: `${exit}, ${status === '' ? '(no status)' : `\`${status}\``}`,
      reference: 'not run',
      target: 'a status, never `unhealthy`',
      met: reached && status !== '' && status !== 'unhealthy'
    }
  ]
}

export async function hangs(): Promise<Part> {
  log(`a hang in each phase, timeout ${TIMEOUT}`)
  // Each against a fake of its own, at once: only times and outputs are measured.
  const runs = await Promise.all(PHASES.map((phase, i) => measure(phase, i * 150)))
  const notes = [
    `- Hang in each phase: one application, \`timeout: ${TIMEOUT}\`, \`health-timeout: ${HEALTH_TIMEOUT}\`, the default`,
    `  poll-interval; its deployment takes ${seconds(BUILD_MS)} s. Every request of the kind named hangs (a fault`,
    '  that answers nothing, `times: Infinity`); the health row arms it once the deployment is final in',
    '  Coolify, the rollback row deploys a finished version before the step and then fails. One run',
    `  each, at once, each against a fake of its own; a step still running after ${seconds(KILL_AFTER_MS)} s is killed.`,
    '  Requests that hung, by row: ' +
      runs.map(m => `${m.phase.request} ${m.hung}`).join(', ') +
      '.'
  ]
  return { rows: runs.flatMap(rowsOf), notes }
}
