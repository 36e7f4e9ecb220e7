/**
 * `npm run demo`: the action's main job, end to end, on this machine. Starts the fake Coolify
 * (4.x flavor) and runs the bundled action (dist/index.js) against it the way GitHub's runner
 * does: Node 24, INPUT_* variables, output and summary files. Its output is shown as a job log.
 */
import { startFakeCoolify } from '../test/fake-coolify/index.js'
import { runAction } from '../test/support/runner.js'
import { DEMO_APP, DEMO_APP_UUID, DEMO_TOKEN } from './demo-app.js'

const fake = await startFakeCoolify({ token: DEMO_TOKEN, apps: [DEMO_APP] })

console.log(
  `Fake Coolify 4.x listening on ${fake.url}; running dist/index.js on Node 24 as GitHub would.\n`
)
const result = await runAction({
  live: true,
  inputs: {
    'coolify-url': fake.url,
    token: DEMO_TOKEN,
    'app-uuid': DEMO_APP_UUID,
    'poll-interval': '1s'
  }
})
await fake.close()

console.log(`\nThe step exited with ${result.code}. Its outputs:`)
for (const [name, value] of Object.entries(result.outputs)) console.log(`  ${name} = ${value}`)
console.log(`\nCoolify received ${fake.requests.length} requests:`)
for (const request of fake.requests.slice(0, 4)) console.log(`  ${request.method} ${request.path}`)
if (fake.requests.length > 4) console.log(`  … and ${fake.requests.length - 4} more`)
process.exitCode = result.code ?? 1
