// Preloaded with `node --import`: writes the names of Node's public modules the process loaded
// (node:http2, node:zlib…) as JSON to the file LOADED_BUILTINS_FILE names: `atStart`, those loaded
// when the first connection opens, and `atExit`.
import { writeFileSync } from 'node:fs'
import net from 'node:net'

const loaded = () =>
  process.moduleLoadList
    .filter(entry => entry.startsWith('NativeModule ') && !entry.includes('internal/'))
    .map(entry => entry.slice('NativeModule '.length))

let atStart
const connect = net.Socket.prototype.connect
net.Socket.prototype.connect = function (...args) {
  atStart ??= loaded()
  return connect.apply(this, args)
}

process.on('exit', () => {
  writeFileSync(process.env.LOADED_BUILTINS_FILE, JSON.stringify({ atStart, atExit: loaded() }))
})
