import { run as cleanUp } from '../jobs/cleanup.js'
import { describeError } from '../errors.js'
import { host, setHost } from '../host.js'
import { readConfig } from '../config/inputs.js'
import { mask } from '../config/secrets.js'
import { deadline } from '../time/signals.js'
import * as commands from './commands.js'
import { closeGitHub } from './github-api.js'
import { finishLeftDeployment } from './github-deployment.js'
import { GITHUB_CALL_MS } from './github-failure.js'
import { actionHost } from './host.js'
import { LeftOpen } from './left-open.js'
import { finishLeftComment } from './pr-comment.js'

/**
 * The action's post step: undoes what a killed main step left, from the state it saved, and
 * finishes on GitHub what it left open, side by side: neither waits on the other's server.
 */
export async function run(): Promise<void> {
  setHost(actionHost())
  await Promise.all([cleanUp(), finishLeftOpen()])
}

/**
 * The GitHub deployment and the pull request comment a main step left open: each shows the outcome
 * the main step saved but GitHub did not take (a 502, the grace over), or, when the main step was
 * killed before it knew the outcome, that the run stopped, rather than in progress for good.
 */
async function finishLeftOpen(): Promise<void> {
  const { deployment, comment } = LeftOpen.load().open
  if (deployment === undefined && comment === undefined) return
  const { signal, release } = deadline(GITHUB_CALL_MS)
  try {
    const config = readConfig(name => host().input(name), mask)
    await Promise.all([
      deployment === undefined ? undefined : finishLeftDeployment(config, deployment, signal),
      comment === undefined ? undefined : finishLeftComment(config, comment, signal)
    ])
  } catch (error) {
    commands.warning(`Could not finish the GitHub deployment and comment: ${describeError(error)}`)
  } finally {
    release()
    closeGitHub()
  }
}
