// Builds the two entry points GitHub runs (the main and the post step) and the command line into
// dist/ (or the folder given as the first argument: the tests bundle the sources afresh) with ncc,
// each with a licenses.txt of every package its bundle holds. ncc's own --license lists only the
// last chunk's packages when a bundle has a lazily loaded chunk, so the list is made from its stats.
// Not minified: V8 starts the readable bundle faster (about 7 ms of CPU less here), and its
// stack traces stay readable. The three builds run side by side: each is mostly ncc type-checking
// the same sources on one core, and every test run waits for them.
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { promisify } from 'node:util'

const out = process.argv[2] ?? 'dist'
const entries = [
  ['src/action/index.ts', out],
  ['src/action/post.ts', join(out, 'post')],
  ['src/cli/index.ts', join(out, 'cli')]
]

const ncc = createRequire(import.meta.url).resolve('@vercel/ncc/dist/ncc/cli.js')

rmSync(out, { recursive: true, force: true })
await Promise.all(entries.map(([entry, dir]) => build(entry, dir)))

/** One entry bundled into its folder, with the licenses of what it holds. */
async function build(entry, dir) {
  const stats = join(dir, 'stats.json')
  const args = ['build', entry, '-o', dir, '--target', 'es2022', '--quiet', '--stats-out', stats]
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [ncc, ...args]).catch(
    error => {
      process.stderr.write(`${error.stdout}${error.stderr}ncc could not bundle ${entry}\n`)
      process.exit(1)
    }
  )
  process.stdout.write(stdout)
  process.stderr.write(stderr)
  writeFileSync(join(dir, 'licenses.txt'), licenses(bundledPackages(stats)))
  rmSync(stats)
}

/** Names of the packages whose modules went into a bundle, from ncc's webpack stats. */
function bundledPackages(statsFile) {
  const { modules } = JSON.parse(readFileSync(statsFile, 'utf8'))
  const names = new Set()
  for (const { name = '' } of modules) {
    const at = name.lastIndexOf('node_modules/')
    if (at < 0) continue
    const [scope, rest] = name.slice(at + 'node_modules/'.length).split('/')
    names.add(scope.startsWith('@') ? `${scope}/${rest}` : scope)
  }
  return [...names].sort()
}

/** Each package's name, license and license text, as the published package carries them. */
function licenses(packages) {
  return packages
    .map(name => {
      const dir = join('node_modules', name)
      const { license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
      const file = readdirSync(dir).find(f => /^(licen[cs]e|copying)/i.test(f))
      const text =
        file && existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8').trim() : ''
      return `${name}\n${license ?? 'UNKNOWN'}\n${text}\n`
    })
    .join('\n')
}
