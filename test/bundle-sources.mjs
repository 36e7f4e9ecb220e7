// Jest's global setup: the end-to-end suites run the action as GitHub does, from a bundle, and that
// bundle is built here from the current sources, so that a test can never pass on a stale dist/.
import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export default function bundleSources() {
  if (process.env.ACTION_BUNDLE) return
  const dir = join(mkdtempSync(join(tmpdir(), 'coolify-action-bundle-')), 'dist')
  execFileSync(process.execPath, ['scripts/bundle.mjs', dir], { stdio: 'inherit' })
  // Inherited by the test workers, which start after this.
  process.env.ACTION_BUNDLE = dir
}
