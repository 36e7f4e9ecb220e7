/**
 * What a review app must become, worked out before anything is written: a pure function from what
 * the template is and the pull request to the review app's target state and the ordered writes that
 * reach it — or a refusal with its reasons. A clone of production is production until proven
 * otherwise, so whatever the plan does not make the review app's own it refuses.
 */
import type { ApplicationChanges, EnvVariable, ListedEnvVariable } from '../coolify/types.js'
import { worthMasking } from '../config/secrets.js'
import {
  isEmptyValue,
  NEW_APPLICATION_FIELDS,
  patchField,
  REVIEW_FIELDS,
  type FieldRule
} from './fields.js'

/** What the template is, as Coolify shows it (and so what its clone starts as). */
export interface TemplateFacts {
  name: string
  /** Every key of GET /applications/{uuid}, its settings as `settings.<key>` (fields.ts). */
  fields: Record<string, unknown>
  /** Cloned (4.3+): the review app starts with all of the template's fields; else with none. */
  cloned: boolean
  /** Its domains, comma-separated URLs. */
  fqdn?: string | null
  buildPack?: string
  /** docker_compose_domains: the domain(s) of each service of a compose application. */
  composeDomains: Record<string, string>
  /** custom_labels, decoded; undefined when Coolify hid them. */
  customLabels?: string
  /** Bind mounts are the persistent storages with a `host_path`. */
  persistentStorages: Array<{ name?: string; mount_path?: string; host_path?: string | null }>
  /** File mounts: files or directories of the server, at `fs_path`. */
  fileStorages: Array<{ fs_path?: string; mount_path?: string }>
  /** Its variables, production and preview, as GET /applications/{uuid}/envs lists them. */
  variables: ListedEnvVariable[]
}

/** What the pull request asks of its review app. */
export interface ReviewRequest {
  branch: string
  /** The pull request's head commit the event names: the only one the review app builds. */
  commit: string
  /** `review-domain`, `{pr}` already replaced. */
  domain?: string
  /** `env`: set over the copied variables. */
  env?: EnvVariable[]
  /** The descriptions: while it is set up, and once it is ready. */
  pending: string
  marker: string
}

/** One step of the setup, in the order the plan gives. */
export type Write =
  /** PATCH /applications/{uuid}. */
  | { kind: 'update'; changes: ApplicationChanges }
  /** Every scheduled task the clone carries (the template's: they would run in its container). */
  | { kind: 'delete-scheduled-tasks' }
  /** Every Coolify tag the clone carries (a `tag` deploy of production must never reach it). */
  | { kind: 'remove-tags' }
  /** Every variable the clone carries, production and preview: production's values. */
  | { kind: 'delete-variables' }
  | { kind: 'set-variables'; variables: EnvVariable[] }
  /** Read the app back and compare it with the target; any trace of production fails the setup. */
  | { kind: 'verify' }

/** What the review app is once set up. */
export interface ReviewTarget {
  /** Its domains: `review-domain`. */
  domains?: string
  branch: string
  /** Its pin, `git_commit_sha`: the pull request's head commit. */
  commit: string
  variables: EnvVariable[]
}

export type ReviewPlan =
  | { refused: string[] }
  | {
      refused?: undefined
      target: ReviewTarget
      writes: Write[]
      /** For the log: what the review app does not get, and why (keys, never values). */
      warnings: string[]
      /** Copied values, to be masked in the log. */
      secrets: string[]
    }

/** The webhook secrets a clone keeps: a push signed with one deploys the app. */
export const WEBHOOK_SECRETS = [
  'manual_webhook_secret_github',
  'manual_webhook_secret_gitlab',
  'manual_webhook_secret_bitbucket',
  'manual_webhook_secret_gitea'
] as const

/** The flags a copied variable keeps: they change how its value is read and when it is there. */
const FLAGS = ['is_literal', 'is_multiline', 'is_runtime', 'is_buildtime'] as const

/**
 * The review app's target and the writes that reach it from a fresh clone, or why none may be
 * made. The order is part of the contract: first what could build or route the clone (auto-deploy,
 * webhook secrets, production's pin) goes, with the marker that it is being set up, and the pull
 * request's head commit is pinned (a push after the run was approved is never built); then its
 * domains; then the template's tasks, tags and variables; then its own variables; the pull
 * request's branch only after all of that (a push to it deploys whatever carries it); then the
 * read-back; the marker that it is ready last.
 */
export function planReviewApp(template: TemplateFacts, request: ReviewRequest): ReviewPlan {
  const refused = [
    ...fieldRefusals(template.fields),
    ...lfsRefusals(template.fields),
    ...mountRefusals(template),
    ...routeRefusals(template, request)
  ]
  const { variables, warnings, secrets, leaks } = reviewVariables(template.variables, request.env)
  refused.push(...leaks)
  if (refused.length > 0) return { refused }

  const domains = request.domain || undefined

  const writes: Write[] = [
    {
      kind: 'update',
      changes: {
        description: request.pending,
        is_auto_deploy_enabled: false,
        git_commit_sha: request.commit,
        ...Object.fromEntries(WEBHOOK_SECRETS.map(field => [field, ''])),
        ...resets(template.cloned ? template.fields : NEW_APPLICATION_FIELDS)
      }
    }
  ]
  if (domains) writes.push({ kind: 'update', changes: { domains } })
  writes.push({ kind: 'delete-scheduled-tasks' }, { kind: 'remove-tags' })
  writes.push({ kind: 'delete-variables' })
  if (variables.length > 0) writes.push({ kind: 'set-variables', variables })
  writes.push({ kind: 'update', changes: { git_branch: request.branch } })
  writes.push({ kind: 'verify' })
  writes.push({ kind: 'update', changes: { description: request.marker } })

  return {
    target: { domains, branch: request.branch, commit: request.commit, variables },
    writes,
    warnings,
    secrets
  }
}

/** What the review app's setup reads back before its first deploy. */
export interface ReadBack {
  /** Every key of its GET /applications/{uuid}, as TemplateFacts.fields. */
  fields: Record<string, unknown>
  fqdn?: string | null
  composeDomains: Record<string, string>
  customLabels?: string
  autoDeploy?: boolean
  gitCommitSha?: string | null
  /** The webhook secrets that are set (not their values). */
  webhookSecrets: string[]
  persistentStorages: TemplateFacts['persistentStorages']
  fileStorages: TemplateFacts['fileStorages']
  variables: ListedEnvVariable[]
}

/**
 * Every trace of production the review app still carries, named without values: a host of the
 * template's in its domains or labels (a server without a proxy drops a new domain and still
 * answers 200), a mount path of the template's, a variable that hands over a value of
 * production's, what could build it behind the run's back, a pin to any commit but the pull
 * request's head. Empty when it is the pull request's own.
 */
export function tracesOfProduction(
  template: TemplateFacts,
  app: ReadBack,
  { env = [], commit }: { env?: EnvVariable[]; commit: string }
): string[] {
  const traces: string[] = []
  const hosts = templateHosts(template)
  const named = (where: string, text: string | null | undefined, note = ''): void => {
    const found = [...hosts].filter(host => hostsOf(text ?? '').has(host))
    if (found.length > 0) traces.push(`its ${where} still name ${found.join(', ')}${note}`)
  }
  named('domains', app.fqdn, ' (a server without a proxy keeps the old domain)')
  named('compose domains', Object.values(app.composeDomains).join(','))
  if (app.customLabels === undefined) {
    traces.push(
      'its labels are hidden from this token (`read:sensitive`), so they were not checked'
    )
  }
  const labelled = [...hosts].filter(host => (app.customLabels ?? '').toLowerCase().includes(host))
  if (labelled.length > 0) traces.push(`its labels still route ${labelled.join(', ')}`)

  const bindPaths = new Set(template.persistentStorages.map(s => s.host_path).filter(Boolean))
  const filePaths = new Set(template.fileStorages.map(s => s.fs_path).filter(Boolean))
  for (const storage of app.persistentStorages) {
    if (storage.host_path && bindPaths.has(storage.host_path)) {
      traces.push(`it mounts ${storage.host_path}`)
    }
  }
  for (const storage of app.fileStorages) {
    if (storage.fs_path && filePaths.has(storage.fs_path))
      traces.push(`it mounts ${storage.fs_path}`)
  }

  const production = productionHolds(template.variables)
  const given = new Set(env.map(variable => variable.key))
  // `env` gives its own values, but a reference in one resolves in production's environment too.
  const equal = app.variables
    .filter(v => typeof v.key === 'string' && typeof v.value === 'string' && v.value !== '')
    .filter(v =>
      given.has(v.key!)
        ? refersToShared(v.value!) && productionIn(v, production) !== undefined
        : production.byKey.get(v.key!) === v.value || productionIn(v, production) !== undefined
    )
    .map(v => v.key!)
  const fromEnv = [...new Set(equal.filter(key => given.has(key)))]
  const copied = [...new Set(equal.filter(key => !given.has(key)))]
  if (copied.length > 0)
    traces.push(`its variable(s) ${copied.join(', ')} hold production's values`)
  if (fromEnv.length > 0) {
    traces.push(
      `\`env\` gives ${fromEnv.join(', ')} a shared variable that resolves to production's value in production's environment, or that Coolify did not resolve: give the review app's own value`
    )
  }
  if (app.autoDeploy === true) traces.push('auto-deploy is still on')
  if (app.gitCommitSha !== commit) {
    traces.push(
      !app.gitCommitSha || app.gitCommitSha === 'HEAD'
        ? `it is not pinned to the pull request's head commit ${commit} (it would build whatever its branch holds)`
        : `it is pinned to commit ${app.gitCommitSha}, not the pull request's head commit ${commit}`
    )
  }
  if (app.webhookSecrets.length > 0) traces.push(`it keeps ${app.webhookSecrets.join(', ')}`)
  return [...traces, ...fieldTraces(app.fields)]
}

/**
 * A review app found again, as the table finds it: what to put back before it is deployed, with
 * the pull request's head commit pinned, or why it may not be (one made by an older version of
 * the action, or changed in Coolify since).
 */
export function reviewAppRepairs(
  fields: Record<string, unknown>,
  name: string,
  commit: string
): { changes: ApplicationChanges; refused: string[] } {
  const changes = resets(fields)
  if (fields.git_commit_sha !== commit) changes.git_commit_sha = commit
  return { changes, refused: fieldRefusals(fields, `review app ${name}`) }
}

/** The keys the table does not let an application have, by why; values are never named. */
interface FieldFindings {
  /** Keys it does not know, holding a value: a newer Coolify's column, unexamined. */
  unknown: string[]
  /** Keys whose value a `refused` rule names. */
  refused: Array<[string, FieldRule]>
  /** Keys a `reset` rule puts back, still set. */
  unreset: Array<[string, Extract<FieldRule, { kind: 'reset' }>]>
}

function fieldFindings(fields: Record<string, unknown>): FieldFindings {
  const findings: FieldFindings = { unknown: [], refused: [], unreset: [] }
  for (const [key, value] of Object.entries(fields)) {
    const rule = REVIEW_FIELDS.get(key)
    if (!rule) {
      if (!isEmptyValue(value)) findings.unknown.push(key)
    } else if (rule.kind === 'refused' && rule.refuses(value)) {
      findings.refused.push([key, rule])
    } else if (rule.kind === 'reset' && !isReset(rule, value)) {
      findings.unreset.push([key, rule])
    }
  }
  return findings
}

/** What the table does not let a review app start from; what a reset puts back is not among it. */
function fieldRefusals(fields: Record<string, unknown>, subject = 'the template'): string[] {
  const { unknown, refused } = fieldFindings(fields)
  const refusals: string[] = []
  if (unknown.length > 0) {
    const them = unknown.length === 1 ? 'it' : 'them'
    refusals.push(
      `${subject} sets ${unknown.map(key => `\`${key}\``).join(', ')}, which this version of the action does not know: a clone would copy ${them} to pull request code unexamined — clear ${them} in Coolify, or update the action`
    )
  }
  for (const [key, rule] of refused) refusals.push(`${subject}'s \`${key}\`: ${rule.why}`)
  return refusals
}

/** The first write's part that puts back what reaches production, where the template set it. */
function resets(fields: Record<string, unknown>): ApplicationChanges {
  const changes: Record<string, null | false> = {}
  for (const [key, rule] of fieldFindings(fields).unreset) changes[patchField(key, rule)] = rule.to
  return changes as ApplicationChanges
}

function isReset(rule: Extract<FieldRule, { kind: 'reset' }>, value: unknown): boolean {
  return rule.to === false ? value !== true : isEmptyValue(value)
}

/** The review app's keys that the table does not let it have, named without their values. */
function fieldTraces(fields: Record<string, unknown>): string[] {
  const { unknown, refused, unreset } = fieldFindings(fields)
  return [
    ...unreset.map(([key, rule]) => `its \`${key}\` is still set (${rule.why})`),
    ...refused.map(([key, rule]) => `its \`${key}\`: ${rule.why}`),
    ...unknown.map(key => `it sets \`${key}\`, which this action does not know`)
  ]
}

/**
 * Coolify 4.3.11 never sets GIT_LFS_SKIP_SMUDGE and its helper image installs git-lfs for the
 * whole system, so the clone fetches the LFS objects the branch points to whatever "Git LFS" says
 * ("off" only leaves out `git lfs pull`, Application.php 1455-1456; coollabsio/coolify#10360).
 * Until it skips them, a template with Git LFS on, whose repository uses LFS, is refused.
 */
function lfsRefusals(fields: Record<string, unknown>): string[] {
  // Coolify shows an application's settings from 4.2.0 (ApplicationsController's show, with
  // `settings`); before, its PATCH also refuses them, so LFS could be neither checked nor reset.
  if (!('settings.is_git_lfs_enabled' in fields)) {
    return [
      'Coolify does not show the template\'s Git settings (`settings`, shown by Coolify 4.2.0 and later), so whether "Git LFS" is on cannot be checked, nor can the review app\'s be turned off: review apps need Coolify 4.2 or newer'
    ]
  }
  if (fields['settings.is_git_lfs_enabled'] !== true) return []
  return [
    'the template has "Git LFS" on (`settings.is_git_lfs_enabled`): Coolify fetches the LFS objects a branch points to with the template\'s credentials, and does not skip them even with the setting off (coollabsio/coolify#10360), so pull request code could ship any LFS object those credentials reach in its image — turn "Git LFS" off in the template\'s Git settings only if review apps may see every LFS object its credentials can fetch (see docs/review-apps.md), else give review apps a template of a repository without LFS'
  ]
}

/**
 * A clone keeps the template's bind mounts and file mounts, with the same paths on the server:
 * the review app would read and write production's files. They cannot be taken off safely either
 * (Coolify deletes a file mount's file on the server with it), so such templates are refused.
 */
function mountRefusals(template: TemplateFacts): string[] {
  const binds = template.persistentStorages.filter(storage => storage.host_path?.trim())
  const files = template.fileStorages.filter(storage => storage.fs_path?.trim())
  if (binds.length === 0 && files.length === 0) return []
  const paths = [
    ...binds.map(s => `bind mount ${s.host_path} (at ${s.mount_path ?? '?'})`),
    ...files.map(s => `file mount ${s.fs_path} (at ${s.mount_path ?? '?'})`)
  ]
  return [
    `the template mounts production's files — ${paths.join(', ')} — which its clone would share: give review apps a template without bind or file mounts (named volumes are fine)`
  ]
}

/** The review app needs a domain of its own wherever the template has one. */
function routeRefusals(template: TemplateFacts, request: ReviewRequest): string[] {
  if (template.fqdn?.trim() && !request.domain) {
    return [
      `input \`review-domain\` is needed: the template ${template.name} has a domain, which a review app would take over from production; give one like https://pr-{pr}.preview.example.com`
    ]
  }
  return []
}

/** Every host the template is reached by, lower case. */
function templateHosts(template: TemplateFacts): Set<string> {
  return hostsOf([template.fqdn ?? '', ...Object.values(template.composeDomains)].join(','))
}

/** The hosts of comma-separated addresses. */
export function hostsOf(addresses: string): Set<string> {
  const hosts = new Set<string>()
  for (const item of addresses.split(',')) {
    const text = item.trim()
    if (!text) continue
    try {
      hosts.add(new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`).hostname)
    } catch {
      // Not an address: nothing routes by it.
    }
  }
  return hosts
}

/** What production holds: each key's value as written, and every value its deployments see. */
interface ProductionHolds {
  /** As written (`value`); undefined for a value Coolify hides (a locked variable). */
  byKey: Map<string, string | undefined>
  /** Each value its deployments see — resolved, unquoted, unescaped — with the keys holding it. */
  values: Map<string, string[]>
}

function productionHolds(variables: ListedEnvVariable[]): ProductionHolds {
  const holds: ProductionHolds = { byKey: new Map(), values: new Map() }
  for (const v of variables) {
    if (v?.is_preview === true || typeof v?.key !== 'string') continue
    holds.byKey.set(v.key, listedValue(v))
    const seen = resolvedValue(v) ?? (refersToShared(v.value ?? '') ? undefined : v.value)
    if (typeof seen === 'string' && seen !== '') {
      holds.values.set(seen, [...(holds.values.get(seen) ?? []), v.key])
    }
  }
  return holds
}

/**
 * A variable's value as Coolify lists it: null once emptied (its middleware turns an empty string
 * into null before the variable is saved, app/Http/Kernel.php 61), left out where the token may not
 * see it (removeSensitiveData in ApplicationsController.php). Undefined when not shown.
 */
export function listedValue(v: ListedEnvVariable): string | undefined {
  if (v.value === null) return ''
  return typeof v.value === 'string' ? v.value : undefined
}

/** `{{team.X}}`, `{{project.X}}`, `{{environment.X}}`, `{{server.X}}`: a shared variable. */
const SHARED_REFERENCE = /\{\{\s*(team|project|environment|server)\.[^}]*\}\}/i

function refersToShared(value: string): boolean {
  return SHARED_REFERENCE.test(value)
}

/**
 * A variable's value as a deployment sees it, from `real_value` (shown with read:sensitive):
 * Coolify resolves its shared variables, then leaves a JSON object or array as it is, puts a
 * literal or multiline one in single quotes, and escapes any other (EnvironmentVariable.php
 * 203-216, escapeEnvVariables in bootstrap/helpers/docker.php 1516-1522). Undefined when not shown.
 */
export function resolvedValue(v: ListedEnvVariable): string | undefined {
  const real = v.real_value
  if (typeof real !== 'string') return undefined
  if (/^[[{]/.test(real) && isJson(real)) return real
  if (v.is_literal === true || v.is_multiline === true) {
    return real.length >= 2 && real.startsWith("'") && real.endsWith("'") ? real.slice(1, -1) : real
  }
  return real.replace(/\\([\\rt0"'])/g, (_, char: string) => UNESCAPED[char])
}

const UNESCAPED: Record<string, string> = {
  '\\': '\\',
  r: '\r',
  t: '\t',
  '0': '\0',
  '"': '"',
  "'": "'"
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/**
 * What each run of references in a value resolved to: the written value's other text stays as it
 * is, so it frames them. Undefined when the resolved value does not fit the written one.
 */
function substitutions(written: string, resolved: string): string[] | undefined {
  const runs = new RegExp(`(?:${SHARED_REFERENCE.source})+`, 'gi')
  const parts: string[] = []
  let last = 0
  const text = written.trim()
  for (const match of text.matchAll(runs)) {
    parts.push(escapeRegExp(text.slice(last, match.index)))
    last = match.index + match[0].length
  }
  parts.push(escapeRegExp(text.slice(last)))
  return new RegExp(`^${parts.join('(.*)')}$`, 's').exec(resolved)?.slice(1)
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Why a variable would hand pull request code a value production holds, under any of its keys,
 * or undefined: a reference (whole or within the value) that resolves to one — Coolify resolves
 * it in the template's environment, which the review app shares — or that Coolify did not show
 * resolved; a value of its own equal to one of production's that gives something away (a value
 * such as `true` or `3000` is anyone's). Keys only, never values.
 */
function productionIn(v: ListedEnvVariable, production: ProductionHolds): string | undefined {
  const written = v.value ?? ''
  const keys = (value: string): string[] => production.values.get(value) ?? []
  const named = (found: string[]): string => `production's ${[...new Set(found)].join(', ')}`
  if (!refersToShared(written)) {
    const found = keys(written)
    return found.length > 0 && worthMasking(written)
      ? `holds the value of ${named(found)}`
      : undefined
  }
  const resolved = resolvedValue(v)
  if (resolved === undefined)
    return 'refers to a shared variable that Coolify did not show resolved'
  const parts = substitutions(written, resolved)
  if (!parts) return 'refers to a shared variable whose resolved value could not be read apart'
  // What a reference brought in: equal to a value production holds, or holding one that gives
  // something away (two references side by side resolve into one part). The text written around
  // them is the preview's own.
  const within = (part: string): string[] =>
    [...production.values]
      .filter(([value]) => worthMasking(value) && part.includes(value))
      .flatMap(([, held]) => held)
  const found = [...keys(resolved), ...parts.flatMap(part => [...keys(part), ...within(part)])]
  return found.length > 0
    ? `refers to a shared variable that resolves to the value of ${named(found)}`
    : undefined
}

/**
 * The review app's variables: the template's preview variables that are not production's (Coolify
 * gives every production variable a preview twin with the same value, left out), with their flags,
 * then `env` over them; and, naming their keys, the preview variables that would hand over a value
 * production holds, which refuse the template. Locked ("shown once") values are shown to no token,
 * so they cannot be copied.
 */
function reviewVariables(
  listed: ListedEnvVariable[],
  env: EnvVariable[] | undefined
): { variables: EnvVariable[]; warnings: string[]; secrets: string[]; leaks: string[] } {
  const production = productionHolds(listed)
  const given = new Set((env ?? []).map(variable => variable.key))
  const byKey = new Map<string, EnvVariable>()
  const twins: string[] = []
  const locked: string[] = []
  const unverifiable: string[] = []
  const leaks: string[] = []
  for (const v of listed) {
    if (v?.is_preview !== true || typeof v.key !== 'string' || given.has(v.key)) continue
    const key = v.key
    if (v.is_shown_once === true) {
      locked.push(key)
      continue
    }
    const value = listedValue(v)
    // Hidden although not locked: the token cannot read sensitive values (checked before).
    if (value === undefined) continue
    if (production.byKey.has(key) && production.byKey.get(key) === undefined) {
      unverifiable.push(key)
      continue
    }
    if (production.byKey.get(key) === value) {
      twins.push(key)
      continue
    }
    const leak = productionIn(v, production)
    if (leak) {
      leaks.push(
        `the template's preview variable ${key} ${leak}: pull request code would read it — give the preview variable a value of its own in Coolify, or give the review app its own with \`env\``
      )
      continue
    }
    const flags = Object.fromEntries(
      FLAGS.filter(flag => typeof v[flag] === 'boolean').map(flag => [flag, v[flag]])
    )
    byKey.set(key, { key, value, ...flags })
  }
  for (const variable of env ?? []) byKey.set(variable.key, variable)

  const warnings: string[] = []
  const own =
    "give the review app its own with `env`, or a value of its own in the template's preview variable in Coolify"
  if (twins.length > 0) {
    warnings.push(
      `Not copied to the review app: ${twins.join(', ')} — the template's preview value is production's (Coolify gives each preview variable production's value until it is edited); ${own}.`
    )
  }
  if (unverifiable.length > 0) {
    warnings.push(
      `Not copied to the review app: ${unverifiable.join(', ')} — production's value is locked, so the preview value cannot be shown to differ from it; ${own}.`
    )
  }
  if (locked.length > 0) {
    warnings.push(
      `Not copied to the review app: ${locked.join(', ')} — locked ("shown once") in the template, so Coolify shows the value to no token; give it with \`env\`.`
    )
  }
  const copied = [...byKey.values()]
  const secrets = copied.filter(v => !given.has(v.key)).map(v => v.value)
  return { variables: copied, warnings, secrets, leaks }
}
