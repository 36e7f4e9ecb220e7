import * as core from '@actions/core'
import type { DeploymentView } from './deploy/deployment.js'

const PENDING = 'pending-deployments'

export interface PendingDeployment {
  uuid: string
  name: string
}

/**
 * Records, for the post step, the deployments the main step is waiting on. Saved the moment they
 * are known and cleared when the wait is over, so a main step killed in between leaves the list
 * behind for the post step to cancel.
 */
export function savePending(deployments: readonly DeploymentView[]): void {
  const pending: PendingDeployment[] = deployments.map(deployment => ({
    uuid: deployment.uuid!,
    name: deployment.name
  }))
  core.saveState(PENDING, JSON.stringify(pending))
}

export function readPending(): PendingDeployment[] {
  try {
    const value: unknown = JSON.parse(core.getState(PENDING) || '[]')
    return Array.isArray(value) ? value.filter(item => typeof item?.uuid === 'string') : []
  } catch {
    return []
  }
}
