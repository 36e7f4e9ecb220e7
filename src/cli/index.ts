#!/usr/bin/env node
import { main } from './main.js'

// A reader that went away (`| head -1`) ends nothing: the deploy goes on, and what it would have
// read is dropped, rather than an EPIPE crashing the run after the trigger.
const open = { stdout: true, stderr: true }
for (const name of ['stdout', 'stderr'] as const) {
  process[name].on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    open[name] = false
  })
}

process.exitCode = await main(
  process.argv.slice(2),
  process.env,
  text => void (open.stdout && process.stdout.write(text)),
  text => void (open.stderr && process.stderr.write(text))
)
