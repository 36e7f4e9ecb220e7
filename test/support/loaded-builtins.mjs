// Preloaded with `node --import`: at exit, writes the names of Node's public modules the process
// loaded (node:http2, node:zlib…) as JSON to the file LOADED_BUILTINS_FILE names.
import { writeFileSync } from 'node:fs'

process.on('exit', () => {
  const names = process.moduleLoadList
    .filter(entry => entry.startsWith('NativeModule ') && !entry.includes('internal/'))
    .map(entry => entry.slice('NativeModule '.length))
  writeFileSync(process.env.LOADED_BUILTINS_FILE, JSON.stringify(names))
})
