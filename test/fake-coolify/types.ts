/** Public types of the fake Coolify. */

/** 'seed' answers as interface.md describes, '4x' as real Coolify 4.x does (coolify-4x.md). */
export type Flavor = 'seed' | '4x'

export type DeploymentStatus =
  'queued' | 'in_progress' | 'finished' | 'failed' | 'cancelled' | 'cancelled-by-user'

export type LogType = 'stdout' | 'stderr' | 'info' | 'warning'

export interface LogLine {
  output: string
  type?: LogType
  hidden?: boolean
  command?: string | null
  batch?: number
}

/** What happens `at` ms after the deployment was created: a status change and/or log lines appended. */
export interface Step {
  at: number
  status?: 'queued' | 'in_progress' | 'finished' | 'failed'
  lines?: Array<string | LogLine>
}

export interface Scenario {
  steps: Step[]
  /** Commit of the deployment; default 'HEAD' (what Coolify stores before the build resolves it). */
  commit?: string
}

export interface FakeApp {
  uuid: string
  name: string
  fqdn?: string
  kind?: 'application' | 'service' | 'database'
  tags?: string[]
  /** One per successive deploy of this app; the last one repeats; default: a short success. */
  scenarios?: Scenario[]
  /** Pull request ids that have a preview. */
  previews?: number[]
  /** Deploy answers the 200 entry "Unauthorized to deploy this application." without deployment_uuid. */
  unauthorized?: boolean
}

export interface Fault {
  method?: string
  /** Path relative to /api/v1, without query (e.g. '/deployments/abc'); omitted = any. */
  path?: string | RegExp
  /** Let this many matching requests through first (default 0). */
  skip?: number
  /** How many matching requests get the fault (default 1; Infinity allowed). */
  times?: number
  /** `lost`: Coolify acts on the request, but its answer never comes back. */
  do:
    | 'reset'
    | 'hang'
    | 'lost'
    | 'truncate'
    | 'html'
    | { status: number; body?: unknown; headers?: Record<string, string> }
}

export interface RecordedRequest {
  method: string
  /** Full URL path as sent, without query (e.g. '/api/v1/deploy'). */
  path: string
  query: Record<string, string>
  headers: Record<string, string | string[] | undefined>
  body: string
  at: number
  /** 'reset' | 'hang' | 'truncate' | 'html' | 'status NNN' when a fault answered the request. */
  fault?: string
  /** Status and body size in bytes of the reply, when the handler answered (no fault). */
  status?: number
  responseBytes?: number
}

export interface FakeOptions {
  flavor?: Flavor
  token?: string
  abilities?: string[]
  apps?: FakeApp[]
  /** Requests a minute per token (4x only), default 200. */
  rateLimit?: number
  /** Cloudflare Access emulation: when missing/wrong → 302 to a login page. */
  requiredHeaders?: Record<string, string>
  apiDisabled?: boolean
  ipBlocked?: boolean
  /** Serve HTTPS with this PEM key and certificate instead of plain HTTP. */
  tls?: { key: string; cert: string }
}

export interface FakeDeployment {
  uuid: string
  appUuid: string
  status: DeploymentStatus
  createdAt: number
  cancelledAt?: number
  force: boolean
  pr?: number
  commit: string
}

export interface FakeCoolify {
  /** 'http://127.0.0.1:PORT', or https with `tls` (instance URL, without /api/v1). */
  url: string
  requests: RecordedRequest[]
  /** Current state, computed at call time, in creation order. */
  deployments(): FakeDeployment[]
  inject(fault: Fault): void
  addApp(app: FakeApp): void
  /** Also ends hanging requests and open sockets. */
  close(): Promise<void>
}
