/**
 * Serves the fake Coolify (4.x flavor) with the demo application until stopped, and writes its
 * address to the file named by the first argument: the workflow's `uses: ./` job deploys to it.
 */
import { writeFileSync } from 'node:fs'
import { startFakeCoolify } from '../test/fake-coolify/index.js'
import { DEMO_APP, DEMO_TOKEN } from './demo-app.js'

const fake = await startFakeCoolify({ token: DEMO_TOKEN, apps: [DEMO_APP] })
const file = process.argv[2]
if (file) writeFileSync(file, fake.url)
console.log(`Fake Coolify listening on ${fake.url}`)
const stop = (): void => void fake.close().then(() => process.exit(0))
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
