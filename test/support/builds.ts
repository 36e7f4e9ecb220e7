import type { Scenario } from '../fake-coolify/index.js'

export interface TimedBuild {
  scenario: Scenario
  /** The build log lines a reader must see, in order. */
  visible: string[]
}

/**
 * A build of `name` that ends with `outcome` after `durationMs`, writing `lines` numbered lines on
 * the way (the job's own lines, as addLogEntry writes them) and a closing line after the end.
 */
export function timedBuild(
  name: string,
  {
    durationMs,
    outcome = 'finished',
    lines = 4
  }: { durationMs: number; outcome?: 'finished' | 'failed'; lines?: number }
): TimedBuild {
  const visible = Array.from({ length: lines }, (_, i) => `${name} step ${i + 1}/${lines}`)
  const last = outcome === 'finished' ? `${name} is live` : `${name} failed to build`
  const scenario: Scenario = {
    commit: `${name}-commit`,
    steps: [
      { at: 0, status: 'queued' },
      { at: 20, status: 'in_progress' },
      ...visible.map((output, i) => ({
        at: Math.round(((i + 1) * durationMs) / (lines + 1)),
        lines: [{ output }]
      })),
      {
        at: durationMs,
        status: outcome,
        lines: [
          {
            output: last,
            type: outcome === 'failed' ? ('stderr' as const) : ('stdout' as const)
          }
        ]
      },
      { at: durationMs + 30, lines: [{ output: `${name} cleaned up` }] }
    ]
  }
  return { scenario, visible: [...visible, last, `${name} cleaned up`] }
}
