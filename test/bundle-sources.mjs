// Jest's global setup: the end-to-end suites run the action as GitHub does, from a checked-out
// action (action.yml and the bundle its `runs` name), and that bundle is built here from the current
// sources, so that a test can never pass on a stale dist/. ACTION_DIR set beforehand names another
// action folder to test instead, e.g. `ACTION_DIR=$PWD npm test` for the committed dist/.
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export default function bundleSources() {
  if (process.env.ACTION_DIR) return
  const action = join(mkdtempSync(join(tmpdir(), 'coolify-action-')), 'action')
  mkdirSync(action)
  copyFileSync('action.yml', join(action, 'action.yml'))
  // Without the type check: `npm run typecheck` does it, in CI too.
  const args = ['scripts/bundle.mjs', join(action, 'dist'), '--no-type-check']
  execFileSync(process.execPath, args, { stdio: 'inherit' })
  // Inherited by the test workers, which start after this.
  process.env.ACTION_DIR = action
}
