#!/usr/bin/env node
import { createRequire as __WEBPACK_EXTERNAL_createRequire } from "module";
/******/ var __webpack_modules__ = ({

/***/ 486:
/***/ ((module, __unused_webpack___webpack_exports__, __nccwpck_require__) => {

__nccwpck_require__.a(module, async (__webpack_handle_async_dependencies__, __webpack_async_result__) => { try {
/* harmony import */ var _main_js__WEBPACK_IMPORTED_MODULE_0__ = __nccwpck_require__(594);

process.exitCode = await (0,_main_js__WEBPACK_IMPORTED_MODULE_0__/* .main */ .i)(process.argv.slice(2), process.env, text => void process.stdout.write(text), text => void process.stderr.write(text));

__webpack_async_result__();
} catch(e) { __webpack_async_result__(e); } }, 1);

/***/ }),

/***/ 594:
/***/ ((__unused_webpack_module, __webpack_exports__, __nccwpck_require__) => {


// EXPORTS
__nccwpck_require__.d(__webpack_exports__, {
  i: () => (/* binding */ main)
});

// UNUSED EXPORTS: EXIT

;// CONCATENATED MODULE: external "node:fs"
const external_node_fs_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:fs");
;// CONCATENATED MODULE: external "node:path"
const external_node_path_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:path");
;// CONCATENATED MODULE: external "node:url"
const external_node_url_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:url");
;// CONCATENATED MODULE: ./src/duration.ts
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/y;
/**
 * Milliseconds for `90` (seconds), `500ms`, `15m`, `1h30m`; undefined when the text is none of
 * those.
 */
function parseDuration(text) {
    const value = text.trim().toLowerCase();
    if (/^\d+(?:\.\d+)?$/.test(value))
        return Math.round(Number(value) * 1000);
    if (value === '')
        return undefined;
    let total = 0;
    PART.lastIndex = 0;
    while (PART.lastIndex < value.length) {
        const match = PART.exec(value);
        if (!match)
            return undefined;
        total += Number(match[1]) * UNIT_MS[match[2]];
    }
    return Math.round(total);
}
/** `1h 2m 3s`, `4.5s`, `120ms`: short and exact enough for a log line. */
function formatDuration(ms) {
    if (ms < 1000)
        return `${Math.round(ms)}ms`;
    if (ms < 60_000)
        return `${Number((ms / 1000).toFixed(1))}s`;
    const seconds = Math.round(ms / 1000);
    const h = Math.floor(seconds / 3600);
    const m = Math.floor((seconds % 3600) / 60);
    const s = seconds % 60;
    return [h && `${h}h`, m && `${m}m`, s && `${s}s`].filter(Boolean).join(' ');
}

;// CONCATENATED MODULE: ./src/host.ts
function sayThrough(host) {
    return {
        note: message => host.info(message),
        warn: message => host.warning(message),
        debug: message => host.debug(message)
    };
}
let current;
/** The host of this process: set once, by the entry point, before anything else runs. */
function host() {
    if (!current)
        throw new Error('No host: the entry point sets one before it runs the core.');
    return current;
}
function setHost(next) {
    current = next;
}

;// CONCATENATED MODULE: ./src/model/status.ts
/**
 * Everything the action knows about a deployment's status, in one table: Coolify's words for it,
 * whether it has ended, whether it fails the step, how bad it is, and how reporters show it.
 * Every other module asks here; none compares status strings of its own.
 */
const STATUSES = {
    failed: { ended: true, fails: true, rank: 0, mark: '❌', github: 'failure' },
    unhealthy: { ended: true, fails: true, rank: 1, mark: '🩺', github: 'failure' },
    timeout: { ended: true, fails: true, rank: 2, mark: '⏱️', github: 'error' },
    cancelled: { ended: true, fails: true, rank: 3, mark: '⏹️', github: 'error' },
    in_progress: { ended: false, fails: false, rank: 4, mark: '🔄' },
    queued: { ended: false, fails: false, rank: 5, mark: '⏳' },
    finished: { ended: true, fails: false, rank: 6, mark: '✅', github: 'success' },
    started: { ended: true, fails: false, rank: 7, mark: '▶️', github: 'success' }
};
/** Coolify's words: the contract's, and 4.x's `cancelled-by-user`. */
const FROM_COOLIFY = {
    queued: 'queued',
    in_progress: 'in_progress',
    finished: 'finished',
    failed: 'failed',
    cancelled: 'cancelled',
    'cancelled-by-user': 'cancelled'
};
/**
 * Our status for Coolify's word, read leniently (case and spaces); undefined for a word Coolify
 * does not have, which is treated as not ended.
 */
function statusFromCoolify(raw) {
    return typeof raw === 'string' ? FROM_COOLIFY[raw.trim().toLowerCase()] : undefined;
}
/** Queued or running: what a cancel can still stop. An unknown word counts as running. */
function isUnderWay(raw) {
    const status = statusFromCoolify(raw);
    return status === undefined || !hasEnded(status);
}
/**
 * What an ended status may still become: a finished deployment may turn out unhealthy, of another
 * version (failed) or unconfirmed when `timeout` cut its health check; a started service or
 * database comes up or not; a cancel this action sent at `timeout` reads as cancelled first.
 * Nothing else that ended changes again.
 */
const AFTER_END = {
    finished: ['unhealthy', 'failed', 'timeout'],
    started: ['finished', 'unhealthy', 'timeout'],
    cancelled: ['timeout']
};
/** Whether a deployment now `from` may become `to`. */
function canBecome(from, to) {
    return from === to || !hasEnded(from) || (AFTER_END[from]?.includes(to) ?? false);
}
function hasEnded(status) {
    return STATUSES[status].ended;
}
/** Finished in Coolify: a new version is in place, so it can be checked for health. */
function isFinished(status) {
    return status === 'finished';
}
/** The new version did not work: what `rollback-on-failure` undoes (a cancel or timeout is not). */
function isBadVersion(status) {
    return status === 'failed' || status === 'unhealthy';
}
function failsStep(status) {
    return STATUSES[status].fails;
}
function summaryMark(status) {
    return STATUSES[status].mark;
}
function gitHubState(status) {
    return STATUSES[status].github;
}
/** The worst of some statuses; `failed` when there are none (nothing was deployed). */
function worstOf(statuses) {
    if (statuses.length === 0)
        return 'failed';
    return statuses.reduce((worst, status) => STATUSES[status].rank < STATUSES[worst].rank ? status : worst);
}
/** How a status reads in a sentence: `in progress`. */
function describeStatus(status) {
    return status.replace('_', ' ');
}

;// CONCATENATED MODULE: ./src/report/failure.ts
/**
 * What every host says of a failed deployment: the action's annotation, the command line's
 * `error:` line, the GitHub deployment's status.
 */
/** The application and the status: `web: deployment failed`. */
function failureTitle(deployment) {
    return `${deployment.name}: ${what(deployment)} ${deployment.status}`;
}
/**
 * The application, the status and why. `cause` stands in for a reason Coolify did not give: a
 * host without room for the log's tail gives its last stderr line.
 */
function failureReason(deployment, cause) {
    const why = deployment.reason ?? cause;
    const reason = why ? `: ${why}` : '';
    const rollback = deployment.rollbackNote ? `; ${deployment.rollbackNote}` : '';
    return `${failureTitle(deployment)}${reason}${rollback}`;
}
/** One line: the application, the status, why, and where to look in Coolify. */
function failureLine(deployment, instanceUrl, cause) {
    const link = deployment.link ?? (deployment.uuid ? `deployment ${deployment.uuid} on ${instanceUrl}` : '');
    return `${failureReason(deployment, cause)}${link ? ` — ${link}` : ''}`;
}
/** The last line the build wrote to stderr, which tells best why it failed. */
function lastError(deployment) {
    return deployment.tail.findLast(line => line.kind === 'stderr')?.text;
}
/** An application's deployment; a service or database itself, which has none. */
function what(deployment) {
    return deployment.kind === 'application' ? 'deployment' : deployment.kind;
}

;// CONCATENATED MODULE: ./src/report/outputs.ts
function toRecord(deployment) {
    const duration = deployment.durationMs;
    return {
        app_uuid: deployment.appUuid,
        kind: deployment.kind,
        name: deployment.name,
        deployment_uuid: deployment.uuid ?? null,
        status: deployment.status,
        url: deployment.appUrl ?? null,
        duration: duration === undefined ? null : Math.round(duration / 1000),
        commit: deployment.commit ?? null,
        ...(deployment.imageTag !== undefined ? { image_tag: deployment.imageTag } : {}),
        ...(deployment.rolledBack !== undefined ? { rolled_back: deployment.rolledBack } : {})
    };
}
/** Sets every output of action.yml from the outcome; on success and failure alike. */
function setOutputs({ status, deployments, reviewAppUuid }, setOutput) {
    const records = deployments.map(toRecord);
    const first = records.find(record => record.deployment_uuid) ?? records[0];
    setOutput('deployment-uuid', first?.deployment_uuid ?? '');
    setOutput('status', status);
    setOutput('url', records.find(record => record.url)?.url ?? '');
    setOutput('duration', first?.duration === null || first === undefined ? '' : String(first.duration));
    setOutput('deployments', JSON.stringify(records));
    setOutput('rolled-back', String(deployments.some(deployment => deployment.rolledBack)));
    setOutput('review-app-uuid', reviewAppUuid ?? '');
}

;// CONCATENATED MODULE: ./src/signals.ts
/**
 * Deadlines and combined signals that a garbage collection cannot disarm. On Node 20 the signals
 * that AbortSignal's own `timeout` and `any` make are held only weakly: once collected they never
 * abort (nodejs/node#57736), and a step with a chatty build log runs past its `timeout`. Here a
 * plain timer holds its controller, and each parent signal's listener holds its child's, until
 * they fire or are let go.
 */
/** Node fires a longer timer at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;
/** Aborts after `ms` with a TimeoutError, as AbortSignal's `timeout` does; no hold on the process. */
function deadline(ms) {
    return linked([], ms);
}
/**
 * Aborts with the first of `parents` to abort, or after `ms` when given, with that one's reason.
 * Once aborted (or released) it leaves its parents alone: a long-lived parent gathers no listeners.
 */
function linked(parents, ms) {
    const controller = new AbortController();
    let timer;
    const release = () => {
        clearTimeout(timer);
        for (const parent of parents)
            parent.removeEventListener('abort', follow);
    };
    const follow = (event) => {
        release();
        controller.abort(event.target.reason);
    };
    const first = parents.find(parent => parent.aborted);
    if (first) {
        controller.abort(first.reason);
        return { signal: controller.signal, release };
    }
    for (const parent of parents)
        parent.addEventListener('abort', follow);
    if (ms !== undefined) {
        timer = setTimeout(() => {
            release();
            controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
        }, Math.min(Math.max(0, ms), LONGEST_TIMER_MS));
        timer.unref();
    }
    return { signal: controller.signal, release };
}

;// CONCATENATED MODULE: ./src/budget.ts
/**
 * Undo (cancels, pins) and the report, after everything else; with the process's own start and
 * exit, the step ends within `timeout` + 5 s.
 */
const GRACE_MS = 4000;
/** After a cancelled run's SIGINT the runner waits 7.5 s before SIGTERM: all must be done by then. */
const CANCEL_GRACE_MS = 6500;

/**
 * The step's time, handed out as signals:
 * - the deploy share: the deployments have until `timeout` (or the run's cancel);
 * - the post-deploy share, per rollout from when its deployment ended: its health check has
 *   `health-timeout`, within `timeout`; its rollback at least `health-timeout` of its own, past
 *   `timeout` if need be, since a rollback cut short helps nobody;
 * - the grace share: `GRACE_MS` after `timeout` for undoing and reporting, whatever else hangs.
 *
 * The budget holds every timer and combined signal it hands out (see signals.ts: on Node 20 a
 * deadline nobody holds never fires), until `release()`.
 */
class Budget {
    healthTimeoutMs;
    cancelled;
    now;
    /** When `timeout` passes (epoch ms). */
    deadline;
    #deploy;
    #held = [];
    #timer;
    #cancelledAt;
    constructor(timeoutMs, healthTimeoutMs, 
    /** The workflow run's cancel: it ends every share but the grace. */
    cancelled, now = Date.now, timer) {
        this.healthTimeoutMs = healthTimeoutMs;
        this.cancelled = cancelled;
        this.now = now;
        this.#timer = timer ?? (ms => this.#hold(deadline(ms)));
        this.deadline = now() + timeoutMs;
        this.#deploy = this.#any([cancelled, this.#timer(timeoutMs)]);
        cancelled.addEventListener('abort', () => (this.#cancelledAt = now()), { once: true });
    }
    /** Until `timeout`: triggering, following, verifying. */
    deploy() {
        return this.#deploy;
    }
    /** What cancelled the run, in the host's words (see Host.cancelled), without a final period. */
    why() {
        const reason = this.cancelled.reason;
        return (reason instanceof Error ? reason.message : 'The run was cancelled').replace(/\.$/, '');
    }
    /** Time left until `timeout` (ms, never negative). */
    left() {
        return Math.max(0, this.deadline - this.now());
    }
    /**
     * A health check starting now: `health-timeout`, cut short by `timeout` — or by `share`, the
     * rollback's time, for a rollback. `cutShort` says, once it ended, whether that cut it before
     * `health-timeout` ran out.
     */
    health(share) {
        const own = this.#timer(this.healthTimeoutMs);
        const outer = share ?? this.#timer(this.left());
        return {
            signal: this.#any([this.cancelled, own, outer]),
            cutShort: () => outer.aborted && !own.aborted && !this.cancelled.aborted
        };
    }
    /** A rollback starting now: what is left of `timeout`, and never less than `health-timeout`. */
    rollback() {
        return this.#any([this.cancelled, this.#timer(Math.max(this.left(), this.healthTimeoutMs))]);
    }
    /**
     * Undo and report, at most `ms`: everything in the grace share ends `GRACE_MS` after `timeout`
     * (after now, once past it), or within the runner's grace time once the run was cancelled.
     */
    grace(ms = Infinity) {
        const now = this.now();
        const end = this.#cancelledAt === undefined
            ? Math.max(this.deadline, now) + GRACE_MS
            : this.#cancelledAt + CANCEL_GRACE_MS;
        return this.#timer(Math.max(0, Math.min(ms, end - now)));
    }
    /** Stops every timer and unhooks every signal handed out: the step is over. */
    release() {
        for (const held of this.#held.splice(0))
            held.release();
    }
    #any(signals) {
        return this.#hold(linked(signals));
    }
    #hold(held) {
        this.#held.push(held);
        return held.signal;
    }
}

;// CONCATENATED MODULE: ./src/errors.ts
/**
 * An error the user can act on: its message is one line that says what went wrong and what to do.
 * Anything else that reaches the top is a defect and is reported as such.
 */
class ActionError extends Error {
    name = 'ActionError';
}
/** One line, never a stack: the last word on any failure. */
function describeError(error) {
    if (error instanceof ActionError)
        return error.message;
    const text = error instanceof Error ? error.message : String(error);
    return `Unexpected error: ${text.split('\n')[0]}. Please report it with the step's log.`;
}

;// CONCATENATED MODULE: external "node:http"
const external_node_http_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:http");
var external_node_http_default = /*#__PURE__*/__nccwpck_require__.n(external_node_http_namespaceObject);
;// CONCATENATED MODULE: external "node:https"
const external_node_https_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:https");
var external_node_https_default = /*#__PURE__*/__nccwpck_require__.n(external_node_https_namespaceObject);
;// CONCATENATED MODULE: external "node:net"
const external_node_net_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:net");
;// CONCATENATED MODULE: external "node:tls"
const external_node_tls_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:tls");
var external_node_tls_default = /*#__PURE__*/__nccwpck_require__.n(external_node_tls_namespaceObject);
;// CONCATENATED MODULE: ./src/proxy.ts

/**
 * The proxy for a request to `target`, chosen as the runner's own tools (`@actions/http-client`)
 * choose it: `https_proxy`/`HTTPS_PROXY` for https, `http_proxy`/`HTTP_PROXY` for http (the
 * lower-case name first); none for loopback addresses, nor for a host that `no_proxy`/`NO_PROXY`
 * names — `*`, the host, `host:port`, or a domain it ends in (`example.com` or `.example.com`).
 */
function proxyFor(target, env = process.env) {
    if (bypasses(target, env))
        return undefined;
    const [lower, upper] = target.protocol === 'https:' ? ['https_proxy', 'HTTPS_PROXY'] : ['http_proxy', 'HTTP_PROXY'];
    const variable = env[lower] ? lower : upper;
    const value = env[variable];
    if (!value)
        return undefined;
    let url;
    try {
        // A bare `host:port` is an http proxy.
        url = new URL(value.includes('://') ? value : `http://${value}`);
    }
    catch {
        return undefined;
    }
    if (!/^https?:$/.test(url.protocol)) {
        throw new ActionError(`${variable} names a ${url.protocol.slice(0, -1)}:// proxy, but only HTTP and HTTPS proxies are supported: give an http:// or https:// proxy, or add ${target.hostname} to NO_PROXY.`);
    }
    let credentials;
    try {
        if (url.username || url.password) {
            credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
        }
    }
    catch {
        throw new ActionError(`${variable}: the proxy's user or password holds a % that starts no escape: write a % in them as %25 (and other reserved characters as %XX).`);
    }
    return { url, name: url.host, credentials };
}
/** The password of a proxy URL, to mask before anything could print it. */
function proxySecrets(env = process.env) {
    const secrets = [];
    for (const name of ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY']) {
        const value = env[name];
        if (!value)
            continue;
        try {
            const { password } = new URL(value.includes('://') ? value : `http://${value}`);
            if (password)
                secrets.push(password, decoded(password));
        }
        catch {
            // Not a URL: nothing that reads as a password.
        }
    }
    return [...new Set(secrets)];
}
/** `value` with its %XX escapes decoded; as it is when one is malformed. */
function decoded(value) {
    try {
        return decodeURIComponent(value);
    }
    catch {
        return value;
    }
}
/** This machine: `localhost`, 127.x.x.x or [::1]. */
function isLoopback(hostname) {
    const host = hostname.toLowerCase();
    return host === 'localhost' || host.startsWith('127.') || host === '[::1]';
}
function bypasses(target, env) {
    const host = target.hostname.toLowerCase();
    if (!host)
        return false;
    if (isLoopback(host))
        return true;
    const list = env.no_proxy || env.NO_PROXY || '';
    const port = target.port || (target.protocol === 'https:' ? '443' : '80');
    const names = [host, `${host}:${port}`];
    return list
        .split(',')
        .map(item => item.trim().toLowerCase())
        .filter(Boolean)
        .some(item => item === '*' ||
        names.some(name => name === item || name.endsWith(item.startsWith('.') ? item : `.${item}`)));
}

;// CONCATENATED MODULE: ./src/http.ts






/**
 * Why a request got no answer in time. Its code says at which stage: before a connection
 * (`CONNECT_TIMEOUT`: nothing was sent), before the headers, or between chunks of the body.
 */
class HttpTimeout extends Error {
    code;
    constructor(code) {
        super(`no answer in time (${code})`);
        this.code = code;
    }
}
/**
 * An answer that can never be read, however often it is asked for (headers larger than Node
 * reads): the reason says what was wrong with it.
 */
class HttpUnreadable extends Error {
    code = 'UNREADABLE_ANSWER';
}
/** A failure of the connection to the proxy itself (its TLS certificate, say), not past it. */
class ProxyFailure extends Error {
    cause;
    code;
    constructor(cause) {
        super(`the proxy failed: ${cause.message}`);
        this.cause = cause;
        this.code = cause.code ?? '';
    }
}
/** The proxy's refusal to open a tunnel: its status says why (407: it wants credentials). */
class ProxyRefusal extends Error {
    status;
    code = 'PROXY_REFUSED';
    constructor(status) {
        super(`the proxy answered ${status} to CONNECT`);
        this.status = status;
    }
}
/**
 * How long a connection may sit idle before it is closed: servers and the proxies before them
 * close idle ones (Apache after 5 s; firewalls drop them silently), and a request sent on one
 * they closed is lost. Shorter when the server's `Keep-Alive: timeout=N` says so, by a margin.
 */
const IDLE_MS = 4000;
const IDLE_MARGIN_MS = 1000;
/** Methods a request may be sent again with: the server does the same however often it gets it. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** How a connection the server closed while it sat idle fails the next request on it. */
const STALE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
/** The connections to one site, straight or through the runner's proxy for it. */
class HttpAgent {
    /** The outbound proxy the requests go through, when the runner has one for this site. */
    proxy;
    /** Connections kept open between requests (when `keepAlive`). */
    #agent;
    /** A new connection for each request, closed after its answer. */
    #fresh;
    #timeoutMs;
    /** CONNECTs to the proxy still waiting for its answer. */
    #tunnels = new Set();
    /** How long each kept connection may sit idle, from its last answer's `Keep-Alive`. */
    #idleMs = new WeakMap();
    constructor(site, options, env = process.env) {
        this.proxy = proxyFor(site, env);
        this.#timeoutMs = options.timeoutMs;
        const ca = options.ca?.length ? [...defaultCertificates(env), ...options.ca] : undefined;
        const secure = site.protocol === 'https:';
        const Agent = secure ? (external_node_https_default()).Agent : (external_node_http_default()).Agent;
        this.#agent = new Agent({ keepAlive: options.keepAlive ?? false, ...(ca && { ca }) });
        this.#fresh = new Agent({ keepAlive: false, ...(ca && { ca }) });
        const keep = this.#agent.keepSocketAlive.bind(this.#agent);
        this.#agent.keepSocketAlive = duplex => {
            const socket = duplex;
            const idle = this.#idleMs.get(socket) ?? IDLE_MS;
            // Node's own check refuses a connection whose server allows it too short a rest.
            if (idle <= 0 || keep(socket) === false)
                return false;
            // The agent destroys a free connection when its timer fires.
            socket.setTimeout(idle);
            return true;
        };
        const proxy = this.proxy;
        if (!proxy)
            return;
        for (const agent of [this.#agent, this.#fresh]) {
            agent.createConnection = (target, connected) => {
                this.#tunnel(proxy, target, (error, socket) => {
                    if (error || !socket)
                        connected?.(error ?? new ProxyRefusal(0), undefined);
                    else if (!secure)
                        connected?.(null, socket);
                    else {
                        // Checked against the target's name or address; SNI carries names only.
                        const host = target.host ?? 'localhost';
                        const servername = (0,external_node_net_namespaceObject.isIP)(host) ? undefined : host;
                        connected?.(null, external_node_tls_default().connect({ socket, host, servername, ca }));
                    }
                });
                return undefined;
            };
        }
    }
    /**
     * A CONNECT tunnel through `proxy` to the target, for http targets too (so the proxy sees no
     * request), with TLS inside it: the certificate checks and `ca` stay between this step and the
     * target.
     */
    #tunnel(proxy, target, done) {
        const host = target.host ?? 'localhost';
        const authority = `${host.includes(':') ? `[${host}]` : host}:${target.port}`;
        const open = proxy.url.protocol === 'https:' ? (external_node_https_default()).request : (external_node_http_default()).request;
        // The proxy's own TLS is checked against the proxy, whatever the Host header below says.
        const proxyHost = proxy.url.hostname.replace(/^\[|\]$/g, '');
        const tunnel = open(proxy.url, {
            method: 'CONNECT',
            path: authority,
            agent: false,
            servername: (0,external_node_net_namespaceObject.isIP)(proxyHost) ? '' : proxyHost,
            // CONNECT names the target in its Host too (RFC 9110, 9.3.6).
            headers: {
                host: authority,
                ...(proxy.credentials && {
                    'proxy-authorization': `Basic ${Buffer.from(proxy.credentials).toString('base64')}`
                })
            }
        });
        this.#tunnels.add(tunnel);
        tunnel.setTimeout(this.#timeoutMs, () => tunnel.destroy(new HttpTimeout('CONNECT_TIMEOUT')));
        tunnel.once('connect', (answer, socket) => {
            this.#tunnels.delete(tunnel);
            tunnel.setTimeout(0);
            if (answer.statusCode === 200)
                return done(null, socket);
            socket.destroy();
            done(new ProxyRefusal(answer.statusCode ?? 0));
        });
        tunnel.once('error', error => {
            this.#tunnels.delete(tunnel);
            done(error instanceof HttpTimeout ? error : new ProxyFailure(error));
        });
        tunnel.end();
    }
    /**
     * Sends a request; resolves once the answer's headers are in. A request that may be sent again
     * is, at once and on a new connection, when a kept connection turns out closed before any
     * answer: the server closed it while it sat idle, and never saw the request.
     */
    async request(url, request) {
        const agent = request.once ? this.#fresh : this.#agent;
        try {
            return await this.#send(url, request, agent);
        }
        catch (error) {
            const stale = error instanceof StaleConnection;
            if (!stale)
                throw error;
            if (!IDEMPOTENT.has(request.method) || request.signal.aborted)
                throw error.cause;
            return this.#send(url, request, this.#fresh).catch((again) => {
                throw again instanceof StaleConnection ? again.cause : again;
            });
        }
    }
    #send(url, request, agent) {
        const { signal } = request;
        return new Promise((resolve, reject) => {
            if (signal.aborted)
                return reject(signal.reason);
            const send = url.protocol === 'https:' ? (external_node_https_default()).request : (external_node_http_default()).request;
            const headers = request.body === undefined
                ? request.headers
                : { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) };
            let sent;
            try {
                sent = send(url, { method: request.method, headers, agent });
            }
            catch (error) {
                // A value HTTP cannot carry (a line break in a header) is refused before anything leaves.
                return reject(error);
            }
            // One timer, restarted by every sign of life: the stage it fires in names the timeout.
            let stage = 'CONNECT_TIMEOUT';
            let timer;
            // The request until its answer arrives, then the answer: destroying it ends its body too.
            let current = sent;
            const stop = () => {
                clearTimeout(timer);
                signal.removeEventListener('abort', abort);
            };
            const alive = () => {
                clearTimeout(timer);
                timer = setTimeout(() => current.destroy(new HttpTimeout(stage)), this.#timeoutMs);
                // The connection keeps the process alive while it matters; the timer alone must not.
                timer.unref();
            };
            const abort = () => current.destroy(signal.reason);
            signal.addEventListener('abort', abort, { once: true });
            alive();
            sent.on('socket', (socket) => {
                const connected = () => {
                    stage = 'HEADERS_TIMEOUT';
                    alive();
                };
                // A new TLS connection is ready after its handshake; a new plain one once it connects.
                if (sent.reusedSocket)
                    connected();
                else if (socket instanceof external_node_tls_namespaceObject.TLSSocket)
                    socket.once('secureConnect', connected);
                else if (socket.connecting)
                    socket.once('connect', connected);
                else
                    connected();
            });
            sent.on('error', (error) => {
                stop();
                if (sent.reusedSocket && STALE_CODES.has(error.code ?? '')) {
                    reject(new StaleConnection(error));
                }
                else if (error.code === 'HPE_HEADER_OVERFLOW') {
                    reject(new HttpUnreadable('its headers are larger than Node reads (16 KB)'));
                }
                else
                    reject(error);
            });
            sent.on('response', (response) => {
                stage = 'BODY_TIMEOUT';
                current = response;
                this.#idleMs.set(response.socket, idleMsOf(response.headers['keep-alive']));
                // Until its body is read, a failure of the answer is kept (as `errored`), not thrown.
                response.on('error', () => { });
                response.once('close', stop);
                alive();
                resolve({
                    status: response.statusCode ?? 0,
                    header: name => {
                        const value = response.headers[name.toLowerCase()];
                        return Array.isArray(value) ? value[0] : value;
                    },
                    text: () => {
                        const encoding = response.headers['content-encoding'];
                        if (!encoding || encoding === 'identity' || request.headers['accept-encoding']) {
                            return readText(response, alive);
                        }
                        response.destroy();
                        return Promise.reject(new HttpUnreadable(`its body came compressed (${encoding}), which was not asked for`));
                    }
                });
            });
            sent.end(request.body);
        });
    }
    /** Closes every connection, those under way included, so that the process can exit. */
    close() {
        for (const tunnel of this.#tunnels)
            tunnel.destroy();
        this.#agent.destroy();
        this.#fresh.destroy();
    }
}
/** A kept connection was found closed before the request got any answer. */
class StaleConnection extends Error {
    cause;
    constructor(cause) {
        super(cause.message);
        this.cause = cause;
    }
}
/** How long a connection may stay idle after an answer with this `Keep-Alive` header. */
function idleMsOf(keepAlive) {
    const hint = /(?:^|[\s,])timeout=(\d+)/i.exec(keepAlive ?? '')?.[1];
    if (hint === undefined)
        return IDLE_MS;
    return Math.min(IDLE_MS, Number(hint) * 1000 - IDLE_MARGIN_MS);
}
/**
 * The CAs Node trusts by default: its own list, the runner's NODE_EXTRA_CA_CERTS and, where Node
 * reads it, the system's store. Node 20 has no call for that store: its own list and the extra
 * file then.
 */
function defaultCertificates(env) {
    const store = (external_node_tls_default()).getCACertificates;
    if (store)
        return store('default');
    const extra = env.NODE_EXTRA_CA_CERTS;
    let added = [];
    if (extra) {
        try {
            added = (0,external_node_fs_namespaceObject.readFileSync)(extra, 'utf8').match(PEM_CERTIFICATE) ?? [];
        }
        catch {
            // Node itself only warns about a file it cannot read.
        }
    }
    return [...(external_node_tls_default()).rootCertificates, ...added];
}
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
/** The body of `response` as text, whole or not at all. */
function readText(response, alive) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        response.on('data', (chunk) => {
            alive();
            chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('close', () => {
            // Closed before its end: the connection was cut, or the timer or an abort destroyed it.
            if (response.complete)
                resolve(Buffer.concat(chunks).toString('utf8'));
            else
                reject(response.errored ?? cutShort());
        });
    });
}
function cutShort() {
    return Object.assign(new Error('the connection closed before the answer ended'), {
        code: 'ECONNRESET'
    });
}

;// CONCATENATED MODULE: ./src/coolify/errors.ts


/**
 * A request to Coolify that failed. `message` is one line: the request, what came back, and what to
 * do about it. Response bodies are never part of it; only Coolify's short `message` field is.
 */
class CoolifyError extends ActionError {
    request;
    reason;
    hint;
    details;
    name = 'CoolifyError';
    constructor(request, reason, hint, details) {
        super(`${request}: ${reason}${hint ? `. ${hint}` : ''}`);
        this.request = request;
        this.reason = reason;
        this.hint = hint;
        this.details = details;
    }
    get status() {
        return this.details.status;
    }
    /** The same failure, saying how often it was tried when that was more than once. */
    afterAttempts(attempts) {
        if (attempts < 2)
            return this;
        return new CoolifyError(this.request, `${this.reason} (${attempts} attempts)`, this.hint, this.details);
    }
    /** The same failure with a hint that knows the context (which uuid, which input). */
    withHint(hint) {
        return new CoolifyError(this.request, this.reason, hint, this.details);
    }
}
/**
 * Coolify's catch-all answer for a path it has no route for. A 404 about the application ("Application
 * not found.") is a real failure, and so is a bare 404 from something that is not Coolify.
 */
function isMissingRoute(error) {
    return (error instanceof CoolifyError &&
        error.status === 404 &&
        /^not found\.?$/i.test(error.details.serverMessage ?? ''));
}
/** A 404 about the thing asked for (it is not there, or no longer), not about a missing route. */
function isGone(error) {
    return error instanceof CoolifyError && error.status === 404 && !isMissingRoute(error);
}
const TOKEN_HINT = 'Check that the `token` secret holds a current Coolify API token (Keys & Tokens in Coolify) for this instance';
const ABILITIES = 'deploy and read, plus read:sensitive to see build logs (and write for `git-branch`, `domains`, `env`, `image-tag`, `commit` and `delete-preview`)';
/** Coolify's team members are read-only through the API: anything more takes an admin or owner. */
const ROLE_HINT = "A team member's token may only read; deploying, changing settings and reading build logs take a token of an admin or owner: raise the user's role (Team, Members in Coolify) or create the token as an admin or owner";
/** What answers nothing can read come from: a proxy in front of Coolify that rewrites them. */
const UNREADABLE_HINT = 'A proxy in front of Coolify changes its answers: let the API through as Coolify sends it (no compression, no added headers)';
const URL_HINT = "Check `coolify-url`: the instance's address, like https://coolify.example.com, with or without /api/v1";
/** Why a deployment read carries no `logs` at all: for the watcher to tell the user once. */
const LOGS_HIDDEN_HINT = 'Build logs are hidden from this token: Coolify shows them only to a token with the `read:sensitive` ability (or `root`) whose user is an admin or owner of its team.';
/**
 * Coolify's full deployment queue: a 429 like rate limiting, but told by its message. It is not
 * transient for the request: the resources before the full one were queued, so sending it again
 * would deploy them twice.
 */
function isQueueFull(status, serverMessage) {
    return status === 429 && /deployment queue is full/i.test(serverMessage ?? '');
}
/** Turns an HTTP answer that is not a success into the reason and the next step for the user. */
function describeHttpFailure(status, serverMessage, headers, 
/** The address asked for: a redirect to the same host on https says to use https. */
requested) {
    const said = serverMessage ? `${status} "${serverMessage}"` : `${status}`;
    const answered = `Coolify answered ${said}`;
    if (headers['cf-mitigated']) {
        return {
            reason: `Cloudflare stopped the request with a challenge (cf-mitigated: ${headers['cf-mitigated']})`,
            hint: 'Let the runner through: a WAF skip rule for the API, or a Cloudflare Access service token in `headers`',
            transient: false
        };
    }
    const secure = status >= 300 && status < 400 ? httpsOf(requested, headers.location) : undefined;
    if (secure) {
        return {
            reason: `got a ${status} redirect to ${secure}: Coolify's proxy serves it on https only`,
            hint: `Use https:// in \`coolify-url\`: ${secure}`,
            transient: false
        };
    }
    if (status >= 300 && status < 400) {
        const location = hostOf(headers.location);
        return {
            reason: `got a ${status} redirect${location ? ` to ${location}` : ''} instead of Coolify's API`,
            hint: 'This looks like Cloudflare Access or a login page in front of Coolify: pass its service token with the `headers` input (CF-Access-Client-Id and CF-Access-Client-Secret), or check `coolify-url`',
            transient: false
        };
    }
    if (status === 401 && /invalid token/i.test(serverMessage ?? '')) {
        return {
            reason: `${answered}: the token is malformed or was revoked`,
            hint: 'Create a new API token in Coolify (Keys & Tokens) and store it in the `token` secret',
            transient: false
        };
    }
    if (status === 401 || (status === 400 && /invalid token/i.test(serverMessage ?? ''))) {
        return { reason: `${answered}: the token was refused`, hint: TOKEN_HINT, transient: false };
    }
    if (status === 403) {
        const missing = /missing required permissions?:\s*([\w:, -]+)/i
            .exec(serverMessage ?? '')?.[1]
            ?.trim();
        if (missing) {
            return {
                reason: `${answered}`,
                hint: `The token lacks the \`${missing}\` ability: create a token with ${ABILITIES}`,
                transient: false
            };
        }
        if (/missing required team role/i.test(serverMessage ?? '')) {
            return {
                reason: `${answered}: the token's user is only a member of its team`,
                hint: ROLE_HINT,
                transient: false
            };
        }
        const exceeding = /permissions \(([^)]*)\) that exceed your current role/i.exec(serverMessage ?? '')?.[1];
        if (exceeding !== undefined) {
            return {
                reason: `Coolify answered ${status}: the token's abilities (${exceeding}) exceed its user's role in the team`,
                hint: ROLE_HINT,
                transient: false
            };
        }
        if (/api is disabled/i.test(serverMessage ?? '')) {
            return {
                reason: answered,
                hint: "The instance's API is turned off: enable API access in Coolify's settings",
                transient: false
            };
        }
        if (/not allowed to access the api/i.test(serverMessage ?? '')) {
            return {
                reason: answered,
                hint: "This runner's IP address is not on Coolify's API allow-list. GitHub-hosted runners change address: widen the allow-list in Coolify's settings or use a self-hosted runner",
                transient: false
            };
        }
        return {
            reason: answered,
            hint: `The token may not reach this resource: tokens belong to one team and need ${ABILITIES}`,
            transient: false
        };
    }
    if (status === 404 && serverMessage === undefined) {
        // Coolify's own 404s always carry a message; a bare one comes from something else.
        return {
            reason: `got a bare ${status} without Coolify's JSON message: something other than Coolify's API answered`,
            hint: URL_HINT,
            transient: false
        };
    }
    if (status === 405) {
        return {
            reason: answered,
            hint: 'Coolify refused the method: check that `coolify-url` points at a Coolify 4 instance',
            transient: false
        };
    }
    if (isQueueFull(status, serverMessage)) {
        return {
            reason: answered,
            hint: "The server's deployment queue is full; wait for deployments to finish, or raise its queue limit in Coolify",
            transient: false
        };
    }
    if (status === 429) {
        return {
            reason: `${answered}: too many requests`,
            hint: "Coolify's rate limit is shared by all of a user's tokens; raise it or deploy less often",
            transient: true
        };
    }
    if (status >= 500) {
        return {
            reason: answered,
            hint: 'Coolify or a proxy in front of it failed; try again later',
            transient: true
        };
    }
    return { reason: answered, hint: '', transient: false };
}
/** The https origin `location` names, when it is `requested`'s own host asked for over http. */
function httpsOf(requested, location) {
    if (requested?.protocol !== 'http:' || !location)
        return undefined;
    try {
        const target = new URL(location, requested);
        const same = target.protocol === 'https:' && target.hostname === requested.hostname;
        return same ? target.origin : undefined;
    }
    catch {
        return undefined;
    }
}
/** Just the host of a redirect target: enough to recognise a login page, nothing of its query. */
function hostOf(location) {
    if (!location)
        return undefined;
    try {
        return new URL(location).host;
    }
    catch {
        return undefined;
    }
}
/** Failures before a connection was made. */
const CONNECT_CODES = new Set([
    'ECONNREFUSED',
    'ENOTFOUND',
    'EAI_AGAIN',
    'CONNECT_TIMEOUT',
    'EHOSTUNREACH',
    'ENETUNREACH'
]);
/**
 * The request was refused before it left: a value HTTP cannot carry (a control character in a
 * header) or a programming error. Nothing was sent, and sending it again fails the same way.
 */
const ARGUMENT_CODES = new Set([
    'ERR_INVALID_ARG_TYPE',
    'ERR_INVALID_ARG_VALUE',
    'ERR_INVALID_CHAR',
    'ERR_INVALID_HTTP_TOKEN',
    'ERR_INVALID_URL'
]);
const CERTIFICATE_CODES = new Set([
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'UNABLE_TO_GET_ISSUER_CERT',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'CERT_HAS_EXPIRED',
    'CERT_NOT_YET_VALID',
    'ERR_TLS_CERT_ALTNAME_INVALID'
]);
/** Turns a failure to get any answer into the reason and next step. */
function describeNetworkFailure(error, host, 
/** The proxy in between (`host:port`), when there is one: it fails in ways of its own. */
proxy) {
    const code = errorCode(error);
    if (proxy) {
        const failure = describeProxyFailure(error, code, host, proxy);
        if (failure)
            return failure;
    }
    if (code === 'UNREADABLE_ANSWER') {
        return {
            reason: `the answer cannot be read: ${error.message}`,
            hint: UNREADABLE_HINT,
            transient: false,
            unsent: false
        };
    }
    if (ARGUMENT_CODES.has(code)) {
        return {
            reason: `the request was not sent: it holds a value HTTP cannot carry (${code})`,
            hint: 'Look for a stray line break or control character in `token`, `headers` and the other inputs',
            transient: false,
            unsent: true
        };
    }
    const unsent = CONNECT_CODES.has(code) || CERTIFICATE_CODES.has(code);
    if (CERTIFICATE_CODES.has(code)) {
        return {
            reason: `the TLS certificate of ${host} is not trusted (${code})`,
            hint: 'If the instance uses a private CA, give its certificate with the `ca-certificate` input',
            transient: false,
            unsent
        };
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
        return {
            reason: `could not resolve ${host} (${code})`,
            hint: 'Check `coolify-url`',
            transient: true,
            unsent
        };
    }
    if (code === 'ECONNREFUSED') {
        return {
            reason: `${host} refused the connection`,
            hint: 'Check `coolify-url` and that Coolify is up and reachable from this machine',
            transient: true,
            unsent
        };
    }
    if (/TIMEOUT/.test(code)) {
        return { reason: `${host} did not answer in time (${code})`, hint: '', transient: true, unsent };
    }
    return {
        reason: `the connection to ${host} failed (${code || 'no answer'})`,
        hint: '',
        transient: true,
        unsent
    };
}
/**
 * What the proxy did, when it is the proxy that failed: it could not be reached, or it answered
 * the tunnel with something else than 200 (407: it wants credentials; 5xx: it could not reach
 * Coolify). Undefined when the failure lies past the proxy.
 */
function describeProxyFailure(error, code, host, proxy) {
    const hint = 'Check HTTPS_PROXY (or HTTP_PROXY) and NO_PROXY on the runner';
    if (error instanceof ProxyFailure && CERTIFICATE_CODES.has(code)) {
        return {
            reason: `the TLS certificate of the proxy ${proxy} is not trusted (${code})`,
            hint: "`ca-certificate` is for Coolify's certificate, not the proxy's: give the proxy's CA to Node on the runner with NODE_EXTRA_CA_CERTS (the path of a PEM file)",
            transient: false,
            unsent: true
        };
    }
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
        return {
            reason: `could not reach the proxy ${proxy} (${code})`,
            hint,
            transient: true,
            unsent: true
        };
    }
    if (code !== 'PROXY_REFUSED')
        return undefined;
    const status = error.status;
    if (status === 407) {
        return {
            reason: `the proxy ${proxy} wants credentials (407 Proxy Authentication Required)`,
            hint: 'Put the proxy user and password in HTTPS_PROXY, like http://user:password@proxy:3128',
            transient: false,
            unsent: true
        };
    }
    return {
        reason: `the proxy ${proxy} answered ${status} instead of connecting to ${host}`,
        hint: status >= 500 ? '' : hint,
        transient: status >= 500,
        unsent: true
    };
}
function errorCode(error) {
    let current = error;
    for (let depth = 0; current && depth < 4; depth++) {
        const code = current.code;
        if (typeof code === 'string')
            return code;
        current = current.cause;
    }
    return error?.code ?? '';
}

;// CONCATENATED MODULE: external "node:timers/promises"
const promises_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:timers/promises");
;// CONCATENATED MODULE: ./src/coolify/pacing.ts



/**
 * Backoff before attempt `attempt + 1`: exponential with jitter (half fixed, half random), so
 * runners that failed together do not return together. `Retry-After` wins when it is longer.
 */
function backoffDelay(policy, attempt, retryAfterMs, random = Math.random) {
    const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
    const jittered = exponential / 2 + (random() * exponential) / 2;
    return Math.max(Math.round(jittered), retryAfterMs ?? 0);
}
/** `Retry-After` as seconds or an HTTP date, in milliseconds from now. */
function parseRetryAfter(value, now = Date.now()) {
    if (!value)
        return undefined;
    const trimmed = value.trim();
    if (/^\d+(\.\d+)?$/.test(trimmed))
        return Math.ceil(Number(trimmed) * 1000);
    const date = Date.parse(trimmed);
    return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
/** Sleeps, or rejects with the signal's reason as soon as it aborts. */
async function sleep(ms, signal) {
    if (ms <= 0) {
        signal?.throwIfAborted();
        return;
    }
    try {
        await (0,promises_namespaceObject.setTimeout)(ms, undefined, { signal });
    }
    catch {
        throw signal?.reason ?? new Error('aborted');
    }
}
/** Coolify's limiter (Laravel's `throttle:api`): a fixed window opened by its first request. */
const WINDOW_MS = 60_000;
/** Share of every window left to other tools that use the same token. */
const RESERVE_SHARE = 0.2;
/** Past the window's estimated end, a little more for the server's clock and the way there. */
const RESET_MARGIN_MS = 250;
/** How long to wait after a refusal that names no `Retry-After`. */
const BLIND_WAIT_MS = 1000;
/**
 * Coolify's rate limit as the server counts it, for every request to one Coolify user (whose
 * tokens share one limit). Laravel's fixed window: the first request opens it, every request
 * counts until it expires a minute later, a refused one does not. The gate learns the limit and
 * the window from `X-RateLimit-Limit` and `X-RateLimit-Remaining` (`Remaining` = limit − 1 opens a
 * window; a jump back up means a new one, opened by someone else), charges each request it lets
 * through, and holds a request only when the window has nothing left for it — reads keep a fifth
 * of every window for other tools — or after a 429 until its `Retry-After`; never past the end
 * of the window.
 */
class RateGate {
    now;
    wait;
    /** The per-minute limit the server last announced. */
    limitPerMinute;
    /** Left in the current window, less this client's requests on their way; unknown at first. */
    left;
    /** When the current window is over, at the latest. */
    windowEnd = 0;
    /** The lowest `Remaining` answered in the current window. */
    lowest = Infinity;
    inFlight = 0;
    blockedUntil = 0;
    constructor(now = Date.now, wait = sleep) {
        this.now = now;
        this.wait = wait;
    }
    /**
     * Resolves when a request may go out, and charges it to the window. Reads (`read: true`) leave
     * the reserve alone; a trigger or a cancel may spend it.
     */
    async ready(signal, read = false) {
        for (;;) {
            const now = this.now();
            if (now < this.blockedUntil) {
                await this.wait(this.blockedUntil - now, signal);
                continue;
            }
            this.expire(now);
            if (this.left === undefined || this.left > (read ? this.reserve() : 0)) {
                if (this.left !== undefined)
                    this.left--;
                this.inFlight++;
                return;
            }
            // The window is spent for this request: its end gives the budget back.
            await this.wait(Math.max(1, this.windowEnd - now), signal);
        }
    }
    /** A request let through got no answer: it may not have counted, but it is on its way no more. */
    unanswered() {
        this.inFlight = Math.max(0, this.inFlight - 1);
    }
    /** Learns from an answer's rate-limit headers; `retryAfterMs` is set on a 429. */
    observe(limit, remaining, retryAfterMs) {
        const now = this.now();
        const before = this.inFlight;
        this.inFlight = Math.max(0, this.inFlight - 1);
        const max = Number(limit);
        if (limit !== undefined && Number.isFinite(max) && max > 0)
            this.limitPerMinute = max;
        if (retryAfterMs !== undefined) {
            // Refused, and not counted: nothing goes out before Retry-After, when Laravel's window ends.
            const wait = retryAfterMs > 0 ? retryAfterMs : BLIND_WAIT_MS;
            this.blockedUntil = Math.max(this.blockedUntil, now + wait);
            this.windowEnd = this.blockedUntil;
            this.left = 0;
            this.lowest = 0;
            return;
        }
        const answered = Number(remaining);
        if (remaining === undefined || remaining === '' || !Number.isFinite(answered))
            return;
        this.expire(now);
        const opened = this.left === undefined ||
            this.lowest === Infinity ||
            answered === (this.limitPerMinute ?? Infinity) - 1 ||
            // Answers may come back out of order, by as many as were on their way together.
            answered > this.lowest + before;
        if (opened) {
            // Opened at the latest now: counting its end from now never lets a request out too early.
            this.windowEnd = now + WINDOW_MS + RESET_MARGIN_MS;
            this.lowest = answered;
            this.left = answered - this.inFlight;
            return;
        }
        this.lowest = Math.min(this.lowest, answered);
        this.left = Math.min(this.left, answered - this.inFlight);
    }
    /** What the current window has left for reads, when the answers told it. */
    budget() {
        const now = this.now();
        this.expire(now);
        if (this.left === undefined)
            return undefined;
        return {
            spare: Math.max(0, this.left - this.reserve()),
            endsInMs: Math.max(0, Math.max(this.windowEnd, this.blockedUntil) - now)
        };
    }
    /**
     * Past the window's end the whole limit is there again, for whoever opens the next window; the
     * first answer in it tells when that was.
     */
    expire(now) {
        if (this.left === undefined || now < this.windowEnd)
            return;
        this.left = (this.limitPerMinute ?? Infinity) - this.inFlight;
        this.lowest = Infinity;
        this.windowEnd = now + WINDOW_MS + RESET_MARGIN_MS;
    }
    reserve() {
        return Math.ceil((this.limitPerMinute ?? 0) * RESERVE_SHARE);
    }
}
/**
 * How long an address that never answered is tried: a name that does not resolve or a port that
 * refuses from the start is most likely a wrong `coolify-url`, not an outage worth `timeout`.
 */
const FIRST_ANSWER_GRACE_MS = 60_000;
/**
 * Says once that Coolify stopped answering, since when and why, and once that it answers again:
 * an outage of minutes is a few lines in the log, not one per attempt. An address that never
 * answered anything and cannot be connected to is given up after FIRST_ANSWER_GRACE_MS.
 */
class Reachability {
    note;
    now;
    address;
    downSince;
    /** The request whose failure began the outage: its success ends it. */
    openedBy;
    /** Any HTTP answer came, even a refusal: the address is right, and outages get `timeout`. */
    heard = false;
    constructor(note = () => { }, now = Date.now, 
    /** The address, as the user gave it, for the message that gives up on it. */
    address = 'Coolify') {
        this.note = note;
        this.now = now;
        this.address = address;
    }
    /** An HTTP answer came back, whatever it said. */
    answeredAtAll() {
        this.heard = true;
    }
    /**
     * The same failure, no longer worth retrying, once the address never answered anything and
     * could not be connected to for FIRST_ANSWER_GRACE_MS; undefined while it is still worth it.
     */
    givenUp(error, attempts) {
        if (this.heard || !error.details.unsent || this.downSince === undefined)
            return undefined;
        const waited = this.now() - this.downSince;
        if (waited < FIRST_ANSWER_GRACE_MS)
            return undefined;
        return new CoolifyError(error.request, `${this.address} never answered: ${error.reason}, ${attempts} attempts in ${formatDuration(waited)}`, error.hint, { ...error.details, transient: false });
    }
    failed(error) {
        if (error.status === 429) {
            const wait = error.details.retryAfterMs;
            this.note(`${error.request}: ${error.reason}; waiting ${wait === undefined ? 'a moment' : formatDuration(wait)} as Coolify asks.`);
            return;
        }
        if (this.downSince !== undefined)
            return;
        this.downSince = this.now();
        this.openedBy = error.request;
        if (!this.heard && error.details.unsent) {
            this.note(`${this.address} does not answer (${error.request}: ${error.reason}); trying again for ${formatDuration(FIRST_ANSWER_GRACE_MS)}, then giving up.`);
            return;
        }
        this.note(`Coolify is unreachable since ${new Date(this.downSince).toISOString().slice(11, 19)} UTC (${error.request}: ${error.reason}); trying again until \`timeout\`.`);
    }
    /**
     * `request` was answered. Other routes may answer while the failing one does not (a proxy
     * refusing only POST /deploy): only the request that began the outage ends it.
     */
    answered(request) {
        if (this.downSince === undefined || request !== this.openedBy)
            return;
        this.note(`Coolify answers again, after ${formatDuration(this.now() - this.downSince)}.`);
        this.downSince = undefined;
    }
}

;// CONCATENATED MODULE: ./src/coolify/client.ts





const DEFAULT_RETRY = { baseDelayMs: 1000, maxDelayMs: 5000 };
/**
 * Coolify's API: one method per endpoint, JSON in and out. It owns all HTTP: headers, timeouts,
 * retries with backoff, and the shared rate limit. Failures throw CoolifyError.
 */
class CoolifyClient {
    options;
    gate = new RateGate();
    /** Aborted by close(): a call still under way then (a courtesy no one waits for) ends at once. */
    closing = new AbortController();
    /** Whether Coolify answers: shared by every request, told of the trigger's attempts too. */
    reachability;
    http;
    headers;
    retry;
    host;
    /** The outbound proxy requests go through, when the runner has one for Coolify. */
    proxy;
    constructor(options) {
        this.options = options;
        this.http = new HttpAgent(new URL(options.apiUrl), {
            timeoutMs: options.requestTimeoutMs ?? 30_000,
            ca: options.caCertificate ? [options.caCertificate] : undefined,
            keepAlive: true
        }, options.env);
        this.proxy = this.http.proxy;
        this.headers = {
            // Lower-cased, so the action's own headers below replace any of the same name.
            ...Object.fromEntries(Object.entries(options.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])),
            authorization: `Bearer ${options.token}`,
            accept: 'application/json',
            'user-agent': 'deploy-to-coolify-action'
        };
        this.retry = { ...DEFAULT_RETRY, ...options.retry };
        this.host = new URL(options.apiUrl).host;
        this.reachability = new Reachability(options.note, options.now, options.apiUrl.replace(/\/api\/v1\/?$/, ''));
    }
    /**
     * How long to wait before attempt `attempt + 1` after a transient failure: the backoff, or
     * longer when Coolify asked for it with `Retry-After`.
     */
    retryDelay(attempt, retryAfterMs) {
        return backoffDelay(this.retry, attempt, retryAfterMs);
    }
    /** What Coolify's current rate-limit window has left for reads; undefined until it tells. */
    readBudget() {
        return this.gate.budget();
    }
    /**
     * GET /deployments: every queued or in-progress deployment of the team, each the row a read by
     * uuid gives (logs with `read:sensitive`); undefined when the answer is no list at all. Coolify
     * sorts the rows after its query and keeps their keys, so the list may come as an object keyed
     * by the query's order: its values are the rows.
     */
    async runningDeployments(signal) {
        const rows = await this.call({
            method: 'GET',
            path: '/deployments',
            retry: true,
            signal
        });
        if (Array.isArray(rows))
            return rows;
        if (rows && typeof rows === 'object')
            return Object.values(rows);
        return undefined;
    }
    listApplications(signal) {
        return this.call({ method: 'GET', path: '/applications', retry: true, signal });
    }
    getApplication(uuid, signal) {
        return this.call({ method: 'GET', path: `/applications/${enc(uuid)}`, retry: true, signal });
    }
    /** `getApplication`, dated: its status's refresh time is on Coolify's clock. */
    getApplicationDated(uuid, signal) {
        return this.dated({ method: 'GET', path: `/applications/${enc(uuid)}`, retry: true, signal });
    }
    /** `listApplications`, dated. */
    listApplicationsDated(signal) {
        return this.dated({ method: 'GET', path: '/applications', retry: true, signal });
    }
    updateApplication(uuid, changes, signal) {
        return this.call({
            method: 'PATCH',
            path: `/applications/${enc(uuid)}`,
            body: changes,
            retry: true,
            signal
        });
    }
    /**
     * PATCH /applications/{uuid}/envs/bulk: creates or updates each variable by key. Setting the same
     * values twice changes nothing, so it is retried like the application's PATCH.
     */
    updateApplicationEnvs(uuid, variables, signal) {
        return this.call({
            method: 'PATCH',
            path: `/applications/${enc(uuid)}/envs/bulk`,
            body: { data: variables },
            retry: true,
            signal
        });
    }
    /**
     * POST /deploy with its parameters in the query string (old servers read no body). `force` is
     * sent only when true: before 4.2.0 any value, `false` included, forced a rebuild. Not retried
     * here; the caller decides, since a repeated trigger could start a second deployment.
     */
    deploy(request, signal) {
        const query = {
            uuid: request.uuids?.length ? request.uuids.join(',') : undefined,
            tag: request.tags?.length ? request.tags.join(',') : undefined,
            force: request.force ? 'true' : undefined,
            pr: request.pr !== undefined ? String(request.pr) : undefined,
            docker_tag: request.dockerTag
        };
        return this.call({ method: 'POST', path: '/deploy', query, retry: false, signal });
    }
    /** One page of an application's deployments, newest first: `take` rows after the first `skip`. */
    listDeployments(appUuid, take, signal, skip = 0) {
        const query = { skip: String(skip), take: String(take) };
        return this.call({
            method: 'GET',
            path: `/deployments/applications/${enc(appUuid)}`,
            query,
            retry: true,
            signal
        });
    }
    getDeployment(uuid, signal, { final = false } = {}) {
        return this.call({
            method: 'GET',
            path: `/deployments/${enc(uuid)}`,
            retry: true,
            signal,
            final
        });
    }
    /**
     * Not retried here: any answer but 200 calls for a read of the deployment first (Coolify
     * 4.1.0–4.3.6 answered 500 after saving the cancel), which the caller does.
     */
    cancelDeployment(uuid, signal) {
        return this.call({
            method: 'POST',
            path: `/deployments/${enc(uuid)}/cancel`,
            retry: false,
            signal
        });
    }
    /**
     * DELETE /applications/{uuid}/previews/{pr}: Coolify removes the preview's containers and
     * records in the background. Deleting twice is harmless (the second answers 404), so it is
     * retried like a read.
     */
    deletePreview(appUuid, pr, signal) {
        return this.call({
            method: 'DELETE',
            path: `/applications/${enc(appUuid)}/previews/${pr}`,
            retry: true,
            signal
        });
    }
    /** GET /applications/{uuid}/logs: the last `lines` lines of the running container's log. */
    getApplicationLogs(uuid, lines, signal) {
        return this.call({
            method: 'GET',
            path: `/applications/${enc(uuid)}/logs`,
            query: { lines: String(lines) },
            retry: true,
            signal
        });
    }
    /**
     * POST /applications/{uuid}/rollback (4.3+): deploys `commit` again, reusing its image when the
     * server still has it. Not retried: Coolify queues a rollback even when one is under way.
     */
    rollback(uuid, commit, signal) {
        return this.call({
            method: 'POST',
            path: `/applications/${enc(uuid)}/rollback`,
            body: { commit },
            retry: false,
            signal
        });
    }
    /** GET /applications/{uuid}/destinations (4.3+): the primary destination first. */
    listDestinations(uuid, signal) {
        return this.call({
            method: 'GET',
            path: `/applications/${enc(uuid)}/destinations`,
            retry: true,
            signal
        });
    }
    /** GET /servers/{uuid}/destinations (4.3.11): the Docker networks of one server. */
    listServerDestinations(serverUuid, signal) {
        return this.call({
            method: 'GET',
            path: `/servers/${enc(serverUuid)}/destinations`,
            retry: true,
            signal
        });
    }
    /**
     * POST /applications/{uuid}/clone (4.3+): a copy of the application, not deployed. Not retried:
     * a lost answer would make a second copy.
     */
    cloneApplication(uuid, clone, signal) {
        return this.call({
            method: 'POST',
            path: `/applications/${enc(uuid)}/clone`,
            body: clone,
            retry: false,
            signal
        });
    }
    /** POST /applications/private-deploy-key: a new application. Not retried, as a clone. */
    createApplication(app, signal) {
        return this.call({
            method: 'POST',
            path: '/applications/private-deploy-key',
            body: app,
            retry: false,
            signal
        });
    }
    /**
     * DELETE /applications/{uuid}: Coolify removes it in the background, with its own volumes and
     * configuration. Without `docker_cleanup=false` it would also prune the whole server's build
     * cache, so that production's next build starts cold.
     */
    deleteApplication(uuid, signal) {
        return this.call({
            method: 'DELETE',
            path: `/applications/${enc(uuid)}`,
            query: { docker_cleanup: 'false' },
            retry: true,
            signal
        });
    }
    /** GET /applications/{uuid}/storages: its volumes, bind mounts and file mounts. */
    listApplicationStorages(uuid, signal) {
        return this.call({
            method: 'GET',
            path: `/applications/${enc(uuid)}/storages`,
            retry: true,
            signal
        });
    }
    listScheduledTasks(uuid, signal) {
        return this.call({
            method: 'GET',
            path: `/applications/${enc(uuid)}/scheduled-tasks`,
            retry: true,
            signal
        });
    }
    deleteScheduledTask(uuid, taskUuid, signal) {
        return this.call({
            method: 'DELETE',
            path: `/applications/${enc(uuid)}/scheduled-tasks/${enc(taskUuid)}`,
            retry: true,
            signal
        });
    }
    listApplicationTags(uuid, signal) {
        return this.call({
            method: 'GET',
            path: `/applications/${enc(uuid)}/tags`,
            retry: true,
            signal
        });
    }
    removeApplicationTag(uuid, tagUuid, signal) {
        return this.call({
            method: 'DELETE',
            path: `/applications/${enc(uuid)}/tags/${enc(tagUuid)}`,
            retry: true,
            signal
        });
    }
    /** Production variables, then preview ones; values only with `read:sensitive`. */
    listApplicationEnvs(uuid, signal) {
        return this.call({
            method: 'GET',
            path: `/applications/${enc(uuid)}/envs`,
            retry: true,
            signal
        });
    }
    deleteApplicationEnv(uuid, envUuid, signal) {
        return this.call({
            method: 'DELETE',
            path: `/applications/${enc(uuid)}/envs/${enc(envUuid)}`,
            retry: true,
            signal
        });
    }
    /** GET /services: every service the token sees, to find one by the name a tag deploy gave. */
    listServices(signal) {
        return this.call({ method: 'GET', path: '/services', retry: true, signal });
    }
    /** GET /databases: every database the token sees. */
    listDatabases(signal) {
        return this.call({ method: 'GET', path: '/databases', retry: true, signal });
    }
    /** GET /projects: the team's projects, without their environments. */
    listProjects(signal) {
        return this.call({ method: 'GET', path: '/projects', retry: true, signal });
    }
    /** GET /projects/{uuid}: the project and its environments. */
    getProject(uuid, signal) {
        return this.call({ method: 'GET', path: `/projects/${enc(uuid)}`, retry: true, signal });
    }
    /** GET /services/{uuid}, dated: its parts' refresh times are on Coolify's clock. */
    getService(uuid, signal) {
        return this.dated({ method: 'GET', path: `/services/${enc(uuid)}`, retry: true, signal });
    }
    /** GET /databases/{uuid}, dated: its refresh time is on Coolify's clock. */
    getDatabase(uuid, signal) {
        return this.dated({ method: 'GET', path: `/databases/${enc(uuid)}`, retry: true, signal });
    }
    /** The end of a service part's container log; Coolify refuses it unless the container runs. */
    getServiceLogs(uuid, part, lines, signal) {
        return this.call({
            method: 'GET',
            path: `/services/${enc(uuid)}/logs`,
            query: { sub_service_name: part, lines: String(lines) },
            retry: true,
            signal
        });
    }
    /** The end of a database's container log; Coolify refuses it unless the container runs. */
    getDatabaseLogs(uuid, lines, signal) {
        return this.call({
            method: 'GET',
            path: `/databases/${enc(uuid)}/logs`,
            query: { lines: String(lines) },
            retry: true,
            signal
        });
    }
    /**
     * Ends every call still under way, without retrying it, and closes the connections, so that the
     * process can exit.
     */
    async close() {
        this.closing.abort(new ActionError('the step is done with Coolify'));
        this.http.close();
    }
    /**
     * Sends a call, and repeats it on transient failures until its signal aborts: a proxy or
     * Coolify restarting for minutes is normal, and the deployment goes on meanwhile. Aborted, it
     * throws the last failure it met, which says more than the abort.
     */
    async call(call) {
        return (await this.dated(call)).body;
    }
    /** `call`, with the time Coolify sent its answer. */
    async dated(asked) {
        const bounded = linked([asked.signal, this.closing.signal]);
        try {
            return await this.#attempts({ ...asked, signal: bounded.signal });
        }
        finally {
            bounded.release();
        }
    }
    /** `dated`'s attempts, until one is answered, a failure is not transient, or `call.signal` aborts. */
    async #attempts(call) {
        let last;
        for (let attempt = 1;; attempt++) {
            try {
                // GETs that poll leave the share of the window kept for others alone.
                await this.gate.ready(call.signal, call.method === 'GET' && !call.final);
                const answer = (await this.send(call));
                this.reachability.answered(`${call.method} ${call.path}`);
                return answer;
            }
            catch (error) {
                if (call.signal.aborted)
                    throw last?.afterAttempts(attempt - 1) ?? cutOff(call, error);
                if (!(error instanceof CoolifyError) || !error.details.transient || !call.retry) {
                    throw error instanceof CoolifyError ? error.afterAttempts(attempt) : error;
                }
                last = error;
                this.reachability.failed(error);
                const givenUp = this.reachability.givenUp(error, attempt);
                if (givenUp)
                    throw givenUp;
                try {
                    const wait = this.options.sleep ?? sleep;
                    await wait(this.retryDelay(attempt, error.details.retryAfterMs), call.signal);
                }
                catch {
                    throw error.afterAttempts(attempt);
                }
            }
        }
    }
    /** One request, one answer: the parsed JSON body and its date, or a CoolifyError. */
    async send(call) {
        const label = `${call.method} ${call.path}`;
        const url = new URL(this.options.apiUrl + call.path);
        for (const [key, value] of Object.entries(call.query ?? {})) {
            if (value !== undefined)
                url.searchParams.set(key, value);
        }
        const body = call.body === undefined ? undefined : JSON.stringify(call.body);
        const headers = body === undefined ? this.headers : { ...this.headers, 'content-type': 'application/json' };
        let response;
        try {
            response = await this.http.request(url, {
                method: call.method,
                headers,
                body,
                signal: call.signal,
                once: !call.retry
            });
        }
        catch (error) {
            this.gate.unanswered();
            if (call.signal.aborted)
                throw call.signal.reason;
            const { reason, hint, transient, unsent } = describeNetworkFailure(error, this.host, this.proxy?.name);
            throw new CoolifyError(label, reason, hint, { transient, unanswered: true, unsent });
        }
        this.reachability.answeredAtAll();
        const status = response.status;
        const retryAfterMs = parseRetryAfter(response.header('retry-after'));
        // A full deployment queue (told by its message) is not rate limiting: other requests go on.
        const observe = (serverMessage) => this.gate.observe(response.header('x-ratelimit-limit'), response.header('x-ratelimit-remaining'), status === 429 && !isQueueFull(status, serverMessage) ? (retryAfterMs ?? 0) : undefined);
        let text;
        try {
            text = await response.text();
        }
        catch (error) {
            observe();
            if (call.signal.aborted)
                throw call.signal.reason;
            if (error instanceof HttpUnreadable) {
                throw new CoolifyError(label, `the answer (${status}) cannot be read: ${error.message}`, UNREADABLE_HINT, {
                    status,
                    transient: false
                });
            }
            const { reason } = describeNetworkFailure(error, this.host, this.proxy?.name);
            throw new CoolifyError(label, `the answer (${status}) was cut short: ${reason}`, '', {
                status,
                transient: true
            });
        }
        const json = parseJson(text);
        const html = json === undefined && looksLikeHtml(text, response.header('content-type'));
        const serverMessage = messageOf(json);
        observe(serverMessage);
        if (status < 200 || status >= 300) {
            const described = describeHttpFailure(status, serverMessage, {
                location: response.header('location'),
                'cf-mitigated': response.header('cf-mitigated')
            }, url);
            // A web page instead of Coolify's JSON: a proxy failing, or an address that is not the API.
            const page = html && status >= 400 && status !== 429 && !response.header('cf-mitigated');
            const reason = !page
                ? described.reason + invalidFields(json)
                : status >= 500
                    ? `a proxy in front of Coolify answered ${status} with an HTML page`
                    : `got an HTML page (${status}) where Coolify's JSON was expected: a web server or proxy answered, not Coolify's API`;
            const hint = page && status < 500
                ? "Check `coolify-url`: the instance's address, like https://coolify.example.com, with or without /api/v1"
                : described.hint;
            throw new CoolifyError(label, reason, hint, {
                status,
                serverMessage,
                transient: described.transient,
                retryAfterMs
            });
        }
        if (json === undefined) {
            // A 2xx that is not JSON is a proxy's page or a body cut short; neither is Coolify's answer.
            const reason = html
                ? `got an HTML page (${status}) where Coolify's JSON was expected: a proxy or login page answered`
                : `the answer (${status}) was not valid JSON`;
            const hint = html ? 'Check `coolify-url` and any access proxy (`headers`)' : '';
            throw new CoolifyError(label, reason, hint, { status, transient: true });
        }
        const date = Date.parse(response.header('date') ?? '');
        return { body: json, date: Number.isNaN(date) ? undefined : date };
    }
}
function enc(segment) {
    return encodeURIComponent(segment);
}
function parseJson(text) {
    if (text === '')
        return {};
    try {
        return JSON.parse(text);
    }
    catch {
        return undefined;
    }
}
/** Coolify's short `message`, trimmed to one line; never the rest of the body. */
function messageOf(json) {
    const message = json?.message;
    if (typeof message !== 'string')
        return undefined;
    const line = message.split(/[\r\n\u2028\u2029]/)[0].trim();
    return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
/**
 * The fields a validation failure (422) is about. Only their names: the messages may quote the
 * values sent.
 */
function invalidFields(json) {
    const errors = json?.errors;
    const fields = errors && typeof errors === 'object' ? Object.keys(errors).slice(0, 5) : [];
    return fields.length ? ` (invalid: ${fields.join(', ')})` : '';
}
function looksLikeHtml(text, contentType) {
    return /html/i.test(contentType ?? '') || /^\s*</.test(text);
}
/**
 * A call whose signal ended before any answer: aborted with a reason of its own (the run's cancel),
 * it throws that; when a time share ran out, a CoolifyError naming the request rather than a bare
 * "operation aborted".
 */
function cutOff(call, error) {
    if (error instanceof CoolifyError)
        return error;
    const reason = call.signal.reason;
    if (!(reason instanceof DOMException && reason.name === 'TimeoutError'))
        return reason;
    return new CoolifyError(`${call.method} ${call.path}`, 'Coolify did not answer in the time it had', '', { transient: true, unanswered: true, cutOff: true });
}

;// CONCATENATED MODULE: ./src/secrets.ts

/**
 * Values shorter than this are not masked: the runner would star out every "true" or "3000" in the
 * log, and the pull request comment leaves out only what the log does.
 */
const MIN_MASKED_LENGTH = 4;
/** Everything the step masked: what the runner does not mask itself (a pull request comment). */
const masked = new Set();
/**
 * Masks a value in the host's log from now on, and remembers it, so that the pull request
 * comment, which the runner does not mask, can leave it out too.
 */
function mask(value) {
    if (!value)
        return;
    masked.add(value);
    host().mask(value);
}
/** The values masked so far. */
function maskedValues() {
    return [...masked];
}
/**
 * Coolify's hidden entries carry the commands of its deployment job, some with every variable of
 * the application encoded in them (`echo '<base64>' | base64 -d | tee .env`, heredocs): their
 * payloads are replaced before such a line is printed.
 */
function redactPayloads(text) {
    return text
        .replace(/(echo\s+(['"]?))[A-Za-z0-9+/=]{16,}(\2\s*\|\s*base64\b)/g, '$1<redacted>$3')
        .replace(/(<<-?\s*(['"]?)(\w+)\2[^\n]*\n)[\s\S]*?(\n\3\b)/g, '$1<redacted>$4');
}

;// CONCATENATED MODULE: ./src/connect.ts



/**
 * The client for the instance and credentials in `config`, with timeouts scaled to its cadence,
 * through the runner's proxy when it has one (its password masked first).
 */
function connect(config, say) {
    for (const secret of proxySecrets())
        mask(secret);
    const client = new CoolifyClient({
        apiUrl: config.apiUrl,
        token: config.token,
        headers: config.headers,
        caCertificate: config.caCertificate,
        // A read that takes ten poll intervals is stuck; but give slow proxies at least five seconds.
        requestTimeoutMs: Math.min(30_000, Math.max(5000, config.pollIntervalMs * 10)),
        // Retries back off, but never so far that Coolify's return goes unnoticed for long.
        retry: {
            baseDelayMs: Math.min(1000, config.pollIntervalMs),
            maxDelayMs: Math.max(5000, 2 * config.pollIntervalMs)
        },
        note: say.note
    });
    if (client.proxy)
        say.note(`Requests to Coolify go through the proxy ${client.proxy.name}`);
    return client;
}

;// CONCATENATED MODULE: ./src/model/logs.ts

/** How much of the text before a log's closing `]` must be unchanged to count as the same log. */
const PROBE_LENGTH = 64;
/**
 * Turns successive reads of one deployment's full log into the lines not seen before.
 *
 * Coolify has no log offset: every read returns the whole log again. 4.x sends a JSON array of
 * entries in a string, appended to in order; the contract sends newline-separated text. Either
 * way the log only grows, so the cursor remembers where the last read ended and parses only what
 * came after it: the work per read grows with the new lines, not with the log. A 4.x log that did
 * not just grow (reordered, trimmed, a stale copy) is parsed whole and matched entry by entry.
 */
class LogCursor {
    showHidden;
    /** Entries (4.x) or characters (text) taken so far. */
    consumed = 0;
    /** Where the last whole 4.x log read ended (its closing `]`), and the text just before it. */
    arrayEnd = -1;
    probe = '';
    /** The last entry taken, to recognise the same log grown when it must be parsed whole. */
    lastEntry;
    /** (batch, order) of every entry taken, so that none is taken twice when the log is reordered. */
    taken = new Set();
    /** The command whose `$ command` line was printed last, with its batch. */
    lastCommand;
    /** Text of an unterminated last line, held until it ends or the deployment does. */
    pending = '';
    sawClosing = false;
    constructor(showHidden) {
        this.showHidden = showHidden;
    }
    /** Grows whenever a read brings anything new, hidden entries and unfinished lines included. */
    get progress() {
        return this.taken.size + this.consumed + this.pending.length;
    }
    /** Coolify's last entry has been read: no more lines will come. */
    get closed() {
        return this.sawClosing;
    }
    /** The new visible lines in `logs`, the deployment's whole log as read now. */
    next(logs) {
        if (!logs)
            return [];
        if (!JSON_ARRAY.test(logs))
            return this.nextText(logs);
        let fresh = this.appended(logs);
        let grown = fresh !== undefined;
        if (!fresh) {
            const entries = parseEntries(logs);
            // An array that does not parse was cut off on the way: wait for a whole one.
            if (!entries)
                return [];
            grown =
                entries.length >= this.consumed &&
                    (this.consumed === 0 || sameEntry(entries[this.consumed - 1], this.lastEntry));
            // Not the log seen before plus entries at its end (reordered, trimmed, a stale copy): take
            // every entry not taken yet, wherever it stands.
            fresh = grown
                ? entries.slice(this.consumed)
                : entries.filter(entry => !this.taken.has(keyOf(entry)));
        }
        this.take(fresh, grown);
        // Only a log holding all that was taken may serve as the start of the next one.
        this.arrayEnd = grown ? logs.lastIndexOf(']') : -1;
        this.probe = grown ? logs.slice(Math.max(0, this.arrayEnd - PROBE_LENGTH), this.arrayEnd) : '';
        return this.linesOf(fresh);
    }
    /** At the end of a deployment: the last line, even without a closing newline. */
    flush() {
        const text = this.pending;
        this.pending = '';
        return text ? [{ kind: 'stdout', text }] : [];
    }
    /**
     * The entries after those of the last read, parsed alone, when `logs` is that log with entries
     * appended: unchanged up to where it ended, then `,` and more (or nothing more). Undefined
     * when it is not, and the whole log must be parsed.
     */
    appended(logs) {
        const end = this.arrayEnd;
        if (end < 0 || logs.length <= end || !logs.startsWith(this.probe, end - this.probe.length)) {
            return undefined;
        }
        if (logs.length === end + 1 && logs.charCodeAt(end) === CLOSE)
            return [];
        if (logs.charCodeAt(end) !== COMMA)
            return undefined;
        return parseEntries(`[${logs.slice(end + 1)}`);
    }
    /**
     * Records new entries as taken. Those that extend the log seen so far also move its end, which
     * the next read is compared with; others (from a reordered log) do not.
     */
    take(fresh, grown) {
        for (const entry of fresh)
            this.taken.add(keyOf(entry));
        if (!grown || fresh.length === 0)
            return;
        this.consumed += fresh.length;
        this.lastEntry = fresh[fresh.length - 1];
    }
    /** The printed lines of new entries, in Coolify's (batch, order). */
    linesOf(fresh) {
        // New entries nearly always come in that order already; a stable sort keeps it otherwise.
        fresh.sort(byBatchAndOrder);
        const lines = [];
        for (const entry of fresh) {
            if (CLOSING.test(entry.output ?? ''))
                this.sawClosing = true;
            if (entry.hidden && !this.showHidden)
                continue;
            const hidden = entry.hidden ? { hidden: true } : {};
            // Hidden entries are the job's own commands, some carrying every variable encoded.
            const shown = (text) => (entry.hidden ? redactPayloads(text) : text);
            if (entry.command) {
                const key = `${entry.batch ?? 0}\u0000${entry.command}`;
                if (key !== this.lastCommand) {
                    this.lastCommand = key;
                    lines.push({ kind: 'command', text: shown(entry.command), ...hidden });
                }
            }
            const kind = entryKind(entry.type);
            for (const text of shown(entry.output ?? '').split('\n'))
                lines.push({ kind, text: withoutCr(text), ...hidden });
        }
        return lines;
    }
    nextText(logs) {
        if (logs.length < this.consumed)
            return [];
        const end = logs.lastIndexOf('\n');
        if (end < this.consumed) {
            this.pending = logs.slice(this.consumed);
            if (CLOSING.test(this.pending))
                this.sawClosing = true;
            return [];
        }
        const chunk = logs.slice(this.consumed, end);
        this.consumed = end + 1;
        this.pending = logs.slice(this.consumed);
        if (CLOSING_LINE.test(chunk) || CLOSING.test(this.pending))
            this.sawClosing = true;
        return chunk.split('\n').map(text => ({ kind: 'stdout', text: withoutCr(text) }));
    }
}
/**
 * The entry Coolify's deployment job writes last, after the final status: "Gracefully shutting
 * down build container: <uuid>".
 */
const CLOSING = /^Gracefully shutting down build container\b/;
const CLOSING_LINE = /^Gracefully shutting down build container\b/m;
const COMMA = 0x2c;
const CLOSE = 0x5d;
/** 4.x logs open with an array of objects; text logs (even `[+] Building`) do not. */
const JSON_ARRAY = /^\s*\[\s*[{\]]/;
function parseEntries(logs) {
    try {
        const parsed = JSON.parse(logs);
        return Array.isArray(parsed) ? parsed : undefined;
    }
    catch {
        return undefined;
    }
}
function withoutCr(text) {
    return text.endsWith('\r') ? text.slice(0, -1) : text;
}
function entryKind(type) {
    if (type === 'stderr' || type === 'error')
        return 'stderr';
    if (type === 'info' || type === 'warning')
        return type;
    return 'stdout';
}
function byBatchAndOrder(a, b) {
    return (a.batch ?? 0) - (b.batch ?? 0) || (a.order ?? 0) - (b.order ?? 0);
}
function sameEntry(a, b) {
    return (a !== undefined &&
        b !== undefined &&
        a.batch === b.batch &&
        a.order === b.order &&
        a.output === b.output &&
        a.command === b.command);
}
/** Coolify numbers entries by `order` (the first has none) within a `batch`. */
function keyOf(entry) {
    return (entry.batch ?? 0) * 2 ** 24 + (entry.order ?? 0);
}

;// CONCATENATED MODULE: ./src/follow/cancel.ts


/**
 * Asks Coolify to cancel a deployment, and tells the truth about what happened. Only a 200 means
 * cancelled; after any other answer the deployment is read: a 400 usually means it ended
 * meanwhile (or lost a race), and Coolify 4.1.0–4.3.6 answered 500 after saving the cancel.
 */
async function cancelDeployment(client, uuid, signal) {
    for (let attempt = 1;; attempt++) {
        let problem;
        let transient = false;
        let detail;
        try {
            await client.cancelDeployment(uuid, signal);
            return { cancelled: true };
        }
        catch (error) {
            problem = `could not cancel it in Coolify: ${describeError(error)}`;
            transient = error.details?.transient === true;
            const status = CURRENT_STATUS.exec(error.details?.serverMessage ?? '')?.[1];
            if (status)
                detail = { status };
        }
        try {
            detail = await client.getDeployment(uuid, signal);
        }
        catch {
            // What the refusal told, if anything, is all there is to know.
        }
        if (detail && statusFromCoolify(detail.status) === 'cancelled')
            return { cancelled: true, detail };
        if (detail && !isUnderWay(detail.status))
            return { cancelled: false, detail };
        // Still running after a failure that may pass (a proxy's 502, a reset): ask once more.
        if (!transient || attempt === CANCEL_ATTEMPTS || signal.aborted) {
            return { cancelled: false, detail, problem };
        }
    }
}
const CANCEL_ATTEMPTS = 2;
/** Coolify's refusal names the status: "Deployment cannot be cancelled. Current status: finished". */
const CURRENT_STATUS = /current status:\s*([\w-]+)/i;

;// CONCATENATED MODULE: ./src/follow/batch.ts


/**
 * Reads due at the same turn share one request, so that many followed at once cost one request a
 * turn, not one each. A round gathers the waiters, waits for a turn, reads once for all their keys
 * and answers each, then a new round starts for any who came meanwhile.
 */
class Batch {
    options;
    #waiting = new Map();
    #reading = false;
    /** Told when every key expected waits. */
    #allWaiting;
    constructor(options) {
        this.options = options;
    }
    /**
     * `key`'s answer from the next read. A round this call begins goes under `signal`; `leave`, when
     * given, ends this waiter's wait alone, and the read itself once every waiter of it has left.
     */
    wait(key, signal, leave) {
        return new Promise((resolve, reject) => {
            if (leave?.aborted)
                return reject(this.#left(leave));
            const onLeave = () => reject(this.#left(leave));
            leave?.addEventListener('abort', onLeave, { once: true });
            // A signal waited with read after read (a health check's) must not gather a listener each.
            const done = () => leave?.removeEventListener('abort', onLeave);
            const waiters = this.#waiting.get(key) ?? [];
            waiters.push({
                resolve: result => (done(), resolve(result)),
                reject: error => (done(), reject(error)),
                leave
            });
            this.#waiting.set(key, waiters);
            if (this.#waiting.size >= this.options.expected())
                this.#allWaiting?.();
            if (!this.#reading)
                void this.#readAll(signal);
        });
    }
    /** Reads for everyone waiting once the turn comes, then again for any who came meanwhile. */
    async #readAll(signal) {
        this.#reading = true;
        try {
            await this.#gather(signal);
            await this.options.turn(signal);
        }
        catch (error) {
            void this.#settle(this.#take(), () => Promise.reject(error));
            this.#reading = false;
            return;
        }
        const batch = this.#take();
        const read = readSignal(batch, signal);
        try {
            await this.#settle(batch, () => this.options.read([...batch.keys()], read.signal));
        }
        finally {
            read.release();
        }
        this.#reading = false;
        if (this.#waiting.size > 0)
            void this.#readAll(signal);
    }
    /**
     * Reads due together still come a few milliseconds apart (deployments that end together are
     * read for the last time apart): the first due waits a moment for the others.
     */
    async #gather(signal) {
        const { expected, gatherMs } = this.options;
        if (this.#waiting.size >= expected() || gatherMs <= 0)
            return;
        const all = new Promise(resolve => (this.#allWaiting = resolve));
        try {
            await Promise.race([all, (this.options.sleep ?? sleep)(gatherMs, signal)]);
        }
        finally {
            this.#allWaiting = undefined;
        }
    }
    #take() {
        const batch = new Map(this.#waiting);
        this.#waiting.clear();
        return batch;
    }
    async #settle(batch, read) {
        let answer;
        try {
            answer = await read();
        }
        catch (error) {
            for (const waiters of batch.values())
                for (const { reject } of waiters)
                    reject(error);
            return;
        }
        for (const [key, waiters] of batch) {
            try {
                const result = answer(key);
                for (const { resolve } of waiters)
                    resolve(result);
            }
            catch (error) {
                for (const { reject } of waiters)
                    reject(error);
            }
        }
    }
    #left(signal) {
        return this.options.left ? this.options.left(signal) : signal.reason;
    }
}
/**
 * The read's signal: the round's, and when every waiter may leave, aborted too once all have left,
 * since nobody waits for the read any more.
 */
function readSignal(batch, signal) {
    const leaves = [...batch.values()].flat().map(waiter => waiter.leave);
    if (!leaves.every((leave) => leave !== undefined)) {
        return { signal, release: () => undefined };
    }
    const abandoned = new AbortController();
    const left = () => {
        if (leaves.every(leave => leave.aborted))
            abandoned.abort();
    };
    for (const leave of leaves)
        leave.addEventListener('abort', left, { once: true });
    left();
    const read = linked([signal, abandoned.signal]);
    return {
        signal: read.signal,
        release: () => {
            for (const leave of leaves)
                leave.removeEventListener('abort', left);
            read.release();
        }
    };
}

;// CONCATENATED MODULE: ./src/follow/deployment-reads.ts


/**
 * Reads of running deployments, for all rollouts: the reads due at the same turn share one
 * request — a deployment's own read when it is alone, else GET /deployments, every running
 * deployment of the team in one answer — so thirty deployments cost one read a turn, not thirty.
 * A deployment missing from that list has ended: its follower reads it once by uuid, for its final
 * status and last lines. A server without the list, or a token it refuses, is read by uuid.
 */
class DeploymentReads {
    client;
    turn;
    #batch;
    /** False once the list was refused: reads by uuid from then on. */
    #listed = true;
    constructor(client, 
    /** Waits for the next turn among the step's reads of Coolify. */
    turn, 
    /** How many deployments are followed through these reads now. */
    followed = () => 1, 
    /** Longest a turn waits for the others to be due too. */
    gatherMs = 0) {
        this.client = client;
        this.turn = turn;
        this.#batch = new Batch({
            turn,
            read: (uuids, signal) => this.readRunning(uuids, signal),
            expected: followed,
            gatherMs
        });
    }
    /** Requests a turn costs while `running` deployments are followed. */
    perTurn(running) {
        return this.#listed ? Math.min(running, 1) : running;
    }
    /** The deployment's own read, in its turn. */
    async one(uuid, signal) {
        await this.turn(signal);
        return this.client.getDeployment(uuid, signal);
    }
    /**
     * A read of a deployment that has ended (it left the running list, or its closing lines are
     * due): it ends the step's work on it, so it goes as soon as the window has any request left,
     * the share kept for other tools included, rather than waiting for a turn.
     */
    final(uuid, signal) {
        return this.client.getDeployment(uuid, signal, { final: true });
    }
    /** The deployment as the next turn's reads find it, while it runs. */
    running(uuid, signal) {
        if (!this.#listed)
            return this.one(uuid, signal).then(detail => ({ detail }));
        return this.#batch.wait(uuid, signal);
    }
    /** One read for all `uuids`: its own read for one, else the list, else each by uuid. */
    async readRunning(uuids, signal) {
        if (uuids.length === 1) {
            const detail = await this.client.getDeployment(uuids[0], signal);
            return () => ({ detail });
        }
        const rows = this.#listed ? await this.list(signal) : undefined;
        if (!rows) {
            // Each its own read, each in its turn, as the budget allows.
            const details = await Promise.all(uuids.map(uuid => this.one(uuid, signal)));
            return uuid => ({ detail: details[uuids.indexOf(uuid)] });
        }
        return uuid => {
            const detail = rows.find(row => (row?.deployment_uuid ?? row?.uuid) === uuid);
            return detail ? { detail } : { left: true };
        };
    }
    /** The running deployments; undefined when the server refuses the list or has none to give. */
    async list(signal) {
        try {
            const rows = await this.client.runningDeployments(signal);
            if (rows)
                return rows;
        }
        catch (error) {
            // A failure that would pass (an outage) fails the read as any other read; the rest says
            // the list is not there for this token or server, and the read by uuid tells what it must.
            if (!(error instanceof CoolifyError) || error.details.transient || signal.aborted)
                throw error;
        }
        this.#listed = false;
        return undefined;
    }
}

;// CONCATENATED MODULE: ./src/coolify/answers.ts
/**
 * Reading values out of Coolify's answers, which older servers and odd rows give in other shapes:
 * its timestamps, and its lists.
 */
/** Epoch ms of one of Coolify's timestamps (ISO 8601, microseconds allowed); undefined if none. */
function timeOf(value) {
    if (typeof value !== 'string' || value === '')
        return undefined;
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
}
function listOf(value) {
    return Array.isArray(value) ? value : [];
}

;// CONCATENATED MODULE: ./src/follow/history.ts



/** Coolify's clock and ours may differ a little; a deployment this much older still counts. */
const CLOCK_SLACK_MS = 5000;
/** History rows read at a time: the newest few are enough to find one started moments ago. */
const HISTORY_ROWS = 10;
/** Pages `trigger: false` reads at most in one search: a busy history's rows of other pull requests. */
const PAGES_SEARCHED = 20;
/**
 * The deployment a trigger started or joined, from the application's history: the newest one
 * (of the same pull request and commit, where known) that was under way at the trigger or began
 * after it, whatever its status now — a quick deployment may have finished already. Undefined
 * when there is none.
 *
 * This resolves Coolify's placeholder uuids ("already queued" answers carry one it never saved),
 * a trigger whose answer was lost, and a trigger cut off by a cancelled run.
 */
async function findStarted(client, appUuid, mark, signal) {
    return (await findStartedRow(client, appUuid, mark, signal))?.deployment_uuid;
}
/** `findStarted`'s row, and whether it was created before the trigger: then another's, joined. */
async function findStartedRow(client, appUuid, mark, signal) {
    const row = (await history_history(client, appUuid, signal)).find(item => isFrom(item, mark));
    if (!row)
        return undefined;
    const created = timeOf(row.created_at);
    return {
        deployment_uuid: row.deployment_uuid,
        joined: created !== undefined && created < mark.at - CLOCK_SLACK_MS
    };
}
/**
 * The deployment a trigger created, for the post step to cancel: a row created after it that
 * matches what it queued (see `queuedBy`), never one under way before it (a trigger that joined
 * another's deployment did not start it), and only when no other row could be it as well.
 */
async function findCreated(client, appUuid, mark, signal) {
    const since = mark.at - CLOCK_SLACK_MS;
    const created = (item) => (timeOf(item.created_at) ?? -Infinity) >= since;
    const rows = (await history_history(client, appUuid, signal)).filter(item => queuedBy(item, mark) && created(item));
    return rows.length === 1
        ? { uuid: rows[0].deployment_uuid, candidates: 1 }
        : { candidates: rows.length };
}
/**
 * Whether the row can be what an API trigger of `mark` queued: of its pull request, not a
 * webhook's nor the UI's (where Coolify says), and of its commit: the pinned one with `commit`,
 * else `HEAD`, which the job turns into the head's sha once it starts, so a row of a sha counts
 * only when Coolify says the API queued it. A push webhook always queues a sha.
 */
function queuedBy(item, mark) {
    if (typeof item?.deployment_uuid !== 'string')
        return false;
    if (Number(item.pull_request_id ?? 0) !== (mark.pr ?? 0))
        return false;
    if (item.is_webhook === true || item.is_api === false)
        return false;
    const commit = typeof item.commit === 'string' && item.commit ? item.commit : 'HEAD';
    if (mark.commit)
        return sameCommit(commit, mark.commit);
    return commit === 'HEAD' || item.is_api === true;
}
/**
 * The newest deployment of `commit` (and of pull request `pr`, or production) in the
 * application's history, whenever it was created and whatever its status: what `trigger: false`
 * follows. Another commit's deployment is never taken. Pages through the history, newest first,
 * until it finds one, reaches `seen` (the newest row an earlier search read: older ones were
 * searched then), the end of the history, or PAGES_SEARCHED pages.
 */
async function findOfCommit(client, appUuid, { commit, pr }, signal, seen) {
    const ofCommit = (item) => typeof item?.deployment_uuid === 'string' &&
        Number(item.pull_request_id ?? 0) === (pr ?? 0) &&
        typeof item.commit === 'string' &&
        sameCommit(item.commit, commit);
    let newest;
    for (let page = 0; page < PAGES_SEARCHED; page++) {
        const rows = await history_history(client, appUuid, signal, page * HISTORY_ROWS);
        newest ??= rows[0]?.deployment_uuid;
        for (const item of rows) {
            if (ofCommit(item))
                return { uuid: item.deployment_uuid, newest };
            if (seen !== undefined && item?.deployment_uuid === seen)
                return { newest };
        }
        if (rows.length < HISTORY_ROWS)
            break;
    }
    return { newest };
}
/** `findOfCommit` until it finds one or `signal` aborts (then undefined), in the step's turns. */
async function findOfCommitWithin(client, appUuid, wanted, turn, signal) {
    let seen;
    try {
        for (;;) {
            await turn(signal);
            const found = await findOfCommit(client, appUuid, wanted, signal, seen);
            if (found.uuid)
                return found.uuid;
            seen = found.newest ?? seen;
            await sleep(wanted.pollIntervalMs, signal);
        }
    }
    catch (error) {
        if (signal.aborted)
            return undefined;
        throw error;
    }
}
async function history_history(client, appUuid, signal, skip = 0) {
    const answer = await client.listDeployments(appUuid, HISTORY_ROWS, signal, skip);
    return listOf(answer?.deployments);
}
function isFrom(item, mark) {
    if (typeof item?.deployment_uuid !== 'string')
        return false;
    if (item.pull_request_id !== undefined && Number(item.pull_request_id) !== (mark.pr ?? 0)) {
        return false;
    }
    if (mark.commit && item.commit && item.commit !== 'HEAD' && !sameCommit(item.commit, mark.commit))
        return false;
    const since = mark.at - CLOCK_SLACK_MS;
    const created = timeOf(item.created_at);
    const finished = timeOf(item.finished_at);
    return (isUnderWay(item.status) ||
        (created !== undefined && created >= since) ||
        (finished !== undefined && finished >= since));
}
/** Full or abbreviated SHAs of the same commit. */
function sameCommit(a, b) {
    const [short, long] = a.length <= b.length ? [a, b] : [b, a];
    return short.length >= 7 && long.toLowerCase().startsWith(short.toLowerCase());
}

;// CONCATENATED MODULE: ./src/follow/pacer.ts

/** How far ahead the reads the followers' cadence will ask for are planned. */
const PLAN_AHEAD_MS = 10_000;
/**
 * When the next read may go, planned against what Coolify's rate-limit window has left (the
 * client's gate keeps a fifth of it for other tools, and never lets a request past it). While the
 * window has more than the followers' cadence needs in the next seconds, a read due goes at once,
 * however many are due together (a burst of deployments ending); nearly spent, what is left is
 * spread until the window's end; spent, reads wait for that end, and no longer.
 */
class ReadPacer {
    budget;
    cadence;
    now;
    /** When the last read of a nearly spent window was let through. */
    last = -Infinity;
    constructor(budget, 
    /** Reads a millisecond the followers ask for while deployments run. */
    cadence, now = Date.now) {
        this.budget = budget;
        this.cadence = cadence;
        this.now = now;
    }
    turn(signal) {
        return sleep(this.take(), signal);
    }
    /** Takes the next turn; how long until it comes. */
    take() {
        const window = this.budget();
        if (!window)
            return 0;
        if (window.spare <= 0)
            return window.endsInMs;
        const due = Math.ceil(Math.min(window.endsInMs, PLAN_AHEAD_MS) * this.cadence());
        if (window.spare > due)
            return 0;
        const now = this.now();
        const at = Math.max(now, this.last + Math.ceil(window.endsInMs / (window.spare + 1)));
        this.last = at;
        return at - now;
    }
}

;// CONCATENATED MODULE: ./src/follow/follower.ts









/** First reads come quickly, so a deployment that fails at once is reported at once. */
const FIRST_DELAY_MS = 500;
/**
 * Coolify writes its closing entry 0.4–1.2 s after the final status, with nothing in between:
 * without it, reads go on at this pace until the log has been quiet for longer than that.
 */
const CLOSING_PAUSE_MS = 500;
const CLOSING_QUIET_MS = 1500;
/**
 * A deployment that left the list of running ones ended within the last turn: read a moment later,
 * its closing entry is most often there already, and one read gives the status and the last lines.
 */
const LEFT_PAUSE_MS = 1000;
/** Longest the first deployment due waits for the others, so that one read serves them all. */
const GATHER_MS = 250;
/**
 * Follows deployments to their end, each on its own cadence within one shared read budget, and
 * sends new log lines to the sink. Every rollout follows its deployments through the one Follower
 * of the step, so however many there are, reads go out at the budget's pace. It owns the reading;
 * the client owns the HTTP, the rollout decides what an unfinished deployment becomes.
 */
class Follower {
    client;
    options;
    cursors = new Map();
    /** Why the last reads failed, when the wait ended while Coolify could not be read. */
    unread = new Map();
    /** Deployments followed now, until they end. */
    running = new Set();
    /** Deployments no longer in the list of running ones: read by uuid from then on. */
    unlisted = new Set();
    pacer;
    reads;
    logsHidden = false;
    constructor(client, options) {
        this.client = client;
        this.options = options;
        this.pacer = new ReadPacer(() => client.readBudget(), () => this.reads.perTurn(this.running.size) / options.pollIntervalMs);
        this.reads = new DeploymentReads(client, signal => this.pacer.turn(signal), () => [...this.running].filter(deployment => !this.unlisted.has(deployment)).length, Math.min(GATHER_MS, options.pollIntervalMs));
    }
    /**
     * Follows the deployment until it ends or `signal` aborts. `mark`, what its trigger asked for,
     * finds the real deployment behind a uuid Coolify does not know.
     */
    async follow(deployment, mark, signal) {
        if (!deployment.running)
            return;
        this.options.sink.begin(deployment);
        this.running.add(deployment);
        try {
            await this.followRunning(deployment, mark, signal);
        }
        finally {
            this.running.delete(deployment);
        }
    }
    async followRunning(deployment, mark, signal) {
        let resolved = false;
        for (let reads = 0; !signal.aborted; reads++) {
            const began = Date.now();
            try {
                await this.read(deployment, signal);
            }
            catch (error) {
                if (signal.aborted) {
                    // A read the deadline merely cut short is no sign of trouble; one Coolify left
                    // unanswered for longer than a turn, or that failed, is.
                    const waited = Date.now() - began >= Math.max(this.options.pollIntervalMs, 1000);
                    if (error instanceof CoolifyError && (!error.details.cutOff || waited)) {
                        this.unread.set(deployment, `${error.request}: ${error.reason}`);
                    }
                    break;
                }
                if (error instanceof CoolifyError && error.status === 404 && !resolved) {
                    // A uuid Coolify never saved (a placeholder): follow the deployment it stands for.
                    resolved = true;
                    if (await this.resolve(deployment, mark, signal))
                        continue;
                }
                deployment.end('failed', `could not read the deployment: ${describeError(error)}`);
                break;
            }
            if (deployment.ended) {
                await this.readClosingLines(deployment, signal);
                break;
            }
            try {
                await sleep(Math.min(this.options.pollIntervalMs, FIRST_DELAY_MS * 2 ** reads), signal);
            }
            catch {
                break;
            }
        }
        if (deployment.ended)
            this.close(deployment);
    }
    /**
     * Cancels the deployment in Coolify within `signal`, prints the lines it wrote until then, and
     * ends it with `status` and `why` — unless it ended on its own meanwhile, which it keeps.
     */
    async stop(deployment, status, why, signal) {
        const result = await cancelDeployment(this.client, deployment.uuid, signal);
        try {
            // The lines written until the cancel; a courtesy that must not hold up the cancel's outcome.
            // A refusal names the status but carries no log: that is not a log hidden from the token.
            if (result.detail && 'logs' in result.detail)
                this.take(deployment, result.detail);
            else if (result.detail)
                deployment.observe(result.detail, this.options.instanceUrl);
            else
                await this.readOne(deployment, signal);
        }
        catch {
            // Reported below from what is known.
        }
        const unread = this.unread.get(deployment);
        const reason = why + (unread ? ` while Coolify could not be read (${unread})` : '');
        if (result.cancelled) {
            deployment.end(status, `${reason}; it was cancelled in Coolify`);
        }
        else if (!deployment.ended) {
            deployment.end(status, `${reason}, and it may still be running in Coolify: ${result.problem ?? 'its status is unknown'}`);
        }
        this.close(deployment);
    }
    /** Ends the deployment with `status` without cancelling it: it goes on in Coolify. */
    leave(deployment, status, reason) {
        deployment.end(status, reason);
        this.close(deployment);
    }
    /** No more lines will come: the last one, then the sink's end. */
    close(deployment) {
        this.flush(deployment);
        this.options.sink.end(deployment);
    }
    /** Follows the real deployment behind an unknown uuid; false when there is none to follow. */
    async resolve(deployment, mark, signal) {
        const real = await findStarted(this.client, deployment.appUuid, mark, signal).catch(() => undefined);
        if (!real || real === deployment.uuid)
            return false;
        this.options.say.note(`${deployment.name}: Coolify does not know deployment ${deployment.uuid}; following ${real}, the one it started.`);
        deployment.follow(real);
        return true;
    }
    /**
     * Coolify writes its last lines (configuration, "Gracefully shutting down build container") up
     * to a few seconds after the final status, many of them hidden: unless its closing entry is
     * already read, read again while the log grows.
     */
    async readClosingLines(deployment, signal) {
        if (!this.options.logs || this.logsHidden)
            return;
        const cursor = this.cursorOf(deployment);
        let quietSince = Date.now();
        while (!cursor.closed && Date.now() - quietSince < CLOSING_QUIET_MS) {
            const before = cursor.progress;
            try {
                await sleep(CLOSING_PAUSE_MS, signal);
                await this.readFinal(deployment, signal);
            }
            catch {
                return;
            }
            if (cursor.progress !== before)
                quietSince = Date.now();
        }
    }
    /**
     * Resolves when the next read of Coolify may go out: every rollout's reads (deployments, health)
     * take turns within one budget.
     */
    turn(signal) {
        return this.pacer.turn(signal);
    }
    /**
     * Reads the deployment once, in its turn, with the others due then: status, links and new log
     * lines. One that left the list of running ones is read by uuid, a moment later.
     */
    async read(deployment, signal) {
        if (!this.unlisted.has(deployment)) {
            const read = await this.reads.running(deployment.uuid, signal);
            if ('detail' in read) {
                this.take(deployment, read.detail);
                return;
            }
            this.unlisted.add(deployment);
            await sleep(LEFT_PAUSE_MS, signal);
            await this.readFinal(deployment, signal);
            return;
        }
        await this.readOne(deployment, signal);
    }
    /** Reads the deployment by uuid, in its turn. */
    async readOne(deployment, signal) {
        this.take(deployment, await this.reads.one(deployment.uuid, signal));
    }
    /** Reads an ended deployment by uuid, as soon as the window allows. */
    async readFinal(deployment, signal) {
        this.take(deployment, await this.reads.final(deployment.uuid, signal));
    }
    take(deployment, detail) {
        const changed = deployment.observe(detail, this.options.instanceUrl);
        if (changed && !deployment.ended)
            this.announce(deployment, detail);
        this.printLogs(deployment, detail);
    }
    announce(deployment, detail) {
        if (statusFromCoolify(detail.status)) {
            this.options.say.note(`${deployment.name}: ${describeStatus(deployment.status)}`);
        }
        else if (typeof detail.status === 'string') {
            this.options.say.warn(`${deployment.name}: Coolify reports the status "${detail.status.slice(0, 40)}", which this action does not know; it is treated as not finished.`);
        }
        else {
            this.options.say.warn(`${deployment.name}: Coolify's answer has no status; the deployment is treated as not finished.`);
        }
    }
    printLogs(deployment, detail) {
        if (!this.options.logs)
            return;
        if (!('logs' in detail)) {
            if (!this.logsHidden) {
                this.logsHidden = true;
                this.options.say.warn(`${LOGS_HIDDEN_HINT} The deployment is followed all the same.`);
            }
            return;
        }
        const lines = this.cursorOf(deployment).next(detail.logs);
        deployment.remember(lines);
        this.options.sink.lines(deployment, lines);
    }
    cursorOf(deployment) {
        let cursor = this.cursors.get(deployment);
        if (!cursor)
            this.cursors.set(deployment, (cursor = new LogCursor(this.options.showHidden)));
        return cursor;
    }
    flush(deployment) {
        if (!this.options.logs)
            return;
        const lines = this.cursorOf(deployment).flush();
        deployment.remember(lines);
        this.options.sink.lines(deployment, lines);
    }
}

;// CONCATENATED MODULE: ./src/inputs.ts




const UUID = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** Docker's rule for a tag. */
const DOCKER_TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the action sets itself; a `headers` line must not replace them. */
const RESERVED_HEADERS = new Set([
    'authorization',
    'accept',
    'content-type',
    'content-length',
    'host'
]);
/** C0 control characters (line breaks, tab, NUL, escape…) and DEL: no input value may hold one. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
/** What a value sent as an HTTP header may hold: printable ASCII. */
const HEADER_TEXT = /^[\x20-\x7e]*$/;
/** The longest duration an input may give: a deploy that takes longer should not hold a runner. */
const MAX_DURATION_MS = 24 * 3_600_000;
/** Inputs of several lines or items, checked a line or an item at a time. */
const MULTI_LINE = new Set(['app', 'app-uuid', 'tag', 'headers', 'env', 'ca-certificate']);
/**
 * Reads and validates every input. Secrets go to `mask` the moment they are read, before anything
 * could print them. A bad value throws an ActionError that names the input and what it accepts.
 * Every value may end up in a request or the log, so none may hold a control character: errors
 * about one name the input (and line), never the value.
 */
function readConfig(raw, mask) {
    const token = raw('token').trim();
    if (token)
        mask(token);
    const githubToken = raw('github-token').trim() || undefined;
    if (githubToken)
        mask(githubToken);
    const env = raw('env').trim() || undefined;
    if (env)
        maskEnvValues(env, mask);
    const headers = parseHeaders(raw('headers'), mask);
    refuseUnsendable('Input `token`', token);
    refuseUnsendable('Input `github-token`', githubToken ?? '');
    const read = singleLine(raw);
    const { instanceUrl, apiUrl } = parseCoolifyUrl(read('coolify-url'));
    if (!token) {
        throw new ActionError('Input `token` is empty: pass a Coolify API token from a secret, e.g. `token: ${{ secrets.COOLIFY_TOKEN }}`.');
    }
    const appUuids = parseList(raw('app-uuid'));
    const appNames = parseNames(raw('app'));
    const tags = parseList(raw('tag'));
    for (const uuid of appUuids)
        refuseControl('Input `app-uuid`', uuid);
    for (const name of appNames)
        refuseControl('Input `app`', name);
    for (const tag of tags)
        refuseControl('Input `tag`', tag);
    if (appNames.length > 0 && appUuids.length > 0) {
        throw new ActionError('Give either `app` or `app-uuid`, not both: `app` takes uuids as well as names, so put them all there.');
    }
    const apps = appNames.length > 0 ? 'app' : 'app-uuid';
    if (appUuids.length === 0 && appNames.length === 0 && tags.length === 0) {
        throw new ActionError('Give `app` (the applications to deploy, by the name on their page in Coolify), `app-uuid` or `tag`: all are empty.');
    }
    if ((appUuids.length > 0 || appNames.length > 0) && tags.length > 0) {
        throw new ActionError(`Give either \`${apps}\` or \`tag\`, not both: Coolify deploys by one or the other.`);
    }
    for (const uuid of appUuids) {
        if (!UUID.test(uuid)) {
            throw new ActionError(`Input \`app-uuid\`: "${uuid}" is not a uuid; copy it from the application's page in Coolify (letters, digits and dashes), or give its name in \`app\`.`);
        }
    }
    for (const tag of tags) {
        if (/[/?#&]/.test(tag)) {
            throw new ActionError(`Input \`tag\`: "${tag}" is not a tag name (no /, ?, # or &).`);
        }
    }
    const trigger = parseBoolean(read, 'trigger', true);
    const config = {
        instanceUrl,
        apiUrl,
        token,
        appUuids,
        appNames,
        tags,
        force: parseBoolean(read, 'force', false),
        pr: parsePullRequest(read('pr')),
        trigger,
        wait: parseBoolean(read, 'wait', true),
        timeoutMs: parseDurationInput(read, 'timeout', '30m'),
        pollIntervalMs: parseDurationInput(read, 'poll-interval', '3s'),
        // What the action did not start, it does not cancel unless told to.
        cancelOnTimeout: parseBoolean(read, 'cancel-on-timeout', trigger),
        cancelOnAbort: parseBoolean(read, 'cancel-on-abort', trigger),
        logs: parseBoolean(read, 'logs', true),
        debugLogs: parseBoolean(read, 'debug-logs', false),
        headers,
        caCertificate: readCaCertificate(raw('ca-certificate')),
        environment: read('environment').trim() || undefined,
        githubToken,
        gitBranch: read('git-branch').trim() || undefined,
        domains: read('domains').trim() || undefined,
        env: env ? parseEnv(env) : undefined,
        imageTag: parseImageTag(read('image-tag')),
        commit: parseCommit(read('commit')),
        healthUrl: parseHealthUrl(read('health-url')),
        healthTimeoutMs: parseDurationInput(read, 'health-timeout', '2m'),
        rollbackOnFailure: parseBoolean(read, 'rollback-on-failure', false),
        comment: parseBoolean(read, 'comment', true),
        deletePreview: parseBoolean(read, 'delete-preview', false),
        reviewApp: parseBoolean(read, 'review-app', false),
        reviewPlacement: {
            project: read('review-project').trim() || undefined,
            server: read('review-server').trim() || undefined,
            environment: read('review-environment').trim() || undefined,
            deployKey: read('review-deploy-key').trim() || undefined,
            destination: read('review-destination').trim() || undefined
        }
    };
    if (config.pr !== undefined && tags.length > 0) {
        throw new ActionError('Input `pr` works with `app` or `app-uuid` only: Coolify has no preview deploy by tag.');
    }
    if ((config.gitBranch || config.domains || config.env) && tags.length > 0) {
        throw new ActionError('Inputs `git-branch`, `domains` and `env` change the applications named in `app` or `app-uuid`; they do not work with `tag`.');
    }
    if (config.deletePreview && (config.pr === undefined || tags.length > 0)) {
        throw new ActionError('Input `delete-preview` needs `pr` (the pull request number) and `app` or `app-uuid` (the application whose preview to remove).');
    }
    checkFollowInputs(config, read);
    checkVersionInputs(config);
    checkReviewInputs(config, read('review-domain'));
    return config;
}
/** `trigger: false` starts and changes nothing: inputs that would are refused. */
function checkFollowInputs(config, read) {
    if (config.trigger)
        return;
    const changing = [
        'git-branch',
        'domains',
        'env',
        'image-tag',
        'force',
        'rollback-on-failure',
        'review-app',
        'delete-preview',
        'tag'
    ].filter(name => !['', 'false'].includes(read(name).trim().toLowerCase()));
    if (changing.length > 0) {
        throw new ActionError(`Input ${changing.map(name => `\`${name}\``).join(', ')} does not work with \`trigger: false\`, which starts and changes nothing: it follows the deployment Coolify starts by itself.`);
    }
    if (!config.wait) {
        throw new ActionError('Inputs `trigger: false` and `wait: false` together would do nothing: `trigger: false` waits for the deployment Coolify starts by itself.');
    }
}
/** A review app is one application per pull request, made from one template. */
function checkReviewInputs(config, domain) {
    if (!config.reviewApp)
        return;
    if (config.pr === undefined) {
        throw new ActionError('Input `review-app` needs `pr`, the pull request number: in a pull_request workflow `pr: ${{ github.event.number }}`.');
    }
    if (config.tags.length > 0 || config.appUuids.length + config.appNames.length !== 1) {
        throw new ActionError('Input `review-app` needs exactly one application in `app` or `app-uuid`, the template (no `tag`).');
    }
    if (config.imageTag) {
        throw new ActionError("Input `image-tag` does not work with `review-app`: the review app builds the pull request's branch.");
    }
    const value = domain.trim();
    if (!value)
        return;
    const domains = value.replaceAll('{pr}', String(config.pr));
    for (const item of domains.split(',')) {
        let url;
        try {
            url = new URL(item.trim());
        }
        catch {
            url = undefined;
        }
        if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
            throw new ActionError(`Input \`review-domain\`: "${item.trim()}" is not an http(s) address, like https://pr-{pr}.preview.example.com.`);
        }
    }
    config.reviewDomain = domains;
}
/** The version inputs name applications: they need `app-uuid`, and one kind of version each. */
function checkVersionInputs(config) {
    const named = [
        config.imageTag && 'image-tag',
        config.commit && 'commit',
        config.rollbackOnFailure && 'rollback-on-failure'
    ].filter(Boolean);
    if (named.length > 0 && config.tags.length > 0) {
        throw new ActionError(`Input \`${named[0]}\` works with \`app\` or \`app-uuid\` only: it reads and changes the applications named there.`);
    }
    if (config.imageTag && config.commit) {
        throw new ActionError('Give `image-tag` (Docker-image applications) or `commit` (git applications), not both.');
    }
    if (config.rollbackOnFailure && config.pr !== undefined) {
        throw new ActionError('Input `rollback-on-failure` works for production deploys: a preview (`pr`) has no earlier version to go back to.');
    }
    if (config.commit && config.pr !== undefined) {
        throw new ActionError("Input `commit` deploys production: a preview (`pr`) builds its pull request's head.");
    }
}
/** Docker's tag syntax: up to 128 letters, digits, `_`, `.` and `-`, not starting with `.` or `-`. */
function parseCommit(text) {
    const value = text.trim();
    if (!value)
        return undefined;
    if (!/^[0-9a-fA-F]{7,40}$/.test(value)) {
        throw new ActionError(`Input \`commit\`: "${value}" is not a commit SHA (7 to 40 hexadecimal digits), e.g. \${{ github.sha }}.`);
    }
    return value.toLowerCase();
}
/** A path (`/health`) on the application's URL, or a whole http(s) URL. */
function parseHealthUrl(text) {
    const value = text.trim();
    if (!value)
        return undefined;
    if (value.startsWith('/') && !value.startsWith('//'))
        return value;
    let url;
    try {
        url = new URL(value);
    }
    catch {
        url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
        throw new ActionError(`Input \`health-url\`: "${value}" is neither a path like /health nor an http(s) URL.`);
    }
    return value;
}
/** The reader of single-line inputs: it refuses a value holding a control character. */
function singleLine(read) {
    return name => {
        const value = read(name);
        if (!MULTI_LINE.has(name))
            refuseControl(`Input \`${name}\``, value.trim());
        return value;
    };
}
/** `where` names the input (and line); the value is never part of the message. */
function refuseControl(where, value) {
    if (CONTROL.test(value)) {
        throw new ActionError(`${where} holds a control character (a line break, tab or the like): remove it.`);
    }
}
/** Tokens and header values go in HTTP headers, which carry printable ASCII only. */
function refuseUnsendable(where, value) {
    refuseControl(where, value);
    if (!HEADER_TEXT.test(value)) {
        throw new ActionError(`${where} holds a character an HTTP header cannot carry (only printable ASCII): remove it.`);
    }
}
/** Accepts the instance address with or without `/api/v1` and trailing slashes. */
function parseCoolifyUrl(text) {
    const value = text.trim();
    const example = 'like https://coolify.example.com';
    if (!value)
        throw new ActionError(`Input \`coolify-url\` is empty: give your Coolify instance's address, ${example}.`);
    let url;
    try {
        url = new URL(value);
    }
    catch {
        url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
        throw new ActionError(`Input \`coolify-url\`: "${value}" is not an http(s) address; give the instance's address with its scheme, ${example}.`);
    }
    if (url.username || url.password) {
        throw new ActionError('Input `coolify-url` must not carry a user name or password; put credentials in `token` or `headers`.');
    }
    if (url.search || url.hash) {
        throw new ActionError(`Input \`coolify-url\`: remove the query or fragment, ${example}.`);
    }
    const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/i, '');
    const instanceUrl = `${url.protocol}//${url.host}${path}`;
    return { instanceUrl, apiUrl: `${instanceUrl}/api/v1` };
}
/**
 * `app`: names may hold spaces, so only commas and newlines separate them; each is trimmed, and
 * duplicates are dropped.
 */
function parseNames(text) {
    return [...new Set(text.split(/[\r\n,]+/).map(item => item.trim()))].filter(Boolean);
}
/** Commas, spaces or newlines separate items; duplicates are dropped. */
function parseList(text) {
    return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}
function parseBoolean(read, name, fallback) {
    const value = read(name).trim().toLowerCase();
    if (value === '')
        return fallback;
    if (value === 'true')
        return true;
    if (value === 'false')
        return false;
    throw new ActionError(`Input \`${name}\` must be true or false, not "${read(name).trim()}".`);
}
function parseDurationInput(read, name, fallback) {
    const text = read(name).trim() || fallback;
    const ms = parseDuration(text);
    if (ms === undefined || ms <= 0) {
        throw new ActionError(`Input \`${name}\`: "${text}" is not a duration; use seconds (90) or a number with ms, s, m or h (500ms, 15m, 1h30m).`);
    }
    if (ms > MAX_DURATION_MS) {
        throw new ActionError(`Input \`${name}\`: "${text}" is more than 24h, the longest this action waits; use 24h or less.`);
    }
    return ms;
}
function parsePullRequest(text) {
    const value = text.trim();
    if (!value)
        return undefined;
    if (!/^\d+$/.test(value) || Number(value) === 0) {
        throw new ActionError(`Input \`pr\`: "${value}" is not a pull request number; in a pull_request workflow use \${{ github.event.number }}.`);
    }
    return Number(value);
}
function parseImageTag(text) {
    const value = text.trim();
    if (!value)
        return undefined;
    if (!DOCKER_TAG.test(value)) {
        throw new ActionError(`Input \`image-tag\`: "${value}" is not a Docker tag (letters, digits, _ . -, at most 128, not starting with . or -).`);
    }
    return value;
}
/** `Name: value` a line. Values are secrets (service tokens), so errors name the line, never the value. */
function parseHeaders(text, mask) {
    const headers = {};
    const lines = text.split(/\r?\n/);
    for (const [index, raw] of lines.entries()) {
        const line = raw.trim();
        if (!line || line.startsWith('#'))
            continue;
        const colon = line.indexOf(':');
        const name = colon > 0 ? line.slice(0, colon).trim() : '';
        const value = colon > 0 ? line.slice(colon + 1).trim() : '';
        if (value)
            mask(value);
        refuseUnsendable(`Input \`headers\`, line ${index + 1}`, value);
        if (!HEADER_NAME.test(name) || !value) {
            throw new ActionError(`Input \`headers\`, line ${index + 1}: write one \`Name: value\` a line, like \`CF-Access-Client-Id: \${{ secrets.CF_ID }}\`.`);
        }
        if (RESERVED_HEADERS.has(name.toLowerCase())) {
            throw new ActionError(`Input \`headers\`, line ${index + 1}: ${name} is set by the action itself; remove that line.`);
        }
        headers[name] = value;
    }
    return headers;
}
function readCaCertificate(text) {
    const value = text.trim();
    if (!value)
        return undefined;
    if (value.includes('-----BEGIN CERTIFICATE-----'))
        return value;
    refuseControl('Input `ca-certificate`', value);
    let pem;
    try {
        pem = (0,external_node_fs_namespaceObject.readFileSync)(value, 'utf8');
    }
    catch {
        throw new ActionError(`Input \`ca-certificate\`: "${value}" is neither a PEM certificate nor a readable file; give the PEM text or its path.`);
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
        throw new ActionError(`Input \`ca-certificate\`: the file "${value}" holds no PEM certificate.`);
    }
    return pem;
}
/**
 * Masks the values of `env`, but not those under four characters: masking `1` or `true` would
 * blank every occurrence in the whole log, and hides nothing worth hiding.
 */
function maskEnvValues(text, mask) {
    for (const line of text.split(/\r?\n/)) {
        const value = line.slice(line.indexOf('=') + 1).trim();
        if (line.includes('=') && value.length >= MIN_MASKED_LENGTH)
            mask(value);
    }
}
/**
 * Checks `KEY=value` lines; undefined when there are none. A value is one line, so it cannot hold
 * a line break; tabs and other control characters are refused too.
 */
function parseEnv(text) {
    const variables = new Map();
    for (const [index, raw] of text.split(/\r?\n/).entries()) {
        const line = raw.trim();
        if (!line || line.startsWith('#'))
            continue;
        if (!/^[A-Za-z_][A-Za-z0-9_.-]*=/.test(line)) {
            throw new ActionError(`Input \`env\`, line ${index + 1}: write one \`KEY=value\` a line.`);
        }
        const key = line.slice(0, line.indexOf('='));
        refuseControl(`Input \`env\`, line ${index + 1} (${key})`, line);
        variables.set(key, line.slice(key.length + 1));
    }
    if (variables.size === 0)
        return undefined;
    return [...variables].map(([key, value]) => ({ key, value }));
}

;// CONCATENATED MODULE: ./src/model/outcome.ts



/**
 * The status table's verdict on the deployments, or, without any, on why there are none. An error
 * that stopped the step is never reported as a status that would pass (`queued` after a failure
 * once the deployments were queued): it is `failed`, or `cancelled` with the run.
 */
function decide(deployments, ending) {
    const stopped = ending.cancelled ? 'cancelled' : 'failed';
    let status = ending.removed
        ? 'finished'
        : deployments.length
            ? worstOf(deployments.map(deployment => deployment.status))
            : stopped;
    if (ending.error !== undefined && !failsStep(status))
        status = stopped;
    const error = ending.error === undefined ? undefined : describeError(ending.error);
    const fails = error !== undefined || failsStep(status);
    const byCoolify = ending.error instanceof CoolifyError;
    return { status, deployments, error, fails, reviewAppUuid: ending.reviewAppUuid, byCoolify };
}

;// CONCATENATED MODULE: ./src/review-app/names.ts
/**
 * How a review app is known: its name, `<template>-pr-<N>`, and the marker its description carries,
 * by which runs find it again and never take another application for it.
 */

/**
 * The template (`app-uuid`) and the names its review app for this pull request goes by; the
 * marker names the repository the event says the run is in.
 */
async function templateOf(client, config, repository, signal) {
    const uuid = config.appUuids[0];
    const template = await client.getApplication(uuid, signal);
    const where = repository ?? 'this repository';
    const marker = `Review app for pull request #${config.pr} of ${where}, template ${uuid}`;
    const names = {
        name: `${template.name ?? uuid}-pr-${config.pr}`,
        marker,
        pending: `${marker} (being set up)`
    };
    return { template: { ...template, uuid }, names };
}
/** The uuids of the applications with this name. */
function namesakesIn(listed, name) {
    return listOf(listed)
        .filter(app => app?.name === name && typeof app.uuid === 'string')
        .map(app => app.uuid);
}
/** Applications with the review app's name and marker, the oldest first; never any other. */
function reviewAppsIn(listed, names) {
    return listOf(listed)
        .filter((app) => app?.name === names.name &&
        typeof app.uuid === 'string' &&
        typeof app.description === 'string' &&
        (app.description === names.marker || app.description === names.pending))
        .sort(olderFirst);
}
async function findReviewApps(client, names, signal) {
    return reviewAppsIn(await client.listApplications(signal), names);
}
/**
 * Coolify's API hides ids: the older is the one created first, and of two created in the same
 * second, the one with the smaller uuid, so that every run picks the same.
 */
function olderFirst(a, b) {
    const time = (app) => timeOf(app.created_at) ?? Infinity;
    return time(a) - time(b) || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0);
}

;// CONCATENATED MODULE: ./src/review-app/remove.ts



/** `delete-preview` with `review-app`: deletes the pull request's review app, if there is one. */
async function deleteReviewApp(client, config, event, signal, say) {
    const { names } = await templateOf(client, config, event.repository, signal);
    const found = reviewAppsIn(await client.listApplications(signal), names);
    if (found.length === 0) {
        say.note(`No review app of pull request ${config.pr} in Coolify (already deleted)`);
        return;
    }
    for (const app of found) {
        await deleteApplication(client, app.uuid, signal);
        say.note(`Coolify is deleting review app ${names.name} (${app.uuid})`);
    }
}
/** Deletes an application this run made; on failure, what went wrong. */
async function removeHalfMade(client, uuid, signal, say) {
    try {
        await deleteApplication(client, uuid, signal);
        say.note(`Deleted review app ${uuid}, which this run made`);
        return undefined;
    }
    catch (error) {
        return describeError(error);
    }
}
/** Deletes an application this run made, and says so when Coolify would not. */
async function removeOrSay(client, uuid, signal, say, state) {
    const failure = await removeHalfMade(client, uuid, signal, say);
    if (failure)
        say.note(`Could not delete review app ${uuid} (${failure}); ${state}: delete it in Coolify`);
}
/** One already gone counts as deleted. */
async function deleteApplication(client, uuid, signal) {
    try {
        await client.deleteApplication(uuid, signal);
    }
    catch (error) {
        if (isGone(error))
            return;
        throw needsWrite(error);
    }
}
/** Removed already, by a run that set the same app up at the same time: done. */
function unlessGone(error) {
    if (isGone(error))
        return;
    throw error;
}
/** A 403 on making or deleting an application: the token lacks `write`. */
function needsWrite(error) {
    if (error instanceof CoolifyError && error.status === 403) {
        return error.withHint('Review apps need a token with the `write` ability (to clone, set up and delete applications)');
    }
    return error;
}

;// CONCATENATED MODULE: ./src/rollout/preview.ts

const NO_PREVIEW = /^Pull request \d+ not found for this resource/i;
/**
 * Coolify's answer for a git application without a preview of the pull request, turned into what
 * to do about it; other messages are returned as they are.
 */
function explainDeployMessage(message) {
    if (!NO_PREVIEW.test(message))
        return message;
    return (`${message} Coolify creates a git application's preview itself, when its GitHub App or ` +
        'webhook reports the pull request: turn on Preview Deployments in the application’s ' +
        'settings (with a GitHub App as its source), open or push to the pull request, then deploy ' +
        'with `pr`. Docker-image applications get one from `pr` with `image-tag`.');
}
/**
 * Removes the preview of pull request `pr`. True when Coolify removed it, false when it was already
 * gone; anything else throws.
 */
async function deletePreview(client, appUuid, pr, signal) {
    try {
        await client.deletePreview(appUuid, pr, signal);
        return true;
    }
    catch (error) {
        const gone = error instanceof CoolifyError &&
            error.status === 404 &&
            /preview not found/i.test(error.details.serverMessage ?? '');
        if (gone)
            return false;
        throw error;
    }
}

;// CONCATENATED MODULE: ./src/remove-preview.ts


/**
 * `delete-preview`: removes the pull request's preview of each application in Coolify (one already
 * gone counts as removed), or with `review-app` the pull request's review app. Nothing is deployed.
 */
async function removePreview(client, config, event, signal, say) {
    const pr = config.pr;
    if (config.reviewApp)
        await deleteReviewApp(client, config, event, signal, say);
    for (const uuid of config.reviewApp ? [] : config.appUuids) {
        const deleted = await deletePreview(client, uuid, pr, signal);
        say.note(deleted
            ? `${uuid}: Coolify is removing the preview of pull request ${pr}`
            : `${uuid}: no preview of pull request ${pr} in Coolify (already removed)`);
    }
}

;// CONCATENATED MODULE: ./src/report/console.ts

const STYLE = {
    stdout: ['', ''],
    info: ['', ''],
    stderr: ['\u001b[31m', '\u001b[0m'],
    warning: ['\u001b[33m', '\u001b[0m'],
    command: ['\u001b[36m', '\u001b[0m']
};
/** The runner ends a line at `\n`, `\r` or `\r\n`, wherever it stands in a log entry. */
const LINE_BREAK = /\r\n|\r|\n/;
/**
 * Writes build logs into the job's output. One deployment gets one log group around its whole
 * log; several that run at once get a group per batch, each line prefixed with the application's
 * name. Build output is printed verbatim, in the host's way (it cannot issue commands). A batch is
 * written with a single write, however many lines it holds.
 */
class LogPrinter {
    several;
    format;
    openGroup;
    constructor(several, format = host().log) {
        this.several = several;
        this.format = format;
    }
    /** Opens the log group of a deployment followed alone. */
    begin(deployment) {
        if (this.several || this.openGroup)
            return;
        this.openGroup = deployment;
        this.format.write(this.format.startGroup(`Build log of ${this.format.oneLine(deployment.name)}`));
    }
    end(deployment) {
        if (this.openGroup !== deployment)
            return;
        this.openGroup = undefined;
        this.format.write(this.format.endGroup());
    }
    lines(deployment, lines) {
        if (lines.length === 0)
            return;
        const name = this.format.oneLine(deployment.name);
        const prefix = this.several ? `${name} | ` : '';
        const printed = [];
        for (const line of lines) {
            const [open, close] = STYLE[line.kind];
            // Each line the host will show gets the prefix and style.
            const parts = /[\r\n]/.test(line.text) ? line.text.split(LINE_BREAK) : [line.text];
            parts.forEach((part, index) => {
                const marker = line.kind === 'command' && index === 0 ? '$ ' : '';
                printed.push(`${prefix}${open}${marker}${part}${close}`);
            });
        }
        const text = this.format.verbatim(printed);
        this.format.write(this.several ? this.format.startGroup(name) + text + this.format.endGroup() : text);
    }
}
/**
 * The runtime log of an application that did not come up, in a log group of its own, as verbatim
 * as build output (the application wrote it, not the deploy).
 */
function printRuntimeLog(deployment, format = host().log) {
    const lines = deployment.runtimeLog.length === 0
        ? ['Coolify had no log for it: it gives one only while the container runs.']
        : deployment.runtimeLog.flatMap(line => line.split(LINE_BREAK));
    format.write(format.startGroup(`Runtime log of ${format.oneLine(deployment.name)}`) +
        format.verbatim(lines) +
        format.endGroup());
}

;// CONCATENATED MODULE: ./src/event.ts

/**
 * The pull request of the event the workflow runs for, read from the event payload the runner
 * writes (GITHUB_EVENT_PATH); GITHUB_HEAD_REF gives the branch when there is no payload, and
 * GITHUB_REPOSITORY the repository.
 */
function pullRequestEvent(env = process.env) {
    let payload;
    try {
        payload = env.GITHUB_EVENT_PATH ? JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, 'utf8')) : {};
    }
    catch {
        payload = {};
    }
    const pull = payload?.pull_request;
    const side = (name) => pull?.[name] ?? {};
    const text = (value) => typeof value === 'string' && value !== '' ? value : undefined;
    return {
        repository: text(env.GITHUB_REPOSITORY),
        sha: text(env.GITHUB_SHA),
        headRef: text(side('head').ref) ?? text(env.GITHUB_HEAD_REF),
        headSha: text(side('head').sha),
        headRepository: text(side('head').repo?.full_name),
        baseRepository: text(side('base').repo?.full_name)
    };
}
/** A pull request from a fork: its branch is not in the repository Coolify builds from. */
function isFromFork(event) {
    return (event.headRepository !== undefined &&
        event.baseRepository !== undefined &&
        event.headRepository.toLowerCase() !== event.baseRepository.toLowerCase());
}

;// CONCATENATED MODULE: ./src/review-app/make.ts
/**
 * Making a review app: a clone of the template where Coolify can clone (4.3+), else an application
 * created from the template's repository. Either is left for setup.ts to make safe to deploy.
 */




const SHARED_SERVER_WARNING = (name) => `Review app ${name} runs on the template's server: its build uses the host network and its container sits on production's Docker network, so pull request code can reach production's containers by name. Give \`review-destination\` a destination on a server without production to isolate review apps (see docs/review-apps.md).`;
/**
 * `review-destination`, else the template's primary destination; none when Coolify has no clone
 * route (before 4.3). Whether it is on the template's server: the template's own destinations say
 * so for theirs, the server's list of destinations for any other.
 */
async function cloneDestination(client, config, templateUuid, signal) {
    let list;
    try {
        const destinations = await client.listDestinations(templateUuid, signal);
        list = listOf(destinations);
    }
    catch (error) {
        if (isMissingRoute(error))
            return undefined;
        throw error;
    }
    const primary = list.find(destination => destination?.is_primary) ?? list[0];
    if (!primary?.uuid)
        throw new ActionError('Coolify names no destination for the template.');
    const chosen = config.reviewPlacement.destination ?? primary.uuid;
    const own = list.find(destination => destination?.uuid === chosen);
    if (own || !primary.server_uuid) {
        return { uuid: chosen, sharesServer: own ? own.server_uuid === primary.server_uuid : undefined };
    }
    try {
        const onServer = await client.listServerDestinations(primary.server_uuid, signal);
        const listed = listOf(onServer);
        return { uuid: chosen, sharesServer: listed.some(destination => destination?.uuid === chosen) };
    }
    catch (error) {
        if (isMissingRoute(error) || isGone(error))
            return { uuid: chosen };
        throw error;
    }
}
/**
 * A clone of the template into `review-destination` or its primary destination, not deployed. The clone is never sent
 * twice; when its answer is lost, the copy Coolify may have saved meanwhile — its name, not there
 * before the request, without a review marker — is found and deleted, or named.
 */
async function cloneTemplate(client, template, destination, names, before, signal, undo, say) {
    let uuid;
    try {
        const clone = await client.cloneApplication(template.uuid, { destination_uuid: destination, name: names.name }, signal);
        uuid = clone?.uuid;
    }
    catch (error) {
        if (!mayHaveActed(error))
            throw needsWrite(error);
        throw new ActionError(`${describeError(error)} ${await removeLostCopies(client, names, before, undo(), say)}`);
    }
    if (typeof uuid !== 'string' || uuid === '') {
        const left = await removeLostCopies(client, names, before, undo(), say);
        throw new ActionError(`Coolify answered the clone without the review app's uuid. ${left}`);
    }
    return uuid;
}
/** A failure after which Coolify may have saved what was asked: no answer, or a server error. */
function mayHaveActed(error) {
    return (error instanceof CoolifyError &&
        !error.details.unsent &&
        (error.status === undefined || error.status >= 500));
}
/** Deletes the copies a lost clone answer left behind; says what became of them. */
async function removeLostCopies(client, names, before, signal, say) {
    let listed;
    try {
        listed = listOf(await client.listApplications(signal));
    }
    catch (error) {
        return `Whether Coolify made a copy named ${names.name} could not be checked (${describeError(error)}): look for one without a review marker in its description and delete it.`;
    }
    const copies = listed.filter(app => app?.name === names.name &&
        typeof app.uuid === 'string' &&
        !before.has(app.uuid) &&
        app.description !== names.marker &&
        app.description !== names.pending);
    if (copies.length === 0)
        return 'Coolify made no copy; nothing was deployed.';
    const left = [];
    for (const copy of copies) {
        const failure = await removeHalfMade(client, copy.uuid, signal, say);
        if (failure)
            left.push(`${copy.uuid} (${failure})`);
    }
    if (left.length === 0)
        return 'The copy Coolify had made was deleted; nothing was deployed.';
    return `The copy Coolify made could not be deleted: ${left.join(', ')} — a copy of the template, domain and all: delete it in Coolify.`;
}
async function createFromRepository(client, config, template, { names, branch }, signal) {
    const { project, server, environment, deployKey, destination } = config.reviewPlacement;
    const missing = [
        !project && 'review-project',
        !server && 'review-server',
        !environment && 'review-environment',
        !deployKey && 'review-deploy-key'
    ].filter(Boolean);
    if (missing.length > 0) {
        throw new ActionError(`This Coolify cannot clone applications (before 4.3): the review app is created from the template's repository, which needs ${missing.map(name => `\`${name}\``).join(', ')}.`);
    }
    if (!template.git_repository || !template.build_pack || !template.ports_exposes) {
        throw new ActionError("Coolify did not give the template's repository, build pack and ports, which a review app is created with.");
    }
    const made = await client
        .createApplication({
        project_uuid: project,
        server_uuid: server,
        environment_name: environment,
        private_key_uuid: deployKey,
        git_repository: template.git_repository,
        git_branch: branch,
        build_pack: template.build_pack,
        ports_exposes: template.ports_exposes,
        name: names.name,
        description: names.pending,
        ...(config.reviewDomain ? { domains: config.reviewDomain } : {}),
        ...(destination ? { destination_uuid: destination } : {})
    }, signal)
        .catch(error => {
        if (error instanceof CoolifyError &&
            /multiple destinations/i.test(error.details.serverMessage ?? '')) {
            throw error.withHint(`The server \`review-server\` has several destinations: give \`review-destination\`, the uuid of the one for review apps (the server's Destinations in Coolify)`);
        }
        throw needsWrite(error);
    });
    if (typeof made?.uuid !== 'string' || made.uuid === '') {
        throw new ActionError('Coolify answered without the uuid of the review app it made.');
    }
    return made.uuid;
}

;// CONCATENATED MODULE: ./src/review-app/fields.ts
/**
 * Every key of `GET /applications/{uuid}` (Coolify 4.3.11: the applications row, what the API adds
 * to it, and its `settings` row as `settings.<key>`), and what a review app may keep of it. Coolify's
 * clone copies the whole row and its settings, so a review app starts as production: it keeps only
 * what this table lets it keep. A key the table does not know, set to anything but a default, stops
 * the review app before any write — a newer Coolify must make the action refuse, never leak.
 */
const identity = (why) => ({ kind: 'identity', why });
const copied = (why) => ({ kind: 'copied', why });
const set = (why) => ({ kind: 'set', why });
const fields_reset = (to, why) => ({ kind: 'reset', to, why });
function each(keys, rule) {
    return keys.map(key => [key, rule]);
}
const BUILD = copied('how its image is built from the pull request’s code, in its own container');
const HEALTH = copied('how Coolify checks its own container’s health');
const LIMITS = copied('limits of its own container');
const COMPOSE_ONLY = copied('read only for compose applications, which are refused');
const SOURCE = copied('where its code comes from: the same repository, read with the same access');
const STATE = identity('state Coolify keeps about the running application, not a setting');
const REVIEW_FIELDS = new Map([
    // Identity: made new by the clone, or kept by Coolify as state.
    ...each(['id', 'uuid', 'created_at', 'updated_at', 'deleted_at'], identity('made new by Coolify for the clone')),
    ...each(['destination_id', 'destination_type'], identity('where the clone was put: `review-destination`, else the template’s primary one')),
    ...each([
        'status',
        'server_status',
        'last_online_at',
        'config_hash',
        'restart_count',
        'last_restart_at',
        'last_restart_type',
        'custom_healthcheck_found',
        'domain_dns_statuses',
        'additional_servers_count',
        'additional_networks_count'
    ], STATE),
    [
        'environment_id',
        copied('the clone stays in the template’s environment (the clone route has no other): its shared variables resolve there, so variables are compared by resolved value')
    ],
    // Set by the plan, or checked by it.
    ...each(['name', 'description'], set('the review app’s name and marker')),
    ['fqdn', set('`review-domain`; none when not given, and the read-back checks no host is left')],
    ['noindex_domains', set('Coolify keeps it to a part of the domains, which the plan sets')],
    ['git_branch', set('the pull request’s branch, written last')],
    ['git_commit_sha', set('`HEAD`: a pin of production’s would build production’s commit')],
    ...each([
        'manual_webhook_secret_github',
        'manual_webhook_secret_gitlab',
        'manual_webhook_secret_bitbucket',
        'manual_webhook_secret_gitea'
    ], set('cleared: a push signed with production’s secret would deploy it')),
    ['settings.is_auto_deploy_enabled', set('off: only this action deploys it')],
    [
        'custom_labels',
        set('made by Coolify from the review domain (readonly labels); the read-back checks no host')
    ],
    [
        'settings.is_container_label_readonly_enabled',
        {
            kind: 'refused',
            refuses: value => value === false,
            why: '"Readonly labels" is off, so its clone keeps production’s labels, which route production’s traffic: turn "Readonly labels" on in the template'
        }
    ],
    [
        'build_pack',
        {
            kind: 'refused',
            refuses: value => value === 'dockercompose' || value === 'dockerimage',
            why: 'docker compose or a Docker image: a compose file is read from the pull request’s branch when it deploys (it could mount the Docker socket or run privileged on production’s server), and an image has no branch to build; give review apps a Dockerfile, Nixpacks or static template'
        }
    ],
    ['docker_compose_domains', set('compose applications are refused; the read-back checks no host')],
    // Reset to Coolify's default before anything else, each because it reaches production.
    [
        'settings.custom_internal_name',
        fields_reset(null, 'the container is named after it, and the first deploy removes the running container of that name: production’s')
    ],
    [
        'custom_docker_run_options',
        fields_reset(null, 'options such as --privileged, --cap-add or --device on production’s server')
    ],
    [
        'docker_registry_image_name',
        fields_reset(null, 'its build would be pushed to production’s image repository')
    ],
    [
        'docker_registry_image_tag',
        fields_reset(null, 'its build would be tagged as production’s image, e.g. :production')
    ],
    [
        'custom_network_aliases',
        fields_reset(null, 'production’s neighbours would reach it under production’s names')
    ],
    ['ports_mappings', fields_reset(null, 'it would publish production’s host ports')],
    [
        'settings.connect_to_docker_network',
        fields_reset(false, 'it would join the destination’s network under its service names')
    ],
    [
        'settings.is_preview_deployments_enabled',
        fields_reset(false, 'Coolify would build previews of every pull request on it as well')
    ],
    ['settings.is_pr_deployments_public_enabled', fields_reset(false, 'goes with previews, which are off')],
    // Copied: settings of its own container and build.
    ...each([
        'repository_project_id',
        'git_repository',
        'git_full_url',
        'source_id',
        'source_type',
        'private_key_id'
    ], SOURCE),
    ...each([
        'static_image',
        'install_command',
        'build_command',
        'start_command',
        'base_directory',
        'publish_directory',
        'dockerfile',
        'dockerfile_location',
        'dockerfile_target_build',
        'custom_nginx_configuration',
        'watch_paths',
        'settings.is_static',
        'settings.is_spa',
        'settings.is_git_submodules_enabled',
        'settings.is_git_lfs_enabled',
        'settings.is_git_shallow_clone_enabled',
        'settings.is_preserve_repository_enabled',
        'settings.disable_build_cache',
        'settings.use_build_secrets',
        'settings.inject_build_args_to_dockerfile',
        'settings.include_source_commit_in_build',
        'settings.is_env_sorting_enabled',
        'settings.is_build_server_enabled'
    ], BUILD),
    ['ports_exposes', copied('ports inside its own container, reached through its own domain')],
    [
        'preview_url_template',
        copied('the address of Coolify’s own previews of it, which are turned off')
    ],
    ...each(['redirect', 'settings.is_force_https_enabled', 'settings.is_gzip_enabled'], copied('how the proxy serves its own domain')),
    ...each(['settings.is_stripprefix_enabled', 'settings.is_container_label_escape_enabled'], copied('how the proxy serves its own domain')),
    ...each(['is_http_basic_auth_enabled', 'http_basic_auth_username', 'http_basic_auth_password'], copied('the review app asks for the same password as production: a lock, not a key')),
    ...each([
        'pre_deployment_command',
        'pre_deployment_command_container',
        'post_deployment_command',
        'post_deployment_command_container'
    ], copied('commands run inside its own container, with its own variables')),
    ...each([
        'health_check_enabled',
        'health_check_type',
        'health_check_command',
        'health_check_path',
        'health_check_port',
        'health_check_host',
        'health_check_method',
        'health_check_return_code',
        'health_check_scheme',
        'health_check_response_text',
        'health_check_interval',
        'health_check_timeout',
        'health_check_retries',
        'health_check_start_period'
    ], HEALTH),
    ...each([
        'limits_memory',
        'limits_memory_swap',
        'limits_memory_swappiness',
        'limits_memory_reservation',
        'limits_cpus',
        'limits_cpuset',
        'limits_cpu_shares',
        'max_restart_count',
        'settings.stop_grace_period',
        'settings.docker_images_to_keep',
        'settings.is_gpu_enabled',
        'settings.gpu_driver',
        'settings.gpu_count',
        'settings.gpu_device_ids',
        'settings.gpu_options'
    ], LIMITS),
    ...each([
        'swarm_replicas',
        'swarm_placement_constraints',
        'settings.is_swarm_only_worker_nodes',
        'settings.is_log_drain_enabled',
        'settings.is_include_timestamps',
        'settings.is_debug_enabled'
    ], copied('how its own container runs and logs')),
    ...each([
        'docker_compose_location',
        'docker_compose',
        'docker_compose_raw',
        'docker_compose_custom_start_command',
        'docker_compose_custom_build_command',
        'compose_parsing_version',
        'settings.is_raw_compose_deployment_enabled',
        'settings.is_consistent_container_name_enabled'
    ], COMPOSE_ONLY),
    // The settings row's own keys, which Coolify hides in reads.
    ...each(['settings.id', 'settings.application_id', 'settings.created_at', 'settings.updated_at'], identity('the settings row’s own, hidden in reads'))
]);
/** Coolify's empty values: what an unknown key may hold and still be left alone. */
function isEmptyValue(value) {
    if (value === null || value === undefined || value === false || value === '')
        return true;
    if (Array.isArray(value))
        return value.length === 0;
    if (typeof value === 'object')
        return Object.keys(value).length === 0;
    return false;
}
/**
 * An application as `GET /applications/{uuid}` shows it, one level deep: the row's keys as they
 * are and its settings row as `settings.<key>`.
 */
function flattenApplication(app) {
    const fields = {};
    for (const [key, value] of Object.entries(app)) {
        if (key === 'settings' && value && typeof value === 'object' && !Array.isArray(value)) {
            for (const [inner, setting] of Object.entries(value))
                fields[`settings.${inner}`] = setting;
        }
        else {
            fields[key] = value;
        }
    }
    return fields;
}
/** The field of PATCH /applications/{uuid} that writes a key: the settings' keep their name. */
function patchField(key) {
    return key.startsWith('settings.') ? key.slice('settings.'.length) : key;
}

;// CONCATENATED MODULE: ./src/review-app/plan.ts

/** The webhook secrets a clone keeps: a push signed with one deploys the app. */
const WEBHOOK_SECRETS = [
    'manual_webhook_secret_github',
    'manual_webhook_secret_gitlab',
    'manual_webhook_secret_bitbucket',
    'manual_webhook_secret_gitea'
];
/** The flags a copied variable keeps: they change how its value is read and when it is there. */
const FLAGS = ['is_literal', 'is_multiline', 'is_runtime', 'is_buildtime'];
/**
 * The review app's target and the writes that reach it from a fresh clone, or why none may be
 * made. The order is part of the contract: first what could build or route the clone (auto-deploy,
 * webhook secrets, the pinned commit) goes, with the marker that it is being set up; then its
 * domains; then the template's tasks, tags and variables; then its own variables; the pull
 * request's branch only after all of that (a push to it deploys whatever carries it); then the
 * read-back; the marker that it is ready last.
 */
function planReviewApp(template, request) {
    const refused = [
        ...fieldRefusals(template.fields),
        ...mountRefusals(template),
        ...routeRefusals(template, request)
    ];
    if (refused.length > 0)
        return { refused };
    const { variables, warnings, secrets } = reviewVariables(template.variables, request.env);
    const domains = request.domain || undefined;
    const writes = [
        {
            kind: 'update',
            changes: {
                description: request.pending,
                is_auto_deploy_enabled: false,
                git_commit_sha: 'HEAD',
                ...Object.fromEntries(WEBHOOK_SECRETS.map(field => [field, ''])),
                ...(template.cloned ? resets(template.fields) : {})
            }
        }
    ];
    if (domains)
        writes.push({ kind: 'update', changes: { domains } });
    writes.push({ kind: 'delete-scheduled-tasks' }, { kind: 'remove-tags' });
    writes.push({ kind: 'delete-variables' });
    if (variables.length > 0)
        writes.push({ kind: 'set-variables', variables });
    writes.push({ kind: 'update', changes: { git_branch: request.branch } });
    writes.push({ kind: 'verify' });
    writes.push({ kind: 'update', changes: { description: request.marker } });
    return {
        target: { domains, branch: request.branch, variables },
        writes,
        warnings,
        secrets
    };
}
/**
 * Every trace of production the review app still carries, named without values: a host of the
 * template's in its domains or labels (a server without a proxy drops a new domain and still
 * answers 200), a mount path of the template's, a variable equal to production's, what could
 * build it behind the run's back. Empty when it is the pull request's own.
 */
function tracesOfProduction(template, app, env = []) {
    const traces = [];
    const hosts = templateHosts(template);
    const named = (where, text, note = '') => {
        const found = [...hosts].filter(host => hostsOf(text ?? '').has(host));
        if (found.length > 0)
            traces.push(`its ${where} still name ${found.join(', ')}${note}`);
    };
    named('domains', app.fqdn, ' (a server without a proxy keeps the old domain)');
    named('compose domains', Object.values(app.composeDomains).join(','));
    const labelled = [...hosts].filter(host => (app.customLabels ?? '').toLowerCase().includes(host));
    if (labelled.length > 0)
        traces.push(`its labels still route ${labelled.join(', ')}`);
    const bindPaths = new Set(template.persistentStorages.map(s => s.host_path).filter(Boolean));
    const filePaths = new Set(template.fileStorages.map(s => s.fs_path).filter(Boolean));
    for (const storage of app.persistentStorages) {
        if (storage.host_path && bindPaths.has(storage.host_path)) {
            traces.push(`it mounts ${storage.host_path}`);
        }
    }
    for (const storage of app.fileStorages) {
        if (storage.fs_path && filePaths.has(storage.fs_path))
            traces.push(`it mounts ${storage.fs_path}`);
    }
    const production = productionValues(template.variables);
    const resolved = productionResolved(template.variables);
    const given = new Set(env.map(variable => variable.key));
    const equal = app.variables
        .filter(v => typeof v.key === 'string' && !given.has(v.key))
        .filter(v => typeof v.value === 'string' &&
        v.value !== '' &&
        (production.get(v.key) === v.value ||
            (refersToShared(v.value) && resolvesToProduction(v, resolved))))
        .map(v => v.key);
    if (equal.length > 0) {
        traces.push(`its variable(s) ${[...new Set(equal)].join(', ')} hold production's values`);
    }
    if (app.autoDeploy === true)
        traces.push('auto-deploy is still on');
    if (app.gitCommitSha && app.gitCommitSha !== 'HEAD') {
        traces.push(`it is still pinned to commit ${app.gitCommitSha}`);
    }
    if (app.webhookSecrets.length > 0)
        traces.push(`it keeps ${app.webhookSecrets.join(', ')}`);
    return [...traces, ...fieldTraces(app.fields)];
}
/**
 * A review app found again, as the table finds it: what to put back before it is deployed, or why
 * it may not be (one made by an older version of the action, or changed in Coolify since).
 */
function reviewAppRepairs(fields, name) {
    return { changes: resets(fields), refused: fieldRefusals(fields, `review app ${name}`) };
}
function fieldFindings(fields) {
    const findings = { unknown: [], refused: [], unreset: [] };
    for (const [key, value] of Object.entries(fields)) {
        const rule = REVIEW_FIELDS.get(key);
        if (!rule) {
            if (!isEmptyValue(value))
                findings.unknown.push(key);
        }
        else if (rule.kind === 'refused' && rule.refuses(value)) {
            findings.refused.push([key, rule]);
        }
        else if (rule.kind === 'reset' && !isReset(rule, value)) {
            findings.unreset.push([key, rule]);
        }
    }
    return findings;
}
/** What the table does not let a review app start from; what a reset puts back is not among it. */
function fieldRefusals(fields, subject = 'the template') {
    const { unknown, refused } = fieldFindings(fields);
    const refusals = [];
    if (unknown.length > 0) {
        const them = unknown.length === 1 ? 'it' : 'them';
        refusals.push(`${subject} sets ${unknown.map(key => `\`${key}\``).join(', ')}, which this version of the action does not know: a clone would copy ${them} to pull request code unexamined — clear ${them} in Coolify, or update the action`);
    }
    for (const [key, rule] of refused)
        refusals.push(`${subject}'s \`${key}\`: ${rule.why}`);
    return refusals;
}
/** The first write's part that puts back what reaches production, where the template set it. */
function resets(fields) {
    const changes = {};
    for (const [key, rule] of fieldFindings(fields).unreset)
        changes[patchField(key)] = rule.to;
    return changes;
}
function isReset(rule, value) {
    return rule.to === false ? value !== true : isEmptyValue(value);
}
/** The review app's keys that the table does not let it have, named without their values. */
function fieldTraces(fields) {
    const { unknown, refused, unreset } = fieldFindings(fields);
    return [
        ...unreset.map(([key, rule]) => `its \`${key}\` is still set (${rule.why})`),
        ...refused.map(([key, rule]) => `its \`${key}\`: ${rule.why}`),
        ...unknown.map(key => `it sets \`${key}\`, which this action does not know`)
    ];
}
/**
 * A clone keeps the template's bind mounts and file mounts, with the same paths on the server:
 * the review app would read and write production's files. They cannot be taken off safely either
 * (Coolify deletes a file mount's file on the server with it), so such templates are refused.
 */
function mountRefusals(template) {
    const binds = template.persistentStorages.filter(storage => storage.host_path?.trim());
    const files = template.fileStorages.filter(storage => storage.fs_path?.trim());
    if (binds.length === 0 && files.length === 0)
        return [];
    const paths = [
        ...binds.map(s => `bind mount ${s.host_path} (at ${s.mount_path ?? '?'})`),
        ...files.map(s => `file mount ${s.fs_path} (at ${s.mount_path ?? '?'})`)
    ];
    return [
        `the template mounts production's files — ${paths.join(', ')} — which its clone would share: give review apps a template without bind or file mounts (named volumes are fine)`
    ];
}
/** The review app needs a domain of its own wherever the template has one. */
function routeRefusals(template, request) {
    if (template.fqdn?.trim() && !request.domain) {
        return [
            `input \`review-domain\` is needed: the template ${template.name} has a domain, which a review app would take over from production; give one like https://pr-{pr}.preview.example.com`
        ];
    }
    return [];
}
/** Every host the template is reached by, lower case. */
function templateHosts(template) {
    return hostsOf([template.fqdn ?? '', ...Object.values(template.composeDomains)].join(','));
}
/** The hosts of comma-separated addresses. */
function hostsOf(addresses) {
    const hosts = new Set();
    for (const item of addresses.split(',')) {
        const text = item.trim();
        if (!text)
            continue;
        try {
            hosts.add(new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`).hostname);
        }
        catch {
            // Not an address: nothing routes by it.
        }
    }
    return hosts;
}
/** Production's values by key; undefined for a value Coolify hides (a locked variable). */
function productionValues(variables) {
    const values = new Map();
    for (const v of variables) {
        if (v?.is_preview === true || typeof v?.key !== 'string')
            continue;
        values.set(v.key, typeof v.value === 'string' ? v.value : undefined);
    }
    return values;
}
/** `{{team.X}}`, `{{project.X}}`, `{{environment.X}}`, `{{server.X}}`: a shared variable. */
const SHARED_REFERENCE = /\{\{\s*(team|project|environment|server)\.[^}]*\}\}/i;
function refersToShared(value) {
    return SHARED_REFERENCE.test(value);
}
/**
 * Production's values as its deployments see them, shared variables resolved (`real_value`, shown
 * with read:sensitive): a review app stays in production's environment, so a reference in it
 * resolves to the same.
 */
function productionResolved(variables) {
    const values = new Set();
    for (const v of variables) {
        if (v?.is_preview === true)
            continue;
        const value = typeof v?.real_value === 'string' ? v.real_value : v?.value;
        if (typeof value === 'string' && value !== '')
            values.add(value);
    }
    return values;
}
/** A reference whose resolved value is production's, or that Coolify did not resolve for us. */
function resolvesToProduction(v, production) {
    return typeof v.real_value !== 'string' || production.has(v.real_value);
}
/**
 * The review app's variables: the template's preview variables that are not production's (Coolify
 * gives every production variable a preview twin with the same value), with their flags, then
 * `env` over them. Locked ("shown once") values are shown to no token, so they cannot be copied.
 */
function reviewVariables(listed, env) {
    const production = productionValues(listed);
    const resolved = productionResolved(listed);
    const given = new Set((env ?? []).map(variable => variable.key));
    const byKey = new Map();
    const twins = [];
    const shared = [];
    const locked = [];
    const unverifiable = [];
    for (const v of listed) {
        if (v?.is_preview !== true || typeof v.key !== 'string' || given.has(v.key))
            continue;
        const key = v.key;
        if (v.is_shown_once === true) {
            locked.push(key);
        }
        else if (typeof v.value !== 'string') {
            // Hidden although not locked: the token cannot read sensitive values (checked before).
            continue;
        }
        else if (production.has(key) && production.get(key) === undefined) {
            unverifiable.push(key);
        }
        else if (production.get(key) === v.value) {
            twins.push(key);
        }
        else if (refersToShared(v.value) && resolvesToProduction(v, resolved)) {
            shared.push(key);
        }
        else {
            const flags = Object.fromEntries(FLAGS.filter(flag => typeof v[flag] === 'boolean').map(flag => [flag, v[flag]]));
            byKey.set(key, { key, value: v.value, ...flags });
        }
    }
    for (const variable of env ?? [])
        byKey.set(variable.key, variable);
    const warnings = [];
    const own = "give the review app its own with `env`, or a value of its own in the template's preview variable in Coolify";
    if (twins.length > 0) {
        warnings.push(`Not copied to the review app: ${twins.join(', ')} — the template's preview value is production's (Coolify gives each preview variable production's value until it is edited); ${own}.`);
    }
    if (shared.length > 0) {
        warnings.push(`Not copied to the review app: ${shared.join(', ')} — a shared variable that resolves to production's value (the review app sits in production's environment), or whose resolved value Coolify did not show; ${own}.`);
    }
    if (unverifiable.length > 0) {
        warnings.push(`Not copied to the review app: ${unverifiable.join(', ')} — production's value is locked, so the preview value cannot be shown to differ from it; ${own}.`);
    }
    if (locked.length > 0) {
        warnings.push(`Not copied to the review app: ${locked.join(', ')} — locked ("shown once") in the template, so Coolify shows the value to no token; give it with \`env\`.`);
    }
    const copied = [...byKey.values()];
    const secrets = copied.filter(v => !given.has(v.key)).map(v => v.value);
    return { variables: copied, warnings, secrets };
}

;// CONCATENATED MODULE: ./src/rollout/configure.ts

/**
 * Sets `git-branch`, `domains` and `env` on every application before it is deployed: variables
 * through PATCH /applications/{uuid}/envs/bulk, the other settings through PATCH
 * /applications/{uuid} carrying only the fields given. A server without the bulk route (the seed
 * contract) takes the variables as one string in that PATCH instead. A change Coolify refuses
 * throws, so nothing is deployed with settings other than those asked for.
 */
async function applySettings(client, config, signal, say) {
    const settings = {};
    if (config.gitBranch !== undefined)
        settings.git_branch = config.gitBranch;
    if (config.domains !== undefined)
        settings.domains = config.domains;
    const env = config.env;
    if (Object.keys(settings).length === 0 && !env)
        return;
    // Learnt from the first answer, so that later applications skip a route that is not there.
    let bulkRoute = true;
    for (const uuid of config.appUuids) {
        try {
            const changes = { ...settings };
            if (env && bulkRoute && !(await setVariables(client, uuid, env, signal))) {
                bulkRoute = false;
                say.note("This Coolify has no route for bulk variables (an older server): setting them through the application's PATCH.");
            }
            if (env && !bulkRoute)
                changes.environment_variables = joined(env);
            if (Object.keys(changes).length > 0)
                await client.updateApplication(uuid, changes, signal);
        }
        catch (error) {
            if (error instanceof CoolifyError && error.status === 422) {
                throw error.withHint('Check the `git-branch`, `domains` and `env` inputs; nothing was deployed');
            }
            throw error;
        }
        say.note(`${uuid}: set ${describeSettings(settings, env)}`);
    }
}
/** What was set, for the log: variable names, never their values. */
function describeSettings(settings, env) {
    const done = Object.entries(settings).map(([field, value]) => `${field} to ${value}`);
    if (env)
        done.push(`environment variables ${env.map(variable => variable.key).join(', ')}`);
    return done.join(', ');
}
/**
 * Sets one application's variables: through the bulk route, or, on a server without it, as the
 * application's PATCH of `KEY=value` lines (which keeps no flags).
 */
async function writeVariables(client, uuid, env, signal) {
    if (await setVariables(client, uuid, env, signal))
        return;
    await client.updateApplication(uuid, { environment_variables: joined(env) }, signal);
}
/** True once set; false when the server has no bulk route, so nothing was set. */
async function setVariables(client, uuid, env, signal) {
    try {
        await client.updateApplicationEnvs(uuid, env, signal);
        return true;
    }
    catch (error) {
        if (isMissingRoute(error))
            return false;
        throw error;
    }
}
/** The seed contract's form: `KEY=value` lines. */
function joined(env) {
    return env.map(({ key, value }) => `${key}=${value}`).join('\n');
}

;// CONCATENATED MODULE: ./src/review-app/setup.ts
/**
 * Setting a review app up: the plan (plan.ts) applied to one just made or left half set up, read
 * back and checked for traces of production; and a found one put back to the table.
 */








/**
 * A review app found again is held to the table like a new one: what reaches production is put
 * back before it is deployed (one made by an older version of the action may carry it), and one
 * the table refuses is not deployed at all.
 */
async function repairFound(client, uuid, name, signal, say) {
    const { changes, refused } = reviewAppRepairs(flattenApplication(await client.getApplication(uuid, signal)), name);
    if (refused.length > 0) {
        throw new ActionError(`Review app ${uuid} was not deployed: ${refused.join('; ')}. Delete it (\`delete-preview\`) and run again.`);
    }
    const fields = Object.keys(changes);
    if (fields.length === 0)
        return;
    await client.updateApplication(uuid, changes, signal);
    say.note(`Review app ${name} (${uuid}): put back ${fields.join(', ')} to Coolify's default`);
}
/**
 * What the template is, for the plan. A clone starts as the template does; an application created
 * from the repository (before 4.3) starts with none of its storages, labels or compose domains.
 */
async function templateFacts(client, template, cloned, signal) {
    let variables;
    try {
        variables = await client.listApplicationEnvs(template.uuid, signal);
    }
    catch (error) {
        if (!isMissingRoute(error))
            throw error;
    }
    variables = listOf(variables);
    // Locked values are hidden from every token; any other hidden one means no `read:sensitive`.
    if (variables.some(v => v?.is_shown_once !== true && typeof v?.value !== 'string')) {
        throw new ActionError("Coolify hides the template's variables from this token: a review app copies its preview variables and checks them against production's, which needs the `read:sensitive` ability.");
    }
    const base = {
        name: template.name ?? template.uuid,
        fields: flattenApplication(template),
        cloned,
        fqdn: template.fqdn,
        buildPack: template.build_pack,
        variables
    };
    if (!cloned)
        return { ...base, composeDomains: {}, persistentStorages: [], fileStorages: [] };
    const storages = await client.listApplicationStorages(template.uuid, signal);
    return {
        ...base,
        composeDomains: composeDomainsOf(template.docker_compose_domains),
        customLabels: labelsOf(template.custom_labels),
        persistentStorages: listOf(storages?.persistent_storages),
        fileStorages: listOf(storages?.file_storages)
    };
}
/** The review app as Coolify now has it, to compare with the plan's target. */
async function readBack(client, uuid, signal) {
    const app = await client.getApplication(uuid, signal);
    const storages = await client.listApplicationStorages(uuid, signal).catch(error => {
        if (isMissingRoute(error))
            return undefined;
        throw error;
    });
    const variables = await listed(client.listApplicationEnvs(uuid, signal));
    return {
        fields: flattenApplication(app),
        fqdn: app.fqdn,
        composeDomains: composeDomainsOf(app.docker_compose_domains),
        customLabels: labelsOf(app.custom_labels),
        autoDeploy: app.settings?.is_auto_deploy_enabled,
        gitCommitSha: app.git_commit_sha,
        webhookSecrets: WEBHOOK_SECRETS.filter(field => Boolean(app[field])),
        persistentStorages: listOf(storages?.persistent_storages),
        fileStorages: listOf(storages?.file_storages),
        variables
    };
}
/** docker_compose_domains, stored as JSON `{service: {domain}}`: each service's domain(s). */
function composeDomainsOf(stored) {
    let parsed;
    try {
        parsed = JSON.parse(stored ?? '{}');
    }
    catch {
        return {};
    }
    const domains = {};
    for (const [service, entry] of Object.entries(parsed ?? {})) {
        const domain = entry?.domain;
        if (typeof domain === 'string')
            domains[service] = domain;
    }
    return domains;
}
/** custom_labels are stored base64-encoded; undefined when Coolify hid them. */
function labelsOf(stored) {
    if (typeof stored !== 'string')
        return undefined;
    return Buffer.from(stored, 'base64').toString('utf8');
}
/**
 * Applies the plan to an application this run made, or finishes one a run left half set up.
 * Anything failing deletes it; when even that fails, the error names it. Returns the uuid of
 * another run's review app when that one was finished meanwhile (this run's is then deleted).
 */
async function setUp(client, uuid, { facts, plan, env, names }, signal, undo, say, state) {
    const [first, ...rest] = plan.writes;
    const made = !state.marked;
    try {
        await applyWrite(client, uuid, first, facts, env, signal);
        state.marked = true;
        // One that another run finished meanwhile has passed that run's read-back: it is kept.
        const finished = made &&
            (await findReviewApps(client, names, signal)).find(app => app.uuid !== uuid && app.description === names.marker);
        if (finished) {
            say.note(`Another run made review app ${finished.uuid} first: keeping it, deleting ${uuid}`);
            await removeOrSay(client, uuid, undo(), say, 'it is marked as being set up');
            return finished.uuid;
        }
        for (const write of rest)
            await applyWrite(client, uuid, write, facts, env, signal);
    }
    catch (error) {
        const left = await removeHalfMade(client, uuid, undo(), say);
        if (!left)
            throw error;
        const marked = state.marked ? ' (it is marked as being set up, so no run deploys it)' : '';
        throw new ActionError(`${describeError(error)} Review app ${uuid} could not be deleted (${left})${marked}: delete it in Coolify.`);
    }
    return undefined;
}
/** One write of the plan. */
async function applyWrite(client, uuid, write, facts, env, signal) {
    switch (write.kind) {
        case 'update':
            await client.updateApplication(uuid, write.changes, signal);
            return;
        case 'delete-scheduled-tasks':
            for (const task of await listed(client.listScheduledTasks(uuid, signal))) {
                if (task?.uuid)
                    await client.deleteScheduledTask(uuid, task.uuid, signal).catch(unlessGone);
            }
            return;
        case 'remove-tags':
            // Servers before 4.2 have no tags per application, so a new app there has none.
            for (const tag of await listed(client.listApplicationTags(uuid, signal))) {
                if (tag?.uuid)
                    await client.removeApplicationTag(uuid, tag.uuid, signal).catch(unlessGone);
            }
            return;
        case 'delete-variables':
            for (const variable of await listed(client.listApplicationEnvs(uuid, signal))) {
                if (variable?.uuid) {
                    await client.deleteApplicationEnv(uuid, variable.uuid, signal).catch(unlessGone);
                }
            }
            return;
        case 'set-variables':
            await writeVariables(client, uuid, write.variables, signal);
            return;
        case 'verify': {
            const traces = tracesOfProduction(facts, await readBack(client, uuid, signal), env);
            if (traces.length > 0) {
                throw new ActionError(`Review app ${uuid} still carried production's settings after its setup — ${traces.join('; ')} — so it was not deployed.`);
            }
        }
    }
}
/** A list Coolify answered; none on a server without the route. */
async function listed(answer) {
    try {
        return listOf(await answer);
    }
    catch (error) {
        if (isMissingRoute(error))
            return [];
        throw error;
    }
}

;// CONCATENATED MODULE: ./src/review-app/review-app.ts











/** How often a run looks at a review app another run is setting up. */
const WAIT_FOR_OTHER_MS = 1000;
/**
 * The longest a run waits for a review app another run is setting up: a setup takes seconds, so
 * one still unfinished after this was left by a run that stopped halfway.
 */
const OTHER_RUN_WAIT_MS = 15_000;
/**
 * Checks, before any request, what a review app needs from the event: a pull request of this
 * repository (Coolify builds branches of the template's repository only) and its branch.
 */
function checkReviewEvent(config, event) {
    if (!config.reviewApp)
        return;
    if (isFromFork(event)) {
        throw new ActionError(`Pull request ${config.pr} comes from a fork (${event.headRepository}): Coolify builds branches of the template's repository only, so it gets no review app.`);
    }
    if (!config.gitBranch && !config.deletePreview && !event.headRef) {
        throw new ActionError("Input `review-app` builds the pull request's branch, which the event does not name: run it on `pull_request`, or give `git-branch`.");
    }
}
/**
 * The review app for the pull request: found again by its name and marker, or made from the
 * template — cloned where Coolify can (4.3+), else created from the template's repository — and
 * set up by the plan (plan.ts) before anything deploys it, then read back: any trace of
 * production left on it deletes it and fails the step. A run that made one while another run made
 * one too keeps the older and deletes its own.
 */
async function openReviewApp(client, config, event, signal, undo, say) {
    const { template, names } = await templateOf(client, config, event.repository, signal);
    const branch = config.gitBranch ?? event.headRef;
    const compose = template.build_pack === 'dockercompose';
    // Set up just now, it needs nothing more; found again, its domain and branch are set again,
    // and `env`, as for any application (compose applications route by service, not `domains`).
    const target = (uuid, setUp) => ({
        ...config,
        appUuids: [uuid],
        pr: undefined,
        gitBranch: setUp ? undefined : branch,
        domains: setUp || compose ? undefined : config.reviewDomain,
        env: setUp ? undefined : config.env,
        reviewApp: false
    });
    const reviewApp = (uuid, setUp) => ({
        uuid,
        name: names.name,
        config: target(uuid, setUp)
    });
    const listed = await client.listApplications(signal);
    const found = reviewAppsIn(listed, names);
    const ready = found.find(app => app.description === names.marker);
    if (ready) {
        await repairFound(client, ready.uuid, names.name, signal, say);
        say.note(`Review app ${names.name} (${ready.uuid}) found: deploying pull request ${config.pr} to it`);
        return reviewApp(ready.uuid, false);
    }
    const destination = await cloneDestination(client, config, template.uuid, signal);
    const facts = await templateFacts(client, template, destination !== undefined, signal);
    const plan = planReviewApp(facts, {
        branch,
        domain: config.reviewDomain,
        env: config.env,
        pending: names.pending,
        marker: names.marker
    });
    if (plan.refused) {
        throw new ActionError(`No review app for pull request ${config.pr}: ${plan.refused.join('; ')}.`);
    }
    for (const warning of plan.warnings)
        say.warn(warning);
    // As the variables of debug logs: short values ("true", "3000") would star out the whole log.
    for (const line of plan.secrets.flatMap(secret => secret.split('\n'))) {
        if (line.length >= MIN_MASKED_LENGTH)
            mask(line);
    }
    const setup = { facts, plan, env: config.env, names };
    const unfinished = found[0];
    if (unfinished) {
        // Another run may be setting it up right now: give it a short while, then finish what it left.
        if ((await waitForOtherRun(client, unfinished.uuid, names, signal)) === 'ready') {
            return reviewApp(unfinished.uuid, false);
        }
        say.note(`Review app ${names.name} (${unfinished.uuid}) was left half set up: finishing it`);
        await setUp(client, unfinished.uuid, setup, signal, undo, say, { marked: true });
        return reviewApp(unfinished.uuid, true);
    }
    const before = new Set(namesakesIn(listed, names.name));
    if (destination?.sharesServer)
        say.warn(SHARED_SERVER_WARNING(names.name));
    const uuid = destination
        ? await cloneTemplate(client, template, destination.uuid, names, before, signal, undo, say)
        : await createFromRepository(client, config, template, { names, branch }, signal);
    say.note(`Review app ${names.name} (${uuid}) made from the template for pull request ${config.pr}`);
    const other = await setUp(client, uuid, setup, signal, undo, say, { marked: false });
    if (other)
        return reviewApp(other, false);
    const kept = await keepOlder(client, names, uuid, signal, undo, say);
    return reviewApp(kept, true);
}
/**
 * Two runs for one pull request may each have made a review app: the older is kept, so this run
 * deletes its own when an older one exists, once that one is ready — or keeps its own after all
 * when the other run deleted that one meanwhile, or has not finished it within OTHER_RUN_WAIT_MS.
 */
async function keepOlder(client, names, own, signal, undo, say) {
    const found = await findReviewApps(client, names, signal);
    const ownIndex = found.findIndex(app => app.uuid === own);
    const older = ownIndex > 0 ? found[0] : undefined;
    if (!older)
        return own;
    const other = await waitForOtherRun(client, older.uuid, names, signal);
    if (other === 'gone') {
        say.note(`Review app ${older.uuid} of another run was deleted meanwhile: keeping ${own}`);
        return own;
    }
    if (other === 'unfinished') {
        say.note(`Review app ${older.uuid} of another run is still being set up after ${OTHER_RUN_WAIT_MS / 1000} s (never deployed so): keeping ${own}`);
        return own;
    }
    say.note(`Another run made review app ${older.uuid} first: keeping it, deleting ${own}`);
    await removeOrSay(client, own, undo(), say, 'it is a finished review app of this pull request');
    return older.uuid;
}
/**
 * What becomes of a review app another run is setting up, within OTHER_RUN_WAIT_MS: ready, gone,
 * or still unfinished (a run that stopped halfway leaves it so).
 */
async function waitForOtherRun(client, uuid, names, signal) {
    const bound = deadline(OTHER_RUN_WAIT_MS);
    const waited = linked([signal, bound.signal]);
    try {
        for (;;) {
            const app = await client.getApplication(uuid, waited.signal).catch(error => {
                if (isGone(error))
                    return undefined;
                throw error;
            });
            if (app?.description === names.marker)
                return 'ready';
            if (app?.description !== names.pending)
                return 'gone';
            await sleep(WAIT_FOR_OTHER_MS, waited.signal);
        }
    }
    catch (error) {
        if (bound.signal.aborted && !signal.aborted)
            return 'unfinished';
        throw error;
    }
    finally {
        waited.release();
        bound.release();
    }
}

;// CONCATENATED MODULE: ./src/follow/application-reads.ts



/**
 * The applications in Coolify, for all rollouts: their names and URLs, and their status for the
 * health checks. The reads due at the same turn, whatever they are for, share one request — of
 * the application alone, or the list when several wait — so thirty applications finishing
 * together cost one request, not thirty. The read goes on under the step's signal while anyone
 * waits for it: a reader whose own time ran out stops waiting, the others do not.
 */
class ApplicationReads {
    client;
    signal;
    #batch;
    constructor(client, 
    /** Waits for the next turn among the step's reads of Coolify. */
    turn, 
    /** The step's signal: the shared reads are made under it. */
    signal, 
    /** How many applications may still be read: their health checks are under way or ahead. */
    expected = () => 1, 
    /** Longest a turn waits for the others to be due too. */
    gatherMs = 0) {
        this.client = client;
        this.signal = signal;
        this.#batch = new Batch({
            turn,
            read: (uuids, signal) => this.readApps(uuids, signal),
            expected,
            gatherMs,
            left: ended
        });
    }
    /** The application as Coolify gives it, in the next turn; rejected once `signal` aborts. */
    read(appUuid, signal) {
        return this.#batch.wait(appUuid, this.signal, signal);
    }
    /** The application's status, with when Coolify refreshed it. */
    async status(appUuid, signal) {
        const { app, answeredAt } = await this.read(appUuid, signal);
        return {
            status: typeof app.status === 'string' ? app.status : undefined,
            refreshedAt: timeOf(app.last_online_at),
            answeredAt
        };
    }
    /** One read for all `uuids`; an application the list lacks is not found. */
    async readApps(uuids, signal) {
        const { apps, date } = await readDated(this.client, uuids, signal);
        return uuid => {
            const app = apps.find(item => item?.uuid === uuid) ?? (uuids.length === 1 ? apps[0] : undefined);
            if (!app)
                throw notListed(uuid);
            return { app, answeredAt: date };
        };
    }
}
/** Applications of Coolify, with the time it answered: one read for one, the list for several. */
async function readDated(client, uuids, signal) {
    if (uuids.length === 1) {
        const { body, date } = await client.getApplicationDated(uuids[0], signal);
        return { apps: [body], date };
    }
    const { body, date } = await client.listApplicationsDated(signal);
    return { apps: listOf(body), date };
}
/** Why a reader stopped waiting: its time ran out (said as the client says it), or the run's cancel. */
function ended(signal) {
    const reason = signal.reason;
    if (!(reason instanceof DOMException && reason.name === 'TimeoutError'))
        return reason;
    return new CoolifyError('GET /applications', 'Coolify did not answer in the time it had', '', {
        transient: true,
        unanswered: true,
        cutOff: true
    });
}
function notListed(uuid) {
    return new CoolifyError('GET /applications', `application ${uuid} is not in the list Coolify gave`, '', { transient: true });
}

;// CONCATENATED MODULE: ./src/model/deployment.ts


const TAIL_LINES = 40;
/**
 * One deployment a rollout started or joined, and the only place its state changes: the trigger
 * creates it, the rollout's phases advance it through these methods (an ended status changes only
 * as `canBecome` allows), reporters read it as a DeploymentView.
 */
class Deployment {
    appUuid;
    triggeredAt;
    kind;
    #status = 'queued';
    #uuid;
    #name;
    /** Undefined until read; null when a read carried no status. */
    #coolifyStatus;
    #reason;
    #appUrl;
    #link;
    #commit;
    #endedAt;
    /** Coolify's own times, on Coolify's clock: the duration when both are known. */
    #createdAt;
    #finishedAt;
    #tail = [];
    #imageTag;
    #rolledBack;
    #rollbackNote;
    #runtimeLog = [];
    #warning;
    #startedElsewhere = false;
    constructor(
    /** The resource's uuid: an application's, or a service's or database's. */
    appUuid, name, 
    /** Coolify's deployment uuid; undefined for resources with nothing to follow. */
    uuid, triggeredAt, kind = 'application') {
        this.appUuid = appUuid;
        this.triggeredAt = triggeredAt;
        this.kind = kind;
        this.#name = name;
        this.#uuid = uuid;
    }
    /** The next deployment of the same application (a rollback): same name and URL. */
    static next(earlier, uuid, at) {
        const next = new Deployment(earlier.appUuid, earlier.name, uuid, at, earlier.kind);
        next.#appUrl = earlier.appUrl;
        return next;
    }
    get status() {
        return this.#status;
    }
    get uuid() {
        return this.#uuid;
    }
    get name() {
        return this.#name;
    }
    /** Coolify's status word as last read, kept when it is one we do not know. */
    get coolifyStatus() {
        return this.#coolifyStatus ?? undefined;
    }
    /** Why it ended the way it did, when the status alone does not say. */
    get reason() {
        return this.#reason;
    }
    /** Where it is served: the application's first `fqdn`, or its preview's address. */
    get appUrl() {
        return this.#appUrl;
    }
    /** The deployment's page in Coolify. */
    get link() {
        return this.#link;
    }
    get commit() {
        return this.#commit;
    }
    /** The last lines of its log, for summaries and annotations. */
    get tail() {
        return this.#tail;
    }
    /** Docker-image apps: the image tag this deployment runs. */
    get imageTag() {
        return this.#imageTag;
    }
    /** After a failure with `rollback-on-failure`: whether what ran before is running again. */
    get rolledBack() {
        return this.#rolledBack;
    }
    /** What the rollback did: what runs now, or why nothing was rolled back. */
    get rollbackNote() {
        return this.#rollbackNote;
    }
    /** The end of the application's runtime log, read when it turned out unhealthy. */
    get runtimeLog() {
        return this.#runtimeLog;
    }
    /** What could not be confirmed, though it did not fail the step. */
    get warning() {
        return this.#warning;
    }
    get ended() {
        return hasEnded(this.#status);
    }
    /** Has a Coolify deployment and has not ended: what the watch loop follows and a cancel stops. */
    get running() {
        return this.#uuid !== undefined && !this.ended;
    }
    /** When Coolify says it ended, on Coolify's clock; undefined until then. */
    get finishedAt() {
        return this.#finishedAt;
    }
    /** Coolify's own duration when it gave both times, else from the trigger to when we saw the end. */
    get durationMs() {
        if (this.#createdAt !== undefined && this.#finishedAt !== undefined) {
            return Math.max(0, this.#finishedAt - this.#createdAt);
        }
        return this.#endedAt === undefined ? undefined : this.#endedAt - this.triggeredAt;
    }
    /**
     * Started by someone else (the UI, a webhook, another run) and only joined or found by this
     * run: followed and reported, never cancelled by it.
     */
    get startedElsewhere() {
        return this.#startedElsewhere;
    }
    /**
     * Follows another Coolify deployment: the real one behind a placeholder uuid, or (`startedHere`)
     * one this run queued in its place.
     */
    follow(uuid, startedHere = false) {
        this.#uuid = uuid;
        if (startedHere)
            this.#startedElsewhere = false;
    }
    /** Marks it as another's: this run follows it but leaves it alone. */
    joined() {
        this.#startedElsewhere = true;
    }
    /**
     * Takes the application's name and URL from Coolify's application record: the preview's URL when
     * it deploys pull request `pr` (none rather than production's when that cannot be known).
     */
    describe(app, pr) {
        if (app.name && this.#name === this.appUuid)
            this.#name = app.name;
        const url = pr === undefined ? app.fqdn?.split(',')[0]?.trim() : previewUrl(app, pr);
        if (url)
            this.#appUrl = url;
    }
    /** Takes in a read of the deployment; returns true when Coolify's status word changed. */
    observe(detail, instanceUrl) {
        if (detail.application_name)
            this.#name = detail.application_name;
        if (detail.commit)
            this.#commit = detail.commit;
        if (detail.deployment_url)
            this.#link = new URL(detail.deployment_url, `${instanceUrl}/`).href;
        this.#createdAt = timeOf(detail.created_at) ?? this.#createdAt;
        this.#finishedAt = timeOf(detail.finished_at) ?? this.#finishedAt;
        const previous = this.#coolifyStatus;
        this.#coolifyStatus = typeof detail.status === 'string' ? detail.status : null;
        const status = statusFromCoolify(detail.status);
        // Coolify's word moves a deployment on until it ended; after that, only the rollout does.
        if (status && !this.ended) {
            this.#status = status;
            if (this.ended)
                this.#endedAt ??= Date.now();
        }
        return previous !== this.#coolifyStatus;
    }
    /** Ends it with `status`, unless it ended otherwise already; false when that was refused. */
    end(status, reason) {
        if (!canBecome(this.#status, status))
            return false;
        this.#status = status;
        if (reason)
            this.#reason = reason;
        this.#endedAt ??= Date.now();
        return true;
    }
    /**
     * Coolify started it (a service or database) and gave nothing to follow: `started`, not yet
     * timed, until its status says whether it came up.
     */
    started() {
        if (!this.ended)
            this.#status = 'started';
    }
    /** Passes, but something about it could not be confirmed. */
    doubt(warning) {
        this.#warning = warning;
    }
    /** Records the image tag it deploys, as asked or as its log showed. */
    ranImage(tag) {
        this.#imageTag = tag;
    }
    /** Finished (or started) in Coolify, but it did not come up; `runtimeLog` tells why. */
    unhealthy(reason, runtimeLog) {
        if (this.end('unhealthy', reason))
            this.#runtimeLog = runtimeLog;
    }
    /** The outcome of redeploying what ran before this one failed. */
    rollback(done, note) {
        this.#rolledBack = done;
        this.#rollbackNote = note;
    }
    /**
     * Keeps the end of its log for summaries, annotations and the pull request comment: never a
     * hidden entry, which stays in the job log (and there only with `debug-logs`).
     */
    remember(lines) {
        const visible = lines.filter(line => !line.hidden);
        for (const line of visible.length > TAIL_LINES ? visible.slice(-TAIL_LINES) : visible) {
            if (this.#tail.length === TAIL_LINES)
                this.#tail.shift();
            this.#tail.push(line);
        }
    }
}
/** Coolify's preview address when the application sets none. */
const DEFAULT_PREVIEW_TEMPLATE = '{{pr_id}}.{{domain}}';
/**
 * The address Coolify gives an application's preview of pull request `pr`: the template's host
 * in place of the host of the application's first domain, whose scheme, port and path stay.
 * Undefined without a domain, and when the template holds `{{random}}`, a value Coolify draws
 * when it creates the preview and does not tell.
 */
function previewUrl(app, pr) {
    const first = app.fqdn?.split(',')[0]?.trim();
    if (!first)
        return undefined;
    const template = app.preview_url_template?.trim() || DEFAULT_PREVIEW_TEMPLATE;
    if (template.includes('{{random}}'))
        return undefined;
    let url;
    try {
        url = new URL(first);
    }
    catch {
        return undefined;
    }
    const host = template.replaceAll('{{domain}}', url.hostname).replaceAll('{{pr_id}}', String(pr));
    const port = url.port ? `:${url.port}` : '';
    const path = url.pathname === '/' ? '' : url.pathname;
    return `${url.protocol}//${host}${port}${path}`;
}

;// CONCATENATED MODULE: ./src/rollout/debug-logs.ts



/**
 * `debug-logs: true` prints Coolify's hidden entries: its job's own commands, which handle the
 * application's variables. Says once who can read them, and masks the variables' values, plain
 * and base64, where the token may read them (`read:sensitive`); payloads are redacted as printed.
 */
async function guardDebugLogs(client, config, signal, say) {
    if (!config.debugLogs)
        return;
    say.warn("`debug-logs: true` prints Coolify's internal commands into this job's log, which everyone who can read the run can read (everyone, on a public repository). Encoded payloads are redacted and the applications' variables masked where the token can read them; nothing hidden goes to the summary, annotations or pull request comment.");
    for (const uuid of config.appUuids) {
        try {
            const variables = await client.listApplicationEnvs(uuid, signal);
            for (const variable of listOf(variables)) {
                const value = variable?.value;
                if (typeof value !== 'string' || value.length < MIN_MASKED_LENGTH)
                    continue;
                mask(value);
                mask(Buffer.from(value).toString('base64'));
            }
        }
        catch (error) {
            if (signal.aborted)
                throw error;
            say.warn(`Could not read the variables of ${uuid} to mask them: ${describeError(error)}`);
        }
    }
}

;// CONCATENATED MODULE: ./src/health/probe.ts


/** Longest wait for one answer: a slow application counts as not answering. */
const PROBE_TIMEOUT_MS = 10_000;
/**
 * One GET of the application's own address, to see whether it answers 2xx or 3xx (redirects are
 * not followed: a login redirect means it is up). It goes to the application, not to Coolify, so
 * it carries none of the action's headers: never the token, never `headers`.
 */
async function probe(url, signal) {
    // Through the runner's proxy, as a browser on it would reach the application.
    const target = new URL(url);
    let agent;
    try {
        agent = new HttpAgent(target, { timeoutMs: PROBE_TIMEOUT_MS });
    }
    catch (error) {
        // A proxy for the application's address that cannot be used (a socks:// one).
        return { ok: false, what: `was not asked: ${describeError(error)}` };
    }
    const { proxy } = agent;
    try {
        const response = await agent.request(target, {
            method: 'GET',
            headers: { 'user-agent': 'deploy-to-coolify-action health check' },
            signal
        });
        const status = response.status;
        return { ok: status >= 200 && status < 400, what: `answered ${status}` };
    }
    catch (error) {
        if (signal.aborted)
            return { ok: false, what: 'did not answer in time' };
        const code = error?.code;
        const through = proxy ? ` through the proxy ${proxy.name}` : '';
        return {
            ok: false,
            what: `did not answer${through} (${typeof code === 'string' ? code : describeError(error)})`
        };
    }
    finally {
        agent.close();
    }
}

;// CONCATENATED MODULE: ./src/health/readiness.ts
/**
 * The words health and startup checks share: what a check found, which reads of Coolify's status
 * count (only those it refreshed after the change), and which status means up.
 */
/** Coolify's `Date` header and timestamps are to the second. */
const DATE_RESOLUTION_MS = 1000;
/**
 * `running` with a health check that passed, or none (`unknown`); not while the check is still
 * `starting`, nor while it fails.
 */
function isUp(status) {
    const [state, health] = status.trim().toLowerCase().split(':');
    return state === 'running' && health !== 'starting' && health !== 'unhealthy';
}
/**
 * Which looks count: those whose status Coolify refreshed after the start ended, judged on
 * Coolify's own clock. The start has ended by the first look that is not `starting` (a service's
 * reads say `starting` while Coolify's start command runs; a database's start is not visible, so
 * from the first look), so a refresh counts from the second after that look's answer. Without a
 * `Date` on the answer, it must be later than the refresh that look showed.
 */
class Freshness {
    #since;
    /** `endedAt`: when the change ended on Coolify's clock, when that is known. */
    constructor(endedAt) {
        this.#since = endedAt === undefined ? undefined : nextSecond(endedAt);
    }
    counts(look) {
        this.#since ??=
            look.answeredAt !== undefined
                ? nextSecond(look.answeredAt)
                : (look.refreshedAt ?? Number.NEGATIVE_INFINITY) + 1;
        return look.refreshedAt !== undefined && look.refreshedAt >= this.#since;
    }
}
/**
 * Coolify's timestamps and `Date` keep whole seconds: a refresh within the second something ended
 * reads the same as one after it, so a refresh counts from the next whole second on.
 */
function nextSecond(ms) {
    return Math.floor(ms / DATE_RESOLUTION_MS) * DATE_RESOLUTION_MS + DATE_RESOLUTION_MS;
}

;// CONCATENATED MODULE: ./src/health/health.ts




/** Lines of the runtime log read for an application that did not come up. */
const RUNTIME_LINES = 100;
/**
 * After `finished`: waits, until `signal` aborts, for Coolify to report the application running
 * and, with `health-url`, for that URL to answer 2xx or 3xx. Undefined when there is nothing to
 * check (a preview without a whole URL). An application that is up at once costs one read of it
 * (and one request to the URL).
 */
async function checkHealth(deployment, options, signal) {
    const preview = options.pr !== undefined;
    const url = healthUrlOf(options.healthUrl, deployment.appUrl, preview);
    if (preview && !url)
        return undefined;
    if (options.healthUrl && !url) {
        const problem = `\`health-url\` ${options.healthUrl} is a path, but the application has no URL in Coolify`;
        return { up: false, problem, unknown: false };
    }
    let last;
    const freshness = new Freshness(options.since);
    for (;;) {
        const found = await look(deployment.appUuid, url, !preview, options, freshness, signal);
        // A look cut off by the end of the check says less than the one before it.
        if (signal.aborted && last)
            break;
        // An unknown look (unread, or not refreshed) never replaces a known one.
        if (!last || !isUnknown(found) || isUnknown(last))
            last = found;
        if (found.up || signal.aborted)
            break;
        try {
            await sleep(options.pollIntervalMs, signal);
        }
        catch {
            break;
        }
    }
    return last;
}
function isUnknown(health) {
    return !health.up && health.unknown;
}
/**
 * One look at the application: its status in Coolify, then its URL. A status Coolify has not
 * refreshed since the deployment ended may be the old container's: it decides nothing.
 */
async function look(appUuid, url, checkStatus, { readStatus }, freshness, signal) {
    let unread;
    if (checkStatus) {
        try {
            const found = await readStatus(appUuid, signal);
            const status = (found.status ?? 'unknown').slice(0, 40);
            // Without a refresh time (servers before 4.x), the status is taken as read.
            const fresh = found.refreshedAt === undefined || freshness.counts(found);
            if (!fresh) {
                unread = `Coolify has not refreshed its status since the deployment ended (it still reports ${status})`;
            }
            else if (!isUp(status)) {
                return { up: false, problem: `Coolify reports it ${status}`, unknown: false };
            }
        }
        catch (error) {
            unread = `could not read its status: ${describeError(error)}`;
        }
    }
    if (url) {
        const result = await probe(url, signal);
        if (!result.ok)
            return { up: false, problem: `${url} ${result.what}`, unknown: false };
    }
    // The URL answering says it is up, whatever Coolify could not tell.
    if (unread && !url)
        return { up: false, problem: unread, unknown: true };
    return { up: true, url };
}
/**
 * The URL to check: `health-url` when it is a whole URL, else that path on the application's URL.
 * A preview has its own address, so a path on production's is not its health.
 */
function healthUrlOf(healthUrl, appUrl, preview) {
    if (!healthUrl)
        return undefined;
    if (!healthUrl.startsWith('/'))
        return healthUrl;
    if (preview || !appUrl)
        return undefined;
    return appUrl.replace(/\/+$/, '') + healthUrl;
}
/** The end of the application's runtime log; none when Coolify has none to give. */
async function runtimeLog(client, appUuid, signal) {
    try {
        const answer = await client.getApplicationLogs(appUuid, RUNTIME_LINES, signal);
        const text = typeof answer?.logs === 'string' ? answer.logs : '';
        return text.split(/\r?\n/).filter(line => line.trim() !== '');
    }
    catch {
        return [];
    }
}

;// CONCATENATED MODULE: ./src/health/startup.ts




/** Lines read of each container's log when it did not come up. */
const LOG_LINES = 100;
/**
 * A service or database has no deployment: `/deploy` starts it in the background. Coolify's
 * status of it says whether it came up, but only once Coolify refreshed it after the start: until
 * then it is the status from before (a stale `running` of the old containers, or `exited` of a
 * stopped database), and decides nothing. Waits, until `signal` aborts, for a fresh `running`;
 * a fresh `exited`, `restarting` or `degraded` (or `starting`) at the end is down, with the end of
 * its logs, read while its containers still ran (Coolify refuses them afterwards). A status that
 * was never fresh, or never read, is unknown.
 */
async function awaitStartup(client, resource, options, signal) {
    const freshness = new Freshness();
    let health = {
        up: false,
        problem: 'Coolify has not reported its status yet',
        unknown: true
    };
    let log = [];
    let parts = [];
    let loggedStatus;
    for (;;) {
        let look;
        try {
            await options.turn(signal);
            look = await readStatus(client, resource, signal);
        }
        catch (error) {
            // Cut off by the end of the wait, a read says less than the look before it.
            if (signal.aborted)
                break;
            if (health.unknown) {
                health = {
                    up: false,
                    problem: `could not read its status: ${describeError(error)}`,
                    unknown: true
                };
            }
            if (await paused(options, signal))
                break;
            continue;
        }
        if (look.starting) {
            health = { up: false, problem: `Coolify reports it ${startup_short(look.status)}`, unknown: false };
        }
        else if (!freshness.counts(look)) {
            const problem = `Coolify has not refreshed its status since the start (it still reports ${startup_short(look.status)})`;
            health = { up: false, problem, unknown: true };
        }
        else if (isUp(look.status)) {
            return { health: { up: true }, log: [], parts: [] };
        }
        else {
            health = { up: false, problem: `Coolify reports it ${startup_short(look.status)}`, unknown: false };
            parts = look.parts;
            if (log.length === 0 || look.status !== loggedStatus) {
                const lines = await containerLog(client, resource, look.parts, options, signal);
                if (lines.length > 0) {
                    log = lines;
                    loggedStatus = look.status;
                }
            }
        }
        if (await paused(options, signal))
            break;
    }
    return { health, log, parts };
}
async function readStatus(client, resource, signal) {
    if (resource.kind === 'database') {
        const { body, date } = await client.getDatabase(resource.appUuid, signal);
        const status = statusIn(body?.status, resource);
        return {
            status,
            refreshedAt: timeOf(body.last_online_at),
            answeredAt: date,
            starting: false,
            parts: []
        };
    }
    const { body, date } = await client.getService(resource.appUuid, signal);
    const status = statusIn(body?.status, resource);
    const all = [...arrayOf(body.applications), ...arrayOf(body.databases)];
    const watched = all.filter(part => !part.exclude_from_status);
    const parts = watched.length ? watched : all;
    const times = parts.map(part => timeOf(part.last_online_at));
    const down = parts.filter(part => typeof part.status === 'string' && !isUp(part.status));
    return {
        status,
        refreshedAt: times.length && times.every(time => time !== undefined) ? Math.min(...times) : undefined,
        answeredAt: date,
        starting: status.toLowerCase().startsWith('starting'),
        parts: (down.length ? down : parts).flatMap(part => (part.name ? [part.name] : []))
    };
}
function statusIn(status, resource) {
    if (typeof status === 'string' && status.trim() !== '')
        return status.trim();
    throw new ActionError(`Coolify's answer about ${resource.kind} ${resource.appUuid} had no status`);
}
function arrayOf(parts) {
    return listOf(parts).filter(part => part && typeof part === 'object');
}
/**
 * The end of the containers' logs: the database's, or each named part's of a service (its lines
 * marked with the part). None where Coolify refuses them (a container that is not running).
 */
async function containerLog(client, resource, parts, options, signal) {
    const lines = [];
    for (const part of resource.kind === 'database' ? [undefined] : parts) {
        try {
            await options.turn(signal);
            const answer = part === undefined
                ? await client.getDatabaseLogs(resource.appUuid, LOG_LINES, signal)
                : await client.getServiceLogs(resource.appUuid, part, LOG_LINES, signal);
            const text = typeof answer?.logs === 'string' ? answer.logs : '';
            for (const line of text.split(/\r?\n/)) {
                if (line.trim() !== '')
                    lines.push(part === undefined ? line : `${part} | ${line}`);
            }
        }
        catch {
            // Not running, or unreadable: the status already says it did not come up.
        }
    }
    return lines;
}
/** Waits a poll interval; true when the wait is over. */
async function paused(options, signal) {
    try {
        await sleep(options.pollIntervalMs, signal);
        return false;
    }
    catch {
        return true;
    }
}
function startup_short(status) {
    return status.slice(0, 40);
}

;// CONCATENATED MODULE: ./src/rollout/trigger.ts







const NOTHING_STARTED = 'Coolify started no deployment for it';
const ALREADY_QUEUED = /already queued/i;
/** Coolify's answer when it joined the request to a deployment under way. */
const JOINED = 'Deployment already queued for this commit.';
const QUEUED = /deployment queued/i;
const STARTED = /^(service|database) .* started/i;
const KIND_OF_STARTED = { service: 'service', database: 'database' };
/** A full queue (429) without `Retry-After` may have room in a minute, as Coolify says. */
const QUEUE_FULL_WAIT_MS = 60_000;
/** Rate limited (429) without `Retry-After`: Coolify's limits are per minute. */
const LIMITED_WAIT_MS = 60_000;
/**
 * POST /deploy, and one Deployment for every resource it touched, with the deployment to follow.
 *
 * Transient failures are tried again until the deadline, but a trigger is repeated only where that
 * cannot deploy twice: when Coolify cannot have acted on it (a refused connection, a 429), or when
 * the answer was lost on the way and an application's history shows nothing started by it.
 */
async function trigger(client, options) {
    const triggeredAt = options.mark.at;
    const entries = entriesOf(await deployUntilAnswered(client, options));
    const deployments = [];
    for (const entry of entries) {
        const message = entry.message ?? '';
        const name = nameIn(message);
        const kind = KIND_OF_STARTED[STARTED.exec(message)?.[1].toLowerCase() ?? ''] ?? 'application';
        // A tag deploy names a service only in its message: its uuid is found by that name.
        const appUuid = entry.resource_uuid ??
            (kind === 'service' && name ? await serviceNamed(client, name, options) : undefined) ??
            '';
        const deployment = new Deployment(appUuid, name ?? (appUuid || 'tag deploy'), entry.deployment_uuid, triggeredAt, kind);
        deployments.push(deployment);
        if (ALREADY_QUEUED.test(message) && appUuid) {
            // Coolify answers with a uuid it never saved; the deployment it joined is in the history.
            // Unresolved here, the watch loop resolves it when the uuid reads as unknown.
            const real = await findStarted(client, appUuid, options.mark, options.signal).catch(() => undefined);
            if (real)
                deployment.follow(real);
            // Someone else started it: this run follows it but never cancels it.
            deployment.joined();
            options.say.note(`${deployment.name}: a deployment of this commit, started elsewhere, is already under way; following it (it is not cancelled by this run).`);
        }
        else if (!entry.deployment_uuid) {
            if (kind !== 'application')
                deployment.started();
            else
                deployment.end('failed', explainDeployMessage(message) || NOTHING_STARTED);
        }
    }
    for (const uuid of options.appUuids) {
        if (!entries.some(entry => entry.resource_uuid === uuid)) {
            const skipped = new Deployment(uuid, uuid, undefined, triggeredAt);
            skipped.end('failed', 'Coolify skipped it: no resource with this uuid is visible to the token');
            deployments.push(skipped);
        }
    }
    if (deployments.length === 0) {
        throw new ActionError('Coolify answered the deploy request without any deployment.');
    }
    return deployments;
}
/**
 * The deployments a trigger may have started when its answer was lost, or when it was cut off (the
 * run cancelled, the deadline reached) or killed, found in the applications' histories. Tags name
 * no applications to look up. Throws when a history cannot be read.
 */
async function findTriggered(client, appUuids, mark, signal) {
    const found = await Promise.all(appUuids.map(uuid => findStartedRow(client, uuid, mark, signal)));
    return appUuids.flatMap((appUuid, index) => {
        const row = found[index];
        if (!row)
            return [];
        const deployment = new Deployment(appUuid, appUuid, row.deployment_uuid, mark.at);
        // Under way before the trigger: Coolify joined it to another's, which is not this run's.
        if (row.joined)
            deployment.joined();
        return [deployment];
    });
}
async function deployUntilAnswered(client, options) {
    const { signal } = options;
    /** Entries for applications whose deployment a lost answer started, found in their history. */
    const recovered = [];
    let uuids = options.appUuids;
    /** Said when the deadline cuts an attempt off: more use than the abort. */
    let last;
    for (let attempt = 1;; attempt++) {
        try {
            const answer = await client.deploy({
                uuids,
                tags: options.tags,
                force: options.force,
                pr: options.pr,
                dockerTag: options.dockerTag
            }, signal);
            return recovered.length ? { deployments: [...recovered, ...entriesOf(answer)] } : answer;
        }
        catch (error) {
            if (signal.aborted)
                throw last?.afterAttempts(attempt - 1) ?? error;
            if (!(error instanceof CoolifyError))
                throw error;
            last = error;
            if (isQueueFull(error.status, error.details.serverMessage)) {
                const rest = await afterFullQueue(client, options, uuids, error, attempt);
                recovered.push(...rest.queued);
                uuids = rest.uuids;
                if (rest.refused.length)
                    return { deployments: [...recovered, ...rest.refused] };
                if (uuids.length === 0)
                    return { deployments: recovered };
                continue;
            }
            // Coolify's own 404 (a JSON message); a web page's 404 means a wrong address instead.
            if (error.status === 404 && error.details.serverMessage !== undefined) {
                throw notFound(error, options);
            }
            if (!error.details.transient)
                throw error;
            client.reachability.failed(error);
            const givenUp = client.reachability.givenUp(error, attempt);
            if (givenUp)
                throw givenUp;
            if (mayHaveArrived(error)) {
                // Coolify may have acted on it: follow what it started rather than start a second one.
                // A forced tag deploy names no applications to look up, and nothing else (Coolify's
                // "already queued" check is off when forcing) keeps a repeat from deploying twice.
                if (options.tags.length > 0 && options.force)
                    throw error.afterAttempts(attempt);
                // A history that cannot be read proves nothing: then stop rather than risk a second one.
                const found = await findTriggered(client, uuids, options.mark, signal).catch(() => {
                    throw error.afterAttempts(attempt);
                });
                recovered.push(...found.map(deployment => ({
                    resource_uuid: deployment.appUuid,
                    deployment_uuid: deployment.uuid,
                    message: deployment.startedElsewhere ? JOINED : 'Deployment queued.'
                })));
                uuids = uuids.filter(uuid => !found.some(deployment => deployment.appUuid === uuid));
                if (options.tags.length === 0 && uuids.length === 0)
                    return { deployments: recovered };
            }
            const limited = error.status === 429 ? LIMITED_WAIT_MS : undefined;
            try {
                await sleep(client.retryDelay(attempt, error.details.retryAfterMs ?? limited), signal);
            }
            catch {
                throw error.afterAttempts(attempt);
            }
        }
    }
}
/**
 * Coolify queues a request's resources one by one, and answers a full queue (429) for the whole
 * request after queueing those before the full one. Those are found in their histories (created
 * after the trigger, as an API trigger queues them) and followed; the rest are asked for again
 * once the queue may have room, or, when `timeout` leaves no time to wait, reported refused with
 * Coolify's reason. Tags name no applications to look up: their queue-full answer is final.
 */
async function afterFullQueue(client, options, uuids, error, attempt) {
    if (options.tags.length > 0) {
        throw error
            .withHint("Some of the tag's applications may have been queued before the queue was full: check them in Coolify")
            .afterAttempts(attempt);
    }
    const { signal, mark } = options;
    // A history that cannot be read proves nothing: then stop rather than risk a second deployment.
    // A request of one resource refused has queued nothing.
    const found = await Promise.all((uuids.length > 1 ? uuids : []).map(uuid => findCreated(client, uuid, mark, signal).then(created => created.uuid, () => {
        throw error.afterAttempts(attempt);
    })));
    const queued = uuids.flatMap((uuid, index) => found[index]
        ? [{ resource_uuid: uuid, deployment_uuid: found[index], message: 'Deployment queued.' }]
        : []);
    const rest = uuids.filter((_, index) => !found[index]);
    const wait = error.details.retryAfterMs ?? QUEUE_FULL_WAIT_MS;
    if (rest.length === 0)
        return { queued, uuids: rest, refused: [] };
    if (Date.now() + wait < (options.deadline ?? Infinity)) {
        options.say.note(`Coolify's deployment queue is full: ${rest.join(', ')} asked for again in ${Math.round(wait / 1000)} s.`);
        try {
            await sleep(wait, signal);
        }
        catch {
            throw error.afterAttempts(attempt);
        }
        return { queued, uuids: rest, refused: [] };
    }
    const reason = `${error.details.serverMessage ?? 'the deployment queue is full'} (\`timeout\` leaves no time to wait and ask again)`;
    return {
        queued,
        uuids: rest,
        refused: rest.map(uuid => ({ resource_uuid: uuid, message: reason }))
    };
}
/** No answer, a 5xx, or a success mangled on the way back: Coolify may have acted on it. */
function mayHaveArrived(error) {
    const status = error.status ?? 0;
    return ((error.details.unanswered === true && !error.details.unsent) ||
        status >= 500 ||
        (status >= 200 && status < 300));
}
function entriesOf(answer) {
    if (Array.isArray(answer.deployments))
        return answer.deployments;
    // Deploy by tag: a message for every resource, in order, and `details` for the applications
    // that got a deployment; the n-th detail belongs to the n-th "queued" message.
    const details = listOf(answer.details);
    const messages = Array.isArray(answer.message)
        ? answer.message
        : answer.message
            ? [answer.message]
            : [];
    const isQueued = (message) => QUEUED.test(message) || ALREADY_QUEUED.test(message);
    const queued = messages.filter(isQueued);
    const entries = details.map((detail, index) => ({
        ...detail,
        message: queued.length === details.length ? queued[index] : undefined
    }));
    for (const message of messages)
        if (!isQueued(message))
            entries.push({ message });
    return entries;
}
/**
 * The uuid of the service a tag deploy started, by its name; none when the name is not one
 * service's alone or the list cannot be read (it is then reported as not confirmed).
 */
async function serviceNamed(client, name, options) {
    try {
        const services = await client.listServices(options.signal);
        const named = listOf(services).filter(service => service?.name === name);
        if (named.length === 1 && named[0].uuid)
            return named[0].uuid;
        options.say.note(`Service ${name}: ${named.length ? 'several services have this name' : 'not in the list of services'}, so its status cannot be followed.`);
    }
    catch (error) {
        options.say.note(`Service ${name}: could not read the list of services: ${describeError(error)}`);
    }
    return undefined;
}
/** The resource's name in "Application NAME deployment queued." and its kin. */
function nameIn(message) {
    return /^(?:application|service|database)\s+(.+?)\s+(?:deployment queued|started)/i.exec(message)?.[1];
}
function notFound(error, options) {
    const what = options.tags.length
        ? `tag ${options.tags.map(tag => `"${tag}"`).join(', ')}`
        : `uuid ${options.appUuids.map(uuid => `"${uuid}"`).join(', ')}`;
    return error.withHint(`No resource with ${what} is visible to this token: check \`${options.tags.length ? 'tag' : 'app-uuid'}\` and that the token belongs to the application's team`);
}

;// CONCATENATED MODULE: ./src/rollout/versions.ts







/** History rows searched for what runs now. */
const versions_HISTORY_ROWS = 20;
/** How long to wait for a joined deployment's first log line, to learn which tag it runs. */
const STARTING_WAIT_MS = 10_000;
const STARTING_POLL_MS = 500;
/**
 * How long a pin found before this run's own is watched: another run's comes off as soon as
 * Coolify queued its deployment; one that stays is the application's own.
 */
const FOREIGN_PIN_WAIT_MS = 10_000;
const FOREIGN_PIN_POLL_MS = 1000;
/** `Starting deployment of NAME:TAG to SERVER.` (or `NAME@sha256:…`), the first line of an image deploy. */
const STARTING = /^Starting deployment of (\S+?)(?::([\w][\w.-]*)|@(sha256:[0-9a-f]+))? to /;
/** `Importing REPO:BRANCH (commit sha SHA) to DIR.`, the line where the job checks out the commit. */
const IMPORTING = /^Importing .* \(commit sha ([^)\s]+)\)/;
/**
 * Reads the applications when `image-tag`, `commit` or `rollback-on-failure` needs them, and checks
 * that each is of the kind its input is for. Undefined when no such input is set.
 */
async function readVersions(client, config, signal) {
    if (!config.imageTag && !config.commit && !config.rollbackOnFailure)
        return undefined;
    const versions = [];
    for (const uuid of config.appUuids) {
        const app = await client.getApplication(uuid, signal);
        const version = versionOf(uuid, app);
        if (config.imageTag && config.pr === undefined && !version.dockerImage) {
            throw new ActionError(`Input \`image-tag\` is for Docker-image applications; ${version.name} is built from git (build pack ${app.build_pack ?? 'unknown'}): use \`commit\` for it.`);
        }
        if (config.commit && version.dockerImage) {
            throw new ActionError(`Input \`commit\` is for applications built from git; ${version.name} deploys a Docker image: use \`image-tag\` for it.`);
        }
        if (config.rollbackOnFailure && !version.dockerImage) {
            const history = await client.listDeployments(uuid, versions_HISTORY_ROWS, signal);
            version.runningCommit = runningCommit(history?.deployments);
        }
        versions.push(version);
    }
    return versions;
}
function versionOf(uuid, app) {
    return {
        appUuid: uuid,
        name: app?.name || uuid,
        dockerImage: app?.build_pack === 'dockerimage',
        pinned: app?.git_commit_sha || 'HEAD',
        imageTag: app?.docker_registry_image_tag || undefined
    };
}
/** The commit of the newest finished production deployment; undefined when there is none. */
function runningCommit(items) {
    for (const item of listOf(items)) {
        if (Number(item?.pull_request_id ?? 0) !== 0)
            continue;
        if (!isFinished(statusFromCoolify(item.status)))
            continue;
        if (item.commit && item.commit !== 'HEAD')
            return item.commit;
    }
    return undefined;
}
/**
 * Sets the version to deploy on every application: the image tag, or the commit pin (saved for
 * the post step before it is set, so that a killed run still undoes it). Returns the pins to undo
 * once the deploy is queued; on failure, undoes those already set within `undo` and throws.
 */
async function pinVersions(client, config, versions, state, signal, undo, say) {
    const pins = [];
    try {
        for (const version of versions ?? []) {
            if (config.imageTag && config.pr === undefined) {
                const changes = { docker_registry_image_tag: config.imageTag };
                await client.updateApplication(version.appUuid, changes, signal);
                say.note(`${version.name}: image tag set to ${config.imageTag}`);
            }
            else if (config.commit) {
                const previous = await standingPin(client, version, signal, say);
                const ours = { appUuid: version.appUuid, previous, commit: config.commit };
                await pin(client, ours, config.commit, { state, signal });
                pins.push(ours);
                say.note(`${version.name}: pinned to commit ${config.commit} for this deploy`);
            }
        }
    }
    catch (error) {
        await restorePins(client, pins, state, undo(), say);
        throw error;
    }
    return pins;
}
/**
 * The application's own `git_commit_sha`, to put back after this run's pin. A commit pinned when
 * the run starts may be another run's, on only until Coolify queued that run's deployment:
 * recorded as the value to restore, it would be put back after that run restored its own, and
 * leave the application pinned for good. So a pin is watched for a while, and taken as the
 * application's own only when it stays.
 */
async function standingPin(client, version, signal, say) {
    let pinned = version.pinned;
    if (pinned === 'HEAD')
        return pinned;
    say.note(`${version.name}: pinned to ${pinned} already, maybe by another run; waiting to see whether it stays`);
    const until = Date.now() + FOREIGN_PIN_WAIT_MS;
    while (Date.now() < until) {
        await sleep(FOREIGN_PIN_POLL_MS, signal);
        const now = (await client.getApplication(version.appUuid, signal))?.git_commit_sha || 'HEAD';
        if (now === pinned)
            continue;
        // Another run put its pin back (or moved it): watch what is set now.
        pinned = now;
        if (pinned === 'HEAD')
            break;
    }
    return pinned;
}
/** Pins `commit` on the application, recording first what to put back. */
async function pin(client, { appUuid, previous }, commit, { state, signal }) {
    // Recorded first, and kept if an earlier pin of the same application is still to undo.
    state.update(appUuid, { unpin: state.get(appUuid).unpin ?? previous, pinned: commit });
    try {
        await client.updateApplication(appUuid, { git_commit_sha: commit }, signal);
    }
    catch (error) {
        // Refused: nothing to undo. Unanswered: it may be set, so the record stays.
        if (error instanceof CoolifyError && error.status !== undefined && error.status < 500) {
            state.update(appUuid, { unpin: undefined, pinned: undefined });
        }
        throw error;
    }
}
/**
 * Puts every pinned application's `git_commit_sha` back as it was: Coolify took the commit into
 * the deployment when it queued it, and a pin left behind would make every later deploy build
 * it. Problems are reported, never thrown: the deploy itself is not at stake. Returns the pins
 * left on, which stay recorded for the post step.
 */
async function restorePins(client, pins, state, signal, say) {
    const left = [];
    for (const pin of pins) {
        try {
            if (pin.commit && !(await stillPinned(client, pin, signal))) {
                // Another run pinned its own commit since: it puts back what it found, and only then.
                state.update(pin.appUuid, { unpin: undefined, pinned: undefined });
                say.warn(`${pin.appUuid}: git_commit_sha is no longer ${pin.commit} but another run's pin; left for that run to set back.`);
                continue;
            }
            await client.updateApplication(pin.appUuid, { git_commit_sha: pin.previous }, signal);
            state.update(pin.appUuid, { unpin: undefined, pinned: undefined });
        }
        catch (error) {
            left.push(pin);
            say.warn(`${pin.appUuid}: could not set git_commit_sha back to ${pin.previous} (${describeError(error)}); set it in Coolify, or later deploys build the pinned commit.`);
        }
    }
    return left;
}
/**
 * Whether the application is still pinned to this run's commit. Coolify has no compare-and-set,
 * so this narrows the race rather than closing it; `concurrency:` closes it. Unreadable, it is
 * taken as ours: a pin left on is the worse outcome.
 */
async function stillPinned(client, pin, signal) {
    try {
        const now = (await client.getApplication(pin.appUuid, signal))?.git_commit_sha || 'HEAD';
        return now !== 'HEAD' && sameCommit(now, pin.commit);
    }
    catch {
        return true;
    }
}
/**
 * Makes sure a Docker-image deployment runs `tag`. Coolify's "already queued" check ignores the
 * tag: a deploy while another of the app is under way joins that one. A joined deployment that
 * has not started yet reads the new tag when it starts; one that started with another tag gets a
 * forced deployment queued after it, which Coolify runs once it is done (forcing rebuilds nothing
 * for an image, and only skips that check).
 */
async function settleImageTag(client, deployment, tag, mark, signal, say) {
    if (!deployment.running)
        return;
    deployment.ranImage(tag);
    let ran;
    try {
        ran = await startedTag(client, deployment.uuid, mark.at, signal);
    }
    catch (error) {
        // A placeholder the trigger could not resolve: the deployment it joined is in the history.
        if (!(error instanceof CoolifyError) || error.status !== 404)
            throw error;
        const real = await findStarted(client, deployment.appUuid, mark, signal);
        if (!real)
            throw error;
        deployment.follow(real);
        ran = await startedTag(client, real, mark.at, signal);
    }
    if (ran === undefined || ran === tag)
        return;
    const answer = await client.deploy({ uuids: [deployment.appUuid], force: true }, signal);
    const next = answer.deployments?.find(entry => entry.resource_uuid === deployment.appUuid);
    if (!next?.deployment_uuid) {
        throw new ActionError(`Coolify queued no deployment of image tag ${tag}: ${next?.message ?? 'no answer for it'}`);
    }
    say.note(`${deployment.name}: deployment ${deployment.uuid}, already under way, runs ${ran}; deployment ${next.deployment_uuid} deploys ${tag} after it.`);
    deployment.follow(next.deployment_uuid, true);
}
/**
 * The tag a deployment started with, when it started before the tag was set (`pinnedAt`); undefined
 * when it has not started, so that it will read the new tag, or started after the tag was set.
 */
async function startedTag(client, uuid, pinnedAt, signal) {
    const until = Date.now() + STARTING_WAIT_MS;
    for (;;) {
        const detail = await client.getDeployment(uuid, signal);
        const status = statusFromCoolify(detail.status);
        const created = timeOf(detail.created_at);
        if (created !== undefined && created >= pinnedAt)
            return undefined;
        if (status === 'queued')
            return undefined;
        const ran = ranImageTag(detail);
        if (ran !== undefined)
            return ran;
        // Started without its first line yet, or its log is hidden from this token.
        if ((status && hasEnded(status)) || !('logs' in detail) || Date.now() >= until) {
            return 'an earlier tag';
        }
        await sleep(STARTING_POLL_MS, signal);
    }
}
/** The tag named in a deployment's `Starting deployment of NAME:TAG` line, if its log shows it. */
function ranImageTag(detail) {
    const match = firstMatch(detail, STARTING);
    if (!match)
        return detail.docker_registry_image_tag || undefined;
    return match[2] ?? match[3] ?? 'latest';
}
/** The commit named in a deployment's `Importing … (commit sha SHA)` line. */
function builtCommit(detail) {
    return firstMatch(detail, IMPORTING)?.[1];
}
function firstMatch(detail, pattern) {
    const lines = new LogCursor(false).next(detail.logs);
    for (const line of lines) {
        const match = pattern.exec(line.text);
        if (match)
            return match;
    }
    return undefined;
}
/**
 * Checks, once it finished, that the deployment ran the version asked for: an image deployment
 * that ran another tag failed (its success is not this tag's); a build of another commit gets a
 * warning. The log is `detail`'s when given (noted as it passed), else read once; a deployment
 * whose log this token cannot read is taken as asked.
 */
async function verifyVersion(client, deployment, asked, signal) {
    if (!asked.imageTag && !asked.commit)
        return;
    if (!deployment.uuid || !isFinished(deployment.status))
        return;
    let detail;
    try {
        detail = await client.getDeployment(deployment.uuid, signal);
    }
    catch {
        return;
    }
    if (asked.imageTag) {
        const ran = ranImageTag(detail) ?? asked.imageTag;
        deployment.ranImage(ran);
        if (ran !== asked.imageTag)
            deployment.end('failed', `it ran image tag ${ran}, not ${asked.imageTag}`);
    }
    else if (asked.commit) {
        // Another commit passing green would be a lie, as another image tag would.
        const built = builtCommit(detail);
        if (built && !sameCommit(built, asked.commit)) {
            deployment.end('failed', `Coolify built commit ${built}, not ${asked.commit} (see the Importing line of its log)`);
        }
    }
}

;// CONCATENATED MODULE: ./src/rollout/rollback.ts






/**
 * `rollback-on-failure`, for a deployment whose new version failed or is unhealthy: queues again
 * what ran before (noted in `version` before deploying). Git apps go back to the commit of their
 * last finished deployment, through Coolify's rollback route (4.3+) or, on older servers, a pin
 * of that commit for one deploy; Docker-image apps go back to their earlier tag. Undefined, with
 * the reason recorded on `failed`, when there is nothing to go back to or it could not start.
 */
async function startRollback(client, failed, version, { state, signal, undo, say }) {
    const target = version.dockerImage ? version.imageTag : version.runningCommit;
    if (!target) {
        failed.rollback(false, 'nothing to roll back to: no earlier version is known');
        return undefined;
    }
    const what = version.dockerImage ? `image tag ${target}` : `commit ${target.slice(0, 12)}`;
    say.note(`${failed.name}: rolling back to ${what}`);
    try {
        const deployment = await redeploy(client, failed, version, target, { state, signal, undo, say });
        return { deployment, what };
    }
    catch (error) {
        failed.rollback(false, `the rollback to ${what} could not start: ${describeError(error)}`);
        return undefined;
    }
}
/** Records on the failed deployment how its rollback ended. */
function judgeRollback(failed, { deployment, what }) {
    if (deployment.ended && !failsStep(deployment.status)) {
        failed.rollback(true, `rolled back: ${what} runs again (deployment ${deployment.uuid})`);
    }
    else {
        const why = deployment.reason ? `: ${deployment.reason}` : '';
        failed.rollback(false, `the rollback to ${what} ended ${describeStatus(deployment.status)}${why}`);
    }
}
/** Queues the deployment of the earlier version, and returns it to follow. */
async function redeploy(client, failed, version, target, { state, signal, undo, say }) {
    const appUuid = failed.appUuid;
    const at = Date.now();
    if (version.dockerImage) {
        await client.updateApplication(appUuid, { docker_registry_image_tag: target }, signal);
        const rollback = Deployment.next(failed, await deployOnce(client, appUuid, true, at, undefined, signal, say), at);
        rollback.ranImage(target);
        return rollback;
    }
    try {
        const answer = await client.rollback(appUuid, target, signal);
        if (answer?.deployment_uuid)
            return Deployment.next(failed, answer.deployment_uuid, at);
        throw new ActionError(answer?.message ?? 'Coolify queued no rollback deployment');
    }
    catch (error) {
        if (!isMissingRoute(error))
            throw error;
    }
    // A server before 4.3 has no rollback route: pin the commit for one deploy, as `commit` does.
    const pins = [{ appUuid, previous: version.pinned, commit: target }];
    try {
        await pin(client, pins[0], target, { state, signal });
        return Deployment.next(failed, await deployOnce(client, appUuid, false, at, target, signal, say), at);
    }
    finally {
        await restorePins(client, pins, state, undo(), say);
    }
}
/** One deploy of one application; the uuid of the deployment it started. */
async function deployOnce(client, appUuid, force, at, commit, signal, say) {
    const deployments = await trigger(client, {
        appUuids: [appUuid],
        tags: [],
        force,
        mark: { at, commit },
        signal,
        // The rollback's own lines say what it does; the trigger's would repeat them.
        say: { ...say, note: () => undefined }
    });
    const [rollback] = deployments;
    if (!rollback?.uuid)
        throw new ActionError(rollback?.reason ?? 'Coolify started no deployment');
    return rollback.uuid;
}

;// CONCATENATED MODULE: ./src/rollout/rollout.ts







/**
 * One resource's way from the trigger to its outcome. An application's phases — settle, follow,
 * verify, health, rollback — run in order as soon as the one before ends, whatever its siblings
 * do; a service or database, started without a deployment, has one: coming up. A phase that
 * throws ends the rollout `failed` with the reason; the rollout's deployments, and so its status,
 * change only here.
 */
class Rollout {
    deployment;
    step;
    version;
    #rollback;
    #healthChecked = false;
    get phases() {
        return this.deployment.kind === 'application'
            ? [
                () => this.find(),
                () => this.settle(),
                () => this.follow(),
                () => this.verify(),
                async () => {
                    await this.checkHealth(this.deployment, this.step.budget.health());
                    this.#healthChecked = true;
                },
                () => this.rollBack()
            ]
            : [() => this.comeUp()];
    }
    constructor(deployment, step, 
    /** The application's version before the deploy, when an input needed it. */
    version) {
        this.deployment = deployment;
        this.step = step;
        this.version = version;
    }
    /** The resource's uuid: the key of its saved state. */
    get key() {
        return this.deployment.appUuid;
    }
    /** Its health check is under way or ahead: it will read the application with the others. */
    get checksHealth() {
        return this.deployment.kind === 'application' && !this.#healthChecked;
    }
    /** Its deployments under way in Coolify. */
    get running() {
        return [this.deployment, this.#rollback?.deployment].filter((deployment) => deployment?.running === true);
    }
    async run() {
        try {
            for (const phase of this.phases) {
                if (this.step.budget.cancelled.aborted)
                    break;
                await phase();
            }
            // Its name and URL for the report, also when nothing waited on them (`wait: false`).
            await this.step.described();
        }
        catch (error) {
            this.deployment.end('failed', describeError(error));
        }
        finally {
            this.#healthChecked = true;
            this.save();
        }
    }
    /**
     * The run was cancelled: cancels in Coolify what this rollout still runs, within
     * `signal` (or leaves it, with `cancel-on-abort: false`).
     */
    async stop(signal) {
        const said = this.step.budget.why();
        const why = said.charAt(0).toLowerCase() + said.slice(1);
        if (this.deployment.kind !== 'application' && this.deployment.status === 'started') {
            this.step.say.note(`${this.deployment.name}: nothing to cancel — Coolify starts a ${this.deployment.kind} without a deployment; its start goes on`);
        }
        for (const deployment of this.running) {
            if (deployment.startedElsewhere) {
                this.step.follower.leave(deployment, 'cancelled', `${why}; ${elsewhere(deployment)}`);
            }
            else if (this.step.config.cancelOnAbort) {
                await this.step.follower.stop(deployment, 'cancelled', why, signal);
            }
            else {
                this.step.follower.leave(deployment, 'cancelled', `${why}; it goes on in Coolify`);
            }
        }
        this.save();
    }
    /** Saves, for the post step, which of this run's deployments are still under way. */
    save() {
        const { config, state } = this.step;
        if (!config.wait || !config.cancelOnAbort)
            return;
        // Only what this run started is the post step's to cancel.
        const running = this.running
            .filter(deployment => !deployment.startedElsewhere)
            .map(deployment => deployment.uuid);
        state.update(this.key, { running, name: running.length ? this.deployment.name : undefined });
    }
    /**
     * `trigger: false`: the deployment Coolify started by itself for the commit, once it appears in
     * the application's history (webhooks lag), within `timeout`. None is a timeout that says what
     * to check.
     */
    async find() {
        const { client, config, budget, follower, mark, say } = this.step;
        if (config.trigger || this.deployment.uuid)
            return;
        const commit = mark.commit;
        const uuid = await findOfCommitWithin(client, this.deployment.appUuid, { commit, pr: mark.pr, pollIntervalMs: config.pollIntervalMs }, signal => follower.turn(signal), budget.deploy());
        if (budget.cancelled.aborted)
            return;
        if (!uuid) {
            const branch = config.pr === undefined ? 'the branch Coolify deploys' : 'its preview deployments';
            this.deployment.end('timeout', `no deployment of commit ${commit.slice(0, 7)} appeared in Coolify within \`timeout\`: check that auto-deploy is on for it and that the commit is on ${branch}`);
            return;
        }
        this.deployment.follow(uuid);
        this.deployment.joined();
        say.note(`${this.deployment.name}: following deployment ${uuid} of commit ${commit.slice(0, 7)} (started by Coolify, not cancelled by this run)`);
        this.save();
    }
    /** Image tags: the deployment that runs the tag asked for, when the trigger joined an older one. */
    async settle() {
        const { client, config, budget, mark, say } = this.step;
        if (!config.imageTag || config.pr !== undefined)
            return;
        await settleImageTag(client, this.deployment, config.imageTag, mark, budget.deploy(), say);
        this.save();
    }
    /** Until the deployment ends or `timeout` passes, when it is cancelled or left running. */
    async follow() {
        const { config, budget, follower } = this.step;
        if (!config.wait)
            return;
        await follower.follow(this.deployment, this.step.mark, budget.deploy());
        if (this.deployment.ended || budget.cancelled.aborted)
            return;
        const why = 'it outlasted `timeout`';
        if (this.deployment.startedElsewhere) {
            follower.leave(this.deployment, 'timeout', `${why}; ${elsewhere(this.deployment)}`);
        }
        else if (config.cancelOnTimeout) {
            await follower.stop(this.deployment, 'timeout', why, budget.grace());
        }
        else {
            const left = `${why} and is still running in Coolify (\`cancel-on-timeout\` is false)`;
            follower.leave(this.deployment, 'timeout', left);
        }
    }
    /** The version asked for is the one that ran. */
    async verify() {
        const { client, config, budget } = this.step;
        if (!config.wait)
            return;
        const asked = {
            imageTag: config.pr === undefined ? config.imageTag : undefined,
            commit: config.commit
        };
        await verifyVersion(client, this.deployment, asked, budget.deploy());
    }
    /**
     * A finished deployment is up within its window, else `unhealthy` with the end of its runtime
     * log. A check that `timeout` cut short ends `timeout`; one that could never read Coolify's
     * status is a warning, not a verdict.
     */
    async checkHealth(deployment, window) {
        const { client, config, budget, described, say } = this.step;
        if (!config.wait || !isFinished(deployment.status) || !deployment.appUuid)
            return;
        await described();
        const options = {
            healthUrl: config.healthUrl,
            pollIntervalMs: config.pollIntervalMs,
            pr: config.pr,
            readStatus: (appUuid, signal) => this.step.applications.status(appUuid, signal),
            since: deployment.finishedAt
        };
        const health = await checkHealth(deployment, options, window.signal);
        if (!health || budget.cancelled.aborted)
            return;
        if (health.up) {
            if (health.url)
                say.note(`${deployment.name}: healthy (${health.url} answers)`);
        }
        else if (health.unknown) {
            this.doubt(deployment, health.problem);
        }
        else if (window.cutShort()) {
            deployment.end('timeout', `it finished, but its time ran out before it came up: ${health.problem}`);
        }
        else {
            deployment.unhealthy(`it did not come up: ${health.problem}`, await runtimeLog(client, deployment.appUuid, budget.grace()));
            say.runtimeLog(deployment);
        }
    }
    /**
     * A service or database: Coolify reports it running within `health-timeout`, else `unhealthy`
     * with the end of its containers' logs. There is nothing to cancel when time runs out.
     */
    async comeUp() {
        const { client, config, budget, follower, say } = this.step;
        const resource = this.deployment;
        if (!config.wait || resource.status !== 'started')
            return;
        if (!resource.appUuid) {
            resource.end('finished');
            this.doubt(resource, `Coolify did not say which ${resource.kind} it started`);
            return;
        }
        const window = budget.health();
        const turn = (signal) => follower.turn(signal);
        const options = { pollIntervalMs: config.pollIntervalMs, turn };
        const { health, log, parts } = await awaitStartup(client, resource, options, window.signal);
        if (budget.cancelled.aborted)
            return;
        if (health.up) {
            resource.end('finished');
            say.note(`${resource.name}: running`);
        }
        else if (health.unknown) {
            resource.end('finished');
            this.doubt(resource, health.problem);
        }
        else if (window.cutShort()) {
            resource.end('timeout', `its time ran out before it came up (${health.problem}); a ${resource.kind} has no deployment to cancel, so its start goes on in Coolify`);
        }
        else {
            // Logs are given only while a container runs: one more try, if none came yet.
            const lines = log.length
                ? log
                : await containerLog(client, resource, parts, { turn }, budget.grace());
            resource.unhealthy(`it did not come up: ${health.problem}`, lines);
            say.runtimeLog(resource);
        }
    }
    /** Passes, with a warning that says what could not be confirmed. */
    doubt(deployment, problem) {
        const warning = `could not confirm that ${deployment.name} is up: ${problem}`;
        deployment.doubt(warning);
        this.step.say.warn(warning);
    }
    /** `rollback-on-failure`: deploys again what ran before a bad version, in its own time. */
    async rollBack() {
        const { client, config, budget, state, follower, say } = this.step;
        const failed = this.deployment;
        if (!config.wait ||
            !config.rollbackOnFailure ||
            !this.version ||
            !isBadVersion(failed.status)) {
            return;
        }
        const signal = budget.rollback();
        const undo = () => budget.grace();
        const rollback = await startRollback(client, failed, this.version, { state, signal, undo, say });
        if (!rollback)
            return;
        this.#rollback = rollback;
        this.save();
        await follower.follow(rollback.deployment, { at: rollback.deployment.triggeredAt }, signal);
        if (budget.cancelled.aborted)
            return;
        if (!rollback.deployment.ended) {
            // Cancelling a rollback would leave the application worse off: it goes on in Coolify.
            follower.leave(rollback.deployment, 'timeout', 'it outlasted its time and goes on in Coolify');
        }
        await this.checkHealth(rollback.deployment, budget.health(signal));
        say.note(`${failed.name}: rollback ${rollback.deployment.status}`);
        judgeRollback(failed, rollback);
    }
}
/** Why a deployment this run only joined is left running. */
function elsewhere(deployment) {
    return `deployment ${deployment.uuid} of ${deployment.name} was started elsewhere, so it is left running in Coolify`;
}

;// CONCATENATED MODULE: ./src/rollout/launch.ts










/** Time to find and cancel what a trigger cut off may have started. */
const RECOVERY_MS = 5000;
/** How long the step waits for the applications' names and URLs, once they are first due. */
const LOOKUP_GRACE_MS = 3000;
/**
 * Before any deployment: the settings (`git-branch`, `domains`, `env`), the versions an input
 * needs, and the pins. Nothing is deployed when any of it fails.
 */
async function prepare(client, config, budget, state, event, say) {
    const follow = config.trigger ? undefined : commitToFollow(config, event);
    const signal = budget.deploy();
    const undo = () => budget.grace();
    await guardDebugLogs(client, config, signal, say);
    // `trigger: false` changes nothing: no settings, no pins.
    if (follow)
        return { config, pins: [], follow };
    await applySettings(client, config, signal, say);
    const versions = await readVersions(client, config, signal);
    const pins = await pinVersions(client, config, versions, state, signal, undo, say);
    return { config, versions, pins };
}
/**
 * POST /deploy for every resource at once, and a Rollout for each resource it touched. The
 * trigger is saved before it goes out, and each rollout's deployment as soon as it is known, so
 * that the post step cancels only what this run started. The pins come off once Coolify has
 * queued the deployments, whatever happened.
 */
async function launch(step, prepared, follower) {
    const { client, config, budget, state, say } = step;
    const commit = prepared.follow ?? config.commit;
    const mark = { at: Date.now(), pr: config.pr, commit };
    // Only a trigger the step sends may leave something for the post step to find and cancel.
    const saves = config.wait && config.cancelOnAbort && config.trigger;
    for (const uuid of config.appUuids) {
        if (saves)
            state.update(uuid, { trigger: mark });
    }
    let deployments;
    try {
        deployments = config.trigger
            ? await triggerOrRecover(client, config, mark, budget, say)
            : awaitDeployments(config, mark, say);
    }
    finally {
        // Coolify took the commit when it queued the deployment: unpin at once, cancelled or not.
        await restorePins(client, prepared.pins, state, budget.grace(), say);
    }
    // Under way or still to be found (`trigger: false`): each one's lines need its name.
    const reads = follower(deployments.filter(deployment => !deployment.ended).length > 1);
    let rollouts = [];
    const applications = new ApplicationReads(client, signal => reads.turn(signal), budget.cancelled, () => rollouts.filter(rollout => rollout.checksHealth).length, Math.min(GATHER_MS, config.pollIntervalMs));
    // Given up once its grace has passed, so that a lookup Coolify never answers does not hold the
    // shared read the health checks wait behind.
    const lookup = new AbortController();
    const lookupSignal = linked([budget.deploy(), lookup.signal]);
    const described = describeApplications(applications, deployments, config.pr, lookupSignal.signal, say).finally(() => lookupSignal.release());
    let lookupWaited;
    const context = {
        ...step,
        mark,
        follower: reads,
        applications,
        // One grace for the whole step: whoever waits later does not wait again.
        described: () => (lookupWaited ??= atMost(described, LOOKUP_GRACE_MS).then(() => lookup.abort(new ActionError('names and URLs were not read in time'))))
    };
    rollouts = deployments.map(deployment => new Rollout(deployment, context, prepared.versions?.find(version => version.appUuid === deployment.appUuid)));
    for (const uuid of config.appUuids)
        state.update(uuid, { trigger: undefined });
    for (const rollout of rollouts)
        rollout.save();
    return rollouts;
}
/**
 * The trigger, and a line for each resource it touched. A trigger cut off by the deadline or a
 * cancelled run may still have started deployments: those found in the history are followed (and
 * so cancelled) like any other.
 */
async function triggerOrRecover(client, config, mark, budget, say) {
    const what = config.tags.length ? `tag ${config.tags.join(', ')}` : config.appUuids.join(', ');
    say.note(`Deploying ${what} on ${config.instanceUrl}${config.force ? ' (forced rebuild)' : ''}${config.pr ? ` (pull request ${config.pr})` : ''}`);
    const signal = budget.deploy();
    let deployments;
    try {
        deployments = await trigger(client, {
            appUuids: config.appUuids,
            tags: config.tags,
            force: config.force,
            pr: config.pr,
            // Docker-image previews: Coolify creates or retags the preview with this tag.
            dockerTag: config.pr === undefined ? undefined : config.imageTag,
            mark,
            signal,
            deadline: budget.deadline,
            say
        });
    }
    catch (error) {
        if (!signal.aborted)
            throw error;
        const recovery = budget.grace(RECOVERY_MS);
        deployments = await findTriggered(client, config.appUuids, mark, recovery).catch(() => []);
        if (deployments.length === 0) {
            const cutOff = !(error instanceof ActionError) || error.details?.cutOff;
            throw cutOff && !budget.cancelled.aborted
                ? new ActionError('POST /deploy: Coolify did not answer before `timeout` passed.')
                : error;
        }
        say.note(`The deploy request was cut off, but Coolify started ${deployments.map(d => d.uuid).join(', ')}.`);
    }
    for (const deployment of deployments) {
        const state = deployment.running ? `deployment ${deployment.uuid}` : deployment.status;
        say.note(`${deployment.name}: ${state}${deployment.reason ? ` — ${deployment.reason}` : ''}`);
    }
    return deployments;
}
/**
 * With `trigger: false`, the commit to follow: `commit`, else the pull request's head commit with
 * `pr`, else the workflow's commit.
 */
function commitToFollow(config, event) {
    const commit = config.commit ?? (config.pr === undefined ? event.sha : event.headSha);
    if (!commit) {
        throw new ActionError(config.pr === undefined
            ? 'Input `trigger: false` follows the commit the workflow runs for, which the CI does not name: give `commit`.'
            : `Input \`trigger: false\` follows pull request ${config.pr}'s head commit, which the event does not name: run it on \`pull_request\`, or give \`commit\`.`);
    }
    return commit.toLowerCase();
}
/** `trigger: false`: a deployment to find for each application, nothing started. */
function awaitDeployments(config, mark, say) {
    say.note(`Waiting for the deployment Coolify starts by itself of commit ${mark.commit.slice(0, 7)}${config.pr ? ` (pull request ${config.pr})` : ''} on ${config.instanceUrl}: ${config.appUuids.join(', ')}`);
    return config.appUuids.map(uuid => new Deployment(uuid, uuid, undefined, mark.at));
}
/**
 * Names and public URLs of the applications (their previews' with `pr`), read while the
 * deployments run, in the same reads as the health checks due then.
 */
async function describeApplications(applications, deployments, pr, signal, say) {
    const described = deployments.filter(deployment => deployment.kind === 'application');
    const uuids = [...new Set(described.map(deployment => deployment.appUuid).filter(Boolean))];
    const reads = await Promise.allSettled(uuids.map(uuid => applications.read(uuid, signal)));
    const failed = reads.find(read => read.status === 'rejected');
    // Names and URLs are a courtesy: the deployments are followed without them.
    if (failed)
        say.debug(`Could not read the applications: ${describeError(failed.reason)}`);
    for (const [index, read] of reads.entries()) {
        if (read.status === 'rejected')
            continue;
        for (const deployment of described) {
            if (deployment.appUuid === uuids[index])
                deployment.describe(read.value.app, pr);
        }
    }
}
/** `promise`, or nothing after `ms`: a courtesy must not hold up what waits on it. */
function atMost(promise, ms) {
    return new Promise(resolve => {
        const timer = setTimeout(resolve, ms);
        void promise.finally(() => {
            clearTimeout(timer);
            resolve();
        });
    });
}

;// CONCATENATED MODULE: ./src/rollout/resolve-names.ts



/** The lists are read in this order, each only when a value is not found in those before. */
const KINDS = ['application', 'service', 'database'];
/** How many close names an unknown one's error suggests. */
const SUGGESTIONS = 3;
/**
 * The resources `app` names — by uuid, by name as Coolify shows it, or as
 * `project/environment/name` — in the order given, before anything is written. Applications are
 * listed first; services, then databases, only for a value not found among applications; projects
 * and their environments only for a value that needs its place checked (or to tell apart the
 * resources an ambiguous name could be). A value that matches nothing, or several, throws.
 */
async function resolveNames(client, values, signal) {
    const catalog = new Catalog(client, signal);
    const found = new Map();
    for (const kind of KINDS) {
        const pending = values.filter(value => !found.has(value));
        if (pending.length === 0)
            break;
        const listed = await catalog.list(kind);
        for (const value of pending) {
            const matches = await matching(catalog, listed, value);
            if (matches.length > 0)
                found.set(value, matches);
        }
    }
    const resolved = [];
    for (const value of values) {
        const matches = found.get(value);
        if (!matches)
            throw await unknown(catalog, value);
        if (matches.length > 1)
            throw await ambiguous(catalog, value, matches);
        if (!resolved.some(r => r.resource.uuid === matches[0].uuid)) {
            resolved.push({ value, resource: matches[0] });
        }
    }
    return resolved;
}
/** The resources of one list `value` names: a uuid first, then a name, then a place and name. */
async function matching(catalog, listed, value) {
    const byUuid = listed.filter(resource => resource.uuid === value);
    if (byUuid.length > 0)
        return byUuid;
    const byName = listed.filter(resource => resource.name === value);
    if (byName.length > 0)
        return byName;
    const places = placesIn(value);
    const named = listed.filter(resource => places.some(place => place.name === resource.name));
    if (named.length === 0)
        return [];
    const matches = [];
    for (const place of places.filter(p => named.some(resource => resource.name === p.name))) {
        const environments = await catalog.environmentsNamed(place.project, place.environment);
        for (const resource of named) {
            if (resource.name === place.name &&
                environments.some(id => id === resource.environmentId) &&
                !matches.includes(resource)) {
                matches.push(resource);
            }
        }
    }
    return matches;
}
/**
 * Every way to read `value` as `project/environment/name`: names of projects and environments may
 * hold slashes themselves, so each pair of its slashes is a cut.
 */
function placesIn(value) {
    const slashes = [];
    for (let index = value.indexOf('/'); index >= 0; index = value.indexOf('/', index + 1)) {
        slashes.push(index);
    }
    const places = [];
    for (const [i, first] of slashes.entries()) {
        for (const second of slashes.slice(i + 1)) {
            const place = {
                project: value.slice(0, first).trim(),
                environment: value.slice(first + 1, second).trim(),
                name: value.slice(second + 1).trim()
            };
            if (place.project && place.environment && place.name)
                places.push(place);
        }
    }
    return places;
}
const HOW_TO = "write the name as Coolify shows it on the resource's page, as project/environment/name, or its uuid";
/**
 * No resource is called `value`: for `project/environment/name`, which part was not found, else
 * the name; with the closest names. The lists were all read by then; a project that cannot be read
 * only makes the error plainer.
 */
async function unknown(catalog, value) {
    const places = placesIn(value);
    const placed = places.length > 0 ? await unplaced(catalog, value, places).catch(() => undefined) : undefined;
    if (placed)
        return placed;
    const names = (await catalog.all()).map(resource => resource.name);
    return new ActionError(`Input \`app\`: no application, service or database named "${value}" is visible to this token${resolve_names_close(value, names)}; ${HOW_TO}.`);
}
/** Which part of `project/environment/name` is not there; undefined without projects (the seed). */
async function unplaced(catalog, value, places) {
    if (!(await catalog.hasProjects()))
        return undefined;
    const what = `Input \`app\`: "${value}":`;
    const projects = await catalog.projects();
    const place = places.find(p => projects.some(project => project.name === p.project)) ?? places[0];
    const inProject = projects.filter(project => project.name === place.project);
    if (inProject.length === 0) {
        const names = projects.map(project => project.name ?? '');
        return new ActionError(`${what} no project named "${place.project}"${resolve_names_close(place.project, names)}; ${HOW_TO}.`);
    }
    const environments = (await Promise.all(inProject.map(project => catalog.environments(project)))).flat();
    const ids = environments.filter(e => e.name === place.environment).map(e => e.id);
    if (ids.length === 0) {
        const names = environments.map(e => e.name ?? '');
        return new ActionError(`${what} project "${place.project}" has no environment "${place.environment}"${resolve_names_close(place.environment, names)}; ${HOW_TO}.`);
    }
    const there = (await catalog.all()).filter(r => ids.includes(r.environmentId));
    return new ActionError(`${what} nothing named "${place.name}" in ${place.project}/${place.environment}${resolve_names_close(place.name, there.map(r => r.name))}; ${HOW_TO}.`);
}
/** Several resources answer to `value`: each as `project/environment/name (uuid)`. */
async function ambiguous(catalog, value, matches) {
    // Where each lives is a help: a project that cannot be read leaves the name alone.
    const labels = await Promise.all(matches.map(resource => catalog.label(resource).catch(() => resource.name)));
    const sameLabel = new Set(labels).size < labels.length;
    return new ActionError(`Input \`app\`: "${value}" names ${matches.length} resources, so nothing was deployed: ${matches
        .map((resource, i) => `${labels[i]} (${resource.uuid})`)
        .join(', ')}; write the one to deploy ${sameLabel ? 'by its uuid' : 'as project/environment/name, or by its uuid'}.`);
}
/** ` (close: "a", "b")` for the few names nearest to `value`, or "" when none is near. */
function resolve_names_close(value, names) {
    const nearest = closeNames(value, names);
    return nearest.length > 0 ? ` (close: ${nearest.map(name => `"${name}"`).join(', ')})` : '';
}
/**
 * The few names nearest to `value` by edit distance, ignoring case, and only those near enough to
 * be a slip: at most a third of the value's length apart (two for short names).
 */
function closeNames(value, names) {
    const target = value.toLowerCase();
    const limit = Math.max(2, Math.floor(target.length / 3));
    return [...new Set(names)]
        .filter(name => name !== '' && name !== value)
        .map(name => ({ name, distance: editDistance(target, name.toLowerCase()) }))
        .filter(({ distance }) => distance <= limit)
        .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
        .slice(0, SUGGESTIONS)
        .map(({ name }) => name);
}
/** Levenshtein's distance: the fewest inserts, deletes and substitutions from `a` to `b`. */
function editDistance(a, b) {
    let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
        const current = [i];
        for (let j = 1; j <= b.length; j++) {
            const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
            current.push(Math.min(previous[j] + 1, current[j - 1] + 1, substitution));
        }
        previous = current;
    }
    return previous[b.length];
}
/** What the token sees in Coolify, each list read once and only when first needed. */
class Catalog {
    client;
    signal;
    #lists = new Map();
    #projects;
    #environments = new Map();
    constructor(client, signal) {
        this.client = client;
        this.signal = signal;
    }
    list(kind) {
        let list = this.#lists.get(kind);
        if (!list) {
            list = this.read(kind);
            this.#lists.set(kind, list);
        }
        return list;
    }
    /** Every kind: for the close names of a value found nowhere (all were read by then). */
    async all() {
        return (await Promise.all(KINDS.map(kind => this.list(kind)))).flat();
    }
    /** Whether Coolify has projects to name (4.x); the seed contract has none. */
    async hasProjects() {
        return (await this.projectList()) !== undefined;
    }
    async projects() {
        return (await this.projectList()) ?? [];
    }
    /** The ids of the environments called `environment` in the projects called `project`. */
    async environmentsNamed(project, environment) {
        const projects = (await this.projects()).filter(p => p.name === project);
        const environments = (await Promise.all(projects.map(p => this.environments(p)))).flat();
        return environments.filter(e => e.name === environment && e.id !== undefined).map(e => e.id);
    }
    environments(project) {
        const uuid = project.uuid ?? '';
        let environments = this.#environments.get(uuid);
        if (!environments) {
            environments = this.client
                .getProject(uuid, this.signal)
                .then(detail => listOf(detail?.environments));
            this.#environments.set(uuid, environments);
        }
        return environments;
    }
    /**
     * `project/environment/name` of a resource, its projects read one by one until its environment
     * is found; its name alone where Coolify does not say where it is.
     */
    async label(resource) {
        if (resource.environmentId === undefined)
            return resource.name;
        for (const project of await this.projects()) {
            const environment = (await this.environments(project)).find(e => e.id === resource.environmentId);
            if (environment)
                return `${project.name}/${environment.name}/${resource.name}`;
        }
        return resource.name;
    }
    projectList() {
        this.#projects ??= this.client.listProjects(this.signal).then(projects => listOf(projects), (error) => {
            if (isMissingRoute(error))
                return undefined;
            throw error;
        });
        return this.#projects;
    }
    /** A list as Coolify gives it; a kind the server has no route for has nothing to find. */
    async read(kind) {
        let rows;
        try {
            rows =
                kind === 'application'
                    ? await this.client.listApplications(this.signal)
                    : kind === 'service'
                        ? await this.client.listServices(this.signal)
                        : await this.client.listDatabases(this.signal);
        }
        catch (error) {
            if (kind !== 'application' && isMissingRoute(error))
                return [];
            throw error;
        }
        if (!Array.isArray(rows)) {
            throw new ActionError(`GET /${kind === 'application' ? 'applications' : `${kind}s`}: Coolify's answer is not a list; check \`coolify-url\`.`);
        }
        return rows.flatMap(row => {
            const { uuid, name, environment_id } = (row ?? {});
            if (typeof uuid !== 'string' || !uuid)
                return [];
            return [
                {
                    uuid,
                    name: typeof name === 'string' ? name.trim() : '',
                    kind,
                    environmentId: typeof environment_id === 'number' ? environment_id : undefined
                }
            ];
        });
    }
}
/** The config with what `app` names resolved into `appUuids`; as it was without `app`. */
async function resolveApps(client, config, signal, say) {
    if (config.appNames.length === 0)
        return config;
    const resolved = await resolveNames(client, config.appNames, signal);
    for (const { value, resource } of resolved) {
        say.debug(`app "${value}": the ${resource.kind} ${resource.name} (${resource.uuid})`);
    }
    return { ...config, appUuids: resolved.map(({ resource }) => resource.uuid), appNames: [] };
}

;// CONCATENATED MODULE: ./src/state.ts

const KEY = 'rollouts';
/**
 * The one store shared by the main and the post step: a record per rollout, changed field by field
 * and saved whole after every change (the runner keeps the last value), so a main step killed at
 * any point leaves the post step exactly what is still to undo, and no record overwrites another.
 */
class RunState {
    #rollouts;
    constructor(rollouts) {
        this.#rollouts = rollouts;
    }
    /** An empty store, for the main step. */
    static empty() {
        return new RunState(new Map());
    }
    /** What the main step left, for the post step; empty when nothing was saved or it is unreadable. */
    static load() {
        const rollouts = new Map();
        const saved = parse(host().getState(KEY));
        if (saved && typeof saved === 'object') {
            for (const [key, value] of Object.entries(saved)) {
                const record = checked(value);
                if (record)
                    rollouts.set(key, record);
            }
        }
        return new RunState(rollouts);
    }
    get(key) {
        return this.#rollouts.get(key) ?? {};
    }
    /** Every record with something left to undo. */
    entries() {
        return [...this.#rollouts];
    }
    /** Merges `change` into the rollout's record (an undefined field is removed) and saves. */
    update(key, change) {
        const merged = { ...this.get(key), ...change };
        for (const field of Object.keys(merged)) {
            const value = merged[field];
            if (value === undefined || (Array.isArray(value) && value.length === 0))
                delete merged[field];
        }
        if (Object.keys(merged).length === 0)
            this.#rollouts.delete(key);
        else
            this.#rollouts.set(key, merged);
        host().saveState(KEY, this.#rollouts.size ? JSON.stringify(Object.fromEntries(this.#rollouts)) : '');
    }
}
function checked(value) {
    if (!value || typeof value !== 'object')
        return undefined;
    const { name, trigger, running, unpin, pinned } = value;
    const record = {};
    if (trigger && typeof trigger === 'object' && typeof trigger.at === 'number') {
        const { at, pr, commit } = trigger;
        record.trigger = {
            at,
            ...(typeof pr === 'number' ? { pr } : {}),
            ...(typeof commit === 'string' ? { commit } : {})
        };
    }
    if (Array.isArray(running)) {
        const uuids = running.filter((uuid) => typeof uuid === 'string');
        if (uuids.length)
            record.running = uuids;
    }
    if (typeof unpin === 'string')
        record.unpin = unpin;
    if (typeof unpin === 'string' && typeof pinned === 'string')
        record.pinned = pinned;
    // A name alone leaves nothing to do.
    if (Object.keys(record).length === 0)
        return undefined;
    if (typeof name === 'string')
        record.name = name;
    return record;
}
function parse(text) {
    try {
        return text ? JSON.parse(text) : undefined;
    }
    catch {
        return undefined;
    }
}

;// CONCATENATED MODULE: ./src/run.ts
















/**
 * The deploy, from options to outcome, for any host: config → rollouts → run them → one outcome →
 * the front's report. SIGINT and SIGTERM cancel what this run started, within the grace time.
 */
async function deployAndFollow(front) {
    const say = sayThrough(host());
    const cancelled = new AbortController();
    const onSignal = (signal) => cancelled.abort(new ActionError(`${host().cancelled(signal)}.`));
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let config;
    let client;
    let budget;
    let rollouts = [];
    const watchers = [];
    const ending = { cancelled: false };
    try {
        const read = readConfig(name => host().input(name), mask);
        const event = front.event();
        checkReviewEvent(read, event);
        budget = new Budget(read.timeoutMs, read.healthTimeoutMs, cancelled.signal);
        warnIfPlainHttp(read, say);
        client = connect(read, say);
        // Names become uuids before anything is written: a name that is not one resource's is an
        // input the config cannot hold.
        config = await resolveApps(client, read, budget.deploy(), say);
        if (config.deletePreview) {
            await removePreview(client, config, event, budget.deploy(), say);
            await front.removed(config, budget.deploy());
            ending.removed = true;
        }
        else {
            rollouts = await deploy(client, config, event, budget, front, watchers, ending, say);
        }
        if (cancelled.signal.aborted)
            throw cancelled.signal.reason;
    }
    catch (error) {
        ending.error = error;
    }
    ending.cancelled = cancelled.signal.aborted;
    const outcome = decide(rollouts.map(rollout => rollout.deployment), ending);
    const grace = deadline(GRACE_MS);
    await front.report(outcome, config, watchers, budget?.grace() ?? grace.signal);
    grace.release();
    budget?.release();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await client?.close();
}
/** Prepares, triggers, and runs a rollout per resource; on a cancelled run, stops them. */
async function deploy(client, config, event, budget, front, watchers, ending, say) {
    const state = RunState.empty();
    // With `review-app`, the pull request's application is what the rest deploys.
    const reviewApp = config.reviewApp
        ? await openReviewApp(client, config, event, budget.deploy(), () => budget.grace(), say)
        : undefined;
    ending.reviewAppUuid = reviewApp?.uuid;
    const prepared = await prepare(client, reviewApp?.config ?? config, budget, state, event, say);
    watchers.push(...(await front.watchers(config, budget)));
    const follower = (several) => new Follower(client, {
        instanceUrl: config.instanceUrl,
        pollIntervalMs: config.pollIntervalMs,
        logs: config.logs,
        showHidden: config.debugLogs,
        sink: new LogPrinter(several),
        say
    });
    const rollouts = await launch({
        client,
        config: prepared.config,
        budget,
        state,
        say: { ...say, runtimeLog: printRuntimeLog }
    }, prepared, follower);
    const deployments = rollouts.map(rollout => rollout.deployment);
    for (const watcher of watchers)
        await watcher.building(deployments, budget.deploy());
    await Promise.all(rollouts.map(rollout => rollout.run()));
    if (budget.cancelled.aborted)
        await stop(rollouts, config, budget, say);
    return rollouts;
}
/** The run was cancelled: stop in Coolify what the rollouts started, within the grace time. */
async function stop(rollouts, config, budget, say) {
    // Deployments started elsewhere and only joined are left running: each says so as it stops.
    const running = rollouts
        .flatMap(rollout => rollout.running)
        .filter(deployment => !deployment.startedElsewhere);
    // Services and databases under way have no deployment: each says so as it stops.
    if (running.length > 0 && config.cancelOnAbort) {
        say.note(`${budget.why()}: cancelling ${running.map(d => `${d.name} (${d.uuid})`).join(', ')} in Coolify`);
    }
    else if (running.length > 0) {
        say.warn(`Left running in Coolify (cancel-on-abort is false): ${running.map(d => d.name).join(', ')}`);
    }
    const signal = budget.grace();
    await Promise.all(rollouts.map(rollout => rollout.stop(signal)));
    if (!config.cancelOnAbort)
        return;
    for (const deployment of running) {
        say.note(`${deployment.name}: ${deployment.status} (${deployment.reason ?? ''})`);
    }
}
function warnIfPlainHttp(config, say) {
    const { protocol, hostname } = new URL(config.apiUrl);
    if (protocol === 'http:' && !isLoopback(hostname)) {
        say.warn(`The token travels over plain http:// to ${hostname}, readable by anyone on the way; use https:// for \`coolify-url\`.`);
    }
}

;// CONCATENATED MODULE: ./src/cli/host.ts
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
// eslint-disable-next-line no-control-regex
const host_CONTROL = /[\u0000-\u001f\u007f]+/g;
/** The command line: plain lines on standard output, errors on standard error, every secret starred out. */
class TerminalHost {
    options;
    log;
    outputs = new Map();
    #masked = new Set();
    #state = new Map();
    constructor(options) {
        this.options = options;
        const write = (text) => options.write(this.redact(text));
        this.log = options.gitlab
            ? gitlabLog(write, options.colors, options.now ?? Date.now)
            : plainLog(write, options.colors);
    }
    input(name) {
        return this.options.inputs.get(name) ?? '';
    }
    info(message) {
        this.line(this.options.words(message));
    }
    notice(message) {
        this.line(`notice: ${this.options.words(message)}`);
    }
    warning(message) {
        this.line(this.paint('33', `warning: ${this.options.words(message)}`));
    }
    error(message, title) {
        const text = `${title ? `${title}: ` : ''}${message}`;
        this.options.fail(`${this.redact(this.paint('31', `error: ${this.options.words(text)}`))}\n`);
    }
    debug(message) {
        if (this.options.verbose)
            this.line(`debug: ${this.options.words(message)}`);
    }
    cancelled(signal) {
        return this.options.gitlab ? `The job was cancelled (${signal})` : `Stopped by ${signal}`;
    }
    mask(value) {
        if (value)
            this.#masked.add(value);
    }
    setOutput(name, value) {
        this.outputs.set(name, value);
    }
    // No later step runs after a command: what is saved lasts as long as the process.
    saveState(key, value) {
        this.#state.set(key, value);
    }
    getState(key) {
        return this.#state.get(key) ?? '';
    }
    /** Text with every masked value starred out, the longest first. */
    redact(text) {
        let result = text;
        for (const secret of [...this.#masked].sort((a, b) => b.length - a.length)) {
            result = result.replaceAll(secret, '***');
        }
        return result;
    }
    line(message) {
        this.options.write(`${this.redact(message)}\n`);
    }
    paint(code, text) {
        return this.options.colors ? `\u001b[${code}m${text}\u001b[0m` : text;
    }
}
/** Groups as headings; text from outside as it is, without colours where they would not show. */
function plainLog(write, colors) {
    return {
        write,
        startGroup: title => `== ${title}\n`,
        endGroup: () => '',
        verbatim: lines => lines.map(line => `${colors ? line : line.replace(ANSI, '')}\n`).join(''),
        oneLine: text => text.replace(host_CONTROL, ' ')
    };
}
/**
 * GitLab's collapsible sections. Build output cannot open or close one: the erase-line sequence
 * that must precede a section marker is taken out of its lines.
 */
function gitlabLog(write, colors, now) {
    const open = [];
    let count = 0;
    const stamp = () => Math.floor(now() / 1000);
    return {
        write,
        startGroup: title => {
            const id = `coolify_${++count}`;
            open.push(id);
            return `\u001b[0Ksection_start:${stamp()}:${id}[collapsed=false]\r\u001b[0K${title}\n`;
        },
        endGroup: () => {
            const id = open.pop();
            return id ? `\u001b[0Ksection_end:${stamp()}:${id}\r\u001b[0K\n` : '';
        },
        verbatim: lines => lines
            .map(line => {
            // eslint-disable-next-line no-control-regex
            const inert = line.replace(/\u001b\[0K(?=section_(?:start|end):)/g, '');
            return `${colors ? inert : inert.replace(ANSI, '')}\n`;
        })
            .join(''),
        oneLine: text => text.replace(host_CONTROL, ' ')
    };
}

;// CONCATENATED MODULE: external "node:util"
const external_node_util_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:util");
;// CONCATENATED MODULE: ./src/cli/options.ts



/**
 * The action's inputs as flags. GitHub's own (`github-token`, `environment`, `comment`) have no
 * flag, and the token none either: on a command line the process list and the job log show it.
 */
const options_FLAGS = [
    {
        name: 'url',
        input: 'coolify-url',
        kind: 'value',
        value: 'URL',
        about: 'the Coolify instance, e.g. https://coolify.example.com'
    },
    {
        name: 'app',
        input: 'app',
        kind: 'lines',
        value: 'NAME',
        about: 'an application (or service, database) to deploy: its name, project/environment/name, or uuid; repeat it, or separate with commas'
    },
    {
        name: 'app-uuid',
        input: 'app-uuid',
        kind: 'lines',
        value: 'UUID',
        about: 'a uuid to deploy as given, without looking it up (instead of --app)'
    },
    {
        name: 'tag',
        input: 'tag',
        kind: 'lines',
        value: 'TAG',
        about: 'deploy every resource with this Coolify tag instead'
    },
    { name: 'force', input: 'force', kind: 'on', about: 'rebuild without the build cache' },
    {
        name: 'pr',
        input: 'pr',
        kind: 'value',
        value: 'N',
        about: "deploy that pull (merge) request's preview"
    },
    {
        name: 'image-tag',
        input: 'image-tag',
        kind: 'value',
        value: 'TAG',
        about: 'Docker-image applications: deploy this image tag'
    },
    {
        name: 'commit',
        input: 'commit',
        kind: 'value',
        value: 'SHA',
        about: 'git applications: build exactly this commit, then unpin'
    },
    {
        name: 'git-branch',
        input: 'git-branch',
        kind: 'value',
        value: 'BRANCH',
        about: 'set the branch before the deploy'
    },
    {
        name: 'domains',
        input: 'domains',
        kind: 'value',
        value: 'URLS',
        about: 'set the domains before the deploy'
    },
    {
        name: 'env',
        input: 'env',
        kind: 'lines',
        value: 'KEY=VALUE',
        about: 'set an environment variable before the deploy; repeat it'
    },
    {
        name: 'no-trigger',
        input: 'trigger',
        kind: 'off',
        about: 'start nothing: follow the deployment Coolify starts by itself for --commit'
    },
    { name: 'no-wait', input: 'wait', kind: 'off', about: 'trigger and return at once' },
    {
        name: 'timeout',
        input: 'timeout',
        kind: 'value',
        value: 'DURATION',
        about: 'how long to wait for the deployments (30m)'
    },
    {
        name: 'poll-interval',
        input: 'poll-interval',
        kind: 'value',
        value: 'DURATION',
        about: 'base time between reads (3s)'
    },
    {
        name: 'no-cancel-on-timeout',
        input: 'cancel-on-timeout',
        kind: 'off',
        about: 'leave deployments running when --timeout passes'
    },
    {
        name: 'no-cancel-on-abort',
        input: 'cancel-on-abort',
        kind: 'off',
        about: 'leave deployments running on SIGINT or SIGTERM'
    },
    {
        name: 'health-url',
        input: 'health-url',
        kind: 'value',
        value: 'PATH|URL',
        about: 'after the deploy, a path or URL that must answer 2xx or 3xx'
    },
    {
        name: 'health-timeout',
        input: 'health-timeout',
        kind: 'value',
        value: 'DURATION',
        about: 'how long the health check may take (2m)'
    },
    {
        name: 'rollback-on-failure',
        input: 'rollback-on-failure',
        kind: 'on',
        about: 'redeploy what ran before when the new version fails'
    },
    {
        name: 'delete-preview',
        input: 'delete-preview',
        kind: 'on',
        about: 'with --pr: remove that preview (or review app) instead of deploying'
    },
    {
        name: 'review-app',
        input: 'review-app',
        kind: 'on',
        about: 'with --pr and one --app (the template): an application of its own for the pull request'
    },
    {
        name: 'review-domain',
        input: 'review-domain',
        kind: 'value',
        value: 'URL',
        about: "the review app's domain, {pr} standing for the number"
    },
    {
        name: 'review-project',
        input: 'review-project',
        kind: 'value',
        value: 'UUID',
        about: 'Coolify before 4.3: the project to create review apps in'
    },
    {
        name: 'review-server',
        input: 'review-server',
        kind: 'value',
        value: 'UUID',
        about: 'Coolify before 4.3: the server'
    },
    {
        name: 'review-environment',
        input: 'review-environment',
        kind: 'value',
        value: 'NAME',
        about: 'Coolify before 4.3: the environment'
    },
    {
        name: 'review-deploy-key',
        input: 'review-deploy-key',
        kind: 'value',
        value: 'UUID',
        about: 'Coolify before 4.3: the deploy key'
    },
    {
        name: 'review-destination',
        input: 'review-destination',
        kind: 'value',
        value: 'UUID',
        about: 'where review apps go (a server without production isolates them)'
    },
    { name: 'no-logs', input: 'logs', kind: 'off', about: 'print no build logs' },
    {
        name: 'debug-logs',
        input: 'debug-logs',
        kind: 'on',
        about: "also print Coolify's hidden log entries"
    },
    {
        name: 'header',
        input: 'headers',
        kind: 'lines',
        value: "'NAME: VALUE'",
        about: 'an extra HTTP header (Cloudflare Access and the like); repeat it'
    },
    {
        name: 'ca-certificate',
        input: 'ca-certificate',
        kind: 'file',
        value: 'FILE',
        about: 'extra CA certificates (PEM) to trust'
    }
];
/** The command line's own options, beside the inputs. */
const OWN = {
    'token-file': { type: 'string' },
    token: { type: 'string' },
    json: { type: 'string' },
    dotenv: { type: 'string' },
    verbose: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean' }
};
/** A mistake on the command line: one line, exit 2. */
class UsageError extends ActionError {
    name = 'UsageError';
}
/** The environment variable a flag falls back to: COOLIFY_ and its name, `no-` left out. */
function envName(flag) {
    return `COOLIFY_${flag.name.replace(/^no-/, '').replaceAll('-', '_').toUpperCase()}`;
}
/** Reads the arguments, falling back to COOLIFY_* variables for what they do not give. */
function parseInvocation(args, env) {
    const options = { ...OWN };
    for (const flag of options_FLAGS) {
        options[flag.name] = {
            type: flag.kind === 'on' || flag.kind === 'off' ? 'boolean' : 'string',
            multiple: flag.kind === 'lines'
        };
    }
    let values;
    try {
        ;
        ({ values } = (0,external_node_util_namespaceObject.parseArgs)({ args: [...args], options, strict: true, allowPositionals: false }));
    }
    catch (error) {
        throw new UsageError(usageProblem(error));
    }
    if (values.token !== undefined) {
        throw new UsageError('--token: the token is not taken on the command line, where the process list and the job log show it: set COOLIFY_TOKEN, or give --token-file FILE.');
    }
    const inputs = new Map();
    for (const flag of options_FLAGS)
        inputs.set(flag.input, options_valueOf(flag, values[flag.name], env));
    inputs.set('token', token(values['token-file'], env));
    return {
        inputs,
        json: values.json,
        dotenv: values.dotenv,
        verbose: values.verbose === true,
        help: values.help === true,
        version: values.version === true
    };
}
function options_valueOf(flag, given, env) {
    const fallback = env[envName(flag)] ?? '';
    switch (flag.kind) {
        case 'on':
            return given === true ? 'true' : fallback;
        case 'off':
            return given === true ? 'false' : fallback;
        case 'lines':
            return Array.isArray(given) && given.length > 0 ? given.join('\n') : fallback;
        case 'file': {
            const path = typeof given === 'string' ? given : fallback;
            return path ? options_readText(`--${flag.name}`, path) : '';
        }
        default:
            return typeof given === 'string' ? given : fallback;
    }
}
/** The token: from --token-file, else COOLIFY_TOKEN; never from a flag's value. */
function token(file, env) {
    if (file !== undefined)
        return options_readText('--token-file', file).trim();
    return env.COOLIFY_TOKEN ?? '';
}
function options_readText(option, path) {
    try {
        return (0,external_node_fs_namespaceObject.readFileSync)(path, 'utf8');
    }
    catch (error) {
        const code = error.code;
        throw new UsageError(`${option}: cannot read ${path} (${code ?? 'unreadable'}).`);
    }
}
/** parseArgs' complaint, as one line that names the option. */
function usageProblem(error) {
    const { code, message } = error;
    const option = /'(-{1,2}[^' ]+)/.exec(message ?? '')?.[1];
    switch (code) {
        case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
            return `${option ?? 'An option'}: no such option (--help lists them).`;
        case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
            return message?.includes('argument missing')
                ? `${option ?? 'An option'}: needs a value.`
                : `${option ?? 'An option'}: takes no value.`;
        case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
            return `${/'([^']*)'/.exec(message ?? '')?.[1] ?? 'An argument'}: unexpected; every value follows its option (--help lists them).`;
        default:
            return message?.split('\n')[0] ?? String(error);
    }
}
/**
 * The GitLab component's inputs (templates/deploy.yml), by the flag whose variable each one sets;
 * the component's job sets the others as COOLIFY_* variables.
 */
const COMPONENT_INPUTS = new Map([
    ['url', 'coolify-url'],
    ...[
        'app',
        'tag',
        'force',
        'pr',
        'image-tag',
        'commit',
        'health-url',
        'rollback-on-failure',
        'review-app',
        'review-domain',
        'delete-preview',
        'timeout'
    ].map(name => [name, name])
]);
/** Set by the GitLab component: messages name its inputs, not the flags no one typed. */
const COMPONENT_VARIABLE = 'COOLIFY_COMPONENT';
/**
 * A message about the action's inputs, in the words of whoever gave the options. On the command
 * line an input the message is about names its flag and variable ("Input `coolify-url`" becomes
 * "`--url` (`COOLIFY_URL`)"), any other mention the flag alone, and `trigger: false` becomes
 * `--no-trigger`. Under the GitLab component, its inputs (`coolify-url`, `app`) or else the
 * COOLIFY_* variable.
 */
function inCommandLineTerms(message, speaker = 'command line') {
    const byInput = new Map(options_FLAGS.map(flag => [flag.input, flag]));
    return message.replace(/(Input )?`([a-z-]+)(?:: (true|false))?`/g, (whole, subject, input, value) => {
        if (input === 'token')
            return '`COOLIFY_TOKEN`';
        const flag = byInput.get(input);
        if (!flag)
            return whole;
        const setting = value ? `: ${value}` : '';
        if (speaker === 'component') {
            const own = COMPONENT_INPUTS.get(flag.name);
            return own ? `${subject ?? ''}\`${own}${setting}\`` : `\`${envName(flag)}${setting}\``;
        }
        const switched = (flag.kind === 'off' && value === 'false') || (flag.kind === 'on' && value === 'true');
        const option = `\`--${flag.name}${switched || !value ? '' : ` ${value}`}\``;
        return subject ? `${option} (\`${envName(flag)}\`)` : option;
    });
}
/** `--help`. */
function usage() {
    const rows = options_FLAGS.map(flag => [
        `--${flag.name}${flag.value ? ` ${flag.value}` : ''}`,
        `${flag.about} [${envName(flag)}]`
    ]);
    rows.push(['--token-file FILE', 'read the API token from FILE [else COOLIFY_TOKEN]'], ['--json FILE', 'write the deployments as JSON (the action’s `deployments` output)'], ['--dotenv FILE', 'write the results as COOLIFY_* variables (GitLab’s dotenv report)'], ['--verbose', 'print debug lines too'], ['--version', 'print the version'], ['-h, --help', 'print this help']);
    const width = Math.max(...rows.map(([left]) => left.length)) + 2;
    return [
        'Usage: coolify-deploy-follow --url URL --app NAME [options]',
        '',
        'Deploys applications on Coolify, streams their build logs, and waits for the result.',
        'The API token comes from COOLIFY_TOKEN or --token-file; it needs the deploy and read',
        'abilities, and read:sensitive for the build logs.',
        '',
        'Options (each falls back to the environment variable in brackets):',
        ...rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`),
        '',
        'Exit status: 0 every deployment finished; 1 a deployment failed, was cancelled, timed out or',
        'is unhealthy; 2 a bad option or input; 3 Coolify could not be reached or refused.',
        ''
    ].join('\n');
}

;// CONCATENATED MODULE: ./src/cli/main.ts











/** The exit statuses, as --help and the docs name them. */
const EXIT = { finished: 0, failed: 1, usage: 2, coolify: 3 };
const NAME = 'coolify-deploy-follow';
/**
 * The command line: the same deploy as the action's, printed for any CI. Returns the exit status.
 * `write` takes standard output; every error, a usage mistake or a failed deploy, goes to `fail`
 * (standard error).
 */
async function main(args, env, write, fail) {
    let invocation;
    try {
        invocation = parseInvocation(args, env);
    }
    catch (error) {
        if (!(error instanceof UsageError))
            throw error;
        fail(`${NAME}: ${error.message}\n`);
        return EXIT.usage;
    }
    if (invocation.help) {
        write(usage());
        return EXIT.finished;
    }
    if (invocation.version) {
        write(`${NAME} ${version()}\n`);
        return EXIT.finished;
    }
    if (!invocation.inputs.get('token')) {
        fail(`${NAME}: no API token: set COOLIFY_TOKEN (from your CI's secret variables), or give --token-file FILE.\n`);
        return EXIT.usage;
    }
    const gitlab = env.GITLAB_CI === 'true';
    const host = new TerminalHost({
        inputs: invocation.inputs,
        colors: colors(env, gitlab),
        gitlab,
        verbose: invocation.verbose,
        words: message => inCommandLineTerms(message, env[COMPONENT_VARIABLE] === 'true' ? 'component' : 'command line'),
        write,
        fail
    });
    setHost(host);
    let status = EXIT.finished;
    await deployAndFollow({
        event: () => mergeRequest(env),
        watchers: async () => [],
        removed: async () => { },
        report: async (outcome, config) => {
            status = await report(host, outcome, config, invocation);
        }
    });
    return status;
}
/** The result table, the files for later jobs, and the exit status. */
async function report(host, outcome, config, invocation) {
    setOutputs(outcome, (name, value) => host.setOutput(name, value));
    if (outcome.deployments.length > 0)
        host.info(table(outcome));
    // What the action's annotations say: the application, the status, why, and the link.
    for (const deployment of outcome.deployments) {
        if (!config || !failsStep(deployment.status))
            continue;
        host.error(failureLine(deployment, config.instanceUrl, lastError(deployment)));
    }
    if (outcome.error)
        host.error(outcome.error);
    for (const [file, text] of [
        [invocation.json, () => `${JSON.stringify(outcome.deployments.map(toRecord), null, 2)}\n`],
        [invocation.dotenv, () => dotenv(host.outputs)]
    ]) {
        if (!file)
            continue;
        try {
            (0,external_node_fs_namespaceObject.writeFileSync)(file, text());
        }
        catch (error) {
            host.warning(`Could not write ${file}: ${error.message}`);
        }
    }
    // Coolify may refuse, and the run be cancelled, before the config is whole: while names are
    // looked up.
    if (outcome.byCoolify)
        return EXIT.coolify;
    if (outcome.error && config === undefined && outcome.status !== 'cancelled')
        return EXIT.usage;
    return outcome.fails ? EXIT.failed : EXIT.finished;
}
/** One row per deployment: name, status, duration, and the URL or why it failed. */
function table({ deployments }) {
    const rows = deployments.map(deployment => [
        deployment.name,
        deployment.status,
        deployment.durationMs === undefined ? '' : formatDuration(deployment.durationMs),
        failsStep(deployment.status) ? (deployment.reason ?? '') : (deployment.appUrl ?? '')
    ]);
    const widths = [0, 1, 2].map(column => Math.max(...rows.map(row => row[column].length)));
    const lines = rows.map(row => row
        .map((cell, column) => (column < 3 ? cell.padEnd(widths[column]) : cell))
        .join('  ')
        .trimEnd());
    return ['Result:', ...lines.map(line => `  ${line}`)].join('\n');
}
/**
 * The outputs as COOLIFY_* variables, one a line, for GitLab's `artifacts:reports:dotenv` (which
 * also gives an environment its URL). `deployments` stays in --json: a dotenv value is one line.
 */
function dotenv(outputs) {
    const names = {
        status: 'COOLIFY_STATUS',
        'deployment-uuid': 'COOLIFY_DEPLOYMENT_UUID',
        url: 'COOLIFY_APP_URL',
        duration: 'COOLIFY_DURATION',
        'rolled-back': 'COOLIFY_ROLLED_BACK',
        'review-app-uuid': 'COOLIFY_REVIEW_APP_UUID'
    };
    return Object.entries(names)
        .map(([output, name]) => `${name}=${(outputs.get(output) ?? '').replace(/[\r\n]/g, ' ')}\n`)
        .join('');
}
/**
 * A GitLab pipeline's facts, as the action reads a workflow's event: the project, the commit, and
 * in a merge request pipeline the source branch, its newest commit, and whether it comes from a
 * fork. Elsewhere, GITHUB_REPOSITORY where a runner of GitHub's kind sets it.
 */
function mergeRequest(env) {
    const text = (name) => env[name] || undefined;
    return {
        // Review apps' markers name it: two projects' merge requests of one number stay apart.
        repository: text('CI_PROJECT_PATH') ?? text('GITHUB_REPOSITORY'),
        sha: text('CI_COMMIT_SHA'),
        headRef: text('CI_MERGE_REQUEST_SOURCE_BRANCH_NAME'),
        headSha: text('CI_MERGE_REQUEST_SOURCE_BRANCH_SHA') ?? text('CI_COMMIT_SHA'),
        headRepository: text('CI_MERGE_REQUEST_SOURCE_PROJECT_PATH'),
        baseRepository: text('CI_MERGE_REQUEST_PROJECT_PATH')
    };
}
/** Colours on a terminal and in GitLab's log, never with NO_COLOR; FORCE_COLOR asks for them. */
function colors(env, gitlab) {
    if (env.NO_COLOR)
        return false;
    if (env.FORCE_COLOR && env.FORCE_COLOR !== '0')
        return true;
    return gitlab || process.stdout.isTTY === true;
}
/**
 * The package's version: package.json sits two folders above the bundle (dist/cli/). A path, not
 * a `new URL(…, import.meta.url)`, which the bundler would copy into dist/ as an asset.
 */
function version() {
    try {
        const manifest = (0,external_node_path_namespaceObject.join)((0,external_node_path_namespaceObject.dirname)((0,external_node_url_namespaceObject.fileURLToPath)(import.meta.url)), '..', '..', 'package.json');
        return JSON.parse((0,external_node_fs_namespaceObject.readFileSync)(manifest, 'utf8')).version;
    }
    catch {
        return 'unknown';
    }
}


/***/ })

/******/ });
/************************************************************************/
/******/ // The module cache
/******/ var __webpack_module_cache__ = {};
/******/ 
/******/ // The require function
/******/ function __nccwpck_require__(moduleId) {
/******/ 	// Check if module is in cache
/******/ 	var cachedModule = __webpack_module_cache__[moduleId];
/******/ 	if (cachedModule !== undefined) {
/******/ 		return cachedModule.exports;
/******/ 	}
/******/ 	// Create a new module (and put it into the cache)
/******/ 	var module = __webpack_module_cache__[moduleId] = {
/******/ 		// no module.id needed
/******/ 		// no module.loaded needed
/******/ 		exports: {}
/******/ 	};
/******/ 
/******/ 	// Execute the module function
/******/ 	var threw = true;
/******/ 	try {
/******/ 		__webpack_modules__[moduleId](module, module.exports, __nccwpck_require__);
/******/ 		threw = false;
/******/ 	} finally {
/******/ 		if(threw) delete __webpack_module_cache__[moduleId];
/******/ 	}
/******/ 
/******/ 	// Return the exports of the module
/******/ 	return module.exports;
/******/ }
/******/ 
/************************************************************************/
/******/ /* webpack/runtime/asset-relocator-loader */
/******/ if (typeof __nccwpck_require__ !== 'undefined') __nccwpck_require__.ab = decodeURIComponent(new URL('.', import.meta.url).pathname).slice(import.meta.url.match(/^file:\/\/\/\w:/) ? 1 : 0, -1) + "/";
/******/ 
/******/ /* webpack/runtime/async module */
/******/ (() => {
/******/ 	var webpackQueues = typeof Symbol === "function" ? Symbol("webpack queues") : "__webpack_queues__";
/******/ 	var webpackExports = typeof Symbol === "function" ? Symbol("webpack exports") : "__webpack_exports__";
/******/ 	var webpackError = typeof Symbol === "function" ? Symbol("webpack error") : "__webpack_error__";
/******/ 	var resolveQueue = (queue) => {
/******/ 		if(queue && queue.d < 1) {
/******/ 			queue.d = 1;
/******/ 			queue.forEach((fn) => (fn.r--));
/******/ 			queue.forEach((fn) => (fn.r-- ? fn.r++ : fn()));
/******/ 		}
/******/ 	}
/******/ 	var wrapDeps = (deps) => (deps.map((dep) => {
/******/ 		if(dep !== null && typeof dep === "object") {
/******/ 			if(dep[webpackQueues]) return dep;
/******/ 			if(dep.then) {
/******/ 				var queue = [];
/******/ 				queue.d = 0;
/******/ 				dep.then((r) => {
/******/ 					obj[webpackExports] = r;
/******/ 					resolveQueue(queue);
/******/ 				}, (e) => {
/******/ 					obj[webpackError] = e;
/******/ 					resolveQueue(queue);
/******/ 				});
/******/ 				var obj = {};
/******/ 				obj[webpackQueues] = (fn) => (fn(queue));
/******/ 				return obj;
/******/ 			}
/******/ 		}
/******/ 		var ret = {};
/******/ 		ret[webpackQueues] = x => {};
/******/ 		ret[webpackExports] = dep;
/******/ 		return ret;
/******/ 	}));
/******/ 	__nccwpck_require__.a = (module, body, hasAwait) => {
/******/ 		var queue;
/******/ 		hasAwait && ((queue = []).d = -1);
/******/ 		var depQueues = new Set();
/******/ 		var exports = module.exports;
/******/ 		var currentDeps;
/******/ 		var outerResolve;
/******/ 		var reject;
/******/ 		var promise = new Promise((resolve, rej) => {
/******/ 			reject = rej;
/******/ 			outerResolve = resolve;
/******/ 		});
/******/ 		promise[webpackExports] = exports;
/******/ 		promise[webpackQueues] = (fn) => (queue && fn(queue), depQueues.forEach(fn), promise["catch"](x => {}));
/******/ 		module.exports = promise;
/******/ 		body((deps) => {
/******/ 			currentDeps = wrapDeps(deps);
/******/ 			var fn;
/******/ 			var getResult = () => (currentDeps.map((d) => {
/******/ 				if(d[webpackError]) throw d[webpackError];
/******/ 				return d[webpackExports];
/******/ 			}))
/******/ 			var promise = new Promise((resolve) => {
/******/ 				fn = () => (resolve(getResult));
/******/ 				fn.r = 0;
/******/ 				var fnQueue = (q) => (q !== queue && !depQueues.has(q) && (depQueues.add(q), q && !q.d && (fn.r++, q.push(fn))));
/******/ 				currentDeps.map((dep) => (dep[webpackQueues](fnQueue)));
/******/ 			});
/******/ 			return fn.r ? promise : getResult();
/******/ 		}, (err) => ((err ? reject(promise[webpackError] = err) : outerResolve(exports)), resolveQueue(queue)));
/******/ 		queue && queue.d < 0 && (queue.d = 0);
/******/ 	};
/******/ })();
/******/ 
/******/ /* webpack/runtime/compat get default export */
/******/ (() => {
/******/ 	// getDefaultExport function for compatibility with non-harmony modules
/******/ 	__nccwpck_require__.n = (module) => {
/******/ 		var getter = module && module.__esModule ?
/******/ 			() => (module['default']) :
/******/ 			() => (module);
/******/ 		__nccwpck_require__.d(getter, { a: getter });
/******/ 		return getter;
/******/ 	};
/******/ })();
/******/ 
/******/ /* webpack/runtime/define property getters */
/******/ (() => {
/******/ 	// define getter functions for harmony exports
/******/ 	__nccwpck_require__.d = (exports, definition) => {
/******/ 		for(var key in definition) {
/******/ 			if(__nccwpck_require__.o(definition, key) && !__nccwpck_require__.o(exports, key)) {
/******/ 				Object.defineProperty(exports, key, { enumerable: true, get: definition[key] });
/******/ 			}
/******/ 		}
/******/ 	};
/******/ })();
/******/ 
/******/ /* webpack/runtime/hasOwnProperty shorthand */
/******/ (() => {
/******/ 	__nccwpck_require__.o = (obj, prop) => (Object.prototype.hasOwnProperty.call(obj, prop))
/******/ })();
/******/ 
/************************************************************************/
/******/ 
/******/ // startup
/******/ // Load entry module and return exports
/******/ // This entry module used 'module' so it can't be inlined
/******/ var __webpack_exports__ = __nccwpck_require__(486);
/******/ __webpack_exports__ = await __webpack_exports__;
/******/ 
