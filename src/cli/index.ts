#!/usr/bin/env node
import { main } from './main.js'

process.exitCode = await main(
  process.argv.slice(2),
  process.env,
  text => void process.stdout.write(text),
  text => void process.stderr.write(text)
)
