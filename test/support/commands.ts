/**
 * A stand-in for the action's workflow commands (src/action/commands.ts), for running its steps
 * in-process: inputs as the runner gives them from action.yml (defaults applied; reading or setting
 * an undeclared name is an error), outputs, state, log lines and annotations recorded, the job
 * summary written to a temp file by @actions/core. Install it with
 * `jest.unstable_mockModule('../src/action/commands.js', ...)` before the action's modules are
 * imported.
 */
import { jest } from '@jest/globals'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  inputVariables,
  JOB_CONTEXT,
  loadManifest,
  ManifestError,
  refuseUndeclaredOutputs,
  resolveInputs
} from './manifest.js'
import { PROJECT } from './runner.js'

const actual = await import('../../src/action/commands.js')
const { summary } = await import('@actions/core')

export interface Recorded {
  outputs: Record<string, string>
  state: Record<string, string>
  secrets: string[]
  info: string[]
  warnings: string[]
  errors: string[]
  failed: string[]
}

export const recorded: Recorded = {
  outputs: {},
  state: {},
  secrets: [],
  info: [],
  warnings: [],
  errors: [],
  failed: []
}

/** The sources run in-process, so the manifest is the project's own. */
const manifest = loadManifest(join(PROJECT, 'action.yml'))

const summaryFile = join(mkdtempSync(join(tmpdir(), 'coolify-step-')), 'summary.md')

/** Starts a step afresh: these inputs (the step's `with:`), this saved state, nothing recorded yet. */
export function resetStep(inputs: Record<string, string>, state: Record<string, string> = {}) {
  // The real getInput reads them, as it does on the runner.
  for (const name of Object.keys(process.env))
    if (name.startsWith('INPUT_')) delete process.env[name]
  Object.assign(process.env, inputVariables(resolveInputs(manifest, inputs, JOB_CONTEXT)))
  Object.assign(recorded, {
    outputs: {},
    state: { ...state },
    secrets: [],
    info: [],
    warnings: [],
    errors: [],
    failed: []
  })
  writeFileSync(summaryFile, '')
  process.env.GITHUB_STEP_SUMMARY = summaryFile
  summary.emptyBuffer()
  process.exitCode = undefined
}

export function summaryText(): string {
  return readFileSync(summaryFile, 'utf8')
}

export const commandsStandIn: typeof actual = {
  ...actual,
  getInput: jest.fn((name: string) => {
    if (!manifest.inputs.has(name)) {
      throw new ManifestError(`The action reads input '${name}', not declared in action.yml.`)
    }
    return actual.getInput(name)
  }),
  setOutput: jest.fn((name: string, value: string) => {
    refuseUndeclaredOutputs(manifest, [name])
    recorded.outputs[name] = String(value)
  }),
  saveState: jest.fn((name: string, value: string) => {
    recorded.state[name] = String(value)
  }),
  getState: jest.fn((name: string) => recorded.state[name] ?? ''),
  setSecret: jest.fn((secret: string) => void recorded.secrets.push(secret)),
  info: jest.fn((message: string) => void recorded.info.push(message)),
  debug: jest.fn(),
  warning: jest.fn((message: string) => void recorded.warnings.push(message)),
  error: jest.fn((message: string) => void recorded.errors.push(message)),
  setFailed: jest.fn((message: string) => {
    recorded.failed.push(message)
    process.exitCode = 1
  })
}
