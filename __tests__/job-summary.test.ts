/**
 * The action's job summary writer against @actions/core's `summary`: for the same calls, the same
 * bytes in the runner's summary file, hard cases included (empty cells, spans, a heading level out
 * of range, text that looks like markup).
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { summary as coreSummary } from '@actions/core'
import { JobSummary, type SummaryCell } from '../src/action/job-summary.js'

type Summary = Pick<
  JobSummary,
  'addRaw' | 'addEOL' | 'addHeading' | 'addTable' | 'addDetails' | 'stringify' | 'emptyBuffer'
>

const TEXTS = ['plain', '', '<b>bold</b> & "quoted"', 'line one\nline two', 'ünïcødé ✓ 🚀', '0']

const TABLES: SummaryCell[][][] = [
  [],
  [[]],
  [['a', '', 'c']],
  [
    [
      { data: 'Application', header: true },
      { data: '', header: true },
      { data: 'span', colspan: '2' },
      { data: 'rows', rowspan: '3', header: false },
      { data: 'both', colspan: '', rowspan: '2' }
    ],
    ['web', '<a href="https://x">x</a>', '']
  ]
]

/** The same calls on either writer. */
function compose(summary: Summary): string {
  summary.emptyBuffer()
  for (const text of TEXTS) {
    for (const level of [1, 3, 6, 0, 7, 2.5, -1]) summary.addHeading(text, level)
    summary.addRaw(text).addRaw(text, true).addEOL()
    for (const content of TEXTS) summary.addDetails(text, content)
  }
  for (const table of TABLES) summary.addTable(table)
  return summary.stringify()
}

const restore = process.env.GITHUB_STEP_SUMMARY
afterEach(() => {
  process.env.GITHUB_STEP_SUMMARY = restore
  coreSummary.emptyBuffer()
})

describe("the job summary, as @actions/core's summary writes it", () => {
  it('composes the same text for the same calls', () => {
    const ours = compose(new JobSummary())
    expect(ours).toBe(compose(coreSummary as unknown as Summary))
    expect(ours).toContain('<td>')
  })

  it('appends the same bytes to the summary file, and starts empty after a write', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'job-summary-'))
    const [oursFile, theirsFile] = [join(dir, 'ours.md'), join(dir, 'theirs.md')]
    for (const file of [oursFile, theirsFile]) writeFileSync(file, 'before\n')

    const ours = new JobSummary()
    compose(ours)
    await ours.write(oursFile)
    expect(ours.stringify()).toBe('')
    await ours.addHeading('again', 2).write(oursFile)

    process.env.GITHUB_STEP_SUMMARY = theirsFile
    compose(coreSummary as unknown as Summary)
    await coreSummary.write()
    await coreSummary.addHeading('again', 2).write()

    expect(readFileSync(oursFile, 'utf8')).toBe(readFileSync(theirsFile, 'utf8'))
  })

  it('says the runner takes no summary when GITHUB_STEP_SUMMARY is not set', async () => {
    delete process.env.GITHUB_STEP_SUMMARY
    await expect(new JobSummary().addRaw('x').write()).rejects.toThrow(
      'GITHUB_STEP_SUMMARY is not set'
    )
  })
})
