import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * A Node binary of the given major version: GitHub runs the action on Node 24; Forgejo's and
 * Gitea's runners run it on the job image's `node`, Node 20 in Forgejo's default image. This
 * process's node when its major version is `major`, else the npm registry's `node@<major>` package
 * (fetched once into npm's cache). NODE<major> in the environment (NODE24, NODE20) names one
 * directly.
 */
export function findNode(major: number): string {
  let path = found.get(major)
  if (!path) {
    path = process.env[`NODE${major}`] || locate(major)
    found.set(major, path)
  }
  return path
}

/** The project: two folders up, also when this file runs compiled from .build/test/support. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const PROJECT = ROOT.endsWith('.build') ? dirname(ROOT) : ROOT

/** The oldest Node the package claims to run on: package.json's `engines.node` is `>=N`. */
export function oldestNode(): number {
  const { engines } = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8'))
  const major = /^>=\s*(\d+)/.exec(engines?.node ?? '')?.[1]
  if (!major) throw new Error(`package.json's engines.node is not ">=N": ${engines?.node}`)
  return Number(major)
}

/** The Node version GitHub's runner runs `using: node24` actions on. */
export const findNode24 = (): string => findNode(24)

const found = new Map<number, string>()

function locate(major: number): string {
  if (Number(process.versions.node.split('.')[0]) === major) return process.execPath
  const spec = `node@${major}`
  if (!fetchedBefore(spec)) {
    process.stderr.write(
      `Node ${process.version} runs here, the tests need Node ${major}: fetching the npm package ${spec} once into npm's cache.\n`
    )
  }
  const path = execFileSync(
    'npm',
    ['exec', '--yes', `--package=${spec}`, '--', 'node', '-p', 'process.execPath'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }
  ).trim()
  const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim()
  if (!version.startsWith(`v${major}.`)) {
    throw new Error(`expected Node ${major}, got ${version} at ${path}`)
  }
  return path
}

/** Whether `npm exec` already holds the package in its cache: each install there names its spec. */
function fetchedBefore(spec: string): boolean {
  const npx = join(process.env.npm_config_cache || join(homedir(), '.npm'), '_npx')
  try {
    return readdirSync(npx).some(dir => {
      try {
        const manifest = JSON.parse(readFileSync(join(npx, dir, 'package.json'), 'utf8'))
        return manifest._npx?.packages?.includes(spec) === true
      } catch {
        return false
      }
    })
  } catch {
    return false
  }
}
