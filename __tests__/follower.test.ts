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
      runningDeploymentsDated: async () => ({ body: undefined })
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

/**
 * A deployment as Coolify 4.3.11's job writes it after `at` ms of `script`: each entry from its
 * time on, the status, and `finished_at` (whole seconds) from `finishedAt` on, when the row has
 * the column at all. With `dated`, `updated_at` too: the last of those writes, or of `touches`,
 * writes of the row alone (a remote command's `current_process_id`).
 */
function jobRows(
  script: {
    endsAt: number
    status: 'finished' | 'failed' | 'cancelled-by-user'
    entries: Array<[number, string]>
    finishedAt?: number
    dated?: boolean
    touches?: number[]
    /** The job took the row then, unseen: queued before `endsAt`, its worker written from then. */
    takenAt?: number
  },
  withColumn = true
) {
  const started = Date.now()
  return () => {
    const at = Date.now() - started
    const due = script.entries.filter(([from]) => at >= from)
    const written = script.finishedAt !== undefined && at >= script.finishedAt
    const writes = [
      ...due.map(([from]) => from),
      ...(at >= script.endsAt ? [script.endsAt] : []),
      ...(written ? [script.finishedAt!] : []),
      ...(script.touches ?? []).filter(touch => at >= touch)
    ]
    return {
      deployment_uuid: 'd',
      application_name: 'web',
      status:
        at >= script.endsAt
          ? script.status
          : script.takenAt !== undefined
            ? 'queued'
            : 'in_progress',
      horizon_job_worker: at >= (script.takenAt ?? 0) ? 'coolify' : null,
      logs: JSON.stringify(due.map(([, text], i) => entry(text, i))),
      ...(withColumn
        ? { finished_at: written ? laravel(started + script.finishedAt!) : null }
        : {}),
      ...(script.dated ? { updated_at: laravel(started + Math.max(0, ...writes)) } : {})
    }
  }
}

/**
 * Follows deployment `d` read from `row` to its end: what it printed, noted and warned. `printing`
 * is called with each line as it is printed.
 */
async function followAlone(
  row: () => Record<string, unknown>,
  timeoutMs = 20_000,
  printing: (text: string) => void = () => {},
  version: string | Promise<string> = '4.3.11',
  /** The application's detail as GET /applications/{uuid} answers; `described`: read before. */
  app: { detail?: Record<string, unknown>; described?: boolean } = {}
) {
  const asked: string[] = []
  const detail = { uuid: 'app', name: 'web', ...app.detail }
  const client = {
    readBudget: () => undefined,
    holdBack: () => {},
    version: async () => {
      asked.push('version')
      return version
    },
    getApplicationDated: async () => {
      asked.push('application')
      return { body: detail, date: toSecond(Date.now()) }
    },
    getDeploymentDated: async () => ({ body: row(), date: toSecond(Date.now()) }),
    getDeployment: async () => row(),
    runningDeploymentsDated: async () => ({ body: undefined })
  } as unknown as CoolifyClient
  const printed: string[] = []
  const notes: string[] = []
  const warnings: string[] = []
  const follower = new Follower(client, {
    instanceUrl: 'http://coolify.test',
    pollIntervalMs: 500,
    logs: true,
    showHidden: false,
    sink: {
      begin: () => {},
      lines: (_deployment: unknown, lines: readonly LogLine[]) => {
        for (const { text } of lines) {
          printed.push(text)
          printing(text)
        }
      },
      end: () => {}
    },
    say: { note: text => notes.push(text), warn: text => warnings.push(text), debug: () => {} }
  })
  const deployment = new Deployment('app', 'd', 'web', Date.now())
  if (app.described) deployment.describe(detail)
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), timeoutMs)
  await follower.follow(deployment, { at: Date.now() }, deadline.signal)
  clearTimeout(timer)
  return { deployment, printed, notes, warnings, asked }
}

describe('what the job writes after the final status', () => {
  it('prints a post-deployment failure written after 4 s of silence, and warns of it', async () => {
    // post_deployment() sets FINISHED, then the command runs 4 s without a word and fails; only
    // then the finally writes finished_at and the closing entry.
    const row = jobRows({
      endsAt: 300,
      status: 'finished',
      entries: [
        [0, 'Starting deployment.'],
        [300, 'Rolling update completed.'],
        [300, '----------------------------------------'],
        [300, 'Executing post-deployment command (see debug log for output).'],
        [4300, 'Post-deployment command failed.'],
        [4300, 'Error: relation "users" already exists'],
        [4800, 'Gracefully shutting down build container: d']
      ],
      finishedAt: 4300
    })
    const { deployment, printed, notes, warnings } = await followAlone(row)
    expect(deployment.status).toBe('finished')
    expect(printed).toEqual([
      'Starting deployment.',
      'Rolling update completed.',
      '----------------------------------------',
      'Executing post-deployment command (see debug log for output).',
      'Post-deployment command failed.',
      'Error: relation "users" already exists',
      'Gracefully shutting down build container: d'
    ])
    expect(warnings).toEqual([expect.stringMatching(/^web: .*post-deployment command.*failed/)])
    expect(notes.join('\n')).not.toMatch(/could not be seen/)
  }, 20_000)

  it('prints what a failed job writes after 4 s of removing its container', async () => {
    const row = jobRows({
      endsAt: 300,
      status: 'failed',
      entries: [
        [0, 'Starting deployment.'],
        [300, 'Deployment failed: build script failed'],
        [300, 'Deployment failed. Removing the new version of your application.'],
        [4300, 'Gracefully shutting down build container: d']
      ],
      finishedAt: 4300
    })
    const { deployment, printed, notes } = await followAlone(row)
    expect(deployment.status).toBe('failed')
    expect(printed).toContain('Gracefully shutting down build container: d')
    expect(notes.join('\n')).not.toMatch(/could not be seen/)
  }, 20_000)

  it('ends a short while after the status on a server without finished_at, and says so', async () => {
    const row = jobRows(
      {
        endsAt: 300,
        status: 'finished',
        entries: [
          [0, 'Starting deployment.'],
          [300, 'Rolling update completed.'],
          [6000, 'Gracefully shutting down build container: d']
        ]
      },
      false
    )
    const began = Date.now()
    const { deployment, printed, notes } = await followAlone(row)
    expect(deployment.status).toBe('finished')
    expect(Date.now() - began).toBeLessThan(4000)
    expect(printed).not.toContain('Gracefully shutting down build container: d')
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([
      expect.stringMatching(/^web: the end of Coolify's deployment job could not be seen/)
    ])
  }, 20_000)

  it('reads the closing entry that came while the runner stalled after the final answer', async () => {
    // The final status at 0.3 s, its closing entry 1.2 s later. The runner stalls for 2.5 s as it
    // prints the final answer's lines: a dated answer showed the log quiet for less than a second,
    // and the time the runner lost is no quiet it saw.
    const row = jobRows({
      endsAt: 300,
      status: 'finished',
      entries: [
        [0, 'Starting deployment.'],
        [300, 'Rolling update completed.'],
        [1500, 'Gracefully shutting down build container: d']
      ],
      finishedAt: 300,
      dated: true
    })
    const stall = (text: string): void => {
      if (text !== 'Rolling update completed.') return
      const until = Date.now() + 2500
      while (Date.now() < until);
    }
    const { deployment, printed, notes } = await followAlone(row, 20_000, stall)
    expect(deployment.status).toBe('finished')
    expect(printed).toEqual([
      'Starting deployment.',
      'Rolling update completed.',
      'Gracefully shutting down build container: d'
    ])
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([])
  }, 20_000)

  it('reads the closing entry that follows finished_at after a silent post-deployment command', async () => {
    // The final status at 0.3 s; the post-deployment command then runs 3 s without a line, the
    // finally writes finished_at at 3.3 s and the closing entry a second later.
    const row = jobRows({
      endsAt: 300,
      status: 'finished',
      entries: [
        [0, 'Starting deployment.'],
        [300, 'Executing post-deployment command (see debug log for output).'],
        [4300, 'Gracefully shutting down build container: d']
      ],
      finishedAt: 3300
    })
    const { deployment, printed, notes } = await followAlone(row)
    expect(deployment.status).toBe('finished')
    expect(printed).toEqual([
      'Starting deployment.',
      'Executing post-deployment command (see debug log for output).',
      'Gracefully shutting down build container: d'
    ])
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([])
  }, 20_000)

  it('reads the closing entry 3 s after finished_at, the configuration written meanwhile', async () => {
    const row = jobRows({
      endsAt: 300,
      status: 'finished',
      entries: [
        [0, 'Starting deployment.'],
        [300, 'Rolling update completed.'],
        [3300, 'Gracefully shutting down build container: d']
      ],
      finishedAt: 300,
      dated: true
    })
    const { printed, asked } = await followAlone(row)
    expect(printed).toContain('Gracefully shutting down build container: d')
    expect(asked).toEqual(['version'])
  }, 20_000)

  it('ends quietly after finished_at on a server from before the closing entry, once it said its version', async () => {
    // Before 4.0.0-beta.407 the finally wrote finished_at but no closing entry.
    const row = jobRows({
      endsAt: 300,
      status: 'finished',
      entries: [
        [0, 'Starting deployment.'],
        [300, 'Rolling update completed.']
      ],
      finishedAt: 300,
      dated: true
    })
    const began = Date.now()
    const { deployment, notes, asked } = await followAlone(row, 20_000, () => {}, '4.0.0-beta.405')
    expect(deployment.status).toBe('finished')
    expect(Date.now() - began).toBeLessThan(5000)
    expect(asked).toEqual(['version'])
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([])
  }, 20_000)

  it('reads a late closing entry when Coolify does not say its version', async () => {
    // The question is left unanswered: the reads go on 3 s later, taking the entry as coming.
    const row = jobRows({
      endsAt: 300,
      status: 'finished',
      entries: [
        [0, 'Starting deployment.'],
        [300, 'Rolling update completed.'],
        [6300, 'Gracefully shutting down build container: d']
      ],
      finishedAt: 300,
      dated: true
    })
    const never = new Promise<string>(() => {})
    const { deployment, printed, asked } = await followAlone(row, 20_000, () => {}, never)
    expect(deployment.status).toBe('finished')
    expect(printed).toContain('Gracefully shutting down build container: d')
    expect(asked).toEqual(['version'])
  }, 20_000)

  it('waits for a late closing entry until the row was still 45 s: one comes after 50 s of writes, one never', async () => {
    // Side by side, as both take that long. In the first, finished_at at 0.3 s, then the
    // configuration's commands write no entry but each moves updated_at as it starts, every 5 s
    // for 45 s, and the closing entry comes 5 s after the last. In the second, the job was killed
    // in its finally, after finished_at, on a server that writes closing entries.
    const touches = Array.from({ length: 9 }, (_, i) => 5300 + i * 5000)
    const writing = jobRows({
      endsAt: 300,
      status: 'finished',
      entries: [
        [0, 'Starting deployment.'],
        [300, 'Rolling update completed.'],
        [50_300, 'Gracefully shutting down build container: d']
      ],
      finishedAt: 300,
      touches,
      dated: true
    })
    const killed = jobRows({
      endsAt: 300,
      status: 'finished',
      entries: [
        [0, 'Starting deployment.'],
        [300, 'Rolling update completed.']
      ],
      finishedAt: 300,
      dated: true
    })
    const began = Date.now()
    const [written, never] = await Promise.all([
      followAlone(writing, 70_000),
      followAlone(killed, 70_000).then(result => ({ ...result, tookMs: Date.now() - began }))
    ])

    expect(written.deployment.status).toBe('finished')
    expect(written.printed).toEqual([
      'Starting deployment.',
      'Rolling update completed.',
      'Gracefully shutting down build container: d'
    ])
    expect(written.notes.filter(note => /could not be seen/.test(note))).toEqual([])

    expect(never.deployment.status).toBe('finished')
    expect(never.tookMs).toBeGreaterThanOrEqual(45_000)
    expect(never.tookMs).toBeLessThan(49_000)
    expect(never.asked).toEqual(['version'])
    expect(never.notes.filter(note => /could not be seen/.test(note))).toEqual([
      expect.stringMatching(
        /^web: the end of Coolify's deployment job could not be seen \(no closing entry\)/
      )
    ])
  }, 70_000)

  it('prints what a job cancelled in Coolify writes once it notices, seconds later', async () => {
    // Cancelled at 1 s while the job waited between two commands; it notices at its next one, 3 s
    // later, and runs its finally.
    const row = jobRows({
      endsAt: 1000,
      status: 'cancelled-by-user',
      entries: [
        [0, 'Starting deployment.'],
        [1000, 'Deployment cancelled by user via API.'],
        [1000, 'Deployment container stopped.'],
        [4000, 'Deployment cancelled by user, stopping execution.'],
        [4000, 'Warning: Failed to write deployment configurations: Deployment cancelled by user'],
        [4000, 'Gracefully shutting down build container: d'],
        [4000, 'Error stopping container d: Deployment cancelled by user']
      ],
      finishedAt: 4000,
      dated: true
    })
    const { deployment, printed, notes } = await followAlone(row)
    expect(deployment.status).toBe('cancelled')
    expect(printed).toEqual([
      'Starting deployment.',
      'Deployment cancelled by user via API.',
      'Deployment container stopped.',
      'Deployment cancelled by user, stopping execution.',
      'Warning: Failed to write deployment configurations: Deployment cancelled by user',
      'Gracefully shutting down build container: d',
      'Error stopping container d: Deployment cancelled by user'
    ])
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([])
  }, 20_000)

  it('reads on after a cancel that came before any read showed the job at work', async () => {
    // Queued at the first reads; the job takes the row at 0.9 s (its worker written with
    // in_progress), the cancel comes at 1 s, and the job notices at its next remote command, 3 s
    // later (ApplicationDeploymentJob.php 309-312; DeployController.php 281-289).
    const row = jobRows({
      endsAt: 1000,
      takenAt: 900,
      status: 'cancelled-by-user',
      entries: [
        [1000, 'Deployment cancelled by user via API.'],
        [1000, 'Deployment container not yet started. Will be cancelled when job checks status.'],
        [4000, 'Deployment cancelled by user, stopping execution.'],
        [4000, 'Gracefully shutting down build container: d']
      ],
      finishedAt: 4000,
      dated: true
    })
    const { deployment, printed, notes } = await followAlone(row)
    expect(deployment.status).toBe('cancelled')
    expect(printed.slice(-2)).toEqual([
      'Deployment cancelled by user, stopping execution.',
      'Gracefully shutting down build container: d'
    ])
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([])
  }, 20_000)

  it('reads the line a cancelled job writes right after its closing entry', async () => {
    // Written just after the read that brought the closing entry, as the job fails to stop its
    // build container (ApplicationDeploymentJob.php 411, 3971-3988).
    const base = jobRows({
      endsAt: 1000,
      status: 'cancelled-by-user',
      entries: [
        [0, 'Starting deployment.'],
        [1000, 'Deployment cancelled by user via API.'],
        [1300, 'Gracefully shutting down build container: d']
      ],
      finishedAt: 1300,
      dated: true
    })
    let closingRead = false
    const row = () => {
      const answer = base()
      const logs = JSON.parse(answer.logs) as Array<ReturnType<typeof entry>>
      if (closingRead) {
        logs.push(entry('Error stopping container d: Deployment cancelled by user', logs.length))
      }
      closingRead ||= logs.some(line => line.output.startsWith('Gracefully'))
      return { ...answer, logs: JSON.stringify(logs) }
    }
    const { printed, notes } = await followAlone(row)
    expect(printed.slice(-2)).toEqual([
      'Gracefully shutting down build container: d',
      'Error stopping container d: Deployment cancelled by user'
    ])
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([])
  }, 20_000)

  it('ends a failed row long quiet without finished_at: its job failed outside the finally', async () => {
    // "Server is not functional." fails the job before its try (ApplicationDeploymentJob.php
    // 313-317), and a restart of Coolify fails every running row (Init.php 94-100): no finally.
    const failedAt = Date.now() - 120_000
    const row = () => ({
      deployment_uuid: 'd',
      application_name: 'web',
      status: 'failed',
      logs: JSON.stringify([entry('Server is not functional.', 0)]),
      finished_at: null,
      updated_at: laravel(failedAt)
    })
    const began = Date.now()
    const { deployment, notes } = await followAlone(row, 15_000)
    expect(deployment.status).toBe('failed')
    expect(Date.now() - began).toBeLessThan(5000)
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([
      expect.stringMatching(/^web: .*could not be seen.*no `finished_at`/)
    ])
  }, 20_000)

  /**
   * A rollout whose new container was unhealthy: `failed`, then the stop of that container, given
   * the application's stop grace period, has kept the row still for 90 s when the first read comes
   * (its app ignores SIGTERM); a second later the job removes it and runs its finally
   * (ApplicationDeploymentJob.php 3971-3984, 4042-4047, 389-411).
   */
  function stoppingForLong(
    lines: Array<string | { output: string; command: string }> = [
      'New container is not healthy, rolling back to the old container.'
    ],
    status = 'failed'
  ) {
    const failedAt = Date.now() - 90_000
    const removedAt = Date.now() + 1000
    return () => {
      const removed = Date.now() >= removedAt
      return {
        deployment_uuid: 'd',
        application_name: 'web',
        status,
        horizon_job_worker: 'coolify',
        logs: JSON.stringify(
          [
            ...lines,
            ...(removed
              ? ['Rolling update completed.', 'Gracefully shutting down build container: d']
              : [])
          ].map((line, i) =>
            typeof line === 'string' ? entry(line, i) : { ...entry(line.output, i), ...line }
          )
        ),
        finished_at: removed ? laravel(removedAt) : null,
        updated_at: laravel(removed ? removedAt : failedAt)
      }
    }
  }

  it.each([
    ['in the record read before', true, undefined],
    ['read once the row was long still', false, undefined],
    [
      'cancelled through the API meanwhile',
      false,
      ['Removing old containers.', 'Deployment cancelled by user via API.']
    ],
    // DeploymentNavbar.php 119-121, CancelDeployment.php 75-82, CleanupPreviewDeployment.php 112.
    [
      'cancelled in the UI meanwhile',
      false,
      [
        'Removing old containers.',
        { output: 'Deployment cancelled by user.', command: 'docker rm -f d' }
      ]
    ],
    [
      'cancelled through MCP meanwhile',
      false,
      [
        'Removing old containers.',
        'Deployment cancelled by user via MCP.',
        'Deployment container stopped.'
      ]
    ],
    [
      'cancelled as its pull request closed',
      false,
      ['Removing old containers.', 'Deployment cancelled: Pull request closed.']
    ]
  ])(
    'waits out the stop of a container given a grace period over a minute, %s',
    async (_, described, lines) => {
      const detail = { settings: { stop_grace_period: 120 } }
      const { deployment, printed, notes, asked } = await followAlone(
        stoppingForLong(lines, lines ? 'cancelled-by-user' : 'failed'),
        15_000,
        undefined,
        undefined,
        { detail, described }
      )
      expect(deployment.status).toBe(lines ? 'cancelled' : 'failed')
      expect(printed.slice(-2)).toEqual([
        'Rolling update completed.',
        'Gracefully shutting down build container: d'
      ])
      expect(notes.filter(note => /could not be seen/.test(note))).toEqual([])
      expect(asked.filter(what => what === 'application')).toHaveLength(described ? 0 : 1)
    },
    20_000
  )

  it.each([
    ['unset (30 s)', null],
    ['out of bounds (30 s)', 7200],
    ['not shown', undefined]
  ])(
    'ends a failed row still for longer than a stop could take, the grace period %s',
    async (_, grace) => {
      const detail = grace === undefined ? {} : { settings: { stop_grace_period: grace } }
      const began = Date.now()
      const { notes } = await followAlone(stoppingForLong(), 15_000, undefined, undefined, {
        detail
      })
      expect(Date.now() - began).toBeLessThan(1000)
      expect(notes.filter(note => /could not be seen/.test(note))).toEqual([
        expect.stringMatching(/^web: .*could not be seen.*no `finished_at`/)
      ])
    },
    20_000
  )

  it('reads on while a failed job removes its new container, killed 70 s on', async () => {
    // `timeout -k 10s 60s docker rm -f`: a removal that ignores SIGTERM is killed 10 s later
    // (docker.php 267-272; ApplicationDeploymentJob.php 4993-5000).
    const row = stoppingForLong([
      'Deployment failed. Removing the new version of your application.'
    ])
    // Still for 68 s by Coolify's clock until the job goes on, a second later.
    const removing = () => {
      const answer = row()
      return answer.finished_at ? answer : { ...answer, updated_at: laravel(Date.now() - 68_000) }
    }
    const { printed, notes } = await followAlone(removing, 15_000)
    expect(printed.slice(-2)).toEqual([
      'Rolling update completed.',
      'Gracefully shutting down build container: d'
    ])
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([])
  }, 20_000)

  it('reads on through a silent post-deployment command after a failed rollout', async () => {
    // The rollout failed and the old container stayed; the job goes on to its post-deployment
    // command, which is hidden and silent until it ends, for up to Coolify's command timeout
    // (ApplicationDeploymentJob.php 526-557, 4822-4866; config/constants.php 80).
    const quietSince = Date.now() - 66_000
    const endsAt = Date.now() + 1000
    const row = () => {
      const ended = Date.now() >= endsAt
      return {
        deployment_uuid: 'd',
        application_name: 'web',
        status: 'failed',
        horizon_job_worker: 'coolify',
        logs: JSON.stringify(
          [
            'New container is not healthy, rolling back to the old container.',
            'Rolling update completed.',
            '----------------------------------------',
            'Executing post-deployment command (see debug log for output).',
            ...(ended
              ? [
                  'Post-deployment command failed.',
                  'relation "users" already exists',
                  'Gracefully shutting down build container: d'
                ]
              : [])
          ].map(entry)
        ),
        finished_at: ended ? laravel(endsAt) : null,
        updated_at: laravel(ended ? endsAt : quietSince)
      }
    }
    const { printed, notes, warnings } = await followAlone(row, 15_000)
    expect(printed.slice(-3)).toEqual([
      'Post-deployment command failed.',
      'relation "users" already exists',
      'Gracefully shutting down build container: d'
    ])
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([])
    expect(warnings).toEqual([expect.stringMatching(/^web: .*post-deployment command.*failed/)])
  }, 20_000)

  it('ends a failed row long still after any other line, whatever the grace period, unread', async () => {
    const detail = { settings: { stop_grace_period: 120 } }
    const began = Date.now()
    const { notes, asked } = await followAlone(
      stoppingForLong(['Deployment failed: Server is not functional.']),
      15_000,
      undefined,
      undefined,
      { detail }
    )
    expect(Date.now() - began).toBeLessThan(1000)
    expect(asked).not.toContain('application')
    expect(notes.filter(note => /could not be seen/.test(note))).toHaveLength(1)
  }, 20_000)

  it('waits for finished_at no longer than its deadline, and says the end was not seen', async () => {
    // A job killed before its finally wrote anything: finished_at stays null for good.
    const row = jobRows({
      endsAt: 300,
      status: 'finished',
      entries: [
        [0, 'Starting deployment.'],
        [300, 'Rolling update completed.']
      ]
    })
    const began = Date.now()
    const { deployment, notes } = await followAlone(row, 3000)
    expect(deployment.status).toBe('finished')
    expect(Date.now() - began).toBeLessThan(4000)
    expect(notes.filter(note => /could not be seen/.test(note))).toEqual([
      expect.stringMatching(/^web: .*could not be seen.*no `finished_at`/)
    ])
  }, 20_000)
})
