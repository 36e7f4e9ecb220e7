import { createRequire as __WEBPACK_EXTERNAL_createRequire } from "module";
/******/ var __webpack_modules__ = ({

/***/ 10:
/***/ ((__unused_webpack_module, __webpack_exports__, __nccwpck_require__) => {


// EXPORTS
__nccwpck_require__.d(__webpack_exports__, {
  e: () => (/* binding */ cleanup_run)
});

;// CONCATENATED MODULE: ./src/errors.ts
/**
 * An error the user can act on: its message is one line that says what went wrong and what to do.
 * Anything else that reaches the top is a defect and is reported as such.
 */
class errors_ActionError extends Error {
    name = 'ActionError';
}
/** One line, never a stack: the last word on any failure. */
function describeError(error) {
    if (error instanceof errors_ActionError)
        return error.message;
    const text = error instanceof Error ? error.message : String(error);
    return `Unexpected error: ${text.split('\n')[0]}. Please report it with the step's log.`;
}

;// CONCATENATED MODULE: external "node:fs"
const external_node_fs_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:fs");
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
        throw new errors_ActionError(`${variable} names a ${url.protocol.slice(0, -1)}:// proxy, but only HTTP and HTTPS proxies are supported: give an http:// or https:// proxy, or add ${target.hostname} to NO_PROXY.`);
    }
    let credentials;
    try {
        if (url.username || url.password) {
            credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
        }
    }
    catch {
        throw new errors_ActionError(`${variable}: the proxy's user or password holds a % that starts no escape: write a % in them as %25 (and other reserved characters as %XX).`);
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

;// CONCATENATED MODULE: ./src/coolify/errors.ts


/**
 * A request to Coolify that failed. `message` is one line: the request, what came back, and what to
 * do about it. Response bodies are never part of it; only Coolify's short `message` field is.
 */
class errors_CoolifyError extends errors_ActionError {
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
        return new errors_CoolifyError(this.request, `${this.reason} (${attempts} attempts)`, this.hint, this.details);
    }
    /** The same failure with a hint that knows the context (which uuid, which input). */
    withHint(hint) {
        return new errors_CoolifyError(this.request, this.reason, hint, this.details);
    }
}
/**
 * Coolify's catch-all answer for a path it has no route for. A 404 about the application ("Application
 * not found.") is a real failure, and so is a bare 404 from something that is not Coolify.
 */
function isMissingRoute(error) {
    return (error instanceof errors_CoolifyError &&
        error.status === 404 &&
        /^not found\.?$/i.test(error.details.serverMessage ?? ''));
}
/** A 404 about the thing asked for (it is not there, or no longer), not about a missing route. */
function isGone(error) {
    return error instanceof errors_CoolifyError && error.status === 404 && !isMissingRoute(error);
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
async function pacing_sleep(ms, signal) {
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
    constructor(now = Date.now, wait = pacing_sleep) {
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
        return new errors_CoolifyError(error.request, `${this.address} never answered: ${error.reason}, ${attempts} attempts in ${formatDuration(waited)}`, error.hint, { ...error.details, transient: false });
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
        this.closing.abort(new errors_ActionError('the step is done with Coolify'));
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
                if (!(error instanceof errors_CoolifyError) || !error.details.transient || !call.retry) {
                    throw error instanceof errors_CoolifyError ? error.afterAttempts(attempt) : error;
                }
                last = error;
                this.reachability.failed(error);
                const givenUp = this.reachability.givenUp(error, attempt);
                if (givenUp)
                    throw givenUp;
                try {
                    const wait = this.options.sleep ?? pacing_sleep;
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
            throw new errors_CoolifyError(label, reason, hint, { transient, unanswered: true, unsent });
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
                throw new errors_CoolifyError(label, `the answer (${status}) cannot be read: ${error.message}`, UNREADABLE_HINT, {
                    status,
                    transient: false
                });
            }
            const { reason } = describeNetworkFailure(error, this.host, this.proxy?.name);
            throw new errors_CoolifyError(label, `the answer (${status}) was cut short: ${reason}`, '', {
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
            throw new errors_CoolifyError(label, reason, hint, {
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
            throw new errors_CoolifyError(label, reason, hint, { status, transient: true });
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
    if (error instanceof errors_CoolifyError)
        return error;
    const reason = call.signal.reason;
    if (!(reason instanceof DOMException && reason.name === 'TimeoutError'))
        return reason;
    return new errors_CoolifyError(`${call.method} ${call.path}`, 'Coolify did not answer in the time it had', '', { transient: true, unanswered: true, cutOff: true });
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
function secrets_redactPayloads(text) {
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
function status_statusFromCoolify(raw) {
    return typeof raw === 'string' ? FROM_COOLIFY[raw.trim().toLowerCase()] : undefined;
}
/** Queued or running: what a cancel can still stop. An unknown word counts as running. */
function status_isUnderWay(raw) {
    const status = status_statusFromCoolify(raw);
    return status === undefined || !status_hasEnded(status);
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
    return from === to || !status_hasEnded(from) || (AFTER_END[from]?.includes(to) ?? false);
}
function status_hasEnded(status) {
    return STATUSES[status].ended;
}
/** Finished in Coolify: a new version is in place, so it can be checked for health. */
function status_isFinished(status) {
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
        if (detail && status_statusFromCoolify(detail.status) === 'cancelled')
            return { cancelled: true, detail };
        if (detail && !status_isUnderWay(detail.status))
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

;// CONCATENATED MODULE: ./src/coolify/answers.ts
/**
 * Reading values out of Coolify's answers, which older servers and odd rows give in other shapes:
 * its timestamps, and its lists.
 */
/** Epoch ms of one of Coolify's timestamps (ISO 8601, microseconds allowed); undefined if none. */
function answers_timeOf(value) {
    if (typeof value !== 'string' || value === '')
        return undefined;
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
}
function answers_listOf(value) {
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
async function history_findStarted(client, appUuid, mark, signal) {
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
    const created = (item) => (answers_timeOf(item.created_at) ?? -Infinity) >= since;
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
        return history_sameCommit(commit, mark.commit);
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
        history_sameCommit(item.commit, commit);
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
    return answers_listOf(answer?.deployments);
}
function isFrom(item, mark) {
    if (typeof item?.deployment_uuid !== 'string')
        return false;
    if (item.pull_request_id !== undefined && Number(item.pull_request_id) !== (mark.pr ?? 0)) {
        return false;
    }
    if (mark.commit && item.commit && item.commit !== 'HEAD' && !history_sameCommit(item.commit, mark.commit))
        return false;
    const since = mark.at - CLOCK_SLACK_MS;
    const created = timeOf(item.created_at);
    const finished = timeOf(item.finished_at);
    return (isUnderWay(item.status) ||
        (created !== undefined && created >= since) ||
        (finished !== undefined && finished >= since));
}
/** Full or abbreviated SHAs of the same commit. */
function history_sameCommit(a, b) {
    const [short, long] = a.length <= b.length ? [a, b] : [b, a];
    return short.length >= 7 && long.toLowerCase().startsWith(short.toLowerCase());
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
        throw new errors_ActionError('Input `token` is empty: pass a Coolify API token from a secret, e.g. `token: ${{ secrets.COOLIFY_TOKEN }}`.');
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
        throw new errors_ActionError('Give either `app` or `app-uuid`, not both: `app` takes uuids as well as names, so put them all there.');
    }
    const apps = appNames.length > 0 ? 'app' : 'app-uuid';
    if (appUuids.length === 0 && appNames.length === 0 && tags.length === 0) {
        throw new errors_ActionError('Give `app` (the applications to deploy, by the name on their page in Coolify), `app-uuid` or `tag`: all are empty.');
    }
    if ((appUuids.length > 0 || appNames.length > 0) && tags.length > 0) {
        throw new errors_ActionError(`Give either \`${apps}\` or \`tag\`, not both: Coolify deploys by one or the other.`);
    }
    for (const uuid of appUuids) {
        if (!UUID.test(uuid)) {
            throw new errors_ActionError(`Input \`app-uuid\`: "${uuid}" is not a uuid; copy it from the application's page in Coolify (letters, digits and dashes), or give its name in \`app\`.`);
        }
    }
    for (const tag of tags) {
        if (/[/?#&]/.test(tag)) {
            throw new errors_ActionError(`Input \`tag\`: "${tag}" is not a tag name (no /, ?, # or &).`);
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
        throw new errors_ActionError('Input `pr` works with `app` or `app-uuid` only: Coolify has no preview deploy by tag.');
    }
    if ((config.gitBranch || config.domains || config.env) && tags.length > 0) {
        throw new errors_ActionError('Inputs `git-branch`, `domains` and `env` change the applications named in `app` or `app-uuid`; they do not work with `tag`.');
    }
    if (config.deletePreview && (config.pr === undefined || tags.length > 0)) {
        throw new errors_ActionError('Input `delete-preview` needs `pr` (the pull request number) and `app` or `app-uuid` (the application whose preview to remove).');
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
        throw new errors_ActionError(`Input ${changing.map(name => `\`${name}\``).join(', ')} does not work with \`trigger: false\`, which starts and changes nothing: it follows the deployment Coolify starts by itself.`);
    }
    if (!config.wait) {
        throw new errors_ActionError('Inputs `trigger: false` and `wait: false` together would do nothing: `trigger: false` waits for the deployment Coolify starts by itself.');
    }
}
/** A review app is one application per pull request, made from one template. */
function checkReviewInputs(config, domain) {
    if (!config.reviewApp)
        return;
    if (config.pr === undefined) {
        throw new errors_ActionError('Input `review-app` needs `pr`, the pull request number: in a pull_request workflow `pr: ${{ github.event.number }}`.');
    }
    if (config.tags.length > 0 || config.appUuids.length + config.appNames.length !== 1) {
        throw new errors_ActionError('Input `review-app` needs exactly one application in `app` or `app-uuid`, the template (no `tag`).');
    }
    if (config.imageTag) {
        throw new errors_ActionError("Input `image-tag` does not work with `review-app`: the review app builds the pull request's branch.");
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
            throw new errors_ActionError(`Input \`review-domain\`: "${item.trim()}" is not an http(s) address, like https://pr-{pr}.preview.example.com.`);
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
        throw new errors_ActionError(`Input \`${named[0]}\` works with \`app\` or \`app-uuid\` only: it reads and changes the applications named there.`);
    }
    if (config.imageTag && config.commit) {
        throw new errors_ActionError('Give `image-tag` (Docker-image applications) or `commit` (git applications), not both.');
    }
    if (config.rollbackOnFailure && config.pr !== undefined) {
        throw new errors_ActionError('Input `rollback-on-failure` works for production deploys: a preview (`pr`) has no earlier version to go back to.');
    }
    if (config.commit && config.pr !== undefined) {
        throw new errors_ActionError("Input `commit` deploys production: a preview (`pr`) builds its pull request's head.");
    }
}
/** Docker's tag syntax: up to 128 letters, digits, `_`, `.` and `-`, not starting with `.` or `-`. */
function parseCommit(text) {
    const value = text.trim();
    if (!value)
        return undefined;
    if (!/^[0-9a-fA-F]{7,40}$/.test(value)) {
        throw new errors_ActionError(`Input \`commit\`: "${value}" is not a commit SHA (7 to 40 hexadecimal digits), e.g. \${{ github.sha }}.`);
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
        throw new errors_ActionError(`Input \`health-url\`: "${value}" is neither a path like /health nor an http(s) URL.`);
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
        throw new errors_ActionError(`${where} holds a control character (a line break, tab or the like): remove it.`);
    }
}
/** Tokens and header values go in HTTP headers, which carry printable ASCII only. */
function refuseUnsendable(where, value) {
    refuseControl(where, value);
    if (!HEADER_TEXT.test(value)) {
        throw new errors_ActionError(`${where} holds a character an HTTP header cannot carry (only printable ASCII): remove it.`);
    }
}
/** Accepts the instance address with or without `/api/v1` and trailing slashes. */
function parseCoolifyUrl(text) {
    const value = text.trim();
    const example = 'like https://coolify.example.com';
    if (!value)
        throw new errors_ActionError(`Input \`coolify-url\` is empty: give your Coolify instance's address, ${example}.`);
    let url;
    try {
        url = new URL(value);
    }
    catch {
        url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
        throw new errors_ActionError(`Input \`coolify-url\`: "${value}" is not an http(s) address; give the instance's address with its scheme, ${example}.`);
    }
    if (url.username || url.password) {
        throw new errors_ActionError('Input `coolify-url` must not carry a user name or password; put credentials in `token` or `headers`.');
    }
    if (url.search || url.hash) {
        throw new errors_ActionError(`Input \`coolify-url\`: remove the query or fragment, ${example}.`);
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
    throw new errors_ActionError(`Input \`${name}\` must be true or false, not "${read(name).trim()}".`);
}
function parseDurationInput(read, name, fallback) {
    const text = read(name).trim() || fallback;
    const ms = parseDuration(text);
    if (ms === undefined || ms <= 0) {
        throw new errors_ActionError(`Input \`${name}\`: "${text}" is not a duration; use seconds (90) or a number with ms, s, m or h (500ms, 15m, 1h30m).`);
    }
    if (ms > MAX_DURATION_MS) {
        throw new errors_ActionError(`Input \`${name}\`: "${text}" is more than 24h, the longest this action waits; use 24h or less.`);
    }
    return ms;
}
function parsePullRequest(text) {
    const value = text.trim();
    if (!value)
        return undefined;
    if (!/^\d+$/.test(value) || Number(value) === 0) {
        throw new errors_ActionError(`Input \`pr\`: "${value}" is not a pull request number; in a pull_request workflow use \${{ github.event.number }}.`);
    }
    return Number(value);
}
function parseImageTag(text) {
    const value = text.trim();
    if (!value)
        return undefined;
    if (!DOCKER_TAG.test(value)) {
        throw new errors_ActionError(`Input \`image-tag\`: "${value}" is not a Docker tag (letters, digits, _ . -, at most 128, not starting with . or -).`);
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
            throw new errors_ActionError(`Input \`headers\`, line ${index + 1}: write one \`Name: value\` a line, like \`CF-Access-Client-Id: \${{ secrets.CF_ID }}\`.`);
        }
        if (RESERVED_HEADERS.has(name.toLowerCase())) {
            throw new errors_ActionError(`Input \`headers\`, line ${index + 1}: ${name} is set by the action itself; remove that line.`);
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
        throw new errors_ActionError(`Input \`ca-certificate\`: "${value}" is neither a PEM certificate nor a readable file; give the PEM text or its path.`);
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
        throw new errors_ActionError(`Input \`ca-certificate\`: the file "${value}" holds no PEM certificate.`);
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
            throw new errors_ActionError(`Input \`env\`, line ${index + 1}: write one \`KEY=value\` a line.`);
        }
        const key = line.slice(0, line.indexOf('='));
        refuseControl(`Input \`env\`, line ${index + 1} (${key})`, line);
        variables.set(key, line.slice(key.length + 1));
    }
    if (variables.size === 0)
        return undefined;
    return [...variables].map(([key, value]) => ({ key, value }));
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
class logs_LogCursor {
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
        return now !== 'HEAD' && history_sameCommit(now, pin.commit);
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

;// CONCATENATED MODULE: ./src/cleanup.ts











/** The post step's time for all of it: the runner is winding the job down. */
const POST_BUDGET_MS = 20_000;
/**
 * The post step: the safety net for a main step that was killed while it deployed. From the
 * state the main step saved, it puts back every commit pin still on, and (with `cancel-on-abort`)
 * cancels in Coolify every deployment this run started that is still queued or running: those
 * saved by uuid, and, for a trigger whose answer never came, the one the application's history
 * shows it started (same pull request and commit it queued, created after it, and no other row
 * like it: then it cancels none and warns). Nothing here fails the job:
 * the run is over, so problems become warnings.
 */
async function run() {
    const state = RunState.load();
    const records = state.entries();
    if (records.length === 0)
        return;
    const say = sayThrough(host());
    let client;
    try {
        const config = readConfig(name => host().input(name), mask);
        client = connect(config, say);
        const { signal } = deadline(POST_BUDGET_MS);
        const pins = records.flatMap(([appUuid, { unpin, pinned }]) => unpin === undefined ? [] : [{ appUuid, previous: unpin, commit: pinned }]);
        const left = await restorePins(client, pins, state, signal, say);
        const done = pins.filter(pin => !left.includes(pin)).map(pin => pin.appUuid);
        if (done.length)
            say.note(`Set git_commit_sha back as it was on ${done.join(', ')}`);
        if (!config.cancelOnAbort)
            return;
        await Promise.all(records.map(([appUuid, record]) => cancelLeftRunning(client, appUuid, record, signal, say)));
    }
    catch (error) {
        say.warn(`Could not clean up after the main step: ${describeError(error)}`);
    }
    finally {
        await client?.close();
    }
}
/** Cancels what one rollout left under way. */
async function cancelLeftRunning(client, appUuid, { name = appUuid, running = [], trigger }, signal, say) {
    const uuids = [...running];
    if (trigger) {
        try {
            const created = await findCreated(client, appUuid, trigger, signal);
            if (created.uuid && !uuids.includes(created.uuid))
                uuids.push(created.uuid);
            if (created.candidates > 1) {
                // Another deployment like it was created in the same seconds: cancelling either could stop
                // someone else's.
                say.warn(`${name}: the trigger's answer never came, and ${created.candidates} deployments created after it could be the one it queued; none was cancelled: check them in Coolify.`);
            }
        }
        catch (error) {
            say.warn(`${appUuid}: could not look for a deployment started by the trigger: ${describeError(error)}`);
        }
    }
    for (const uuid of uuids)
        await stopIfRunning(client, name, uuid, signal, say);
}
async function stopIfRunning(client, name, uuid, signal, say) {
    try {
        const detail = await client.getDeployment(uuid, signal);
        if (!status_isUnderWay(detail.status))
            return;
    }
    catch (error) {
        say.warn(`${name}: could not read deployment ${uuid}: ${describeError(error)}`);
        return;
    }
    const result = await cancelDeployment(client, uuid, signal);
    if (result.cancelled) {
        say.note(`${name}: cancelled deployment ${uuid} in Coolify, left running when the main step stopped`);
    }
    else if (result.problem) {
        say.warn(`${name}: deployment ${uuid} may still be running in Coolify: ${result.problem}`);
    }
}

;// CONCATENATED MODULE: external "node:crypto"
const external_node_crypto_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:crypto");
;// CONCATENATED MODULE: external "node:os"
const external_node_os_namespaceObject = __WEBPACK_EXTERNAL_createRequire(import.meta.url)("node:os");
;// CONCATENATED MODULE: ./src/action/commands.ts
/**
 * The runner's workflow commands, written as @actions/core 3 writes them, byte for byte: inputs,
 * log lines and annotations, masks, outputs and saved state, the step's failure. The action's own
 * module so that a run starts without loading @actions/core, whose HTTP client (for OIDC tokens,
 * never asked for here) pulls in undici and more at load; the job summary, written at the end,
 * still uses @actions/core's `summary`.
 */



/** An input as the runner passes it: `INPUT_` and the name upper-cased, spaces as `_`; trimmed. */
function getInput(name) {
    return (process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] || '').trim();
}
function info(message) {
    process.stdout.write(message + external_node_os_namespaceObject.EOL);
}
function debug(message) {
    issue('debug', {}, message);
}
function notice(message, properties = {}) {
    issue('notice', annotation(properties), message);
}
function warning(message, properties = {}) {
    issue('warning', annotation(properties), message);
}
function error(message, properties = {}) {
    issue('error', annotation(properties), message);
}
/** The runner hides the value in every log line printed after this. */
function setSecret(value) {
    issue('add-mask', {}, value);
}
/** The step fails (the exit code the runner reads) with an error annotation saying why. */
function setFailed(message) {
    process.exitCode = 1;
    error(message);
}
function setOutput(name, value) {
    if (process.env.GITHUB_OUTPUT)
        appendKeyValue('GITHUB_OUTPUT', name, value);
    else {
        // A runner without the file reads the older command, on a line of its own.
        process.stdout.write(external_node_os_namespaceObject.EOL);
        issue('set-output', { name }, value);
    }
}
/** Kept for the post step, which reads it back with `getState`. */
function saveState(name, value) {
    if (process.env.GITHUB_STATE)
        appendKeyValue('GITHUB_STATE', name, value);
    else
        issue('save-state', { name }, value);
}
function getState(name) {
    return process.env[`STATE_${name}`] || '';
}
/**
 * `::name key=value,…::message`. A property object with any key, even one without a value, gives
 * the space after the name: @actions/core writes it so, and the runner reads both.
 */
function issue(name, properties, message) {
    let line = `::${name}`;
    if (Object.keys(properties).length > 0) {
        const given = Object.entries(properties).filter(([, value]) => value);
        line += ` ${given.map(([key, value]) => `${key}=${escapeProperty(asText(value))}`).join(',')}`;
    }
    process.stdout.write(`${line}::${escapeData(message)}${external_node_os_namespaceObject.EOL}`);
}
/** A line number as JSON writes it, as @actions/core does. */
function asText(value) {
    return typeof value === 'string' ? value : JSON.stringify(value);
}
/** The runner's names for an annotation's properties, in @actions/core's order. */
function annotation(properties) {
    if (Object.keys(properties).length === 0)
        return {};
    return {
        title: properties.title,
        file: properties.file,
        line: properties.startLine,
        endLine: properties.endLine,
        col: properties.startColumn,
        endColumn: properties.endColumn
    };
}
/** A message: the runner would read `%`, CR and LF as escapes or as the command's end. */
function escapeData(text) {
    return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
/** A property value: also `:`, which ends the properties, and `,`, which separates them. */
function escapeProperty(text) {
    return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
/**
 * `name<<DELIMITER`, the value, `DELIMITER`, appended to the file the runner names in `variable`.
 * The delimiter is random, so that no value can end the block early and set something else; one
 * that contains it anyway is refused.
 */
function appendKeyValue(variable, name, value) {
    const file = process.env[variable];
    if (!(0,external_node_fs_namespaceObject.existsSync)(file)) {
        throw new Error(`${variable} names ${file}, which does not exist: the runner creates it.`);
    }
    const delimiter = `ghadelimiter_${(0,external_node_crypto_namespaceObject.randomUUID)()}`;
    if (name.includes(delimiter) || value.includes(delimiter)) {
        throw new Error(`${variable}: "${name}" contains the random delimiter ${delimiter}.`);
    }
    (0,external_node_fs_namespaceObject.appendFileSync)(file, `${name}<<${delimiter}${external_node_os_namespaceObject.EOL}${value}${external_node_os_namespaceObject.EOL}${delimiter}${external_node_os_namespaceObject.EOL}`, 'utf8');
}

;// CONCATENATED MODULE: ./src/action/host.ts


/**
 * `##[` first on a line, after blanks or colour codes: the runner's log view reads that as markup
 * (`##[group]`, `##[error]`, …) even between stop-commands, which only stop `::` commands.
 */
// eslint-disable-next-line no-control-regex
const MARKUP = /^((?:\s|\u001b\[[0-9;]*m)*##)\[/;
const ZERO_WIDTH_SPACE = '\u200b';
/** The action on GitHub's runner (and Forgejo's and Gitea's): the runner's workflow commands. */
function actionHost() {
    return {
        input: name => getInput(name),
        info: message => info(message),
        notice: message => notice(message),
        warning: message => warning(message),
        error: (message, title) => error(message, title === undefined ? {} : { title }),
        debug: message => debug(message),
        mask: value => setSecret(value),
        log: githubLog(),
        cancelled: () => 'The workflow run was cancelled',
        setOutput: (name, value) => setOutput(name, value),
        saveState: (key, value) => saveState(key, value),
        getState: key => getState(key)
    };
}
/**
 * Log groups in workflow commands. Text from outside cannot issue commands: it is wrapped in
 * `stop-commands` with a token nobody can guess, and a line that would read as log markup gets a
 * zero-width space between `##` and `[`, so that it reads the same but is printed as text.
 */
function githubLog(write = text => void process.stdout.write(text)) {
    return {
        write,
        // The title is a command's message: `%` is escaped, so that `%0A` in a name stays text.
        startGroup: title => `::group::${escapeData(title)}\n`,
        endGroup: () => '::endgroup::\n',
        verbatim: lines => {
            const token = (0,external_node_crypto_namespaceObject.randomBytes)(12).toString('hex');
            return `::stop-commands::${token}\n${lines.map(line => `${inert(line)}\n`).join('')}::${token}::\n`;
        },
        // eslint-disable-next-line no-control-regex
        oneLine: text => inert(text.replace(/[\u0000-\u001f\u007f]+/g, ' '))
    };
}
function inert(line) {
    return line.includes('##[') ? line.replace(MARKUP, `$1${ZERO_WIDTH_SPACE}[`) : line;
}

;// CONCATENATED MODULE: ./src/action/cleanup.ts



/** The action's post step: undoes what a killed main step left, from the state it saved. */
async function cleanup_run() {
    setHost(actionHost());
    await run();
}


/***/ }),

/***/ 718:
/***/ ((module, __unused_webpack___webpack_exports__, __nccwpck_require__) => {

__nccwpck_require__.a(module, async (__webpack_handle_async_dependencies__, __webpack_async_result__) => { try {
/* harmony import */ var _cleanup_js__WEBPACK_IMPORTED_MODULE_0__ = __nccwpck_require__(10);

await (0,_cleanup_js__WEBPACK_IMPORTED_MODULE_0__/* .run */ .e)();

__webpack_async_result__();
} catch(e) { __webpack_async_result__(e); } }, 1);

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
/******/ var __webpack_exports__ = __nccwpck_require__(718);
/******/ __webpack_exports__ = await __webpack_exports__;
/******/ 
