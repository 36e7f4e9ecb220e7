/**
 * What the fault-injection suites share: the values a run must never print, the routes faults are
 * aimed at, and the checks every run must pass whatever went wrong.
 */
import type { FakeCoolify } from '../fake-coolify/index.js'
import { runAction, type RunResult } from './runner.js'
import { actionRequests, expectNoSecrets, expectNoStackTrace, inputsFor } from './scenarios.js'

/** Put in injected bodies where a real server would put configuration: it must never be printed. */
export const MARKER = 'ROW-SECRET-42'
/** GET /deployments/{uuid}, not the history under /deployments/applications/. */
export const READ = /^\/deployments\/(?!applications\/)[^/]+$/
export const API_READ = /^\/api\/v1\/deployments\/(?!applications\/)[^/]+$/
export const HTML = { 'Content-Type': 'text/html; charset=utf-8' }
export const CF_HEADERS = {
  'CF-Access-Client-Id': 'cf-id-7f3a0c.access',
  'CF-Access-Client-Secret': 'cf-secret-9b21e4d8'
}

export function run(server: FakeCoolify, inputs: Record<string, string> = {}): Promise<RunResult> {
  return runAction({ inputs: inputsFor(server, inputs) })
}

/** What every run must respect, whatever went wrong. */
export function expectCleanOutput(result: RunResult, secrets: readonly string[]): void {
  // A value the action masks may be named in its `::add-mask::` line, nowhere else.
  expectNoSecrets(result.stdout + result.stderr, [...secrets, MARKER])
  expectNoStackTrace(result.stderr)
}

/** `path` requests the action sent, in order. */
export function sent(server: FakeCoolify, method: string, path: RegExp | string) {
  return actionRequests(server).filter(
    request =>
      request.method === method &&
      (typeof path === 'string' ? request.path === `/api/v1${path}` : path.test(request.path))
  )
}
