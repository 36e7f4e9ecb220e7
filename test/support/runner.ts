import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  inputVariables,
  JOB_CONTEXT,
  loadManifest,
  ManifestError,
  refuseUndeclaredOutputs,
  resolveInputs,
  runsPost,
  type JobStatus,
  type Manifest
} from './manifest.js'
import { findNode24 } from './node.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
/** Also right when this file runs compiled from .build/test/support. */
export const PROJECT = ROOT.endsWith('.build') ? dirname(ROOT) : ROOT
/**
 * The action to run, as the runner checks it out: a folder with action.yml and the bundle its
 * `runs` name. The tests' fresh build of the sources (see bundle-sources.mjs), else this project
 * with its committed dist/.
 */
export const ACTION_DIR = process.env.ACTION_DIR ?? PROJECT
/** Where no test gives a fake GitHub: a loopback port nothing listens on, so a call fails at once. */
const NO_GITHUB = 'http://127.0.0.1:9'

export interface RunOptions {
  entry?: 'main' | 'post'
  /**
   * The step's `with:`, by action.yml name. As the runner does, every declared input the step does
   * not give takes its default (`${{ github.token }}` included); an undeclared one is an error.
   */
  inputs: Record<string, string>
  /** For the post step: how the job went, which `runs.post-if` is evaluated against. */
  job?: JobStatus
  /** Saved state from the main step, given to the post step as STATE_* variables. */
  state?: Record<string, string>
  env?: Record<string, string>
  /** Also show the child's output, as it comes (stdout as a GitHub job log shows it). */
  live?: boolean
  /** Called with everything printed so far, on each chunk: to send a signal at the right moment. */
  onStdout?: (stdout: string, child: ChildProcess) => void
  /** Kill the child after this long; a test must never hang. */
  killAfterMs?: number
  /** Run this script instead of the bundle, in the same environment (the benchmark's reference). */
  script?: string
  /** Node options before the script, e.g. `--import` of a preload. */
  nodeArgs?: string[]
  /** Arguments after the script: the command line's, when `script` is it. */
  args?: string[]
  /** The Node binary: Node 24 as GitHub's runner has it, unless a test runs another runner's. */
  node?: string
}

export interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  outputs: Record<string, string>
  state: Record<string, string>
  summary: string
  /** Epoch ms just before the spawn, and when the process exited. */
  startedAt: number
  exitedAt: number
}

let manifest: Manifest | undefined

/** The action's action.yml, read as strictly as the runner reads it (once per test file). */
export function actionManifest(): Manifest {
  manifest ??= loadManifest(join(ACTION_DIR, 'action.yml'))
  return manifest
}

/**
 * Runs the action as GitHub's runner does: it reads action.yml, runs the file its `runs.main` (or
 * `runs.post`) names on Node 24 (or `node`) from a workspace outside the project, with the inputs in INPUT_*
 * variables (upper-cased, hyphens kept) and files for outputs, state and the job summary. An
 * output the action sets that action.yml does not declare is an error.
 */
export async function runAction(options: RunOptions): Promise<RunResult> {
  const action = actionManifest()
  const entry = options.entry ?? 'main'
  if (entry === 'post' && !runsPost(action, options.job ?? 'success')) {
    throw new ManifestError(
      `The runner would not run the post step after a job that ended ${options.job ?? 'success'}.`
    )
  }
  const handMade = Object.keys(options.env ?? {}).filter(name => name.startsWith('INPUT_'))
  if (handMade.length > 0) {
    throw new ManifestError(
      `Give ${handMade.join(', ')} as inputs: the runner makes INPUT_* from them.`
    )
  }
  const inputs = inputVariables(resolveInputs(action, options.inputs, JOB_CONTEXT))
  const workspace = mkdtempSync(join(tmpdir(), 'coolify-action-'))
  const files = {
    GITHUB_OUTPUT: join(workspace, 'output'),
    GITHUB_STATE: join(workspace, 'state'),
    GITHUB_STEP_SUMMARY: join(workspace, 'summary.md'),
    GITHUB_ENV: join(workspace, 'env'),
    GITHUB_PATH: join(workspace, 'path')
  }
  for (const file of Object.values(files)) writeFileSync(file, '')
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? workspace,
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_WORKSPACE: workspace,
    RUNNER_TEMP: workspace,
    GITHUB_REPOSITORY: 'octo/app',
    GITHUB_SHA: '0123456789abcdef0123456789abcdef01234567',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_API_URL: NO_GITHUB,
    GITHUB_RUN_ID: '42',
    GITHUB_RUN_NUMBER: '3',
    ...files,
    ...options.env,
    ...inputs
  }
  for (const [name, value] of Object.entries(options.state ?? {})) env[`STATE_${name}`] = value

  const script =
    options.script ?? join(ACTION_DIR, entry === 'main' ? action.runs.main : action.runs.post!)
  const node = options.node ?? findNode24()
  const startedAt = Date.now()
  const child = spawn(node, [...(options.nodeArgs ?? []), script, ...(options.args ?? [])], {
    cwd: workspace,
    env,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let exitedAt = 0
  child.on('exit', () => (exitedAt = Date.now()))
  let stdout = ''
  let stderr = ''
  const show = createGitHubView(text => process.stdout.write(text))
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    if (options.live) show(chunk)
    options.onStdout?.(stdout, child)
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
    if (options.live) process.stderr.write(chunk)
  })
  const killer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 60_000)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>(done =>
    child.on('close', (exitCode, exitSignal) => done([exitCode, exitSignal]))
  )
  clearTimeout(killer)
  const outputs = readFileCommands(files.GITHUB_OUTPUT)
  if (!options.script) refuseUndeclaredOutputs(action, Object.keys(outputs))
  return {
    code,
    signal,
    stdout,
    stderr,
    outputs,
    state: readFileCommands(files.GITHUB_STATE),
    summary: shownSummary(files.GITHUB_STEP_SUMMARY),
    startedAt,
    exitedAt
  }
}

/**
 * The runner uploads a step's summary only up to 1 MiB: a larger one is dropped whole (the job
 * shows an error of its own, nothing of the summary).
 */
export const SUMMARY_LIMIT_BYTES = 1024 * 1024

function shownSummary(path: string): string {
  const text = readFileSync(path, 'utf8')
  return Buffer.byteLength(text) > SUMMARY_LIMIT_BYTES ? '' : text
}

/** `name<<DELIMITER` … `DELIMITER` blocks, as @actions/core writes them; the last value wins. */
export function readFileCommands(path: string): Record<string, string> {
  const values: Record<string, string> = {}
  const lines = readFileSync(path, 'utf8').split('\n')
  for (let i = 0; i < lines.length; i++) {
    const match = /^([^<]+)<<(.+)$/.exec(lines[i])
    if (!match) continue
    const end = lines.indexOf(match[2], i + 1)
    values[match[1]] = lines.slice(i + 1, end).join('\n')
    i = end
  }
  return values
}

// eslint-disable-next-line no-control-regex -- ANSI color codes start with ESC
const ANSI = /\u001b\[[0-9;]*m/g

/**
 * The build log lines as a reader sees them: what was printed between `stop-commands` markers,
 * without colors. Prefixes (`name | `) are kept.
 */
export function buildLogLines(stdout: string): string[] {
  const lines: string[] = []
  let endMarker: string | undefined
  for (const line of stdout.split('\n')) {
    if (endMarker === undefined) {
      const start = /^::stop-commands::(.+)$/.exec(line)
      if (start) endMarker = `::${start[1]}::`
    } else if (line === endMarker) {
      endMarker = undefined
    } else {
      lines.push(line.replace(ANSI, ''))
    }
  }
  return lines
}

/**
 * Shows output as a GitHub job log would: workflow commands become what the runner makes of them
 * (group headers, annotations) or disappear (masks, stop-commands markers). Fed chunks as they
 * come; whole lines only.
 */
export function createGitHubView(write: (text: string) => void): (chunk: string) => void {
  let partial = ''
  let stoppedUntil: string | undefined
  return chunk => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop() ?? ''
    let text = ''
    for (const line of lines) {
      if (stoppedUntil !== undefined) {
        if (line === stoppedUntil) stoppedUntil = undefined
        else text += `${line}\n`
        continue
      }
      const command = /^::([a-z-]+)(?: ([^:]*))?::(.*)$/.exec(line)
      if (!command) {
        text += `${line}\n`
        continue
      }
      const [, name, properties, message] = command
      if (name === 'stop-commands') stoppedUntil = `::${message}::`
      else if (name === 'group') text += `\u001b[1m▼ ${message}\u001b[0m\n`
      else if (name === 'error')
        text += `\u001b[31mError: ${decode(properties, message)}\u001b[0m\n`
      else if (name === 'warning')
        text += `\u001b[33mWarning: ${decode(properties, message)}\u001b[0m\n`
    }
    if (text) write(text)
  }
}

function decode(properties: string | undefined, message: string): string {
  const unescape = (value: string) =>
    value
      .replaceAll('%0A', '\n')
      .replaceAll('%0D', '\r')
      .replaceAll('%3A', ':')
      .replaceAll('%2C', ',')
      .replaceAll('%25', '%')
  const title = /title=([^,]*)/.exec(properties ?? '')?.[1]
  return title ? `${unescape(title)}\n${unescape(message)}` : unescape(message)
}
