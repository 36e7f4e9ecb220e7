/** The application the demo and the workflow's self-test deploy: a Node app's build as Coolify logs it. */
import type { FakeApp, LogLine, Scenario, Step } from '../test/fake-coolify/index.js'

export const DEMO_TOKEN = 'demo-token'
export const DEMO_APP_UUID = 'k4sws0c8wg4oc0k0gkgg08kk'

/** A Node app's build as Coolify logs it, spread over about eight seconds. */
function nodeAppBuild(): Step[] {
  const docker = (output: string, type: LogLine['type'] = 'stdout'): LogLine => ({
    output,
    type,
    command: 'docker build --network host -t web:abc1234 .'
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
          hidden: true
        },
        'Preparing container with helper image: ghcr.io/coollabsio/coolify-helper:latest.'
      ]
    },
    {
      at: 1600,
      lines: [{ output: 'Importing octo/web:main (commit sha abc1234) to /artifacts/abc.' }]
    },
    {
      at: 2400,
      lines: [
        docker('#1 [internal] load build definition from Dockerfile'),
        docker('#2 [1/5] FROM docker.io/library/node:24-alpine')
      ]
    },
    {
      at: 3200,
      lines: [docker('#3 [2/5] COPY package*.json ./'), docker('#4 [3/5] RUN npm ci')]
    },
    {
      at: 4000,
      lines: [
        docker('npm warn deprecated inflight@1.0.6: This module is not supported', 'stderr'),
        docker('added 412 packages in 6s')
      ]
    },
    {
      at: 4800,
      lines: [
        docker('#5 [4/5] RUN npm run build'),
        docker('vite v7.1.0 building for production...'),
        docker('✓ 214 modules transformed.')
      ]
    },
    {
      at: 5600,
      lines: [docker('#6 exporting to image'), { output: 'Building docker image completed.' }]
    },
    {
      at: 6400,
      lines: [{ output: 'Rolling update started.' }, { output: 'New container started.' }]
    },
    { at: 7200, status: 'finished', lines: [{ output: 'Rolling update completed.' }] },
    { at: 7600, lines: [{ output: 'Gracefully shutting down build container: abc' }] }
  ]
}

export const DEMO_APP: FakeApp = {
  uuid: DEMO_APP_UUID,
  name: 'web',
  fqdn: 'https://web.example.com',
  scenarios: [{ commit: 'abc1234', steps: nodeAppBuild() }]
}

/** The next commit's build, which breaks on a type error: Coolify ends it `failed`. */
export const DEMO_FAILED_BUILD: Scenario = {
  commit: 'def5678',
  steps: [
    { at: 0, status: 'queued' },
    {
      at: 600,
      status: 'in_progress',
      lines: [
        'Starting deployment of octo/web:main to localhost.',
        { output: 'Importing octo/web:main (commit sha def5678) to /artifacts/def.' }
      ]
    },
    {
      at: 1400,
      lines: [
        failing('#1 [internal] load build definition from Dockerfile'),
        failing('#4 [3/5] RUN npm ci'),
        failing('added 412 packages in 6s')
      ]
    },
    {
      at: 2400,
      lines: [
        failing('#5 [4/5] RUN npm run build'),
        failing(
          "src/cart.ts(42,7): error TS2322: Type 'string' is not assignable to type 'number'.",
          'stderr'
        ),
        failing(
          'ERROR: process "/bin/sh -c npm run build" did not complete successfully: exit code: 2',
          'stderr'
        )
      ]
    },
    {
      at: 3000,
      status: 'failed',
      lines: [{ output: 'Deployment failed. The running version of web stays up.' }]
    },
    { at: 3400, lines: [{ output: 'Gracefully shutting down build container: def' }] }
  ]
}

function failing(output: string, type: LogLine['type'] = 'stdout'): LogLine {
  return { output, type, command: 'docker build --network host -t web:def5678 .' }
}
