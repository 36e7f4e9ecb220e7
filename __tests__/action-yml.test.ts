/**
 * action.yml is what GitHub loads before the first line of the action runs: it must load as the
 * runner reads it, declare exactly the inputs the code reads and the outputs it sets, keep the
 * defaults the code assumes, and meet the Marketplace's rules.
 */
import { describe, expect, it } from '@jest/globals'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Deployment } from '../src/model/deployment.js'
import { decide } from '../src/model/outcome.js'
import { readConfig, type Config } from '../src/config/inputs.js'
import { setOutputs } from '../src/report/outputs.js'
import {
  inputVariables,
  JOB_CONTEXT,
  loadManifest,
  parseManifest,
  resolveInputs,
  runsPost,
  type Manifest
} from '../test/support/manifest.js'
import { PROJECT, runAction } from '../test/support/runner.js'

const TEXT = readFileSync(join(PROJECT, 'action.yml'), 'utf8')
const manifest = loadManifest(join(PROJECT, 'action.yml'))
const REQUIRED = {
  'coolify-url': 'https://coolify.example.com',
  token: 'coolify-token',
  'app-uuid': 'k4sws0c8wg4oc0k0gkgg08kk'
}

/** An input's block in action.yml: its `  name:` line and the lines indented under it. */
function blockOf(text: string, id: string): string {
  const block = new RegExp(`^  ${id}:\\n(?: {4,}.*\\n)+`, 'm').exec(text)
  if (!block) throw new Error(`no block for input ${id}`)
  return block[0]
}

/** action.yml with `text` put at the end of its inputs. */
function withInInputs(text: string): string {
  return TEXT.replace('\noutputs:\n', `${text}\noutputs:\n`)
}

function parseError(text: string): string {
  try {
    parseManifest(text)
  } catch (error) {
    return (error as Error).message
  }
  return 'no error'
}

/** The inputs `readConfig` reads (every one it can), given the runner's values for them. */
function inputsRead(action: Manifest): Set<string> {
  const values = resolveInputs(action, REQUIRED, JOB_CONTEXT)
  const read = new Set<string>()
  readConfig(
    name => {
      read.add(name)
      return values.get(name) ?? ''
    },
    () => undefined
  )
  return read
}

/** Inputs the code reads that action.yml does not declare, and declared ones it never reads. */
function inputMismatch(action: Manifest): { undeclared: string[]; unread: string[] } {
  const read = inputsRead(action)
  return {
    undeclared: [...read].filter(name => !action.inputs.has(name)),
    unread: [...action.inputs.keys()].filter(name => !read.has(name))
  }
}

function sources(dir = join(PROJECT, 'src')): { file: string; text: string }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter(name => name.endsWith('.ts'))
    .map(name => ({ file: name, text: readFileSync(join(dir, name), 'utf8') }))
}

describe('action.yml as GitHub loads it', () => {
  it('loads strictly, runs on node24 and names entry points that exist', () => {
    expect(manifest.runs).toEqual({
      using: 'node24',
      main: 'dist/index.js',
      post: 'dist/index.js',
      postIf: 'always()'
    })
    expect(existsSync(join(PROJECT, manifest.runs.main))).toBe(true)
    expect(existsSync(join(PROJECT, manifest.runs.post!))).toBe(true)
    // The post step cancels what a killed main step left running: it must run after any outcome.
    expect(runsPost(manifest, 'failure')).toBe(true)
    expect(runsPost(manifest, 'cancelled')).toBe(true)
  })

  it.each([...manifest.inputs.keys()])(
    'refuses a second declaration of %s, naming it and its line',
    id => {
      const planted = withInInputs(blockOf(TEXT, id))
      const line = planted.split('\n').lastIndexOf(`  ${id}:`) + 1
      expect(parseError(planted)).toBe(
        `action.yml:${line}:3: '${id}' is already defined: GitHub's runner refuses the whole file`
      )
    }
  )

  it('refuses what the runner refuses, or would let through unread', () => {
    expect(parseError(TEXT.replace('  main: dist/index.js\n', ''))).toMatch(
      /^action\.yml:\d+:1: `runs\.main` is missing$/
    )
    expect(parseError(TEXT.replace('using: node24', 'using: node20'))).toMatch(
      /^action\.yml:\d+:10: runs\.using is 'node20': this action runs on node24$/
    )
    expect(parseError(TEXT.replace('  post: dist', '  cleanup: dist'))).toMatch(
      /unknown key 'cleanup' in `runs`/
    )
    expect(parseError(`${TEXT}\nbrandin:\n  icon: x\n`)).toMatch(
      /unknown key 'brandin' in the file/
    )
    expect(parseError(TEXT.replace('    default: 3s', '    defualt: 3s'))).toMatch(
      /unknown key 'defualt' in input 'poll-interval'/
    )
    expect(parseError(TEXT.replace('  status:\n', '  status:\n    value: x\n'))).toMatch(
      /unknown key 'value' in output 'status'/
    )
    expect(parseError(withInInputs('  token:\n    description: again\n'))).toMatch(
      /'token' is already defined/
    )
  })
})

describe('inputs and steps as the runner hands them to the action', () => {
  it('gives what the step gave, else the default evaluated, else empty, in INPUT_* variables', () => {
    const values = resolveInputs(manifest, { token: 't', 'POLL-INTERVAL': '1s' }, JOB_CONTEXT)
    expect(values.get('poll-interval')).toBe('1s') // the runner matches names in any case
    expect(values.get('timeout')).toBe('30m')
    expect(values.get('github-token')).toBe(JOB_CONTEXT.github.token)
    expect(values.get('app-uuid')).toBe('')
    expect(values.size).toBe(manifest.inputs.size)
    expect(inputVariables(values)).toMatchObject({
      'INPUT_POLL-INTERVAL': '1s',
      INPUT_TOKEN: 't',
      'INPUT_GITHUB-TOKEN': JOB_CONTEXT.github.token
    })
  })

  it('refuses an undeclared input and INPUT_* set by hand, before anything runs', async () => {
    await expect(runAction({ inputs: { ...REQUIRED, app_uuid: 'x' } })).rejects.toThrow(
      "Input 'app_uuid' is not declared in action.yml"
    )
    await expect(
      runAction({ inputs: REQUIRED, env: { 'INPUT_POLL-INTERVAL': '1s' } })
    ).rejects.toThrow('Give INPUT_POLL-INTERVAL as inputs')
  })

  it('runs the post step only when post-if holds', () => {
    const onSuccess = parseManifest(
      TEXT.replace('  post: dist/index.js\n', '  post: dist/index.js\n  post-if: success()\n')
    )
    expect(runsPost(onSuccess, 'success')).toBe(true)
    expect(runsPost(onSuccess, 'failure')).toBe(false)
  })
})

describe('action.yml and the code', () => {
  it('declares every input the code reads, and the code reads every declared one', () => {
    expect(inputMismatch(manifest)).toEqual({ undeclared: [], unread: [] })
  })

  it('notices an input the code reads that is not declared, and one declared but unread', () => {
    const without = parseManifest(TEXT.replace(blockOf(TEXT, 'poll-interval'), ''))
    expect(inputMismatch(without)).toEqual({ undeclared: ['poll-interval'], unread: [] })
    const extra = parseManifest(withInInputs('  bogus:\n    description: nothing reads it\n'))
    expect(inputMismatch(extra)).toEqual({ undeclared: [], unread: ['bogus'] })
  })

  it("reads inputs in one place only: readConfig, handed the workflow commands' getInput", () => {
    const calls = sources().flatMap(({ file, text }) =>
      [...text.matchAll(/(?<!function )\b(?:\w+\.)?get(?:Boolean|Multiline)?Input\([^)]*\)/g)].map(
        match => `${file}: ${match[0]}`
      )
    )
    expect(calls.length).toBeGreaterThan(0)
    for (const call of calls) expect(call).toMatch(/: commands\.getInput\(name\)$/)
  })

  it("falls back to action.yml's defaults when an input is empty", () => {
    const mask = () => undefined
    const values = resolveInputs(manifest, REQUIRED, JOB_CONTEXT)
    const withDefaults = readConfig(name => values.get(name) ?? '', mask)
    const bare = readConfig(name => REQUIRED[name as keyof typeof REQUIRED] ?? '', mask)
    // The one default that differs on purpose: no `github-token` means no GitHub calls.
    const withoutToken = (config: Config) => ({ ...config, githubToken: undefined })
    expect(withoutToken(withDefaults)).toEqual(withoutToken(bare))
    expect(withDefaults.githubToken).toBe(JOB_CONTEXT.github.token)
  })

  it('declares every output the code sets, and the code sets every declared one', () => {
    const set: string[] = []
    const deployment = new Deployment('app-uuid', 'web', 'deployment-uuid', 0)
    deployment.end('finished')
    setOutputs(decide([deployment], { cancelled: false }), name => set.push(name))
    expect(set.sort()).toEqual([...manifest.outputs.keys()].sort())

    const literal = sources().flatMap(({ text }) =>
      [...text.matchAll(/setOutput\(\s*'([^']+)'/g)].map(match => match[1])
    )
    expect(literal.sort()).toEqual([...manifest.outputs.keys()].sort())
  })
})

describe('action.yml on the Marketplace', () => {
  // "Publishing actions in GitHub Marketplace" and "Metadata syntax reference" (docs.github.com):
  // the name must be unique there, which only the release form can check; the badge is one of nine
  // colours and one of the icons listed as supported (Feather 4.28.0, some omitted). The release
  // form refuses a description of 125 characters or more: "Description must be less than 125
  // characters."
  const COLORS = [
    'white',
    'black',
    'yellow',
    'blue',
    'green',
    'orange',
    'red',
    'purple',
    'gray-dark'
  ]
  const { icons } = JSON.parse(
    readFileSync(join(PROJECT, 'test/fixtures/marketplace-icons.json'), 'utf8')
  ) as { icons: string[] }

  it('has a one-line name and a description the release form accepts', () => {
    expect(manifest.name).toMatch(/^\S.*\S$/)
    expect(manifest.description.length).toBeLessThan(125)
    expect(manifest.description).not.toContain('\n')
  })

  it('has a badge of an accepted colour and icon', () => {
    expect(icons).toHaveLength(257)
    expect(icons).not.toContain('key') // omitted from the Marketplace's set
    expect(COLORS).toContain(manifest.branding.color)
    expect(icons).toContain(manifest.branding.icon)
  })
})
