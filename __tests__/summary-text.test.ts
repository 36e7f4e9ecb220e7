import * as core from '@actions/core'
import { afterEach, describe, expect, it } from '@jest/globals'
import { summaryToText } from '../scripts/summary-text.js'

/** What @actions/core's summary writes for what `build` adds: the renderer's real input. */
function summaryOf(build: (summary: typeof core.summary) => void): string {
  build(core.summary)
  return core.summary.stringify()
}

afterEach(() => void core.summary.emptyBuffer())

describe('summaryToText', () => {
  it('shows a heading, and a table as one aligned record per row', () => {
    const text = summaryToText(
      summaryOf(summary =>
        summary.addHeading('Deploys on <a href="https://c.example">c.example</a>', 3).addTable([
          [
            { data: 'Application', header: true },
            { data: 'Status', header: true },
            { data: 'URL', header: true }
          ],
          ['web', '❌ failed<br><sub>Build &amp; push broke</sub>', '<a href="https://w.io">w</a>'],
          ['api', '✅ finished', '<a href="https://a.io">https://a.io</a>']
        ])
      )
    )
    expect(text).toEqual([
      'Deploys on c.example <https://c.example>',
      '────────────────────────────────────────',
      '',
      'Application  web',
      'Status       ❌ failed',
      '             Build & push broke',
      'URL          w',
      '             https://w.io',
      '',
      'Application  api',
      'Status       ✅ finished',
      'URL          https://a.io'
    ])
  })

  it('shows details under their label, fenced code verbatim even when it looks like HTML', () => {
    const text = summaryToText(
      summaryOf(summary =>
        summary.addDetails(
          'web: the end of its log',
          '\n\nstderr:\n```text\n<div> &amp; not a tag\n  indented\n```\n'
        )
      )
    )
    expect(text).toEqual([
      '▸ web: the end of its log',
      '  stderr:',
      '',
      '      <div> &amp; not a tag',
      '        indented'
    ])
  })

  it('shows lists, rules and code blocks', () => {
    const text = summaryToText(
      summaryOf(summary =>
        summary.addList(['one', '<b>two</b>'], true).addSeparator().addCodeBlock('a &lt; b', 'text')
      )
    )
    expect(text).toEqual(['1. one', '2. two', '', '─'.repeat(40), '', '    a < b'])
  })
})
