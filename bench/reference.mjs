// The benchmark's floor: the least a client can do to deploy on Coolify and show the build log.
// It reads the same INPUT_* variables as the action, triggers the deployments, then reads each one
// every poll interval, parses the answer and its log, prints the visible entries it has not
// printed yet, reads once more after the final status (Coolify writes lines after it), and exits
// when all have ended: 0 when all finished. Nothing else: no retries, no rate-limit handling (a
// read that fails or is not 200 is skipped until the next one), no sorting.
import { Buffer } from 'node:buffer'
import http from 'node:http'
import https from 'node:https'
import { setTimeout as sleep } from 'node:timers/promises'

const input = name => (process.env[`INPUT_${name.toUpperCase()}`] ?? '').trim()

const api = `${input('coolify-url')
  .replace(/\/+$/, '')
  .replace(/\/api\/v1$/, '')}/api/v1`
const token = input('token')
const uuids = input('app-uuid')
  .split(/[\s,]+/)
  .filter(Boolean)
const intervalMs = parseInterval(input('poll-interval') || '3s')

/** `90` (seconds), `500ms`, `3s`. */
function parseInterval(text) {
  const match = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(text)
  if (!match) throw new Error(`poll-interval: ${text}`)
  return Number(match[1]) * (match[2] === 'ms' ? 1 : 1000)
}

const agent = api.startsWith('https:')
  ? new https.Agent({ keepAlive: true })
  : new http.Agent({ keepAlive: true })

/** One request; resolves with the status and the body as text. */
function send(method, path) {
  return new Promise((resolve, reject) => {
    const request = (api.startsWith('https:') ? https : http).request(
      `${api}${path}`,
      {
        method,
        agent,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' }
      },
      response => {
        const chunks = []
        response.on('data', chunk => chunks.push(chunk))
        response.on('end', () =>
          resolve({ status: response.statusCode, text: Buffer.concat(chunks).toString('utf8') })
        )
        response.on('error', reject)
      }
    )
    request.on('error', reject)
    request.end()
  })
}

const TERMINAL = ['finished', 'failed', 'cancelled', 'cancelled-by-user']

async function follow(uuid) {
  let consumed = 0
  /** One read: prints the new visible entries, returns the status (undefined when it failed). */
  async function read() {
    // A read that fails (a keep-alive connection the server just closed) is skipped, too.
    const { status, text } = await send('GET', `/deployments/${encodeURIComponent(uuid)}`).catch(
      () => ({ status: 0, text: '' })
    )
    if (status !== 200) return undefined
    const deployment = JSON.parse(text)
    const logs = typeof deployment.logs === 'string' ? deployment.logs : ''
    if (logs.startsWith('[')) {
      const entries = JSON.parse(logs)
      let out = ''
      for (let i = consumed; i < entries.length; i++) {
        if (!entries[i].hidden) out += `${entries[i].output}\n`
      }
      consumed = entries.length
      if (out) process.stdout.write(out)
    }
    return deployment.status
  }
  for (;;) {
    const status = await read()
    if (TERMINAL.includes(status)) {
      // Coolify writes lines after the final status: even the least correct client reads once more.
      await read()
      return status
    }
    await sleep(intervalMs)
  }
}

const query = `uuid=${encodeURIComponent(uuids.join(','))}`
const trigger = await send('POST', `/deploy?${query}`)
if (trigger.status !== 200) {
  console.error(`deploy: ${trigger.status}`)
  process.exit(1)
}
const started = JSON.parse(trigger.text)
  .deployments.map(d => d.deployment_uuid)
  .filter(Boolean)
const statuses = await Promise.all(started.map(follow))
process.exitCode = statuses.every(status => status === 'finished') ? 0 : 1
