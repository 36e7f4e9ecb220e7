import { randomBytes } from 'node:crypto'
import type { DeploymentView } from '../deploy/deployment.js'
import type { LineKind, LogLine } from '../deploy/logs.js'
import type { LogSink } from '../deploy/watch.js'

const STYLE: Record<LineKind, [string, string]> = {
  stdout: ['', ''],
  info: ['', ''],
  stderr: ['\u001b[31m', '\u001b[0m'],
  warning: ['\u001b[33m', '\u001b[0m'],
  command: ['\u001b[36m$ ', '\u001b[0m']
}

/**
 * Writes build logs into the job's output. One deployment gets one log group around its whole
 * log; several that run at once get a group per batch, each line prefixed with the application's
 * name. Build output cannot issue workflow commands: each batch is wrapped in `stop-commands`.
 * A batch is written with a single write, however many lines it holds.
 */
export class LogPrinter implements LogSink {
  private openGroup: DeploymentView | undefined

  constructor(
    private readonly several: boolean,
    private readonly write: (text: string) => void = text => void process.stdout.write(text)
  ) {}

  /** Opens the log group of a deployment followed alone. */
  begin(deployment: DeploymentView): void {
    if (this.several || this.openGroup) return
    this.openGroup = deployment
    this.write(`::group::Build log of ${deployment.name}\n`)
  }

  end(deployment: DeploymentView): void {
    if (this.openGroup !== deployment) return
    this.openGroup = undefined
    this.write('::endgroup::\n')
  }

  lines(deployment: DeploymentView, lines: readonly LogLine[]): void {
    if (lines.length === 0) return
    const prefix = this.several ? `${deployment.name} | ` : ''
    const token = randomBytes(12).toString('hex')
    let text = this.several ? `::group::${deployment.name}\n` : ''
    text += `::stop-commands::${token}\n`
    for (const line of lines) {
      const [open, close] = STYLE[line.kind]
      text += `${prefix}${open}${line.text}${close}\n`
    }
    text += `::${token}::\n`
    if (this.several) text += '::endgroup::\n'
    this.write(text)
  }
}
