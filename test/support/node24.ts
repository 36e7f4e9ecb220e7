import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** The npm package that carries the Node binary, as `npm exec` is asked for it. */
const PACKAGE = 'node@24'

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
  if (!fetchedBefore()) {
    process.stderr.write(
      `Node ${process.version} runs here, GitHub runs the action on Node 24: fetching the npm package ${PACKAGE} once into npm's cache.\n`
    )
  }
  const path = execFileSync(
    'npm',
    ['exec', '--yes', `--package=${PACKAGE}`, '--', 'node', '-p', 'process.execPath'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }
  ).trim()
  const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim()
  if (!version.startsWith('v24.')) throw new Error(`expected Node 24, got ${version} at ${path}`)
  return path
}

/** Whether `npm exec` already holds the package in its cache: each install there names its spec. */
function fetchedBefore(): boolean {
  const npx = join(process.env.npm_config_cache || join(homedir(), '.npm'), '_npx')
  try {
    return readdirSync(npx).some(dir => {
      try {
        const manifest = JSON.parse(readFileSync(join(npx, dir, 'package.json'), 'utf8'))
        return manifest._npx?.packages?.includes(PACKAGE) === true
      } catch {
        return false
      }
    })
  } catch {
    return false
  }
}
