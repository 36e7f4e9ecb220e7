import { randomBytes } from 'node:crypto'
import type { DeploymentView } from '../rollout/deployment.js'
import type { LineKind, LogLine } from '../rollout/logs.js'
import type { LogSink } from '../rollout/watch.js'

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
 * `##[` first on a line, after blanks or colour codes: the runner's log view reads that as markup
 * (`##[group]`, `##[error]`, …) even between stop-commands, which only stop `::` commands.
 */
// eslint-disable-next-line no-control-regex
const MARKUP = /^((?:\s|\u001b\[[0-9;]*m)*##)\[/
const ZERO_WIDTH_SPACE = '\u200b'

/**
 * Writes build logs into the job's output. One deployment gets one log group around its whole
 * log; several that run at once get a group per batch, each line prefixed with the application's
 * name. Build output cannot issue workflow commands: each batch is wrapped in `stop-commands`, and
 * a line that would read as log markup gets a zero-width space between `##` and `[`, so that it
 * reads the same but is printed as text. A batch is written with a single write, however many
 * lines it holds.
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
    this.write(`::group::Build log of ${oneLine(deployment.name)}\n`)
  }

  end(deployment: DeploymentView): void {
    if (this.openGroup !== deployment) return
    this.openGroup = undefined
    this.write('::endgroup::\n')
  }

  lines(deployment: DeploymentView, lines: readonly LogLine[]): void {
    if (lines.length === 0) return
    const name = oneLine(deployment.name)
    const prefix = this.several ? `${name} | ` : ''
    const token = randomBytes(12).toString('hex')
    let text = this.several ? `::group::${name}\n` : ''
    text += `::stop-commands::${token}\n`
    for (const line of lines) {
      const [open, close] = STYLE[line.kind]
      // Each line the runner will see gets the prefix and style, and is checked for markup.
      const parts = /[\r\n]/.test(line.text) ? line.text.split(LINE_BREAK) : [line.text]
      parts.forEach((part, index) => {
        const marker = line.kind === 'command' && index === 0 ? '$ ' : ''
        text += `${inert(`${prefix}${open}${marker}${part}${close}`)}\n`
      })
    }
    text += `::${token}::\n`
    if (this.several) text += '::endgroup::\n'
    this.write(text)
  }
}

function inert(line: string): string {
  return line.includes('##[') ? line.replace(MARKUP, `$1${ZERO_WIDTH_SPACE}[`) : line
}

/** A name from Coolify as one line of text: it goes into group titles and line prefixes. */
function oneLine(name: string): string {
  // eslint-disable-next-line no-control-regex
  return inert(name.replace(/[\u0000-\u001f\u007f]+/g, ' '))
}

/**
 * The runtime log of an application that did not come up, in a log group of its own, as inert as
 * build output (the application wrote it, not the action).
 */
export function printRuntimeLog(
  deployment: DeploymentView,
  write: (text: string) => void = text => void process.stdout.write(text)
): void {
  const token = randomBytes(12).toString('hex')
  let text = `::group::Runtime log of ${oneLine(deployment.name)}\n::stop-commands::${token}\n`
  if (deployment.runtimeLog.length === 0) {
    text += 'Coolify had no log for it: it gives one only while the container runs.\n'
  }
  for (const line of deployment.runtimeLog) {
    for (const part of line.split(LINE_BREAK)) text += `${inert(part)}\n`
  }
  write(`${text}::${token}::\n::endgroup::\n`)
}
