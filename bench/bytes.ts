/**
 * Bytes per deployment: Coolify's API has no log offset, so every read of a deployment (and the
 * list of running ones) carries the whole log so far. What the action receives on the wire and
 * decoded, against the deployment's final log, from a fake that gzips JSON when asked (as Coolify's
 * image does) and from one that does not (a proxy in front that strips it); the floor client asks
 * for no compression and reads every `poll-interval`.
 */
import type { FakeCoolify } from '../test/fake-coolify/index.js'
import { buildLogLines, runAction } from '../test/support/runner.js'
import { bigBuild, steadyBuild, type BigBuild } from './builds.js'
import {
  ACTION,
  API,
  app,
  exactlyOnce,
  fixed,
  log,
  REFERENCE,
  ROOMY_QUEUE,
  TOKEN,
  uuidOf,
  type Part,
  type Row
} from './common.js'
import { startFakeCoolify } from '../test/fake-coolify/index.js'

const MB = 1e6
/** The long build: 20,000 lines over 60 s, about 5 MB of log at the end. */
const LONG_LINES = 20_000
const LONG_MS = 60_000
/** Many applications: 30 in one step, 1,500 lines each over about 40 s. */
const APPS = 30
const APP_LINES = 1500
const APP_MS = 40_000
const KILL_AFTER_MS = 300_000

interface Traffic {
  requests: number
  wire: number
  decoded: number
  /** The final logs' size: the largest read of each deployment, which carries its whole log. */
  final: number
  once: { ok: boolean; detail: string }
}

async function measure(
  script: string,
  apps: Array<{ name: string; build: BigBuild }>,
  gzip: boolean
): Promise<Traffic> {
  const server: FakeCoolify = await startFakeCoolify({
    token: TOKEN,
    apps: apps.map(a => app(a.name, a.build)),
    gzip,
    queueLimit: ROOMY_QUEUE
  })
  try {
    const result = await runAction({
      inputs: {
        'coolify-url': server.url,
        token: TOKEN,
        'app-uuid': apps.map(a => uuidOf(a.name)).join(',')
      },
      script,
      killAfterMs: KILL_AFTER_MS
    })
    if (result.code !== 0) throw new Error(`${script} exited with ${result.code}: ${result.stderr}`)
    const largest = new Map<string, number>()
    for (const request of server.requests) {
      if (!request.path.startsWith(`${API}/deployments/`)) continue
      const size = request.decodedBytes ?? 0
      largest.set(request.path, Math.max(largest.get(request.path) ?? 0, size))
    }
    // With several deployments the action prefixes each line with its application's name.
    const printed =
      script === ACTION
        ? buildLogLines(result.stdout).map(line => line.replace(/^\S+ \| /, ''))
        : result.stdout.split('\n')
    const expected = apps.flatMap(a => a.build.visible)
    return {
      requests: server.requests.length,
      wire: server.requests.reduce((sum, r) => sum + (r.responseBytes ?? 0), 0),
      decoded: server.requests.reduce((sum, r) => sum + (r.decodedBytes ?? 0), 0),
      final: [...largest.values()].reduce((sum, size) => sum + size, 0),
      once: exactlyOnce(expected, printed)
    }
  } finally {
    await server.close()
  }
}

function rows(label: string, gzip: Traffic, plain: Traffic, floor: Traffic, target: number): Row[] {
  const ratio = (t: Traffic): number => t.wire / t.final
  return [
    {
      metric: `${label}, Coolify gzips JSON: bytes on the wire ÷ final log (decoded ÷ final log)`,
      action: `${fixed(ratio(gzip), 2)}× (${fixed(gzip.decoded / gzip.final, 1)}×)`,
      reference: `${fixed(ratio(floor), 1)}×`,
      ratio: ratio(gzip) / ratio(floor),
      target: `≤ ${target}×`,
      met: ratio(gzip) <= target
    },
    {
      metric: `${label}, nothing compressed: bytes on the wire ÷ final log`,
      action: `${fixed(ratio(plain), 2)}×`,
      reference: `${fixed(ratio(floor), 1)}×`,
      ratio: ratio(plain) / ratio(floor),
      target: label.startsWith('Long') ? '≤ 6×' : 'reported',
      met: label.startsWith('Long') ? ratio(plain) <= 6 : undefined
    },
    {
      metric: `${label}: MB on the wire with gzip / without / final logs; requests`,
      action: `${fixed(gzip.wire / MB, 1)} / ${fixed(plain.wire / MB, 1)} / ${fixed(gzip.final / MB, 2)}; ${gzip.requests}`,
      reference: `${fixed(floor.wire / MB, 1)}; ${floor.requests}`,
      target: 'reported'
    },
    {
      metric: `${label}: every visible line printed exactly once, with gzip and without`,
      action: gzip.once.ok && plain.once.ok ? 'yes' : `${gzip.once.detail}; ${plain.once.detail}`,
      reference: floor.once.detail,
      target: 'yes',
      met: gzip.once.ok && plain.once.ok
    }
  ]
}

export async function bytes(): Promise<Part> {
  const long = [{ name: 'long', build: bigBuild(LONG_LINES, LONG_MS) }]
  const many = Array.from({ length: APPS }, (_, i) => {
    const name = `app${String(i + 1).padStart(2, '0')}`
    // 1,500 lines each, ending one after another over the last third.
    const durationMs = APP_MS * (2 / 3) + (APP_MS / 3) * (i / (APPS - 1))
    const perTick = Math.ceil(APP_LINES / (durationMs / 500))
    return { name, build: steadyBuild(name, durationMs, { perTick, closingAfterMs: 800 }) }
  })
  const result: Row[] = []
  for (const [label, apps, target] of [
    [`Long build, ${fixed(LONG_LINES)} lines in ${LONG_MS / 1000} s`, long, 2],
    [`${APPS} applications, ${fixed(APP_LINES)} lines each`, many, 1.5]
  ] as const) {
    log(`bytes: ${label}`)
    const [gzip, plain, floor] = await Promise.all([
      measure(ACTION, [...apps], true),
      measure(ACTION, [...apps], false),
      measure(REFERENCE, [...apps], false)
    ])
    result.push(...rows(label, gzip, plain, floor, target))
  }
  return {
    rows: result,
    notes: [
      `- Bytes: the final log is the largest read of each deployment (it carries the whole log); the`,
      `  three clients run at once, each against a fake of its own: the action against one that gzips`,
      `  JSON when asked (level 6, as Coolify's image does) and one that never compresses, the floor`,
      `  (which asks for no compression) against the latter.`
    ]
  }
}
