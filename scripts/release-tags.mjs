#!/usr/bin/env node
/**
 * The tags of a release, pushed by the release workflow once the commit passed its checks:
 *
 *   node scripts/release-tags.mjs tag <version> [--dry-run]
 *     tags HEAD as v<version> on the remote. A tag already there is reused when it names HEAD,
 *     and is an error when it names another commit.
 *   node scripts/release-tags.mjs major <version> [--dry-run]
 *     moves the major tag (v1) to HEAD when v<version> is the newest release of that major on
 *     the remote (semver order; pre-releases and other majors do not count).
 *
 * Both read the remote with `git ls-remote`, and print each command that changes it (`+ git …`)
 * before running it; with --dry-run they print it and run nothing. Tokens come from the
 * environment, so that they are neither printed nor seen on a command line: TAG_TOKEN for reading
 * and for the version tag, MAJOR_TOKEN (by default TAG_TOKEN) for the major tag, named in
 * messages by MAJOR_TOKEN_NAME. Without them git uses the credentials it has.
 */
import { Buffer } from 'node:buffer'
import { spawnSync } from 'node:child_process'

const USAGE = 'Usage: node scripts/release-tags.mjs tag|major <version> [--dry-run]'

const remote = 'origin'
const args = process.argv.slice(2)
const dryRun = args.includes('--dry-run')
const [action, wanted = ''] = args.filter(arg => arg !== '--dry-run')

try {
  if (action !== 'tag' && action !== 'major') throw new Error(USAGE)
  const version = parseVersion(wanted)
  if (action === 'tag') tagRelease(version)
  else moveMajor(version)
} catch (error) {
  console.log(`::error::${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
}

function tagRelease(version) {
  const tag = `v${version.join('.')}`
  const head = git(['rev-parse', 'HEAD']).trim()
  const tags = remoteTags(process.env.TAG_TOKEN)
  const tagged = tags.get(tag)
  if (tagged === head) {
    console.log(`::notice::${tag} already tags ${head}: the release uses it.`)
    return
  }
  if (tagged) {
    throw new Error(
      `${tag} already tags ${tagged}, not ${head}: run the Release workflow from the tag ${tag} ` +
        `(Use workflow from → Tags), or release a new version.`
    )
  }
  // No --force: if the tag appeared meanwhile, the push fails instead of moving it.
  change(['push', remote, `${head}:refs/tags/${tag}`], process.env.TAG_TOKEN)
}

function moveMajor(version) {
  const tag = `v${version.join('.')}`
  const major = `v${version[0]}`
  const head = git(['rev-parse', 'HEAD']).trim()
  const tags = remoteTags(process.env.TAG_TOKEN)
  if (tags.has(tag) && tags.get(tag) !== head) {
    throw new Error(`${tag} tags ${tags.get(tag)}, not ${head}: ${major} stays where it is.`)
  }
  // A fix to an older 1.x must not take v1 back from a newer release.
  const newest = [...tags.keys()]
    .map(name => /^v(\d+)\.(\d+)\.(\d+)$/.exec(name)?.slice(1).map(Number))
    .filter(other => other && other[0] === version[0])
    .reduce((a, b) => (compare(a, b) >= 0 ? a : b), version)
  if (compare(newest, version) > 0) {
    console.log(`::notice::${major} stays on v${newest.join('.')}, which is newer than ${tag}.`)
    return
  }
  if (tags.get(major) === head) {
    console.log(`::notice::${major} already points to ${tag} (${head}).`)
    return
  }
  const token = process.env.MAJOR_TOKEN || process.env.TAG_TOKEN
  const result = change(['push', '--force', remote, `${head}:refs/tags/${major}`], token, false)
  if (result.status === 0) {
    if (!dryRun) console.log(`${major} now points to ${tag} (${head}).`)
    return
  }
  // Moving a tag to a commit whose .github/workflows differ from the old one's is a change of
  // workflows, which GitHub refuses to GITHUB_TOKEN and to any token without that permission.
  const name = process.env.MAJOR_TOKEN_NAME || 'the token'
  throw new Error(
    `${tag} is released, but ${major} was not moved to it: the push with ${name} was refused. ` +
      `Moving ${major} needs a token with contents: write and, when the workflow files changed ` +
      `since the commit ${major} points to, the workflows permission: a fine-grained personal ` +
      `access token (Contents and Workflows: read and write) or a GitHub App token, in the ` +
      `RELEASE_TOKEN secret. Then run the workflow again, or move ${major} by hand: ` +
      `git fetch ${remote} tag ${tag} && git push --force ${remote} ${head}:refs/tags/${major}`
  )
}

function parseVersion(text) {
  const match = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (!match) throw new Error(`Give the version as 1.2.3 or v1.2.3, not "${text}".`)
  return match.slice(1).map(Number)
}

function compare(a, b) {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2]
}

/** The remote's tags and the commit each names (an annotated tag's `^{}` line). */
function remoteTags(token) {
  const tags = new Map()
  for (const line of git(['ls-remote', '--tags', remote], token).split('\n')) {
    const match = /^([0-9a-f]+)\trefs\/tags\/(.+?)(\^\{\})?$/.exec(line)
    if (match && (match[3] || !tags.has(match[2]))) tags.set(match[2], match[1])
  }
  return tags
}

/** Prints a command that changes the remote, then runs it unless this is a dry run. */
function change(command, token, throwOnFailure = true) {
  console.log(`+ git ${command.join(' ')}`)
  if (dryRun) return { status: 0, stderr: '' }
  const result = run(command, token)
  process.stderr.write(result.stderr)
  if (result.status !== 0 && throwOnFailure) {
    throw new Error(`git ${command[0]} failed: ${lastLine(result.stderr)}`)
  }
  return result
}

function git(command, token) {
  const result = run(command, token)
  if (result.status !== 0) throw new Error(`git ${command[0]} failed: ${lastLine(result.stderr)}`)
  return result.stdout
}

function run(command, token) {
  const result = spawnSync('git', command, { encoding: 'utf8', env: withToken(token) })
  if (result.error) throw result.error
  return result
}

/** The header actions/checkout would set, given to git through its environment. */
function withToken(token) {
  if (!token) return process.env
  const server = process.env.GITHUB_SERVER_URL || 'https://github.com'
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64')
  return {
    ...process.env,
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: `http.${server}/.extraheader`,
    GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`
  }
}

function lastLine(text) {
  return text.trim().split('\n').pop() ?? ''
}
