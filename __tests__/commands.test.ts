/**
 * The action's workflow commands against @actions/core's: for the same calls, the same bytes on
 * stdout and the same blocks in the runner's files, so that the runner reads the action as before.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals'
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import * as core from '@actions/core'
import type { AnnotationProperties } from '../src/action/commands.js'
import { ACTION_DIR, actionManifest } from '../test/support/runner.js'

const commands = await import('../src/action/commands.js')

const TRICKY = [
  'plain',
  '',
  '100%',
  '%25 stays %25',
  'a:b',
  'a,b',
  'line one\nline two',
  'carriage\rreturn\r\n',
  '::error::not a command',
  'ünïcødé ✓ 🚀',
  ' spaced out ',
  '%0A:,\r\n%'
]

const PROPERTIES: AnnotationProperties[] = [
  {},
  { title: 'Deploy: web, api' },
  { title: '' },
  { title: undefined },
  { title: 'Build 100%\nfailed', file: 'src/a:b,c.ts', startLine: 12 },
  { file: 'x.ts', startLine: 3, endLine: 4, startColumn: 1, endColumn: 20 },
  { startLine: 0, title: 'line 0 is left out' }
]

/** What `write` prints on stdout. */
function stdoutOf(write: () => void): string {
  const printed: string[] = []
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation(text => {
    printed.push(String(text))
    return true
  })
  try {
    write()
  } finally {
    spy.mockRestore()
  }
  return printed.join('')
}

/** `name<<DELIMITER`, the value's lines, `DELIMITER`: each block of a runner file, checked whole. */
function parseFileCommands(text: string): Array<[string, string]> {
  const blocks: Array<[string, string]> = []
  const block = /^(.*?)<<(ghadelimiter_[0-9a-f-]{36})\n([\s\S]*?)\n\2\n/
  let rest = text
  while (rest) {
    const match = block.exec(rest)
    if (!match) throw new Error(`Not a file command: ${JSON.stringify(rest)}`)
    blocks.push([match[1], match[3]])
    rest = rest.slice(match[0].length)
  }
  return blocks
}

const saved = { ...process.env }
let dir: string

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'coolify-commands-'))
})

afterEach(() => {
  process.env = { ...saved }
  process.exitCode = undefined
  jest.restoreAllMocks()
})

describe('log lines and annotations', () => {
  it.each(TRICKY)('debug, info and add-mask of %j are the bytes @actions/core writes', text => {
    expect(stdoutOf(() => commands.debug(text))).toBe(stdoutOf(() => core.debug(text)))
    expect(stdoutOf(() => commands.info(text))).toBe(stdoutOf(() => core.info(text)))
    expect(stdoutOf(() => commands.setSecret(text))).toBe(stdoutOf(() => core.setSecret(text)))
  })

  it.each(['notice', 'warning', 'error'] as const)(
    '%s with and without properties is the bytes @actions/core writes',
    kind => {
      for (const text of TRICKY) {
        for (const properties of PROPERTIES) {
          const ours = stdoutOf(() => commands[kind](text, { ...properties }))
          expect(ours).toBe(stdoutOf(() => core[kind](text, { ...properties })))
        }
        expect(stdoutOf(() => commands[kind](text))).toBe(stdoutOf(() => core[kind](text)))
      }
    }
  )

  it('escapes the message and the properties so that the runner reads them back', () => {
    const line = stdoutOf(() =>
      commands.error('50% done\r\nnext', { title: 'a:b,c', file: 'f.ts', startLine: 7 })
    )
    expect(line).toBe('::error title=a%3Ab%2Cc,file=f.ts,line=7::50%25 done%0D%0Anext\n')
  })

  it('setFailed fails the step with an error annotation, as @actions/core does', () => {
    const ours = stdoutOf(() => commands.setFailed('Deploy failed: 100%\nsee log'))
    expect(process.exitCode).toBe(1)
    process.exitCode = undefined
    expect(ours).toBe(stdoutOf(() => core.setFailed('Deploy failed: 100%\nsee log')))
  })
})

describe('inputs and saved state', () => {
  it('reads an input as @actions/core does: spaces as _, upper-cased, trimmed', () => {
    process.env['INPUT_APP-UUID'] = '  abc \n'
    process.env.INPUT_TWO_WORDS = ' x y '
    process.env.INPUT_EMPTY = ''
    for (const name of ['app-uuid', 'App-Uuid', 'two words', 'empty', 'never set']) {
      expect(commands.getInput(name)).toBe(core.getInput(name))
    }
    expect(commands.getInput('two words')).toBe('x y')
  })

  it('reads saved state from STATE_<name>, as @actions/core does', () => {
    process.env.STATE_rollouts = '{"a":1}'
    process.env.STATE_empty = ''
    for (const name of ['rollouts', 'empty', 'missing']) {
      expect(commands.getState(name)).toBe(core.getState(name))
    }
  })
})

const FILE_COMMANDS: Array<['setOutput' | 'saveState', 'GITHUB_OUTPUT' | 'GITHUB_STATE']> = [
  ['setOutput', 'GITHUB_OUTPUT'],
  ['saveState', 'GITHUB_STATE']
]

describe.each(FILE_COMMANDS)('%s', (method, variable) => {
  const values = [...TRICKY, 'first\nsecond\nthird\n', '{"app":"web","lines":["a","b"]}']

  it(`appends name<<DELIMITER blocks to ${variable}, read back as @actions/core's`, () => {
    const ours = join(dir, 'ours')
    const theirs = join(dir, 'theirs')
    writeFileSync(ours, '')
    writeFileSync(theirs, '')
    for (const [i, value] of values.entries()) {
      process.env[variable] = ours
      commands[method](`name-${i}`, value)
      process.env[variable] = theirs
      core[method](`name-${i}`, value)
    }
    const written = parseFileCommands(readFileSync(ours, 'utf8'))
    expect(written).toEqual(parseFileCommands(readFileSync(theirs, 'utf8')))
    expect(written).toEqual(values.map((value, i) => [`name-${i}`, value]))
  })

  it('draws a new version 4 UUID for each delimiter, as @actions/core does', () => {
    const file = join(dir, 'file')
    writeFileSync(file, '')
    process.env[variable] = file
    for (let i = 0; i < 50; i++) commands[method](`name-${i}`, 'x')
    const delimiters = [...readFileSync(file, 'utf8').matchAll(/<<ghadelimiter_(.*)\n/g)].map(
      ([, uuid]) => uuid
    )
    expect(delimiters).toHaveLength(50)
    expect(new Set(delimiters).size).toBe(50)
    for (const uuid of delimiters) {
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    }
  })

  it('refuses a name or a value that contains the delimiter, writing nothing', () => {
    const file = join(dir, 'file')
    writeFileSync(file, '')
    process.env[variable] = file
    // The delimiter is drawn from Math.random: all zeros make the lowest version 4 UUID.
    jest.spyOn(Math, 'random').mockReturnValue(0)
    const delimiter = 'ghadelimiter_00000000-0000-4000-8000-000000000000'
    expect(() => commands[method]('status', `x\n${delimiter}\nstatus=finished`)).toThrow(delimiter)
    expect(() => commands[method](`a${delimiter}`, 'x')).toThrow(delimiter)
    expect(readFileSync(file, 'utf8')).toBe('')
  })

  it(`writes the older command on stdout without ${variable}, as @actions/core does`, () => {
    delete process.env[variable]
    for (const value of values) {
      const ours = stdoutOf(() => commands[method]('a:b,c', value))
      expect(ours).toBe(stdoutOf(() => core[method]('a:b,c', value)))
    }
  })

  it(`refuses a ${variable} that names no file`, () => {
    process.env[variable] = join(dir, 'missing')
    expect(() => commands[method]('status', 'x')).toThrow(`${variable} names`)
  })
})

describe('the bundles the runner starts', () => {
  it('hold no @actions/* module: the job summary loads @actions/core at the end of the run', () => {
    const { runs } = actionManifest()
    for (const entry of [runs.main, runs.post!]) {
      const bundle = readFileSync(join(ACTION_DIR, entry), 'utf8')
      // ncc names each module it bundles in a comment; lazily loaded ones go to chunks of their own.
      const bundled = bundle.match(/(?<=MODULE: \.\/node_modules\/)@actions\/[^/]+/g) ?? []
      expect({ entry, packages: [...new Set(bundled)] }).toEqual({ entry, packages: [] })
    }
  })

  it('leave what undici never runs here to be compiled only if it runs: about 5 ms of the start', () => {
    const bundle = readFileSync(join(ACTION_DIR, actionManifest().runs.main), 'utf8')
    // The header of the module that holds `text`: `((` makes V8 compile it as the file loads.
    const header = (text: string): string => {
      const at = bundle.indexOf(text)
      expect(at).toBeGreaterThan(0)
      const headers = [...bundle.slice(0, at).matchAll(/^\/\*\*\*\/ \d+:\n\/\*\*\*\/ \(+/gm)]
      return headers[headers.length - 1][0].split('\n')[1]
    }
    // fetch's body, for FormData bodies, and its FormData parser, reached through it alone.
    expect(header('function extractBody (')).toBe('/***/ (')
    expect(header('function multipartFormDataParser (')).toBe('/***/ (')
    // The client, which runs at the start.
    expect(header('function connectH1 (')).toBe('/***/ ((')
  })

  it("take Node's own modules as they are, without a createRequire for each", () => {
    for (const entry of [actionManifest().runs.main, 'dist/cli/index.js']) {
      const bundle = readFileSync(join(ACTION_DIR, entry), 'utf8')
      expect({ entry, createRequire: bundle.includes('createRequire') }).toEqual({
        entry,
        createRequire: false
      })
      expect(bundle).toContain('__nodeBuiltin("node:http")')
    }
  })

  it('come to at most 2.0 MB, without undici’s fetch and WebSocket, which nothing in them uses', () => {
    // Everything the action's folder holds but the command line's, lazily loaded chunks included.
    const folder = dirname(join(ACTION_DIR, actionManifest().runs.main))
    const files = readdirSync(folder, { recursive: true, encoding: 'utf8' })
      .filter(file => !file.startsWith('cli') && statSync(join(folder, file)).isFile())
      .map(file => join(folder, file))
    const bytes = files.reduce((sum, file) => sum + statSync(file).size, 0)
    expect(bytes).toBeLessThanOrEqual(2_000_000)
    const code = files.map(file => readFileSync(file, 'utf8')).join('\n')
    // undici's fetch and its WebSocket, as their sources declare them.
    expect(code).not.toContain('function fetching (')
    expect(code).not.toContain('class WebSocket extends EventTarget')
  })
})
