/**
 * `npm run demo`: the action as a user meets it, on this machine. Starts the fake Coolify (4.x
 * flavor) and runs the bundled action (dist/index.js) against it twice, the way GitHub's runner
 * does (Node 24, INPUT_* variables, output and summary files): a push whose build succeeds, then
 * one whose build fails. Each run shows as a job log, then its outputs and its job summary as text.
 * Last, the command-line tool (dist/cli/index.js) deploys once more, as in any other CI.
 * Exits 0 when every run ends as it should: the first step green, the second red, the command 0.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { startFakeCoolify } from '../test/fake-coolify/index.js'
import { ACTION_DIR, runAction } from '../test/support/runner.js'
import { DEMO_APP, DEMO_APP_UUID, DEMO_FAILED_BUILD, DEMO_TOKEN } from './demo-app.js'
import { summaryToText } from './summary-text.js'

const RUNS = [
  { title: 'A push whose build succeeds', code: 0, status: 'finished' },
  { title: 'The next push: its build fails', code: 1, status: 'failed' }
]

const good = DEMO_APP.scenarios ?? []
const fake = await startFakeCoolify({
  token: DEMO_TOKEN,
  apps: [{ ...DEMO_APP, scenarios: [...good, DEMO_FAILED_BUILD, ...good] }]
})
console.log(
  `Fake Coolify 4.x listening on ${fake.url}; running dist/index.js on Node 24 as GitHub would.`
)

const surprises: string[] = []
for (const [index, run] of RUNS.entries()) {
  console.log(`\n${'═'.repeat(3)} ${index + 1}. ${run.title} ${'═'.repeat(60)}\n`)
  const result = await runAction({
    live: true,
    inputs: {
      'coolify-url': fake.url,
      token: DEMO_TOKEN,
      'app-uuid': DEMO_APP_UUID,
      'poll-interval': '1s'
    }
  })
  console.log(
    `\nThe step exited with ${result.code}: it shows ${result.code === 0 ? 'green' : 'red'} in the run. Its outputs:`
  )
  for (const [name, value] of Object.entries(result.outputs)) console.log(`  ${name} = ${value}`)
  console.log(`\nThe job summary, on the run's Summary page:\n`)
  for (const line of summaryToText(result.summary)) console.log(`  ${line}`)
  if (result.code !== run.code || result.outputs.status !== run.status) {
    surprises.push(
      `run ${index + 1} should exit ${run.code} with status ${run.status}, it exited ${result.code} with status ${result.outputs.status ?? '(none)'}`
    )
  }
}

const cli = ['--url', fake.url, '--app', DEMO_APP_UUID, '--poll-interval', '1s']
console.log(
  `\n${'═'.repeat(3)} 3. The same deploy from the command line, as in any other CI ${'═'.repeat(27)}\n`
)
console.log(`$ COOLIFY_TOKEN=… coolify-deploy-follow ${cli.join(' ')}\n`)
// Spawned, not run synchronously: the fake Coolify answers from this process.
const command = spawn(process.execPath, [join(ACTION_DIR, 'dist', 'cli', 'index.js'), ...cli], {
  env: { PATH: process.env.PATH ?? '', COOLIFY_TOKEN: DEMO_TOKEN },
  stdio: 'inherit'
})
const status = await new Promise<number | null>(done => command.on('close', done))
console.log(`\nThe command exited with ${status}.`)
if (status !== 0) surprises.push(`the command line should exit 0, it exited ${status}`)
await fake.close()

console.log(`\nCoolify received ${fake.requests.length} requests in all:`)
for (const [request, count] of countRequests()) console.log(`  ${count} × ${request}`)
if (surprises.length > 0) {
  for (const surprise of surprises) console.error(`The demo went wrong: ${surprise}.`)
  process.exitCode = 1
}

/** Requests by method and path, uuids left out: what the action asks Coolify, and how often. */
function countRequests(): Map<string, number> {
  const counts = new Map<string, number>()
  for (const { method, path } of fake.requests) {
    const key = `${method} ${path.replace(/\/[a-z0-9]{20,}(?=\/|$)/g, '/{uuid}')}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return counts
}
