import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ACTION_DIR, PROJECT } from './runner.js'

/**
 * The npm package as `npm pack` makes it from the project's package.json and the tests' fresh
 * bundle of the command line (dist/cli/): the path of the tarball.
 */
export function packCli(): string {
  const source = mkdtempSync(join(tmpdir(), 'coolify-cli-pack-'))
  for (const file of ['package.json', 'README.md', 'LICENSE']) {
    cpSync(join(PROJECT, file), join(source, file))
  }
  cpSync(join(ACTION_DIR, 'dist', 'cli'), join(source, 'dist', 'cli'), { recursive: true })
  const tarball = execFileSync('npm', ['pack', '--silent'], { cwd: source, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!
  return join(source, tarball)
}
