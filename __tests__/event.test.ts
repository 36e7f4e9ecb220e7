import { describe, expect, it } from '@jest/globals'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isFromFork, pullRequestEvent } from '../src/config/event.js'

function payloadFile(payload: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'event-')), 'event.json')
  writeFileSync(file, typeof payload === 'string' ? payload : JSON.stringify(payload))
  return file
}

const pullRequest = (head: string, base: string) => ({
  pull_request: {
    number: 7,
    head: { ref: 'feature/login', sha: 'c0ffee0', repo: { full_name: head } },
    base: { ref: 'main', repo: { full_name: base } }
  }
})

describe("the event's pull request", () => {
  it('names its branch and the repositories on both sides', () => {
    const event = pullRequestEvent({
      GITHUB_EVENT_PATH: payloadFile(pullRequest('octo/app', 'octo/app'))
    })
    expect(event).toEqual({
      headRef: 'feature/login',
      headSha: 'c0ffee0',
      headRepository: 'octo/app',
      baseRepository: 'octo/app'
    })
    expect(isFromFork(event)).toBe(false)
  })

  it('comes from a fork when its branch lives in another repository', () => {
    const event = pullRequestEvent({
      GITHUB_EVENT_PATH: payloadFile(pullRequest('stranger/app', 'octo/app'))
    })
    expect(isFromFork(event)).toBe(true)
  })

  it('names the repository the workflow runs in, from GITHUB_REPOSITORY', () => {
    const payload = { GITHUB_EVENT_PATH: payloadFile(pullRequest('stranger/app', 'octo/app')) }
    expect(pullRequestEvent({ ...payload, GITHUB_REPOSITORY: 'octo/app' }).repository).toBe(
      'octo/app'
    )
    for (const env of [payload, { ...payload, GITHUB_REPOSITORY: '' }, {}]) {
      expect(pullRequestEvent(env).repository).toBeUndefined()
    }
  })

  it('falls back on GITHUB_HEAD_REF without a readable payload', () => {
    for (const env of [
      { GITHUB_HEAD_REF: 'fix' },
      { GITHUB_HEAD_REF: 'fix', GITHUB_EVENT_PATH: payloadFile('not json') },
      { GITHUB_HEAD_REF: 'fix', GITHUB_EVENT_PATH: '/nonexistent/event.json' }
    ]) {
      const event = pullRequestEvent(env)
      expect(event).toEqual({
        headRef: 'fix',
        headSha: undefined,
        headRepository: undefined,
        baseRepository: undefined
      })
      expect(isFromFork(event)).toBe(false)
    }
  })
})
