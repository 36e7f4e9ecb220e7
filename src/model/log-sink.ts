import type { DeploymentView } from './deployment.js'
import type { LogLine } from './logs.js'

/** Where build log lines go: the job's output, in the action; the follower writes, a reporter prints. */
export interface LogSink {
  /** A deployment is followed from now on. */
  begin(deployment: DeploymentView): void
  lines(deployment: DeploymentView, lines: readonly LogLine[]): void
  /** No more lines will come for it. */
  end(deployment: DeploymentView): void
}
