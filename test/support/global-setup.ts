import { execFileSync } from 'node:child_process'

/**
 * GitHub runs the action on Node 24. End-to-end tests run the bundle on the same major version:
 * this machine's node when it is 24 or newer, else Node 24 from the npm registry's `node` package.
 * NODE24 is where the tests find it.
 */
export default function globalSetup(): void {
  if (process.env.NODE24) return
  if (Number(process.versions.node.split('.')[0]) >= 24) {
    process.env.NODE24 = process.execPath
    return
  }
  const path = execFileSync(
    'npm',
    ['exec', '--yes', '--package=node@24', '--', 'node', '-p', 'process.execPath'],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit']
    }
  ).trim()
  const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim()
  if (!version.startsWith('v24.'))
    throw new Error(`expected Node 24 for end-to-end tests, got ${version} at ${path}`)
  process.env.NODE24 = path
}
