import { readFileSync } from 'node:fs'
import type { EnvVariable } from '../coolify/types.js'
import { parseDuration } from '../time/duration.js'
import { ActionError } from '../errors.js'
import { worthMasking } from './secrets.js'

/** Every input of action.yml, read once and checked. */
export interface Config {
  /** The instance as users see it in a browser, without `/api/v1`: the base of UI links. */
  instanceUrl: string
  /** `instanceUrl` + `/api/v1`. */
  apiUrl: string
  token: string
  /** `app-uuid`, or once resolved before the deploy, the uuids of what `app` names. */
  appUuids: string[]
  /** `app`: names, uuids or `project/environment/name`, until resolved into `appUuids`. */
  appNames: string[]
  tags: string[]
  force: boolean
  pr?: number
  /** False: start nothing, follow the deployment Coolify started by itself for the commit. */
  trigger: boolean
  wait: boolean
  timeoutMs: number
  pollIntervalMs: number
  cancelOnTimeout: boolean
  cancelOnAbort: boolean
  logs: boolean
  debugLogs: boolean
  headers: Record<string, string>
  /** PEM text of extra CAs to trust. */
  caCertificate?: string
  environment?: string
  githubToken?: string
  gitBranch?: string
  domains?: string
  /** The `KEY=value` lines, in order, one entry a key (the last line of a key wins). */
  env?: EnvVariable[]
  /** Docker-image apps: the image tag to deploy (with `pr`, the preview's tag). */
  imageTag?: string
  /** Git apps: the commit SHA to build; with `trigger: false`, the commit to follow. */
  commit?: string
  /** A path on the application's URL, or a full http(s) URL, that must answer 2xx/3xx. */
  healthUrl?: string
  healthTimeoutMs: number
  rollbackOnFailure: boolean
  /** With `pr`: keep one pull request comment with the preview's status and URL. */
  comment: boolean
  /** With `pr`: remove that preview instead of deploying. */
  deletePreview: boolean
  /** With `pr` and one `app-uuid`, the template: deploy a whole application of its own. */
  reviewApp: boolean
  /** Check the address, the token and the names, say what the run would do, change nothing. */
  dryRun: boolean
  /** The review app's domain(s), `{pr}` already replaced by the pull request's number. */
  reviewDomain?: string
  /** Where servers without the clone route create the review app. */
  reviewPlacement: ReviewPlacement
}

/** For `POST /applications/private-deploy-key` on servers without the clone route. */
export interface ReviewPlacement {
  project?: string
  server?: string
  environment?: string
  deployKey?: string
  /** Needed by Coolify when the server has several destinations. */
  destination?: string
}

/** Reads an input by its action.yml name; '' when unset (as `core.getInput` does). */
export type InputReader = (name: string) => string

const UUID = /^[A-Za-z0-9][A-Za-z0-9_-]*$/
/** Docker's rule for a tag. */
const DOCKER_TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** Headers the action sets itself; a `headers` line must not replace them. */
const RESERVED_HEADERS = new Set([
  'authorization',
  'accept',
  'content-type',
  'content-length',
  'host'
])
/**
 * Headers a `headers` line cannot send, and why: they speak of the connection or the proxy, not
 * of the request (the HTTP client refuses them, or they would reach no one meant to read them).
 */
const UNSENDABLE_HEADERS: Record<string, string> = {
  expect:
    'asks Coolify to confirm before a body is sent, which the action never waits for; remove that line.',
  'proxy-authorization':
    'is for the proxy, which takes its credentials from the proxy variable (http://user:password@proxy:3128); remove that line.',
  ...Object.fromEntries(
    [
      'connection',
      'keep-alive',
      'proxy-connection',
      'te',
      'trailer',
      'transfer-encoding',
      'upgrade'
    ].map(name => [
      name,
      'is about the connection, which the action manages itself; remove that line.'
    ])
  )
}
/** C0 control characters (line breaks, tab, NUL, escape…) and DEL: no input value may hold one. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/
/** What a value sent as an HTTP header may hold: printable ASCII. */
const HEADER_TEXT = /^[\x20-\x7e]*$/
/** The longest duration an input may give: a deploy that takes longer should not hold a runner. */
export const MAX_DURATION_MS = 24 * 3_600_000
/** Inputs of several lines or items, checked a line or an item at a time. */
const MULTI_LINE = new Set(['app', 'app-uuid', 'tag', 'headers', 'env', 'ca-certificate'])

/**
 * Reads and validates every input. Secrets go to `mask` the moment they are read, before anything
 * could print them. A bad value throws an ActionError that names the input and what it accepts.
 * Every value may end up in a request or the log, so none may hold a control character: errors
 * about one name the input (and line), never the value.
 */
export function readConfig(raw: InputReader, mask: (secret: string) => void): Config {
  const token = raw('token').trim()
  if (token) mask(token)
  const githubToken = raw('github-token').trim() || undefined
  if (githubToken) mask(githubToken)
  const env = raw('env').trim() || undefined
  if (env) maskEnvValues(env, mask)
  const headers = parseHeaders(raw('headers'), mask)
  refuseUnsendable('Input `token`', token)
  refuseUnsendable('Input `github-token`', githubToken ?? '')
  const read = singleLine(raw)

  const { instanceUrl, apiUrl } = parseCoolifyUrl(read('coolify-url'))
  if (!token) {
    throw new ActionError(
      'Input `token` is empty: pass a Coolify API token from a secret, e.g. `token: ${{ secrets.COOLIFY_TOKEN }}`.'
    )
  }

  const appUuids = parseList(raw('app-uuid'))
  const appNames = parseNames(raw('app'))
  const tags = parseList(raw('tag'))
  for (const uuid of appUuids) refuseControl('Input `app-uuid`', uuid)
  for (const name of appNames) refuseControl('Input `app`', name)
  for (const tag of tags) refuseControl('Input `tag`', tag)
  if (appNames.length > 0 && appUuids.length > 0) {
    throw new ActionError(
      'Give either `app` or `app-uuid`, not both: `app` takes uuids as well as names, so put them all there.'
    )
  }
  const apps = appNames.length > 0 ? 'app' : 'app-uuid'
  if (appUuids.length === 0 && appNames.length === 0 && tags.length === 0) {
    throw new ActionError(
      'Give `app` (the applications to deploy, by the name on their page in Coolify), `app-uuid` or `tag`: all are empty.'
    )
  }
  if ((appUuids.length > 0 || appNames.length > 0) && tags.length > 0) {
    throw new ActionError(
      `Give either \`${apps}\` or \`tag\`, not both: Coolify deploys by one or the other.`
    )
  }
  for (const uuid of appUuids) {
    if (!UUID.test(uuid)) {
      throw new ActionError(
        `Input \`app-uuid\`: "${uuid}" is not a uuid; copy it from the application's page in Coolify (letters, digits and dashes), or give its name in \`app\`.`
      )
    }
  }
  for (const tag of tags) {
    if (/[/?#&]/.test(tag)) {
      throw new ActionError(`Input \`tag\`: "${tag}" is not a tag name (no /, ?, # or &).`)
    }
  }

  const trigger = parseBoolean(read, 'trigger', true)
  const config: Config = {
    instanceUrl,
    apiUrl,
    token,
    appUuids,
    appNames,
    tags,
    force: parseBoolean(read, 'force', false),
    pr: parsePullRequest(read('pr')),
    trigger,
    wait: parseBoolean(read, 'wait', true),
    timeoutMs: parseDurationInput(read, 'timeout', '30m'),
    pollIntervalMs: parseDurationInput(read, 'poll-interval', '3s'),
    // What the action did not start, it does not cancel unless told to.
    cancelOnTimeout: parseBoolean(read, 'cancel-on-timeout', trigger),
    cancelOnAbort: parseBoolean(read, 'cancel-on-abort', trigger),
    logs: parseBoolean(read, 'logs', true),
    debugLogs: parseBoolean(read, 'debug-logs', false),
    headers,
    caCertificate: readCaCertificate(raw('ca-certificate')),
    environment: read('environment').trim() || undefined,
    githubToken,
    gitBranch: read('git-branch').trim() || undefined,
    domains: read('domains').trim() || undefined,
    env: env ? parseEnv(env) : undefined,
    imageTag: parseImageTag(read('image-tag')),
    commit: parseCommit(read('commit')),
    healthUrl: parseHealthUrl(read('health-url')),
    healthTimeoutMs: parseDurationInput(read, 'health-timeout', '2m'),
    rollbackOnFailure: parseBoolean(read, 'rollback-on-failure', false),
    comment: parseBoolean(read, 'comment', true),
    deletePreview: parseBoolean(read, 'delete-preview', false),
    reviewApp: parseBoolean(read, 'review-app', false),
    dryRun: parseBoolean(read, 'dry-run', false),
    reviewPlacement: {
      project: read('review-project').trim() || undefined,
      server: read('review-server').trim() || undefined,
      environment: read('review-environment').trim() || undefined,
      deployKey: read('review-deploy-key').trim() || undefined,
      destination: read('review-destination').trim() || undefined
    }
  }
  if (config.pr !== undefined && tags.length > 0) {
    throw new ActionError(
      'Input `pr` works with `app` or `app-uuid` only: Coolify has no preview deploy by tag.'
    )
  }
  if ((config.gitBranch || config.domains || config.env) && tags.length > 0) {
    throw new ActionError(
      'Inputs `git-branch`, `domains` and `env` change the applications named in `app` or `app-uuid`; they do not work with `tag`.'
    )
  }
  if (config.deletePreview && (config.pr === undefined || tags.length > 0)) {
    throw new ActionError(
      'Input `delete-preview` needs `pr` (the pull request number) and `app` or `app-uuid` (the application whose preview to remove).'
    )
  }
  checkFollowInputs(config, read)
  checkVersionInputs(config)
  checkReviewInputs(config, read('review-domain'))
  return config
}

/** The inputs that start or change something, which `trigger: false` refuses. */
export const REFUSED_WITHOUT_TRIGGER: readonly string[] = [
  'git-branch',
  'domains',
  'env',
  'image-tag',
  'force',
  'rollback-on-failure',
  'review-app',
  'delete-preview',
  'tag'
]

/** `trigger: false` starts and changes nothing: inputs that would are refused. */
function checkFollowInputs(config: Config, read: InputReader): void {
  if (config.trigger) return
  const changing = REFUSED_WITHOUT_TRIGGER.filter(
    name => !['', 'false'].includes(read(name).trim().toLowerCase())
  )
  if (changing.length > 0) {
    throw new ActionError(
      `Input ${changing.map(name => `\`${name}\``).join(', ')} does not work with \`trigger: false\`, which starts and changes nothing: it follows the deployment Coolify starts by itself.`
    )
  }
  if (!config.wait) {
    throw new ActionError(
      'Inputs `trigger: false` and `wait: false` together would do nothing: `trigger: false` waits for the deployment Coolify starts by itself.'
    )
  }
}

/** A review app is one application per pull request, made from one template. */
function checkReviewInputs(config: Config, domain: string): void {
  if (!config.reviewApp) return
  if (config.pr === undefined) {
    throw new ActionError(
      'Input `review-app` needs `pr`, the pull request number: in a pull_request workflow `pr: ${{ github.event.number }}`.'
    )
  }
  if (config.tags.length > 0 || config.appUuids.length + config.appNames.length !== 1) {
    throw new ActionError(
      'Input `review-app` needs exactly one application in `app` or `app-uuid`, the template (no `tag`).'
    )
  }
  if (config.imageTag) {
    throw new ActionError(
      "Input `image-tag` does not work with `review-app`: the review app builds the pull request's branch."
    )
  }
  const value = domain.trim()
  if (!value) return
  const domains = value.replaceAll('{pr}', String(config.pr))
  for (const item of domains.split(',')) {
    let url: URL | undefined
    try {
      url = new URL(item.trim())
    } catch {
      url = undefined
    }
    if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
      throw new ActionError(
        `Input \`review-domain\`: "${item.trim()}" is not an http(s) address, like https://pr-{pr}.preview.example.com.`
      )
    }
  }
  config.reviewDomain = domains
}

/** The version inputs name applications: they need `app-uuid`, and one kind of version each. */
function checkVersionInputs(config: Config): void {
  const named = [
    config.imageTag && 'image-tag',
    config.commit && 'commit',
    config.rollbackOnFailure && 'rollback-on-failure'
  ].filter(Boolean)
  if (named.length > 0 && config.tags.length > 0) {
    throw new ActionError(
      `Input \`${named[0]}\` works with \`app\` or \`app-uuid\` only: it reads and changes the applications named there.`
    )
  }
  if (config.imageTag && config.commit) {
    throw new ActionError(
      'Give `image-tag` (Docker-image applications) or `commit` (git applications), not both.'
    )
  }
  if (config.rollbackOnFailure && !config.wait) {
    throw new ActionError(
      'Inputs `rollback-on-failure` and `wait: false` together: a run that does not wait never sees the deployment fail, so it cannot roll it back. Drop one of them.'
    )
  }
  if (config.rollbackOnFailure && config.pr !== undefined) {
    throw new ActionError(
      'Input `rollback-on-failure` works for production deploys: a preview (`pr`) has no earlier version to go back to.'
    )
  }
  if (config.pr !== undefined && !config.reviewApp) {
    const production = config.gitBranch ? 'git-branch' : config.domains ? 'domains' : undefined
    if (production) {
      throw new ActionError(
        `Input \`${production}\` changes production's application: a preview (\`pr\`) has no \`${production}\` of its own. Leave it out, or deploy without \`pr\`.`
      )
    }
  }
  if (config.commit && config.pr !== undefined) {
    throw new ActionError(
      "Input `commit` deploys production: a preview (`pr`) builds its pull request's head."
    )
  }
}

/** Docker's tag syntax: up to 128 letters, digits, `_`, `.` and `-`, not starting with `.` or `-`. */
function parseCommit(text: string): string | undefined {
  const value = text.trim()
  if (!value) return undefined
  if (!/^[0-9a-fA-F]{7,40}$/.test(value)) {
    throw new ActionError(
      `Input \`commit\`: "${value}" is not a commit SHA (7 to 40 hexadecimal digits), e.g. \${{ github.sha }}.`
    )
  }
  return value.toLowerCase()
}

/** A path (`/health`) on the application's URL, or a whole http(s) URL. */
function parseHealthUrl(text: string): string | undefined {
  const value = text.trim()
  if (!value) return undefined
  if (value.startsWith('/') && !value.startsWith('//')) return value
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    url = undefined
  }
  if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
    throw new ActionError(
      `Input \`health-url\`: "${value}" is neither a path like /health nor an http(s) URL.`
    )
  }
  return value
}

/** The reader of single-line inputs: it refuses a value holding a control character. */
function singleLine(read: InputReader): InputReader {
  return name => {
    const value = read(name)
    if (!MULTI_LINE.has(name)) refuseControl(`Input \`${name}\``, value.trim())
    return value
  }
}

/** `where` names the input (and line); the value is never part of the message. */
function refuseControl(where: string, value: string): void {
  if (CONTROL.test(value)) {
    throw new ActionError(
      `${where} holds a control character (a line break, tab or the like): remove it.`
    )
  }
}

/** Tokens and header values go in HTTP headers, which carry printable ASCII only. */
function refuseUnsendable(where: string, value: string): void {
  refuseControl(where, value)
  if (!HEADER_TEXT.test(value)) {
    throw new ActionError(
      `${where} holds a character an HTTP header cannot carry (only printable ASCII): remove it.`
    )
  }
}

/** Accepts the instance address with or without `/api/v1` and trailing slashes. */
export function parseCoolifyUrl(text: string): { instanceUrl: string; apiUrl: string } {
  const value = text.trim()
  const example = 'like https://coolify.example.com'
  if (!value)
    throw new ActionError(
      `Input \`coolify-url\` is empty: give your Coolify instance's address, ${example}.`
    )
  let url: URL
  try {
    url = new URL(value)
  } catch {
    url = undefined as never
  }
  if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
    throw new ActionError(
      `Input \`coolify-url\`: "${value}" is not an http(s) address; give the instance's address with its scheme, ${example}.`
    )
  }
  if (url.username || url.password) {
    throw new ActionError(
      'Input `coolify-url` must not carry a user name or password; put credentials in `token` or `headers`.'
    )
  }
  if (url.search || url.hash) {
    throw new ActionError(`Input \`coolify-url\`: remove the query or fragment, ${example}.`)
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/i, '')
  const instanceUrl = `${url.protocol}//${url.host}${path}`
  return { instanceUrl, apiUrl: `${instanceUrl}/api/v1` }
}

/**
 * `app`: names may hold spaces, so only commas and newlines separate them; each is trimmed, and
 * duplicates are dropped.
 */
export function parseNames(text: string): string[] {
  return [...new Set(text.split(/[\r\n,]+/).map(item => item.trim()))].filter(Boolean)
}

/** Commas, spaces or newlines separate items; duplicates are dropped. */
export function parseList(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))]
}

function parseBoolean(read: InputReader, name: string, fallback: boolean): boolean {
  const value = read(name).trim().toLowerCase()
  if (value === '') return fallback
  if (value === 'true') return true
  if (value === 'false') return false
  throw new ActionError(`Input \`${name}\` must be true or false, not "${read(name).trim()}".`)
}

function parseDurationInput(read: InputReader, name: string, fallback: string): number {
  const text = read(name).trim() || fallback
  const ms = parseDuration(text)
  if (ms === undefined || ms <= 0) {
    throw new ActionError(
      `Input \`${name}\`: "${text}" is not a duration; use seconds (90) or a number with ms, s, m or h (500ms, 15m, 1h30m).`
    )
  }
  if (ms > MAX_DURATION_MS) {
    throw new ActionError(
      `Input \`${name}\`: "${text}" is more than 24h, the longest this action waits; use 24h or less.`
    )
  }
  return ms
}

function parsePullRequest(text: string): number | undefined {
  const value = text.trim()
  if (!value) return undefined
  if (!/^\d+$/.test(value) || Number(value) === 0 || !Number.isSafeInteger(Number(value))) {
    throw new ActionError(
      `Input \`pr\`: "${value}" is not a pull request number; in a pull_request workflow use \${{ github.event.number }}.`
    )
  }
  return Number(value)
}

function parseImageTag(text: string): string | undefined {
  const value = text.trim()
  if (!value) return undefined
  if (!DOCKER_TAG.test(value)) {
    throw new ActionError(
      `Input \`image-tag\`: "${value}" is not a Docker tag (letters, digits, _ . -, at most 128, not starting with . or -).`
    )
  }
  return value
}

/** `Name: value` a line. Values are secrets (service tokens), so errors name the line, never the value. */
export function parseHeaders(text: string, mask: (secret: string) => void): Record<string, string> {
  const headers: Record<string, string> = {}
  const lines = text.split(/\r?\n/)
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim()
    if (!line || line.startsWith('#')) continue
    const colon = line.indexOf(':')
    const name = colon > 0 ? line.slice(0, colon).trim() : ''
    const value = colon > 0 ? line.slice(colon + 1).trim() : ''
    // As `env`: a plain word (`https`) would star out every link printed after it.
    if (value && worthMasking(value)) mask(value)
    refuseUnsendable(`Input \`headers\`, line ${index + 1}`, value)
    if (!HEADER_NAME.test(name) || !value) {
      throw new ActionError(
        `Input \`headers\`, line ${index + 1}: write one \`Name: value\` a line, like \`CF-Access-Client-Id: \${{ secrets.CF_ID }}\`.`
      )
    }
    if (name.toLowerCase() === 'accept-encoding') {
      throw new ActionError(
        `Input \`headers\`, line ${index + 1}: ${name} asks for compressed answers, which the action does not read; remove that line.`
      )
    }
    const unsendable = UNSENDABLE_HEADERS[name.toLowerCase()]
    if (unsendable) {
      throw new ActionError(`Input \`headers\`, line ${index + 1}: ${name} ${unsendable}`)
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new ActionError(
        `Input \`headers\`, line ${index + 1}: ${name} is set by the action itself; remove that line.`
      )
    }
    headers[name] = value
  }
  return headers
}

function readCaCertificate(text: string): string | undefined {
  const value = text.trim()
  if (!value) return undefined
  if (value.includes(PEM_BEGIN)) return parsedPem(value, 'the PEM text')
  refuseControl('Input `ca-certificate`', value)
  let pem: string
  try {
    pem = readFileSync(value, 'utf8')
  } catch {
    throw new ActionError(
      `Input \`ca-certificate\`: "${value}" is neither a PEM certificate nor a readable file; give the PEM text or its path.`
    )
  }
  if (!pem.includes(PEM_BEGIN)) {
    throw new ActionError(`Input \`ca-certificate\`: the file "${value}" holds no PEM certificate.`)
  }
  return parsedPem(pem, `the file "${value}"`)
}

const PEM_BEGIN = '-----BEGIN CERTIFICATE-----'
const PEM_BLOCK = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g

/**
 * The certificates, each as PEM with its lines back: a CI variable often holds the PEM flattened
 * to one line, which TLS would not read. One that does not parse is refused now, not when the
 * connection fails as untrusted.
 */
function parsedPem(text: string, where: string): string {
  const blocks = [...text.matchAll(PEM_BLOCK)].map(([, body]) => {
    const base64 = body.replace(/\s+/g, '')
    const lines = base64.match(/.{1,64}/g) ?? []
    return [PEM_BEGIN, ...lines, '-----END CERTIFICATE-----'].join('\n')
  })
  const { X509Certificate } = process.getBuiltinModule('node:crypto')
  for (const [index, block] of blocks.entries()) {
    try {
      new X509Certificate(block)
    } catch {
      throw new ActionError(
        `Input \`ca-certificate\`: certificate ${index + 1} in ${where} does not parse; give the PEM text as exported, or its path.`
      )
    }
  }
  if (blocks.length === 0) {
    throw new ActionError(`Input \`ca-certificate\`: ${where} has no complete PEM certificate.`)
  }
  return `${blocks.join('\n')}\n`
}

/**
 * Masks the values of `env` worth masking (see `worthMasking`): masking `3000` or `https` would
 * blank every occurrence in the whole log, links included, and hides nothing.
 */
function maskEnvValues(text: string, mask: (secret: string) => void): void {
  for (const line of text.split(/\r?\n/)) {
    const value = line.slice(line.indexOf('=') + 1).trim()
    if (line.includes('=') && worthMasking(value)) mask(value)
  }
}

/**
 * Checks `KEY=value` lines; undefined when there are none. A value is one line, so it cannot hold
 * a line break; tabs and other control characters are refused too.
 */
function parseEnv(text: string): EnvVariable[] | undefined {
  const variables = new Map<string, string>()
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim()
    if (!line || line.startsWith('#')) continue
    if (!/^[A-Za-z_][A-Za-z0-9_.-]*=/.test(line)) {
      throw new ActionError(`Input \`env\`, line ${index + 1}: write one \`KEY=value\` a line.`)
    }
    const key = line.slice(0, line.indexOf('='))
    refuseControl(`Input \`env\`, line ${index + 1} (${key})`, line)
    variables.set(key, line.slice(key.length + 1))
  }
  if (variables.size === 0) return undefined
  return [...variables].map(([key, value]) => ({ key, value }))
}
