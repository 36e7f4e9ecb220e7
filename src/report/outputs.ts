import type { DeploymentView, Status } from '../deploy/deployment.js'

/** One element of the `deployments` output. */
export interface DeploymentRecord {
  app_uuid: string
  name: string
  deployment_uuid: string | null
  status: Status
  url: string | null
  duration: number | null
  commit: string | null
}

/** Worst first: the step's `status` is the worst of its deployments. */
const SEVERITY: Status[] = [
  'failed',
  'timeout',
  'cancelled',
  'in_progress',
  'queued',
  'finished',
  'started'
]

export function worstStatus(deployments: readonly DeploymentView[]): Status {
  let worst = SEVERITY.length - 1
  for (const deployment of deployments) worst = Math.min(worst, SEVERITY.indexOf(deployment.status))
  return SEVERITY[worst]
}

export function toRecord(deployment: DeploymentView): DeploymentRecord {
  const duration = deployment.durationMs
  return {
    app_uuid: deployment.appUuid,
    name: deployment.name,
    deployment_uuid: deployment.uuid ?? null,
    status: deployment.status,
    url: deployment.appUrl ?? null,
    duration: duration === undefined ? null : Math.round(duration / 1000),
    commit: deployment.commit ?? null
  }
}

/** Sets every output of action.yml; called on success and failure alike. */
export function setOutputs(
  deployments: readonly DeploymentView[],
  setOutput: (name: string, value: string) => void
): void {
  const records = deployments.map(toRecord)
  const first = records.find(record => record.deployment_uuid) ?? records[0]
  setOutput('deployment-uuid', first?.deployment_uuid ?? '')
  setOutput('status', worstStatus(deployments))
  setOutput('url', records.find(record => record.url)?.url ?? '')
  setOutput(
    'duration',
    first?.duration === null || first === undefined ? '' : String(first.duration)
  )
  setOutput('deployments', JSON.stringify(records))
}
