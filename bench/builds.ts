/** The benchmark's builds, as Coolify 4.x logs them: a long one that grows big, and steady short ones. */
import type { LogLine, Scenario, Step } from '../test/fake-coolify/index.js'

export interface BigBuild {
  scenario: Scenario
  /** Every visible line, once each: what a client must print. */
  visible: string[]
  /** Entries in the log at the end, hidden ones included. */
  entries: number
}

const BUILD = 'docker build -t web:4f1c2e9 /artifacts/app'
const PACKAGES = ['esbuild', 'sharp', 'vite', 'typescript', 'react-dom', 'postcss', 'rollup']

/** The log entries of a build with `lines` visible lines: npm and docker output, some hidden. */
export function bigLogLines(lines: number): { entries: LogLine[]; visible: string[] } {
  const entries: LogLine[] = []
  const visible: string[] = []
  for (let i = 0; visible.length < lines; i++) {
    if (i % 10 === 9) {
      // The job's own hidden lines: the build's output is one command's, never interrupted.
      entries.push({
        output: `{"Id":"sha256:${(i * 2654435761).toString(16).padStart(12, '0')}","Size":${i * 977}}`,
        hidden: true
      })
      continue
    }
    // Docker writes several lines in one entry now and then.
    const count = Math.min(1 + (i % 3), lines - visible.length)
    const output: string[] = []
    for (let j = 0; j < count; j++) {
      const n = visible.length
      const name = PACKAGES[n % PACKAGES.length]
      output.push(`#${n} ${(n % 97) / 10}s npm info run ${name}@1.${n % 40}.0 postinstall ok`)
      visible.push(output[j])
    }
    entries.push({
      output: output.join('\n'),
      command: BUILD,
      type: i % 50 === 7 ? 'stderr' : 'stdout'
    })
  }
  return { entries, visible }
}

/**
 * A deployment that writes `lines` visible lines evenly over `durationMs`, a chunk every
 * `everyMs`, and ends `finished` with its last chunk; Coolify's closing entry follows 0.8 s later,
 * as real Coolify writes it.
 */
export function bigBuild(lines: number, durationMs: number, everyMs = 250): BigBuild {
  const { entries, visible } = bigLogLines(lines)
  const chunks = Math.max(1, Math.floor(durationMs / everyMs))
  const steps: Step[] = [
    { at: 0, status: 'queued' },
    { at: 50, status: 'in_progress' }
  ]
  for (let c = 0; c < chunks; c++) {
    const from = Math.floor((c * entries.length) / chunks)
    const to = Math.floor(((c + 1) * entries.length) / chunks)
    const last = c === chunks - 1
    steps.push({
      at: last ? durationMs : (c + 1) * everyMs,
      ...(last ? { status: 'finished' as const } : {}),
      lines: entries.slice(from, to)
    })
  }
  steps.push({ at: durationMs + 800, lines: [closingLine('web')] })
  visible.push(closingLine('web'))
  return { scenario: { commit: '4f1c2e9', steps }, visible, entries: entries.length + 1 }
}

/**
 * The entry Coolify's job writes last, after the final status. The uuid is a stand-in: the fake
 * makes up the deployment's own when it is queued.
 */
export function closingLine(name: string): string {
  return `Gracefully shutting down build container: ${`${name}deployment`.padEnd(24, '0')}`
}

/**
 * A build of `name` that writes `perTick` lines every `everyMs` and ends `finished` at `durationMs`,
 * with its last line in the same read as the final status. With `closingAfterMs`, Coolify's
 * closing entry follows that long after the final status, as real Coolify writes it; without it,
 * nothing follows (an older server).
 */
export function steadyBuild(
  name: string,
  durationMs: number,
  {
    everyMs = 500,
    perTick = 5,
    closingAfterMs
  }: { everyMs?: number; perTick?: number; closingAfterMs?: number } = {}
): BigBuild {
  const visible: string[] = []
  const steps: Step[] = [
    { at: 0, status: 'queued' },
    { at: 50, status: 'in_progress', lines: [`Starting deployment of ${name}.`] }
  ]
  visible.push(`Starting deployment of ${name}.`)
  for (let at = everyMs; at < durationMs; at += everyMs) {
    const lines = Array.from({ length: perTick }, (_, i) => `${name} ${at}ms line ${i + 1}`)
    visible.push(...lines)
    steps.push({ at, lines: lines.map(output => ({ output, command: BUILD })) })
  }
  steps.push({ at: durationMs, status: 'finished', lines: [`${name} is live.`] })
  visible.push(`${name} is live.`)
  if (closingAfterMs !== undefined) {
    steps.push({
      at: durationMs + closingAfterMs,
      lines: [closingLine(name)]
    })
    visible.push(closingLine(name))
  }
  return { scenario: { commit: `${name}-4f1c2e9`, steps }, visible, entries: visible.length }
}
