import { ActionError } from '../errors.js'
import { parseApart, type EscapedLog } from './escaped-log.js'
import { HttpAgent, type HttpAnswer } from '../transport/agent.js'
import { ACCEPT_ENCODING } from '../transport/body.js'
import { HttpUnreadable } from '../transport/errors.js'
import type { Proxy } from '../transport/proxy.js'
import { linked, sharedController } from '../time/signals.js'
import {
  CoolifyError,
  describeHttpFailure,
  describeNetworkFailure,
  isQueueFull,
  UNREADABLE_HINT
} from './errors.js'
import {
  backoffDelay,
  Reachability,
  parseRetryAfter,
  RateGate,
  sleep,
  type RetryPolicy,
  type WindowBudget
} from './pacing.js'
import type {
  ApplicationChanges,
  ApplicationDetail,
  ApplicationStorages,
  ApplicationSummary,
  DeployAnswer,
  DeploymentDetail,
  DatabaseDetail,
  Dated,
  Destination,
  ListedEnvVariable,
  ProjectDetail,
  ProjectSummary,
  NewApplication,
  Tag,
  DeploymentHistory,
  DeployRequest,
  EnvVariable,
  RollbackAnswer,
  RollbackImages,
  RuntimeLogs,
  SavedEnvVariable,
  ScheduledTask,
  ServiceDetail,
  Team
} from './types.js'

export interface ClientOptions {
  /** Ends in `/api/v1`. */
  apiUrl: string
  token: string
  /** Extra headers on every request (Cloudflare Access and the like). */
  headers?: Record<string, string>
  /** PEM of CAs to trust besides the system's. */
  caCertificate?: string
  /** Longest wait for an answer's headers, and for each chunk of its body. */
  requestTimeoutMs?: number
  retry?: Partial<RetryPolicy>
  /** Told once when Coolify stops answering, and once when it answers again. */
  note?: (message: string) => void
  /** Where the proxy settings come from (HTTPS_PROXY, NO_PROXY…); the process's by default. */
  env?: NodeJS.ProcessEnv
  /** How the backoff between attempts waits; tests hand in their own clock. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  /** The clock outages are timed by; tests hand in their own. */
  now?: () => number
  /** The rate limit as this client counts it; tests hand in one on their own clock. */
  gate?: RateGate
}

interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  path: string
  query?: Record<string, string | undefined>
  body?: unknown
  /**
   * Repeat on transient failures until `signal` aborts. Off for requests that must not run twice.
   */
  retry: boolean
  /** The step's deadline and cancellation: every request carries them. */
  signal: AbortSignal
  /**
   * A read whose answer can end a resource's following (a deployment's final status and last
   * lines, the list that shows it left the running ones, the status that confirms it is up): like
   * a trigger, it may spend what the window holds back from polls.
   */
  final?: boolean
  /** The answer is plain text, not JSON (GET /version). */
  plain?: boolean
  /** A deployment's answer: its log is left as it stands in the text (`parseApart`). */
  logApart?: boolean
}

/** An answer, dated, with a deployment's log as it stands in the text when asked for. */
export type Answer<T> = Dated<T> & { log?: EscapedLog }

/** How a read counts against the rate limit: `final` when its answer can end a following. */
export interface ReadKind {
  final?: boolean
}

const DEFAULT_RETRY: RetryPolicy = { baseDelayMs: 1000, maxDelayMs: 5000 }

/**
 * Coolify's API: one method per endpoint, JSON in and out. It owns all HTTP: headers, timeouts,
 * retries with backoff, and the shared rate limit. Failures throw CoolifyError.
 */
export class CoolifyClient {
  private readonly gate: RateGate
  /** Aborted by close(): a call still under way then (a courtesy no one waits for) ends at once. */
  private readonly closing = sharedController()
  /** Whether Coolify answers: shared by every request, told of the trigger's attempts too. */
  readonly reachability: Reachability
  private readonly http: HttpAgent
  private readonly headers: Record<string, string>
  private readonly retry: RetryPolicy
  private readonly host: string
  /** The outbound proxy requests go through, when the runner has one for Coolify. */
  readonly proxy: Proxy | undefined

  constructor(private readonly options: ClientOptions) {
    this.gate = options.gate ?? new RateGate()
    this.http = new HttpAgent(
      new URL(options.apiUrl),
      {
        timeoutMs: options.requestTimeoutMs ?? 30_000,
        ca: options.caCertificate ? [options.caCertificate] : undefined,
        keepAlive: true
      },
      options.env
    )
    this.proxy = this.http.proxy
    this.headers = {
      // Lower-cased, so the action's own headers below replace any of the same name.
      ...Object.fromEntries(
        Object.entries(options.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])
      ),
      authorization: `Bearer ${options.token}`,
      accept: 'application/json',
      // Coolify's image gzips JSON when asked: every read carries the whole log so far.
      'accept-encoding': ACCEPT_ENCODING,
      'user-agent': 'deploy-to-coolify-action'
    }
    this.retry = { ...DEFAULT_RETRY, ...options.retry }
    this.host = new URL(options.apiUrl).host
    this.reachability = new Reachability(
      options.note,
      options.now,
      options.apiUrl.replace(/\/api\/v1\/?$/, '')
    )
  }

  /**
   * How long to wait before attempt `attempt + 1` after a transient failure: the backoff, or
   * longer when Coolify asked for it with `Retry-After`.
   */
  retryDelay(attempt: number, retryAfterMs?: number): number {
    return backoffDelay(this.retry, attempt, retryAfterMs)
  }

  /** What Coolify's current rate-limit window has left for reads; undefined until it tells. */
  readBudget(): WindowBudget | undefined {
    return this.gate.budget()
  }

  /**
   * Holds back from polls, in every window, what `need` says the reads still to come will take to
   * end what is followed; the reads that end it spend it.
   */
  holdBack(need: () => number): void {
    this.gate.holdBack(need)
  }

  /** GET /version: Coolify's version, as plain text ("4.3.11"). */
  version(signal: AbortSignal, { final = false }: ReadKind = {}): Promise<string> {
    return this.call({ method: 'GET', path: '/version', plain: true, retry: true, signal, final })
  }

  /** GET /team: the team the token belongs to (Coolify 4.3.0+; older servers lack the route). */
  team(signal: AbortSignal): Promise<Team> {
    return this.call({ method: 'GET', path: '/team', retry: true, signal })
  }

  /**
   * Asks, without acting, whether the token holds `deploy` or `write`: since 4.2.0 Coolify routes a
   * GET of these POST routes behind the ability only to answer 405 "This endpoint has changed to a
   * POST request." (routes/api.php: GET /deploy behind `deploy`, GET /servers/{uuid}/validate
   * behind `write`, both OtherController::post_required), and its ability check comes first: 403
   * "Missing required permissions: …" (`isMissingAbility`) without it. Resolves when the token
   * holds it, throws what Coolify answered otherwise. Before 4.2.0 these GETs deploy and validate:
   * never ask an older server.
   */
  async checkAbility(ability: 'deploy' | 'write', signal: AbortSignal): Promise<void> {
    const path = ability === 'deploy' ? '/deploy' : '/servers/ability-check/validate'
    try {
      await this.call({ method: 'GET', path, retry: true, signal })
    } catch (error) {
      if (error instanceof CoolifyError && error.status === 405) return
      throw error
    }
    throw new ActionError(
      `GET ${path}: Coolify took a GET that 4.2.0 and later refuse with 405: not asked again, nothing more is checked.`
    )
  }

  /**
   * GET /deployments: every queued or in-progress deployment of the team, each the row a read by
   * uuid gives (logs with `read:sensitive`); undefined when the answer is no list at all. Coolify
   * sorts the rows after its query and keeps their keys, so the list may come as an object keyed
   * by the query's order: its values are the rows.
   */
  async runningDeployments(
    signal: AbortSignal,
    kind: ReadKind = {}
  ): Promise<DeploymentDetail[] | undefined> {
    return (await this.runningDeploymentsDated(signal, kind)).body
  }

  /** `runningDeployments`, with what its answer took on the wire. */
  async runningDeploymentsDated(
    signal: AbortSignal,
    { final = false }: ReadKind = {}
  ): Promise<Dated<DeploymentDetail[] | undefined>> {
    const answer = await this.dated<unknown>({
      method: 'GET',
      path: '/deployments',
      retry: true,
      signal,
      final
    })
    const rows = answer.body
    const body = Array.isArray(rows)
      ? (rows as DeploymentDetail[])
      : rows && typeof rows === 'object'
        ? (Object.values(rows) as DeploymentDetail[])
        : undefined
    return { ...answer, body }
  }

  /** GET /applications: all the token sees, or (4.0.0 and later) those with the Coolify tag. */
  listApplications(signal: AbortSignal, tag?: string): Promise<ApplicationSummary[]> {
    const query = tag ? { tag } : undefined
    return this.call({ method: 'GET', path: '/applications', query, retry: true, signal })
  }

  getApplication(uuid: string, signal: AbortSignal): Promise<ApplicationDetail> {
    return this.call({ method: 'GET', path: `/applications/${enc(uuid)}`, retry: true, signal })
  }

  /** `getApplication`, dated: its status's refresh time is on Coolify's clock. */
  getApplicationDated(
    uuid: string,
    signal: AbortSignal,
    { final = false }: ReadKind = {}
  ): Promise<Dated<ApplicationDetail>> {
    const path = `/applications/${enc(uuid)}`
    return this.dated({ method: 'GET', path, retry: true, signal, final })
  }

  /** `listApplications`, dated. */
  listApplicationsDated(
    signal: AbortSignal,
    { final = false }: ReadKind = {}
  ): Promise<Dated<ApplicationSummary[]>> {
    return this.dated({ method: 'GET', path: '/applications', retry: true, signal, final })
  }

  updateApplication(
    uuid: string,
    changes: ApplicationChanges,
    signal: AbortSignal
  ): Promise<unknown> {
    return this.call({
      method: 'PATCH',
      path: `/applications/${enc(uuid)}`,
      body: changes,
      retry: true,
      signal
    })
  }

  /**
   * PATCH /applications/{uuid}/envs/bulk: creates or updates each variable by key. Setting the same
   * values twice changes nothing, so it is retried like the application's PATCH.
   */
  updateApplicationEnvs(
    uuid: string,
    variables: EnvVariable[],
    signal: AbortSignal
  ): Promise<SavedEnvVariable[]> {
    return this.call({
      method: 'PATCH',
      path: `/applications/${enc(uuid)}/envs/bulk`,
      body: { data: variables },
      retry: true,
      signal
    })
  }

  /**
   * POST /deploy with its parameters in the query string (old servers read no body). `force` is
   * sent only when true: before 4.2.0 any value, `false` included, forced a rebuild. Not retried
   * here; the caller decides, since a repeated trigger could start a second deployment.
   */
  deploy(request: DeployRequest, signal: AbortSignal): Promise<DeployAnswer> {
    const query = {
      uuid: request.uuids?.length ? request.uuids.join(',') : undefined,
      tag: request.tags?.length ? request.tags.join(',') : undefined,
      force: request.force ? 'true' : undefined,
      pr: request.pr !== undefined ? String(request.pr) : undefined,
      docker_tag: request.dockerTag
    }
    return this.call({ method: 'POST', path: '/deploy', query, retry: false, signal })
  }

  /** One page of an application's deployments, newest first: `take` rows after the first `skip`. */
  listDeployments(
    appUuid: string,
    take: number,
    signal: AbortSignal,
    skip = 0
  ): Promise<DeploymentHistory> {
    const query = { skip: String(skip), take: String(take) }
    return this.call({
      method: 'GET',
      path: `/deployments/applications/${enc(appUuid)}`,
      query,
      retry: true,
      signal
    })
  }

  getDeployment(
    uuid: string,
    signal: AbortSignal,
    { final = false }: ReadKind = {}
  ): Promise<DeploymentDetail> {
    return this.call({
      method: 'GET',
      path: `/deployments/${enc(uuid)}`,
      retry: true,
      signal,
      final
    })
  }

  /**
   * `getDeployment`, dated: its `updated_at` (the last log entry's write) is on Coolify's clock. Its
   * log, when 4.x's, also comes as it stands in the answer (`log`), to be unescaped only where it
   * grew.
   */
  getDeploymentDated(
    uuid: string,
    signal: AbortSignal,
    { final = false }: ReadKind = {}
  ): Promise<Answer<DeploymentDetail>> {
    const path = `/deployments/${enc(uuid)}`
    return this.dated({ method: 'GET', path, retry: true, signal, final, logApart: true })
  }

  /**
   * Not retried here: any answer but 200 calls for a read of the deployment first (Coolify
   * 4.1.0–4.3.6 answered 500 after saving the cancel), which the caller does.
   */
  cancelDeployment(uuid: string, signal: AbortSignal): Promise<unknown> {
    return this.call({
      method: 'POST',
      path: `/deployments/${enc(uuid)}/cancel`,
      retry: false,
      signal
    })
  }

  /**
   * DELETE /applications/{uuid}/previews/{pr}: Coolify removes the preview's containers and
   * records in the background. Deleting twice is harmless (the second answers 404), so it is
   * retried like a read.
   */
  deletePreview(appUuid: string, pr: number, signal: AbortSignal): Promise<unknown> {
    return this.call({
      method: 'DELETE',
      path: `/applications/${enc(appUuid)}/previews/${pr}`,
      retry: true,
      signal
    })
  }

  /** GET /applications/{uuid}/logs: the last `lines` lines of the running container's log. */
  getApplicationLogs(uuid: string, lines: number, signal: AbortSignal): Promise<RuntimeLogs> {
    return this.call({
      method: 'GET',
      path: `/applications/${enc(uuid)}/logs`,
      query: { lines: String(lines) },
      retry: true,
      signal
    })
  }

  /**
   * POST /applications/{uuid}/rollback (4.3+): deploys `commit` again, reusing its image when the
   * server still has it. Not retried: Coolify queues a rollback even when one is under way.
   */
  rollback(uuid: string, commit: string, signal: AbortSignal): Promise<RollbackAnswer> {
    return this.call({
      method: 'POST',
      path: `/applications/${enc(uuid)}/rollback`,
      body: { commit },
      retry: false,
      signal
    })
  }

  /**
   * GET /applications/{uuid}/rollback-images (4.3+): `current`, the tag the running container was
   * started from (null for a digest, or when Coolify cannot reach the server), and the images kept.
   */
  rollbackImages(uuid: string, signal: AbortSignal): Promise<RollbackImages> {
    return this.call({
      method: 'GET',
      path: `/applications/${enc(uuid)}/rollback-images`,
      retry: true,
      signal
    })
  }

  /** GET /applications/{uuid}/destinations (4.3+): the primary destination first. */
  listDestinations(uuid: string, signal: AbortSignal): Promise<Destination[]> {
    return this.call({
      method: 'GET',
      path: `/applications/${enc(uuid)}/destinations`,
      retry: true,
      signal
    })
  }

  /** GET /destinations (4.3.11): the Docker networks on all the team's servers. */
  listTeamDestinations(signal: AbortSignal): Promise<Destination[]> {
    return this.call({ method: 'GET', path: '/destinations', retry: true, signal })
  }

  /** GET /servers/{uuid}/destinations (4.3.11): the Docker networks of one server. */
  listServerDestinations(serverUuid: string, signal: AbortSignal): Promise<Destination[]> {
    return this.call({
      method: 'GET',
      path: `/servers/${enc(serverUuid)}/destinations`,
      retry: true,
      signal
    })
  }

  /**
   * POST /applications/{uuid}/clone (4.3+): a copy of the application, not deployed. Not retried:
   * a lost answer would make a second copy.
   */
  cloneApplication(
    uuid: string,
    clone: { destination_uuid: string; name: string },
    signal: AbortSignal
  ): Promise<{ uuid?: string }> {
    return this.call({
      method: 'POST',
      path: `/applications/${enc(uuid)}/clone`,
      body: clone,
      retry: false,
      signal
    })
  }

  /** POST /applications/private-deploy-key: a new application. Not retried, as a clone. */
  createApplication(app: NewApplication, signal: AbortSignal): Promise<{ uuid?: string }> {
    return this.call({
      method: 'POST',
      path: '/applications/private-deploy-key',
      body: app,
      retry: false,
      signal
    })
  }

  /**
   * DELETE /applications/{uuid}: Coolify removes it in the background, with its own volumes and
   * configuration. Without `docker_cleanup=false` it would also prune the whole server's build
   * cache, so that production's next build starts cold.
   */
  deleteApplication(uuid: string, signal: AbortSignal): Promise<unknown> {
    return this.call({
      method: 'DELETE',
      path: `/applications/${enc(uuid)}`,
      query: { docker_cleanup: 'false' },
      retry: true,
      signal
    })
  }

  /** GET /applications/{uuid}/storages: its volumes, bind mounts and file mounts. */
  listApplicationStorages(uuid: string, signal: AbortSignal): Promise<ApplicationStorages> {
    return this.call({
      method: 'GET',
      path: `/applications/${enc(uuid)}/storages`,
      retry: true,
      signal
    })
  }

  listScheduledTasks(uuid: string, signal: AbortSignal): Promise<ScheduledTask[]> {
    return this.call({
      method: 'GET',
      path: `/applications/${enc(uuid)}/scheduled-tasks`,
      retry: true,
      signal
    })
  }

  deleteScheduledTask(uuid: string, taskUuid: string, signal: AbortSignal): Promise<unknown> {
    return this.call({
      method: 'DELETE',
      path: `/applications/${enc(uuid)}/scheduled-tasks/${enc(taskUuid)}`,
      retry: true,
      signal
    })
  }

  listApplicationTags(uuid: string, signal: AbortSignal): Promise<Tag[]> {
    return this.call({
      method: 'GET',
      path: `/applications/${enc(uuid)}/tags`,
      retry: true,
      signal
    })
  }

  removeApplicationTag(uuid: string, tagUuid: string, signal: AbortSignal): Promise<unknown> {
    return this.call({
      method: 'DELETE',
      path: `/applications/${enc(uuid)}/tags/${enc(tagUuid)}`,
      retry: true,
      signal
    })
  }

  /** Production variables, then preview ones; values only with `read:sensitive`. */
  listApplicationEnvs(uuid: string, signal: AbortSignal): Promise<ListedEnvVariable[]> {
    return this.call({
      method: 'GET',
      path: `/applications/${enc(uuid)}/envs`,
      retry: true,
      signal
    })
  }

  deleteApplicationEnv(uuid: string, envUuid: string, signal: AbortSignal): Promise<unknown> {
    return this.call({
      method: 'DELETE',
      path: `/applications/${enc(uuid)}/envs/${enc(envUuid)}`,
      retry: true,
      signal
    })
  }

  /** GET /services: every service the token sees, to find one by the name a tag deploy gave. */
  listServices(signal: AbortSignal): Promise<ServiceDetail[]> {
    return this.call({ method: 'GET', path: '/services', retry: true, signal })
  }

  /** GET /databases: every database the token sees. */
  listDatabases(signal: AbortSignal): Promise<DatabaseDetail[]> {
    return this.call({ method: 'GET', path: '/databases', retry: true, signal })
  }

  /** GET /projects: the team's projects, without their environments. */
  listProjects(signal: AbortSignal): Promise<ProjectSummary[]> {
    return this.call({ method: 'GET', path: '/projects', retry: true, signal })
  }

  /** GET /projects/{uuid}: the project and its environments. */
  getProject(uuid: string, signal: AbortSignal): Promise<ProjectDetail> {
    return this.call({ method: 'GET', path: `/projects/${enc(uuid)}`, retry: true, signal })
  }

  /** GET /services/{uuid}, dated: its parts' refresh times are on Coolify's clock. */
  getService(
    uuid: string,
    signal: AbortSignal,
    { final = false }: ReadKind = {}
  ): Promise<Dated<ServiceDetail>> {
    const path = `/services/${enc(uuid)}`
    return this.dated({ method: 'GET', path, retry: true, signal, final })
  }

  /** GET /databases/{uuid}, dated: its refresh time is on Coolify's clock. */
  getDatabase(
    uuid: string,
    signal: AbortSignal,
    { final = false }: ReadKind = {}
  ): Promise<Dated<DatabaseDetail>> {
    const path = `/databases/${enc(uuid)}`
    return this.dated({ method: 'GET', path, retry: true, signal, final })
  }

  /** The end of a service part's container log; Coolify refuses it unless the container runs. */
  getServiceLogs(
    uuid: string,
    part: string,
    lines: number,
    signal: AbortSignal
  ): Promise<RuntimeLogs> {
    return this.call({
      method: 'GET',
      path: `/services/${enc(uuid)}/logs`,
      query: { sub_service_name: part, lines: String(lines) },
      retry: true,
      signal
    })
  }

  /** The end of a database's container log; Coolify refuses it unless the container runs. */
  getDatabaseLogs(uuid: string, lines: number, signal: AbortSignal): Promise<RuntimeLogs> {
    return this.call({
      method: 'GET',
      path: `/databases/${enc(uuid)}/logs`,
      query: { lines: String(lines) },
      retry: true,
      signal
    })
  }

  /**
   * Ends every call still under way, without retrying it, and closes the connections, so that the
   * process can exit.
   */
  async close(): Promise<void> {
    this.closing.abort(new ActionError('the step is done with Coolify'))
    this.http.close()
  }

  /**
   * Sends a call, and repeats it on transient failures until its signal aborts: a proxy or
   * Coolify restarting for minutes is normal, and the deployment goes on meanwhile. Aborted, it
   * throws the last failure it met, which says more than the abort.
   */
  private async call<T>(call: Call): Promise<T> {
    return (await this.dated<T>(call)).body
  }

  /** `call`, with the time Coolify sent its answer. */
  private async dated<T>(asked: Call): Promise<Answer<T>> {
    const bounded = linked([asked.signal, this.closing.signal])
    try {
      return await this.#attempts<T>({ ...asked, signal: bounded.signal })
    } finally {
      bounded.release()
    }
  }

  /** `dated`'s attempts, until one is answered, a failure is not transient, or `call.signal` aborts. */
  async #attempts<T>(call: Call): Promise<Answer<T>> {
    let last: CoolifyError | undefined
    for (let attempt = 1; ; attempt++) {
      try {
        // GETs that poll leave what the window holds back alone.
        await this.gate.ready(call.signal, call.method === 'GET' && !call.final)
        const answer = (await this.send(call)) as Answer<T>
        this.reachability.answered(`${call.method} ${call.path}`)
        return answer
      } catch (error) {
        if (call.signal.aborted) throw last?.afterAttempts(attempt - 1) ?? cutOff(call, error)
        if (!(error instanceof CoolifyError) || !error.details.transient || !call.retry) {
          throw error instanceof CoolifyError ? error.afterAttempts(attempt) : error
        }
        last = error
        this.reachability.failed(error)
        const givenUp = this.reachability.givenUp(error, attempt)
        if (givenUp) throw givenUp
        try {
          const wait = this.options.sleep ?? sleep
          await wait(this.retryDelay(attempt, error.details.retryAfterMs), call.signal)
        } catch {
          throw error.afterAttempts(attempt)
        }
      }
    }
  }

  /** One request, one answer: the parsed JSON body and its date, or a CoolifyError. */
  private async send(call: Call): Promise<Answer<unknown>> {
    const label = `${call.method} ${call.path}`
    const url = new URL(this.options.apiUrl + call.path)
    for (const [key, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value)
    }
    const body = call.body === undefined ? undefined : JSON.stringify(call.body)
    const headers =
      body === undefined ? this.headers : { ...this.headers, 'content-type': 'application/json' }

    let response: HttpAnswer
    try {
      response = await this.http.request(url, {
        method: call.method,
        headers,
        body,
        signal: call.signal,
        once: !call.retry
      })
    } catch (error) {
      this.gate.unanswered()
      if (call.signal.aborted) throw call.signal.reason
      const { reason, hint, transient, unsent } = describeNetworkFailure(
        error,
        this.host,
        this.proxy?.name
      )
      throw new CoolifyError(label, reason, hint, { transient, unanswered: true, unsent })
    }

    const status = response.status
    const retryAfterMs = parseRetryAfter(response.header('retry-after'))
    // A full deployment queue (told by its message) is not rate limiting: other requests go on.
    const observe = (serverMessage?: string): void =>
      this.gate.observe(
        response.header('x-ratelimit-limit'),
        response.header('x-ratelimit-remaining'),
        status === 429 && !isQueueFull(status, serverMessage) ? (retryAfterMs ?? 0) : undefined
      )
    let text: string
    try {
      text = await response.text()
    } catch (error) {
      observe()
      if (call.signal.aborted) throw call.signal.reason
      if (error instanceof HttpUnreadable) {
        throw new CoolifyError(
          label,
          `the answer (${status}) cannot be read: ${error.message}`,
          UNREADABLE_HINT,
          {
            status,
            transient: false
          }
        )
      }
      const { reason } = describeNetworkFailure(error, this.host, this.proxy?.name)
      throw new CoolifyError(label, `the answer (${status}) was cut short: ${reason}`, '', {
        status,
        transient: true
      })
    }

    const date = Date.parse(response.header('date') ?? '')
    const wireBytes = response.wireBytes()
    if (call.plain && status >= 200 && status < 300) {
      observe()
      return { body: text.trim(), date: Number.isNaN(date) ? undefined : date, wireBytes }
    }
    const apart = call.logApart && status >= 200 && status < 300 ? parseApart(text) : undefined
    const json = apart ? apart.body : parseJson(text)
    const html = json === undefined && looksLikeHtml(text, response.header('content-type'))
    // A web page says nothing of whether Coolify's API is at this address.
    if (!html) this.reachability.answeredAtAll()
    const serverMessage = messageOf(json)
    observe(serverMessage)
    if (status < 200 || status >= 300) {
      const described = describeHttpFailure(
        status,
        serverMessage,
        {
          location: response.header('location'),
          'cf-mitigated': response.header('cf-mitigated')
        },
        url
      )
      // A web page instead of Coolify's JSON: a proxy failing, or an address that is not the API.
      const page = html && status >= 400 && status !== 429 && !response.header('cf-mitigated')
      // Through a proxy, plain http is answered by the proxy when it cannot reach Coolify.
      const byProxy =
        this.proxy && url.protocol === 'http:' && status >= 500 && serverMessage === undefined
      const reason = byProxy
        ? `the proxy ${this.proxy!.name} or Coolify behind it answered ${status}`
        : !page
          ? described.reason + invalidFields(json)
          : status >= 500
            ? `a proxy in front of Coolify answered ${status} with an HTML page`
            : `got an HTML page (${status}) where Coolify's JSON was expected: a web server or proxy answered, not Coolify's API`
      const hint =
        page && status < 500
          ? "Check `coolify-url`: the instance's address, like https://coolify.example.com, with or without /api/v1"
          : described.hint
      throw new CoolifyError(label, reason, hint, {
        status,
        serverMessage,
        transient: described.transient,
        retryAfterMs
      })
    }
    if (json === undefined) {
      // A 2xx that is not JSON is a proxy's page or a body cut short; neither is Coolify's answer.
      const reason = html
        ? `got an HTML page (${status}) where Coolify's JSON was expected: a proxy or login page answered`
        : `the answer (${status}) was not valid JSON`
      const hint = html ? 'Check `coolify-url` and any access proxy (`headers`)' : ''
      throw new CoolifyError(label, reason, hint, { status, transient: true, notCoolify: html })
    }
    return {
      body: json,
      date: Number.isNaN(date) ? undefined : date,
      wireBytes,
      ...(apart && { log: apart.log })
    }
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment)
}

function parseJson(text: string): unknown {
  if (text === '') return {}
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Coolify's short `message`, trimmed to one line; never the rest of the body. */
function messageOf(json: unknown): string | undefined {
  const message = (json as { message?: unknown } | undefined)?.message
  if (typeof message !== 'string') return undefined
  const line = message.split(/[\r\n\u2028\u2029]/)[0].trim()
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

/**
 * The fields a validation failure (422) is about. Only their names: the messages may quote the
 * values sent.
 */
function invalidFields(json: unknown): string {
  const errors = (json as { errors?: unknown } | undefined)?.errors
  const fields = errors && typeof errors === 'object' ? Object.keys(errors).slice(0, 5) : []
  return fields.length ? ` (invalid: ${fields.join(', ')})` : ''
}

function looksLikeHtml(text: string, contentType: string | undefined): boolean {
  return /html/i.test(contentType ?? '') || /^\s*</.test(text)
}

/**
 * A call whose signal ended before any answer: aborted with a reason of its own (the run's cancel),
 * it throws that; when a time share ran out, a CoolifyError naming the request rather than a bare
 * "operation aborted".
 */
function cutOff(call: Call, error: unknown): unknown {
  if (error instanceof CoolifyError) return error
  const reason: unknown = call.signal.reason
  if (!(reason instanceof DOMException && reason.name === 'TimeoutError')) return reason
  return new CoolifyError(
    `${call.method} ${call.path}`,
    'Coolify did not answer in the time it had',
    '',
    { transient: true, unanswered: true, cutOff: true }
  )
}
