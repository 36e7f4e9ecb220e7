import { runPost } from './cleanup.js'

await runPost()
