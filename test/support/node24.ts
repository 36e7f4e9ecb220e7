import { execFileSync } from 'node:child_process'

/**
 * A Node 24 binary, the version GitHub runs the action on: this process's node when it is 24 or
 * newer, else the npm registry's `node@24` package (fetched once into npm's cache). NODE24 in the
 * environment names one directly.
 */
export function findNode24(): string {
  found ??= process.env.NODE24 || locate()
  return found
}

let found: string | undefined

function locate(): string {
  if (Number(process.versions.node.split('.')[0]) >= 24) return process.execPath
  const path = execFileSync(
    'npm',
    ['exec', '--yes', '--package=node@24', '--', 'node', '-p', 'process.execPath'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }
  ).trim()
  const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim()
  if (!version.startsWith('v24.')) throw new Error(`expected Node 24, got ${version} at ${path}`)
  return path
}
