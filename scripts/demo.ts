/**
 * `npm run demo`: the action's main job, end to end, on this machine. Starts the fake Coolify
 * (4.x flavor) and runs the bundled action (dist/index.js) against it the way GitHub's runner
 * does: Node 24, INPUT_* variables, output and summary files. Its output is shown as a job log.
 */
import { startFakeCoolify, type LogLine, type Step } from '../test/fake-coolify/index.js'
import { runAction } from '../test/support/runner.js'

const TOKEN = 'demo-token'

/** A Node app's build as Coolify logs it, spread over about eight seconds. */
function nodeAppBuild(): Step[] {
  const docker = (output: string, batch: number, type: LogLine['type'] = 'stdout'): LogLine => ({
    output,
    type,
    command: 'docker build --network host -t web:abc1234 .',
    batch
  })
  return [
    { at: 0, status: 'queued' },
    {
      at: 800,
      status: 'in_progress',
      lines: [
        'Starting deployment of octo/web:main to localhost.',
        {
          output: 'docker inspect coolify-helper',
          command: 'docker inspect coolify-helper',
          hidden: true,
          batch: 1
        },
        'Preparing container with helper image: ghcr.io/coollabsio/coolify-helper:latest.'
      ]
    },
    {
      at: 1600,
      lines: [
        { output: 'Importing octo/web:main (commit sha abc1234) to /artifacts/abc.', batch: 2 }
      ]
    },
    {
      at: 2400,
      lines: [
        docker('#1 [internal] load build definition from Dockerfile', 3),
        docker('#2 [1/5] FROM docker.io/library/node:24-alpine', 3)
      ]
    },
    {
      at: 3200,
      lines: [docker('#3 [2/5] COPY package*.json ./', 3), docker('#4 [3/5] RUN npm ci', 3)]
    },
    {
      at: 4000,
      lines: [
        docker('npm warn deprecated inflight@1.0.6: This module is not supported', 3, 'stderr'),
        docker('added 412 packages in 6s', 3)
      ]
    },
    {
      at: 4800,
      lines: [
        docker('#5 [4/5] RUN npm run build', 3),
        docker('vite v7.1.0 building for production...', 3),
        docker('✓ 214 modules transformed.', 3)
      ]
    },
    {
      at: 5600,
      lines: [
        docker('#6 exporting to image', 3),
        { output: 'Building docker image completed.', batch: 4 }
      ]
    },
    {
      at: 6400,
      lines: [
        { output: 'Rolling update started.', batch: 5 },
        { output: 'New container started.', batch: 5 }
      ]
    },
    { at: 7200, status: 'finished', lines: [{ output: 'Rolling update completed.', batch: 6 }] },
    { at: 7600, lines: [{ output: 'Gracefully shutting down build container: abc', batch: 7 }] }
  ]
}

const fake = await startFakeCoolify({
  token: TOKEN,
  apps: [
    {
      uuid: 'k4sws0c8wg4oc0k0gkgg08kk',
      name: 'web',
      fqdn: 'https://web.example.com',
      scenarios: [{ commit: 'abc1234', steps: nodeAppBuild() }]
    }
  ]
})

console.log(
  `Fake Coolify 4.x listening on ${fake.url}; running dist/index.js on Node 24 as GitHub would.\n`
)
const result = await runAction({
  live: true,
  inputs: {
    'coolify-url': fake.url,
    token: TOKEN,
    'app-uuid': 'k4sws0c8wg4oc0k0gkgg08kk',
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
