import { randomBytes } from 'node:crypto'
import type { Host, LogFormat } from '../host.js'
import * as commands from './commands.js'

/**
 * `##[` first on a line, after blanks or colour codes: the runner's log view reads that as markup
 * (`##[group]`, `##[error]`, …) even between stop-commands, which only stop `::` commands.
 */
// eslint-disable-next-line no-control-regex
const MARKUP = /^((?:\s|\u001b\[[0-9;]*m)*##)\[/
const ZERO_WIDTH_SPACE = '\u200b'

/** The action on GitHub's runner (and Forgejo's and Gitea's): the runner's workflow commands. */
export function actionHost(): Host {
  return {
    input: name => commands.getInput(name),
    info: message => commands.info(message),
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
      const token = randomBytes(12).toString('hex')
      return `::stop-commands::${token}\n${lines.map(line => `${inert(line)}\n`).join('')}::${token}::\n`
    },
    // eslint-disable-next-line no-control-regex
    oneLine: text => inert(text.replace(/[\u0000-\u001f\u007f]+/g, ' '))
  }
}

function inert(line: string): string {
  return line.includes('##[') ? line.replace(MARKUP, `$1${ZERO_WIDTH_SPACE}[`) : line
}
