import type { LogFormat } from '../host.js'
import { host } from '../host.js'
import type { DeploymentView } from '../model/deployment.js'
import type { LogSink } from '../model/log-sink.js'
import type { LineKind, LogLine } from '../model/logs.js'

const STYLE: Record<LineKind, [string, string]> = {
  stdout: ['', ''],
  info: ['', ''],
  stderr: ['\u001b[31m', '\u001b[0m'],
  warning: ['\u001b[33m', '\u001b[0m'],
  command: ['\u001b[36m', '\u001b[0m']
}

/** The runner ends a line at `\n`, `\r` or `\r\n`, wherever it stands in a log entry. */
const LINE_BREAK = /\r\n|\r|\n/

/**
 * Writes build logs into the job's output. One deployment gets one log group around its whole
 * log; several that run at once get a group per batch, each line prefixed with the application's
 * name. Build output is printed verbatim, in the host's way (it cannot issue commands). A batch is
 * written with a single write, however many lines it holds.
 */
export class LogPrinter implements LogSink {
  private openGroup: DeploymentView | undefined

  constructor(
    private readonly several: boolean,
    private readonly format: LogFormat = host().log
  ) {}

  /** Opens the log group of a deployment followed alone. */
  begin(deployment: DeploymentView): void {
    if (this.several || this.openGroup) return
    this.openGroup = deployment
    this.format.write(
      this.format.startGroup(`Build log of ${this.format.oneLine(deployment.name)}`)
    )
  }

  end(deployment: DeploymentView): void {
    if (this.openGroup !== deployment) return
    this.openGroup = undefined
    this.format.write(this.format.endGroup())
  }

  lines(deployment: DeploymentView, lines: readonly LogLine[]): void {
    if (lines.length === 0) return
    const name = this.format.oneLine(deployment.name)
    const prefix = this.several ? `${name} | ` : ''
    const text = this.format.verbatim(styled(lines, prefix))
    this.format.write(
      this.several ? this.format.startGroup(name) + text + this.format.endGroup() : text
    )
  }
}

/**
 * Each line the host will show, with the prefix and style of its kind. Runs for every line of a
 * log, in a function of its own with indexed loops and plain concatenation: the code V8 optimizes
 * for it stays small (iterators, destructuring and callbacks cost a big log tens of ms of that).
 */
function styled(lines: readonly LogLine[], prefix: string): string[] {
  const printed: string[] = []
  for (let i = 0; i < lines.length; i++) {
    const { kind, text } = lines[i]
    const style = STYLE[kind]
    const marker = kind === 'command' ? '$ ' : ''
    if (!LINE_BREAK.test(text)) {
      printed.push(prefix + style[0] + marker + text + style[1])
      continue
    }
    const parts = text.split(LINE_BREAK)
    for (let k = 0; k < parts.length; k++) {
      printed.push(prefix + style[0] + (k === 0 ? marker : '') + parts[k] + style[1])
    }
  }
  return printed
}

/**
 * The runtime log of an application that did not come up, in a log group of its own, as verbatim
 * as build output (the application wrote it, not the deploy).
 */
export function printRuntimeLog(deployment: DeploymentView, format: LogFormat = host().log): void {
  const lines =
    deployment.runtimeLog.length === 0
      ? ['Coolify had no log for it: it gives one only while the container runs.']
      : deployment.runtimeLog.flatMap(line => line.split(LINE_BREAK))
  format.write(
    format.startGroup(`Runtime log of ${format.oneLine(deployment.name)}`) +
      format.verbatim(lines) +
      format.endGroup()
  )
}
