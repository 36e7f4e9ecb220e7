/**
 * action.yml read the way GitHub's runner reads it, only stricter where the runner is loose: a key
 * given twice, an unknown key, a missing entry point or another runtime than node24 is an error
 * naming the file, line and column. The runner refuses a duplicate key or an unknown key under
 * `runs` or an output (its schema, actions/runner src/Runner.Worker/action_yaml.json), and then the
 * action does not load at all; the root, `inputs` and each input are loose there, so a typo in
 * them would pass silently: these tests refuse it.
 */
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { isMap, isScalar, LineCounter, parseDocument, type Pair } from 'yaml'

export interface ManifestInput {
  description: string
  required: boolean
  /** As written, expressions unevaluated: `${{ github.token }}`. */
  default?: string
}

export interface Manifest {
  name: string
  description: string
  author?: string
  branding: { icon?: string; color?: string }
  /** In the file's order. */
  inputs: Map<string, ManifestInput>
  outputs: Map<string, { description: string }>
  runs: { using: string; main: string; post?: string; postIf: string }
}

/** action.yml as the runner would not load it, or a test using it as the runner would not. */
export class ManifestError extends Error {
  override name = 'ManifestError'
}

const KEYS = {
  root: ['name', 'author', 'description', 'branding', 'inputs', 'outputs', 'runs'],
  input: ['description', 'required', 'default', 'deprecationMessage'],
  output: ['description'],
  runs: ['using', 'main', 'pre', 'pre-if', 'post', 'post-if'],
  branding: ['icon', 'color']
}
/** GitHub's rule for input and output ids. */
const ID = /^[A-Za-z_][A-Za-z0-9_-]*$/

/** What action.yml holds, as the runner would load it; a ManifestError where it would not. */
export function loadManifest(path: string): Manifest {
  // Named as GitHub names it: the tests run a copy beside a fresh bundle.
  return parseManifest(readFileSync(path, 'utf8'), basename(path))
}

export function parseManifest(text: string, file = 'action.yml'): Manifest {
  const lines = new LineCounter()
  const document = parseDocument(text, {
    lineCounter: lines,
    uniqueKeys: true,
    prettyErrors: false
  })
  const at = (offset: number | undefined) => {
    const { line, col } = lines.linePos(offset ?? 0)
    return `${file}:${line}:${col}`
  }
  const fail = (offset: number | undefined, message: string): never => {
    throw new ManifestError(`${at(offset)}: ${message}`)
  }
  for (const error of document.errors) {
    const start = error.pos[0]
    if (error.code === 'DUPLICATE_KEY') {
      const key = /^["']?([^:"'\n]*)/.exec(text.slice(start))![1].trim()
      fail(start, `'${key}' is already defined: GitHub's runner refuses the whole file`)
    }
    fail(start, error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, ''))
  }

  /** A mapping's pairs by key; a key outside `allowed` (when given) is an error. */
  const entries = (node: unknown, where: string, allowed?: string[]) => {
    if (!isMap(node)) return fail(rangeOf(node), `${where} must be a mapping`)
    const pairs = new Map<string, Pair>()
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : ''
      if (allowed && !allowed.includes(key)) {
        fail(rangeOf(pair.key), `unknown key '${key}' in ${where} (allowed: ${allowed.join(', ')})`)
      }
      pairs.set(key, pair)
    }
    return pairs
  }
  /** A scalar as the runner reads it: its text (`true` and `30` become 'true' and '30'). */
  const scalar = (
    pair: Pair | undefined,
    where: string,
    required: boolean,
    parent?: unknown
  ): string | undefined => {
    if (!pair) return required ? fail(rangeOf(parent), `${where} is missing`) : undefined
    if (!isScalar(pair.value) || pair.value.value === null) {
      return fail(rangeOf(pair.value ?? pair.key), `${where} must be a string`)
    }
    const value = String(pair.value.value)
    if (required && !value.trim()) fail(rangeOf(pair.value), `${where} must not be empty`)
    return value
  }
  /** The inputs or outputs: none when the section is absent. */
  const ids = (section: Pair | undefined, where: string) => {
    const found = section ? entries(section.value, where) : new Map<string, Pair>()
    for (const [id, pair] of found) {
      if (!ID.test(id)) fail(rangeOf(pair.key), `'${id}' is not a valid id in ${where}`)
    }
    return found
  }

  const root = entries(document.contents, 'the file', KEYS.root)
  const inputs = new Map<string, ManifestInput>()
  for (const [id, pair] of ids(root.get('inputs'), '`inputs`')) {
    const where = `input '${id}'`
    const fields = entries(pair.value, where, KEYS.input)
    const required = scalar(fields.get('required'), `${where}: required`, false) ?? 'false'
    if (!/^(true|false)$/.test(required)) {
      fail(rangeOf(fields.get('required')?.value), `${where}: required must be true or false`)
    }
    inputs.set(id, {
      description: scalar(fields.get('description'), `${where}: description`, true, pair.key)!,
      required: required === 'true',
      default: scalar(fields.get('default'), `${where}: default`, false)
    })
  }
  const outputs = new Map<string, { description: string }>()
  for (const [id, pair] of ids(root.get('outputs'), '`outputs`')) {
    const fields = entries(pair.value, `output '${id}'`, KEYS.output)
    outputs.set(id, {
      description: scalar(fields.get('description'), `output '${id}': description`, true, pair.key)!
    })
  }

  const runsPair = root.get('runs') ?? fail(0, '`runs` is missing')
  const runs = entries(runsPair.value, '`runs`', KEYS.runs)
  const using = scalar(runs.get('using'), '`runs.using`', true)!
  if (using !== 'node24') {
    fail(rangeOf(runs.get('using')?.value), `runs.using is '${using}': this action runs on node24`)
  }
  const branding = root.get('branding')
  const brand = branding ? entries(branding.value, '`branding`', KEYS.branding) : new Map()

  return {
    name: scalar(root.get('name'), '`name`', true)!,
    description: scalar(root.get('description'), '`description`', true)!,
    author: scalar(root.get('author'), '`author`', false),
    branding: {
      icon: scalar(brand.get('icon'), '`branding.icon`', false),
      color: scalar(brand.get('color'), '`branding.color`', false)
    },
    inputs,
    outputs,
    runs: {
      using,
      main: scalar(runs.get('main'), '`runs.main`', true, runsPair.key)!,
      post: scalar(runs.get('post'), '`runs.post`', false),
      postIf: scalar(runs.get('post-if'), '`runs.post-if`', false) ?? 'always()'
    }
  }
}

function rangeOf(node: unknown): number | undefined {
  return (node as { range?: [number, number, number] } | null)?.range?.[0]
}

/** The contexts an input's default may use, as far as these tests give them. */
export interface DefaultContext {
  github: Record<string, string>
}

/**
 * Every declared input's value, as the runner hands them to the action: what the workflow gave, else
 * the default with its expressions evaluated, else ''. An input the workflow gives that action.yml
 * does not declare only draws a warning from the runner ("Unexpected input(s)") and is never read:
 * here it is an error, so that a test cannot pass on an input the action ignores.
 */
export function resolveInputs(
  manifest: Manifest,
  given: Record<string, string>,
  context: DefaultContext
): Map<string, string> {
  const declared = new Map([...manifest.inputs.keys()].map(name => [name.toLowerCase(), name]))
  const values = new Map<string, string>()
  for (const [name, value] of Object.entries(given)) {
    const id = declared.get(name.toLowerCase())
    if (id === undefined) {
      throw new ManifestError(
        `Input '${name}' is not declared in action.yml: the runner would only warn "Unexpected input(s)" and the action would never see it.`
      )
    }
    values.set(id, value)
  }
  for (const [id, input] of manifest.inputs) {
    if (!values.has(id)) values.set(id, evaluate(input.default ?? '', context, `input '${id}'`))
  }
  return values
}

/** GitHub passes on any output a step sets; ours must all be in action.yml, where users look. */
export function refuseUndeclaredOutputs(action: Manifest, names: string[]): void {
  const undeclared = names.filter(name => !action.outputs.has(name))
  if (undeclared.length > 0) {
    throw new ManifestError(
      `The action set output(s) ${undeclared.join(', ')}, not declared in action.yml.`
    )
  }
}

/** `INPUT_` and the name upper-cased, spaces made `_`, hyphens kept: the runner's variables. */
export function inputVariables(values: Map<string, string>): Record<string, string> {
  const variables: Record<string, string> = {}
  for (const [id, value] of values)
    variables[`INPUT_${id.replaceAll(' ', '_').toUpperCase()}`] = value
  return variables
}

/** `${{ github.x }}` in a default; any other expression is more than these tests evaluate. */
function evaluate(text: string, context: DefaultContext, where: string): string {
  return text.replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_, expression: string) => {
    const field = /^github\.([A-Za-z_]+)$/.exec(expression)?.[1]
    const value = field === undefined ? undefined : context.github[field]
    if (value === undefined) {
      throw new ManifestError(
        `The default of ${where}, \${{ ${expression} }}, is not evaluated here.`
      )
    }
    return value
  })
}

/** What the runner evaluates `${{ github.token }}` to: the workflow run's token. */
export const JOB_CONTEXT: DefaultContext = {
  github: { token: 'ghs_job-token-of-the-workflow-run' }
}

export type JobStatus = 'success' | 'failure' | 'cancelled'

/** Whether the runner runs the post step after a job in this state: `runs.post-if`, or always(). */
export function runsPost(manifest: Manifest, job: JobStatus): boolean {
  if (!manifest.runs.post) return false
  const condition = manifest.runs.postIf.replace(/^\$\{\{\s*(.*?)\s*\}\}$/, '$1').trim()
  const results: Record<string, boolean> = {
    'always()': true,
    'success()': job === 'success',
    'failure()': job === 'failure',
    'cancelled()': job === 'cancelled',
    '!cancelled()': job !== 'cancelled'
  }
  if (!(condition in results)) {
    throw new ManifestError(`runs.post-if '${condition}' is not evaluated here.`)
  }
  return results[condition]
}
