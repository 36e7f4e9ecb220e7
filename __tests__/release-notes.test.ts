import { describe, expect, it } from '@jest/globals'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const CHANGELOG = `# Changelog

All notable changes to this project are documented here.

## [Unreleased]

- Something not yet released.

## [1.1.0] - 2026-06-02

### Added

- Health checks.
<!-- The next line stays out of the notes. -->

### Fixed

- A retry that came too soon.


## [1.0.0] - 2026-05-01

### Added

- The first release.

## [0.9.0] - Unreleased

- Never shipped.

## [0.8.0] - 2026-01-01

[Unreleased]: https://github.com/OWNER/coolify-deploy-follow/compare/v1.1.0...HEAD
[1.1.0]: https://github.com/OWNER/coolify-deploy-follow/compare/v1.0.0...v1.1.0
`

/** Runs the script as the release workflow does: `node scripts/release-notes.mjs <version> <file>`. */
function releaseNotes(
  version: string,
  text = CHANGELOG
): { code: number | null; out: string; err: string } {
  const file = join(mkdtempSync(join(tmpdir(), 'release-notes-')), 'CHANGELOG.md')
  writeFileSync(file, text)
  const result = spawnSync(process.execPath, ['scripts/release-notes.mjs', version, file], {
    encoding: 'utf8'
  })
  return { code: result.status, out: result.stdout, err: result.stderr }
}

describe('release-notes.mjs', () => {
  it("prints the version's section without its heading or comments, up to the next version", () => {
    expect(releaseNotes('1.1.0')).toEqual({
      code: 0,
      out: '### Added\n\n- Health checks.\n\n### Fixed\n\n- A retry that came too soon.\n',
      err: ''
    })
  })

  it('takes the version with its v, as the tag names it', () => {
    expect(releaseNotes('v1.0.0')).toEqual({
      code: 0,
      out: '### Added\n\n- The first release.\n',
      err: ''
    })
  })

  it('ends the last section at the link definitions', () => {
    const text = CHANGELOG.replace(/## \[0\.9\.0\][\s\S]*?(?=\[Unreleased\]:)/, '')
    expect(releaseNotes('1.0.0', text).out).toBe('### Added\n\n- The first release.\n')
  })

  it.each([
    ['2.0.0', 'The changelog has no section "## [2.0.0]".'],
    [
      '0.9.0',
      "The changelog's section of 0.9.0 is still marked Unreleased: give it the release date."
    ],
    ['0.8.0', "The changelog's section of 0.8.0 has no notes."],
    ['1.1', 'Give the version as 1.2.3 or v1.2.3, not "1.1".']
  ])('refuses %s, saying why', (version, message) => {
    expect(releaseNotes(version)).toEqual({ code: 1, out: '', err: `${message}\n` })
  })
})
