import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { formatDuration } from '../time/duration.js'
import type { PullRequestEvent } from '../config/event.js'
import { setHost } from '../host.js'
import type { Config } from '../config/inputs.js'
import { ActionError } from '../errors.js'
import type { DeploymentView } from '../model/deployment.js'
import { decide, type Outcome } from '../model/outcome.js'
import { failsStep, hasEnded } from '../model/status.js'
import { failureLine, lastError } from '../report/failure.js'
import { setOutputs, toRecord } from '../report/outputs.js'
import { deployAndFollow, type Front } from '../jobs/run.js'
import { plainLine, TerminalHost } from './host.js'
import {
  COMPONENT_VARIABLE,
  inCommandLineTerms,
  parseInvocation,
  reportFiles,
  usage,
  UsageError,
  type Invocation
} from './options.js'

/** The exit statuses, as --help and the docs name them. */
export const EXIT = { finished: 0, failed: 1, usage: 2, coolify: 3 } as const

const NAME = 'coolify-deploy-follow'

/**
 * The command line: the same deploy as the action's, printed for any CI. Returns the exit status.
 * `write` takes standard output; every error, a usage mistake or a failed deploy, goes to `fail`
 * (standard error). `exit` ends the process at once, on a second SIGINT or SIGTERM.
 */
export async function main(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  write: (text: string) => void,
  fail: (text: string) => void,
  exit: (status: number) => void = status => process.exit(status)
): Promise<number> {
  const refuse = (message: string, files: ReportFiles): number => {
    fail(`${NAME}: ${message}\n`)
    const outcome = decide([], { cancelled: false, error: new UsageError(message) })
    writeReports(
      files,
      outcome,
      text => text,
      warning => fail(`${NAME}: ${warning}\n`)
    )
    return EXIT.usage
  }
  let invocation: Invocation
  try {
    invocation = parseInvocation(args, env)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    return refuse(error.message, reportFiles(args))
  }
  if (invocation.help) {
    write(usage())
    return EXIT.finished
  }
  if (invocation.version) {
    write(`${NAME} ${version()}\n`)
    return EXIT.finished
  }
  if (!invocation.inputs.get('token')) {
    return refuse(
      "no API token: set COOLIFY_TOKEN (from your CI's secret variables), or give --token-file FILE.",
      invocation
    )
  }
  const gitlab = env.GITLAB_CI === 'true'
  const host = new TerminalHost({
    inputs: invocation.inputs,
    colors: colors(env, gitlab, process.stdout.isTTY === true),
    gitlab,
    verbose: invocation.verbose,
    words: message =>
      inCommandLineTerms(
        message,
        env[COMPONENT_VARIABLE] === 'true' ? 'component' : 'command line'
      ),
    write,
    fail
  })
  setHost(host)
  // What is known when a signal comes, written at once: a host that kills soon after (Jenkins,
  // 5 s after its SIGTERM) still leaves the files for later jobs. A second signal ends the run.
  let started: readonly DeploymentView[] = []
  let signals = 0
  const onSignal = (signal: NodeJS.Signals): void => {
    const why = host.cancelled(signal)
    const known = decide(started, { cancelled: true, error: new ActionError(`${why}.`) })
    writeReports(
      invocation,
      known,
      text => host.redact(text),
      warning => host.warning(warning)
    )
    if (++signals === 1) return
    if (known.deployments.length > 0) host.info(table(known))
    const running = started.filter(deployment => !hasEnded(deployment.status))
    host.error(
      `${why} again: stopped at once${running.length > 0 ? `; still running in Coolify: ${running.map(d => `${d.name} (${d.uuid ?? 'no deployment yet'})`).join(', ')}` : ''}.`
    )
    exit(EXIT.failed)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  let status: number = EXIT.finished
  try {
    await deployAndFollow({
      event: () => mergeRequest(env),
      watchers: async () => [
        {
          building: async deployments => void (started = deployments),
          finish: async () => {}
        }
      ],
      removed: async () => {},
      report: async (outcome, config) => {
        status = report(host, outcome, config, invocation)
      }
    } satisfies Front)
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
  return status
}

/** The result table, the files for later jobs, and the exit status. */
function report(
  host: TerminalHost,
  outcome: Outcome,
  config: Config | undefined,
  invocation: Invocation
): number {
  setOutputs(outcome, (name, value) => host.setOutput(name, value))
  if (outcome.deployments.length > 0) host.info(table(outcome))
  // What the action's annotations say: the application, the status, why, and the link.
  for (const deployment of outcome.deployments) {
    if (!config || !failsStep(deployment.status)) continue
    host.error(failureLine(deployment, config.instanceUrl, lastError(deployment)))
  }
  if (outcome.error) host.error(outcome.error)
  writeReports(
    invocation,
    outcome,
    text => host.redact(text),
    warning => host.warning(warning)
  )
  // Coolify may refuse, and the run be cancelled, before the config is whole: while names are
  // looked up.
  if (outcome.byCoolify) return EXIT.coolify
  if (outcome.error && config === undefined && outcome.status !== 'cancelled') return EXIT.usage
  if (outcome.byInput) return EXIT.usage
  return outcome.fails ? EXIT.failed : EXIT.finished
}

interface ReportFiles {
  json?: string
  dotenv?: string
}

/**
 * `--json` and `--dotenv`, each replaced whole: written beside the file, then renamed over it, so
 * that a job killed while writing never leaves half a file for the jobs after it.
 */
function writeReports(
  files: ReportFiles,
  outcome: Outcome,
  redact: (text: string) => string,
  warn: (message: string) => void
): void {
  const outputs = new Map<string, string>()
  setOutputs(outcome, (name, value) => outputs.set(name, value))
  // Only the error is free text: the rest are Coolify's ids, statuses and URLs, which a mask of
  // an `env` or `--header` value would star out for the jobs that read them.
  for (const [file, text] of [
    [files.json, () => `${JSON.stringify(outcome.deployments.map(toRecord), null, 2)}\n`],
    [files.dotenv, () => dotenv(outputs, redact(outcome.error ?? ''))]
  ] as const) {
    if (!file) continue
    const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`)
    try {
      writeFileSync(temporary, text())
      renameSync(temporary, file)
    } catch (error) {
      rmSync(temporary, { force: true })
      warn(`Could not write ${file}: ${(error as Error).message}`)
    }
  }
}

/** One row per deployment: name, status, duration, and the URL or why it failed. */
function table({ deployments }: Outcome): string {
  const rows = deployments.map(deployment => [
    deployment.name,
    deployment.status,
    deployment.durationMs === undefined ? '' : formatDuration(deployment.durationMs),
    failsStep(deployment.status) ? (deployment.reason ?? '') : (deployment.appUrl ?? '')
  ])
  const widths = [0, 1, 2].map(column => Math.max(...rows.map(row => row[column].length)))
  const lines = rows.map(row =>
    row
      .map((cell, column) => (column < 3 ? cell.padEnd(widths[column]) : cell))
      .join('  ')
      .trimEnd()
  )
  return ['Result:', ...lines.map(line => `  ${line}`)].join('\n')
}

/**
 * The outputs as COOLIFY_* variables, one a line, for GitLab's `artifacts:reports:dotenv` (which
 * also gives an environment its URL), and the error that stopped the run, if any.
 * `deployments` stays in --json: a dotenv value is one line.
 */
function dotenv(outputs: ReadonlyMap<string, string>, error = ''): string {
  const names: Record<string, string> = {
    status: 'COOLIFY_STATUS',
    'deployment-uuid': 'COOLIFY_DEPLOYMENT_UUID',
    'deployment-url': 'COOLIFY_DEPLOYMENT_URL',
    url: 'COOLIFY_APP_URL',
    duration: 'COOLIFY_DURATION',
    'rolled-back': 'COOLIFY_ROLLED_BACK',
    'review-app-uuid': 'COOLIFY_REVIEW_APP_UUID'
  }
  const lines = Object.entries(names).map(([output, name]) => [name, outputs.get(output) ?? ''])
  return [...lines, ['COOLIFY_ERROR', error]]
    .map(([name, value]) => `${name}=${plainLine(value)}\n`)
    .join('')
}

/**
 * A GitLab pipeline's facts, as the action reads a workflow's event: the project, the commit, and
 * in a merge request pipeline the source branch, its newest commit, and whether it comes from a
 * fork. Elsewhere, GITHUB_REPOSITORY where a runner of GitHub's kind sets it.
 */
function mergeRequest(env: NodeJS.ProcessEnv): PullRequestEvent {
  const text = (name: string): string | undefined => env[name] || undefined
  return {
    // Review apps' markers name it: two projects' merge requests of one number stay apart.
    repository: text('CI_PROJECT_PATH') ?? text('GITHUB_REPOSITORY'),
    sha: text('CI_COMMIT_SHA'),
    headRef: text('CI_MERGE_REQUEST_SOURCE_BRANCH_NAME'),
    headSha: text('CI_MERGE_REQUEST_SOURCE_BRANCH_SHA') ?? text('CI_COMMIT_SHA'),
    headRepository: text('CI_MERGE_REQUEST_SOURCE_PROJECT_PATH'),
    baseRepository: text('CI_MERGE_REQUEST_PROJECT_PATH')
  }
}

/**
 * Colours on a terminal and in GitLab's log. FORCE_COLOR decides first, as Node reads it: set
 * empty, `1`, `2`, `3` or `true`, colours; any other value (`0`, `false`), none. Then NO_COLOR.
 */
export function colors(env: NodeJS.ProcessEnv, gitlab: boolean, terminal: boolean): boolean {
  if (env.FORCE_COLOR !== undefined) return ['', '1', '2', '3', 'true'].includes(env.FORCE_COLOR)
  if (env.NO_COLOR) return false
  return gitlab || terminal
}

/**
 * The package's version: package.json sits two folders above the bundle (dist/cli/). A path, not
 * a `new URL(…, import.meta.url)`, which the bundler would copy into dist/ as an asset.
 */
function version(): string {
  try {
    const manifest = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json')
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
}
