#!/usr/bin/env node
/**
 * Prints the release notes of one version: its section of the changelog (Keep a Changelog style,
 * `## [1.2.0] - 2026-05-01`), without the heading and without HTML comments.
 *
 *   node scripts/release-notes.mjs <version> [changelog]     (version with or without its v)
 *
 * Fails, saying why, when the version has no section, when its section is still dated
 * "Unreleased", or when it holds no notes: a release should never go out with empty or
 * unfinished notes.
 */
import { readFileSync } from 'node:fs'

const [version, changelog = 'CHANGELOG.md'] = process.argv.slice(2)
try {
  process.stdout.write(`${releaseNotes(readFileSync(changelog, 'utf8'), version ?? '')}\n`)
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error))
  process.exitCode = 1
}

function releaseNotes(text, wanted) {
  const version = wanted.replace(/^v/, '')
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new Error(`Give the version as 1.2.3 or v1.2.3, not "${wanted}".`)
  }
  const lines = text.replace(/<!--[\s\S]*?-->/g, '').split(/\r?\n/)
  const start = lines.findIndex(line => line.startsWith(`## [${version}]`))
  if (start === -1) throw new Error(`The changelog has no section "## [${version}]".`)
  if (/unreleased/i.test(lines[start])) {
    throw new Error(
      `The changelog's section of ${version} is still marked Unreleased: give it the release date.`
    )
  }
  const rest = lines.slice(start + 1)
  // The section ends at the next version, or at the link definitions closing the file.
  const end = rest.findIndex(line => line.startsWith('## ') || /^\[[^\]]+\]:\s/.test(line))
  const notes = (end === -1 ? rest : rest.slice(0, end)).join('\n').trim()
  if (!notes) throw new Error(`The changelog's section of ${version} has no notes.`)
  return notes.replace(/\n{3,}/g, '\n\n')
}
