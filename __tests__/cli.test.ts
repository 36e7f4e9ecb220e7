/**
 * The command-line tool as a user gets it: the package packed with `npm pack` from the current
 * sources' bundle, installed from the tarball into an empty folder, and its bin run against the
 * fake Coolify over real HTTP, with the token in the environment as a CI job gives it.
 */
import { beforeAll, describe, expect, it } from '@jest/globals'
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FakeCoolify } from '../test/fake-coolify/index.js'
import { findNode, oldestNode } from '../test/support/node.js'
import { packCli } from '../test/support/package.js'
import { actionManifest, PROJECT } from '../test/support/runner.js'
import { FLAGS } from '../src/cli/options.js'
import {
  actionRequests,
  APP,
  build,
  chatty,
  COLLECT_GARBAGE,
  endless,
  expectNoSecrets,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  FINISHED_LOG,
  requestLines,
  TOKEN
} from '../test/support/scenarios.js'

const SHA = '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c'
/** Where the fake Coolify keeps every application. */
const PROJECT_UUID = 'p0jectfakecoolify0000001'
const ENVIRONMENT_UUID = 'e0vironmentfakecoolify01'
/* eslint-disable no-control-regex -- GitLab's section markers and colours start with ESC */
const COLOURS = /\u001b\[[0-9;]*m/g
const SECTION_START = /\u001b\[0Ksection_start:\d+:(\w+)\[collapsed=false\]\r\u001b\[0K(.*)\n/
const SECTION_END = /\u001b\[0Ksection_end:\d+:(\w+)\r\u001b\[0K\n/
/* eslint-enable no-control-regex */
const MINIMUM_NODE = oldestNode()

let bin = ''
/** The package as installed from the tarball. */
let installedAt = ''

/** Packs the package around the fresh bundle and installs the tarball, once for the file. */
beforeAll(() => {
  const tarball = packCli()
  const user = mkdtempSync(join(tmpdir(), 'coolify-cli-user-'))
  writeFileSync(join(user, 'package.json'), '{}')
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], {
    cwd: user,
    stdio: 'ignore'
  })
  const installed = JSON.parse(
    readFileSync(join(user, 'node_modules/coolify-deploy-follow/package.json'), 'utf8')
  )
  // Nothing else to install: the bundle is the whole program.
  expect(installed.dependencies ?? {}).toEqual({})
  bin = join(user, 'node_modules', '.bin', 'coolify-deploy-follow')
  installedAt = join(user, 'node_modules', 'coolify-deploy-follow')
}, 120_000)

interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

const start = fakeCoolifyPerTest(() => ({
  abilities: ['deploy', 'read', 'read:sensitive', 'write']
}))

/** Runs the installed bin on the oldest Node the package allows, as `npx` would. */
function cli(
  args: string[],
  env: Record<string, string> = {},
  signal?: { name: NodeJS.Signals; when: () => boolean },
  nodeArgs: string[] = []
): Promise<CliResult> {
  const child = spawn(findNode(MINIMUM_NODE), [...nodeArgs, bin, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      COOLIFY_TOKEN: TOKEN,
      ...env
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  if (signal) {
    const check = (): void => {
      if (child.exitCode !== null) return
      if (!signal.when()) return void setTimeout(check, 5)
      child.kill(signal.name)
    }
    check()
  }
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  return new Promise(resolve =>
    child.on('close', code => {
      clearTimeout(killer)
      resolve({ code, stdout, stderr })
    })
  )
}

const basics = (server: FakeCoolify): string[] => [
  '--url',
  server.url,
  '--app',
  APP.uuid,
  '--poll-interval',
  '100ms'
]

/** The build log's lines among what was printed, without colours: each must be there once, in order. */
function buildLog(stdout: string): string[] {
  const known = new Set(FINISHED_LOG)
  return stdout
    .split('\n')
    .map(line => line.replace(COLOURS, ''))
    .filter(line => known.has(line))
}

/** The `error:` lines, without colours: on standard error, and nowhere else. */
function errorLines(result: CliResult): string[] {
  const lines = (text: string): string[] =>
    text
      .split('\n')
      .map(line => line.replace(COLOURS, ''))
      .filter(line => line.startsWith('error: '))
  expect(lines(result.stdout)).toEqual([])
  return lines(result.stderr)
}

/** GitHub's words mean nothing here: the command line speaks of flags, variables and signals. */
const GITHUB_WORDS = /GitHub|workflow|runner|`(?!--)[a-z-]+`/

function expectClean(result: CliResult): void {
  expectNoStackTrace(result.stderr)
  expectNoSecrets(result.stdout + result.stderr, [TOKEN])
  expect(result.stdout + result.stderr).not.toMatch(GITHUB_WORDS)
}

describe('the command line', () => {
  it('deploys, prints the build log once and in order, and ends with the result', async () => {
    const server = await start()
    const folder = mkdtempSync(join(tmpdir(), 'coolify-cli-out-'))
    const json = join(folder, 'deployments.json')
    const dotenv = join(folder, 'deploy.env')
    const result = await cli([...basics(server), '--json', json, '--dotenv', dotenv])

    expect(result.code).toBe(0)
    expect(buildLog(result.stdout)).toEqual(FINISHED_LOG)
    const [deployment] = server.deployments()
    expect(result.stdout).toMatch(
      /^Result:\n {2}web {2}finished {2}\S+ {2}https:\/\/web\.example\.com$/m
    )
    const records = JSON.parse(readFileSync(json, 'utf8'))
    expect(records).toEqual([
      expect.objectContaining({
        app_uuid: APP.uuid,
        kind: 'application',
        name: 'web',
        deployment_uuid: deployment.uuid,
        deployment_url: `${server.url}/project/${PROJECT_UUID}/environment/${ENVIRONMENT_UUID}/application/${APP.uuid}/deployment/${deployment.uuid}`,
        status: 'finished',
        url: 'https://web.example.com'
      })
    ])
    expect(readFileSync(dotenv, 'utf8')).toBe(
      [
        'COOLIFY_STATUS=finished',
        `COOLIFY_DEPLOYMENT_UUID=${deployment.uuid}`,
        `COOLIFY_DEPLOYMENT_URL=${records[0].deployment_url}`,
        'COOLIFY_APP_URL=https://web.example.com',
        `COOLIFY_DURATION=${records[0].duration}`,
        'COOLIFY_ROLLED_BACK=false',
        'COOLIFY_REVIEW_APP_UUID=',
        'COOLIFY_ERROR=',
        ''
      ].join('\n')
    )
    // No workflow commands: they mean nothing outside GitHub's runner.
    expect(result.stdout).not.toMatch(/^::/m)
    expectClean(result)
  })

  it("names the GitLab project in a review app's marker, and finds it again by it", async () => {
    // Review apps run on a server of their own: a destination there, named by --review-destination.
    const own = { uuid: 'dst0review0own0000000001', name: 'reviews', serverUuid: 'srv0reviews' }
    // Git LFS off: on (Coolify's default), the template is refused.
    const template = {
      ...APP,
      columns: { 'settings.is_git_lfs_enabled': false },
      scenarios: [build('finished')]
    }
    const server = await start({ apps: [template], destinations: [own] })
    const mergeRequest = {
      GITLAB_CI: 'true',
      CI_PROJECT_PATH: 'shop/web',
      CI_MERGE_REQUEST_PROJECT_PATH: 'shop/web',
      CI_MERGE_REQUEST_SOURCE_PROJECT_PATH: 'shop/web',
      CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'feature/cart',
      CI_COMMIT_SHA: SHA
    }
    const review = [
      ...basics(server),
      '--pr',
      '7',
      '--review-app',
      '--review-domain',
      'https://mr-7.preview.example.com',
      '--review-destination',
      own.uuid
    ]
    const made = await cli(review, mergeRequest)
    expect(made.code).toBe(0)
    const marker = `Review app for pull request #7 of shop/web, template ${APP.uuid}`
    const reviewApps = () => server.apps().filter(app => app.name === `${APP.name}-pr-7`)
    expect(reviewApps().map(app => app.description)).toEqual([marker])

    const removed = await cli([...review, '--delete-preview'], mergeRequest)
    expect(removed.code).toBe(0)
    expect(reviewApps()).toEqual([])
    expect(server.apps().map(app => app.uuid)).toContain(APP.uuid)
    expectClean(removed)
  })

  it('folds the build log into GitLab sections under GitLab CI', async () => {
    const server = await start()
    const result = await cli(basics(server), { GITLAB_CI: 'true' })

    expect(result.code).toBe(0)
    const opened = SECTION_START.exec(result.stdout)
    expect(opened?.[2]).toBe('Build log of web')
    const inside = result.stdout.slice(opened!.index + opened![0].length)
    const closed = SECTION_END.exec(inside)
    expect(closed?.[1]).toBe(opened![1])
    // Inside the section, the whole log, once and in order; and nowhere else.
    expect(buildLog(inside.slice(0, closed!.index))).toEqual(FINISHED_LOG)
    expect(buildLog(result.stdout)).toEqual(FINISHED_LOG)
    expectClean(result)
  })

  it('exits 1 with the reason when the deployment fails', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [build('failed')] }] })
    const result = await cli(basics(server))

    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/^ {2}web {2}failed/m)
    expect(result.stdout).toContain('npm ERR! build script failed')
    // What the action's annotation says: the application, the status, why, and the link.
    const [deployment] = server.deployments()
    expect(errorLines(result)).toEqual([
      `error: web: deployment failed: npm ERR! build script failed — ${server.url}/project/${PROJECT_UUID}/environment/${ENVIRONMENT_UUID}/application/${APP.uuid}/deployment/${deployment.uuid}`
    ])
    expectClean(result)
  })

  it('exits 1 and cancels the deployment when --timeout passes', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [endless()] }] })
    const result = await cli([...basics(server), '--timeout', '2s'])

    expect(result.code).toBe(1)
    expect(server.deployments()[0].status).toBe('cancelled-by-user')
    expect(result.stdout).toMatch(/^ {2}web {2}timeout/m)
    expect(errorLines(result)[0]).toMatch(
      /^error: web: deployment timeout: it outlasted `--timeout`/
    )
    expectClean(result)
  })

  it('ends at --timeout on Node 20 however often garbage is collected', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [chatty()] }] })
    const result = await cli([...basics(server), '--timeout', '3s'], {}, undefined, COLLECT_GARBAGE)

    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/^ {2}web {2}timeout/m)
    expect(server.deployments()[0].status).toBe('cancelled-by-user')
    expectClean(result)
  })

  it('on SIGTERM cancels what it started and puts the pin back, then exits', async () => {
    const server = await start({ apps: [{ ...APP, coolifyJob: true, scenarios: [endless()] }] })
    // Coolify queues the deployment; its answer is lost, so the pin is still on at the signal.
    server.inject({ method: 'POST', path: '/deploy', do: 'lost' })
    const result = await cli(
      [...basics(server), '--commit', SHA],
      {},
      {
        name: 'SIGTERM',
        when: () => server.deployments().length > 0
      }
    )

    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/^Stopped by SIGTERM: cancelling \w+ \(\w+\) in Coolify$/m)
    expect(errorLines(result)).toContain('error: Stopped by SIGTERM.')
    const [deployment] = server.deployments()
    expect(deployment.commit).toBe(SHA)
    expect(deployment.status).toBe('cancelled-by-user')
    expect(server.app(APP.uuid)?.gitCommitSha).toBe('HEAD')
    expect(requestLines(actionRequests(server)).filter(line => line.endsWith('/cancel'))).toEqual([
      `POST /api/v1/deployments/${deployment.uuid}/cancel`
    ])
    expectClean(result)
  })

  it('exits 3 when Coolify refuses the token', async () => {
    const server = await start()
    const result = await cli(basics(server), { COOLIFY_TOKEN: 'not-the-token-1234' })

    expect(result.code).toBe(3)
    expect(errorLines(result)).toEqual([expect.stringMatching(/^error: .*401/)])
    expectNoSecrets(result.stdout + result.stderr, ['not-the-token-1234'])
  })
})

describe('what a later job and the log get', () => {
  it('prints the build’s last error line plain: no colours, no carriage returns', async () => {
    const failing = build('failed')
    const last = failing.steps.find(step => step.status === 'failed')!
    last.lines = [{ output: '\u001b[31mnpm ERR!\u001b[0m build\rscript failed', type: 'stderr' }]
    const server = await start({ apps: [{ ...APP, scenarios: [failing] }] })
    const result = await cli(basics(server), { FORCE_COLOR: '0' })

    expect(result.code).toBe(1)
    const [line] = result.stderr.split('\n').filter(text => text.startsWith('error: web'))
    expect(line).toMatch(/^error: web: deployment failed: npm ERR! build script failed — http/)
    // eslint-disable-next-line no-control-regex
    expect(result.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
  })

  it.each([
    ['0', false],
    ['false', false],
    ['', true],
    ['1', true],
    ['true', true]
  ])('reads FORCE_COLOR=%j as Node does: colours %s', async (value, coloured) => {
    // Not a terminal, not GitLab: only FORCE_COLOR can turn colours on.
    const result = await cli(['--url', 'https://coolify.example.com', '--timeout', 'soon'], {
      FORCE_COLOR: value,
      COOLIFY_APP: 'web'
    })
    expect(result.code).toBe(2)
    expect(result.stderr.includes('\u001b[31m')).toBe(coloured)
  })

  it('turns colours off under GitLab with FORCE_COLOR=0', async () => {
    const result = await cli(['--url', 'https://coolify.example.com', '--timeout', 'soon'], {
      GITLAB_CI: 'true',
      FORCE_COLOR: '0',
      COOLIFY_APP: 'web'
    })
    expect(result.stderr).toMatch(/^error: /m)
    expect(result.stderr).not.toContain('\u001b[')
  })

  it('prints --help whatever the variables name', async () => {
    const result = await cli(['--help'], {
      COOLIFY_CA_CERTIFICATE: '/nonexistent/ca.pem',
      COOLIFY_TOKEN_FILE: '/nonexistent/token'
    })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^Usage: /)
    expect(result.stderr).toBe('')
  })

  it('takes COOLIFY_CA_CERTIFICATE as PEM text as well as a path', async () => {
    const result = await cli(['--url', 'https://coolify.example.com', '--app', 'web'], {
      COOLIFY_CA_CERTIFICATE: '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----',
      COOLIFY_TIMEOUT: 'soon'
    })
    // The certificate is taken (as text, not as a file to read): the bad timeout is what fails.
    expect(result.code).toBe(2)
    expect(errorLines(result)).toEqual([expect.stringMatching(/`--timeout`/)])
  })

  it.each([
    ['an unknown option', ['--bogus'], {}],
    ['no token', ['--url', 'https://coolify.example.com', '--app', 'web'], { COOLIFY_TOKEN: '' }],
    [
      'a bad value',
      ['--url', 'https://coolify.example.com', '--app', 'web', '--timeout', 'soon'],
      {}
    ]
  ])('writes --json and --dotenv after %s', async (_what, args, env) => {
    const folder = mkdtempSync(join(tmpdir(), 'coolify-cli-usage-'))
    const json = join(folder, 'deployments.json')
    const dotenv = join(folder, 'deploy.env')
    const result = await cli([...args, '--json', json, '--dotenv', dotenv], env)

    expect(result.code).toBe(2)
    expect(JSON.parse(readFileSync(json, 'utf8'))).toEqual([])
    const written = readFileSync(dotenv, 'utf8')
    expect(written).toMatch(/^COOLIFY_STATUS=failed$/m)
    expect(written).toMatch(/^COOLIFY_ERROR=\S.*$/m)
    expect(readdirSync(folder).sort()).toEqual(['deploy.env', 'deployments.json'])
  })

  it('writes the application’s URL whole, whatever `--env` and `--header` values are masked', async () => {
    const server = await start()
    const folder = mkdtempSync(join(tmpdir(), 'coolify-cli-masks-'))
    const json = join(folder, 'deployments.json')
    const dotenv = join(folder, 'deploy.env')
    const result = await cli([
      ...basics(server),
      '--env',
      `APP_URL=${APP.fqdn}`,
      '--header',
      'X-Forwarded-Proto: https',
      '--json',
      json,
      '--dotenv',
      dotenv
    ])

    expect(result.code).toBe(0)
    expect(readFileSync(dotenv, 'utf8')).toMatch(new RegExp(`^COOLIFY_APP_URL=${APP.fqdn}$`, 'm'))
    expect(JSON.parse(readFileSync(json, 'utf8'))[0].url).toBe(APP.fqdn)
  })

  it('goes on when the reader of its output goes away (`| head -1`)', async () => {
    const server = await start()
    const child = spawn(findNode(MINIMUM_NODE), [bin, ...basics(server)], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', COOLIFY_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.stdout.once('data', () => child.stdout.destroy())
    const code = await new Promise(resolve => child.on('close', resolve))

    expect(code).toBe(0)
    expectNoStackTrace(stderr)
    expect(server.deployments()[0].status).toBe('finished')
  })

  it('replaces the report files whole, never writing into them', async () => {
    const server = await start()
    const folder = mkdtempSync(join(tmpdir(), 'coolify-cli-atomic-'))
    const json = join(folder, 'deployments.json')
    const dotenv = join(folder, 'deploy.env')
    writeFileSync(json, 'stale')
    writeFileSync(dotenv, 'stale')
    const before = [statSync(json).ino, statSync(dotenv).ino]
    const result = await cli([...basics(server), '--json', json, '--dotenv', dotenv])

    expect(result.code).toBe(0)
    // A reader sees the old file or the new one: the new one is another file, renamed over it.
    expect(statSync(json).ino).not.toBe(before[0])
    expect(statSync(dotenv).ino).not.toBe(before[1])
    expect(readFileSync(dotenv, 'utf8')).toMatch(/^COOLIFY_STATUS=finished$/m)
    expect(readdirSync(folder).sort()).toEqual(['deploy.env', 'deployments.json'])
  })
})

describe('a cancel', () => {
  it('exits 1, not 3, when it comes while a call is being retried', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [endless()] }] })
    server.inject({ method: 'GET', path: '/applications', do: { status: 502 }, times: 1000 })
    const result = await cli(
      ['--url', server.url, '--app', 'web', '--poll-interval', '100ms'],
      {},
      {
        name: 'SIGTERM',
        when: () =>
          server.requests.filter(request => request.path === '/api/v1/applications').length >= 2
      }
    )

    expect(result.code).toBe(1)
    expect(errorLines(result)).toEqual(['error: Stopped by SIGTERM.'])
  })

  it('writes what is known at the signal, and ends at once on a second one', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [endless()] }] })
    // Coolify does not answer the cancel: the run would wait out its grace time.
    server.inject({ method: 'POST', path: /\/cancel$/, do: { delayMs: 30_000 } })
    const folder = mkdtempSync(join(tmpdir(), 'coolify-cli-signals-'))
    const json = join(folder, 'deployments.json')
    const dotenv = join(folder, 'deploy.env')
    const child = spawn(
      findNode(MINIMUM_NODE),
      [bin, ...basics(server), '--json', json, '--dotenv', dotenv],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', COOLIFY_TOKEN: TOKEN },
        stdio: ['ignore', 'pipe', 'pipe']
      }
    )
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const closed = new Promise<number | null>(done => child.on('close', done))
    const until = async (check: () => boolean): Promise<void> => {
      while (!check()) await new Promise(done => setTimeout(done, 10))
    }
    await until(() => server.deployments()[0]?.status === 'in_progress')
    child.kill('SIGTERM')
    await until(() => server.requests.some(request => request.path.endsWith('/cancel')))
    // The files are there while the cancel is still under way.
    expect(readFileSync(dotenv, 'utf8')).toMatch(/^COOLIFY_STATUS=cancelled$/m)
    expect(JSON.parse(readFileSync(json, 'utf8'))).toEqual([
      expect.objectContaining({ deployment_uuid: server.deployments()[0].uuid })
    ])
    const second = Date.now()
    child.kill('SIGTERM')
    const code = await closed

    expect(code).toBe(1)
    expect(Date.now() - second).toBeLessThan(2000)
    expect(stdout).toMatch(/^Result:\n {2}web {2}\w+/m)
    expect(stderr).toMatch(
      /^error: Stopped by SIGTERM again: stopped at once; still running in Coolify: web \(\w+\)\.$/m
    )
    expectNoStackTrace(stderr)
  }, 30_000)

  it('cancels and reports within the 5 s a CI such as Jenkins gives before SIGKILL', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [endless()] }] })
    server.inject({ method: 'POST', path: /\/cancel$/, do: { delayMs: 30_000 } })
    const folder = mkdtempSync(join(tmpdir(), 'coolify-cli-grace-'))
    const dotenv = join(folder, 'deploy.env')
    let signalledAt = 0
    const result = await cli(
      [...basics(server), '--dotenv', dotenv],
      {},
      {
        name: 'SIGTERM',
        when: () => {
          const building = server.deployments()[0]?.status === 'in_progress'
          if (building) signalledAt = Date.now()
          return building
        }
      }
    )

    expect(result.code).toBe(1)
    expect(Date.now() - signalledAt).toBeLessThan(5000)
    expect(result.stdout).toMatch(/^Result:\n {2}web {2}/m)
    expect(readFileSync(dotenv, 'utf8')).toMatch(/^COOLIFY_STATUS=cancelled$/m)
  }, 30_000)
})

describe('--app by name', () => {
  const QUEUE = { uuid: 'svc0queue0uuid0000000003', name: 'queue', kind: 'service' as const }
  const PG = { uuid: 'db0pg0uuid00000000000004', name: 'pg', kind: 'database' as const }
  const SHOP_WEB = {
    uuid: 'web0shop0uuid00000000005',
    name: 'web',
    project: 'shop',
    environment: 'staging',
    scenarios: [build('finished')]
  }
  const WEB = { ...APP, scenarios: [build('finished')] }
  const options = (server: FakeCoolify, ...apps: string[]): string[] => [
    '--url',
    server.url,
    ...apps.flatMap(app => ['--app', app]),
    '--poll-interval',
    '100ms',
    '--health-timeout',
    '8s'
  ]
  const written = (server: FakeCoolify): string[] =>
    requestLines(actionRequests(server).filter(request => request.method !== 'GET'))

  it('deploys an application, a service and a database by name', async () => {
    const server = await start({ apps: [WEB, QUEUE, PG] })
    const result = await cli(options(server, 'web', 'queue', 'pg'))

    expect(result.code).toBe(0)
    const trigger = actionRequests(server).find(request => request.path === '/api/v1/deploy')!
    expect(trigger.query.uuid).toBe(`${APP.uuid},${QUEUE.uuid},${PG.uuid}`)
    expect(result.stdout).toMatch(
      /^Result:\n {2}web +finished.*\n {2}queue +finished.*\n {2}pg +finished/m
    )
    expectClean(result)
  })

  it('takes project/environment/name, and COOLIFY_APP with commas', async () => {
    const server = await start({ apps: [WEB, SHOP_WEB, QUEUE] })
    const result = await cli(options(server), { COOLIFY_APP: 'shop/staging/web, queue' })

    expect(result.code).toBe(0)
    const trigger = actionRequests(server).find(request => request.path === '/api/v1/deploy')!
    expect(trigger.query.uuid).toBe(`${SHOP_WEB.uuid},${QUEUE.uuid}`)
    expectClean(result)
  })

  it('exits 2 for an unknown name, naming the close ones, and deploys nothing', async () => {
    const server = await start({ apps: [WEB] })
    const result = await cli(options(server, 'wbe'))

    expect(result.code).toBe(2)
    expect(errorLines(result).join('\n')).toMatch(
      /^error: `--app` \(`COOLIFY_APP`\): no application, service or database named "wbe" is visible to this token \(close: "web"\);/m
    )
    expect(written(server)).toEqual([])
    expectClean(result)
  })

  it('exits 2 for an ambiguous name, listing each candidate, and deploys nothing', async () => {
    const server = await start({ apps: [WEB, SHOP_WEB] })
    const result = await cli(options(server, 'web'))

    expect(result.code).toBe(2)
    expect(errorLines(result).join('\n')).toContain(
      `error: \`--app\` (\`COOLIFY_APP\`): "web" names 2 resources, so nothing was deployed: My first project/production/web (${APP.uuid}), shop/staging/web (${SHOP_WEB.uuid});`
    )
    expect(written(server)).toEqual([])
    expectClean(result)
  })

  it('exits 2 for --app and --app-uuid together, asking Coolify nothing', async () => {
    const server = await start()
    const result = await cli([...options(server, 'web'), '--app-uuid', APP.uuid])

    expect(result.code).toBe(2)
    expect(errorLines(result).join('\n')).toMatch(
      /^error: Give either `--app` or `--app-uuid`, not both/m
    )
    expect(actionRequests(server)).toEqual([])
  })

  it('exits 1, deploying nothing, when SIGTERM comes while names are looked up', async () => {
    const server = await start({ apps: [WEB] })
    server.inject({ method: 'GET', path: '/applications', do: { delayMs: 3000 } })
    const result = await cli(
      options(server, 'web'),
      {},
      {
        name: 'SIGTERM',
        when: () => server.requests.some(request => request.path === '/api/v1/applications')
      }
    )

    expect(result.code).toBe(1)
    expect(errorLines(result)).toEqual(['error: Stopped by SIGTERM.'])
    expect(written(server)).toEqual([])
  })

  it('exits 3 when Coolify refuses the lookup', async () => {
    const server = await start({ apps: [WEB], abilities: ['deploy'] })
    const result = await cli(options(server, 'web'))

    expect(result.code).toBe(3)
    expect(errorLines(result).join('\n')).toMatch(/^error: GET \/applications: .*403/m)
  })

  it('deploys --app-uuid as given, without looking it up', async () => {
    const server = await start({ apps: [WEB] })
    const result = await cli([
      '--url',
      server.url,
      '--app-uuid',
      APP.uuid,
      '--poll-interval',
      '100ms'
    ])

    expect(result.code).toBe(0)
    expect(requestLines(actionRequests(server))[0]).toBe('POST /api/v1/deploy')
  })
})

describe('bad usage: one line naming the option, exit 2', () => {
  it.each([
    [['--bogus'], {}, 'coolify-deploy-follow: --bogus: no such option (--help lists them).'],
    [['--timeout'], {}, 'coolify-deploy-follow: --timeout: needs a value.'],
    [['--force=yes'], {}, 'coolify-deploy-follow: --force: takes no value.'],
    [
      ['--token', 'abc'],
      {},
      'coolify-deploy-follow: --token: the token is not taken on the command line, where the process list and the job log show it: set COOLIFY_TOKEN, or give --token-file FILE.'
    ],
    [
      ['--token-file', '/nonexistent/token'],
      {},
      'coolify-deploy-follow: --token-file: cannot read the file it names (ENOENT).'
    ],
    [
      [],
      { COOLIFY_TOKEN_FILE: '7|s3cr3t-token-in-the-wrong-place' },
      'coolify-deploy-follow: COOLIFY_TOKEN_FILE: cannot read the file it names (ENOENT).'
    ],
    [
      ['--header', 'CF-Access-Client-Secret:', 's3cr3t-header-value'],
      {},
      'coolify-deploy-follow: An argument without an option (not shown): every value follows its option, quoted when it holds spaces (--help lists them).'
    ],
    [
      ['--timeout', '-5'],
      {},
      'coolify-deploy-follow: --timeout: its value starts with "-": write --timeout=VALUE.'
    ]
  ])('%j', async (args, env, line) => {
    const result = await cli(args, env)
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(`${line}\n`)
    expect(result.stdout).toBe('')
  })

  it('writes no secret from a usage error into the dotenv file', async () => {
    const dotenv = join(mkdtempSync(join(tmpdir(), 'coolify-cli-usage-')), 'deploy.env')
    const result = await cli(['--dotenv', dotenv, '--header', 'X-Key:', 's3cr3t-header-value'], {
      COOLIFY_TOKEN_FILE: '7|s3cr3t-token-in-the-wrong-place'
    })
    expect(result.code).toBe(2)
    const written = readFileSync(dotenv, 'utf8')
    expect(written).toMatch(/^COOLIFY_ERROR=An argument without an option/m)
    expect(written + result.stderr).not.toMatch(/s3cr3t/)
  })

  it('exits 2 for an abbreviated --commit that is not the pipeline’s, in a dry run too', async () => {
    const server = await start()
    for (const extra of [['--dry-run'], []]) {
      const result = await cli([...basics(server), '--commit', 'abcdef1', ...extra], {
        CI_COMMIT_SHA: SHA
      })
      expect(result.code).toBe(2)
      expect(errorLines(result)).toEqual([
        expect.stringMatching(/^error: `--commit` \(`COOLIFY_COMMIT`\): abcdef1 is abbreviated/)
      ])
      expect(result.stderr).not.toContain('github.sha')
    }
    expect(server.deployments()).toEqual([])
  })

  it('names the option of a bad value, in the command line’s words', async () => {
    const result = await cli([
      '--url',
      'https://coolify.example.com',
      '--app',
      'web',
      '--timeout',
      'soon'
    ])
    expect(result.code).toBe(2)
    expect(errorLines(result)).toEqual([
      expect.stringMatching(/^error: `--timeout` \(`COOLIFY_TIMEOUT`\): "soon" is not a duration/)
    ])
    expectClean(result)
  })

  it('names --url and COOLIFY_URL when there is no address', async () => {
    const result = await cli(['--app', APP.uuid])
    expect(result.code).toBe(2)
    expect(errorLines(result)).toEqual([
      expect.stringMatching(
        /^error: `--url` \(`COOLIFY_URL`\) is empty: give your Coolify instance's address/
      )
    ])
    expectClean(result)
  })

  it('names the GitLab component’s inputs when the component runs it', async () => {
    const result = await cli([], { COOLIFY_COMPONENT: 'true', COOLIFY_APP: APP.uuid })
    expect(result.code).toBe(2)
    expect(errorLines(result)).toEqual([
      expect.stringMatching(
        /^error: Input `coolify-url` is empty: give your Coolify instance's address/
      )
    ])
    expectNoStackTrace(result.stderr)
  })

  it('says that nothing answers at the address in its own words', async () => {
    const server = await start()
    await server.close()
    const result = await cli([...basics(server), '--timeout', '2s'])
    expect(result.code).toBe(3)
    expect(errorLines(result)).toEqual([
      expect.stringMatching(
        /refused the connection.*Check `--url` and that Coolify is up and reachable from this machine$/
      )
    ])
    expectClean(result)
  })

  it('says where the token comes from when there is none', async () => {
    const result = await cli(['--url', 'https://coolify.example.com', '--app', 'web'], {
      COOLIFY_TOKEN: ''
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      "coolify-deploy-follow: no API token: set COOLIFY_TOKEN (from your CI's secret variables), or give --token-file FILE.\n"
    )
  })

  it('reads the token from --token-file and options from COOLIFY_* variables', async () => {
    const server = await start()
    const folder = mkdtempSync(join(tmpdir(), 'coolify-cli-token-'))
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, 'token'), `${TOKEN}\n`)
    const result = await cli(['--token-file', join(folder, 'token')], {
      COOLIFY_TOKEN: '',
      COOLIFY_URL: server.url,
      COOLIFY_APP: APP.uuid,
      COOLIFY_POLL_INTERVAL: '100ms'
    })
    expect(result.code).toBe(0)
    expectClean(result)
  })

  it('takes the token’s secret part alone, as Coolify does (GitLab cannot mask `ID|SECRET`)', async () => {
    const secret = 'Jq8rWcT4mN2xLp6vZb0yHs3kFd7gAe1uRo5iEw9t'
    const server = await start({ token: `17|${secret}` })
    const result = await cli([...basics(server), '--no-logs'], { COOLIFY_TOKEN: secret })
    expect(result.code).toBe(0)
    expectNoSecrets(result.stdout + result.stderr, [secret])
    // Another token's id with this secret is refused, as Sanctum refuses it.
    const wrong = await cli([...basics(server), '--no-logs'], { COOLIFY_TOKEN: `18|${secret}` })
    expect(wrong.code).toBe(3)
  })

  it('reads the token from the file COOLIFY_TOKEN_FILE names (GitLab’s file variables)', async () => {
    const server = await start({ token: `17|${TOKEN}` })
    const folder = mkdtempSync(join(tmpdir(), 'coolify-cli-token-file-'))
    writeFileSync(join(folder, 'COOLIFY_TOKEN_FILE'), `17|${TOKEN}\n`)
    const result = await cli([...basics(server), '--no-logs'], {
      COOLIFY_TOKEN: '',
      COOLIFY_TOKEN_FILE: join(folder, 'COOLIFY_TOKEN_FILE')
    })
    expect(result.code).toBe(0)
    expectClean(result)
  })

  it('has the command line’s page as its README, not the action’s', () => {
    expect(readFileSync(join(installedAt, 'README.md'), 'utf8')).toBe(
      readFileSync(join(PROJECT, 'docs', 'cli.md'), 'utf8')
    )
  })

  it('runs from the repository at a commit, as `npx github:OWNER/coolify-deploy-follow#REF` does', () => {
    // npm installs a git dependency without building it when it has none of these scripts: then
    // the commit's dist/cli/ (`files`) is what runs.
    const manifest = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8'))
    const building = ['prepare', 'prepack', 'preinstall', 'install', 'postinstall', 'build']
    expect(Object.keys(manifest.scripts).filter(name => building.includes(name))).toEqual([])
    expect(manifest.files).toEqual(['dist/cli/'])
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: PROJECT, encoding: 'utf8' })
    const printed = execFileSync(
      'npm',
      [
        'exec',
        '--yes',
        `--package=git+file://${PROJECT}#${commit.trim()}`,
        '--',
        'coolify-deploy-follow',
        '--version'
      ],
      {
        cwd: mkdtempSync(join(tmpdir(), 'coolify-cli-git-')),
        encoding: 'utf8',
        env: {
          ...process.env,
          npm_config_cache: mkdtempSync(join(tmpdir(), 'coolify-cli-npm-cache-')),
          npm_config_offline: 'true'
        }
      }
    )
    expect(printed).toBe(`coolify-deploy-follow ${manifest.version}\n`)
  }, 60_000)

  it('prints the installed package’s version', async () => {
    const { version } = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8'))
    const result = await cli(['--version'])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(`coolify-deploy-follow ${version}\n`)
  })

  it('has a flag for each input of the action but GitHub’s own and the token, all in --help', async () => {
    const inputs = [...actionManifest().inputs.keys()]
    const github = ['github-token', 'environment', 'comment', 'token']
    expect(FLAGS.map(flag => flag.input).sort()).toEqual(
      inputs.filter(input => !github.includes(input)).sort()
    )
    const result = await cli(['--help'])
    expect(result.code).toBe(0)
    for (const flag of [...FLAGS.map(flag => flag.name), 'token-file', 'json', 'dotenv']) {
      expect(result.stdout).toMatch(new RegExp(`^ {2}--${flag}\\b`, 'm'))
    }
  })
})

describe('an input refused once Coolify was read', () => {
  const changes = (server: FakeCoolify): string[] =>
    requestLines(actionRequests(server).filter(request => request.method !== 'GET'))

  it('exits 2 for --image-tag on an application built from git, changing nothing', async () => {
    const server = await start()
    const result = await cli([...basics(server), '--image-tag', 'v2'])

    expect(result.code).toBe(2)
    expect(errorLines(result).join('\n')).toMatch(
      /^error: `--image-tag` \(`COOLIFY_IMAGE_TAG`\) is for Docker-image applications; web is built from git/m
    )
    expect(changes(server)).toEqual([])
    expectClean(result)
  })

  it('exits 2 for --no-trigger when no commit is named, changing nothing', async () => {
    const server = await start()
    const result = await cli([...basics(server), '--no-trigger'])

    expect(result.code).toBe(2)
    expect(errorLines(result).join('\n')).toMatch(/follows the commit .* give `--commit`/m)
    expect(changes(server)).toEqual([])
    expectClean(result)
  })
})

describe('--dry-run', () => {
  const changes = (server: FakeCoolify): string[] =>
    requestLines(actionRequests(server).filter(request => request.method !== 'GET'))

  it('exits 0, says what it would do, and changes nothing', async () => {
    const server = await start()
    const folder = mkdtempSync(join(tmpdir(), 'coolify-cli-dry-'))
    const dotenv = join(folder, 'deploy.env')
    const result = await cli([...basics(server), '--dry-run', '--env', 'A=1', '--dotenv', dotenv])

    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`${APP.uuid}: would set environment variables A`)
    expect(result.stdout).toContain(`Would deploy ${APP.uuid} on ${server.url}`)
    expect(readFileSync(dotenv, 'utf8')).toContain('COOLIFY_STATUS=dry-run\n')
    expect(changes(server)).toEqual([])
    expect(server.deployments()).toEqual([])
    expectClean(result)
  })

  it('is asked for by COOLIFY_DRY_RUN, and exits 3 when the token lacks an ability', async () => {
    const server = await start({ abilities: ['read'] })
    const result = await cli(basics(server), { COOLIFY_DRY_RUN: 'true' })

    expect(result.code).toBe(3)
    expect(errorLines(result).join('\n')).toMatch(
      /^error: GET \/deploy: Coolify answered 403 "Missing required permissions: deploy"\. The token lacks the `deploy` ability/m
    )
    expect(changes(server)).toEqual([])
    expect(server.deployments()).toEqual([])
  })

  it('exits 2 for an input that does not fit the application', async () => {
    const server = await start()
    const result = await cli([...basics(server), '--dry-run', '--image-tag', 'v2'])

    expect(result.code).toBe(2)
    expect(changes(server)).toEqual([])
    expectClean(result)
  })
})
