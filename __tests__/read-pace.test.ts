/**
 * Reads paced by what they carry: Coolify has no log offset, so every read of a deployment carries
 * its whole log. Through the bundle, against a fake that compresses or not: a big answer on the
 * wire spaces the next read, a small one does not.
 */
import { describe, expect, it } from '@jest/globals'
import type { FakeCoolify } from '../test/fake-coolify/index.js'
import { timedBuild } from '../test/support/builds.js'
import { buildLogLines, runAction } from '../test/support/runner.js'
import { actionRequests, APP, fakeCoolifyPerTest, inputsFor } from '../test/support/scenarios.js'

const start = fakeCoolifyPerTest()

/** A build that writes about 600 KB of log at once, then runs on for 6 s. */
function bigBuild() {
  const build = timedBuild('web', { durationMs: 6000 })
  const big = Array.from({ length: 5000 }, (_, i) => `line ${i + 1} ${'x'.repeat(110)}`)
  build.scenario.steps.splice(2, 0, { at: 30, lines: big.map(output => ({ output })) })
  return { scenario: build.scenario, visible: [...big, ...build.visible] }
}

/** The reads of the deployment while it ran: when, and what each took on the wire. */
function readsWhileRunning(server: FakeCoolify): Array<{ at: number; bytes: number }> {
  const deployment = server.deployments()[0]
  return actionRequests(server)
    .filter(
      request =>
        request.path === `/api/v1/deployments/${deployment.uuid}` &&
        request.at < deployment.finishedAt!
    )
    .map(request => ({ at: request.at, bytes: request.responseBytes ?? 0 }))
}

/** The action against a fake that compresses or not, following `bigBuild`. */
async function follow(gzip: boolean) {
  const { scenario, visible } = bigBuild()
  const server = await start({ gzip, apps: [{ ...APP, scenarios: [scenario] }] })
  const result = await runAction({
    inputs: inputsFor(server, { 'poll-interval': '500ms', 'health-timeout': '1s' })
  })
  expect(result.code).toBe(0)
  expect(buildLogLines(result.stdout)).toEqual(visible)
  const reads = readsWhileRunning(server)
  return { reads, big: reads.findIndex(read => read.bytes > 300_000) }
}

describe('reads paced by what they carry', () => {
  it('spaces the reads of a big log by its bytes on the wire, nothing compressed', async () => {
    const { reads, big } = await follow(false)

    // Each read of the big log waits for it to pass at a quarter of a MB a second: seconds.
    expect(big).toBeGreaterThanOrEqual(0)
    const gaps = reads.slice(big + 1).map((read, i) => read.at - reads[big + i].at)
    const due = reads.slice(big, -1).map(read => read.bytes / 250 - 50)
    expect(gaps.length).toBeGreaterThan(0)
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(due[i]))
    expect(reads.length).toBeLessThanOrEqual(big + 4)
  }, 30_000)

  it('reads the same log at `poll-interval` when it comes compressed', async () => {
    const { reads, big } = await follow(true)

    expect(big).toBe(-1)
    // Paced as if plain, the 600 KB would space the reads 2.4 s apart; compressed, they come at
    // `poll-interval` (500 ms) and the time each read takes, which a busy machine stretches.
    const gaps = reads
      .slice(1)
      .map((read, i) => read.at - reads[i].at)
      .sort((a, b) => a - b)
    expect(gaps.length).toBeGreaterThanOrEqual(4)
    expect(gaps[Math.floor(gaps.length / 2)]).toBeLessThan(1500)
  }, 30_000)
})
