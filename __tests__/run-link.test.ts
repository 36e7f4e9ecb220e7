/**
 * Which form of a workflow run's address a forge's web UI takes, from the version its API tells:
 * Gitea's run ids from 1.26, run numbers before and on Forgejo, and numbers when nothing is told.
 */
import { describe, expect, it } from '@jest/globals'
import { takesRunIds } from '../src/action/run-link.js'

describe('takesRunIds', () => {
  it('is true from Gitea 1.26, its builds ahead of a release included', () => {
    for (const version of ['1.26.0', '1.26.2', '1.27.0+dev-12-gabcdef0', '2.0.0']) {
      expect(takesRunIds(version)).toBe(true)
    }
  })

  it('is false up to Gitea 1.25, on Forgejo, and when the version is not known', () => {
    for (const version of ['1.25.4', '1.21.11', '11.0.3+gitea-1.22.0', '7.0.0+gitea-1.21.0']) {
      expect(takesRunIds(version)).toBe(false)
    }
    for (const unknown of [undefined, '', 'development']) expect(takesRunIds(unknown)).toBe(false)
  })
})
