import type { Config } from '../config/inputs.js'
import type { DeploymentView } from '../model/deployment.js'
import type { Outcome } from '../model/outcome.js'
import { gitHubState, type GitHubState } from '../model/status.js'
import { failureReason } from '../report/failure.js'
import type { Watcher } from '../jobs/run.js'
import { redactMasked } from '../config/secrets.js'
import * as commands from './commands.js'
import { GitHubApi, gitHubRun, repoPath, type GitHubRun } from './github-api.js'
import { callGitHub, isRefusal, lacksDeploymentsApi, warnGitHubFailure } from './github-failure.js'
import type { FinalStatus, LeftOpen } from './left-open.js'

type State = 'in_progress' | GitHubState
/** GitHub's limit on a status description. */
const DESCRIPTION_LENGTH = 140

/**
 * Creates a GitHub deployment of the commit deployed (`commit`, else the workflow's) in the `environment` input: it shows in
 * the repository's Environments, with the app's URL, and in the pull request. Undefined without
 * `environment`, or when GitHub refused (a warning: GitHub's bookkeeping never fails a deploy), or
 * on Forgejo and Gitea, which have no deployments API (a notice). Its id is saved in `leftOpen`
 * until it has a final status, for the post step.
 */
export async function createGitHubDeployment(
  config: Config,
  signal: AbortSignal,
  leftOpen?: LeftOpen
): Promise<GitHubDeployment | undefined> {
  const { environment, githubToken, instanceUrl } = config
  if (!environment) return undefined
  if (!githubToken) {
    commands.warning(
      `\`environment\` is set but \`github-token\` is empty: no GitHub deployment is recorded.`
    )
    return undefined
  }
  try {
    const run = gitHubRun()
    const github = new GitHubApi(githubToken, run.apiUrl)
    const workflowSha = run.sha
    const create = (ref: string | undefined) =>
      callGitHub(
        attempt =>
          github.request<{ id?: number; message?: string }>(
            'POST',
            `${repoPath(run.repo)}/deployments`,
            {
              body: {
                ref,
                environment,
                description: 'Deploy with Coolify',
                auto_merge: false,
                required_contexts: [],
                // A preview goes away with its pull request.
                transient_environment: config.pr !== undefined
              },
              signal: attempt
            }
          ),
        signal,
        // A deployment whose answer was lost may exist: a second one would stay pending for good.
        { answered: true }
      )
    // The commit deployed is `commit` when given; GitHub refuses a SHA it does not have (a fork's,
    // one never pushed), and then the deployment records the workflow's commit instead.
    let data: { id?: number; message?: string }
    try {
      ;({ data } = await create(config.commit ?? workflowSha))
    } catch (error) {
      if (!config.commit || (error as { status?: number }).status !== 422) throw error
      commands.info(
        `GitHub does not have commit ${config.commit}: the GitHub deployment records the workflow's commit ${workflowSha}`
      )
      ;({ data } = await create(workflowSha))
    }
    // 202: GitHub merges the default branch in first (`auto_merge`, off here) and says so.
    if (typeof data.id !== 'number') throw new Error(data.message ?? 'GitHub created no deployment')
    leftOpen?.update({ deployment: { id: data.id } })
    commands.info(`Recorded GitHub deployment ${data.id} in environment ${environment}`)
    return new GitHubDeployment(github, run.repo, data.id, instanceUrl, leftOpen)
  } catch (error) {
    const forge = lacksDeploymentsApi(error)
    if (forge) noDeploymentsApi(forge, environment)
    else warn(`record a GitHub deployment in environment "${environment}"`, error)
    return undefined
  }
}

/**
 * The post step: a GitHub deployment the main step left open gets the final status the main step
 * could not write (`outcome`), or, when it never knew one, ends `error`.
 */
export async function finishLeftDeployment(
  config: Config,
  { id, outcome }: { id: number; outcome?: FinalStatus },
  signal: AbortSignal
): Promise<void> {
  if (!config.githubToken) return
  const run = gitHubRun()
  const github = new GitHubApi(config.githubToken, run.apiUrl)
  const deployment = new GitHubDeployment(github, run.repo, id, config.instanceUrl)
  await (outcome ? deployment.finishWith(outcome, signal) : deployment.stopped(signal))
}

/** Status writes `delete-preview` has under way at once: many deployments, without a flood. */
const DEACTIVATE_AT_ONCE = 4

/**
 * `delete-preview`: every GitHub deployment of the `environment` input gets an `inactive` status,
 * so the pull request and the Environments page stop offering the removed preview. A pull request
 * pushed to often has many: each write is a call of its own, a few at a time, within `signal`.
 * Nothing without `environment`; GitHub refusing is a warning.
 */
export async function deactivateEnvironment(config: Config, signal: AbortSignal): Promise<void> {
  const { environment, githubToken } = config
  if (!environment || !githubToken) return
  try {
    const run = gitHubRun()
    const github = new GitHubApi(githubToken, run.apiUrl)
    const query = new URLSearchParams({ environment, per_page: '100' })
    const deployments = await callGitHub(
      attempt =>
        github.paginate<{ id: number }>(`${repoPath(run.repo)}/deployments?${query}`, attempt),
      signal
    )
    const queue = deployments.map(deployment => deployment.id)
    const failures: unknown[] = []
    const worker = async (): Promise<void> => {
      for (let id = queue.shift(); id !== undefined && !signal.aborted; id = queue.shift()) {
        await callGitHub(
          attempt =>
            github.request('POST', `${repoPath(run.repo)}/deployments/${id}/statuses`, {
              body: { state: 'inactive', description: 'The preview was removed' },
              signal: attempt
            }),
          signal
        ).catch((error: unknown) => failures.push(error))
      }
    }
    await Promise.all(Array.from({ length: DEACTIVATE_AT_ONCE }, worker))
    const marked = deployments.length - failures.length - queue.length
    commands.info(`Marked ${marked} GitHub deployment(s) in ${environment} inactive`)
    if (failures.length || queue.length) throw failures[0] ?? signal.reason
  } catch (error) {
    const forge = lacksDeploymentsApi(error)
    if (forge) noDeploymentsApi(forge, environment)
    else warn(`mark the GitHub deployments in environment "${environment}" inactive`, error)
  }
}

/** One GitHub deployment's statuses. A status GitHub refuses is a warning, never a failure. */
export class GitHubDeployment implements Watcher {
  constructor(
    private readonly github: GitHubApi,
    private readonly repo: GitHubRun['repo'],
    private readonly id: number,
    private readonly instanceUrl: string,
    private readonly leftOpen?: LeftOpen
  ) {}

  /** Coolify has taken the deployments on. */
  async building(_deployments: readonly DeploymentView[], signal: AbortSignal): Promise<void> {
    await this.setState('in_progress', { description: 'Deploying with Coolify' }, signal)
  }

  /**
   * The outcome: success with the app's URL, or failure (a deployment failed) or error (timeout,
   * cancelled, or nothing was deployed, `error` saying why), each with the link to Coolify; with
   * `wait: false`, handed over.
   * `signal` bounds GitHub's answer: the step has only its grace time left.
   */
  async finish({ status, deployments, error }: Outcome, signal: AbortSignal): Promise<void> {
    const state = gitHubState(status)
    if (!state) {
      await this.handedOver(deployments, error, signal)
      return
    }
    const subject = deployments.find(deployment => deployment.status === status)
    if (!subject) {
      const why = error ?? 'Coolify deployed nothing'
      await this.setState('error', { description: why, log_url: this.instanceUrl }, signal)
      return
    }
    const log_url = subject.link ?? this.instanceUrl
    if (state === 'success') {
      const environment_url = deployments.find(deployment => deployment.appUrl)?.appUrl
      const names = deployments.map(deployment => deployment.name).join(', ')
      await this.setState(
        state,
        { description: `Deployed ${names}`, log_url, environment_url },
        signal
      )
    } else {
      await this.setState(state, { description: failureReason(subject), log_url }, signal)
    }
  }

  /**
   * Still under way in Coolify: with `wait: false`, the deploy was handed over and nothing here
   * will follow it, so a transient state (`queued`, `in_progress`) would stay for good, and GitHub
   * marks earlier deployments inactive only on a success. So `success` — the deploy was handed
   * over — saying its result is in Coolify, linked. A run stopped with them under way is `error`.
   */
  private async handedOver(
    deployments: readonly DeploymentView[],
    error: string | undefined,
    signal: AbortSignal
  ): Promise<void> {
    const log_url = deployments.find(deployment => deployment.link)?.link ?? this.instanceUrl
    if (error) {
      await this.setState('error', { description: error, log_url }, signal)
      return
    }
    const environment_url = deployments.find(deployment => deployment.appUrl)?.appUrl
    const names = deployments.map(deployment => deployment.name).join(', ')
    const description = `Handed to Coolify (wait: false): ${names}; the result is in Coolify`
    await this.setState('success', { description, log_url, environment_url }, signal)
  }

  /**
   * The post step's word when the main step never gave the outcome: `error`, the state GitHub has
   * for a deployment that could not complete, as a cancelled run ends (`failure` would say the
   * deploy failed, which nobody saw; `inactive` would show it as merely replaced).
   */
  async stopped(signal: AbortSignal): Promise<void> {
    const description = 'The workflow run stopped before it reported the outcome; see Coolify'
    await this.setState('error', { description, log_url: this.instanceUrl }, signal)
  }

  /** The post step: the final status the main step saved, and GitHub did not take from it. */
  async finishWith({ state, ...details }: FinalStatus, signal: AbortSignal): Promise<void> {
    await this.setState(state, details, signal)
  }

  private async setState(
    state: State,
    details: Omit<FinalStatus, 'state'>,
    signal: AbortSignal
  ): Promise<void> {
    // GitHub shows it to everyone who can read the repository, unmasked.
    const shown = { ...details, description: shorten(redactMasked(details.description)) }
    const final = state !== 'in_progress'
    // Saved first: should GitHub not take it now, the post step writes it, not "stopped".
    if (final) this.leftOpen?.update({ deployment: { id: this.id, outcome: { state, ...shown } } })
    try {
      await callGitHub(
        attempt =>
          this.github.request('POST', `${repoPath(this.repo)}/deployments/${this.id}/statuses`, {
            body: { state, ...shown },
            signal: attempt
          }),
        signal
      )
      // A final status, set or refused for good, leaves nothing for the post step to finish.
      if (final) this.leftOpen?.update({ deployment: undefined })
    } catch (error) {
      if (final && isRefusal(error)) this.leftOpen?.update({ deployment: undefined })
      warn(`set GitHub deployment ${this.id} to ${state}`, error)
    }
  }
}

/** Said once per step: the first deployments call is the only one a missing API answers. */
function noDeploymentsApi(forge: string, environment: string): void {
  commands.notice(
    `${forge} has no deployments API: environment "${environment}" is not recorded there. This does not change the deploy.`
  )
}

function warn(action: string, error: unknown): void {
  warnGitHubFailure(
    action,
    error,
    '`permissions: deployments: write` (or a `github-token` allowed to write deployments)'
  )
}

function shorten(text: string): string {
  return text.length > DESCRIPTION_LENGTH ? `${text.slice(0, DESCRIPTION_LENGTH - 1)}…` : text
}
