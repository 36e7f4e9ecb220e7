import { run } from './cleanup.js'

await run()
