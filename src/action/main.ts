import { pullRequestEvent } from '../config/event.js'
import { setHost } from '../host.js'
import { deployAndFollow, type Front, type Watcher } from '../jobs/run.js'
import { closeGitHub } from './github-api.js'
import { createGitHubDeployment, deactivateEnvironment } from './github-deployment.js'
import { actionHost } from './host.js'
import { LeftOpen } from './left-open.js'
import { openPullRequestComment } from './pr-comment.js'
import { report } from './report.js'

/** The action's main step: the one deploy pipeline, told and reported the way GitHub shows it. */
export async function run(): Promise<void> {
  setHost(actionHost())
  try {
    await deployAndFollow(github)
  } finally {
    closeGitHub()
  }
}

const github: Front = {
  event: () => pullRequestEvent(),
  async watchers(config, budget) {
    // Saved for the post step until they show the outcome.
    const leftOpen = LeftOpen.empty()
    const watchers: Array<Watcher | undefined> = [
      await createGitHubDeployment(config, budget.deploy(), leftOpen),
      await openPullRequestComment(config, leftOpen)
    ]
    return watchers.filter(watcher => watcher !== undefined)
  },
  async removed(config, signal) {
    await deactivateEnvironment(config, signal)
    const comment = await openPullRequestComment(config)
    await comment?.removed(signal)
  },
  report
}
