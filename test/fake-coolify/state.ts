/** Applications and deployments of the fake, and the rules that queue and cancel deployments. */
import { newUuid } from './format.js'
import { DEFAULT_SCENARIO, entry, isRunning, progress } from './scenario.js'
import type { Entry, Phase, Progress } from './scenario.js'
import type { DeploymentStatus, FakeApp, FakeDeployment, Flavor, Scenario } from './types.js'

export interface EnvVar {
  key: string
  value: string
  is_secret: boolean
}

export interface AppRecord {
  id: number
  uuid: string
  name: string
  kind: 'application' | 'service' | 'database'
  fqdn: string
  tags: string[]
  scenarios: Scenario[]
  previews: number[]
  unauthorized: boolean
  git_repository: string
  git_branch: string
  build_pack: string
  ports_exposes: string
  dockerfile_location: string
  envs: EnvVar[]
  /** Deployments created so far: picks the next scenario. */
  deploys: number
}

export interface DeploymentRecord {
  id: number
  uuid: string
  app: AppRecord
  scenario: Scenario
  createdAt: number
  cancelledAt?: number
  cancelEntries: Entry[]
  force: boolean
  pr: number
  commit: string
}

/** Result of asking to deploy an application. */
export type Queued =
  { kind: 'queued'; deployment: DeploymentRecord } | { kind: 'already-queued'; placeholder: string }

export class Store {
  readonly apps = new Map<string, AppRecord>()
  readonly deployments: DeploymentRecord[] = []
  private lastAppId = 0

  constructor(readonly flavor: Flavor) {}

  addApp(app: FakeApp): AppRecord {
    const record: AppRecord = {
      id: ++this.lastAppId,
      uuid: app.uuid,
      name: app.name,
      kind: app.kind ?? 'application',
      fqdn: app.fqdn ?? `http://${app.uuid}.127.0.0.1.sslip.io`,
      tags: app.tags ?? [],
      scenarios: app.scenarios?.length ? app.scenarios : [DEFAULT_SCENARIO],
      previews: app.previews ?? [],
      unauthorized: app.unauthorized ?? false,
      git_repository: `git@git.example.com:acme/${app.uuid}.git`,
      git_branch: 'main',
      build_pack: 'dockerfile',
      ports_exposes: '3000',
      dockerfile_location: '/Dockerfile',
      envs: [],
      deploys: 0
    }
    this.apps.set(record.uuid, record)
    return record
  }

  /** Applications only: services and databases are not under /applications. */
  application(uuid: string): AppRecord | undefined {
    const app = this.apps.get(uuid)
    return app?.kind === 'application' ? app : undefined
  }

  deployment(uuid: string): DeploymentRecord | undefined {
    return this.deployments.find(d => d.uuid === uuid)
  }

  progress(d: DeploymentRecord, now = Date.now()): Progress {
    return progress(d, now)
  }

  /** The status as this flavor spells it. */
  status(d: DeploymentRecord, now = Date.now()): DeploymentStatus {
    return this.spell(progress(d, now).phase)
  }

  spell(phase: Phase): DeploymentStatus {
    return phase === 'cancelled' && this.flavor === '4x' ? 'cancelled-by-user' : phase
  }

  /**
   * 4x without force: when this app already has a queued or running deployment of the same commit
   * and pull request, Coolify queues nothing and answers with a fresh uuid it never saves.
   */
  queue(app: AppRecord, force: boolean, pr: number, now = Date.now()): Queued {
    const scenario = app.scenarios[Math.min(app.deploys, app.scenarios.length - 1)]
    const commit = scenario.commit ?? 'HEAD'
    if (this.flavor === '4x' && !force) {
      const busy = this.deployments.some(
        d =>
          d.app === app && d.commit === commit && d.pr === pr && isRunning(progress(d, now).phase)
      )
      if (busy) return { kind: 'already-queued', placeholder: newUuid() }
    }
    app.deploys++
    const deployment: DeploymentRecord = {
      id: this.deployments.length + 1,
      uuid: newUuid(),
      app,
      scenario,
      createdAt: now,
      cancelEntries: [],
      force,
      pr,
      commit
    }
    this.deployments.push(deployment)
    return { kind: 'queued', deployment }
  }

  /** Stops a running deployment; false when it had already ended. */
  cancel(d: DeploymentRecord, now = Date.now()): boolean {
    const phase = progress(d, now).phase
    if (!isRunning(phase)) return false
    d.cancelledAt = now
    // The lines Coolify's cancel endpoint writes.
    d.cancelEntries =
      this.flavor === '4x'
        ? [
            entry({ output: 'Deployment cancelled by user via API.', type: 'stderr' }, now),
            entry(
              phase === 'in_progress'
                ? 'Deployment container stopped.'
                : 'Deployment container not yet started. Will be cancelled when job checks status.',
              now
            )
          ]
        : [entry({ output: 'Deployment cancelled by user.', type: 'stderr' }, now)]
    return true
  }

  snapshot(now = Date.now()): FakeDeployment[] {
    return this.deployments.map(d => ({
      uuid: d.uuid,
      appUuid: d.app.uuid,
      status: this.status(d, now),
      createdAt: d.createdAt,
      ...(d.cancelledAt !== undefined ? { cancelledAt: d.cancelledAt } : {}),
      force: d.force,
      ...(d.pr ? { pr: d.pr } : {}),
      commit: d.commit
    }))
  }
}
