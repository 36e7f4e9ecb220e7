/**
 * A deployment's answer parsed apart from its log, which stays as it stands in the text: the rest
 * of the answer as JSON.parse reads it, and the log cut out exactly, or not at all.
 */
import { describe, expect, it } from '@jest/globals'
import { parseApart } from '../src/coolify/escaped-log.js'

const entries = JSON.stringify([
  { command: null, output: 'Starting deployment of "web" [1/2]', type: 'stdout', order: 1 },
  { command: 'docker build', output: 'C:\\path\\ \u00e9 \ud83d\udca5 ]"', type: 'stderr', order: 2 }
])

/** As Laravel encodes a row: slashes and everything past ASCII escaped (json_encode's default). */
function phpJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

describe('parseApart', () => {
  it.each([
    ['JSON.stringify', JSON.stringify],
    ["Laravel's json_encode", phpJson]
  ])('cuts the log out of an answer as %s writes it', (_, encode) => {
    const row = {
      id: 3,
      deployment_uuid: 'd',
      status: 'in_progress',
      logs: entries,
      commit_message: 'Merge [skip ci] "quotes", and ] brackets]',
      finished_at: null
    }
    const text = encode(row)
    const apart = parseApart(text)!
    expect(apart.log.text()).toBe(entries)
    expect(apart.log.isArray()).toBe(true)
    expect(apart.body).toEqual(row)
    expect('logs' in apart.body).toBe(true)
    expect(JSON.parse(JSON.stringify(apart.body))).toEqual(row)
  })

  it('reads the log from a later point, and says so when that is not JSON', () => {
    const text = JSON.stringify({ logs: entries, status: 'finished' })
    const { log } = parseApart(text)!
    const comma = text.indexOf(',', log.start)
    expect(log.text(comma + 1)).toBe(entries.slice(entries.indexOf(',') + 1))
    // Inside an escape: `\` alone.
    expect(log.text(text.indexOf('\\', log.start) + 1)).toBeUndefined()
  })

  it.each([
    ['no log', { status: 'queued' }],
    ['a log hidden from the token', { status: 'queued', logs: undefined }],
    ['an empty log', { logs: '', status: 'queued' }],
    ['a text log', { logs: '[+] Building 2.1s\nDone', commit_message: 'Fix [bug]' }],
    [
      'a text log that opens like an array, a later field ending with ]',
      { logs: '[{"a": 1} is not the end', commit_message: 'Fix [bug]', status: 'finished' }
    ],
    [
      'the key in an object before the answer’s own',
      { meta: { logs: '[]' }, logs: entries, status: 'finished' }
    ]
  ])('leaves the answer whole with %s', (_, row) => {
    expect(parseApart(JSON.stringify(row))).toBeUndefined()
  })

  it('leaves an answer whole that is not compact JSON after its log, or nests another log first', () => {
    const spaced = '{"logs":"[{\\"a\\":1} then text", "server_name":"a]", "status":"finished"}'
    expect(JSON.parse(spaced)).toHaveProperty('server_name', 'a]')
    expect(parseApart(spaced)).toBeUndefined()
    const nested = `{"logs":"","meta":{"logs":${JSON.stringify(entries)}},"status":"finished"}`
    expect(parseApart(nested)).toBeUndefined()
  })

  it('leaves an answer cut off in its log, or not JSON around it, whole', () => {
    const text = JSON.stringify({ logs: entries, status: 'finished' })
    expect(parseApart(text.slice(0, text.indexOf(']"')))).toBeUndefined()
    expect(parseApart(text.slice(0, -1))).toBeUndefined()
    expect(parseApart(`[${text}]`)).toBeUndefined()
  })

  it('tells an empty array apart', () => {
    const { body, log } = parseApart(JSON.stringify({ logs: '[]', status: 'queued' }))!
    expect(log.text()).toBe('[]')
    expect(log.isArray()).toBe(true)
    expect(body).toEqual({ logs: '[]', status: 'queued' })
  })
})
