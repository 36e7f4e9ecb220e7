/**
 * The build log as the runner reads it: lines split where the runner splits them, workflow
 * commands stopped, and nothing that the log view would take for `##[` markup.
 */
import { describe, expect, it } from '@jest/globals'
import type { DeploymentView } from '../src/model/deployment.js'
import type { LogLine } from '../src/model/logs.js'
import { githubLog, unguessableToken } from '../src/action/host.js'
import { LogPrinter } from '../src/report/console.js'

const ZWSP = '\u200b'

/** What one printer writes for these lines of a deployment named `name`. */
function printed(several: boolean, lines: LogLine[], name = 'web'): string {
  let out = ''
  const printer = new LogPrinter(
    several,
    githubLog(text => (out += text))
  )
  const deployment = { name } as DeploymentView
  printer.begin(deployment)
  printer.lines(deployment, lines)
  printer.end(deployment)
  return out
}

/** The lines as the runner sees them: it ends a line at \n, \r or \r\n. */
function runnerLines(out: string): string[] {
  return out.replace(/\n$/, '').split(/\r\n|\r|\n/)
}

/** A line's text without colour codes and leading blanks: where the log view looks for `##[`. */
function start(line: string): string {
  // eslint-disable-next-line no-control-regex
  return line.replace(/\u001b\[[0-9;]*m/g, '').trimStart()
}

/** The lines between the stop-commands markers. */
function between(out: string): string[] {
  const lines = runnerLines(out)
  const open = lines.findIndex(line => line.startsWith('::stop-commands::'))
  const token = lines[open].slice('::stop-commands::'.length)
  expect(token).toMatch(/^[0-9a-f]{24}$/)
  const close = lines.indexOf(`::${token}::`)
  expect(close).toBeGreaterThan(open)
  return lines.slice(open + 1, close)
}

const stdout = (text: string): LogLine => ({ kind: 'stdout', text })

const MARKUP = [
  '##[group]Pretend group',
  '##[endgroup]',
  '##[error]Pretend error',
  '##[warning]w',
  '##[debug]d',
  '##[command]rm -rf /',
  '##[section]s',
  '##[set-output name=x]y',
  '##[]',
  '   ##[error]indented',
  '\t##[group]tabbed'
]

describe('LogPrinter', () => {
  it.each([false, true])(
    'no line reads as ##[ markup, and each reads the same to a person (several: %p)',
    several => {
      const out = printed(several, MARKUP.map(stdout))
      const body = between(out)
      expect(body).toHaveLength(MARKUP.length)
      for (const line of runnerLines(out)) expect(start(line).startsWith('##[')).toBe(false)
      const prefix = several ? 'web | ' : ''
      expect(body.map(line => line.replaceAll(ZWSP, ''))).toEqual(MARKUP.map(text => prefix + text))
    }
  )

  it('puts the zero-width space between ## and [ only', () => {
    const [line] = between(printed(false, [stdout('  ##[error]boom')]))
    expect(line).toBe(`  ##${ZWSP}[error]boom`)
  })

  it('neutralises markup behind colour codes too', () => {
    const out = printed(false, [
      { kind: 'stderr', text: '##[error]red' },
      { kind: 'warning', text: ' ##[warning]yellow' },
      stdout('\u001b[1m##[group]bold')
    ])
    const body = between(out)
    expect(body).toEqual([
      `\u001b[31m##${ZWSP}[error]red\u001b[0m`,
      `\u001b[33m ##${ZWSP}[warning]yellow\u001b[0m`,
      `\u001b[1m##${ZWSP}[group]bold`
    ])
  })

  it('neutralises markup behind any escape sequence: cursor moves, erased lines, links', () => {
    const texts = [
      '\u001b[2K##[group]erased line',
      '\u001b[1G\u001b[?25l##[error]cursor',
      '\u001b]8;;https://example.com\u0007##[warning]link',
      '\u001b]0;title\u001b\\##[group]titled',
      '\u001b7##[endgroup]saved'
    ]
    const body = between(printed(false, texts.map(stdout)))
    expect(body.map(line => line.replaceAll(ZWSP, ''))).toEqual(texts)
    for (const line of body) expect(line).toContain(`##${ZWSP}[`)
  })

  it('leaves text that is not markup as it is', () => {
    const texts = ['echo ##[group] later in the line', '#[x]', '## [x]', '###[x]', 'a##[b]', '']
    expect(between(printed(false, texts.map(stdout)))).toEqual([
      'echo ##[group] later in the line',
      '#[x]',
      '## [x]',
      '###[x]',
      'a##[b]',
      ''
    ])
  })

  it('keeps `::` commands between the stop-commands markers', () => {
    const texts = ['::error::not an annotation', '  ::group::nor a group', '::endgroup::']
    expect(between(printed(false, texts.map(stdout)))).toEqual(texts)
  })

  it.each([false, true])(
    'splits a line where the runner would, each part checked and prefixed (several: %p)',
    several => {
      const out = printed(several, [
        stdout('Downloading 10%\r##[group]evil\r\n##[error]evil too\nplain'),
        { kind: 'command', text: 'echo one &&\n##[endgroup]' }
      ])
      // With several deployments the name in front already keeps a line from starting with ##[.
      const [prefix, mark] = several ? ['web | ', ''] : ['', ZWSP]
      expect(between(out)).toEqual([
        `${prefix}Downloading 10%`,
        `${prefix}##${mark}[group]evil`,
        `${prefix}##${mark}[error]evil too`,
        `${prefix}plain`,
        `${prefix}\u001b[36m$ echo one &&\u001b[0m`,
        `${prefix}\u001b[36m##${mark}[endgroup]\u001b[0m`
      ])
      for (const line of runnerLines(out)) expect(start(line).startsWith('##[')).toBe(false)
    }
  )

  it.each([false, true])(
    'keeps an application name with line breaks or markup on one inert line (several: %p)',
    several => {
      const out = printed(several, [stdout('ok')], '##[group]web\n::error::x\r')
      const lines = runnerLines(out)
      for (const line of lines) {
        expect(start(line).startsWith('##[')).toBe(false)
        expect(line.startsWith('::error')).toBe(false)
      }
      expect(lines[0]).toBe(
        several
          ? `::group::##${ZWSP}[group]web ::error::x `
          : `::group::Build log of ##${ZWSP}[group]web ::error::x `
      )
      expect(between(out)).toEqual([several ? `##${ZWSP}[group]web ::error::x  | ok` : 'ok'])
    }
  )

  it('escapes `%` in a group title, as the runner reads the title as a message', () => {
    const lines = runnerLines(printed(false, [stdout('ok')], 'web%0A::error::x'))
    expect(lines[0]).toBe('::group::Build log of web%250A::error::x')
  })

  it('wraps a single deployment in one group, several in a group per batch', () => {
    const single = runnerLines(printed(false, [stdout('a')]))
    expect(single[0]).toBe('::group::Build log of web')
    expect(single.at(-1)).toBe('::endgroup::')
    const several = runnerLines(printed(true, [stdout('a')]))
    expect(several[0]).toBe('::group::web')
    expect(several.at(-1)).toBe('::endgroup::')
  })
})

describe('the stop-commands token', () => {
  it('is 12 bytes in hex, new each time, from the kernel or else from node:crypto', () => {
    const tokens = [
      ...Array.from({ length: 20 }, () => unguessableToken()),
      // Windows, and a device that cannot be read: node:crypto's.
      ...Array.from({ length: 20 }, () => unguessableToken(null)),
      ...Array.from({ length: 20 }, () => unguessableToken('/no/such/device'))
    ]
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{24}$/)
    expect(new Set(tokens).size).toBe(tokens.length)
  })
})
