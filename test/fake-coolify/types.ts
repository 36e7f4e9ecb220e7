/** Public types of the fake Coolify. */

/** 'seed' answers as interface.md describes, '4x' as real Coolify 4.x does (coolify-4x.md). */
export type Flavor = 'seed' | '4x'

export type DeploymentStatus =
  'queued' | 'in_progress' | 'finished' | 'failed' | 'cancelled' | 'cancelled-by-user'

export type LogType = 'stdout' | 'stderr' | 'info' | 'warning'

/**
 * One entry the job writes: with `command`, a command's output (execute_remote_command), else one
 * of the job's own lines (addLogEntry). The fake numbers `batch` and `order` as Coolify does.
 */
export interface LogLine {
  output: string
  type?: LogType
  hidden?: boolean
  command?: string | null
}

/** What happens `at` ms after the deployment was created: a status change and/or log lines appended. */
export interface Step {
  at: number
  status?: 'queued' | 'in_progress' | 'finished' | 'failed'
  lines?: Array<string | LogLine>
}

export interface Scenario {
  steps: Step[]
  /**
   * The branch head the build resolves to; default 'HEAD' (nothing resolved). When the row gets it
   * depends on the app: see FakeApp.coolifyJob. A pinned git_commit_sha or a rollback commit wins.
   */
  commit?: string
  /**
   * The job was killed inside handle()'s finally before it wrote `finished_at`
   * (ApplicationDeploymentJob.php 386-392): the row keeps `finished_at` null for good.
   */
  killedInFinally?: boolean
}

/** Coolify's build packs; 'dockerimage' apps pull a registry image instead of building. */
export type BuildPack =
  'dockerfile' | 'nixpacks' | 'static' | 'dockercompose' | 'railpack' | 'dockerimage'

/** The application's container state from `at` ms after its newest deployment finished. */
export interface RuntimeState {
  at: number
  /** As Coolify spells it: 'running:healthy', 'running:unknown', 'exited:unhealthy', … */
  status: string
  /** What the app's address (see FakeApp.fqdn) answers meanwhile; default 200. */
  http?: number
}

export interface FakeApp {
  uuid: string
  name: string
  /**
   * Public address(es), comma-separated. `{{self}}` stands for the fake's own URL, which serves
   * the app under `/_app/<uuid>/` with RuntimeState.http: `fqdn: '{{self}}/_app/web'`.
   */
  fqdn?: string
  kind?: 'application' | 'service' | 'database'
  /**
   * The project and environment it belongs to, by name (4x: each is made on first use, with ids
   * and a uuid). Default 'My first project' and 'production', what Coolify makes on installation.
   */
  project?: string
  environment?: string
  /** Coolify tag names; each name is one team-wide tag with its own uuid. */
  tags?: string[]
  /** Shown in reads (4x); review apps carry their marker here. Default null. */
  description?: string
  /**
   * Environment variables, in creation order: production ones, and preview ones (`isPreview`)
   * that pull request deployments use instead.
   */
  envs?: FakeEnvInput[]
  /**
   * Where the app runs: the first entry is its primary destination, any others are additional
   * networks (4.3: GET /applications/{uuid}/destinations). Default: the fake's one destination,
   * DEFAULT_DESTINATION. A clone may go to any destination some app lists.
   */
  destinations?: FakeDestination[]
  /** One per successive deploy of this app; the last one repeats; default: a short success. */
  scenarios?: Scenario[]
  /** Pull request ids that have a preview. */
  previews?: number[]
  /** Deploy answers the 200 entry "Unauthorized to deploy this application." without deployment_uuid. */
  unauthorized?: boolean
  /** Default 'dockerfile'. 'dockerimage' apps run as Coolify's job runs them (see `image`). */
  buildPack?: BuildPack
  /**
   * docker_registry_image_name and _tag. A dockerimage app's deployment keeps commit 'HEAD', runs
   * the tag the app has when the deployment turns in_progress (default 'latest') and logs
   * `Starting deployment of NAME:TAG to localhost.` then.
   */
  image?: { name: string; tag?: string }
  /** Pinned git_commit_sha (default 'HEAD'): every deploy of the app builds this commit. */
  gitCommitSha?: string
  /**
   * Git apps: run as Coolify's job does. The row keeps the queued commit (pinned sha or 'HEAD')
   * until it turns in_progress; then 'HEAD' becomes the scenario's commit and the job logs
   * `Importing REPO:BRANCH (commit sha SHA) to /artifacts/<deployment uuid>.` Default false: the
   * row carries the scenario's commit from the moment it is queued and the scenario alone writes
   * the log.
   */
  coolifyJob?: boolean
  /** Default '{{pr_id}}.{{domain}}'; also takes {{random}}. */
  previewUrlTemplate?: string
  /**
   * Status over time, from the moment the app's newest successful production deployment finished.
   * Before any entry applies, and before any deployment of the app finished, it is
   * 'running:healthy' and answers 200. Failed deployments leave the status as it was.
   */
  runtime?: RuntimeState[]
  /**
   * 4x: how long after a deployment is marked finished the status check `post_deployment`
   * dispatches writes the application's status and last_online_at (ApplicationDeploymentJob.php
   * 533-539): until then reads show the old container's. Default 1000: "about a second later".
   * Often it shares finished_at's second (both are stored to the second): 0 models that.
   */
  refreshMs?: number
  /**
   * 4x: Coolify's scheduled status check (or a Sentinel push) last ran this long before the
   * deployment ended: until the refresh after it, reads show the old container's status with that
   * check's time as last_online_at. Unset: the last check was long before.
   */
  checkedBeforeEndMs?: number
  /**
   * The running container's log, oldest first: GET /applications/{uuid}/logs (and
   * /databases/{uuid}/logs) serves its end.
   */
  runtimeLogs?: string[]
  /** Whether a push to its branch deploys it (the settings row); default true, as Coolify's. */
  autoDeploy?: boolean
  /** manual_webhook_secret_github|gitlab|bitbucket|gitea that are set, by field name. */
  webhookSecrets?: Record<string, string>
  /**
   * "Readonly labels" (default true): Coolify makes the labels from the domains. Off, the app keeps
   * `customLabels` as they are.
   */
  readonlyLabels?: boolean
  /** The labels' text (stored and shown base64-encoded); default made from the domains. */
  customLabels?: string
  /**
   * The proxy of the app's server, default 'traefik'. With 'NONE', PATCH `domains` is dropped and
   * still answered 200, and a clone keeps the template's domain.
   */
  proxy?: 'traefik' | 'NONE'
  /** dockercompose apps: the services of its compose file, and the domain each is routed by. */
  compose?: { services: string[]; domains?: Record<string, string> }
  /** Its persistent storages (named volumes; bind mounts with `hostPath`) and file mounts. */
  storages?: {
    persistent?: Array<{ name: string; mountPath: string; hostPath?: string }>
    files?: Array<{ fsPath: string; mountPath: string; content?: string }>
  }
  /**
   * 4x: any other column of the applications row, or of its settings row as `settings.<column>`,
   * over 4.3.11's defaults (test/fixtures/coolify-4.3.11-columns.ts): shown in reads, copied by a
   * clone, changed by a PATCH that takes it. A key that is no column stands for one a newer
   * Coolify added.
   */
  columns?: Record<string, unknown>
  /** Scheduled tasks (commands Coolify runs in its container). */
  scheduledTasks?: Array<{ name: string; command: string; frequency?: string }>
  /** Services and databases: the status before any /deploy; default 'running:healthy'. */
  status?: string
  /** Services: their sub-resources as GET /services/{uuid} lists them; default [{ name: 'app' }]. */
  subs?: Array<{ name: string; kind?: 'application' | 'database' }>
  /** Services and databases: what each successive /deploy sets off; the last one repeats. Default [{}]. */
  starts?: ResourceStart[]
  /** Services: each sub-resource's container log, oldest first (`runtimeLogs` serves databases). */
  subLogs?: Record<string, string[]>
}

export interface FakeEnvInput {
  key: string
  /** null: emptied, as Coolify keeps an empty value (its ConvertEmptyStringsToNull middleware). */
  value: string | null
  isPreview?: boolean
  isShownOnce?: boolean
  isLiteral?: boolean
  isMultiline?: boolean
  isRuntime?: boolean
  isBuildtime?: boolean
}

/** A Docker network on a server that applications are deployed into. */
export interface FakeDestination {
  uuid: string
  name?: string
  network?: string
  serverUuid?: string
  serverId?: number
}

/** What one /deploy of a service or database sets off, from the moment Coolify answered it. */
export interface ResourceStart {
  /**
   * Services: how long Coolify's start command runs; reads of the service answer
   * 'starting:unhealthy' meanwhile (Service::isStarting). Databases: the job is not visible; ignored.
   * Default 1000.
   */
  commandMs?: number
  /**
   * Then how long until Coolify refreshes the status: reads still show the status and
   * last_online_at from before the deploy. Default 1500.
   */
  staleMs?: number
  /**
   * From that refresh on, status over time (`at`: ms after the refresh). Each entry that applies
   * sets last_online_at to the time it applied. With `sub`, only that sub-resource of a service;
   * else all of them (or the database). Default [{ at: 0, status: 'running:healthy' }].
   */
  states?: Array<{ at: number; status: string; sub?: string }>
}

/**
 * A wrong coolify-url that answers a bare 404: `{ do: { status: 404 } }` (no body, JSON type)
 * or `{ do: { status: 404, body: '' } }` (no body, text/plain).
 */
export interface Fault {
  method?: string
  /** Path relative to /api/v1, without query (e.g. '/deployments/abc'); omitted = any. */
  path?: string | RegExp
  /** Let this many matching requests through first (default 0). */
  skip?: number
  /** How many matching requests get the fault (default 1; Infinity allowed). */
  times?: number
  /**
   * An outage: from the first request it answers, the fault answers every matching request for
   * this many ms (`times` is then ignored), like a proxy or Coolify restarting.
   */
  forMs?: number
  /**
   * `garbled`: the whole answer arrives, gzip-encoded, but its compressed bytes are spoilt on the
   * way (a proxy that breaks what it passes on).
   * `lost`: Coolify acts on the request, but its answer never comes back. A status answer with
   * `acted` replaces the answer of a request Coolify did act on (Coolify 4.1–4.3.6 answered 500
   * after saving a cancel).
   */
  do:
    | 'reset'
    | 'hang'
    | 'lost'
    | 'truncate'
    | 'garbled'
    | 'html'
    | { status: number; body?: unknown; headers?: Record<string, string>; acted?: boolean }
    | SlowAnswer
}

/**
 * A slow link: Coolify acts on the request and answers at once, the answer arrives `delayMs`
 * later. What it says is what was true when the request arrived.
 */
export interface SlowAnswer {
  delayMs: number
}

export interface RecordedRequest {
  method: string
  /** Full URL path as sent, without query (e.g. '/api/v1/deploy'). */
  path: string
  query: Record<string, string>
  headers: Record<string, string | string[] | undefined>
  body: string
  at: number
  /**
   * 'reset' | 'hang' | 'truncate' | 'garbled' | 'html' | 'status NNN' | 'delay NNNms' when a fault answered the
   * request.
   */
  fault?: string
  /** Status and body size in bytes of the reply, when the handler answered (no fault). */
  status?: number
  /** The body's bytes on the wire: gzipped when the request asked for it (4x). */
  responseBytes?: number
  /** The body's bytes before compression. */
  decodedBytes?: number
}

export interface FakeOptions {
  flavor?: Flavor
  /**
   * The fake's clock, default Date.now: a test that drives it reads a scenario at exact times,
   * however slow the machine, and every answer is dated by it. Faults and outages keep the real
   * clock.
   */
  clock?: () => number
  token?: string
  abilities?: string[]
  apps?: FakeApp[]
  /** Destinations of the team beyond those its apps name (e.g. on a server without production). */
  destinations?: FakeDestination[]
  /** Requests a minute per token (4x only), default 200. */
  rateLimit?: number
  /** Cloudflare Access emulation: when missing/wrong → 302 to a login page. */
  requiredHeaders?: Record<string, string>
  apiDisabled?: boolean
  ipBlocked?: boolean
  /** Serve HTTPS with this PEM key and certificate instead of plain HTTP. */
  tls?: { key: string; cert: string }
  /**
   * 4x: JSON gzipped (level 6) for a request whose `Accept-Encoding` names gzip, as the nginx of
   * Coolify's image does (serversideup/php's `performance.conf`: gzip on, `gzip_types
   * application/json`, `gzip_comp_level 6`, `gzip_proxied any`; nginx's `gzip_min_length` 20).
   * Default true; false serves every answer plain, as an instance behind a proxy that strips it.
   */
  gzip?: boolean
  /**
   * 4x: '4.2' answers 404 "Not found." for the routes added in 4.3: rollback, clone,
   * destinations, storages and scheduled tasks (4.2.0 already has the per-application tags and envs routes). Default '4.3'.
   * '4.0-beta' (4.0.0-beta.405) answers as '4.2' does, less the cancel of a deployment (added in
   * 4.0.0-beta.436), and its job's finally writes `finished_at`
   * but no closing entry, which came with 4.0.0-beta.407 (ApplicationDeploymentJob.php 409-411);
   * its own last line, "Starting graceful shutdown container", is left out, and a job a cancel
   * stopped writes nothing more (its `finally` taken as immediate).
   */
  version?: '4.0-beta' | '4.2' | '4.3'
  /**
   * The token owner's role in its team, default 'owner'. A 'member' with any ability beyond `read`
   * gets 403 "Missing required team role." (4.2: only for root/write/write:sensitive; deploy and
   * read:sensitive get 403 "This API token has permissions (…) that exceed your current role…").
   * A member never sees deployment logs; with a real server such a token is refused before that.
   */
  role?: 'owner' | 'admin' | 'member'
  /** The token's owner is no longer in its team: 401 {"message":"Invalid token."}, no docs. */
  tokenWithoutTeam?: boolean
  /**
   * 4x: the server's deployment queue limit (deployment_queue_limit), default 25: with this many
   * deployments queued (not yet in progress), Coolify queues no more.
   */
  queueLimit?: number
  /**
   * 4x: a server without Sentinel, or with Sentinel out of sync: applications' statuses are read
   * only by the scheduled SSH check (ServerManagerJob.php 155-167, every minute), every this many
   * ms from the fake's start, the period the bench shortens. Each check writes last_online_at,
   * changed or not (GetContainersStatus.php 490-497); a deployment's end is seen at the first check
   * `refreshMs` after it (the check `post_deployment` dispatches waits in a busy queue). Unset: the
   * server runs Sentinel, which saves a status only when it changes (PushServerUpdateJob.php
   * 597-606), after the one check that follows each deployment.
   */
  statusCheckEveryMs?: number
  /**
   * The shared variables a value can refer to, `{{environment.KEY}}` and the like, by their
   * reference without braces (`'environment.STRIPE_KEY'`). Every application here, clones
   * included, sits in one environment, so a reference resolves alike in all of them.
   */
  sharedVariables?: Record<string, string>
}

export interface FakeDeployment {
  uuid: string
  appUuid: string
  status: DeploymentStatus
  createdAt: number
  cancelledAt?: number
  force: boolean
  pr?: number
  /** The row's commit now: 'HEAD' until the job resolved it (see FakeApp.coolifyJob). */
  commit: string
  rollback: boolean
  /** When it turned in_progress (or straight to an end), if it did. */
  startedAt?: number
  /** When its status turned final. */
  finishedAt?: number
  /** When the job's finally wrote `finished_at` (see Scenario.killedInFinally). */
  jobEndedAt?: number
  /** The image tag a dockerimage deployment ran, once it started. */
  imageTag?: string
}

export interface FakeEnv {
  /** A clone's variables keep the uuids of the template's, as Coolify's clone copies them. */
  uuid: string
  key: string
  value: string | null
  isPreview: boolean
  isLiteral: boolean
  isMultiline: boolean
  isShownOnce: boolean
  isRuntime: boolean
  isBuildtime: boolean
}

export interface FakePreview {
  pr: number
  /** Built from the app's first domain and preview_url_template; null without a domain. */
  fqdn: string | null
  /** dockerimage apps: the tag deployed for this pull request. */
  imageTag: string | null
}

/** An application as the fake holds it now. */
export interface FakeAppState {
  /** Increasing with creation: a clone's is higher than its template's. */
  id: number
  uuid: string
  name: string
  description: string | null
  fqdn: string
  /** Tag names. */
  tags: string[]
  /** The primary destination's uuid. */
  destination: string
  buildPack: string
  gitRepository: string
  gitBranch: string
  /** 'HEAD' unless pinned. */
  gitCommitSha: string
  imageName: string | null
  imageTag: string | null
  previewUrlTemplate: string
  /** As 4x spells it, e.g. 'running:healthy'. */
  status: string
  /** What its address answers now. */
  http: number
  envs: FakeEnv[]
  previews: FakePreview[]
  autoDeploy: boolean
  /** The webhook secret fields that are set. */
  webhookSecrets: string[]
  readonlyLabels: boolean
  customLabels: string
  /** Compose apps: each routed service's domain. */
  composeDomains: Record<string, string>
  persistentStorages: Array<{
    uuid: string
    name: string
    mountPath: string
    hostPath: string | null
  }>
  fileStorages: Array<{ uuid: string; fsPath: string; mountPath: string }>
  scheduledTasks: Array<{ uuid: string; name: string }>
  /** The columns set beyond the defaults and what the fake models (FakeApp.columns). */
  columns: Record<string, unknown>
}

export interface FakeCoolify {
  /** 'http://127.0.0.1:PORT', or https with `tls` (instance URL, without /api/v1). */
  url: string
  requests: RecordedRequest[]
  /** Current state, computed at call time, in creation order. */
  deployments(): FakeDeployment[]
  /** An application (or service, database) now; undefined when there is none. */
  app(uuid: string): FakeAppState | undefined
  /** Every application now (no services or databases), in creation order. */
  apps(): FakeAppState[]
  inject(fault: Fault): void
  /** Disarms every fault injected so far (outages included). */
  clearFaults(): void
  addApp(app: FakeApp): void
  /**
   * A push to the application's branch, as Coolify's GitHub App webhook answers it: a deployment
   * of the app's next scenario (its commit), queued without the API. Undefined when Coolify would
   * skip it (the same commit already queued). With `commit`, the row carries that commit and
   * is_webhook, as a push webhook queues it (Coolify's webhook passes the pushed sha).
   */
  push(appUuid: string, options?: { pr?: number; commit?: string }): FakeDeployment | undefined
  /** Also ends hanging requests and open sockets. */
  close(): Promise<void>
}
