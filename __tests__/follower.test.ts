/**
 * The Follower against a client that answers from rows the test writes, on the real clock: what it
 * reads and prints as a deployment ends.
 */
import { describe, expect, it } from '@jest/globals'
import type { CoolifyClient } from '../src/coolify/client.js'
import { Follower } from '../src/follow/follower.js'
import { Deployment } from '../src/model/deployment.js'
import type { LogLine } from '../src/model/logs.js'

const entry = (output: string, order: number) => ({
  command: null,
  output,
  type: 'stdout',
  timestamp: '',
  hidden: false,
  batch: 1,
  order
})
/** Coolify's timestamps: whole seconds. */
const toSecond = (ms: number): number => Math.floor(ms / 1000) * 1000
const laravel = (ms: number): string => new Date(toSecond(ms)).toISOString().replace(/Z$/, '000Z')

describe('following a log to its end', () => {
  it('reads the closing entry when an undated read came after an early dated one', async () => {
    const started = Date.now()
    // `a` turns finished at 4.2 s and writes its closing entry a second later, as a server whose
    // job writes lines after the final status; `b` runs on.
    const rowOf = (uuid: string) => {
      const at = Date.now() - started
      if (uuid === 'b') {
        return {
          deployment_uuid: 'b',
          status: 'in_progress',
          logs: JSON.stringify([entry('b', 1)])
        }
      }
      const logs = [entry('Starting', 1)]
      if (at >= 4200) logs.push(entry('Deployment finished', 2))
      if (at >= 5200) logs.push(entry('Gracefully shutting down build container: a', 3))
      const writtenAt = started + (at >= 5200 ? 5200 : at >= 4200 ? 4200 : 0)
      const status = at >= 4200 ? 'finished' : 'in_progress'
      return {
        deployment_uuid: 'a',
        status,
        logs: JSON.stringify(logs),
        updated_at: laravel(writtenAt)
      }
    }
    // Read alone, a deployment's read is dated; several due together, with no list of the running
    // ones on this server, each is read by uuid without it.
    const client = {
      readBudget: () => undefined,
      holdBack: () => {},
      getDeploymentDated: async (uuid: string) => ({
        body: rowOf(uuid),
        date: toSecond(Date.now())
      }),
      getDeployment: async (uuid: string) => rowOf(uuid),
      runningDeployments: async () => undefined
    } as unknown as CoolifyClient
    const printed: string[] = []
    const sink = {
      begin: () => {},
      lines: (_deployment: unknown, lines: readonly LogLine[]) =>
        printed.push(...lines.map(line => line.text)),
      end: () => {}
    }
    const say = { note: () => {}, warn: () => {}, debug: () => {} }
    const follower = new Follower(client, {
      instanceUrl: 'http://coolify.test',
      pollIntervalMs: 1000,
      logs: true,
      showHidden: false,
      sink,
      say
    })
    const a = new Deployment('appA', 'a', 'a', started)
    const b = new Deployment('appB', 'b', 'b', started)
    const stop = new AbortController()
    const followingA = follower.follow(a, { at: started }, stop.signal)
    await new Promise(resolve => setTimeout(resolve, 1000))
    const followingB = follower.follow(b, { at: started }, stop.signal)
    await followingA
    stop.abort()
    await followingB

    expect(a.status).toBe('finished')
    expect(printed).toContain('Gracefully shutting down build container: a')
  }, 15_000)
})
