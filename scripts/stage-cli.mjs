// The npm package's folder: package.json, LICENSE, the command line's bundle (dist/cli/), and as
// its README the command line's page (docs/cli.md), not the action's. The release workflow
// publishes this folder; the tests pack and install it. `npm pack` in the repository itself (and
// `npx github:OWNER/coolify-deploy-follow#REF`) still gives the repository's README.
// Usage: node scripts/stage-cli.mjs FOLDER [DIST] (DIST: the bundle's folder, dist by default).
import { cpSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const [out, dist = 'dist'] = process.argv.slice(2)
if (!out) throw new Error('Usage: node scripts/stage-cli.mjs FOLDER [DIST]')
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
cpSync('package.json', join(out, 'package.json'))
cpSync('LICENSE', join(out, 'LICENSE'))
cpSync(join('docs', 'cli.md'), join(out, 'README.md'))
cpSync(join(dist, 'cli'), join(out, 'dist', 'cli'), { recursive: true })
