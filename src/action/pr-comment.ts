import { formatDuration } from '../time/duration.js'
import { describeError } from '../errors.js'
import type { Config } from '../config/inputs.js'
import type { DeploymentView } from '../model/deployment.js'
import type { Outcome } from '../model/outcome.js'
import { describeStatus, failsStep, summaryMark, worstOf, type Status } from '../model/status.js'
import type { Watcher } from '../jobs/run.js'
import { redactMasked } from '../config/secrets.js'
import { linked } from '../time/signals.js'
import { quotedLine, splitTail } from './annotations.js'
import * as commands from './commands.js'
import { GitHubApi, gitHubRun, repoPath, type GitHubRun } from './github-api.js'
import { callGitHub, GITHUB_CALL_MS, isRefusal, warnGitHubFailure } from './github-failure.js'
import type { LeftOpen } from './left-open.js'
import { runLink } from './run-link.js'
import { codeBlock, escapeHtml, htmlText } from './summary.js'

type Repo = GitHubRun['repo']

/** Log lines under a failed deployment: enough to see why without opening the job. */
const COMMENT_LINES = 15
/** GitHub refuses a longer comment body (422), and the comment would stay as it was. */
export const COMMENT_LENGTH = 65_536

/** Where the comment's facts come from, besides the deployments. */
interface Context {
  pr: number
  instanceUrl: string
  workflow: string
  runUrl: string
}

/**
 * The sticky comment on the pull request: one per workflow and set of applications, found again by
 * a hidden marker and its author, this token's user, and edited in place on every run; anyone
 * else's comment is never edited, whatever marker it copies. Undefined without `pr`, with
 * `comment: false` or without `github-token`. With `leftOpen`, the comment is saved there until it
 * shows the outcome, for the post step.
 */
export async function openPullRequestComment(
  config: Config,
  leftOpen?: LeftOpen
): Promise<PullRequestComment | undefined> {
  if (config.pr === undefined || !config.comment) return undefined
  if (!config.githubToken) {
    commands.warning('`pr` is set but `github-token` is empty: no pull request comment is written.')
    return undefined
  }
  try {
    const resources = config.tags.length ? config.tags : config.appUuids
    const run = gitHubRun()
    const github = new GitHubApi(config.githubToken, run.apiUrl)
    const facts = await factsOf(config, config.pr, run, github)
    const marker = markerFor(facts.workflow, resources)
    leftOpen?.update({ comment: { marker } })
    return new PullRequestComment(github, run.repo, marker, facts, { leftOpen })
  } catch (error) {
    commands.warning(`Could not prepare the pull request comment: ${describeError(error)}`)
    return undefined
  }
}

/**
 * The post step: the comment a main step left open shows the outcome the main step could not
 * write (`outcome`); when it never knew one, the comment says the run stopped (an earlier run's
 * comment, found by its marker, included), and is never made for that.
 */
export async function finishLeftComment(
  config: Config,
  { marker, id, outcome }: { marker: string; id?: number; outcome?: string },
  signal: AbortSignal
): Promise<void> {
  if (config.pr === undefined || !config.githubToken) return
  const run = gitHubRun()
  const github = new GitHubApi(config.githubToken, run.apiUrl)
  const facts = await factsOf(config, config.pr, run, github)
  const comment = new PullRequestComment(github, run.repo, marker, facts, { id })
  await (outcome === undefined ? comment.stopped(signal) : comment.finishWith(outcome, signal))
}

async function factsOf(
  config: Config,
  pr: number,
  run: GitHubRun,
  github: GitHubApi
): Promise<Context> {
  return {
    pr,
    instanceUrl: config.instanceUrl,
    workflow: run.workflow || 'workflow',
    runUrl: await runLink(run, github)
  }
}

/**
 * The hidden first line that finds the comment again: the workflow and the sorted resources,
 * URI-encoded so that no name can end the HTML comment.
 */
export function markerFor(workflow: string, resources: readonly string[]): string {
  const names = [...resources].sort().map(encodeURIComponent).join(',')
  return `<!-- deploy-to-coolify workflow=${encodeURIComponent(workflow)} resources=${names} -->`
}

export class PullRequestComment implements Watcher {
  #id: number | undefined
  /** Set once GitHub refused: no more requests. */
  #refused = false
  /** One warning per run: the first failure says what went wrong. */
  #warned = false
  /** Which comments this token's user wrote: asked once, when an earlier one is looked for. */
  #ours: ((comment: Authored) => boolean) | undefined
  /** Comments GitHub would not let this token edit: someone else's, whatever their marker says. */
  readonly #notOurs = new Set<number>()

  readonly #leftOpen: LeftOpen | undefined

  constructor(
    private readonly github: GitHubApi,
    private readonly repo: Repo,
    private readonly marker: string,
    private readonly facts: Context,
    { id, leftOpen }: { id?: number; leftOpen?: LeftOpen } = {}
  ) {
    this.#id = id
    this.#leftOpen = leftOpen
  }

  /** The deployments were triggered: their status so far. */
  async building(deployments: readonly DeploymentView[], signal: AbortSignal): Promise<void> {
    await this.write(
      deploymentsBody(worstOf(deployments.map(d => d.status)), deployments, this.facts, this.room),
      true,
      signal
    )
    // Found or made: the post step edits it by its id.
    if (this.#id !== undefined)
      this.#leftOpen?.update({ comment: { marker: this.marker, id: this.#id } })
  }

  /** The outcome, with why when nothing was deployed. */
  async finish({ status, deployments, error }: Outcome, signal: AbortSignal): Promise<void> {
    const body = deployments.length
      ? deploymentsBody(status, deployments, this.facts, this.room)
      : nothingBody(error, this.facts)
    // Saved first: should GitHub not take it now, the post step writes it, not "stopped".
    const outcome = toSave(redact(body), status, this.facts)
    this.#leftOpen?.update({ comment: { marker: this.marker, id: this.#id, outcome } })
    await this.finishWith(body, signal)
  }

  /** Writes `body`, the outcome, and (shown, or refused for good) leaves nothing open. */
  async finishWith(body: string, signal: AbortSignal): Promise<void> {
    if ((await this.write(body, true, signal)) || this.#refused) {
      this.#leftOpen?.update({ comment: undefined })
    }
  }

  /**
   * What a body may take: the rest of what GitHub takes after the marker line. The masks' stars
   * are never longer than what they hide, so a body that fits before redaction fits after it.
   */
  private get room(): number {
    return COMMENT_LENGTH - this.marker.length - 1
  }

  /** The post step's word when the main step never gave the outcome: no log, no table. */
  async stopped(signal: AbortSignal): Promise<void> {
    const body =
      `### ${summaryMark('cancelled')} Coolify preview of #${this.facts.pr}: stopped\n\n` +
      `The workflow run stopped before it reported the outcome here; ` +
      `${link('Coolify', this.facts.instanceUrl)} has the deployments' results.\n\n${footer(this.facts)}`
    await this.write(body, false, signal)
  }

  /** The preview is gone: says so in the comment, if there is one (no new comment for it). */
  async removed(signal: AbortSignal): Promise<void> {
    const body =
      `### 🗑️ Coolify preview of #${this.facts.pr}: removed\n\n` +
      `The preview was removed from Coolify.\n\n${footer(this.facts)}`
    await this.write(body, false, signal)
  }

  /** True once GitHub holds `text`. */
  private async write(text: string, create: boolean, signal: AbortSignal): Promise<boolean> {
    if (this.#refused) return false
    const body = fitted(`${this.marker}\n${redact(text)}`)
    const bounded = linked([signal], GITHUB_CALL_MS)
    try {
      // Retried whole: a create whose answer was lost is found again rather than made twice.
      await callGitHub(async attempt => {
        while ((this.#id ??= await this.find(attempt)) !== undefined) {
          try {
            await this.github.request(
              'PATCH',
              `${repoPath(this.repo)}/issues/comments/${this.#id}`,
              {
                body: { body },
                signal: attempt
              }
            )
            return
          } catch (error) {
            // Someone else's comment (or one deleted since): left alone, and ours written.
            if (!isNotOurs(error)) throw error
            this.#notOurs.add(this.#id)
            this.#id = undefined
          }
        }
        if (create) {
          const { data } = await this.github.request<{ id: number }>(
            'POST',
            `${repoPath(this.repo)}/issues/${this.facts.pr}/comments`,
            { body: { body }, signal: attempt }
          )
          this.#id = data.id
        }
      }, bounded.signal)
      return this.#id !== undefined
    } catch (error) {
      // A refusal holds for the rest of the run; GitHub down for a while does not: the next
      // write tries again, so that the outcome replaces an earlier run's.
      if (isRefusal(error)) this.#refused = true
      if (!this.#warned) warn(error)
      this.#warned = true
      return false
    } finally {
      bounded.release()
    }
  }

  /**
   * The comment of an earlier run: the first that starts with the marker and that this token's
   * user wrote. The marker alone proves nothing: anyone who can comment can copy it.
   */
  private async find(signal: AbortSignal): Promise<number | undefined> {
    const ours = (this.#ours ??= await authoredBy(this.github, signal))
    const mine = (comment: Comment): boolean =>
      Boolean(comment.body?.startsWith(this.marker)) &&
      ours(comment) &&
      !this.#notOurs.has(comment.id)
    const comments = await this.github.paginate<Comment>(
      `${repoPath(this.repo)}/issues/${this.facts.pr}/comments?per_page=100`,
      signal,
      // The first page that holds one is the last asked for.
      found => found.some(mine)
    )
    return comments.find(mine)?.id
  }
}

/** What `find` reads of a comment to tell who wrote it. */
interface Authored {
  user?: { login: string; type?: string } | null
  performed_via_github_app?: unknown
}

/** What `find` reads of a comment. */
interface Comment extends Authored {
  id: number
  body?: string
}

/**
 * Who writes what the workflow's own token writes: GitHub's Actions bot, and the users Forgejo
 * and Gitea write as.
 */
const WORKFLOW_BOTS = ['github-actions[bot]', 'forgejo-actions', 'gitea-actions']

/**
 * Which comments this token's user wrote. A personal token's user is the one `GET /user` names.
 * GitHub refuses that question to an installation token (the workflow's `GITHUB_TOKEN`, an
 * app's): then the workflow's bot, or an app, which no one can comment as from outside.
 */
async function authoredBy(
  github: GitHubApi,
  signal: AbortSignal
): Promise<(comment: Authored) => boolean> {
  try {
    const { data } = await github.request<{ login: string }>('GET', '/user', { signal })
    return comment => comment.user?.login === data.login
  } catch (error) {
    if (!isRefusal(error)) throw error
    return comment =>
      WORKFLOW_BOTS.includes(comment.user?.login ?? '') ||
      (comment.user?.type === 'Bot' && Boolean(comment.performed_via_github_app))
  }
}

/** An edit GitHub refused because the comment is not this token's to edit, or is gone. */
function isNotOurs(error: unknown): boolean {
  const { status } = error as { status?: number }
  return isRefusal(error) && (status === 403 || status === 404)
}

/**
 * The most of a body saved for the post step, as JSON: the runner hands saved state over in an
 * environment variable, which Windows caps at 32,767 characters.
 */
const SAVED_LENGTH = 24_000

/** The outcome's body as saved for the post step: whole, or, too long to save, its heading. */
function toSave(body: string, status: Status, facts: Context): string {
  if (JSON.stringify(body).length <= SAVED_LENGTH) return body
  return `${headingOf(status, facts)}\n\nThe details are in ${link('the workflow run', facts.runUrl)}.\n\n${footer(facts)}`
}

function headingOf(status: Status, facts: Context): string {
  return `### ${summaryMark(status)} Coolify preview of #${facts.pr}: ${describeStatus(status)}`
}

function deploymentsBody(
  status: Status,
  deployments: readonly DeploymentView[],
  facts: Context,
  room: number
): string {
  const heading = headingOf(status, facts)
  const header = ['Application', 'Status', 'Preview', 'Commit', 'Duration', 'Deployment']
  const rows = deployments.map(deployment => cells(deployment, facts.instanceUrl))
  const table = [
    '<table>',
    `<tr>${header.map(name => `<th>${name}</th>`).join('')}</tr>`,
    ...rows.map(row => `<tr>${row.map(cell => `<td>${cell}</td>`).join('')}</tr>`),
    '</table>'
  ].join('\n')
  const logs = deployments.map(failureLog).filter(Boolean).join('\n\n')
  const body = [heading, table, logs, footer(facts)].filter(Boolean).join('\n\n')
  // Logs that do not fit are left out whole: a cut inside one would leave its fence open.
  if (body.length <= room || !logs) return body
  const cut = `<sub>The logs are left out: with them this comment is over the ${COMMENT_LENGTH} characters GitHub takes. They are in the job's log.</sub>`
  return [heading, table, cut, footer(facts)].join('\n\n')
}

function nothingBody(error: string | undefined, facts: Context): string {
  const why = error ?? 'Coolify deployed nothing'
  return (
    `### ${summaryMark('failed')} Coolify preview of #${facts.pr}: failed\n\n` +
    `${htmlText(why)}\n\n${footer(facts)}`
  )
}

function cells(deployment: DeploymentView, instanceUrl: string): string[] {
  const reason = deployment.reason ? `<br><sub>${htmlText(deployment.reason)}</sub>` : ''
  const duration = deployment.durationMs
  return [
    htmlText(deployment.name),
    `${summaryMark(deployment.status)} ${describeStatus(deployment.status)}${reason}`,
    deployment.appUrl ? link(deployment.appUrl, deployment.appUrl) : '—',
    deployment.commit ? `<code>${escapeHtml(deployment.commit.slice(0, 7))}</code>` : '—',
    duration === undefined ? '—' : formatDuration(duration),
    deployment.uuid ? link('logs', deployment.link ?? instanceUrl) : '—'
  ]
}

/** A failed deployment's last lines, stderr first, in a collapsed block. */
function failureLog(deployment: DeploymentView): string {
  if (!failsStep(deployment.status)) return ''
  const { stderr, rest } = splitTail(deployment.tail, COMMENT_LINES)
  const lines = stderr.length ? stderr : rest
  if (lines.length === 0) return ''
  const what = stderr.length ? 'the last stderr lines' : 'the last lines of its log'
  return (
    `<details><summary>${htmlText(deployment.name)}: ${what}</summary>\n\n` +
    `${codeBlock(lines.map(line => quotedLine(line.text)).join('\n'))}\n\n</details>`
  )
}

function footer(facts: Context): string {
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  return `<sub>Updated by ${link(escapeHtml(facts.workflow), facts.runUrl)} at ${when}</sub>`
}

function link(html: string, href: string): string {
  return `<a href="${escapeHtml(href)}">${html}</a>`
}

/**
 * Every value the step masks, in every form the runner would hide it in a log, and as escaped in
 * the table: the runner does not mask a comment, and build output may print them.
 */
function redact(text: string): string {
  return redactMasked(text, escapeHtml)
}

/** The last guard: a body GitHub would refuse is cut to what it takes, saying so. */
function fitted(body: string): string {
  if (body.length <= COMMENT_LENGTH) return body
  const note = '\n\n… (cut: GitHub takes 65,536 characters; the job log has the rest)'
  return body.slice(0, COMMENT_LENGTH - note.length) + note
}

function warn(error: unknown): void {
  warnGitHubFailure(
    'write the pull request comment',
    error,
    '`permissions: pull-requests: write` (or a `github-token` allowed to comment)'
  )
}
