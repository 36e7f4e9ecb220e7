import type { Host, LogFormat } from '../host.js'

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]+/g

/** After SIGINT or SIGTERM: the cancels and the report, then the exit, before a 5 s kill. */
export const CLI_CANCEL_GRACE_MS = 4000

/** Text from outside (a build's last line, a name) as one plain line: no colours, no controls. */
export function plainLine(text: string): string {
  return text.replace(ANSI, '').replace(CONTROL, ' ')
}

export interface TerminalOptions {
  /** The inputs, by action.yml name, as the command line gave them. */
  inputs: ReadonlyMap<string, string>
  /** Colours in the output: a terminal, or a CI whose log shows them. */
  colors: boolean
  /** GitLab CI: groups become its collapsible sections. */
  gitlab: boolean
  /** Print debug lines. */
  verbose: boolean
  /** A message about the options, in the words of whoever gave them (flags, the component's inputs). */
  words: (message: string) => string
  /** Standard output: everything but the errors. */
  write(text: string): void
  /** Standard error: the `error:` lines, as the usage errors before them. */
  fail(text: string): void
  now?: () => number
}

/** The command line: plain lines on standard output, errors on standard error, every secret starred out. */
export class TerminalHost implements Host {
  readonly log: LogFormat
  readonly outputs = new Map<string, string>()
  readonly #masked = new Set<string>()
  readonly #state = new Map<string, string>()

  constructor(private readonly options: TerminalOptions) {
    const write = (text: string): void => options.write(this.redact(text))
    this.log = options.gitlab
      ? gitlabLog(write, options.colors, options.now ?? Date.now)
      : plainLog(write, options.colors)
  }

  input(name: string): string {
    return this.options.inputs.get(name) ?? ''
  }

  info(message: string): void {
    this.line(this.options.words(message))
  }

  notice(message: string): void {
    this.line(`notice: ${this.options.words(message)}`)
  }

  warning(message: string): void {
    this.line(this.paint('33', `warning: ${this.options.words(message)}`))
  }

  error(message: string, title?: string): void {
    const text = plainLine(`${title ? `${title}: ` : ''}${message}`)
    this.options.fail(`${this.redact(this.paint('31', `error: ${this.options.words(text)}`))}\n`)
  }

  debug(message: string): void {
    if (this.options.verbose) this.line(`debug: ${this.options.words(message)}`)
  }

  /**
   * Within the shortest grace a CI gives: Jenkins kills 5 s after its SIGTERM (GitLab's shell
   * runners and `docker stop` wait longer).
   */
  readonly cancelGraceMs = CLI_CANCEL_GRACE_MS

  cancelled(signal: NodeJS.Signals): string {
    return this.options.gitlab ? `The job was cancelled (${signal})` : `Stopped by ${signal}`
  }

  mask(value: string): void {
    if (value) this.#masked.add(value)
  }

  setOutput(name: string, value: string): void {
    this.outputs.set(name, value)
  }

  // No later step runs after a command: what is saved lasts as long as the process.
  saveState(key: string, value: string): void {
    this.#state.set(key, value)
  }

  getState(key: string): string {
    return this.#state.get(key) ?? ''
  }

  /** Text with every masked value starred out, the longest first. */
  redact(text: string): string {
    let result = text
    for (const secret of [...this.#masked].sort((a, b) => b.length - a.length)) {
      result = result.replaceAll(secret, '***')
    }
    return result
  }

  private line(message: string): void {
    this.options.write(`${this.redact(message)}\n`)
  }

  private paint(code: string, text: string): string {
    return this.options.colors ? `\u001b[${code}m${text}\u001b[0m` : text
  }
}

/** Groups as headings; text from outside as it is, without colours where they would not show. */
function plainLog(write: (text: string) => void, colors: boolean): LogFormat {
  return {
    write,
    startGroup: title => `== ${title}\n`,
    endGroup: () => '',
    verbatim: lines => lines.map(line => `${colors ? line : line.replace(ANSI, '')}\n`).join(''),
    oneLine: plainLine
  }
}

/**
 * GitLab's collapsible sections. Build output cannot open or close one: the erase-line sequence
 * that must precede a section marker is taken out of its lines.
 */
function gitlabLog(write: (text: string) => void, colors: boolean, now: () => number): LogFormat {
  const open: string[] = []
  let count = 0
  const stamp = (): number => Math.floor(now() / 1000)
  return {
    write,
    startGroup: title => {
      const id = `coolify_${++count}`
      open.push(id)
      return `\u001b[0Ksection_start:${stamp()}:${id}[collapsed=false]\r\u001b[0K${title}\n`
    },
    endGroup: () => {
      const id = open.pop()
      return id ? `\u001b[0Ksection_end:${stamp()}:${id}\r\u001b[0K\n` : ''
    },
    verbatim: lines =>
      lines
        .map(line => {
          // eslint-disable-next-line no-control-regex
          const inert = line.replace(/\u001b\[0K(?=section_(?:start|end):)/g, '')
          return `${colors ? inert : inert.replace(ANSI, '')}\n`
        })
        .join(''),
    oneLine: plainLine
  }
}
