// Builds the entry point GitHub runs (the main and the post step alike) and the command line into
// dist/ (or the folder given as the first argument: the tests bundle the sources afresh) with ncc,
// each with a licenses.txt of every package its bundle holds. ncc's own --license lists only the
// last chunk's packages when a bundle has a lazily loaded chunk, so the list is made from its stats.
// Not minified: V8 starts the readable bundle faster (about 7 ms of CPU less here), and its
// stack traces stay readable.
//
// The sources are type-checked once (`tsc -p tsconfig.build.json`) beside the two builds, which
// only transpile: about 20 s on two cores, where ncc checking the same sources in each build took
// 50. A type error fails the bundle all the same; `--no-type-check` (the tests' bundle, whose types
// `npm run typecheck` checks) skips it. ncc's transpile-only mode cannot tell a NodeNext source is
// an ES module (it then refuses the entries' top-level await), so each entry is bundled through a
// one-line module beside a tsconfig that says ES2022 modules; with `isolatedModules` the code is
// the same. Those modules stay at one path inside the project, so that the bundle's module ids,
// which webpack derives from paths, are the same on every machine.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const typeCheck = !process.argv.includes('--no-type-check')
const out = process.argv.slice(2).find(arg => !arg.startsWith('--')) ?? 'dist'
const entries = [
  ['src/action/index.ts', out, 'action'],
  ['src/cli/index.ts', join(out, 'cli'), 'cli']
]

/**
 * undici requires these only on paths the action does not take: fetch's body for a FormData body
 * (the action sends text), and its HTTP parser built without SIMD, for a CPU that has none (or
 * when UNDICI_NO_WASM_SIMD or Jest asks for it).
 */
const NEVER_RUN = ['undici/lib/web/fetch/body.js', 'undici/lib/llhttp/llhttp-wasm.js']

const require = createRequire(import.meta.url)
const ncc = require.resolve('@vercel/ncc/dist/ncc/cli.js')
const tsc = require.resolve('typescript/bin/tsc')

rmSync(out, { recursive: true, force: true })
await Promise.all([
  typeCheck ? checkTypes() : undefined,
  ...entries.map(([entry, dir, name]) => build(entry, dir, name))
])

async function checkTypes() {
  await run(process.execPath, [tsc, '--noEmit', '-p', 'tsconfig.build.json']).catch(error => {
    fail(`${error.stdout}${error.stderr}The sources do not type-check.`)
  })
}

/** One entry bundled into its folder, with the licenses of what it holds. */
async function build(entry, dir, name) {
  const stats = join(dir, 'stats.json')
  const through = throughModule(entry, name)
  const args = ['build', through, '-o', dir, '--target', 'es2022', '--transpile-only', '--quiet']
  const { stdout, stderr } = await run(process.execPath, [
    ncc,
    ...args,
    '--stats-out',
    stats
  ]).catch(error => {
    fail(`${error.stdout}${error.stderr}ncc could not bundle ${entry}`)
  })
  process.stdout.write(stdout)
  process.stderr.write(stderr)
  leaveOutHttp2(join(dir, 'index.js'))
  builtinsWithoutRequire(join(dir, 'index.js'))
  compileWhenRun(join(dir, 'index.js'), stats)
  writeFileSync(join(dir, 'licenses.txt'), licenses(bundledPackages(stats)))
  rmSync(stats)
}

/**
 * undici's client loads node:http2 as it loads, for HTTP/2 connections the action never makes:
 * its connectors offer HTTP/1.1 alone (undici's `allowH2` is off), so no server can choose HTTP/2.
 * Node's HTTP/2 takes 5–10 ms of the start, so the bundle hands undici what a Node built without
 * HTTP/2 gives it, `{ constants: {} }`, which undici's client-h2.js falls back to itself.
 */
function leaveOutHttp2(file) {
  const load = 'module.exports = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:http2");'
  const parts = readFileSync(file, 'utf8').split(load)
  if (parts.length !== 2) {
    fail(`${file} does not load node:http2 in one place as expected: see leaveOutHttp2.`)
  }
  writeFileSync(file, parts.join('module.exports = { constants: {} }; // node:http2, never used'))
}

/**
 * webpack loads each of Node's modules through a `require` of its own, made with `createRequire`,
 * which resolves the bundle's path and the node_modules folders above it every time: some twenty
 * times as the action starts, enough for V8 to compile Node's path code in the background.
 * `process.getBuiltinModule` (Node 20.16) hands over the same modules without resolving anything;
 * for one this Node lacks (undici asks for node:sqlite to learn whether it is there) it gives
 * undefined where `require` throws, so the bundle throws as `require` does.
 */
function builtinsWithoutRequire(file) {
  const load = /__WEBPACK_EXTERNAL_createRequire\(import\.meta\.url\)\(("node:[a-z0-9_/]+")\)/g
  const imported = 'import { createRequire as __WEBPACK_EXTERNAL_createRequire } from "module";\n'
  const builtin =
    'const __nodeBuiltin = id => process.getBuiltinModule(id) ?? ' +
    "(() => { throw Object.assign(new Error(`No such built-in module: ${id}`), { code: 'ERR_UNKNOWN_BUILTIN_MODULE' }) })();\n"
  const [before, after, ...more] = readFileSync(file, 'utf8').split(imported)
  const text = after && builtin + after.replace(load, '__nodeBuiltin($1)')
  // The import comes first, or after the command line's `#!` line.
  if (more.length > 0 || !/^(#!.*\n)?$/.test(before) || text?.includes('createRequire') !== false) {
    fail(
      `${file} loads a module other than Node's through createRequire: see builtinsWithoutRequire.`
    )
  }
  writeFileSync(file, before + text)
}

/**
 * webpack wraps each module's function in parentheses, which makes V8 compile it as the file
 * loads. The modules only NEVER_RUN leads to (fetch's body, its FormData parser, webidl…, about
 * 230 KB) lose that wrapping: V8 then only skims them, and compiles one if it ever runs. About
 * 5 ms of the start; the code is all there still.
 */
function compileWhenRun(file, statsFile) {
  const text = readFileSync(file, 'utf8')
  const { modules } = JSON.parse(readFileSync(statsFile, 'utf8'))
  const stop = new Set(
    NEVER_RUN.map(path => {
      const module = modules.find(({ name = '' }) => name.endsWith(`node_modules/${path}`))
      if (!module) fail(`${file} has no ${path}: see NEVER_RUN in scripts/bundle.mjs.`)
      return String(module.id)
    })
  )
  // Each module's text, from its `/***/ id:` line to the next one; every one opens with `((`.
  const starts = [...text.matchAll(/^\/\*\*\*\/ (\d+):\n\/\*\*\*\/ (..)/gm)]
  const odd = starts.find(match => match[2] !== '((')
  if (odd) fail(`${file}: module ${odd[1]} does not open with "((": see compileWhenRun.`)
  const bodies = new Map(
    starts.map((match, i) => [match[1], text.slice(match.index, starts[i + 1]?.index)])
  )
  const entry = /^\/\*{6}\/ var __webpack_exports__ = __nccwpck_require__\((\d+)\);$/m.exec(text)
  if (!entry) fail(`${file} names no entry module: see compileWhenRun in scripts/bundle.mjs.`)
  const reached = new Set()
  const next = [entry[1]]
  while (next.length > 0) {
    const id = next.pop()
    if (reached.has(id) || stop.has(id)) continue
    reached.add(id)
    for (const [, dependency] of (bodies.get(id) ?? '').matchAll(/__nccwpck_require__\((\d+)\)/g)) {
      next.push(dependency)
    }
  }
  let out = text
  for (const [id, body] of bodies) {
    if (reached.has(id)) continue
    // `/***/ })`, and a comma unless it is the last.
    const end = '\n/***/ })'
    const close = body.lastIndexOf(end)
    if (close < 0) fail(`${file}: module ${id} does not end as expected: see compileWhenRun.`)
    const open = body.replace('\n/***/ ((', '\n/***/ (')
    const unwrapped = `${open.slice(0, close - 1)}\n/***/ }${body.slice(close + end.length)}`
    out = out.replace(body, () => unwrapped)
  }
  writeFileSync(file, out)
}

function fail(message) {
  process.stderr.write(`${message}\n`)
  process.exit(1)
}

/** The module that runs `entry`, in .build/entries/`name`/ beside the tsconfig that says ES2022. */
function throughModule(entry, name) {
  const folder = join('.build', 'entries', name)
  mkdirSync(folder, { recursive: true })
  const options = { module: 'ES2022', moduleResolution: 'Bundler' }
  const base = relative(folder, 'tsconfig.json')
  const config = { extends: base, compilerOptions: options, include: ['*.ts'] }
  writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify(config))
  writeFileSync(join(folder, 'package.json'), '{"type":"module"}')
  // The command line's `#!` line goes first, as ncc keeps an entry's own.
  const [first] = readFileSync(entry, 'utf8').split('\n', 1)
  const shebang = first.startsWith('#!') ? `${first}\n` : ''
  const module = JSON.stringify(relative(folder, entry).replace(/\.ts$/, '.js'))
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
