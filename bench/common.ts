/** What the benchmark's groups share: the bundle measured, the fake's setup, rows and checks. */
import { cpSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startFakeCoolify, type FakeApp, type FakeCoolify } from '../test/fake-coolify/index.js'
import { runAction, type RunResult } from '../test/support/runner.js'
import type { BigBuild } from './builds.js'

const HERE = dirname(fileURLToPath(import.meta.url))
/** The project, also when this file runs compiled from .build/bench. */
export const PROJECT = resolve(HERE, HERE.includes(`${join('.build', 'bench')}`) ? '../..' : '..')
/**
 * The action measured, as the runner checks it out: a folder with action.yml and dist/. This
 * project unless ACTION_DIR names another (test/support/runner.ts reads it too, for action.yml).
 */
export const ACTION_DIR = resolve(process.env.ACTION_DIR ?? PROJECT)
/**
 * The bundle as it was when the benchmark started, copied out of dist/ (with its package.json, which
 * makes it ESM) by `snapshotAction`, so that a rebuild of dist/ meanwhile changes nothing measured.
 */
export const ACTION = join(mkdtempSync(join(tmpdir(), 'coolify-bench-dist-')), 'dist/index.js')
/** The floor client: only what any correct client must do. */
export const REFERENCE = join(PROJECT, 'bench/reference.mjs')
export const TOKEN = 'bench-token-0123456789'
export const API = '/api/v1'

export function snapshotAction(): void {
  cpSync(join(ACTION_DIR, 'dist'), dirname(ACTION), { recursive: true })
}

/** One row of the results table: the action's figure beside the floor's, and its target. */
export interface Row {
  metric: string
  action: string
  reference: string
  ratio?: number
  target?: string
  met?: boolean
}

/** What a group adds to the results: rows, sections before the notes, notes, sections after them. */
export interface Part {
  rows: Row[]
  sections?: string[]
  notes?: string[]
  appendix?: string[]
}

export const log = (message: string): void => void process.stderr.write(`[bench] ${message}\n`)
export const sleep = (ms: number): Promise<void> => new Promise(done => setTimeout(done, ms))

export function uuidOf(name: string): string {
  return `${name}uuid`.padEnd(24, '0')
}

export function app(name: string, build: BigBuild): FakeApp {
  return { uuid: uuidOf(name), name, scenarios: [build.scenario] }
}

/**
 * A server deployment queue limit (`deployment_queue_limit`) above the 30 deployments the rate-limit
 * groups queue at once: at Coolify's default, 25, the last five would be refused as "queue full",
 * which is the queue's limit, not the rate limit those groups measure.
 */
export const ROOMY_QUEUE = 50

export function fake(
  apps: FakeApp[],
  options: {
    rateLimit?: number
    queueLimit?: number
    statusCheckEveryMs?: number
    version?: '4.0-beta' | '4.2' | '4.3'
  } = {}
): Promise<FakeCoolify> {
  return startFakeCoolify({ token: TOKEN, apps, ...options })
}

/** Runs the action's step against `server`, as the runner does; a failed step is a result too. */
export function runStep(
  server: FakeCoolify,
  inputs: Record<string, string>,
  killAfterMs: number
): Promise<RunResult> {
  return runAction({
    inputs: { 'coolify-url': server.url, token: TOKEN, ...inputs },
    script: ACTION,
    killAfterMs
  })
}

/** A read of one deployment (GET /deployments/{uuid}), not of an application's history. */
export const isRead = (path: string): boolean =>
  path.startsWith(`${API}/deployments/`) && !path.startsWith(`${API}/deployments/applications/`)

/** Every expected line printed exactly once (other lines, like `$ command`, are not counted). */
export function exactlyOnce(
  expected: string[],
  printed: string[]
): { ok: boolean; detail: string } {
  const counts = new Map<string, number>(expected.map(line => [line, 0]))
  for (const line of printed) {
    const count = counts.get(line)
    if (count !== undefined) counts.set(line, count + 1)
  }
  let missing = 0
  let repeated = 0
  for (const count of counts.values()) {
    if (count === 0) missing++
    else if (count > 1) repeated++
  }
  const ok = missing === 0 && repeated === 0 && counts.size === expected.length
  return { ok, detail: ok ? 'yes' : `no: ${missing} missing, ${repeated} repeated` }
}

export function fixed(value: number, digits = 0): string {
  return value.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits
  })
}

/** Milliseconds as seconds with one decimal. */
export const seconds = (ms: number): string => fixed(ms / 1000, 1)
