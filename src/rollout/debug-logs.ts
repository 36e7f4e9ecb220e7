import { listOf } from '../coolify/answers.js'
import type { CoolifyClient } from '../coolify/client.js'
import { describeError } from '../errors.js'
import type { Say } from '../host.js'
import type { Config } from '../config/inputs.js'
import { mask, worthMasking } from '../config/secrets.js'

/**
 * `debug-logs: true` prints Coolify's hidden entries: its job's own commands, which handle the
 * application's variables. Says once who can read them, and masks the variables' values, plain
 * and base64, where the token may read them (`read:sensitive`); payloads are redacted as printed.
 */
export async function guardDebugLogs(
  client: CoolifyClient,
  config: Config,
  signal: AbortSignal,
  say: Say
): Promise<void> {
  if (!config.debugLogs) return
  say.warn(
    "`debug-logs: true` prints Coolify's internal commands into this job's log, which everyone who can read the run can read (everyone, on a public repository). Encoded payloads are redacted and the applications' variables masked where the token can read them; nothing hidden goes to the summary, annotations or pull request comment."
  )
  for (const uuid of config.appUuids) {
    try {
      const variables = await client.listApplicationEnvs(uuid, signal)
      for (const variable of listOf(variables)) {
        const value = variable?.value
        if (typeof value !== 'string' || !worthMasking(value)) continue
        mask(value)
        mask(Buffer.from(value).toString('base64'))
      }
    } catch (error) {
      if (signal.aborted) throw error
      say.warn(`Could not read the variables of ${uuid} to mask them: ${describeError(error)}`)
    }
  }
}
