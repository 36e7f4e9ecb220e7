import type { Scenario } from '../fake-coolify/index.js'

const CLOSING = 'Gracefully shutting down build container'

export interface TimedBuild {
  scenario: Scenario
  /** The build log lines a reader must see, in order. */
  visible: string[]
}

/**
 * A build of `name` that ends with `outcome` after `durationMs`, writing `lines` numbered lines on
 * the way (the job's own lines, as addLogEntry writes them), a line after the end, and 0.4 s later
 * Coolify's closing entry (ApplicationDeploymentJob.php 410), unless `closing` is false.
 */
export function timedBuild(
  name: string,
  {
    durationMs,
    outcome = 'finished',
    lines = 4,
    closing = true
  }: { durationMs: number; outcome?: 'finished' | 'failed'; lines?: number; closing?: boolean }
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
      { at: durationMs + 30, lines: [{ output: `${name} cleaned up` }] },
      ...(closing ? [{ at: durationMs + 430, lines: [{ output: CLOSING }] }] : [])
    ]
  }
  return {
    scenario,
    visible: [...visible, last, `${name} cleaned up`, ...(closing ? [CLOSING] : [])]
  }
}
