import { readFileSync } from 'node:fs'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ActionError } from '../errors.js'

/** How a flag gives its input's value. */
type Kind =
  /** A value: `--timeout 15m`. */
  | 'value'
  /** A value, repeatable; the values are joined as the input's lines: `--app a --app b`. */
  | 'lines'
  /** A switch for an input that defaults to false: `--force`. */
  | 'on'
  /** A switch for an input that defaults to true: `--no-wait`. */
  | 'off'

interface Flag {
  /** The flag without its dashes, `no-` included for an `off` switch. */
  name: string
  /** The action.yml input it stands for. */
  input: string
  kind: Kind
  /** What the value is, in --help. */
  value?: string
  about: string
}

/**
 * The action's inputs as flags. GitHub's own (`github-token`, `environment`, `comment`) have no
 * flag, and the token none either: on a command line the process list and the job log show it.
 */
export const FLAGS: readonly Flag[] = [
  {
    name: 'url',
    input: 'coolify-url',
    kind: 'value',
    value: 'URL',
    about: 'the Coolify instance, e.g. https://coolify.example.com'
  },
  {
    name: 'app',
    input: 'app',
    kind: 'lines',
    value: 'NAME',
    about:
      'an application (or service, database) to deploy: its name, project/environment/name, or uuid; repeat it, or separate with commas'
  },
  {
    name: 'app-uuid',
    input: 'app-uuid',
    kind: 'lines',
    value: 'UUID',
    about: 'a uuid to deploy as given, without looking it up (instead of --app)'
  },
  {
    name: 'tag',
    input: 'tag',
    kind: 'lines',
    value: 'TAG',
    about: 'deploy every resource with this Coolify tag instead'
  },
  { name: 'force', input: 'force', kind: 'on', about: 'rebuild without the build cache' },
  {
    name: 'pr',
    input: 'pr',
    kind: 'value',
    value: 'N',
    about: "deploy that pull (merge) request's preview"
  },
  {
    name: 'image-tag',
    input: 'image-tag',
    kind: 'value',
    value: 'TAG',
    about: 'Docker-image applications: deploy this image tag'
  },
  {
    name: 'commit',
    input: 'commit',
    kind: 'value',
    value: 'SHA',
    about: 'git applications: build exactly this commit, then unpin'
  },
  {
    name: 'git-branch',
    input: 'git-branch',
    kind: 'value',
    value: 'BRANCH',
    about: 'set the branch before the deploy'
  },
  {
    name: 'domains',
    input: 'domains',
    kind: 'value',
    value: 'URLS',
    about: 'set the domains before the deploy'
  },
  {
    name: 'env',
    input: 'env',
    kind: 'lines',
    value: 'KEY=VALUE',
    about: 'set an environment variable before the deploy; repeat it'
  },
  {
    name: 'no-trigger',
    input: 'trigger',
    kind: 'off',
    about: 'start nothing: follow the deployment Coolify starts by itself for --commit'
  },
  { name: 'no-wait', input: 'wait', kind: 'off', about: 'trigger and return at once' },
  {
    name: 'timeout',
    input: 'timeout',
    kind: 'value',
    value: 'DURATION',
    about: 'how long to wait for the deployments (30m)'
  },
  {
    name: 'poll-interval',
    input: 'poll-interval',
    kind: 'value',
    value: 'DURATION',
    about: 'base time between reads (3s)'
  },
  {
    name: 'no-cancel-on-timeout',
    input: 'cancel-on-timeout',
    kind: 'off',
    about: 'leave deployments running when --timeout passes'
  },
  {
    name: 'no-cancel-on-abort',
    input: 'cancel-on-abort',
    kind: 'off',
    about: 'leave deployments running on SIGINT or SIGTERM'
  },
  {
    name: 'health-url',
    input: 'health-url',
    kind: 'value',
    value: 'PATH|URL',
    about: 'after the deploy, a path or URL that must answer 2xx or 3xx'
  },
  {
    name: 'health-timeout',
    input: 'health-timeout',
    kind: 'value',
    value: 'DURATION',
    about: 'how long the health check may take (2m)'
  },
  {
    name: 'rollback-on-failure',
    input: 'rollback-on-failure',
    kind: 'on',
    about: 'redeploy what ran before when the new version fails'
  },
  {
    name: 'delete-preview',
    input: 'delete-preview',
    kind: 'on',
    about: 'with --pr: remove that preview (or review app) instead of deploying'
  },
  {
    name: 'review-app',
    input: 'review-app',
    kind: 'on',
    about: 'with --pr and one --app (the template): an application of its own for the pull request'
  },
  {
    name: 'review-domain',
    input: 'review-domain',
    kind: 'value',
    value: 'URL',
    about: "the review app's domain, {pr} standing for the number"
  },
  {
    name: 'review-project',
    input: 'review-project',
    kind: 'value',
    value: 'UUID',
    about: 'Coolify before 4.3: the project to create review apps in'
  },
  {
    name: 'review-server',
    input: 'review-server',
    kind: 'value',
    value: 'UUID',
    about: 'Coolify before 4.3: the server'
  },
  {
    name: 'review-environment',
    input: 'review-environment',
    kind: 'value',
    value: 'NAME',
    about: 'Coolify before 4.3: the environment'
  },
  {
    name: 'review-deploy-key',
    input: 'review-deploy-key',
    kind: 'value',
    value: 'UUID',
    about: 'Coolify before 4.3: the deploy key'
  },
  {
    name: 'review-destination',
    input: 'review-destination',
    kind: 'value',
    value: 'UUID',
    about: 'where review apps go (a server without production isolates them)'
  },
  {
    name: 'dry-run',
    input: 'dry-run',
    kind: 'on',
    about: 'change nothing: check the address, the token and the names, and say what would be done'
  },
  { name: 'no-logs', input: 'logs', kind: 'off', about: 'print no build logs' },
  {
    name: 'debug-logs',
    input: 'debug-logs',
    kind: 'on',
    about: "also print Coolify's hidden log entries"
  },
  {
    name: 'header',
    input: 'headers',
    kind: 'lines',
    value: "'NAME: VALUE'",
    about: 'an extra HTTP header (Cloudflare Access and the like); repeat it'
  },
  {
    name: 'ca-certificate',
    input: 'ca-certificate',
    kind: 'value',
    value: 'FILE|PEM',
    about: 'extra CA certificates to trust: a PEM file, or the PEM text'
  }
]

/** The command line's own options, beside the inputs. */
const OWN = {
  'token-file': { type: 'string' },
  token: { type: 'string' },
  json: { type: 'string' },
  dotenv: { type: 'string' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' }
} as const

/** What the command line asks for. */
export interface Invocation {
  /** Each input's value as the action would get it, '' when not given. */
  inputs: Map<string, string>
  /** Write the `deployments` records to this file. */
  json?: string
  /** Write the outputs as COOLIFY_* variables to this file (GitLab's dotenv report). */
  dotenv?: string
  verbose: boolean
  help: boolean
  version: boolean
}

/** A mistake on the command line: one line, exit 2. */
export class UsageError extends ActionError {
  override name = 'UsageError'
}

/** The environment variable a flag falls back to: COOLIFY_ and its name, `no-` left out. */
export function envName(flag: Flag): string {
  return `COOLIFY_${flag.name.replace(/^no-/, '').replaceAll('-', '_').toUpperCase()}`
}

/** The ways of naming what to deploy: one given as a flag puts the others' variables aside. */
const TARGETS = ['app', 'app-uuid', 'tag']

/** Reads the arguments, falling back to COOLIFY_* variables for what they do not give. */
export function parseInvocation(args: readonly string[], env: NodeJS.ProcessEnv): Invocation {
  const options: NonNullable<ParseArgsConfig['options']> = { ...OWN }
  for (const flag of FLAGS) {
    options[flag.name] = {
      type: flag.kind === 'on' || flag.kind === 'off' ? 'boolean' : 'string',
      multiple: flag.kind === 'lines'
    }
  }
  let values: Record<string, string | boolean | Array<string | boolean> | undefined>
  try {
    ;({ values } = parseArgs({ args: [...args], options, strict: true, allowPositionals: false }))
  } catch (error) {
    throw new UsageError(usageProblem(error))
  }
  const invocation: Invocation = {
    inputs: new Map(),
    json: values.json as string | undefined,
    dotenv: values.dotenv as string | undefined,
    verbose: values.verbose === true,
    help: values.help === true,
    version: values.version === true
  }
  // Nothing is read for --help and --version: a file that cannot be read is no reason to fail.
  if (invocation.help || invocation.version) return invocation
  if (values.token !== undefined) {
    throw new UsageError(
      '--token: the token is not taken on the command line, where the process list and the job log show it: set COOLIFY_TOKEN, or give --token-file FILE.'
    )
  }
  // A flag beats a variable: `--app web` with COOLIFY_APP_UUID set (say, a CI's project
  // variable) deploys web, rather than refusing two ways of naming it.
  const targeted = TARGETS.some(name => nonEmpty(values[name]))
  for (const flag of FLAGS) {
    const fallback = targeted && TARGETS.includes(flag.name) ? '' : (env[envName(flag)] ?? '')
    invocation.inputs.set(flag.input, valueOf(flag, values[flag.name], fallback))
  }
  invocation.inputs.set('token', token(values['token-file'] as string | undefined, env))
  return invocation
}

/**
 * Where the report files go, read leniently from arguments that did not parse: a usage error
 * still writes them, for the jobs after this one.
 */
export function reportFiles(args: readonly string[]): { json?: string; dotenv?: string } {
  try {
    const { values } = parseArgs({
      args: [...args],
      options: { json: { type: 'string' }, dotenv: { type: 'string' } },
      strict: false,
      allowPositionals: true
    })
    const path = (value: unknown): string | undefined =>
      typeof value === 'string' && value ? value : undefined
    return { json: path(values.json), dotenv: path(values.dotenv) }
  } catch {
    return {}
  }
}

function nonEmpty(given: unknown): boolean {
  return Array.isArray(given) ? given.some(value => value !== '') : Boolean(given)
}

function valueOf(flag: Flag, given: unknown, fallback: string): string {
  switch (flag.kind) {
    case 'on':
      return given === true ? 'true' : fallback
    case 'off':
      return given === true ? 'false' : fallback
    case 'lines':
      return Array.isArray(given) && given.length > 0 ? given.join('\n') : fallback
    default:
      return typeof given === 'string' ? given : fallback
  }
}

/** The token: from --token-file (or COOLIFY_TOKEN_FILE), else COOLIFY_TOKEN; never a flag's value. */
function token(file: string | undefined, env: NodeJS.ProcessEnv): string {
  const path = file ?? (env.COOLIFY_TOKEN_FILE || undefined)
  if (path !== undefined) {
    return readText(file !== undefined ? '--token-file' : 'COOLIFY_TOKEN_FILE', path).trim()
  }
  return env.COOLIFY_TOKEN ?? ''
}

function readText(option: string, path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // The path is not echoed: a token put where its file was meant would be printed.
    throw new UsageError(`${option}: cannot read the file it names (${code ?? 'unreadable'}).`)
  }
}

/** parseArgs' complaint, as one line that names the option. */
function usageProblem(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string }
  const option = /'(-{1,2}[^' ]+)/.exec(message ?? '')?.[1]
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `${option ?? 'An option'}: no such option (--help lists them).`
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (message?.includes('argument missing')) return `${option ?? 'An option'}: needs a value.`
      if (message?.includes('ambiguous')) {
        return `${option ?? 'An option'}: its value starts with "-": write ${option ?? 'the option'}=VALUE.`
      }
      return `${option ?? 'An option'}: takes no value.`
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      // Not echoed: a stray argument may be a secret split off its option by a space.
      return 'An argument without an option (not shown): every value follows its option, quoted when it holds spaces (--help lists them).'
    default:
      return message?.split('\n')[0] ?? String(error)
  }
}

/**
 * The GitLab component's inputs (templates/deploy.yml), by the flag whose variable each one sets;
 * the component's job sets the others as COOLIFY_* variables.
 */
export const COMPONENT_INPUTS: ReadonlyMap<string, string> = new Map([
  ['url', 'coolify-url'],
  ...[
    'app',
    'tag',
    'force',
    'dry-run',
    'pr',
    'image-tag',
    'commit',
    'health-url',
    'rollback-on-failure',
    'review-app',
    'review-domain',
    'delete-preview',
    'timeout'
  ].map(name => [name, name] as [string, string])
])

/** Set by the GitLab component: messages name its inputs, not the flags no one typed. */
export const COMPONENT_VARIABLE = 'COOLIFY_COMPONENT'

/** Whose words a message about the options is put in. */
export type Speaker = 'command line' | 'component'

/**
 * A message about the action's inputs, in the words of whoever gave the options. On the command
 * line an input the message is about names its flag and variable ("Input `coolify-url`" becomes
 * "`--url` (`COOLIFY_URL`)"), any other mention the flag alone, and `trigger: false` becomes
 * `--no-trigger`. Under the GitLab component, its inputs (`coolify-url`, `app`) or else the
 * COOLIFY_* variable.
 */
export function inCommandLineTerms(message: string, speaker: Speaker = 'command line'): string {
  const byInput = new Map(FLAGS.map(flag => [flag.input, flag]))
  // GitHub's expressions mean nothing in another CI: GitLab's variables say the same.
  const said = message
    .replaceAll('${{ github.sha }}', '$CI_COMMIT_SHA')
    .replaceAll('${{ github.event.number }}', '$CI_MERGE_REQUEST_IID')
  return said.replace(
    /(Input )?`([a-z-]+)(?:: (true|false))?`/g,
    (whole, subject: string | undefined, input: string, value?: string) => {
      if (input === 'token') return '`COOLIFY_TOKEN`'
      const flag = byInput.get(input)
      if (!flag) return whole
      const setting = value ? `: ${value}` : ''
      if (speaker === 'component') {
        const own = COMPONENT_INPUTS.get(flag.name)
        return own ? `${subject ?? ''}\`${own}${setting}\`` : `\`${envName(flag)}${setting}\``
      }
      const switched =
        (flag.kind === 'off' && value === 'false') || (flag.kind === 'on' && value === 'true')
      const option = `\`--${flag.name}${switched || !value ? '' : ` ${value}`}\``
      return subject ? `${option} (\`${envName(flag)}\`)` : option
    }
  )
}

/** `--help`. */
export function usage(): string {
  const rows: Array<[string, string]> = FLAGS.map(flag => [
    `--${flag.name}${flag.value ? ` ${flag.value}` : ''}`,
    `${flag.about} [${envName(flag)}]`
  ])
  rows.push(
    ['--token-file FILE', 'read the API token from FILE [COOLIFY_TOKEN_FILE; else COOLIFY_TOKEN]'],
    ['--json FILE', 'write the deployments as JSON (the action’s `deployments` output)'],
    ['--dotenv FILE', 'write the results as COOLIFY_* variables (GitLab’s dotenv report)'],
    ['--verbose', 'print debug lines too'],
    ['--version', 'print the version'],
    ['-h, --help', 'print this help']
  )
  const width = Math.max(...rows.map(([left]) => left.length)) + 2
  return [
    'Usage: coolify-deploy-follow --url URL --app NAME [options]',
    '',
    'Deploys applications on Coolify, streams their build logs, and waits for the result.',
    'The API token comes from COOLIFY_TOKEN or --token-file; it needs the deploy and read',
    'abilities, and read:sensitive for the build logs.',
    '',
    'Options (each falls back to the environment variable in brackets):',
    ...rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`),
    '',
    'Exit status: 0 every deployment finished; 1 a deployment failed, was cancelled, timed out or',
    'is unhealthy; 2 a bad option or input; 3 Coolify could not be reached or refused.',
    ''
  ].join('\n')
}
