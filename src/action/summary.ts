import { formatDuration } from '../time/duration.js'
import type { DeploymentView } from '../model/deployment.js'
import type { LogLine } from '../model/logs.js'
import { describeStatus, failsStep, summaryMark } from '../model/status.js'
import { redactMasked } from '../config/secrets.js'
import { quotedLine, splitTail } from './annotations.js'
import * as commands from './commands.js'
import { JobSummary } from './job-summary.js'

/** Log lines under a failed deployment: enough to see the cause without opening the log. */
const SUMMARY_LINES = 20
/**
 * The runner drops a step's summary over 1 MiB whole, with nothing in the job to say so; this
 * leaves room under it.
 */
export const SUMMARY_BYTES = 1000 * 1000

/**
 * The job summary: a row per deployment (status, duration, commit, its page in Coolify, the app's
 * URL) and, for each that failed, the last lines of its log. A summary that cannot be written is a
 * warning: it never changes the step's outcome.
 */
export async function writeSummary(
  deployments: readonly DeploymentView[],
  instanceUrl: string
): Promise<void> {
  try {
    const summary = new JobSummary()
    compose(summary, deployments, instanceUrl, true)
    // The runner masks the summary only in the forms it knows, and not in those HTML escapes.
    let text = redactMasked(summary.stringify(), escapeHtml)
    if (Buffer.byteLength(text) > SUMMARY_BYTES) {
      // The logs make it too long: the table, and a line where the logs were.
      compose(summary.emptyBuffer(), deployments, instanceUrl, false)
      summary.addRaw(
        `<sub>The logs are left out: with them the summary is over the ${SUMMARY_BYTES / 1000 / 1000} MB GitHub shows. They are in the job's log.</sub>`,
        true
      )
      text = redactMasked(summary.stringify(), escapeHtml)
    }
    await summary.emptyBuffer().addRaw(text).write()
  } catch (error) {
    commands.warning(
      `Could not write the job summary: ${error instanceof Error ? error.message : error}`
    )
  }
}

function compose(
  summary: JobSummary,
  deployments: readonly DeploymentView[],
  instanceUrl: string,
  logs: boolean
): void {
  const header = ['Application', 'Status', 'Duration', 'Commit', 'Deployment', 'URL']
  summary
    .addHeading(`Deploy to Coolify on ${link(new URL(instanceUrl).host, instanceUrl)}`, 3)
    .addTable([header.map(data => ({ data, header: true })), ...deployments.map(row)])
  if (!logs) return
  for (const deployment of deployments) {
    if (deployment.runtimeLog.length > 0) {
      const lines = deployment.runtimeLog
        .slice(-SUMMARY_LINES)
        .map(text => ({ kind: 'stdout' as const, text }))
      summary.addDetails(
        `${htmlText(deployment.name)}: the end of its runtime log`,
        block('Runtime log', lines)
      )
    }
    const { stderr, rest } = splitTail(deployment.tail, SUMMARY_LINES)
    if (!failsStep(deployment.status) || stderr.length + rest.length === 0) continue
    summary.addDetails(
      `${htmlText(deployment.name)}: the end of its log`,
      block('stderr', stderr) + block(stderr.length ? 'Other lines' : 'Last lines', rest)
    )
  }
}

/**
 * A labelled code block of log lines, nothing when there are none. The lines stay verbatim, not
 * HTML-escaped: the fence shows them as they are, and masked values are left out of them.
 */
function block(label: string, lines: readonly LogLine[]): string {
  if (lines.length === 0) return ''
  return `\n\n${label}:\n${codeBlock(lines.map(line => quotedLine(line.text)).join('\n'))}\n`
}

/** A fenced code block that no run of backticks in `text` can close early. */
export function codeBlock(text: string): string {
  const longestRun = Math.max(0, ...(text.match(/`+/g) ?? []).map(run => run.length))
  const fence = '`'.repeat(Math.max(3, longestRun + 1))
  return `${fence}text\n${text}\n${fence}`
}

function row(deployment: DeploymentView): string[] {
  const status = `${summaryMark(deployment.status)} ${describeStatus(deployment.status)}`
  const reason = [deployment.reason, deployment.rollbackNote, deployment.warning]
    .filter(Boolean)
    .map(text => `<br><sub>${htmlText(text!)}</sub>`)
    .join('')
  const duration = deployment.durationMs
  const kind = deployment.kind === 'application' ? '' : ` <sub>${deployment.kind}</sub>`
  return [
    htmlText(deployment.name) + kind,
    status + reason,
    duration === undefined ? '—' : formatDuration(duration),
    deployment.commit ? `<code>${escapeHtml(deployment.commit.slice(0, 7))}</code>` : '—',
    deployment.uuid ? linkOrText(deployment.uuid, deployment.link) : '—',
    deployment.appUrl ? link(deployment.appUrl, deployment.appUrl) : '—'
  ]
}

function linkOrText(text: string, href: string | undefined): string {
  return href ? link(text, href) : escapeHtml(text)
}

function link(text: string, href: string): string {
  return `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`
}

/**
 * Text from Coolify (a name, a reason) where markdown is read: HTML-escaped, masked values left
 * out, on one line, since a blank line ends an HTML block and what follows is read as markdown,
 * and with a zero-width space after each `@`, so that `@org/team` in a name mentions nobody.
 */
export function htmlText(text: string): string {
  return escapeHtml(redactMasked(text.replace(/\s*[\r\n]+\s*/g, ' '))).replaceAll('@', '@&#8203;')
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, char => `&#${char.charCodeAt(0)};`)
}
