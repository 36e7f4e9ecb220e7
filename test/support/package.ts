import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ACTION_DIR, PROJECT } from './runner.js'

/**
 * The npm package as the release workflow publishes it (scripts/stage-cli.mjs), around the tests'
 * fresh bundle of the command line, packed with `npm pack`: the path of the tarball.
 */
export function packCli(): string {
  const folder = join(mkdtempSync(join(tmpdir(), 'coolify-cli-pack-')), 'package')
  execFileSync(process.execPath, ['scripts/stage-cli.mjs', folder, join(ACTION_DIR, 'dist')], {
    cwd: PROJECT
  })
  const tarball = execFileSync('npm', ['pack', '--silent'], { cwd: folder, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!
  return join(folder, tarball)
}
