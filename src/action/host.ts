import { closeSync, openSync, readSync } from 'node:fs'
import type { Host, LogFormat } from '../host.js'
import * as commands from './commands.js'

/**
 * `##[` first on a line, after blanks or escape sequences (colours, cursor moves, links): the
 * runner's log view reads that as markup (`##[group]`, `##[error]`, …) even between
 * stop-commands, which only stop commands.
 */
const MARKUP =
  // eslint-disable-next-line no-control-regex
  /^((?:\s|\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[ -/]*[0-~])*##)\[/
/**
 * `##[` anywhere outside stop-commands: the runner takes `##[command]` anywhere in a line for a
 * command (its older syntax, actions/runner `ActionCommand.TryParse`).
 */
const LEGACY_COMMAND = /##\[/g
/** `::` first on a line, after blanks: a command (`ActionCommand.TryParseV2` trims the start). */
const COMMAND = /^(\s*:):/
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f]+/g
const ZERO_WIDTH_SPACE = '\u200b'

/** The action on GitHub's runner (and Forgejo's and Gitea's): the runner's workflow commands. */
export function actionHost(): Host {
  return {
    input: name => commands.getInput(name),
    // Lines name applications, teams and what Coolify said: none of it may command the runner.
    info: message => commands.info(inertLine(message)),
    notice: message => commands.notice(message),
    warning: message => commands.warning(message),
    error: (message, title) => commands.error(message, title === undefined ? {} : { title }),
    debug: message => commands.debug(message),
    mask: value => commands.setSecret(value),
    log: githubLog(),
    cancelled: () => 'The workflow run was cancelled',
    setOutput: (name, value) => commands.setOutput(name, value),
    saveState: (key, value) => commands.saveState(key, value),
    getState: key => commands.getState(key)
  }
}

/**
 * Log groups in workflow commands. Text from outside cannot issue commands: it is wrapped in
 * `stop-commands` with a token nobody can guess, and a line that would read as log markup gets a
 * zero-width space between `##` and `[`, so that it reads the same but is printed as text.
 */
export function githubLog(
  write: (text: string) => void = text => void process.stdout.write(text)
): LogFormat {
  return {
    write,
    // The title is a command's message: `%` is escaped, so that `%0A` in a name stays text.
    startGroup: title => `::group::${commands.escapeData(title)}\n`,
    endGroup: () => '::endgroup::\n',
    verbatim: lines => {
      const token = unguessableToken()
      return `::stop-commands::${token}\n${lines.map(line => `${inert(line)}\n`).join('')}::${token}::\n`
    },
    oneLine: inertLine
  }
}

/** The kernel's random generator, where it has a device (Linux and macOS runners). */
const RANDOM_DEVICE = process.platform === 'win32' ? null : '/dev/urandom'

/**
 * 12 random bytes in hex, which a build log's author cannot guess: from the kernel's generator,
 * else from node:crypto's, which takes about 5 ms to load for this alone.
 */
export function unguessableToken(device: string | null = RANDOM_DEVICE): string {
  if (device) {
    const bytes = Buffer.alloc(12)
    try {
      const fd = openSync(device, 'r')
      try {
        if (readSync(fd, bytes) === bytes.length) return bytes.toString('hex')
      } finally {
        closeSync(fd)
      }
    } catch {
      // The device cannot be read: node:crypto's generator.
    }
  }
  return process.getBuiltinModule('node:crypto').randomBytes(12).toString('hex')
}

/**
 * One line of text from outside, printed as text where the runner reads commands: its line breaks
 * and other control characters become spaces (a name cannot start a line of its own), and a
 * zero-width space, which reads the same, breaks `::` at its start and every `##[`.
 */
export function inertLine(text: string): string {
  return text
    .replace(CONTROLS, ' ')
    .replace(LEGACY_COMMAND, `##${ZERO_WIDTH_SPACE}[`)
    .replace(COMMAND, `$1${ZERO_WIDTH_SPACE}:`)
}

/** A line of build output between stop-commands: only the log view's markup is left to break. */
function inert(line: string): string {
  return line.includes('##[') ? line.replace(MARKUP, `$1${ZERO_WIDTH_SPACE}[`) : line
}
