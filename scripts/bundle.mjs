// Builds the two entry points GitHub runs (the main and the post step) and the command line into
// dist/ (or the folder given as the first argument: the tests bundle the sources afresh) with ncc,
// each with a licenses.txt of every package its bundle holds. ncc's own --license lists only the
// last chunk's packages when a bundle has a lazily loaded chunk, so the list is made from its stats.
// Not minified: V8 starts the readable bundle faster (about 7 ms of CPU less here), and its
// stack traces stay readable. The three builds run side by side: each is mostly ncc type-checking
// the same sources on one core.
//
// `--transpile-only` (the tests' bundle) leaves the type check to `tsc --noEmit`, which CI runs
// anyway: about 7 s instead of 50 on two cores, where every test run waits for it. ncc's
// transpile-only mode cannot tell that a NodeNext source is an ES module (it then refuses the
// entries' top-level await), so each entry is bundled through a one-line module beside a tsconfig
// that says ES2022 modules; with `isolatedModules` the code emitted is the same.
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'

const transpileOnly = process.argv.includes('--transpile-only')
const out = process.argv.slice(2).find(arg => !arg.startsWith('--')) ?? 'dist'
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
  const through = transpileOnly ? throughModule(entry) : undefined
  if (through) args.splice(1, 1, through, '--transpile-only')
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
  if (through) rmSync(dirname(through), { recursive: true, force: true })
}

/** A folder of its own holding a module that runs `entry`, with the tsconfig that says ES2022. */
function throughModule(entry) {
  const folder = mkdtempSync(join(tmpdir(), 'coolify-bundle-'))
  const options = { module: 'ES2022', moduleResolution: 'Bundler' }
  const config = { extends: resolve('tsconfig.json'), compilerOptions: options, include: ['*.ts'] }
  writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify(config))
  writeFileSync(join(folder, 'package.json'), '{"type":"module"}')
  // The command line's `#!` line goes first, as ncc keeps an entry's own.
  const [first] = readFileSync(entry, 'utf8').split('\n', 1)
  const shebang = first.startsWith('#!') ? `${first}\n` : ''
  const module = JSON.stringify(resolve(entry).replace(/\.ts$/, '.js'))
  writeFileSync(join(folder, 'entry.ts'), `${shebang}import ${module}\n`)
  return join(folder, 'entry.ts')
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
