import type { DeploymentView, Kind } from '../model/deployment.js'
import type { Outcome } from '../model/outcome.js'
import type { Status } from '../model/status.js'

/** One element of the `deployments` output. */
export interface DeploymentRecord {
  /** The resource's uuid: an application's, service's or database's. */
  app_uuid: string
  kind: Kind
  name: string
  deployment_uuid: string | null
  /** The deployment's page in Coolify. */
  deployment_url: string | null
  status: Status
  url: string | null
  duration: number | null
  commit: string | null
  /** Docker-image apps deployed with `image-tag`. */
  image_tag?: string
  /** With `rollback-on-failure`, on a deployment that failed. */
  rolled_back?: boolean
}

export function toRecord(deployment: DeploymentView): DeploymentRecord {
  const duration = deployment.durationMs
  return {
    app_uuid: deployment.appUuid,
    kind: deployment.kind,
    name: deployment.name,
    deployment_uuid: deployment.uuid ?? null,
    deployment_url: deployment.link ?? null,
    status: deployment.status,
    url: deployment.appUrl ?? null,
    duration: duration === undefined ? null : Math.round(duration / 1000),
    commit: deployment.commit ?? null,
    ...(deployment.imageTag !== undefined ? { image_tag: deployment.imageTag } : {}),
    ...(deployment.rolledBack !== undefined ? { rolled_back: deployment.rolledBack } : {})
  }
}

/** Sets every output of action.yml from the outcome; on success and failure alike. */
export function setOutputs(
  { status, deployments, reviewAppUuid }: Outcome,
  setOutput: (name: string, value: string) => void
): void {
  const records = deployments.map(toRecord)
  const first = records.find(record => record.deployment_uuid) ?? records[0]
  setOutput('deployment-uuid', first?.deployment_uuid ?? '')
  setOutput('deployment-url', first?.deployment_url ?? '')
  setOutput('status', status)
  // The first resource that has a URL, whichever deployment came first.
  setOutput('url', records.find(record => record.url)?.url ?? '')
  setOutput(
    'duration',
    first?.duration === null || first === undefined ? '' : String(first.duration)
  )
  setOutput('deployments', JSON.stringify(records))
  setOutput('rolled-back', String(deployments.some(deployment => deployment.rolledBack)))
  setOutput('review-app-uuid', reviewAppUuid ?? '')
}
