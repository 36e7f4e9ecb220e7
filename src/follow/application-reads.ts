import { listOf, timeOf } from '../coolify/answers.js'
import type { CoolifyClient, ReadKind } from '../coolify/client.js'
import { CoolifyError } from '../coolify/errors.js'
import type { ApplicationSummary } from '../coolify/types.js'
import type { Look } from '../health/readiness.js'
import { Batch } from './batch.js'

/**
 * The status reads the health checks ahead may still need, whatever their number: one read serves
 * every check due at its turn, and one more when Coolify had not refreshed the status yet.
 */
const STATUS_READS_HELD = 2

/** One read of an application in Coolify. */
export interface AppRead {
  app: ApplicationSummary
  /** When Coolify answered (`Date`), on its clock. */
  answeredAt?: number
}

/**
 * The applications in Coolify, for all rollouts: their names and URLs, and their status for the
 * health checks. The reads due at the same turn, whatever they are for, share one request — of
 * the application alone, or the list when several wait — so thirty applications finishing
 * together cost one request, not thirty. The read goes on under the step's signal while anyone
 * waits for it: a reader whose own time ran out stops waiting, the others do not. A status read
 * confirms that a finished deployment's application is up, which ends its rollout: it may spend
 * what the window holds back from polls, and the window holds back what the checks ahead need.
 */
export class ApplicationReads {
  readonly #batch: Batch<string, AppRead>
  /** Status reads waiting: while any does, the next read can end a rollout. */
  #confirming = 0

  constructor(
    private readonly client: CoolifyClient,
    /** Waits for the next turn among the step's reads of Coolify; `final` ones may spend more. */
    turn: (signal: AbortSignal, final: boolean) => Promise<void>,
    /** The step's lifetime: the shared reads, and the waits for their turns, are made under it. */
    private readonly signal: AbortSignal,
    /** How many applications may still be read: their health checks are under way or ahead. */
    expected: () => number = () => 1,
    /** Longest a turn waits for the others to be due too. */
    gatherMs = 0
  ) {
    client.holdBack(() => Math.min(expected(), STATUS_READS_HELD))
    this.#batch = new Batch({
      turn: signal => turn(signal, this.#confirming > 0),
      read: (uuids, signal) => this.readApps(uuids, signal),
      expected,
      gatherMs,
      left: ended
    })
  }

  /** The application as Coolify gives it, in the next turn; rejected once `signal` aborts. */
  read(appUuid: string, signal: AbortSignal): Promise<AppRead> {
    return this.#batch.wait(appUuid, this.signal, signal)
  }

  /** The application's status, with when Coolify refreshed it. */
  async status(appUuid: string, signal: AbortSignal): Promise<Look> {
    this.#confirming++
    let read: AppRead
    try {
      read = await this.read(appUuid, signal)
    } finally {
      this.#confirming--
    }
    const { app, answeredAt } = read
    return {
      status: typeof app.status === 'string' ? app.status : undefined,
      refreshedAt: timeOf(app.last_online_at),
      answeredAt,
      appUrl: typeof app.fqdn === 'string' ? (app.fqdn.split(',')[0]?.trim() ?? '') : ''
    }
  }

  /** One read for all `uuids`; an application the list lacks is not found. */
  private async readApps(
    uuids: readonly string[],
    signal: AbortSignal
  ): Promise<(uuid: string) => AppRead> {
    const kind = { final: this.#confirming > 0 }
    const { apps, date } = await readDated(this.client, uuids, signal, kind)
    return uuid => {
      const app =
        apps.find(item => item?.uuid === uuid) ?? (uuids.length === 1 ? apps[0] : undefined)
      if (!app) throw notListed(uuid)
      return { app, answeredAt: date }
    }
  }
}

/** Applications of Coolify, with the time it answered: one read for one, the list for several. */
async function readDated(
  client: CoolifyClient,
  uuids: readonly string[],
  signal: AbortSignal,
  kind: ReadKind
): Promise<{ apps: Array<ApplicationSummary | undefined>; date?: number }> {
  if (uuids.length === 1) {
    const { body, date } = await client.getApplicationDated(uuids[0], signal, kind)
    return { apps: [body], date }
  }
  const { body, date } = await client.listApplicationsDated(signal, kind)
  return { apps: listOf(body), date }
}

/** Why a reader stopped waiting: its time ran out (said as the client says it), or the run's cancel. */
function ended(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason
  if (!(reason instanceof DOMException && reason.name === 'TimeoutError')) return reason
  return new CoolifyError('GET /applications', 'Coolify did not answer in the time it had', '', {
    transient: true,
    unanswered: true,
    cutOff: true
  })
}

function notListed(uuid: string): CoolifyError {
  return new CoolifyError(
    'GET /applications',
    `application ${uuid} is not in the list Coolify gave`,
    '',
    { transient: true }
  )
}
