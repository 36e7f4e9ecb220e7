// Builds the two entry points GitHub runs (the main and the post step) into dist/ with ncc.
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'

rmSync('dist', { recursive: true, force: true })
const entries = [
  ['src/index.ts', 'dist'],
  ['src/post.ts', 'dist/post']
]
for (const [entry, out] of entries) {
  execFileSync(
    'npx',
    [
      'ncc',
      'build',
      entry,
      '-o',
      out,
      '--minify',
      '--license',
      'licenses.txt',
      '--target',
      'es2022',
      '--quiet'
    ],
    {
      stdio: 'inherit'
    }
  )
}
