/** Applications and deployments of the fake, and the rules that queue and cancel deployments. */
import { newEnv } from './envs.js'
import type { EnvVar } from './envs.js'
import { newUuid } from './format.js'
import { newPreview } from './previews.js'
import type { PreviewRecord } from './previews.js'
import { resourceStatus } from './resources.js'
import { DEFAULT_SCENARIO, entry, isRunning, progress } from './scenario.js'
import type { Entry, Phase, Progress, StoppedJob } from './scenario.js'
import type {
  DeploymentStatus,
  FakeApp,
  FakeDestination,
  FakeAppState,
  FakeDeployment,
  Flavor,
  LogLine,
  ResourceStart,
  RuntimeState,
  Scenario
} from './types.js'

/** Fields the deployment job reads when it takes the row, so their past values matter. */
export type JobField =
  'git_repository' | 'git_branch' | 'docker_registry_image_name' | 'docker_registry_image_tag'

/** A container a service runs, listed under its `applications` or `databases`. */
export interface SubRecord {
  uuid: string
  name: string
  kind: 'application' | 'database'
}

interface Change {
  at: number
  field: JobField
  before: string | null
}

/** A team-wide Coolify tag; resources refer to it by name. */
export interface TagRecord {
  uuid: string
  name: string
  createdAt: number
}

/** A persistent storage: a named Docker volume, or a bind mount of `host_path`. */
export interface VolumeRecord {
  id: number
  uuid: string
  name: string
  mount_path: string
  host_path: string | null
}

/** A file mount: a file (or directory) of the server at `fs_path`, mounted at `mount_path`. */
export interface FileRecord {
  id: number
  uuid: string
  fs_path: string
  mount_path: string
  content: string | null
}

export interface TaskRecord {
  uuid: string
  name: string
  command: string
  frequency: string
  createdAt: number
}

/** The webhook secrets a manual (non-App) git source signs pushes with. */
export const WEBHOOK_SECRET_FIELDS = [
  'manual_webhook_secret_github',
  'manual_webhook_secret_gitlab',
  'manual_webhook_secret_bitbucket',
  'manual_webhook_secret_gitea'
] as const

/** Every app of the fake runs here unless it names its own destinations. */
export const DEFAULT_DESTINATION: Required<FakeDestination> = {
  uuid: 'd0stinationfakecoolify01',
  name: 'localhost-coolify',
  network: 'coolify',
  serverUuid: 's0rverfakecoolify0000001',
  serverId: 0
}

/** An environment of a project: resources belong to one, by its id. */
export interface EnvironmentRecord {
  id: number
  uuid: string
  name: string
}

export interface ProjectRecord {
  id: number
  uuid: string
  name: string
  environments: EnvironmentRecord[]
}

/** Where Coolify puts what is made on a fresh installation. */
export const DEFAULT_PROJECT = 'My first project'
export const DEFAULT_ENVIRONMENT = 'production'

export interface AppRecord {
  id: number
  uuid: string
  name: string
  description: string | null
  kind: 'application' | 'service' | 'database'
  /** The id of its environment (see Store.projects). */
  environmentId: number
  fqdn: string
  /** Tag names (see Store.tags). */
  tags: string[]
  /** Destination uuids: the primary first, then additional networks. */
  destinations: string[]
  createdAt: number
  updatedAt: number
  /**
   * Applications Coolify made through the API start 'exited' and serve nothing until their first
   * deployment finished; the fake's seeded apps are running from the start.
   */
  idle?: { status: string; http: number }
  scenarios: Scenario[]
  previews: PreviewRecord[]
  unauthorized: boolean
  git_repository: string
  git_branch: string
  /** 'HEAD' unless pinned. */
  git_commit_sha: string
  build_pack: string
  ports_exposes: string
  dockerfile_location: string
  docker_registry_image_name: string | null
  docker_registry_image_tag: string | null
  preview_url_template: string
  envs: EnvVar[]
  coolifyJob: boolean
  runtime: RuntimeState[]
  /** See FakeApp.refreshMs. */
  refreshMs: number
  /** See FakeApp.checkedBeforeEndMs. */
  checkedBeforeEndMs?: number
  runtimeLogs: string[]
  /** Services and databases: the status before any /deploy. */
  status: string
  subs: SubRecord[]
  starts: ResourceStart[]
  subLogs: Record<string, string[]>
  /** Each /deploy of this service or database: when Coolify answered it, and what it set off. */
  started: Array<{ at: number; start: ResourceStart }>
  /** Earlier values of the job's fields, oldest first. */
  changes: Change[]
  /** Deployments created so far: picks the next scenario. */
  deploys: number
  /** The settings row's is_auto_deploy_enabled. */
  autoDeploy: boolean
  /** Webhook secret field → value, for those that are set. */
  webhookSecrets: Record<string, string>
  /** The settings row's is_container_label_readonly_enabled. */
  readonlyLabels: boolean
  /** custom_labels, decoded. */
  customLabels: string
  proxy: 'traefik' | 'NONE'
  /** Services of docker_compose_raw; empty when it has none. */
  composeServices: string[]
  /** docker_compose_domains: service → domain. */
  composeDomains: Record<string, string>
  persistentStorages: VolumeRecord[]
  fileStorages: FileRecord[]
  scheduledTasks: TaskRecord[]
  /** See FakeApp.columns. */
  columns: Record<string, unknown>
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
  /** The commit the row was queued with. */
  commit: string
  /** What the job turns a queued 'HEAD' into when it takes the row. */
  resolvesTo?: string
  rollback: boolean
  /** Queued by a git provider's webhook (is_webhook), not the API (is_api). */
  webhook: boolean
  /** The row's docker_registry_image_tag: set for dockerimage previews only. */
  imageTag: string | null
  job?: (startedAt: number) => Array<string | LogLine>
  /** See Timeline.stoppedJob: set by a cancel of a running 4.3.11 job. */
  stoppedJob?: StoppedJob
  /** See Timeline.closes: 4.3.11's finally, on the '4x' flavor. */
  closes: boolean
}

export interface QueueOptions {
  force?: boolean
  pr?: number
  /** A rollback's commit: skips the "already queued" check and is never resolved. */
  rollback?: string
  imageTag?: string | null
  /** A push webhook: it queues the pushed commit (never 'HEAD') and marks the row is_webhook. */
  webhookCommit?: string
}

/** Result of asking to deploy an application. */
export type Queued =
  | { kind: 'queued'; deployment: DeploymentRecord }
  | { kind: 'already-queued'; placeholder: string }
  | { kind: 'queue-full' }

const HEALTHY = { status: 'running:healthy', http: 200 }
/** What Coolify answers (429, Retry-After 60) when the server's deployment queue is full. */
export const QUEUE_FULL =
  'Deployment queue is full. Please wait for existing deployments to complete.'
/** See FakeApp.refreshMs. */
const REFRESH_MS = 1000
/** Before the fake started, applications were last seen online this long ago. */
const SEEN_BEFORE_MS = 10 * 60_000

export class Store {
  readonly apps = new Map<string, AppRecord>()
  readonly deployments: DeploymentRecord[] = []
  /** The team's tags, by name. */
  readonly tags = new Map<string, TagRecord>()
  /** The team's destinations, by uuid. */
  readonly destinations = new Map<string, Required<FakeDestination>>()
  /** See FakeOptions.sharedVariables. */
  sharedVariables: Record<string, string> = {}
  /** The team's projects, in creation order. */
  readonly projects: ProjectRecord[] = []
  /** The fake's own URL, for `{{self}}` in addresses. */
  home = ''
  /** When the fake started: services and databases were last seen online before it. */
  readonly bootedAt: number
  private lastAppId = 0
  private lastStorageId = 0
  private lastProjectId = 0
  private lastEnvironmentId = 0

  constructor(
    readonly flavor: Flavor,
    /** The fake's clock: scenarios and timelines are read from it. */
    readonly clock: () => number = Date.now,
    /** See FakeOptions.queueLimit. */
    readonly queueLimit = 25,
    /** See FakeOptions.statusCheckEveryMs. */
    private readonly statusCheckEveryMs?: number,
    /** Whether the job's finally writes the closing entry: see FakeOptions.version. */
    private readonly closingEntry = true
  ) {
    this.bootedAt = clock()
    this.environment(DEFAULT_PROJECT, DEFAULT_ENVIRONMENT)
  }

  addApp(app: FakeApp, now = this.clock()): AppRecord {
    const destinations = (app.destinations ?? [DEFAULT_DESTINATION]).map(d => this.destination(d))
    const record: AppRecord = {
      id: ++this.lastAppId,
      uuid: app.uuid,
      name: app.name,
      description: app.description ?? null,
      kind: app.kind ?? 'application',
      environmentId: this.environment(
        app.project ?? DEFAULT_PROJECT,
        app.environment ?? DEFAULT_ENVIRONMENT
      ).id,
      fqdn: (app.fqdn ?? `http://${app.uuid}.127.0.0.1.sslip.io`).replaceAll('{{self}}', this.home),
      tags: (app.tags ?? []).map(name => this.tag(name, now).name),
      destinations,
      createdAt: now,
      updatedAt: now,
      scenarios: app.scenarios?.length ? app.scenarios : [DEFAULT_SCENARIO],
      previews: [],
      unauthorized: app.unauthorized ?? false,
      git_repository: `git@git.example.com:acme/${app.uuid}.git`,
      git_branch: 'main',
      git_commit_sha: app.gitCommitSha ?? 'HEAD',
      build_pack: app.buildPack ?? 'dockerfile',
      ports_exposes: '3000',
      dockerfile_location: '/Dockerfile',
      docker_registry_image_name: (app.columns?.docker_registry_image_name ??
        app.image?.name ??
        null) as string | null,
      docker_registry_image_tag: (app.columns?.docker_registry_image_tag ??
        app.image?.tag ??
        null) as string | null,
      preview_url_template: app.previewUrlTemplate ?? '{{pr_id}}.{{domain}}',
      envs: (app.envs ?? []).map(input => {
        const env = newEnv(input.key, input.value, now)
        env.is_preview = input.isPreview ?? false
        env.is_shown_once = input.isShownOnce ?? false
        env.is_literal = input.isLiteral ?? false
        env.is_multiline = input.isMultiline ?? false
        env.is_runtime = input.isRuntime ?? true
        env.is_buildtime = input.isBuildtime ?? true
        return env
      }),
      coolifyJob: app.coolifyJob ?? false,
      runtime: [...(app.runtime ?? [])].sort((a, b) => a.at - b.at),
      refreshMs: app.refreshMs ?? REFRESH_MS,
      checkedBeforeEndMs: app.checkedBeforeEndMs,
      runtimeLogs: app.runtimeLogs ?? [],
      status: app.status ?? 'running:healthy',
      subs: (app.subs ?? [{ name: 'app' }]).map(sub => ({
        uuid: newUuid(),
        name: sub.name,
        kind: sub.kind ?? 'application'
      })),
      starts: app.starts?.length ? app.starts : [{}],
      subLogs: app.subLogs ?? {},
      started: [],
      changes: [],
      deploys: 0,
      autoDeploy: app.autoDeploy ?? true,
      webhookSecrets: { ...app.webhookSecrets },
      readonlyLabels: app.readonlyLabels ?? true,
      customLabels: '',
      proxy: app.proxy ?? 'traefik',
      // The image columns are modelled above; every other one is kept as given.
      columns: Object.fromEntries(
        Object.entries(app.columns ?? {}).filter(
          ([key]) => !key.startsWith('docker_registry_image_')
        )
      ),
      composeServices: app.compose?.services ?? [],
      composeDomains: { ...app.compose?.domains },
      persistentStorages: (app.storages?.persistent ?? []).map(v => ({
        id: ++this.lastStorageId,
        uuid: newUuid(),
        name: v.name,
        mount_path: v.mountPath,
        host_path: v.hostPath ?? null
      })),
      fileStorages: (app.storages?.files ?? []).map(f => ({
        id: ++this.lastStorageId,
        uuid: newUuid(),
        fs_path: f.fsPath,
        mount_path: f.mountPath,
        content: f.content ?? null
      })),
      scheduledTasks: (app.scheduledTasks ?? []).map(t => ({
        uuid: newUuid(),
        name: t.name,
        command: t.command,
        frequency: t.frequency ?? '0 * * * *',
        createdAt: now
      }))
    }
    record.customLabels = app.customLabels ?? labelsFor(record)
    record.previews = (app.previews ?? []).map(pr => newPreview(record, pr, null))
    this.apps.set(record.uuid, record)
    return record
  }

  /** The environment of this name in the project of this name, each made on first use. */
  environment(projectName: string, name: string): EnvironmentRecord {
    let project = this.projects.find(p => p.name === projectName)
    if (!project) {
      project = { id: ++this.lastProjectId, uuid: newUuid(), name: projectName, environments: [] }
      this.projects.push(project)
    }
    let environment = project.environments.find(e => e.name === name)
    if (!environment) {
      environment = { id: ++this.lastEnvironmentId, uuid: newUuid(), name }
      project.environments.push(environment)
    }
    return environment
  }

  /** The team's tag of this name, made on first use. */
  tag(name: string, now = this.clock()): TagRecord {
    let tag = this.tags.get(name)
    if (!tag) {
      tag = { uuid: newUuid(), name, createdAt: now }
      this.tags.set(name, tag)
    }
    return tag
  }

  /** A destination of the team that no app names (yet). */
  addDestination(d: FakeDestination): void {
    this.destination(d)
  }

  /** Registers a destination (the first description of a uuid wins); returns its uuid. */
  private destination(d: FakeDestination): string {
    if (!this.destinations.has(d.uuid)) {
      this.destinations.set(d.uuid, {
        uuid: d.uuid,
        name: d.name ?? d.uuid,
        network: d.network ?? d.uuid,
        serverUuid: d.serverUuid ?? DEFAULT_DESTINATION.serverUuid,
        serverId: d.serverId ?? DEFAULT_DESTINATION.serverId
      })
    }
    return d.uuid
  }

  /**
   * Coolify's clone_application(): a new application (new id and uuid) in `destination` with the
   * source's settings row (auto-deploy, readonly labels), webhook secrets, pinned commit, fqdn,
   * labels, compose domains, description, tags, previews, scheduled tasks (new uuids), persistent
   * storages (a volume renamed after the clone, a bind mount's host path kept), file storages
   * (same fs_path), and variables, production and preview alike. Variables are copied row by row,
   * so they keep the source's uuids. Only with readonly labels on a server with a proxy does it get
   * a generated fqdn and labels made from it. It starts 'exited'.
   */
  clone(
    source: AppRecord,
    destination: string,
    name: string | undefined,
    now = this.clock()
  ): AppRecord {
    const uuid = newUuid()
    const record: AppRecord = {
      ...source,
      id: ++this.lastAppId,
      uuid,
      name: name ?? `clone-of-${limit(source.name, 20)}-${uuid}`,
      tags: [...source.tags],
      destinations: [destination],
      createdAt: now,
      updatedAt: now,
      idle: { status: 'exited', http: 404 },
      previews: [],
      envs: source.envs.map(env => ({ ...env, createdAt: now, updatedAt: now })),
      runtimeLogs: [],
      started: [],
      changes: [],
      deploys: 0,
      webhookSecrets: { ...source.webhookSecrets },
      columns: { ...source.columns },
      composeServices: [...source.composeServices],
      composeDomains: { ...source.composeDomains },
      persistentStorages: source.persistentStorages.map(v => ({
        ...v,
        id: ++this.lastStorageId,
        uuid: newUuid(),
        name: v.name.startsWith(source.uuid)
          ? v.name.replace(source.uuid, uuid)
          : `${uuid}-${v.name.split('-').pop()}`
      })),
      fileStorages: source.fileStorages.map(f => ({ ...f, id: ++this.lastStorageId })),
      scheduledTasks: source.scheduledTasks.map(t => ({ ...t, uuid: newUuid(), createdAt: now }))
    }
    if (record.proxy !== 'NONE' && record.readonlyLabels) {
      record.fqdn = `http://${uuid}.127.0.0.1.sslip.io`
      record.customLabels = labelsFor(record)
    }
    record.previews = source.previews.map(p =>
      newPreview(record, p.pr, p.docker_registry_image_tag)
    )
    this.apps.set(uuid, record)
    return record
  }

  /** Coolify starting a service or database for /deploy: its next ResourceStart begins now. */
  startResource(resource: AppRecord, now = this.clock()): void {
    const start = resource.starts[Math.min(resource.started.length, resource.starts.length - 1)]
    resource.started.push({ at: now, start })
  }

  /**
   * A variable's real_value (EnvironmentVariable::get_real_environment_variables_internal): the
   * value trimmed, its references to shared variables resolved, one the team does not have left as
   * written.
   */
  resolve(value: string): string {
    return value
      .trim()
      .replace(/\{\{\s*((?:team|project|environment|server)\.[\w-]+)\s*\}\}/g, (whole, ref) =>
        ref in this.sharedVariables ? this.sharedVariables[ref] : whole
      )
  }

  /** Applications only: services and databases are not under /applications. */
  application(uuid: string): AppRecord | undefined {
    const app = this.apps.get(uuid)
    return app?.kind === 'application' ? app : undefined
  }

  deployment(uuid: string): DeploymentRecord | undefined {
    return this.deployments.find(d => d.uuid === uuid)
  }

  /** Changes a field the job reads, remembering when. */
  setField(app: AppRecord, field: JobField, value: string | null, now: number): void {
    if (app[field] === value) return
    app.changes.push({ at: now, field, before: app[field] })
    ;(app as unknown as Record<JobField, string | null>)[field] = value
  }

  /** The field's value at `at`: the current one with every later change undone. */
  fieldAt(app: AppRecord, field: JobField, at: number): string | null {
    let value = app[field]
    for (const change of [...app.changes].reverse()) {
      if (change.at <= at) break
      if (change.field === field) value = change.before
    }
    return value
  }

  progress(d: DeploymentRecord, now = this.clock()): Progress {
    return progress(d, now)
  }

  /** The status as this flavor spells it. */
  status(d: DeploymentRecord, now = this.clock()): DeploymentStatus {
    return this.spell(progress(d, now).phase)
  }

  spell(phase: Phase): DeploymentStatus {
    return phase === 'cancelled' && this.flavor === '4x' ? 'cancelled-by-user' : phase
  }

  /** The row's commit now: resolved once the job took it. */
  commit(d: DeploymentRecord, now = this.clock()): string {
    return d.resolvesTo !== undefined && progress(d, now).startedAt !== null
      ? d.resolvesTo
      : d.commit
  }

  /** The image tag a dockerimage deployment runs: read from the app when the job takes the row. */
  ranTag(d: DeploymentRecord, startedAt: number): string {
    if (d.pr !== 0 && d.imageTag) return d.imageTag
    return this.fieldAt(d.app, 'docker_registry_image_tag', startedAt) || 'latest'
  }

  /**
   * Coolify's queue_application_deployment() (bootstrap/helpers/applications.php): nothing when
   * the server's queue is full (33-43); the row's commit is the rollback commit, else the app's
   * git_commit_sha as it is at this moment, else 'HEAD' (16), and the job builds the row's commit
   * (ApplicationDeploymentJob.php 228, 2422). In 4x without force or rollback, when this app
   * already has a queued or running row with the same commit, pull request and image tag, Coolify
   * queues nothing and answers with a fresh uuid it never saves (46-63).
   */
  queue(app: AppRecord, options: QueueOptions, now = this.clock()): Queued {
    const scenario = app.scenarios[Math.min(app.deploys, app.scenarios.length - 1)]
    const pr = options.pr ?? 0
    const imageTag = options.imageTag ?? null
    const rollback = options.rollback !== undefined
    const dockerImage = app.build_pack === 'dockerimage'
    let commit = options.rollback || options.webhookCommit || app.git_commit_sha || 'HEAD'
    let resolvesTo: string | undefined
    if (commit === 'HEAD' && !rollback && !dockerImage) {
      // A scripted job resolves the head at once; Coolify's job when it takes the row.
      if (!app.coolifyJob) commit = scenario.commit ?? 'HEAD'
      else if (scenario.commit !== undefined) resolvesTo = scenario.commit
    }
    // The server's queue is checked first: full, nothing is queued, whatever else holds.
    if (this.flavor === '4x') {
      const waiting = this.deployments.filter(d => progress(d, now).phase === 'queued')
      if (waiting.length >= this.queueLimit) return { kind: 'queue-full' }
    }
    if (this.flavor === '4x' && !options.force && !rollback) {
      const busy = this.deployments.some(
        d =>
          d.app === app &&
          this.commit(d, now) === commit &&
          d.pr === pr &&
          d.imageTag === imageTag &&
          isRunning(progress(d, now).phase)
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
      force: options.force ?? false,
      pr,
      commit,
      resolvesTo,
      rollback,
      webhook: options.webhookCommit !== undefined,
      imageTag,
      closes: this.flavor === '4x' && this.closingEntry
    }
    deployment.job = this.jobLines(deployment)
    this.deployments.push(deployment)
    return { kind: 'queued', deployment }
  }

  /** What Coolify's job writes itself when it takes the row; nothing for scripted git apps. */
  private jobLines(d: DeploymentRecord): DeploymentRecord['job'] {
    const app = d.app
    if (app.build_pack === 'dockerimage') {
      return at => {
        const name = this.fieldAt(app, 'docker_registry_image_name', at) ?? app.uuid
        // ApplicationDeploymentJob.php 597-600: a `sha256-HEX` tag is a digest, named NAME@sha256:HEX.
        const tag = this.ranTag(d, at)
        const image = tag.startsWith('sha256-')
          ? `${name}@sha256:${tag.slice('sha256-'.length)}`
          : `${name}:${tag}`
        return [`Starting deployment of ${image} to localhost.`]
      }
    }
    if (!app.coolifyJob) return undefined
    return at => {
      const repository = this.fieldAt(app, 'git_repository', at)
      const branch = this.fieldAt(app, 'git_branch', at)
      const commit = d.resolvesTo ?? d.commit
      return [
        `Importing ${repository}:${branch} (commit sha ${commit}) to /artifacts/${d.uuid}.`,
        ...(d.pr ? [`Checking out tag pull/${d.pr}/head.`] : [])
      ]
    }
  }

  /**
   * Stops a running deployment; false when it had already ended. Writes what Coolify's cancel
   * endpoint writes, or the `reason` another cancelling path gives.
   */
  cancel(d: DeploymentRecord, now = this.clock(), reason?: string): boolean {
    const phase = progress(d, now).phase
    if (!isRunning(phase)) return false
    d.cancelledAt = now
    d.cancelEntries = reason
      ? [entry({ output: reason, type: 'stderr' }, now)]
      : this.flavor === '4x'
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
    if (d.closes && phase === 'in_progress') {
      const at = now + JOB_STOPS_MS
      d.stoppedJob = { at, ...jobCancelled(at, d.uuid) }
    }
    return true
  }

  /** The production deployments that finished, newest first, with when they finished. */
  finished(app: AppRecord, now = this.clock()): Array<{ d: DeploymentRecord; p: Progress }> {
    // Newest first. Coolify runs one production deployment of an application at a time, in the
    // order they were queued (queue_next_deployment, next_queuable): of two that end in the same
    // millisecond, the later queued ended last, and its container is the one running.
    return this.deployments
      .filter(d => d.app === app && d.pr === 0)
      .map(d => ({ d, p: progress(d, now) }))
      .filter(({ p }) => p.phase === 'finished')
      .sort((a, b) => (b.p.finishedAt ?? 0) - (a.p.finishedAt ?? 0) || b.d.id - a.d.id)
  }

  /** The container's state now: FakeApp.runtime from the newest finished deployment on. */
  runtime(app: AppRecord, now = this.clock()): { status: string; http: number } {
    const [newest] = this.finished(app, now)
    if (!newest) return app.idle ?? HEALTHY
    const elapsed = now - (newest.p.finishedAt ?? now)
    const state = app.runtime.filter(s => s.at <= elapsed).pop()
    return state ? { status: state.status, http: state.http ?? 200 } : HEALTHY
  }

  /**
   * The application's status as Coolify knows it, and when it last wrote it (last_online_at).
   * Until a finished deployment's status check: the old container's. By default the server runs
   * Sentinel: the check `post_deployment` dispatches once the deployment is marked finished
   * (ApplicationDeploymentJob.php 533-539) writes last_online_at even when nothing changed
   * (GetContainersStatus.php 490-497), then Sentinel saves a status only when it changes
   * (PushServerUpdateJob.php 597-606) and the per-minute SSH check is not dispatched
   * (ServerManagerJob.php 155-167). With FakeOptions.statusCheckEveryMs, only the scheduled
   * check: it sees changes at its turns and writes last_online_at at every turn.
   */
  seen(app: AppRecord, now = this.clock()): { status: string; onlineAt: number } {
    const every = this.statusCheckEveryMs
    const checkAt = (endedAt: number): number =>
      every ? this.nextCheck(endedAt + app.refreshMs) : endedAt + app.refreshMs
    const refreshed = this.finished(app, now).find(({ p }) => checkAt(p.finishedAt ?? now) <= now)
    if (!refreshed) {
      const status = (app.idle ?? HEALTHY).status
      const [ended] = this.finished(app, now)
      if (ended && app.checkedBeforeEndMs !== undefined) {
        return { status, onlineAt: (ended.p.finishedAt ?? now) - app.checkedBeforeEndMs }
      }
      return { status, onlineAt: this.bootedAt - SEEN_BEFORE_MS }
    }
    const endedAt = refreshed.p.finishedAt ?? now
    const stateAt = (at: number): string =>
      app.runtime.filter(s => endedAt + s.at <= at).pop()?.status ?? HEALTHY.status
    if (every) {
      const lastCheck = this.nextCheck(now + 1) - every
      return { status: stateAt(lastCheck), onlineAt: lastCheck }
    }
    const checkedAt = checkAt(endedAt)
    let seen = { status: stateAt(checkedAt), onlineAt: checkedAt }
    for (const state of app.runtime) {
      const at = endedAt + state.at
      if (at <= checkedAt || at > now || state.status === seen.status) continue
      seen = { status: state.status, onlineAt: at }
    }
    return seen
  }

  /** The first scheduled status check at or after `at` (FakeOptions.statusCheckEveryMs). */
  private nextCheck(at: number): number {
    const every = this.statusCheckEveryMs!
    return this.bootedAt + Math.ceil((at - this.bootedAt) / every) * every
  }

  view(app: AppRecord, now = this.clock()): FakeAppState {
    const { http } = this.runtime(app, now)
    const status =
      app.kind === 'application' ? this.runtime(app, now).status : resourceStatus(this, app, now)
    return {
      id: app.id,
      uuid: app.uuid,
      name: app.name,
      description: app.description,
      fqdn: app.fqdn,
      tags: [...app.tags],
      destination: app.destinations[0],
      buildPack: app.build_pack,
      gitRepository: app.git_repository,
      gitBranch: app.git_branch,
      gitCommitSha: app.git_commit_sha,
      imageName: app.docker_registry_image_name,
      imageTag: app.docker_registry_image_tag,
      previewUrlTemplate: app.preview_url_template,
      status,
      http,
      envs: app.envs.map(e => ({
        uuid: e.uuid,
        key: e.key,
        value: e.value,
        isPreview: e.is_preview,
        isLiteral: e.is_literal,
        isMultiline: e.is_multiline,
        isShownOnce: e.is_shown_once,
        isRuntime: e.is_runtime,
        isBuildtime: e.is_buildtime
      })),
      previews: app.previews.map(p => ({
        pr: p.pr,
        fqdn: p.fqdn,
        imageTag: p.docker_registry_image_tag
      })),
      autoDeploy: app.autoDeploy,
      webhookSecrets: Object.keys(app.webhookSecrets).filter(field => app.webhookSecrets[field]),
      readonlyLabels: app.readonlyLabels,
      customLabels: app.customLabels,
      composeDomains: { ...app.composeDomains },
      columns: { ...app.columns },
      persistentStorages: app.persistentStorages.map(v => ({
        uuid: v.uuid,
        name: v.name,
        mountPath: v.mount_path,
        hostPath: v.host_path
      })),
      fileStorages: app.fileStorages.map(f => ({
        uuid: f.uuid,
        fsPath: f.fs_path,
        mountPath: f.mount_path
      })),
      scheduledTasks: app.scheduledTasks.map(t => ({ uuid: t.uuid, name: t.name }))
    }
  }

  snapshot(now = this.clock()): FakeDeployment[] {
    return this.deployments.map(d => {
      const p = progress(d, now)
      const ran = d.app.build_pack === 'dockerimage' && p.startedAt !== null
      return {
        uuid: d.uuid,
        appUuid: d.app.uuid,
        status: this.spell(p.phase),
        createdAt: d.createdAt,
        ...(d.cancelledAt !== undefined ? { cancelledAt: d.cancelledAt } : {}),
        force: d.force,
        ...(d.pr ? { pr: d.pr } : {}),
        commit: this.commit(d, now),
        rollback: d.rollback,
        ...(p.startedAt !== null ? { startedAt: p.startedAt } : {}),
        ...(p.finishedAt !== null ? { finishedAt: p.finishedAt } : {}),
        ...(p.finallyAt !== null ? { jobEndedAt: p.finallyAt } : {}),
        ...(ran ? { imageTag: this.ranTag(d, p.startedAt!) } : {})
      }
    })
  }
}

/** Proxy labels routing each of the app's hosts to it, as Coolify makes them with readonly labels. */
export function labelsFor(app: AppRecord): string {
  if (app.proxy === 'NONE') return ''
  return app.fqdn
    .split(',')
    .map(url => url.trim())
    .filter(Boolean)
    .flatMap((url, index) => {
      const host = URL.canParse(url) ? new URL(url).hostname : url
      const router = `http-${index}-${app.uuid}`
      return [
        'traefik.enable=true',
        `traefik.http.routers.${router}.entryPoints=http`,
        `traefik.http.routers.${router}.rule=Host(\`${host}\`) && PathPrefix(\`/\`)`
      ]
    })
    .join('\n')
}

/** Laravel's Str::limit(): at most `length` characters, then '...' when it cut. */
function limit(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length).trimEnd()}...`
}

/**
 * How long after the cancel the job it stopped writes: the cancel removes the build container and
 * kills the job's command (DeployController.php 281-293; CleanupPreviewDeployment.php 105-115 for a
 * closed pull request), whose exit the job then reads.
 */
const JOB_STOPS_MS = 300

/**
 * What a running job writes once a cancel stopped its command, all at once (no command runs
 * again): the command's exit finds the row cancelled and throws (ExecuteRemoteCommand.php
 * 226-233); `handle()`'s catch fails the job (ApplicationDeploymentJob.php 380-385), whose
 * `failed()` finds the status final, says so and throws (5007-5009, 4885-4915); the `finally`
 * writes `finished_at`, fails to write the configuration, as every remote command first checks
 * for a cancel (398-407; ExecuteRemoteCommand.php 92-97), writes the closing entry (410), and then
 * fails to stop the build container (411, 3971-3988).
 */
function jobCancelled(at: number, uuid: string): Omit<StoppedJob, 'at'> {
  const stderr = (output: string) => entry({ output, type: 'stderr' }, at)
  return {
    failure: [entry('Deployment cancelled by user, stopping execution.', at)],
    finally: [
      stderr('Warning: Failed to write deployment configurations: Deployment cancelled by user'),
      entry(`Gracefully shutting down build container: ${uuid}`, at),
      stderr(`Error stopping container ${uuid}: Deployment cancelled by user`)
    ]
  }
}
