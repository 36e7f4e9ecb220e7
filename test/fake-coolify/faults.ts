/** Injected network and proxy failures: which request gets one, and how it is answered. */
import type { ServerResponse } from 'node:http'
import { gzipSync } from 'node:zlib'
import type { Reply } from './reply.js'
import type { Fault, SlowAnswer } from './types.js'

interface Armed {
  fault: Fault
  skip: number
  times: number
  /** For an outage (`forMs`): when it ends, once it has begun. */
  until?: number
}

export class Faults {
  private armed: Armed[] = []

  add(fault: Fault): void {
    this.armed.push({ fault, skip: fault.skip ?? 0, times: fault.times ?? 1 })
  }

  clear(): void {
    this.armed = []
  }

  /** The fault for this request, if any; the first armed match that has let enough through. */
  take(method: string, path: string, now = Date.now()): Fault['do'] | undefined {
    this.armed = this.armed.filter(a => a.until === undefined || now < a.until)
    for (const a of this.armed) {
      if (!matches(a.fault, method, path)) continue
      if (a.skip > 0) {
        a.skip--
        continue
      }
      if (a.fault.forMs !== undefined) {
        a.until ??= now + a.fault.forMs
        return a.fault.do
      }
      a.times--
      this.armed = this.armed.filter(x => x.times > 0)
      return a.fault.do
    }
    return undefined
  }
}

function matches(fault: Fault, method: string, path: string): boolean {
  if (fault.method && fault.method.toUpperCase() !== method) return false
  if (fault.path === undefined) return true
  if (typeof fault.path === 'string') return fault.path === path
  fault.path.lastIndex = 0 // a /g pattern would otherwise remember where it stopped
  return fault.path.test(path)
}

/** Name recorded on the request. */
export function faultName(action: Fault['do']): string {
  if (typeof action === 'string') return action
  return 'delayMs' in action ? `delay ${action.delayMs}ms` : `status ${action.status}`
}

/** A canned answer for a status fault: JSON unless the body is already a string. */
export function statusReply(action: Exclude<Fault['do'], string | SlowAnswer>): Reply {
  const text = typeof action.body === 'string'
  return {
    status: action.status,
    headers: {
      'Content-Type': text ? 'text/plain; charset=utf-8' : 'application/json',
      ...action.headers
    },
    body: text
      ? (action.body as string)
      : action.body === undefined
        ? ''
        : JSON.stringify(action.body)
  }
}

/** Headers announcing the whole body, half of it, then the connection drops. */
export function writeTruncated(res: ServerResponse, reply: Reply): void {
  const body = Buffer.from(reply.body)
  res.writeHead(reply.status, { ...reply.headers, 'Content-Length': String(body.length) })
  res.flushHeaders() // also when half the body is nothing
  res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy())
}

/** The whole answer, announced as gzip, whose compressed bytes past the header are spoilt. */
export function writeGarbled(res: ServerResponse, reply: Reply): void {
  const gzipped = gzipSync(reply.body)
  const body = Buffer.concat([gzipped.subarray(0, 10), Buffer.alloc(gzipped.length - 10, 0xff)])
  res.writeHead(reply.status, {
    ...reply.headers,
    'Content-Encoding': 'gzip',
    'Content-Length': String(body.length)
  })
  res.end(body)
}
