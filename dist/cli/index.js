#!/usr/bin/env node
const __nodeBuiltin = id => process.getBuiltinModule(id) ?? (() => { throw Object.assign(new Error(`No such built-in module: ${id}`), { code: 'ERR_UNKNOWN_BUILTIN_MODULE' }) })();
/******/ var __webpack_modules__ = ({

/***/ 4043:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const assert = __nccwpck_require__(4589)
const { AsyncResource } = __nccwpck_require__(6698)
const { Readable } = __nccwpck_require__(9927)
const { InvalidArgumentError, RequestAbortedError } = __nccwpck_require__(8707)
const util = __nccwpck_require__(3440)

function noop () {}

class RequestHandler extends AsyncResource {
  constructor (opts, callback) {
    if (!opts || typeof opts !== 'object') {
      throw new InvalidArgumentError('invalid opts')
    }

    const { signal, method, opaque, body, onInfo, responseHeaders, highWaterMark } = opts

    try {
      if (typeof callback !== 'function') {
        throw new InvalidArgumentError('invalid callback')
      }

      if (highWaterMark != null && (!Number.isFinite(highWaterMark) || highWaterMark < 0)) {
        throw new InvalidArgumentError('invalid highWaterMark')
      }

      if (signal && typeof signal.on !== 'function' && typeof signal.addEventListener !== 'function') {
        throw new InvalidArgumentError('signal must be an EventEmitter or EventTarget')
      }

      if (method === 'CONNECT') {
        throw new InvalidArgumentError('invalid method')
      }

      if (onInfo && typeof onInfo !== 'function') {
        throw new InvalidArgumentError('invalid onInfo callback')
      }

      super('UNDICI_REQUEST')
    } catch (err) {
      if (util.isStream(body)) {
        util.destroy(body.on('error', noop), err)
      }
      throw err
    }

    this.method = method
    this.responseHeaders = responseHeaders || null
    this.opaque = opaque || null
    this.callback = callback
    this.res = null
    this.abort = null
    this.body = body
    this.trailers = {}
    this.context = null
    this.onInfo = onInfo || null
    this.highWaterMark = highWaterMark
    this.reason = null
    this.removeAbortListener = null

    if (signal?.aborted) {
      this.reason = signal.reason ?? new RequestAbortedError()
    } else if (signal) {
      this.removeAbortListener = util.addAbortListener(signal, () => {
        this.reason = signal.reason ?? new RequestAbortedError()
        if (this.res) {
          util.destroy(this.res.on('error', noop), this.reason)
        } else if (this.abort) {
          this.abort(this.reason)
        }
      })
    }
  }

  onConnect (abort, context) {
    if (this.reason) {
      abort(this.reason)
      return
    }

    assert(this.callback)

    this.abort = abort
    this.context = context
  }

  onHeaders (statusCode, rawHeaders, resume, statusMessage) {
    const { callback, opaque, abort, context, responseHeaders, highWaterMark } = this

    const headers = responseHeaders === 'raw' ? util.parseRawHeaders(rawHeaders) : util.parseHeaders(rawHeaders)

    if (statusCode < 200) {
      if (this.onInfo) {
        this.onInfo({ statusCode, headers })
      }
      return
    }

    const parsedHeaders = responseHeaders === 'raw' ? util.parseHeaders(rawHeaders) : headers
    const contentType = parsedHeaders['content-type']
    const contentLength = parsedHeaders['content-length']
    const res = new Readable({
      resume,
      abort,
      contentType,
      contentLength: this.method !== 'HEAD' && contentLength
        ? Number(contentLength)
        : null,
      highWaterMark
    })

    if (this.removeAbortListener) {
      res.on('close', this.removeAbortListener)
      this.removeAbortListener = null
    }

    this.callback = null
    this.res = res
    if (callback !== null) {
      try {
        this.runInAsyncScope(callback, null, null, {
          statusCode,
          statusText: statusMessage,
          headers,
          trailers: this.trailers,
          opaque,
          body: res,
          context
        })
      } catch (err) {
        // If the callback throws synchronously, we need to handle it
        // Remove reference to res to allow res being garbage collected
        this.res = null

        // Destroy the response stream
        util.destroy(res.on('error', noop), err)

        // Use queueMicrotask to re-throw the error so it reaches uncaughtException
        queueMicrotask(() => {
          throw err
        })
      }
    }
  }

  onData (chunk) {
    return this.res.push(chunk)
  }

  onComplete (trailers) {
    util.parseHeaders(trailers, this.trailers)
    this.res.push(null)
  }

  onError (err) {
    const { res, callback, body, opaque } = this

    if (callback) {
      // TODO: Does this need queueMicrotask?
      this.callback = null
      queueMicrotask(() => {
        this.runInAsyncScope(callback, null, err, { opaque })
      })
    }

    if (res) {
      this.res = null
      // Ensure all queued handlers are invoked before destroying res.
      queueMicrotask(() => {
        util.destroy(res.on('error', noop), err)
      })
    }

    if (body) {
      this.body = null

      if (util.isStream(body)) {
        body.on('error', noop)
        util.destroy(body, err)
      }
    }

    if (this.removeAbortListener) {
      this.removeAbortListener()
      this.removeAbortListener = null
    }
  }
}

function request (opts, callback) {
  if (callback === undefined) {
    return new Promise((resolve, reject) => {
      request.call(this, opts, (err, data) => {
        return err ? reject(err) : resolve(data)
      })
    })
  }

  try {
    const handler = new RequestHandler(opts, callback)

    this.dispatch(opts, handler)
  } catch (err) {
    if (typeof callback !== 'function') {
      throw err
    }
    const opaque = opts?.opaque
    queueMicrotask(() => callback(err, { opaque }))
  }
}

module.exports = request
module.exports.RequestHandler = RequestHandler


/***/ }),

/***/ 9927:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const assert = __nccwpck_require__(4589)
const { Readable } = __nccwpck_require__(7075)
const { RequestAbortedError, NotSupportedError, InvalidArgumentError, AbortError } = __nccwpck_require__(8707)
const util = __nccwpck_require__(3440)
const { ReadableStreamFrom } = __nccwpck_require__(3440)

const kConsume = Symbol('kConsume')
const kReading = Symbol('kReading')
const kBody = Symbol('kBody')
const kAbort = Symbol('kAbort')
const kContentType = Symbol('kContentType')
const kContentLength = Symbol('kContentLength')
const kUsed = Symbol('kUsed')
const kBytesRead = Symbol('kBytesRead')

const noop = () => {}

/**
 * @class
 * @extends {Readable}
 * @see https://fetch.spec.whatwg.org/#body
 */
class BodyReadable extends Readable {
  /**
   * @param {object} opts
   * @param {(this: Readable, size: number) => void} opts.resume
   * @param {() => (void | null)} opts.abort
   * @param {string} [opts.contentType = '']
   * @param {number} [opts.contentLength]
   * @param {number} [opts.highWaterMark = 64 * 1024]
   */
  constructor ({
    resume,
    abort,
    contentType = '',
    contentLength,
    highWaterMark = 64 * 1024 // Same as nodejs fs streams.
  }) {
    super({
      autoDestroy: true,
      read: resume,
      highWaterMark
    })

    this._readableState.dataEmitted = false

    this[kAbort] = abort

    /** @type {Consume | null} */
    this[kConsume] = null

    /** @type {number} */
    this[kBytesRead] = 0

    /** @type {ReadableStream|null} */
    this[kBody] = null

    /** @type {boolean} */
    this[kUsed] = false

    /** @type {string} */
    this[kContentType] = contentType

    /** @type {number|null} */
    this[kContentLength] = Number.isFinite(contentLength) ? contentLength : null

    /**
     * Is stream being consumed through Readable API?
     * This is an optimization so that we avoid checking
     * for 'data' and 'readable' listeners in the hot path
     * inside push().
     *
     * @type {boolean}
     */
    this[kReading] = false
  }

  /**
   * @param {Error|null} err
   * @param {(error:(Error|null)) => void} callback
   * @returns {void}
   */
  _destroy (err, callback) {
    if (!err && !this._readableState.endEmitted) {
      err = new RequestAbortedError()
    }

    if (err) {
      this[kAbort]()
    }

    // Workaround for Node "bug". If the stream is destroyed in same
    // tick as it is created, then a user who is waiting for a
    // promise (i.e micro tick) for installing an 'error' listener will
    // never get a chance and will always encounter an unhandled exception.
    if (!this[kUsed]) {
      setImmediate(callback, err)
    } else {
      callback(err)
    }
  }

  /**
   * @param {string|symbol} event
   * @param {(...args: any[]) => void} listener
   * @returns {this}
   */
  on (event, listener) {
    if (event === 'data' || event === 'readable') {
      this[kReading] = true
      this[kUsed] = true
    }
    return super.on(event, listener)
  }

  /**
   * @param {string|symbol} event
   * @param {(...args: any[]) => void} listener
   * @returns {this}
   */
  addListener (event, listener) {
    return this.on(event, listener)
  }

  /**
   * @param {string|symbol} event
   * @param {(...args: any[]) => void} listener
   * @returns {this}
   */
  off (event, listener) {
    const ret = super.off(event, listener)
    if (event === 'data' || event === 'readable') {
      this[kReading] = (
        this.listenerCount('data') > 0 ||
        this.listenerCount('readable') > 0
      )
    }
    return ret
  }

  /**
   * @param {string|symbol} event
   * @param {(...args: any[]) => void} listener
   * @returns {this}
   */
  removeListener (event, listener) {
    return this.off(event, listener)
  }

  /**
   * @param {Buffer|null} chunk
   * @returns {boolean}
   */
  push (chunk) {
    if (chunk) {
      this[kBytesRead] += chunk.length
      if (this[kConsume]) {
        consumePush(this[kConsume], chunk)
        return this[kReading] ? super.push(chunk) : true
      }
    }

    return super.push(chunk)
  }

  /**
   * Consumes and returns the body as a string.
   *
   * @see https://fetch.spec.whatwg.org/#dom-body-text
   * @returns {Promise<string>}
   */
  text () {
    return consume(this, 'text')
  }

  /**
   * Consumes and returns the body as a JavaScript Object.
   *
   * @see https://fetch.spec.whatwg.org/#dom-body-json
   * @returns {Promise<unknown>}
   */
  json () {
    return consume(this, 'json')
  }

  /**
   * Consumes and returns the body as a Blob
   *
   * @see https://fetch.spec.whatwg.org/#dom-body-blob
   * @returns {Promise<Blob>}
   */
  blob () {
    return consume(this, 'blob')
  }

  /**
   * Consumes and returns the body as an Uint8Array.
   *
   * @see https://fetch.spec.whatwg.org/#dom-body-bytes
   * @returns {Promise<Uint8Array>}
   */
  bytes () {
    return consume(this, 'bytes')
  }

  /**
   * Consumes and returns the body as an ArrayBuffer.
   *
   * @see https://fetch.spec.whatwg.org/#dom-body-arraybuffer
   * @returns {Promise<ArrayBuffer>}
   */
  arrayBuffer () {
    return consume(this, 'arrayBuffer')
  }

  /**
   * Not implemented
   *
   * @see https://fetch.spec.whatwg.org/#dom-body-formdata
   * @throws {NotSupportedError}
   */
  async formData () {
    // TODO: Implement.
    throw new NotSupportedError()
  }

  /**
   * Returns true if the body is not null and the body has been consumed.
   * Otherwise, returns false.
   *
   * @see https://fetch.spec.whatwg.org/#dom-body-bodyused
   * @readonly
   * @returns {boolean}
   */
  get bodyUsed () {
    return util.isDisturbed(this)
  }

  /**
   * @see https://fetch.spec.whatwg.org/#dom-body-body
   * @readonly
   * @returns {ReadableStream}
   */
  get body () {
    if (!this[kBody]) {
      this[kBody] = ReadableStreamFrom(this)
      if (this[kConsume]) {
        // TODO: Is this the best way to force a lock?
        this[kBody].getReader() // Ensure stream is locked.
        assert(this[kBody].locked)
      }
    }
    return this[kBody]
  }

  /**
   * Dumps the response body by reading `limit` number of bytes.
   * @param {object} opts
   * @param {number} [opts.limit = 131072] Number of bytes to read.
   * @param {AbortSignal} [opts.signal] An AbortSignal to cancel the dump.
   * @returns {Promise<null>}
   */
  dump (opts) {
    const signal = opts?.signal

    if (signal != null && (typeof signal !== 'object' || !('aborted' in signal))) {
      return Promise.reject(new InvalidArgumentError('signal must be an AbortSignal'))
    }

    const limit = opts?.limit && Number.isFinite(opts.limit)
      ? opts.limit
      : 128 * 1024

    if (signal?.aborted) {
      return Promise.reject(signal.reason ?? new AbortError())
    }

    if (this._readableState.closeEmitted) {
      return Promise.resolve(null)
    }

    return new Promise((resolve, reject) => {
      if (
        (this[kContentLength] && (this[kContentLength] > limit)) ||
        this[kBytesRead] > limit
      ) {
        this.destroy(new AbortError())
      }

      if (signal) {
        const onAbort = () => {
          this.destroy(signal.reason ?? new AbortError())
        }
        signal.addEventListener('abort', onAbort)
        this
          .on('close', function () {
            signal.removeEventListener('abort', onAbort)
            if (signal.aborted) {
              reject(signal.reason ?? new AbortError())
            } else {
              resolve(null)
            }
          })
      } else {
        this.on('close', resolve)
      }

      this
        .on('error', noop)
        .on('data', () => {
          if (this[kBytesRead] > limit) {
            this.destroy()
          }
        })
        .resume()
    })
  }

  /**
   * @param {BufferEncoding} encoding
   * @returns {this}
   */
  setEncoding (encoding) {
    if (Buffer.isEncoding(encoding)) {
      this._readableState.encoding = encoding
    }
    return this
  }
}

/**
 * @see https://streams.spec.whatwg.org/#readablestream-locked
 * @param {BodyReadable} bodyReadable
 * @returns {boolean}
 */
function isLocked (bodyReadable) {
  // Consume is an implicit lock.
  return bodyReadable[kBody]?.locked === true || bodyReadable[kConsume] !== null
}

/**
 * @see https://fetch.spec.whatwg.org/#body-unusable
 * @param {BodyReadable} bodyReadable
 * @returns {boolean}
 */
function isUnusable (bodyReadable) {
  return util.isDisturbed(bodyReadable) || isLocked(bodyReadable)
}

/**
 * @typedef {'text' | 'json' | 'blob' | 'bytes' | 'arrayBuffer'} ConsumeType
 */

/**
 * @template {ConsumeType} T
 * @typedef {T extends 'text' ? string :
 *           T extends 'json' ? unknown :
 *           T extends 'blob' ? Blob :
 *           T extends 'arrayBuffer' ? ArrayBuffer :
 *           T extends 'bytes' ? Uint8Array :
 *           never
 * } ConsumeReturnType
 */
/**
 * @typedef {object} Consume
 * @property {ConsumeType} type
 * @property {BodyReadable} stream
 * @property {((value?: any) => void)} resolve
 * @property {((err: Error) => void)} reject
 * @property {number} length
 * @property {Buffer[]} body
 */

/**
 * @template {ConsumeType} T
 * @param {BodyReadable} stream
 * @param {T} type
 * @returns {Promise<ConsumeReturnType<T>>}
 */
function consume (stream, type) {
  assert(!stream[kConsume])

  return new Promise((resolve, reject) => {
    if (isUnusable(stream)) {
      const rState = stream._readableState
      if (rState.destroyed && rState.closeEmitted === false) {
        stream
          .on('error', reject)
          .on('close', () => {
            reject(new TypeError('unusable'))
          })
      } else {
        reject(rState.errored ?? new TypeError('unusable'))
      }
    } else {
      queueMicrotask(() => {
        stream[kConsume] = {
          type,
          stream,
          resolve,
          reject,
          length: 0,
          body: []
        }

        stream
          .on('error', function (err) {
            consumeFinish(this[kConsume], err)
          })
          .on('close', function () {
            if (this[kConsume].body !== null) {
              consumeFinish(this[kConsume], new RequestAbortedError())
            }
          })

        consumeStart(stream[kConsume])
      })
    }
  })
}

/**
 * @param {Consume} consume
 * @returns {void}
 */
function consumeStart (consume) {
  if (consume.body === null) {
    return
  }

  const { _readableState: state } = consume.stream

  if (state.bufferIndex) {
    const start = state.bufferIndex
    const end = state.buffer.length
    for (let n = start; n < end; n++) {
      consumePush(consume, state.buffer[n])
    }
  } else {
    for (const chunk of state.buffer) {
      consumePush(consume, chunk)
    }
  }

  if (state.endEmitted) {
    consumeEnd(this[kConsume], this._readableState.encoding)
  } else {
    consume.stream.on('end', function () {
      consumeEnd(this[kConsume], this._readableState.encoding)
    })
  }

  consume.stream.resume()

  while (consume.stream.read() != null) {
    // Loop
  }
}

/**
 * @param {Buffer[]} chunks
 * @param {number} length
 * @param {BufferEncoding} [encoding='utf8']
 * @returns {string}
 */
function chunksDecode (chunks, length, encoding) {
  if (chunks.length === 0 || length === 0) {
    return ''
  }
  const buffer = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length)
  const bufferLength = buffer.length

  // Skip BOM.
  const start =
    bufferLength > 2 &&
    buffer[0] === 0xef &&
    buffer[1] === 0xbb &&
    buffer[2] === 0xbf
      ? 3
      : 0
  if (!encoding || encoding === 'utf8' || encoding === 'utf-8') {
    return buffer.utf8Slice(start, bufferLength)
  } else {
    return buffer.subarray(start, bufferLength).toString(encoding)
  }
}

/**
 * @param {Buffer[]} chunks
 * @param {number} length
 * @returns {Uint8Array}
 */
function chunksConcat (chunks, length) {
  if (chunks.length === 0 || length === 0) {
    return new Uint8Array(0)
  }
  if (chunks.length === 1) {
    // fast-path
    return new Uint8Array(chunks[0])
  }
  const buffer = new Uint8Array(Buffer.allocUnsafeSlow(length).buffer)

  let offset = 0
  for (let i = 0; i < chunks.length; ++i) {
    const chunk = chunks[i]
    buffer.set(chunk, offset)
    offset += chunk.length
  }

  return buffer
}

/**
 * @param {Consume} consume
 * @param {BufferEncoding} encoding
 * @returns {void}
 */
function consumeEnd (consume, encoding) {
  const { type, body, resolve, stream, length } = consume

  try {
    if (type === 'text') {
      resolve(chunksDecode(body, length, encoding))
    } else if (type === 'json') {
      resolve(JSON.parse(chunksDecode(body, length, encoding)))
    } else if (type === 'arrayBuffer') {
      resolve(chunksConcat(body, length).buffer)
    } else if (type === 'blob') {
      resolve(new Blob(body, { type: stream[kContentType] }))
    } else if (type === 'bytes') {
      resolve(chunksConcat(body, length))
    }

    consumeFinish(consume)
  } catch (err) {
    stream.destroy(err)
  }
}

/**
 * @param {Consume} consume
 * @param {Buffer} chunk
 * @returns {void}
 */
function consumePush (consume, chunk) {
  consume.length += chunk.length
  consume.body.push(chunk)
}

/**
 * @param {Consume} consume
 * @param {Error} [err]
 * @returns {void}
 */
function consumeFinish (consume, err) {
  if (consume.body === null) {
    return
  }

  if (err) {
    consume.reject(err)
  } else {
    consume.resolve()
  }

  // Reset the consume object to allow for garbage collection.
  consume.type = null
  consume.stream = null
  consume.resolve = null
  consume.reject = null
  consume.length = 0
  consume.body = null
}

module.exports = {
  Readable: BodyReadable,
  chunksDecode
}


/***/ }),

/***/ 9136:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const net = __nccwpck_require__(7030)
const assert = __nccwpck_require__(4589)
const util = __nccwpck_require__(3440)
const { InvalidArgumentError } = __nccwpck_require__(8707)

let tls // include tls conditionally since it is not always available

// TODO: session re-use does not wait for the first
// connection to resolve the session and might therefore
// resolve the same servername multiple times even when
// re-use is enabled.

const SessionCache = class WeakSessionCache {
  constructor (maxCachedSessions) {
    this._maxCachedSessions = maxCachedSessions
    this._sessionCache = new Map()
    this._sessionRegistry = new FinalizationRegistry((key) => {
      if (this._sessionCache.size < this._maxCachedSessions) {
        return
      }

      const ref = this._sessionCache.get(key)
      if (ref !== undefined && ref.deref() === undefined) {
        this._sessionCache.delete(key)
      }
    })
  }

  get (sessionKey) {
    const ref = this._sessionCache.get(sessionKey)
    return ref ? ref.deref() : null
  }

  set (sessionKey, session) {
    if (this._maxCachedSessions === 0) {
      return
    }

    if (this._sessionCache.has(sessionKey)) {
      this._sessionCache.delete(sessionKey)
    } else if (this._sessionCache.size >= this._maxCachedSessions) {
      // Make room for the new session: prefer an entry whose session has
      // already been collected, otherwise evict the oldest one.
      let evicted = false
      for (const [key, ref] of this._sessionCache) {
        if (ref.deref() === undefined) {
          this._sessionCache.delete(key)
          evicted = true
          break
        }
      }

      if (!evicted) {
        const oldest = this._sessionCache.keys().next()
        if (!oldest.done) {
          this._sessionCache.delete(oldest.value)
        }
      }
    }

    this._sessionCache.set(sessionKey, new WeakRef(session))
    this._sessionRegistry.register(session, sessionKey)
  }
}

function buildConnector ({ allowH2, useH2c, maxCachedSessions, socketPath, timeout, session: customSession, ...opts }) {
  if (maxCachedSessions != null && (!Number.isInteger(maxCachedSessions) || maxCachedSessions < 0)) {
    throw new InvalidArgumentError('maxCachedSessions must be a positive integer or zero')
  }

  const options = { path: socketPath, ...opts }
  const sessionCache = new SessionCache(maxCachedSessions == null ? 100 : maxCachedSessions)
  timeout = timeout == null ? 10e3 : timeout
  allowH2 = allowH2 != null ? allowH2 : false
  return function connect ({ hostname, host, protocol, port, servername, localAddress, httpSocket }, callback) {
    let socket
    if (protocol === 'https:') {
      if (!tls) {
        tls = __nccwpck_require__(1692)
      }
      servername = servername || options.servername || util.getServerName(host) || null

      const sessionKey = servername || hostname
      assert(sessionKey)

      const session = customSession || sessionCache.get(sessionKey) || null

      port = port || 443

      socket = tls.connect({
        highWaterMark: 16384, // TLS in node can't have bigger HWM anyway...
        ...options,
        servername,
        session,
        localAddress,
        ALPNProtocols: allowH2 ? ['http/1.1', 'h2'] : ['http/1.1'],
        socket: httpSocket, // upgrade socket connection
        port,
        host: hostname
      })

      socket
        .on('session', function (session) {
          // TODO (fix): Can a session become invalid once established? Don't think so?
          sessionCache.set(sessionKey, session)
        })
    } else {
      assert(!httpSocket, 'httpSocket can only be sent on TLS update')

      port = port || 80

      socket = net.connect({
        highWaterMark: 64 * 1024, // Same as nodejs fs streams.
        ...options,
        localAddress,
        port,
        host: hostname
      })
      if (useH2c === true) {
        socket.alpnProtocol = 'h2'
      }
    }

    // Set TCP keep alive options on the socket here instead of in connect() for the case of assigning the socket
    if (options.keepAlive == null || options.keepAlive) {
      const keepAliveInitialDelay = options.keepAliveInitialDelay === undefined ? 60e3 : options.keepAliveInitialDelay
      socket.setKeepAlive(true, keepAliveInitialDelay)
    }

    const clearConnectTimeout = util.setupConnectTimeout(new WeakRef(socket), { timeout, hostname, port })

    socket
      .setNoDelay(true)
      .once(protocol === 'https:' ? 'secureConnect' : 'connect', function () {
        queueMicrotask(clearConnectTimeout)

        if (callback) {
          const cb = callback
          callback = null
          cb(null, this)
        }
      })
      .on('error', function (err) {
        queueMicrotask(clearConnectTimeout)

        if (callback) {
          const cb = callback
          callback = null
          cb(err)
        }
      })

    return socket
  }
}

module.exports = buildConnector


/***/ }),

/***/ 735:
/***/ ((module) => {



/**
 * @see https://developer.mozilla.org/docs/Web/HTTP/Headers
 */
const wellknownHeaderNames = /** @type {const} */ ([
  'Accept',
  'Accept-Encoding',
  'Accept-Language',
  'Accept-Ranges',
  'Access-Control-Allow-Credentials',
  'Access-Control-Allow-Headers',
  'Access-Control-Allow-Methods',
  'Access-Control-Allow-Origin',
  'Access-Control-Expose-Headers',
  'Access-Control-Max-Age',
  'Access-Control-Request-Headers',
  'Access-Control-Request-Method',
  'Age',
  'Allow',
  'Alt-Svc',
  'Alt-Used',
  'Authorization',
  'Cache-Control',
  'Clear-Site-Data',
  'Connection',
  'Content-Disposition',
  'Content-Encoding',
  'Content-Language',
  'Content-Length',
  'Content-Location',
  'Content-Range',
  'Content-Security-Policy',
  'Content-Security-Policy-Report-Only',
  'Content-Type',
  'Cookie',
  'Cross-Origin-Embedder-Policy',
  'Cross-Origin-Opener-Policy',
  'Cross-Origin-Resource-Policy',
  'Date',
  'Device-Memory',
  'Downlink',
  'ECT',
  'ETag',
  'Expect',
  'Expect-CT',
  'Expires',
  'Forwarded',
  'From',
  'Host',
  'If-Match',
  'If-Modified-Since',
  'If-None-Match',
  'If-Range',
  'If-Unmodified-Since',
  'Keep-Alive',
  'Last-Modified',
  'Link',
  'Location',
  'Max-Forwards',
  'Origin',
  'Permissions-Policy',
  'Pragma',
  'Proxy-Authenticate',
  'Proxy-Authorization',
  'RTT',
  'Range',
  'Referer',
  'Referrer-Policy',
  'Refresh',
  'Retry-After',
  'Sec-WebSocket-Accept',
  'Sec-WebSocket-Extensions',
  'Sec-WebSocket-Key',
  'Sec-WebSocket-Protocol',
  'Sec-WebSocket-Version',
  'Server',
  'Server-Timing',
  'Service-Worker-Allowed',
  'Service-Worker-Navigation-Preload',
  'Set-Cookie',
  'SourceMap',
  'Strict-Transport-Security',
  'Supports-Loading-Mode',
  'TE',
  'Timing-Allow-Origin',
  'Trailer',
  'Transfer-Encoding',
  'Upgrade',
  'Upgrade-Insecure-Requests',
  'User-Agent',
  'Vary',
  'Via',
  'WWW-Authenticate',
  'X-Content-Type-Options',
  'X-DNS-Prefetch-Control',
  'X-Frame-Options',
  'X-Permitted-Cross-Domain-Policies',
  'X-Powered-By',
  'X-Requested-With',
  'X-XSS-Protection'
])

/** @type {Record<typeof wellknownHeaderNames[number]|Lowercase<typeof wellknownHeaderNames[number]>, string>} */
const headerNameLowerCasedRecord = {}

// Note: object prototypes should not be able to be referenced. e.g. `Object#hasOwnProperty`.
Object.setPrototypeOf(headerNameLowerCasedRecord, null)

/**
 * @type {Record<Lowercase<typeof wellknownHeaderNames[number]>, Buffer>}
 */
const wellknownHeaderNameBuffers = {}

// Note: object prototypes should not be able to be referenced. e.g. `Object#hasOwnProperty`.
Object.setPrototypeOf(wellknownHeaderNameBuffers, null)

/**
 * @param {string} header Lowercased header
 * @returns {Buffer}
 */
function getHeaderNameAsBuffer (header) {
  let buffer = wellknownHeaderNameBuffers[header]

  if (buffer === undefined) {
    buffer = Buffer.from(header)
  }

  return buffer
}

for (let i = 0; i < wellknownHeaderNames.length; ++i) {
  const key = wellknownHeaderNames[i]
  const lowerCasedKey = key.toLowerCase()
  headerNameLowerCasedRecord[key] = headerNameLowerCasedRecord[lowerCasedKey] =
    lowerCasedKey
}

module.exports = {
  wellknownHeaderNames,
  headerNameLowerCasedRecord,
  getHeaderNameAsBuffer
}


/***/ }),

/***/ 2414:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const diagnosticsChannel = __nccwpck_require__(3053)
const util = __nccwpck_require__(7975)

const undiciDebugLog = util.debuglog('undici')
const fetchDebuglog = util.debuglog('fetch')
const websocketDebuglog = util.debuglog('websocket')

const channels = {
  // Client
  beforeConnect: diagnosticsChannel.channel('undici:client:beforeConnect'),
  connected: diagnosticsChannel.channel('undici:client:connected'),
  connectError: diagnosticsChannel.channel('undici:client:connectError'),
  sendHeaders: diagnosticsChannel.channel('undici:client:sendHeaders'),
  // Request
  create: diagnosticsChannel.channel('undici:request:create'),
  bodySent: diagnosticsChannel.channel('undici:request:bodySent'),
  bodyChunkSent: diagnosticsChannel.channel('undici:request:bodyChunkSent'),
  bodyChunkReceived: diagnosticsChannel.channel('undici:request:bodyChunkReceived'),
  headers: diagnosticsChannel.channel('undici:request:headers'),
  trailers: diagnosticsChannel.channel('undici:request:trailers'),
  error: diagnosticsChannel.channel('undici:request:error'),
  // WebSocket
  open: diagnosticsChannel.channel('undici:websocket:open'),
  close: diagnosticsChannel.channel('undici:websocket:close'),
  socketError: diagnosticsChannel.channel('undici:websocket:socket_error'),
  ping: diagnosticsChannel.channel('undici:websocket:ping'),
  pong: diagnosticsChannel.channel('undici:websocket:pong'),
  // ProxyAgent
  proxyConnected: diagnosticsChannel.channel('undici:proxy:connected')
}

let isTrackingClientEvents = false

function trackClientEvents (debugLog = undiciDebugLog) {
  if (isTrackingClientEvents) {
    return
  }

  // Check if any of the channels already have subscribers to prevent duplicate subscriptions
  // This can happen when both Node.js built-in undici and undici as a dependency are present
  if (channels.beforeConnect.hasSubscribers || channels.connected.hasSubscribers ||
      channels.connectError.hasSubscribers || channels.sendHeaders.hasSubscribers) {
    isTrackingClientEvents = true
    return
  }

  isTrackingClientEvents = true

  diagnosticsChannel.subscribe('undici:client:beforeConnect',
    evt => {
      const {
        connectParams: { version, protocol, port, host }
      } = evt
      debugLog(
        'connecting to %s%s using %s%s',
        host,
        port ? `:${port}` : '',
        protocol,
        version
      )
    })

  diagnosticsChannel.subscribe('undici:client:connected',
    evt => {
      const {
        connectParams: { version, protocol, port, host }
      } = evt
      debugLog(
        'connected to %s%s using %s%s',
        host,
        port ? `:${port}` : '',
        protocol,
        version
      )
    })

  diagnosticsChannel.subscribe('undici:client:connectError',
    evt => {
      const {
        connectParams: { version, protocol, port, host },
        error
      } = evt
      debugLog(
        'connection to %s%s using %s%s errored - %s',
        host,
        port ? `:${port}` : '',
        protocol,
        version,
        error.message
      )
    })

  diagnosticsChannel.subscribe('undici:client:sendHeaders',
    evt => {
      const {
        request: { method, path, origin }
      } = evt
      debugLog('sending request to %s %s%s', method, origin, path)
    })
}

let isTrackingRequestEvents = false

function trackRequestEvents (debugLog = undiciDebugLog) {
  if (isTrackingRequestEvents) {
    return
  }

  // Check if any of the channels already have subscribers to prevent duplicate subscriptions
  // This can happen when both Node.js built-in undici and undici as a dependency are present
  if (channels.headers.hasSubscribers || channels.trailers.hasSubscribers ||
      channels.error.hasSubscribers) {
    isTrackingRequestEvents = true
    return
  }

  isTrackingRequestEvents = true

  diagnosticsChannel.subscribe('undici:request:headers',
    evt => {
      const {
        request: { method, path, origin },
        response: { statusCode }
      } = evt
      debugLog(
        'received response to %s %s%s - HTTP %d',
        method,
        origin,
        path,
        statusCode
      )
    })

  diagnosticsChannel.subscribe('undici:request:trailers',
    evt => {
      const {
        request: { method, path, origin }
      } = evt
      debugLog('trailers received from %s %s%s', method, origin, path)
    })

  diagnosticsChannel.subscribe('undici:request:error',
    evt => {
      const {
        request: { method, path, origin },
        error
      } = evt
      debugLog(
        'request to %s %s%s errored - %s',
        method,
        origin,
        path,
        error.message
      )
    })
}

let isTrackingWebSocketEvents = false

function trackWebSocketEvents (debugLog = websocketDebuglog) {
  if (isTrackingWebSocketEvents) {
    return
  }

  // Check if any of the channels already have subscribers to prevent duplicate subscriptions
  // This can happen when both Node.js built-in undici and undici as a dependency are present
  if (channels.open.hasSubscribers || channels.close.hasSubscribers ||
      channels.socketError.hasSubscribers || channels.ping.hasSubscribers ||
      channels.pong.hasSubscribers) {
    isTrackingWebSocketEvents = true
    return
  }

  isTrackingWebSocketEvents = true

  diagnosticsChannel.subscribe('undici:websocket:open',
    evt => {
      if (evt.address != null) {
        const { address, port } = evt.address
        debugLog('connection opened %s%s', address, port ? `:${port}` : '')
      } else {
        debugLog('connection opened')
      }
    })

  diagnosticsChannel.subscribe('undici:websocket:close',
    evt => {
      const { websocket, code, reason } = evt
      debugLog(
        'closed connection to %s - %s %s',
        websocket.url,
        code,
        reason
      )
    })

  diagnosticsChannel.subscribe('undici:websocket:socket_error',
    err => {
      debugLog('connection errored - %s', err.message)
    })

  diagnosticsChannel.subscribe('undici:websocket:ping',
    evt => {
      debugLog('ping received')
    })

  diagnosticsChannel.subscribe('undici:websocket:pong',
    evt => {
      debugLog('pong received')
    })
}

if (undiciDebugLog.enabled || fetchDebuglog.enabled) {
  trackClientEvents(fetchDebuglog.enabled ? fetchDebuglog : undiciDebugLog)
  trackRequestEvents(fetchDebuglog.enabled ? fetchDebuglog : undiciDebugLog)
}

if (websocketDebuglog.enabled) {
  trackClientEvents(undiciDebugLog.enabled ? undiciDebugLog : websocketDebuglog)
  trackWebSocketEvents(websocketDebuglog)
}

module.exports = {
  channels
}


/***/ }),

/***/ 8707:
/***/ ((module) => {



const kUndiciError = Symbol.for('undici.error.UND_ERR')
class UndiciError extends Error {
  constructor (message, options) {
    super(message, options)
    this.name = 'UndiciError'
    this.code = 'UND_ERR'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kUndiciError] === true
  }

  get [kUndiciError] () {
    return true
  }
}

const kConnectTimeoutError = Symbol.for('undici.error.UND_ERR_CONNECT_TIMEOUT')
class ConnectTimeoutError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'ConnectTimeoutError'
    this.message = message || 'Connect Timeout Error'
    this.code = 'UND_ERR_CONNECT_TIMEOUT'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kConnectTimeoutError] === true
  }

  get [kConnectTimeoutError] () {
    return true
  }
}

const kHeadersTimeoutError = Symbol.for('undici.error.UND_ERR_HEADERS_TIMEOUT')
class HeadersTimeoutError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'HeadersTimeoutError'
    this.message = message || 'Headers Timeout Error'
    this.code = 'UND_ERR_HEADERS_TIMEOUT'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kHeadersTimeoutError] === true
  }

  get [kHeadersTimeoutError] () {
    return true
  }
}

const kHeadersOverflowError = Symbol.for('undici.error.UND_ERR_HEADERS_OVERFLOW')
class HeadersOverflowError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'HeadersOverflowError'
    this.message = message || 'Headers Overflow Error'
    this.code = 'UND_ERR_HEADERS_OVERFLOW'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kHeadersOverflowError] === true
  }

  get [kHeadersOverflowError] () {
    return true
  }
}

const kBodyTimeoutError = Symbol.for('undici.error.UND_ERR_BODY_TIMEOUT')
class BodyTimeoutError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'BodyTimeoutError'
    this.message = message || 'Body Timeout Error'
    this.code = 'UND_ERR_BODY_TIMEOUT'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kBodyTimeoutError] === true
  }

  get [kBodyTimeoutError] () {
    return true
  }
}

const kInvalidArgumentError = Symbol.for('undici.error.UND_ERR_INVALID_ARG')
class InvalidArgumentError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'InvalidArgumentError'
    this.message = message || 'Invalid Argument Error'
    this.code = 'UND_ERR_INVALID_ARG'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kInvalidArgumentError] === true
  }

  get [kInvalidArgumentError] () {
    return true
  }
}

const kInvalidReturnValueError = Symbol.for('undici.error.UND_ERR_INVALID_RETURN_VALUE')
class InvalidReturnValueError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'InvalidReturnValueError'
    this.message = message || 'Invalid Return Value Error'
    this.code = 'UND_ERR_INVALID_RETURN_VALUE'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kInvalidReturnValueError] === true
  }

  get [kInvalidReturnValueError] () {
    return true
  }
}

const kAbortError = Symbol.for('undici.error.UND_ERR_ABORT')
class AbortError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'AbortError'
    this.message = message || 'The operation was aborted'
    this.code = 'UND_ERR_ABORT'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kAbortError] === true
  }

  get [kAbortError] () {
    return true
  }
}

const kRequestAbortedError = Symbol.for('undici.error.UND_ERR_ABORTED')
class RequestAbortedError extends AbortError {
  constructor (message) {
    super(message)
    this.name = 'AbortError'
    this.message = message || 'Request aborted'
    this.code = 'UND_ERR_ABORTED'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kRequestAbortedError] === true
  }

  get [kRequestAbortedError] () {
    return true
  }
}

const kInformationalError = Symbol.for('undici.error.UND_ERR_INFO')
class InformationalError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'InformationalError'
    this.message = message || 'Request information'
    this.code = 'UND_ERR_INFO'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kInformationalError] === true
  }

  get [kInformationalError] () {
    return true
  }
}

const kRequestContentLengthMismatchError = Symbol.for('undici.error.UND_ERR_REQ_CONTENT_LENGTH_MISMATCH')
class RequestContentLengthMismatchError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'RequestContentLengthMismatchError'
    this.message = message || 'Request body length does not match content-length header'
    this.code = 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kRequestContentLengthMismatchError] === true
  }

  get [kRequestContentLengthMismatchError] () {
    return true
  }
}

const kResponseContentLengthMismatchError = Symbol.for('undici.error.UND_ERR_RES_CONTENT_LENGTH_MISMATCH')
class ResponseContentLengthMismatchError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'ResponseContentLengthMismatchError'
    this.message = message || 'Response body length does not match content-length header'
    this.code = 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kResponseContentLengthMismatchError] === true
  }

  get [kResponseContentLengthMismatchError] () {
    return true
  }
}

const kClientDestroyedError = Symbol.for('undici.error.UND_ERR_DESTROYED')
class ClientDestroyedError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'ClientDestroyedError'
    this.message = message || 'The client is destroyed'
    this.code = 'UND_ERR_DESTROYED'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kClientDestroyedError] === true
  }

  get [kClientDestroyedError] () {
    return true
  }
}

const kClientClosedError = Symbol.for('undici.error.UND_ERR_CLOSED')
class ClientClosedError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'ClientClosedError'
    this.message = message || 'The client is closed'
    this.code = 'UND_ERR_CLOSED'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kClientClosedError] === true
  }

  get [kClientClosedError] () {
    return true
  }
}

const kSocketError = Symbol.for('undici.error.UND_ERR_SOCKET')
class SocketError extends UndiciError {
  constructor (message, socket) {
    super(message)
    this.name = 'SocketError'
    this.message = message || 'Socket error'
    this.code = 'UND_ERR_SOCKET'
    this.socket = socket
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kSocketError] === true
  }

  get [kSocketError] () {
    return true
  }
}

const kNotSupportedError = Symbol.for('undici.error.UND_ERR_NOT_SUPPORTED')
class NotSupportedError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'NotSupportedError'
    this.message = message || 'Not supported error'
    this.code = 'UND_ERR_NOT_SUPPORTED'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kNotSupportedError] === true
  }

  get [kNotSupportedError] () {
    return true
  }
}

const kBalancedPoolMissingUpstreamError = Symbol.for('undici.error.UND_ERR_BPL_MISSING_UPSTREAM')
class BalancedPoolMissingUpstreamError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'MissingUpstreamError'
    this.message = message || 'No upstream has been added to the BalancedPool'
    this.code = 'UND_ERR_BPL_MISSING_UPSTREAM'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kBalancedPoolMissingUpstreamError] === true
  }

  get [kBalancedPoolMissingUpstreamError] () {
    return true
  }
}

const kHTTPParserError = Symbol.for('undici.error.UND_ERR_HTTP_PARSER')
class HTTPParserError extends Error {
  constructor (message, code, data) {
    super(message)
    this.name = 'HTTPParserError'
    this.code = code ? `HPE_${code}` : undefined
    this.data = data ? data.toString() : undefined
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kHTTPParserError] === true
  }

  get [kHTTPParserError] () {
    return true
  }
}

const kResponseExceededMaxSizeError = Symbol.for('undici.error.UND_ERR_RES_EXCEEDED_MAX_SIZE')
class ResponseExceededMaxSizeError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'ResponseExceededMaxSizeError'
    this.message = message || 'Response content exceeded max size'
    this.code = 'UND_ERR_RES_EXCEEDED_MAX_SIZE'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kResponseExceededMaxSizeError] === true
  }

  get [kResponseExceededMaxSizeError] () {
    return true
  }
}

const kRequestRetryError = Symbol.for('undici.error.UND_ERR_REQ_RETRY')
class RequestRetryError extends UndiciError {
  constructor (message, code, { headers, data }) {
    super(message)
    this.name = 'RequestRetryError'
    this.message = message || 'Request retry error'
    this.code = 'UND_ERR_REQ_RETRY'
    this.statusCode = code
    this.data = data
    this.headers = headers
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kRequestRetryError] === true
  }

  get [kRequestRetryError] () {
    return true
  }
}

const kResponseError = Symbol.for('undici.error.UND_ERR_RESPONSE')
class ResponseError extends UndiciError {
  constructor (message, code, { headers, body }) {
    super(message)
    this.name = 'ResponseError'
    this.message = message || 'Response error'
    this.code = 'UND_ERR_RESPONSE'
    this.statusCode = code
    this.body = body
    this.headers = headers
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kResponseError] === true
  }

  get [kResponseError] () {
    return true
  }
}

const kSecureProxyConnectionError = Symbol.for('undici.error.UND_ERR_PRX_TLS')
class SecureProxyConnectionError extends UndiciError {
  constructor (cause, message, options = {}) {
    super(message, { cause, ...options })
    this.name = 'SecureProxyConnectionError'
    this.message = message || 'Secure Proxy Connection failed'
    this.code = 'UND_ERR_PRX_TLS'
    this.cause = cause
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kSecureProxyConnectionError] === true
  }

  get [kSecureProxyConnectionError] () {
    return true
  }
}

const kMaxOriginsReachedError = Symbol.for('undici.error.UND_ERR_MAX_ORIGINS_REACHED')
class MaxOriginsReachedError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'MaxOriginsReachedError'
    this.message = message || 'Maximum allowed origins reached'
    this.code = 'UND_ERR_MAX_ORIGINS_REACHED'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kMaxOriginsReachedError] === true
  }

  get [kMaxOriginsReachedError] () {
    return true
  }
}

class Socks5ProxyError extends UndiciError {
  constructor (message, code) {
    super(message)
    this.name = 'Socks5ProxyError'
    this.message = message || 'SOCKS5 proxy error'
    this.code = code || 'UND_ERR_SOCKS5'
  }
}

const kMessageSizeExceededError = Symbol.for('undici.error.UND_ERR_WS_MESSAGE_SIZE_EXCEEDED')
class MessageSizeExceededError extends UndiciError {
  constructor (message) {
    super(message)
    this.name = 'MessageSizeExceededError'
    this.message = message || 'Max decompressed message size exceeded'
    this.code = 'UND_ERR_WS_MESSAGE_SIZE_EXCEEDED'
  }

  static [Symbol.hasInstance] (instance) {
    return instance && instance[kMessageSizeExceededError] === true
  }

  get [kMessageSizeExceededError] () {
    return true
  }
}

module.exports = {
  AbortError,
  HTTPParserError,
  UndiciError,
  HeadersTimeoutError,
  HeadersOverflowError,
  BodyTimeoutError,
  RequestContentLengthMismatchError,
  ConnectTimeoutError,
  InvalidArgumentError,
  InvalidReturnValueError,
  RequestAbortedError,
  ClientDestroyedError,
  ClientClosedError,
  InformationalError,
  SocketError,
  NotSupportedError,
  ResponseContentLengthMismatchError,
  BalancedPoolMissingUpstreamError,
  ResponseExceededMaxSizeError,
  RequestRetryError,
  ResponseError,
  SecureProxyConnectionError,
  MaxOriginsReachedError,
  Socks5ProxyError,
  MessageSizeExceededError
}


/***/ }),

/***/ 4655:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const {
  InvalidArgumentError,
  NotSupportedError
} = __nccwpck_require__(8707)
const assert = __nccwpck_require__(4589)
const {
  isValidHTTPToken,
  isValidHeaderValue,
  isStream,
  destroy,
  isBuffer,
  isFormDataLike,
  isIterable,
  hasSafeIterator,
  isBlobLike,
  serializePathWithQuery,
  assertRequestHandler,
  getServerName,
  normalizedMethodRecords,
  getProtocolFromUrlString
} = __nccwpck_require__(3440)
const { channels } = __nccwpck_require__(2414)
const { headerNameLowerCasedRecord } = __nccwpck_require__(735)

// Verifies that a given path is valid does not contain control chars \x00 to \x20
const invalidPathRegex = /[^\u0021-\u00ff]/

function isValidContentLengthHeaderValue (val) {
  if (typeof val !== 'string' || val.length === 0) {
    return false
  }

  for (let i = 0; i < val.length; i++) {
    const charCode = val.charCodeAt(i)
    if (charCode < 48 || charCode > 57) {
      return false
    }
  }

  return true
}

const kHandler = Symbol('handler')

class Request {
  constructor (origin, {
    path,
    method,
    body,
    headers,
    query,
    idempotent,
    blocking,
    upgrade,
    headersTimeout,
    bodyTimeout,
    reset,
    expectContinue,
    servername,
    throwOnError,
    maxRedirections,
    typeOfService
  }, handler) {
    if (typeof path !== 'string') {
      throw new InvalidArgumentError('path must be a string')
    } else if (
      path[0] !== '/' &&
      !(path.startsWith('http://') || path.startsWith('https://')) &&
      method !== 'CONNECT'
    ) {
      throw new InvalidArgumentError('path must be an absolute URL or start with a slash')
    } else if (invalidPathRegex.test(path)) {
      throw new InvalidArgumentError('invalid request path')
    }

    if (typeof method !== 'string') {
      throw new InvalidArgumentError('method must be a string')
    } else if (normalizedMethodRecords[method] === undefined && !isValidHTTPToken(method)) {
      throw new InvalidArgumentError('invalid request method')
    }

    if (upgrade && typeof upgrade !== 'string') {
      throw new InvalidArgumentError('upgrade must be a string')
    }

    if (upgrade && !isValidHeaderValue(upgrade)) {
      throw new InvalidArgumentError('invalid upgrade header')
    }

    if (headersTimeout != null && (!Number.isFinite(headersTimeout) || headersTimeout < 0)) {
      throw new InvalidArgumentError('invalid headersTimeout')
    }

    if (bodyTimeout != null && (!Number.isFinite(bodyTimeout) || bodyTimeout < 0)) {
      throw new InvalidArgumentError('invalid bodyTimeout')
    }

    if (reset != null && typeof reset !== 'boolean') {
      throw new InvalidArgumentError('invalid reset')
    }

    if (expectContinue != null && typeof expectContinue !== 'boolean') {
      throw new InvalidArgumentError('invalid expectContinue')
    }

    if (throwOnError != null) {
      throw new InvalidArgumentError('invalid throwOnError')
    }

    if (maxRedirections != null && maxRedirections !== 0) {
      throw new InvalidArgumentError('maxRedirections is not supported, use the redirect interceptor')
    }

    if (typeOfService != null && (!Number.isInteger(typeOfService) || typeOfService < 0 || typeOfService > 255)) {
      throw new InvalidArgumentError('typeOfService must be an integer between 0 and 255')
    }

    this.headersTimeout = headersTimeout

    this.bodyTimeout = bodyTimeout

    this.method = method

    this.typeOfService = typeOfService

    this.abort = null

    if (body == null) {
      this.body = null
    } else if (isStream(body)) {
      this.body = body

      const rState = this.body._readableState
      if (!rState || !rState.autoDestroy) {
        this.endHandler = function autoDestroy () {
          destroy(this)
        }
        this.body.on('end', this.endHandler)
      }

      this.errorHandler = err => {
        if (this.abort) {
          this.abort(err)
        } else {
          this.error = err
        }
      }
      this.body.on('error', this.errorHandler)
    } else if (isBuffer(body)) {
      this.body = body.byteLength ? body : null
    } else if (ArrayBuffer.isView(body)) {
      this.body = body.buffer.byteLength ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : null
    } else if (body instanceof ArrayBuffer) {
      this.body = body.byteLength ? Buffer.from(body) : null
    } else if (typeof body === 'string') {
      this.body = body.length ? Buffer.from(body) : null
    } else if (isFormDataLike(body) || isIterable(body) || isBlobLike(body)) {
      this.body = body
    } else {
      throw new InvalidArgumentError('body must be a string, a Buffer, a Readable stream, an iterable, or an async iterable')
    }

    this.completed = false
    this.aborted = false

    this.upgrade = upgrade || null

    this.path = query ? serializePathWithQuery(path, query) : path

    // TODO: shall we maybe standardize it to an URL object?
    this.origin = origin

    this.protocol = getProtocolFromUrlString(origin)

    this.idempotent = idempotent == null
      ? method === 'HEAD' || method === 'GET'
      : idempotent

    this.blocking = blocking ?? this.method !== 'HEAD'

    this.reset = reset == null ? null : reset

    this.host = null

    this.contentLength = null

    this.contentType = null

    this.headers = []

    // Only for H2
    this.expectContinue = expectContinue != null ? expectContinue : false

    if (Array.isArray(headers)) {
      if (headers.length % 2 !== 0) {
        throw new InvalidArgumentError('headers array must be even')
      }
      for (let i = 0; i < headers.length; i += 2) {
        processHeader(this, headers[i], headers[i + 1])
      }
    } else if (headers && typeof headers === 'object') {
      if (hasSafeIterator(headers)) {
        for (const header of headers) {
          if (!Array.isArray(header) || header.length !== 2) {
            throw new InvalidArgumentError('headers must be in key-value pair format')
          }
          processHeader(this, header[0], header[1])
        }
      } else {
        const keys = Object.keys(headers)
        for (let i = 0; i < keys.length; ++i) {
          processHeader(this, keys[i], headers[keys[i]])
        }
      }
    } else if (headers != null) {
      throw new InvalidArgumentError('headers must be an object or an array')
    }

    assertRequestHandler(handler, method, upgrade)

    this.servername = servername || getServerName(this.host) || null

    this[kHandler] = handler

    if (channels.create.hasSubscribers) {
      channels.create.publish({ request: this })
    }
  }

  onBodySent (chunk) {
    if (channels.bodyChunkSent.hasSubscribers) {
      channels.bodyChunkSent.publish({ request: this, chunk })
    }
    if (this[kHandler].onBodySent) {
      try {
        return this[kHandler].onBodySent(chunk)
      } catch (err) {
        this.abort(err)
      }
    }
  }

  onRequestSent () {
    if (channels.bodySent.hasSubscribers) {
      channels.bodySent.publish({ request: this })
    }

    if (this[kHandler].onRequestSent) {
      try {
        return this[kHandler].onRequestSent()
      } catch (err) {
        this.abort(err)
      }
    }
  }

  onConnect (abort) {
    assert(!this.aborted)
    assert(!this.completed)

    if (this.error) {
      abort(this.error)
    } else {
      this.abort = abort
      return this[kHandler].onConnect(abort)
    }
  }

  onResponseStarted () {
    return this[kHandler].onResponseStarted?.()
  }

  onHeaders (statusCode, headers, resume, statusText) {
    assert(!this.aborted)
    assert(!this.completed)

    if (channels.headers.hasSubscribers) {
      channels.headers.publish({ request: this, response: { statusCode, headers, statusText } })
    }

    try {
      return this[kHandler].onHeaders(statusCode, headers, resume, statusText)
    } catch (err) {
      this.abort(err)
    }
  }

  onData (chunk) {
    assert(!this.aborted)
    assert(!this.completed)

    if (channels.bodyChunkReceived.hasSubscribers) {
      channels.bodyChunkReceived.publish({ request: this, chunk })
    }
    try {
      return this[kHandler].onData(chunk)
    } catch (err) {
      this.abort(err)
      return false
    }
  }

  /**
   * @param {number} statusCode
   * @param {Buffer[]|string[]} headers
   * @param {import('node:stream').Duplex} socket
   * @param {string} [statusText]
   */
  onUpgrade (statusCode, headers, socket, statusText = '') {
    this.onFinally()

    assert(!this.aborted)
    assert(!this.completed)

    if (channels.headers.hasSubscribers) {
      channels.headers.publish({ request: this, response: { statusCode, headers, statusText } })
    }

    const result = this[kHandler].onUpgrade(statusCode, headers, socket)

    if (!this.aborted) {
      this.completed = true
      if (channels.trailers.hasSubscribers) {
        channels.trailers.publish({ request: this, trailers: [] })
      }
    }

    return result
  }

  onComplete (trailers) {
    this.onFinally()

    assert(!this.aborted)
    assert(!this.completed)

    this.completed = true
    if (channels.trailers.hasSubscribers) {
      channels.trailers.publish({ request: this, trailers })
    }

    try {
      return this[kHandler].onComplete(trailers)
    } catch (err) {
      // TODO (fix): This might be a bad idea?
      this.onError(err)
    }
  }

  onError (error) {
    this.onFinally()

    if (channels.error.hasSubscribers) {
      channels.error.publish({ request: this, error })
    }

    if (this.aborted) {
      return
    }
    this.aborted = true

    return this[kHandler].onError(error)
  }

  onFinally () {
    if (this.errorHandler) {
      this.body.off('error', this.errorHandler)
      this.errorHandler = null
    }

    if (this.endHandler) {
      this.body.off('end', this.endHandler)
      this.endHandler = null
    }
  }

  addHeader (key, value) {
    processHeader(this, key, value)
    return this
  }
}

function processHeader (request, key, val) {
  if (val && (typeof val === 'object' && !Array.isArray(val))) {
    throw new InvalidArgumentError(`invalid ${key} header`)
  } else if (val === undefined) {
    return
  }

  let headerName = headerNameLowerCasedRecord[key]

  if (headerName === undefined) {
    headerName = key.toLowerCase()
    if (headerNameLowerCasedRecord[headerName] === undefined && !isValidHTTPToken(headerName)) {
      throw new InvalidArgumentError('invalid header key')
    }
  }

  if (Array.isArray(val)) {
    const arr = []
    for (let i = 0; i < val.length; i++) {
      if (typeof val[i] === 'string') {
        if (!isValidHeaderValue(val[i])) {
          throw new InvalidArgumentError(`invalid ${key} header`)
        }
        arr.push(val[i])
      } else if (val[i] === null) {
        arr.push('')
      } else if (typeof val[i] === 'object') {
        throw new InvalidArgumentError(`invalid ${key} header`)
      } else {
        // Coerce primitives (and reject unsafe coercions such as functions
        // with a crafted toString/Symbol.toPrimitive).
        const str = `${val[i]}`
        if (!isValidHeaderValue(str)) {
          throw new InvalidArgumentError(`invalid ${key} header`)
        }
        arr.push(str)
      }
    }
    val = arr
  } else if (typeof val === 'string') {
    if (!isValidHeaderValue(val)) {
      throw new InvalidArgumentError(`invalid ${key} header`)
    }
  } else if (val === null) {
    val = ''
  } else {
    // Coerce primitives (and reject unsafe coercions such as functions
    // with a crafted toString/Symbol.toPrimitive).
    val = `${val}`
    if (!isValidHeaderValue(val)) {
      throw new InvalidArgumentError(`invalid ${key} header`)
    }
  }

  if (headerName === 'host') {
    if (request.host !== null) {
      throw new InvalidArgumentError('duplicate host header')
    }
    if (typeof val !== 'string') {
      throw new InvalidArgumentError('invalid host header')
    }
    // Consumed by Client
    request.host = val
  } else if (headerName === 'content-length') {
    if (request.contentLength !== null) {
      throw new InvalidArgumentError('duplicate content-length header')
    }
    if (!isValidContentLengthHeaderValue(val)) {
      throw new InvalidArgumentError('invalid content-length header')
    }
    request.contentLength = parseInt(val, 10)
  } else if (request.contentType === null && headerName === 'content-type') {
    request.contentType = val
    request.headers.push(key, val)
  } else if (headerName === 'transfer-encoding' || headerName === 'keep-alive' || headerName === 'upgrade') {
    throw new InvalidArgumentError(`invalid ${headerName} header`)
  } else if (headerName === 'connection') {
    // Per RFC 7230 Section 6.1, Connection header can contain
    // a comma-separated list of connection option tokens (header names)
    const value = typeof val === 'string' ? val : null
    if (value === null) {
      throw new InvalidArgumentError('invalid connection header')
    }

    for (const token of value.toLowerCase().split(',')) {
      const trimmed = token.trim()
      if (!isValidHTTPToken(trimmed)) {
        throw new InvalidArgumentError('invalid connection header')
      }
      if (trimmed === 'close') {
        request.reset = true
      }
    }
  } else if (headerName === 'expect') {
    throw new NotSupportedError('expect header not supported')
  } else {
    request.headers.push(key, val)
  }
}

module.exports = Request


/***/ }),

/***/ 6443:
/***/ ((module) => {



module.exports = {
  kClose: Symbol('close'),
  kDestroy: Symbol('destroy'),
  kDispatch: Symbol('dispatch'),
  kUrl: Symbol('url'),
  kRedirectCacheControl: Symbol('redirect cache control'),
  kWriting: Symbol('writing'),
  kResuming: Symbol('resuming'),
  kQueue: Symbol('queue'),
  kConnect: Symbol('connect'),
  kConnecting: Symbol('connecting'),
  kKeepAliveDefaultTimeout: Symbol('default keep alive timeout'),
  kKeepAliveMaxTimeout: Symbol('max keep alive timeout'),
  kKeepAliveTimeoutThreshold: Symbol('keep alive timeout threshold'),
  kKeepAliveTimeoutValue: Symbol('keep alive timeout'),
  kKeepAlive: Symbol('keep alive'),
  kHeadersTimeout: Symbol('headers timeout'),
  kBodyTimeout: Symbol('body timeout'),
  kServerName: Symbol('server name'),
  kLocalAddress: Symbol('local address'),
  kHost: Symbol('host'),
  kNoRef: Symbol('no ref'),
  kBodyUsed: Symbol('used'),
  kBody: Symbol('abstracted request body'),
  kRunning: Symbol('running'),
  kBlocking: Symbol('blocking'),
  kPending: Symbol('pending'),
  kSize: Symbol('size'),
  kBusy: Symbol('busy'),
  kQueued: Symbol('queued'),
  kFree: Symbol('free'),
  kConnected: Symbol('connected'),
  kClosed: Symbol('closed'),
  kNeedDrain: Symbol('need drain'),
  kReset: Symbol('reset'),
  kDestroyed: Symbol.for('nodejs.stream.destroyed'),
  kResume: Symbol('resume'),
  kOnError: Symbol('on error'),
  kMaxHeadersSize: Symbol('max headers size'),
  kRunningIdx: Symbol('running index'),
  kPendingIdx: Symbol('pending index'),
  kError: Symbol('error'),
  kClients: Symbol('clients'),
  kClient: Symbol('client'),
  kParser: Symbol('parser'),
  kOnDestroyed: Symbol('destroy callbacks'),
  kPipelining: Symbol('pipelining'),
  kSocket: Symbol('socket'),
  kHostHeader: Symbol('host header'),
  kConnector: Symbol('connector'),
  kStrictContentLength: Symbol('strict content length'),
  kMaxRedirections: Symbol('maxRedirections'),
  kMaxRequests: Symbol('maxRequestsPerClient'),
  kProxy: Symbol('proxy agent options'),
  kCounter: Symbol('socket request counter'),
  kMaxResponseSize: Symbol('max response size'),
  kHTTP2Session: Symbol('http2Session'),
  kHTTP2SessionState: Symbol('http2Session state'),
  kRetryHandlerDefaultRetry: Symbol('retry agent default retry'),
  kConstruct: Symbol('constructable'),
  kListeners: Symbol('listeners'),
  kHTTPContext: Symbol('http context'),
  kMaxConcurrentStreams: Symbol('max concurrent streams'),
  kHTTP2InitialWindowSize: Symbol('http2 initial window size'),
  kHTTP2ConnectionWindowSize: Symbol('http2 connection window size'),
  kEnableConnectProtocol: Symbol('http2session connect protocol'),
  kRemoteSettings: Symbol('http2session remote settings'),
  kHTTP2Stream: Symbol('http2session client stream'),
  kPingInterval: Symbol('ping interval'),
  kNoProxyAgent: Symbol('no proxy agent'),
  kHttpProxyAgent: Symbol('http proxy agent'),
  kHttpsProxyAgent: Symbol('https proxy agent'),
  kSocks5ProxyAgent: Symbol('socks5 proxy agent')
}


/***/ }),

/***/ 7752:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const {
  wellknownHeaderNames,
  headerNameLowerCasedRecord
} = __nccwpck_require__(735)

class TstNode {
  /** @type {any} */
  value = null
  /** @type {null | TstNode} */
  left = null
  /** @type {null | TstNode} */
  middle = null
  /** @type {null | TstNode} */
  right = null
  /** @type {number} */
  code
  /**
   * @param {string} key
   * @param {any} value
   * @param {number} index
   */
  constructor (key, value, index) {
    if (index === undefined || index >= key.length) {
      throw new TypeError('Unreachable')
    }
    const code = this.code = key.charCodeAt(index)
    // check code is ascii string
    if (code > 0x7F) {
      throw new TypeError('key must be ascii string')
    }
    if (key.length !== ++index) {
      this.middle = new TstNode(key, value, index)
    } else {
      this.value = value
    }
  }

  /**
   * @param {string} key
   * @param {any} value
   * @returns {void}
   */
  add (key, value) {
    const length = key.length
    if (length === 0) {
      throw new TypeError('Unreachable')
    }
    let index = 0
    /**
     * @type {TstNode}
     */
    let node = this
    while (true) {
      const code = key.charCodeAt(index)
      // check code is ascii string
      if (code > 0x7F) {
        throw new TypeError('key must be ascii string')
      }
      if (node.code === code) {
        if (length === ++index) {
          node.value = value
          break
        } else if (node.middle !== null) {
          node = node.middle
        } else {
          node.middle = new TstNode(key, value, index)
          break
        }
      } else if (node.code < code) {
        if (node.left !== null) {
          node = node.left
        } else {
          node.left = new TstNode(key, value, index)
          break
        }
      } else if (node.right !== null) {
        node = node.right
      } else {
        node.right = new TstNode(key, value, index)
        break
      }
    }
  }

  /**
   * @param {Uint8Array} key
   * @returns {TstNode | null}
   */
  search (key) {
    const keylength = key.length
    let index = 0
    /**
     * @type {TstNode|null}
     */
    let node = this
    while (node !== null && index < keylength) {
      let code = key[index]
      // A-Z
      // First check if it is bigger than 0x5a.
      // Lowercase letters have higher char codes than uppercase ones.
      // Also we assume that headers will mostly contain lowercase characters.
      if (code <= 0x5a && code >= 0x41) {
        // Lowercase for uppercase.
        code |= 32
      }
      while (node !== null) {
        if (code === node.code) {
          if (keylength === ++index) {
            // Returns Node since it is the last key.
            return node
          }
          node = node.middle
          break
        }
        node = node.code < code ? node.left : node.right
      }
    }
    return null
  }
}

class TernarySearchTree {
  /** @type {TstNode | null} */
  node = null

  /**
   * @param {string} key
   * @param {any} value
   * @returns {void}
   * */
  insert (key, value) {
    if (this.node === null) {
      this.node = new TstNode(key, value, 0)
    } else {
      this.node.add(key, value)
    }
  }

  /**
   * @param {Uint8Array} key
   * @returns {any}
   */
  lookup (key) {
    return this.node?.search(key)?.value ?? null
  }
}

const tree = new TernarySearchTree()

for (let i = 0; i < wellknownHeaderNames.length; ++i) {
  const key = headerNameLowerCasedRecord[wellknownHeaderNames[i]]
  tree.insert(key, key)
}

module.exports = {
  TernarySearchTree,
  tree
}


/***/ }),

/***/ 3440:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const assert = __nccwpck_require__(4589)
const { kDestroyed, kBodyUsed, kListeners, kBody } = __nccwpck_require__(6443)
const { IncomingMessage } = __nccwpck_require__(7067)
const stream = __nccwpck_require__(7075)
const net = __nccwpck_require__(7030)
const { stringify } = __nccwpck_require__(1792)
const { EventEmitter: EE } = __nccwpck_require__(8474)
const timers = __nccwpck_require__(6603)
const { InvalidArgumentError, ConnectTimeoutError } = __nccwpck_require__(8707)
const { headerNameLowerCasedRecord } = __nccwpck_require__(735)
const { tree } = __nccwpck_require__(7752)

const [nodeMajor, nodeMinor] = process.versions.node.split('.', 2).map(v => Number(v))

class BodyAsyncIterable {
  constructor (body) {
    this[kBody] = body
    this[kBodyUsed] = false
  }

  async * [Symbol.asyncIterator] () {
    assert(!this[kBodyUsed], 'disturbed')
    this[kBodyUsed] = true
    yield * this[kBody]
  }
}

function noop () {}

/**
 * @param {*} body
 * @returns {*}
 */
function wrapRequestBody (body) {
  if (isStream(body)) {
    // TODO (fix): Provide some way for the user to cache the file to e.g. /tmp
    // so that it can be dispatched again?
    // TODO (fix): Do we need 100-expect support to provide a way to do this properly?
    if (bodyLength(body) === 0) {
      body
        .on('data', function () {
          assert(false)
        })
    }

    if (typeof body.readableDidRead !== 'boolean') {
      body[kBodyUsed] = false
      EE.prototype.on.call(body, 'data', function () {
        this[kBodyUsed] = true
      })
    }

    return body
  } else if (body && typeof body.pipeTo === 'function') {
    // TODO (fix): We can't access ReadableStream internal state
    // to determine whether or not it has been disturbed. This is just
    // a workaround.
    return new BodyAsyncIterable(body)
  } else if (body && isFormDataLike(body)) {
    return body
  } else if (
    body &&
    typeof body !== 'string' &&
    !ArrayBuffer.isView(body) &&
    isIterable(body)
  ) {
    // TODO: Should we allow re-using iterable if !this.opts.idempotent
    // or through some other flag?
    return new BodyAsyncIterable(body)
  } else {
    return body
  }
}

/**
 * @param {*} obj
 * @returns {obj is import('node:stream').Stream}
 */
function isStream (obj) {
  return obj && typeof obj === 'object' && typeof obj.pipe === 'function' && typeof obj.on === 'function'
}

/**
 * @param {*} object
 * @returns {object is Blob}
 * based on https://github.com/node-fetch/fetch-blob/blob/8ab587d34080de94140b54f07168451e7d0b655e/index.js#L229-L241 (MIT License)
 */
function isBlobLike (object) {
  if (object === null) {
    return false
  } else if (object instanceof Blob) {
    return true
  } else if (typeof object !== 'object') {
    return false
  } else {
    const sTag = object[Symbol.toStringTag]

    return (sTag === 'Blob' || sTag === 'File') && (
      ('stream' in object && typeof object.stream === 'function') ||
      ('arrayBuffer' in object && typeof object.arrayBuffer === 'function')
    )
  }
}

/**
 * @param {string} url The path to check for query strings or fragments.
 * @returns {boolean} Returns true if the path contains a query string or fragment.
 */
function pathHasQueryOrFragment (url) {
  return (
    url.includes('?') ||
    url.includes('#')
  )
}

/**
 * @param {string} url The URL to add the query params to
 * @param {import('node:querystring').ParsedUrlQueryInput} queryParams The object to serialize into a URL query string
 * @returns {string} The URL with the query params added
 */
function serializePathWithQuery (url, queryParams) {
  if (pathHasQueryOrFragment(url)) {
    throw new Error('Query params cannot be passed when url already contains "?" or "#".')
  }

  const stringified = stringify(queryParams)

  if (stringified) {
    url += '?' + stringified
  }

  return url
}

/**
 * @param {number|string|undefined} port
 * @returns {boolean}
 */
function isValidPort (port) {
  const value = parseInt(port, 10)
  return (
    value === Number(port) &&
    value >= 0 &&
    value <= 65535
  )
}

/**
 * Check if the value is a valid http or https prefixed string.
 *
 * @param {string} value
 * @returns {boolean}
 */
function isHttpOrHttpsPrefixed (value) {
  return (
    value != null &&
    value[0] === 'h' &&
    value[1] === 't' &&
    value[2] === 't' &&
    value[3] === 'p' &&
    (
      value[4] === ':' ||
      (
        value[4] === 's' &&
        value[5] === ':'
      )
    )
  )
}

/**
 * @param {string|URL|Record<string,string>} url
 * @returns {URL}
 */
function parseURL (url) {
  if (typeof url === 'string') {
    /**
     * @type {URL}
     */
    url = new URL(url)

    if (!isHttpOrHttpsPrefixed(url.origin || url.protocol)) {
      throw new InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.')
    }

    return url
  }

  if (!url || typeof url !== 'object') {
    throw new InvalidArgumentError('Invalid URL: The URL argument must be a non-null object.')
  }

  if (!(url instanceof URL)) {
    if (url.port != null && url.port !== '' && isValidPort(url.port) === false) {
      throw new InvalidArgumentError('Invalid URL: port must be a valid integer or a string representation of an integer.')
    }

    if (url.path != null && typeof url.path !== 'string') {
      throw new InvalidArgumentError('Invalid URL path: the path must be a string or null/undefined.')
    }

    if (url.pathname != null && typeof url.pathname !== 'string') {
      throw new InvalidArgumentError('Invalid URL pathname: the pathname must be a string or null/undefined.')
    }

    if (url.hostname != null && typeof url.hostname !== 'string') {
      throw new InvalidArgumentError('Invalid URL hostname: the hostname must be a string or null/undefined.')
    }

    if (url.origin != null && typeof url.origin !== 'string') {
      throw new InvalidArgumentError('Invalid URL origin: the origin must be a string or null/undefined.')
    }

    if (!isHttpOrHttpsPrefixed(url.origin || url.protocol)) {
      throw new InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.')
    }

    const port = url.port != null
      ? url.port
      : (url.protocol === 'https:' ? 443 : 80)
    let origin = url.origin != null
      ? url.origin
      : `${url.protocol || ''}//${url.hostname || ''}:${port}`
    let path = url.path != null
      ? url.path
      : `${url.pathname || ''}${url.search || ''}`

    if (origin[origin.length - 1] === '/') {
      origin = origin.slice(0, origin.length - 1)
    }

    if (path && path[0] !== '/') {
      path = `/${path}`
    }
    // new URL(path, origin) is unsafe when `path` contains an absolute URL
    // From https://developer.mozilla.org/en-US/docs/Web/API/URL/URL:
    // If first parameter is a relative URL, second param is required, and will be used as the base URL.
    // If first parameter is an absolute URL, a given second param will be ignored.
    return new URL(`${origin}${path}`)
  }

  if (!isHttpOrHttpsPrefixed(url.origin || url.protocol)) {
    throw new InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.')
  }

  return url
}

/**
 * @param {string|URL|Record<string, string>} url
 * @returns {URL}
 */
function parseOrigin (url) {
  url = parseURL(url)

  if (url.pathname !== '/' || url.search || url.hash) {
    throw new InvalidArgumentError('invalid url')
  }

  return url
}

/**
 * @param {string} host
 * @returns {string}
 */
function getHostname (host) {
  if (host[0] === '[') {
    const idx = host.indexOf(']')

    assert(idx !== -1)
    return host.substring(1, idx)
  }

  const idx = host.indexOf(':')
  if (idx === -1) return host

  return host.substring(0, idx)
}

/**
 * IP addresses are not valid server names per RFC6066
 * Currently, the only server names supported are DNS hostnames
 * @param {string|null} host
 * @returns {string|null}
 */
function getServerName (host) {
  if (!host) {
    return null
  }

  assert(typeof host === 'string')

  const servername = getHostname(host)
  if (net.isIP(servername)) {
    return ''
  }

  return servername
}

/**
 * @function
 * @template T
 * @param {T} obj
 * @returns {T}
 */
function deepClone (obj) {
  return JSON.parse(JSON.stringify(obj))
}

/**
 * @param {*} obj
 * @returns {obj is AsyncIterable}
 */
function isAsyncIterable (obj) {
  return !!(obj != null && typeof obj[Symbol.asyncIterator] === 'function')
}

/**
 * @param {*} obj
 * @returns {obj is Iterable}
 */
function isIterable (obj) {
  return !!(obj != null && (typeof obj[Symbol.iterator] === 'function' || typeof obj[Symbol.asyncIterator] === 'function'))
}

/**
 * Checks whether an object has a safe Symbol.iterator — i.e. one that is
 * either own or inherited from a non-Object.prototype chain.  This prevents
 * prototype-pollution attacks from injecting a fake iterator on
 * Object.prototype.
 * @param {object} obj
 * @returns {boolean}
 */
function hasSafeIterator (obj) {
  const prototype = Object.getPrototypeOf(obj)
  const ownIterator = Object.prototype.hasOwnProperty.call(obj, Symbol.iterator)
  return ownIterator || (prototype != null && prototype !== Object.prototype && typeof obj[Symbol.iterator] === 'function')
}

/**
 * @param {Blob|Buffer|import ('stream').Stream} body
 * @returns {number|null}
 */
function bodyLength (body) {
  if (body == null) {
    return 0
  } else if (isStream(body)) {
    const state = body._readableState
    return state && state.objectMode === false && state.ended === true && Number.isFinite(state.length)
      ? state.length
      : null
  } else if (isBlobLike(body)) {
    return body.size != null ? body.size : null
  } else if (isBuffer(body)) {
    return body.byteLength
  }

  return null
}

/**
 * @param {import ('stream').Stream} body
 * @returns {boolean}
 */
function isDestroyed (body) {
  return body && !!(body.destroyed || body[kDestroyed] || (stream.isDestroyed?.(body)))
}

/**
 * @param {import ('stream').Stream} stream
 * @param {Error} [err]
 * @returns {void}
 */
function destroy (stream, err) {
  if (stream == null || !isStream(stream) || isDestroyed(stream)) {
    return
  }

  if (typeof stream.destroy === 'function') {
    if (Object.getPrototypeOf(stream).constructor === IncomingMessage) {
      // See: https://github.com/nodejs/node/pull/38505/files
      stream.socket = null
    }

    stream.destroy(err)
  } else if (err) {
    queueMicrotask(() => {
      stream.emit('error', err)
    })
  }

  if (stream.destroyed !== true) {
    stream[kDestroyed] = true
  }
}

const KEEPALIVE_TIMEOUT_EXPR = /timeout=(\d+)/
/**
 * @param {string} val
 * @returns {number | null}
 */
function parseKeepAliveTimeout (val) {
  const m = val.match(KEEPALIVE_TIMEOUT_EXPR)
  return m ? parseInt(m[1], 10) * 1000 : null
}

/**
 * Retrieves a header name and returns its lowercase value.
 * @param {string | Buffer} value Header name
 * @returns {string}
 */
function headerNameToString (value) {
  return typeof value === 'string'
    ? headerNameLowerCasedRecord[value] ?? value.toLowerCase()
    : tree.lookup(value) ?? value.toString('latin1').toLowerCase()
}

/**
 * Receive the buffer as a string and return its lowercase value.
 * @param {Buffer} value Header name
 * @returns {string}
 */
function bufferToLowerCasedHeaderName (value) {
  return tree.lookup(value) ?? value.toString('latin1').toLowerCase()
}

/**
 * @param {(Buffer | string)[]} headers
 * @param {Record<string, string | string[]>} [obj]
 * @returns {Record<string, string | string[]>}
 */
function parseHeaders (headers, obj) {
  if (obj === undefined) obj = {}

  for (let i = 0; i < headers.length; i += 2) {
    const key = headerNameToString(headers[i])
    let val = obj[key]

    if (val !== undefined) {
      if (!Object.hasOwn(obj, key)) {
        const headersValue = typeof headers[i + 1] === 'string'
          ? headers[i + 1]
          : Array.isArray(headers[i + 1])
            ? headers[i + 1].map(x => x.toString('latin1'))
            : headers[i + 1].toString('latin1')

        if (key === '__proto__') {
          Object.defineProperty(obj, key, {
            value: headersValue,
            enumerable: true,
            configurable: true,
            writable: true
          })
        } else {
          obj[key] = headersValue
        }
      } else {
        if (typeof val === 'string') {
          val = [val]
          obj[key] = val
        }
        val.push(headers[i + 1].toString('latin1'))
      }
    } else {
      const headersValue = typeof headers[i + 1] === 'string'
        ? headers[i + 1]
        : Array.isArray(headers[i + 1])
          ? headers[i + 1].map(x => x.toString('latin1'))
          : headers[i + 1].toString('latin1')

      obj[key] = headersValue
    }
  }

  return obj
}

/**
 * @param {Buffer[]} headers
 * @returns {string[]}
 */
function parseRawHeaders (headers) {
  const headersLength = headers.length
  /**
   * @type {string[]}
   */
  const ret = new Array(headersLength)

  let key
  let val

  for (let n = 0; n < headersLength; n += 2) {
    key = headers[n]
    val = headers[n + 1]

    typeof key !== 'string' && (key = key.toString())
    typeof val !== 'string' && (val = val.toString('latin1'))

    ret[n] = key
    ret[n + 1] = val
  }

  return ret
}

/**
 * @param {Record<string, string | string[]>} headers
 * @returns {Buffer[]}
 */
function toRawHeaders (headers) {
  const rawHeaders = []

  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) {
      for (const entry of value) {
        rawHeaders.push(Buffer.from(name, 'latin1'), Buffer.from(`${entry}`, 'latin1'))
      }
    } else {
      rawHeaders.push(Buffer.from(name, 'latin1'), Buffer.from(`${value}`, 'latin1'))
    }
  }

  return rawHeaders
}

/**
 * @param {string[]} headers
 * @param {Buffer[]} headers
 */
function encodeRawHeaders (headers) {
  if (!Array.isArray(headers)) {
    throw new TypeError('expected headers to be an array')
  }
  return headers.map(x => Buffer.from(x))
}

/**
 * @param {*} buffer
 * @returns {buffer is Buffer}
 */
function isBuffer (buffer) {
  // See, https://github.com/mcollina/undici/pull/319
  return buffer instanceof Uint8Array || Buffer.isBuffer(buffer)
}

/**
 * Asserts that the handler object is a request handler.
 *
 * @param {object} handler
 * @param {string} method
 * @param {string} [upgrade]
 * @returns {asserts handler is import('../api/api-request').RequestHandler}
 */
function assertRequestHandler (handler, method, upgrade) {
  if (!handler || typeof handler !== 'object') {
    throw new InvalidArgumentError('handler must be an object')
  }

  if (typeof handler.onRequestStart === 'function') {
    // TODO (fix): More checks...
    return
  }

  if (typeof handler.onConnect !== 'function') {
    throw new InvalidArgumentError('invalid onConnect method')
  }

  if (typeof handler.onError !== 'function') {
    throw new InvalidArgumentError('invalid onError method')
  }

  if (typeof handler.onBodySent !== 'function' && handler.onBodySent !== undefined) {
    throw new InvalidArgumentError('invalid onBodySent method')
  }

  if (upgrade || method === 'CONNECT') {
    if (typeof handler.onUpgrade !== 'function') {
      throw new InvalidArgumentError('invalid onUpgrade method')
    }
  } else {
    if (typeof handler.onHeaders !== 'function') {
      throw new InvalidArgumentError('invalid onHeaders method')
    }

    if (typeof handler.onData !== 'function') {
      throw new InvalidArgumentError('invalid onData method')
    }

    if (typeof handler.onComplete !== 'function') {
      throw new InvalidArgumentError('invalid onComplete method')
    }
  }
}

/**
 * A body is disturbed if it has been read from and it cannot be re-used without
 * losing state or data.
 * @param {import('node:stream').Readable} body
 * @returns {boolean}
 */
function isDisturbed (body) {
  // TODO (fix): Why is body[kBodyUsed] needed?
  return !!(body && (stream.isDisturbed(body) || body[kBodyUsed]))
}

/**
 * @typedef {object} SocketInfo
 * @property {string} [localAddress]
 * @property {number} [localPort]
 * @property {string} [remoteAddress]
 * @property {number} [remotePort]
 * @property {string} [remoteFamily]
 * @property {number} [timeout]
 * @property {number} bytesWritten
 * @property {number} bytesRead
 */

/**
 * @param {import('net').Socket} socket
 * @returns {SocketInfo}
 */
function getSocketInfo (socket) {
  return {
    localAddress: socket.localAddress,
    localPort: socket.localPort,
    remoteAddress: socket.remoteAddress,
    remotePort: socket.remotePort,
    remoteFamily: socket.remoteFamily,
    timeout: socket.timeout,
    bytesWritten: socket.bytesWritten,
    bytesRead: socket.bytesRead
  }
}

/**
 * @param {Iterable} iterable
 * @returns {ReadableStream}
 */
function ReadableStreamFrom (iterable) {
  // We cannot use ReadableStream.from here because it does not return a byte stream.

  let iterator
  return new ReadableStream(
    {
      start () {
        iterator = iterable[Symbol.asyncIterator]()
      },
      pull (controller) {
        return iterator.next().then(({ done, value }) => {
          if (done) {
            return queueMicrotask(() => {
              controller.close()
              controller.byobRequest?.respond(0)
            })
          } else {
            const buf = Buffer.isBuffer(value) ? value : Buffer.from(value)
            if (buf.byteLength) {
              return controller.enqueue(new Uint8Array(buf))
            } else {
              return this.pull(controller)
            }
          }
        })
      },
      cancel () {
        return iterator.return()
      },
      type: 'bytes'
    }
  )
}

/**
 * The object should be a FormData instance and contains all the required
 * methods.
 * @param {*} object
 * @returns {object is FormData}
 */
function isFormDataLike (object) {
  return (
    object &&
    typeof object === 'object' &&
    typeof object.append === 'function' &&
    typeof object.delete === 'function' &&
    typeof object.get === 'function' &&
    typeof object.getAll === 'function' &&
    typeof object.has === 'function' &&
    typeof object.set === 'function' &&
    object[Symbol.toStringTag] === 'FormData'
  )
}

function addAbortListener (signal, listener) {
  if ('addEventListener' in signal) {
    signal.addEventListener('abort', listener, { once: true })
    return () => signal.removeEventListener('abort', listener)
  }
  signal.once('abort', listener)
  return () => signal.removeListener('abort', listener)
}

const validTokenChars = new Uint8Array([
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 0-15
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 16-31
  0, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0, // 32-47 (!"#$%&'()*+,-./)
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, // 48-63 (0-9:;<=>?)
  0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, // 64-79 (@A-O)
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, // 80-95 (P-Z[\]^_)
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, // 96-111 (`a-o)
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, // 112-127 (p-z{|}~)
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 128-143
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 144-159
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 160-175
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 176-191
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 192-207
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 208-223
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 224-239
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0  // 240-255
])

/**
 * @see https://tools.ietf.org/html/rfc7230#section-3.2.6
 * @param {number} c
 * @returns {boolean}
 */
function isTokenCharCode (c) {
  return (validTokenChars[c] === 1)
}

const tokenRegExp = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/

/**
 * @param {string} characters
 * @returns {boolean}
 */
function isValidHTTPToken (characters) {
  if (characters.length >= 12) return tokenRegExp.test(characters)
  if (characters.length === 0) return false

  for (let i = 0; i < characters.length; i++) {
    if (validTokenChars[characters.charCodeAt(i)] !== 1) {
      return false
    }
  }
  return true
}

// headerCharRegex have been lifted from
// https://github.com/nodejs/node/blob/main/lib/_http_common.js

/**
 * Matches if val contains an invalid field-vchar
 *  field-value    = *( field-content / obs-fold )
 *  field-content  = field-vchar [ 1*( SP / HTAB ) field-vchar ]
 *  field-vchar    = VCHAR / obs-text
 */
const headerCharRegex = /[^\t\x20-\x7e\x80-\xff]/

/**
 * @param {string} characters
 * @returns {boolean}
 */
function isValidHeaderValue (characters) {
  return !headerCharRegex.test(characters)
}

const rangeHeaderRegex = /^bytes (\d+)-(\d+)\/(\d+)?$/

/**
 * @typedef {object} RangeHeader
 * @property {number} start
 * @property {number | null} end
 * @property {number | null} size
 */

/**
 * Parse accordingly to RFC 9110
 * @see https://www.rfc-editor.org/rfc/rfc9110#field.content-range
 * @param {string} [range]
 * @returns {RangeHeader|null}
 */
function parseRangeHeader (range) {
  if (range == null || range === '') return { start: 0, end: null, size: null }

  const m = range ? range.match(rangeHeaderRegex) : null
  return m
    ? {
        start: parseInt(m[1]),
        end: m[2] ? parseInt(m[2]) : null,
        size: m[3] ? parseInt(m[3]) : null
      }
    : null
}

/**
 * @template {import("events").EventEmitter} T
 * @param {T} obj
 * @param {string} name
 * @param {(...args: any[]) => void} listener
 * @returns {T}
 */
function addListener (obj, name, listener) {
  const listeners = (obj[kListeners] ??= [])
  listeners.push([name, listener])
  obj.on(name, listener)
  return obj
}

/**
 * @template {import("events").EventEmitter} T
 * @param {T} obj
 * @returns {T}
 */
function removeAllListeners (obj) {
  if (obj[kListeners] != null) {
    for (const [name, listener] of obj[kListeners]) {
      obj.removeListener(name, listener)
    }
    obj[kListeners] = null
  }
  return obj
}

/**
 * @param {import ('../dispatcher/client')} client
 * @param {import ('../core/request')} request
 * @param {Error} err
 */
function errorRequest (client, request, err) {
  try {
    request.onError(err)
    assert(request.aborted)
  } catch (err) {
    client.emit('error', err)
  }
}

/**
 * @param {WeakRef<net.Socket>} socketWeakRef
 * @param {object} opts
 * @param {number} opts.timeout
 * @param {string} opts.hostname
 * @param {number} opts.port
 * @returns {() => void}
 */
const setupConnectTimeout = process.platform === 'win32'
  ? (socketWeakRef, opts) => {
      if (!opts.timeout) {
        return noop
      }

      let s1 = null
      let s2 = null
      const fastTimer = timers.setFastTimeout(() => {
      // setImmediate is added to make sure that we prioritize socket error events over timeouts
        s1 = setImmediate(() => {
        // Windows needs an extra setImmediate probably due to implementation differences in the socket logic
          s2 = setImmediate(() => onConnectTimeout(socketWeakRef.deref(), opts))
        })
      }, opts.timeout)
      return () => {
        timers.clearFastTimeout(fastTimer)
        clearImmediate(s1)
        clearImmediate(s2)
      }
    }
  : (socketWeakRef, opts) => {
      if (!opts.timeout) {
        return noop
      }

      let s1 = null
      const fastTimer = timers.setFastTimeout(() => {
      // setImmediate is added to make sure that we prioritize socket error events over timeouts
        s1 = setImmediate(() => {
          onConnectTimeout(socketWeakRef.deref(), opts)
        })
      }, opts.timeout)
      return () => {
        timers.clearFastTimeout(fastTimer)
        clearImmediate(s1)
      }
    }

/**
 * @param {net.Socket} socket
 * @param {object} opts
 * @param {number} opts.timeout
 * @param {string} opts.hostname
 * @param {number} opts.port
 */
function onConnectTimeout (socket, opts) {
  // The socket could be already garbage collected
  if (socket == null) {
    return
  }

  let message = 'Connect Timeout Error'
  if (Array.isArray(socket.autoSelectFamilyAttemptedAddresses)) {
    message += ` (attempted addresses: ${socket.autoSelectFamilyAttemptedAddresses.join(', ')},`
  } else {
    message += ` (attempted address: ${opts.hostname}:${opts.port},`
  }

  message += ` timeout: ${opts.timeout}ms)`

  destroy(socket, new ConnectTimeoutError(message))
}

/**
 * @param {string} urlString
 * @returns {string}
 */
function getProtocolFromUrlString (urlString) {
  if (
    urlString[0] === 'h' &&
    urlString[1] === 't' &&
    urlString[2] === 't' &&
    urlString[3] === 'p'
  ) {
    switch (urlString[4]) {
      case ':':
        return 'http:'
      case 's':
        if (urlString[5] === ':') {
          return 'https:'
        }
    }
  }
  // fallback if none of the usual suspects
  return urlString.slice(0, urlString.indexOf(':') + 1)
}

const kEnumerableProperty = Object.create(null)
kEnumerableProperty.enumerable = true

const normalizedMethodRecordsBase = {
  delete: 'DELETE',
  DELETE: 'DELETE',
  get: 'GET',
  GET: 'GET',
  head: 'HEAD',
  HEAD: 'HEAD',
  options: 'OPTIONS',
  OPTIONS: 'OPTIONS',
  post: 'POST',
  POST: 'POST',
  put: 'PUT',
  PUT: 'PUT'
}

const normalizedMethodRecords = {
  ...normalizedMethodRecordsBase,
  patch: 'patch',
  PATCH: 'PATCH'
}

// Note: object prototypes should not be able to be referenced. e.g. `Object#hasOwnProperty`.
Object.setPrototypeOf(normalizedMethodRecordsBase, null)
Object.setPrototypeOf(normalizedMethodRecords, null)

module.exports = {
  kEnumerableProperty,
  isDisturbed,
  isBlobLike,
  parseOrigin,
  parseURL,
  getServerName,
  isStream,
  isIterable,
  hasSafeIterator,
  isAsyncIterable,
  isDestroyed,
  headerNameToString,
  bufferToLowerCasedHeaderName,
  addListener,
  removeAllListeners,
  errorRequest,
  parseRawHeaders,
  toRawHeaders,
  encodeRawHeaders,
  parseHeaders,
  parseKeepAliveTimeout,
  destroy,
  bodyLength,
  deepClone,
  ReadableStreamFrom,
  isBuffer,
  assertRequestHandler,
  getSocketInfo,
  isFormDataLike,
  pathHasQueryOrFragment,
  serializePathWithQuery,
  addAbortListener,
  isValidHTTPToken,
  isValidHeaderValue,
  isTokenCharCode,
  parseRangeHeader,
  normalizedMethodRecordsBase,
  normalizedMethodRecords,
  isValidPort,
  isHttpOrHttpsPrefixed,
  nodeMajor,
  nodeMinor,
  safeHTTPMethods: Object.freeze(['GET', 'HEAD', 'OPTIONS', 'TRACE']),
  wrapRequestBody,
  setupConnectTimeout,
  getProtocolFromUrlString
}


/***/ }),

/***/ 7405:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const { InvalidArgumentError, MaxOriginsReachedError } = __nccwpck_require__(8707)
const { kClients, kRunning, kClose, kDestroy, kDispatch, kUrl } = __nccwpck_require__(6443)
const DispatcherBase = __nccwpck_require__(1841)
const Pool = __nccwpck_require__(628)
const Client = __nccwpck_require__(3701)
const util = __nccwpck_require__(3440)

const kOnConnect = Symbol('onConnect')
const kOnDisconnect = Symbol('onDisconnect')
const kOnConnectionError = Symbol('onConnectionError')
const kOnDrain = Symbol('onDrain')
const kFactory = Symbol('factory')
const kOptions = Symbol('options')
const kOrigins = Symbol('origins')

function defaultFactory (origin, opts) {
  return opts && opts.connections === 1
    ? new Client(origin, opts)
    : new Pool(origin, opts)
}

class Agent extends DispatcherBase {
  constructor ({ factory = defaultFactory, maxOrigins = Infinity, connect, tls, ...options } = {}) {
    if (typeof factory !== 'function') {
      throw new InvalidArgumentError('factory must be a function.')
    }

    if (connect != null && typeof connect !== 'function' && typeof connect !== 'object') {
      throw new InvalidArgumentError('connect must be a function or an object')
    }

    if (typeof maxOrigins !== 'number' || Number.isNaN(maxOrigins) || maxOrigins <= 0) {
      throw new InvalidArgumentError('maxOrigins must be a number greater than 0')
    }

    super(options)

    if (connect && typeof connect !== 'function') {
      connect = { ...connect }
    }

    if (tls && typeof tls !== 'function') {
      tls = { ...tls }
    }

    this[kOptions] = { ...util.deepClone(options), maxOrigins, connect, tls }
    this[kFactory] = factory
    this[kClients] = new Map()
    this[kOrigins] = new Set()

    this[kOnDrain] = (origin, targets) => {
      this.emit('drain', origin, [this, ...targets])
    }

    this[kOnConnect] = (origin, targets) => {
      this.emit('connect', origin, [this, ...targets])
    }

    this[kOnDisconnect] = (origin, targets, err) => {
      this.emit('disconnect', origin, [this, ...targets], err)
    }

    this[kOnConnectionError] = (origin, targets, err) => {
      this.emit('connectionError', origin, [this, ...targets], err)
    }
  }

  get [kRunning] () {
    let ret = 0
    for (const { dispatcher } of this[kClients].values()) {
      ret += dispatcher[kRunning]
    }
    return ret
  }

  [kDispatch] (opts, handler) {
    let key
    if (opts.origin && (typeof opts.origin === 'string' || opts.origin instanceof URL)) {
      key = String(opts.origin)
    } else {
      throw new InvalidArgumentError('opts.origin must be a non-empty string or URL.')
    }

    if (this[kOrigins].size >= this[kOptions].maxOrigins && !this[kOrigins].has(key)) {
      throw new MaxOriginsReachedError()
    }

    const result = this[kClients].get(key)
    let dispatcher = result && result.dispatcher
    if (!dispatcher) {
      const closeClientIfUnused = (connected) => {
        const result = this[kClients].get(key)
        if (result) {
          if (connected) result.count -= 1
          if (result.count <= 0) {
            this[kClients].delete(key)
            if (!result.dispatcher.destroyed) {
              result.dispatcher.close()
            }
          }
          this[kOrigins].delete(key)
        }
      }
      dispatcher = this[kFactory](opts.origin, this[kOptions])
        .on('drain', this[kOnDrain])
        .on('connect', (origin, targets) => {
          const result = this[kClients].get(key)
          if (result) {
            result.count += 1
          }
          this[kOnConnect](origin, targets)
        })
        .on('disconnect', (origin, targets, err) => {
          closeClientIfUnused(true)
          this[kOnDisconnect](origin, targets, err)
        })
        .on('connectionError', (origin, targets, err) => {
          closeClientIfUnused(false)
          this[kOnConnectionError](origin, targets, err)
        })

      this[kClients].set(key, { count: 0, dispatcher })
      this[kOrigins].add(key)
    }

    return dispatcher.dispatch(opts, handler)
  }

  [kClose] () {
    const closePromises = []
    for (const { dispatcher } of this[kClients].values()) {
      closePromises.push(dispatcher.close())
    }
    this[kClients].clear()

    return Promise.all(closePromises)
  }

  [kDestroy] (err) {
    const destroyPromises = []
    for (const { dispatcher } of this[kClients].values()) {
      destroyPromises.push(dispatcher.destroy(err))
    }
    this[kClients].clear()

    return Promise.all(destroyPromises)
  }

  get stats () {
    const allClientStats = {}
    for (const { dispatcher } of this[kClients].values()) {
      if (dispatcher.stats) {
        allClientStats[dispatcher[kUrl].origin] = dispatcher.stats
      }
    }
    return allClientStats
  }
}

module.exports = Agent


/***/ }),

/***/ 637:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



/* global WebAssembly */

const assert = __nccwpck_require__(4589)
const util = __nccwpck_require__(3440)
const { channels } = __nccwpck_require__(2414)
const timers = __nccwpck_require__(6603)
const {
  RequestContentLengthMismatchError,
  ResponseContentLengthMismatchError,
  RequestAbortedError,
  InvalidArgumentError,
  HeadersTimeoutError,
  HeadersOverflowError,
  SocketError,
  InformationalError,
  BodyTimeoutError,
  HTTPParserError,
  ResponseExceededMaxSizeError
} = __nccwpck_require__(8707)
const {
  kUrl,
  kReset,
  kClient,
  kParser,
  kBlocking,
  kRunning,
  kPending,
  kSize,
  kWriting,
  kQueue,
  kNoRef,
  kKeepAliveDefaultTimeout,
  kHostHeader,
  kPendingIdx,
  kRunningIdx,
  kError,
  kPipelining,
  kSocket,
  kKeepAliveTimeoutValue,
  kMaxHeadersSize,
  kKeepAliveMaxTimeout,
  kKeepAliveTimeoutThreshold,
  kHeadersTimeout,
  kBodyTimeout,
  kStrictContentLength,
  kMaxRequests,
  kCounter,
  kMaxResponseSize,
  kOnError,
  kResume,
  kHTTPContext,
  kClosed
} = __nccwpck_require__(6443)

const constants = __nccwpck_require__(2824)
const EMPTY_BUF = Buffer.alloc(0)
const FastBuffer = Buffer[Symbol.species]
const removeAllListeners = util.removeAllListeners
const kIdleSocketValidation = Symbol('kIdleSocketValidation')
const kIdleSocketValidationTimeout = Symbol('kIdleSocketValidationTimeout')
const kSocketUsed = Symbol('kSocketUsed')
const kTypeOfService = Symbol('kTypeOfService')

let extractBody

function lazyllhttp () {
  const llhttpWasmData = process.env.JEST_WORKER_ID ? __nccwpck_require__(3870) : undefined

  let mod

  // We disable wasm SIMD on older versions of Node.js on ppc64 that are broken on Power >=9 architectures.
  let useWasmSIMD = true
  if (process.arch === 'ppc64') {
    const [major, minor] = process.versions.node.split('.').map(n => parseInt(n, 10))
    if (major < 24 || (major === 24 && minor < 12)) {
      useWasmSIMD = false
    }
  }
  // The Env Variable UNDICI_NO_WASM_SIMD allows explicitly overriding the default behavior
  if (process.env.UNDICI_NO_WASM_SIMD === '1') {
    useWasmSIMD = false
  } else if (process.env.UNDICI_NO_WASM_SIMD === '0') {
    useWasmSIMD = true
  }

  if (useWasmSIMD) {
    try {
      mod = new WebAssembly.Module(__nccwpck_require__(3434))
    } catch {
    }
  }

  if (!mod) {
    // We could check if the error was caused by the simd option not
    // being enabled, but the occurring of this other error
    // * https://github.com/emscripten-core/emscripten/issues/11495
    // got me to remove that check to avoid breaking Node 12.
    mod = new WebAssembly.Module(llhttpWasmData || __nccwpck_require__(3870))
  }

  return new WebAssembly.Instance(mod, {
    env: {
      /**
       * @param {number} p
       * @param {number} at
       * @param {number} len
       * @returns {number}
       */
      wasm_on_url: (p, at, len) => {
        return 0
      },
      /**
       * @param {number} p
       * @param {number} at
       * @param {number} len
       * @returns {number}
       */
      wasm_on_status: (p, at, len) => {
        assert(currentParser.ptr === p)
        const start = at - currentBufferPtr + currentBufferRef.byteOffset
        return currentParser.onStatus(new FastBuffer(currentBufferRef.buffer, start, len))
      },
      /**
       * @param {number} p
       * @returns {number}
       */
      wasm_on_message_begin: (p) => {
        assert(currentParser.ptr === p)
        return currentParser.onMessageBegin()
      },
      /**
       * @param {number} p
       * @param {number} at
       * @param {number} len
       * @returns {number}
       */
      wasm_on_header_field: (p, at, len) => {
        assert(currentParser.ptr === p)
        const start = at - currentBufferPtr + currentBufferRef.byteOffset
        return currentParser.onHeaderField(new FastBuffer(currentBufferRef.buffer, start, len))
      },
      /**
       * @param {number} p
       * @param {number} at
       * @param {number} len
       * @returns {number}
       */
      wasm_on_header_value: (p, at, len) => {
        assert(currentParser.ptr === p)
        const start = at - currentBufferPtr + currentBufferRef.byteOffset
        return currentParser.onHeaderValue(new FastBuffer(currentBufferRef.buffer, start, len))
      },
      /**
       * @param {number} p
       * @param {number} statusCode
       * @param {0|1} upgrade
       * @param {0|1} shouldKeepAlive
       * @returns {number}
       */
      wasm_on_headers_complete: (p, statusCode, upgrade, shouldKeepAlive) => {
        assert(currentParser.ptr === p)
        return currentParser.onHeadersComplete(statusCode, upgrade === 1, shouldKeepAlive === 1)
      },
      /**
       * @param {number} p
       * @param {number} at
       * @param {number} len
       * @returns {number}
       */
      wasm_on_body: (p, at, len) => {
        assert(currentParser.ptr === p)
        const start = at - currentBufferPtr + currentBufferRef.byteOffset
        return currentParser.onBody(new FastBuffer(currentBufferRef.buffer, start, len))
      },
      /**
       * @param {number} p
       * @returns {number}
       */
      wasm_on_message_complete: (p) => {
        assert(currentParser.ptr === p)
        return currentParser.onMessageComplete()
      }

    }
  })
}

let llhttpInstance = null

/**
 * @type {Parser|null}
 */
let currentParser = null
let currentBufferRef = null
/**
 * @type {number}
 */
let currentBufferSize = 0
let currentBufferPtr = null

const USE_NATIVE_TIMER = 0
const USE_FAST_TIMER = 1

// Use fast timers for headers and body to take eventual event loop
// latency into account.
const TIMEOUT_HEADERS = 2 | USE_FAST_TIMER
const TIMEOUT_BODY = 4 | USE_FAST_TIMER

// Use native timers to ignore event loop latency for keep-alive
// handling.
const TIMEOUT_KEEP_ALIVE = 8 | USE_NATIVE_TIMER

class Parser {
  /**
     * @param {import('./client.js')} client
     * @param {import('net').Socket} socket
     * @param {*} llhttp
     */
  constructor (client, socket, { exports }) {
    this.llhttp = exports
    this.ptr = this.llhttp.llhttp_alloc(constants.TYPE.RESPONSE)
    this.client = client
    /**
     * @type {import('net').Socket}
     */
    this.socket = socket
    this.timeout = null
    this.timeoutWeakRef = new WeakRef(this)
    this.timeoutValue = null
    this.timeoutType = null
    this.statusCode = 0
    this.statusText = ''
    this.upgrade = false
    this.headers = []
    this.headersSize = 0
    this.headersMaxSize = client[kMaxHeadersSize]
    this.shouldKeepAlive = false
    this.paused = false
    this.resume = this.resume.bind(this)

    this.bytesRead = 0

    this.keepAlive = ''
    this.contentLength = ''
    this.connection = ''
    this.maxResponseSize = client[kMaxResponseSize]
  }

  setTimeout (delay, type) {
    // If the existing timer and the new timer are of different timer type
    // (fast or native) or have different delay, we need to clear the existing
    // timer and set a new one.
    if (
      delay !== this.timeoutValue ||
      (type & USE_FAST_TIMER) ^ (this.timeoutType & USE_FAST_TIMER)
    ) {
      // If a timeout is already set, clear it with clearTimeout of the fast
      // timer implementation, as it can clear fast and native timers.
      if (this.timeout) {
        timers.clearTimeout(this.timeout)
        this.timeout = null
      }

      if (delay) {
        if (type & USE_FAST_TIMER) {
          this.timeout = timers.setFastTimeout(onParserTimeout, delay, this.timeoutWeakRef)
        } else {
          this.timeout = setTimeout(onParserTimeout, delay, this.timeoutWeakRef)
          this.timeout?.unref()
        }
      }

      this.timeoutValue = delay
    } else if (this.timeout) {
      if (this.timeout.refresh) {
        this.timeout.refresh()
      }
    }

    this.timeoutType = type
  }

  resume () {
    if (this.socket.destroyed || !this.paused) {
      return
    }

    assert(this.ptr != null)
    assert(currentParser === null)

    this.llhttp.llhttp_resume(this.ptr)

    assert(this.timeoutType === TIMEOUT_BODY)
    if (this.timeout) {
      if (this.timeout.refresh) {
        this.timeout.refresh()
      }
    }

    this.paused = false
    this.execute(this.socket.read() || EMPTY_BUF) // Flush parser.
    this.readMore()
  }

  readMore () {
    while (!this.paused && this.ptr) {
      const chunk = this.socket.read()
      if (chunk === null) {
        break
      }
      this.execute(chunk)
    }
  }

  /**
   * @param {Buffer} chunk
   */
  execute (chunk) {
    assert(currentParser === null)
    assert(this.ptr != null)
    assert(!this.paused)

    const { socket, llhttp } = this

    // Allocate a new buffer if the current buffer is too small.
    if (chunk.length > currentBufferSize) {
      if (currentBufferPtr) {
        llhttp.free(currentBufferPtr)
      }
      // Allocate a buffer that is a multiple of 4096 bytes.
      currentBufferSize = Math.ceil(chunk.length / 4096) * 4096
      currentBufferPtr = llhttp.malloc(currentBufferSize)
    }

    new Uint8Array(llhttp.memory.buffer, currentBufferPtr, currentBufferSize).set(chunk)

    // Call `execute` on the wasm parser.
    // We pass the `llhttp_parser` pointer address, the pointer address of buffer view data,
    // and finally the length of bytes to parse.
    // The return value is an error code or `constants.ERROR.OK`.
    try {
      let ret

      try {
        currentBufferRef = chunk
        currentParser = this
        ret = llhttp.llhttp_execute(this.ptr, currentBufferPtr, chunk.length)
      } finally {
        currentParser = null
        currentBufferRef = null
      }

      if (ret !== constants.ERROR.OK) {
        const data = chunk.subarray(llhttp.llhttp_get_error_pos(this.ptr) - currentBufferPtr)

        if (ret === constants.ERROR.PAUSED_UPGRADE) {
          this.onUpgrade(data)
        } else if (ret === constants.ERROR.PAUSED) {
          this.paused = true
          socket.unshift(data)
        } else {
          throw this.createError(ret, data)
        }
      }
    } catch (err) {
      util.destroy(socket, err)
    }
  }

  finish () {
    assert(currentParser === null)
    assert(this.ptr != null)
    assert(!this.paused)

    const { llhttp } = this

    let ret

    try {
      currentParser = this
      ret = llhttp.llhttp_finish(this.ptr)
    } finally {
      currentParser = null
    }

    if (ret === constants.ERROR.OK) {
      return null
    }

    if (ret === constants.ERROR.PAUSED || ret === constants.ERROR.PAUSED_UPGRADE) {
      this.paused = true
      return null
    }

    return this.createError(ret, EMPTY_BUF)
  }

  createError (ret, data) {
    const { llhttp, contentLength, bytesRead } = this

    if (contentLength && bytesRead !== parseInt(contentLength, 10)) {
      return new ResponseContentLengthMismatchError()
    }

    const ptr = llhttp.llhttp_get_error_reason(this.ptr)
    let message = ''
    if (ptr) {
      const len = new Uint8Array(llhttp.memory.buffer, ptr).indexOf(0)
      message =
        'Response does not match the HTTP/1.1 protocol (' +
        Buffer.from(llhttp.memory.buffer, ptr, len).toString() +
        ')'
    }

    return new HTTPParserError(message, constants.ERROR[ret], data)
  }

  destroy () {
    assert(currentParser === null)
    assert(this.ptr != null)

    this.llhttp.llhttp_free(this.ptr)
    this.ptr = null

    this.timeout && timers.clearTimeout(this.timeout)
    this.timeout = null
    this.timeoutValue = null
    this.timeoutType = null

    this.paused = false
  }

  /**
   * @param {Buffer} buf
   * @returns {0}
   */
  onStatus (buf) {
    this.statusText = buf.toString()
    return 0
  }

  /**
   * @returns {0|-1}
   */
  onMessageBegin () {
    const { socket, client } = this

    if (socket.destroyed) {
      return -1
    }

    if (client[kRunning] === 0) {
      util.destroy(socket, new SocketError('bad response', util.getSocketInfo(socket)))
      return -1
    }

    const request = client[kQueue][client[kRunningIdx]]
    if (!request) {
      return -1
    }
    request.onResponseStarted()

    return 0
  }

  /**
   * @param {Buffer} buf
   * @returns {number}
   */
  onHeaderField (buf) {
    const len = this.headers.length

    if ((len & 1) === 0) {
      this.headers.push(buf)
    } else {
      this.headers[len - 1] = Buffer.concat([this.headers[len - 1], buf])
    }

    this.trackHeader(buf.length)

    return 0
  }

  /**
   * @param {Buffer} buf
   * @returns {number}
   */
  onHeaderValue (buf) {
    let len = this.headers.length

    if ((len & 1) === 1) {
      this.headers.push(buf)
      len += 1
    } else {
      this.headers[len - 1] = Buffer.concat([this.headers[len - 1], buf])
    }

    const key = this.headers[len - 2]
    if (key.length === 10) {
      const headerName = util.bufferToLowerCasedHeaderName(key)
      if (headerName === 'keep-alive') {
        this.keepAlive += buf.toString()
      } else if (headerName === 'connection') {
        this.connection += buf.toString()
      }
    } else if (key.length === 14 && util.bufferToLowerCasedHeaderName(key) === 'content-length') {
      this.contentLength += buf.toString()
    }

    this.trackHeader(buf.length)

    return 0
  }

  /**
   * @param {number} len
   */
  trackHeader (len) {
    this.headersSize += len
    if (this.headersSize >= this.headersMaxSize) {
      util.destroy(this.socket, new HeadersOverflowError())
    }
  }

  /**
   * @param {Buffer} head
   */
  onUpgrade (head) {
    const { upgrade, client, socket, headers, statusCode, statusText } = this

    assert(upgrade)
    assert(client[kSocket] === socket)
    assert(!socket.destroyed)
    assert(!this.paused)
    assert((headers.length & 1) === 0)

    const request = client[kQueue][client[kRunningIdx]]
    assert(request)
    assert(request.upgrade || request.method === 'CONNECT')

    this.statusCode = 0
    this.statusText = ''
    this.shouldKeepAlive = false

    this.headers = []
    this.headersSize = 0

    socket.unshift(head)

    socket[kParser].destroy()
    socket[kParser] = null

    socket[kClient] = null
    socket[kError] = null

    removeAllListeners(socket)

    client[kSocket] = null
    client[kHTTPContext] = null // TODO (fix): This is hacky...
    client[kQueue][client[kRunningIdx]++] = null
    client.emit('disconnect', client[kUrl], [client], new InformationalError('upgrade'))

    try {
      request.onUpgrade(statusCode, headers, socket, statusText)
    } catch (err) {
      util.errorRequest(client, request, err)
      util.destroy(socket, err)
    }

    client[kResume]()
  }

  /**
   * @param {number} statusCode
   * @param {boolean} upgrade
   * @param {boolean} shouldKeepAlive
   * @returns {number}
   */
  onHeadersComplete (statusCode, upgrade, shouldKeepAlive) {
    const { client, socket, headers, statusText } = this

    if (socket.destroyed) {
      return -1
    }

    if (client[kRunning] === 0) {
      util.destroy(socket, new SocketError('bad response', util.getSocketInfo(socket)))
      return -1
    }

    const request = client[kQueue][client[kRunningIdx]]

    if (!request) {
      return -1
    }

    assert(!this.upgrade)
    assert(this.statusCode < 200)

    if (statusCode === 100) {
      util.destroy(socket, new SocketError('bad response', util.getSocketInfo(socket)))
      return -1
    }

    /* this can only happen if server is misbehaving */
    if (upgrade && !request.upgrade) {
      util.destroy(socket, new SocketError('bad upgrade', util.getSocketInfo(socket)))
      return -1
    }

    assert(this.timeoutType === TIMEOUT_HEADERS)

    this.statusCode = statusCode
    this.shouldKeepAlive = (
      shouldKeepAlive ||
      // Override llhttp value which does not allow keepAlive for HEAD.
      (request.method === 'HEAD' && !socket[kReset] && this.connection.toLowerCase() === 'keep-alive')
    )

    if (this.statusCode >= 200) {
      const bodyTimeout = request.bodyTimeout != null
        ? request.bodyTimeout
        : client[kBodyTimeout]
      this.setTimeout(bodyTimeout, TIMEOUT_BODY)
    } else if (this.timeout) {
      if (this.timeout.refresh) {
        this.timeout.refresh()
      }
    }

    if (request.method === 'CONNECT') {
      assert(client[kRunning] === 1)
      this.upgrade = true
      return 2
    }

    if (upgrade) {
      assert(client[kRunning] === 1)
      this.upgrade = true
      return 2
    }

    assert((this.headers.length & 1) === 0)
    this.headers = []
    this.headersSize = 0

    if (this.shouldKeepAlive && client[kPipelining]) {
      const keepAliveTimeout = this.keepAlive ? util.parseKeepAliveTimeout(this.keepAlive) : null

      if (keepAliveTimeout != null) {
        const timeout = Math.min(
          keepAliveTimeout - client[kKeepAliveTimeoutThreshold],
          client[kKeepAliveMaxTimeout]
        )
        if (timeout <= 0) {
          socket[kReset] = true
        } else {
          client[kKeepAliveTimeoutValue] = timeout
        }
      } else {
        client[kKeepAliveTimeoutValue] = client[kKeepAliveDefaultTimeout]
      }
    } else {
      // Stop more requests from being dispatched.
      socket[kReset] = true
    }

    const pause = request.onHeaders(statusCode, headers, this.resume, statusText) === false

    if (request.aborted) {
      return -1
    }

    if (request.method === 'HEAD') {
      return 1
    }

    if (statusCode < 200) {
      return 1
    }

    if (socket[kBlocking]) {
      socket[kBlocking] = false
      client[kResume]()
    }

    return pause ? constants.ERROR.PAUSED : 0
  }

  /**
   * @param {Buffer} buf
   * @returns {number}
   */
  onBody (buf) {
    const { client, socket, statusCode, maxResponseSize } = this

    if (socket.destroyed) {
      return -1
    }

    const request = client[kQueue][client[kRunningIdx]]
    assert(request)

    assert(this.timeoutType === TIMEOUT_BODY)
    if (this.timeout) {
      if (this.timeout.refresh) {
        this.timeout.refresh()
      }
    }

    assert(statusCode >= 200)

    if (maxResponseSize > -1 && this.bytesRead + buf.length > maxResponseSize) {
      util.destroy(socket, new ResponseExceededMaxSizeError())
      return -1
    }

    this.bytesRead += buf.length

    if (request.onData(buf) === false) {
      return constants.ERROR.PAUSED
    }

    return 0
  }

  /**
   * @returns {number}
   */
  onMessageComplete () {
    const { client, socket, statusCode, upgrade, headers, contentLength, bytesRead, shouldKeepAlive } = this

    if (socket.destroyed && (!statusCode || shouldKeepAlive)) {
      return -1
    }

    if (upgrade) {
      return 0
    }

    assert(statusCode >= 100)
    assert((this.headers.length & 1) === 0)

    const request = client[kQueue][client[kRunningIdx]]
    assert(request)

    this.statusCode = 0
    this.statusText = ''
    this.bytesRead = 0
    this.contentLength = ''
    this.keepAlive = ''
    this.connection = ''

    this.headers = []
    this.headersSize = 0

    if (statusCode < 200) {
      return 0
    }

    if (request.method !== 'HEAD' && contentLength && bytesRead !== parseInt(contentLength, 10)) {
      util.destroy(socket, new ResponseContentLengthMismatchError())
      return -1
    }

    request.onComplete(headers)

    client[kQueue][client[kRunningIdx]++] = null
    socket[kSocketUsed] = client[kPending] === 0

    if (socket[kWriting]) {
      assert(client[kRunning] === 0)
      // Response completed before request.
      util.destroy(socket, new InformationalError('reset'))
      return constants.ERROR.PAUSED
    } else if (!shouldKeepAlive) {
      util.destroy(socket, new InformationalError('reset'))
      return constants.ERROR.PAUSED
    } else if (socket[kReset] && client[kRunning] === 0) {
      // Destroy socket once all requests have completed.
      // The request at the tail of the pipeline is the one
      // that requested reset and no further requests should
      // have been queued since then.
      util.destroy(socket, new InformationalError('reset'))
      return constants.ERROR.PAUSED
    } else if (client[kPipelining] == null || client[kPipelining] === 1) {
      // We must wait a full event loop cycle to reuse this socket to make sure
      // that non-spec compliant servers are not closing the connection even if they
      // said they won't.
      setImmediate(client[kResume])
    } else {
      client[kResume]()
    }

    return 0
  }
}

function onParserTimeout (parserWeakRef) {
  const parser = parserWeakRef.deref()
  if (!parser) {
    return
  }

  const { socket, timeoutType, client, paused } = parser

  if (timeoutType === TIMEOUT_HEADERS) {
    if (!socket[kWriting] || socket.writableNeedDrain || client[kRunning] > 1) {
      assert(!paused, 'cannot be paused while waiting for headers')
      util.destroy(socket, new HeadersTimeoutError())
    }
  } else if (timeoutType === TIMEOUT_BODY) {
    if (!paused) {
      util.destroy(socket, new BodyTimeoutError())
    }
  } else if (timeoutType === TIMEOUT_KEEP_ALIVE) {
    assert(client[kRunning] === 0 && client[kKeepAliveTimeoutValue])
    util.destroy(socket, new InformationalError('socket idle timeout'))
  }
}

/**
 * @param {import ('./client.js')} client
 * @param {import('net').Socket} socket
 * @returns
 */
function connectH1 (client, socket) {
  client[kSocket] = socket

  if (!llhttpInstance) {
    llhttpInstance = lazyllhttp()
  }

  if (socket.errored) {
    throw socket.errored
  }

  if (socket.destroyed) {
    throw new SocketError('destroyed')
  }

  socket[kNoRef] = false
  socket[kWriting] = false
  socket[kReset] = false
  socket[kBlocking] = false
  socket[kIdleSocketValidation] = 0
  socket[kIdleSocketValidationTimeout] = null
  socket[kSocketUsed] = false
  socket[kParser] = new Parser(client, socket, llhttpInstance)

  util.addListener(socket, 'error', onHttpSocketError)
  util.addListener(socket, 'readable', onHttpSocketReadable)
  util.addListener(socket, 'end', onHttpSocketEnd)
  util.addListener(socket, 'close', onHttpSocketClose)

  socket[kClosed] = false
  socket.on('close', onSocketClose)

  return {
    version: 'h1',
    defaultPipelining: 1,
    write (request) {
      return writeH1(client, request)
    },
    resume () {
      resumeH1(client)
    },
    /**
     * @param {Error|undefined} err
     * @param {() => void} callback
     */
    destroy (err, callback) {
      if (socket[kClosed]) {
        queueMicrotask(callback)
      } else {
        socket.on('close', callback)
        socket.destroy(err)
      }
    },
    /**
     * @returns {boolean}
     */
    get destroyed () {
      return socket.destroyed
    },
    /**
     * @param {import('../core/request.js')} request
     * @returns {boolean}
     */
    busy (request) {
      if (socket[kWriting] || socket[kReset] || socket[kBlocking] || socket[kIdleSocketValidation] === 1) {
        return true
      }

      if (request) {
        if (client[kRunning] > 0 && !request.idempotent) {
          // Non-idempotent request cannot be retried.
          // Ensure that no other requests are inflight and
          // could cause failure.
          return true
        }

        if (client[kRunning] > 0 && (request.upgrade || request.method === 'CONNECT')) {
          // Don't dispatch an upgrade until all preceding requests have completed.
          // A misbehaving server might upgrade the connection before all pipelined
          // request has completed.
          return true
        }

        if (client[kRunning] > 0 && util.bodyLength(request.body) !== 0 &&
          (util.isStream(request.body) || util.isAsyncIterable(request.body) || util.isFormDataLike(request.body))) {
          // Request with stream or iterator body can error while other requests
          // are inflight and indirectly error those as well.
          // Ensure this doesn't happen by waiting for inflight
          // to complete before dispatching.

          // Request with stream or iterator body cannot be retried.
          // Ensure that no other requests are inflight and
          // could cause failure.
          return true
        }
      }

      return false
    }
  }
}

function onHttpSocketError (err) {
  const parser = this[kParser]

  // On Mac OS, we get an ECONNRESET even if there is a full body to be forwarded
  // to the user.
  if (err.code === 'ECONNRESET' && parser.statusCode && !parser.shouldKeepAlive) {
    const parserErr = parser.finish()
    if (parserErr) {
      this[kError] = parserErr
      this[kClient][kOnError](parserErr)
    }
    return
  }

  this[kError] = err

  this[kClient][kOnError](err)
}

function onHttpSocketReadable () {
  this[kParser]?.readMore()
}

function onHttpSocketEnd () {
  const parser = this[kParser]

  if (parser.statusCode && !parser.shouldKeepAlive) {
    const parserErr = parser.finish()
    if (parserErr) {
      util.destroy(this, parserErr)
    }
    return
  }

  util.destroy(this, new SocketError('other side closed', util.getSocketInfo(this)))
}

function onHttpSocketClose () {
  const parser = this[kParser]

  clearIdleSocketValidation(this)

  if (parser) {
    if (!this[kError] && parser.statusCode && !parser.shouldKeepAlive) {
      this[kError] = parser.finish() || this[kError]
    }

    this[kParser].destroy()
    this[kParser] = null
  }

  const err = this[kError] || new SocketError('closed', util.getSocketInfo(this))

  const client = this[kClient]

  client[kSocket] = null
  client[kHTTPContext] = null // TODO (fix): This is hacky...

  if (client.destroyed) {
    assert(client[kPending] === 0)

    // Fail entire queue.
    const requests = client[kQueue].splice(client[kRunningIdx])
    for (let i = 0; i < requests.length; i++) {
      const request = requests[i]
      util.errorRequest(client, request, err)
    }
  } else if (client[kRunning] > 0 && err.code !== 'UND_ERR_INFO') {
    // Fail head of pipeline.
    const request = client[kQueue][client[kRunningIdx]]
    client[kQueue][client[kRunningIdx]++] = null

    util.errorRequest(client, request, err)
  }

  client[kPendingIdx] = client[kRunningIdx]

  assert(client[kRunning] === 0)

  client.emit('disconnect', client[kUrl], [client], err)

  client[kResume]()
}

function onSocketClose () {
  this[kClosed] = true
}

function clearIdleSocketValidation (socket) {
  if (socket[kIdleSocketValidationTimeout]) {
    clearImmediate(socket[kIdleSocketValidationTimeout])
    socket[kIdleSocketValidationTimeout] = null
  }

  socket[kIdleSocketValidation] = 0
}

function scheduleIdleSocketValidation (client, socket) {
  socket[kIdleSocketValidation] = 1
  // Yield to the check phase (after poll) so unsolicited bytes / FIN / RST
  // already pending on this idle keep-alive socket are processed before the
  // next request is written (GHSA-35p6-xmwp-9g52).
  //
  // setTimeout(0) pays Node's ~1ms timer floor on every sequential reuse
  // (#5493). setImmediate avoids that, but an *unref'd* Immediate lets poll
  // block for ~500ms when the event loop is otherwise idle (#5600 / #5606).
  // A ref'd Immediate both keeps the pending request alive and makes poll
  // return immediately — the hybrid those issues asked for.
  socket[kIdleSocketValidationTimeout] = setImmediate(() => {
    socket[kIdleSocketValidationTimeout] = null
    socket[kIdleSocketValidation] = 2

    if (client[kSocket] === socket && !socket.destroyed) {
      client[kResume]()
    }
  })
}

/**
 * @param {import('./client.js')} client
 */
function resumeH1 (client) {
  const socket = client[kSocket]

  if (socket && !socket.destroyed) {
    if (client[kSize] === 0) {
      if (!socket[kNoRef] && socket.unref) {
        socket.unref()
        socket[kNoRef] = true
      }
    } else if (socket[kNoRef] && socket.ref) {
      socket.ref()
      socket[kNoRef] = false
    }

    if (client[kRunning] === 0 && client[kPending] > 0 && socket[kSocketUsed]) {
      if (socket[kIdleSocketValidation] === 0) {
        scheduleIdleSocketValidation(client, socket)
        socket[kParser].readMore()
        if (socket.destroyed) {
          return
        }
        return
      }

      if (socket[kIdleSocketValidation] === 1) {
        socket[kParser].readMore()
        if (socket.destroyed) {
          return
        }
        return
      }
    }

    if (client[kRunning] === 0) {
      socket[kParser].readMore()
      if (socket.destroyed) {
        return
      }
    }

    if (client[kSize] === 0) {
      if (socket[kParser].timeoutType !== TIMEOUT_KEEP_ALIVE) {
        socket[kParser].setTimeout(client[kKeepAliveTimeoutValue], TIMEOUT_KEEP_ALIVE)
      }
    } else if (client[kRunning] > 0 && socket[kParser].statusCode < 200) {
      if (socket[kParser].timeoutType !== TIMEOUT_HEADERS) {
        const request = client[kQueue][client[kRunningIdx]]
        const headersTimeout = request.headersTimeout != null
          ? request.headersTimeout
          : client[kHeadersTimeout]
        socket[kParser].setTimeout(headersTimeout, TIMEOUT_HEADERS)
      }
    }
  }
}

// https://www.rfc-editor.org/rfc/rfc7230#section-3.3.2
function shouldSendContentLength (method) {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS' && method !== 'TRACE' && method !== 'CONNECT'
}

function setTypeOfService (socket, request) {
  if (typeof socket.setTypeOfService !== 'function') {
    return
  }

  const typeOfService = request.typeOfService

  if (typeOfService === undefined) {
    return
  }

  const currentTypeOfService = socket[kTypeOfService]

  if (currentTypeOfService === typeOfService) {
    return
  }

  try {
    socket.setTypeOfService(typeOfService)
    socket[kTypeOfService] = typeOfService
  } catch {
    // QoS marking is best-effort. setTypeOfService() can throw synchronously on
    // some platforms depending on socket state, but that must not abort the request.
  }
}

/**
 * @param {import('./client.js')} client
 * @param {import('../core/request.js')} request
 * @returns
 */
function writeH1 (client, request) {
  const { method, path, host, upgrade, blocking, reset } = request

  let { body, headers, contentLength } = request

  // https://tools.ietf.org/html/rfc7231#section-4.3.1
  // https://tools.ietf.org/html/rfc7231#section-4.3.2
  // https://tools.ietf.org/html/rfc7231#section-4.3.5

  // Sending a payload body on a request that does not
  // expect it can cause undefined behavior on some
  // servers and corrupt connection state. Do not
  // re-use the connection for further requests.

  const expectsPayload = (
    method === 'PUT' ||
    method === 'POST' ||
    method === 'PATCH' ||
    method === 'QUERY' ||
    method === 'PROPFIND' ||
    method === 'PROPPATCH'
  )

  if (util.isFormDataLike(body)) {
    if (!extractBody) {
      extractBody = (__nccwpck_require__(4492).extractBody)
    }

    const [bodyStream, contentType] = extractBody(body)
    if (request.contentType == null) {
      headers.push('content-type', contentType)
    }
    body = bodyStream.stream
    contentLength = bodyStream.length
  } else if (util.isBlobLike(body) && request.contentType == null) {
    const contentType = body.type
    if (contentType) {
      const contentTypeValue = `${contentType}`
      if (!util.isValidHeaderValue(contentTypeValue)) {
        util.errorRequest(client, request, new InvalidArgumentError('invalid content-type header'))
        return false
      }
      headers.push('content-type', contentTypeValue)
    }
  }

  if (body && typeof body.read === 'function') {
    // Try to read EOF in order to get length.
    body.read(0)
  }

  const bodyLength = util.bodyLength(body)

  contentLength = bodyLength ?? contentLength

  if (contentLength === null) {
    contentLength = request.contentLength
  }

  if (contentLength === 0 && !expectsPayload) {
    // https://tools.ietf.org/html/rfc7230#section-3.3.2
    // A user agent SHOULD NOT send a Content-Length header field when
    // the request message does not contain a payload body and the method
    // semantics do not anticipate such a body.

    contentLength = null
  }

  // https://github.com/nodejs/undici/issues/2046
  // A user agent may send a Content-Length header with 0 value, this should be allowed.
  if (shouldSendContentLength(method) && contentLength > 0 && request.contentLength !== null && request.contentLength !== contentLength) {
    if (client[kStrictContentLength]) {
      util.errorRequest(client, request, new RequestContentLengthMismatchError())
      return false
    }

    process.emitWarning(new RequestContentLengthMismatchError())
  }

  const socket = client[kSocket]
  clearIdleSocketValidation(socket)

  /**
   * @param {Error} [err]
   * @returns {void}
   */
  const abort = (err) => {
    if (request.aborted || request.completed) {
      return
    }

    util.errorRequest(client, request, err || new RequestAbortedError())

    util.destroy(body)
    util.destroy(socket, new InformationalError('aborted'))
  }

  try {
    request.onConnect(abort)
  } catch (err) {
    util.errorRequest(client, request, err)
  }

  if (request.aborted) {
    return false
  }

  if (method === 'HEAD') {
    // https://github.com/mcollina/undici/issues/258
    // Close after a HEAD request to interop with misbehaving servers
    // that may send a body in the response.

    socket[kReset] = true
  }

  if (upgrade || method === 'CONNECT') {
    // On CONNECT or upgrade, block pipeline from dispatching further
    // requests on this connection.

    socket[kReset] = true
  }

  if (reset != null) {
    socket[kReset] = reset
  }

  if (client[kMaxRequests] && socket[kCounter]++ >= client[kMaxRequests]) {
    socket[kReset] = true
  }

  if (blocking) {
    socket[kBlocking] = true
  }

  setTypeOfService(socket, request)

  let header = `${method} ${path} HTTP/1.1\r\n`

  if (typeof host === 'string') {
    header += `host: ${host}\r\n`
  } else {
    header += client[kHostHeader]
  }

  if (upgrade) {
    header += `connection: upgrade\r\nupgrade: ${upgrade}\r\n`
  } else if (client[kPipelining] && !socket[kReset]) {
    header += 'connection: keep-alive\r\n'
  } else {
    header += 'connection: close\r\n'
  }

  if (Array.isArray(headers)) {
    for (let n = 0; n < headers.length; n += 2) {
      const key = headers[n + 0]
      const val = headers[n + 1]

      if (Array.isArray(val)) {
        for (let i = 0; i < val.length; i++) {
          header += `${key}: ${val[i]}\r\n`
        }
      } else {
        header += `${key}: ${val}\r\n`
      }
    }
  }

  if (channels.sendHeaders.hasSubscribers) {
    channels.sendHeaders.publish({ request, headers: header, socket })
  }

  if (!body || bodyLength === 0) {
    writeBuffer(abort, null, client, request, socket, contentLength, header, expectsPayload)
  } else if (util.isBuffer(body)) {
    writeBuffer(abort, body, client, request, socket, contentLength, header, expectsPayload)
  } else if (util.isBlobLike(body)) {
    if (typeof body.stream === 'function') {
      writeIterable(abort, body.stream(), client, request, socket, contentLength, header, expectsPayload)
    } else {
      writeBlob(abort, body, client, request, socket, contentLength, header, expectsPayload)
    }
  } else if (util.isStream(body)) {
    writeStream(abort, body, client, request, socket, contentLength, header, expectsPayload)
  } else if (util.isIterable(body)) {
    writeIterable(abort, body, client, request, socket, contentLength, header, expectsPayload)
  } else {
    assert(false)
  }

  return true
}

/**
 * @param {AbortCallback} abort
 * @param {import('stream').Stream} body
 * @param {import('./client.js')} client
 * @param {import('../core/request.js')} request
 * @param {import('net').Socket} socket
 * @param {number} contentLength
 * @param {string} header
 * @param {boolean} expectsPayload
 */
function writeStream (abort, body, client, request, socket, contentLength, header, expectsPayload) {
  assert(contentLength !== 0 || client[kRunning] === 0, 'stream body cannot be pipelined')

  let finished = false

  const writer = new AsyncWriter({ abort, socket, request, contentLength, client, expectsPayload, header })

  /**
   * @param {Buffer} chunk
   * @returns {void}
   */
  const onData = function (chunk) {
    if (finished) {
      return
    }

    try {
      if (!writer.write(chunk) && this.pause) {
        this.pause()
      }
    } catch (err) {
      util.destroy(this, err)
    }
  }

  /**
   * @returns {void}
   */
  const onDrain = function () {
    if (finished) {
      return
    }

    if (body.resume) {
      body.resume()
    }
  }

  /**
   * @returns {void}
   */
  const onClose = function () {
    // 'close' might be emitted *before* 'error' for
    // broken streams. Wait a tick to avoid this case.
    queueMicrotask(() => {
      // It's only safe to remove 'error' listener after
      // 'close'.
      body.removeListener('error', onFinished)
    })

    if (!finished) {
      const err = new RequestAbortedError()
      queueMicrotask(() => onFinished(err))
    }
  }

  /**
   * @param {Error} [err]
   * @returns
   */
  const onFinished = function (err) {
    if (finished) {
      return
    }

    finished = true

    assert(socket.destroyed || (socket[kWriting] && client[kRunning] <= 1))

    socket
      .off('drain', onDrain)
      .off('error', onFinished)

    body
      .removeListener('data', onData)
      .removeListener('end', onFinished)
      .removeListener('close', onClose)

    if (!err) {
      try {
        writer.end()
      } catch (er) {
        err = er
      }
    }

    writer.destroy(err)

    if (err && (err.code !== 'UND_ERR_INFO' || err.message !== 'reset')) {
      util.destroy(body, err)
    } else {
      util.destroy(body)
    }
  }

  body
    .on('data', onData)
    .on('end', onFinished)
    .on('error', onFinished)
    .on('close', onClose)

  if (body.resume) {
    body.resume()
  }

  socket
    .on('drain', onDrain)
    .on('error', onFinished)

  if (body.errorEmitted ?? body.errored) {
    setImmediate(onFinished, body.errored)
  } else if (body.endEmitted ?? body.readableEnded) {
    setImmediate(onFinished, null)
  }

  if (body.closeEmitted ?? body.closed) {
    setImmediate(onClose)
  }
}

/**
 * @typedef AbortCallback
 * @type {Function}
 * @param {Error} [err]
 * @returns {void}
 */

/**
 * @param {AbortCallback} abort
 * @param {Uint8Array|null} body
 * @param {import('./client.js')} client
 * @param {import('../core/request.js')} request
 * @param {import('net').Socket} socket
 * @param {number} contentLength
 * @param {string} header
 * @param {boolean} expectsPayload
 * @returns {void}
 */
function writeBuffer (abort, body, client, request, socket, contentLength, header, expectsPayload) {
  try {
    if (!body) {
      if (contentLength === 0) {
        socket.write(`${header}content-length: 0\r\n\r\n`, 'latin1')
      } else {
        assert(contentLength === null, 'no body must not have content length')
        socket.write(`${header}\r\n`, 'latin1')
      }
    } else if (util.isBuffer(body)) {
      assert(contentLength === body.byteLength, 'buffer body must have content length')

      socket.cork()
      socket.write(`${header}content-length: ${contentLength}\r\n\r\n`, 'latin1')
      socket.write(body)
      socket.uncork()
      request.onBodySent(body)

      if (!expectsPayload && request.reset !== false) {
        socket[kReset] = true
      }
    }
    request.onRequestSent()

    client[kResume]()
  } catch (err) {
    abort(err)
  }
}

/**
 * @param {AbortCallback} abort
 * @param {Blob} body
 * @param {import('./client.js')} client
 * @param {import('../core/request.js')} request
 * @param {import('net').Socket} socket
 * @param {number} contentLength
 * @param {string} header
 * @param {boolean} expectsPayload
 * @returns {Promise<void>}
 */
async function writeBlob (abort, body, client, request, socket, contentLength, header, expectsPayload) {
  assert(contentLength === body.size, 'blob body must have content length')

  try {
    if (contentLength != null && contentLength !== body.size) {
      throw new RequestContentLengthMismatchError()
    }

    const buffer = Buffer.from(await body.arrayBuffer())

    socket.cork()
    socket.write(`${header}content-length: ${contentLength}\r\n\r\n`, 'latin1')
    socket.write(buffer)
    socket.uncork()

    request.onBodySent(buffer)
    request.onRequestSent()

    if (!expectsPayload && request.reset !== false) {
      socket[kReset] = true
    }

    client[kResume]()
  } catch (err) {
    abort(err)
  }
}

/**
 * @param {AbortCallback} abort
 * @param {Iterable} body
 * @param {import('./client.js')} client
 * @param {import('../core/request.js')} request
 * @param {import('net').Socket} socket
 * @param {number} contentLength
 * @param {string} header
 * @param {boolean} expectsPayload
 * @returns {Promise<void>}
 */
async function writeIterable (abort, body, client, request, socket, contentLength, header, expectsPayload) {
  assert(contentLength !== 0 || client[kRunning] === 0, 'iterator body cannot be pipelined')

  let callback = null
  function onDrain () {
    if (callback) {
      const cb = callback
      callback = null
      cb()
    }
  }

  const waitForDrain = () => new Promise((resolve, reject) => {
    assert(callback === null)

    if (socket[kError]) {
      reject(socket[kError])
    } else {
      callback = resolve
    }
  })

  socket
    .on('close', onDrain)
    .on('drain', onDrain)

  const writer = new AsyncWriter({ abort, socket, request, contentLength, client, expectsPayload, header })
  try {
    // It's up to the user to somehow abort the async iterable.
    for await (const chunk of body) {
      if (socket[kError]) {
        throw socket[kError]
      }

      if (!writer.write(chunk)) {
        await waitForDrain()
      }
    }

    writer.end()
  } catch (err) {
    writer.destroy(err)
  } finally {
    socket
      .off('close', onDrain)
      .off('drain', onDrain)
  }
}

class AsyncWriter {
  /**
   *
   * @param {object} arg
   * @param {AbortCallback} arg.abort
   * @param {import('net').Socket} arg.socket
   * @param {import('../core/request.js')} arg.request
   * @param {number} arg.contentLength
   * @param {import('./client.js')} arg.client
   * @param {boolean} arg.expectsPayload
   * @param {string} arg.header
   */
  constructor ({ abort, socket, request, contentLength, client, expectsPayload, header }) {
    this.socket = socket
    this.request = request
    this.contentLength = contentLength
    this.client = client
    this.bytesWritten = 0
    this.expectsPayload = expectsPayload
    this.header = header
    this.abort = abort

    socket[kWriting] = true
  }

  /**
   * @param {Buffer} chunk
   * @returns
   */
  write (chunk) {
    const { socket, request, contentLength, client, bytesWritten, expectsPayload, header } = this

    if (socket[kError]) {
      throw socket[kError]
    }

    if (socket.destroyed) {
      return false
    }

    const len = Buffer.byteLength(chunk)
    if (!len) {
      return true
    }

    // We should defer writing chunks.
    if (contentLength !== null && bytesWritten + len > contentLength) {
      if (client[kStrictContentLength]) {
        throw new RequestContentLengthMismatchError()
      }

      process.emitWarning(new RequestContentLengthMismatchError())
    }

    socket.cork()

    if (bytesWritten === 0) {
      if (!expectsPayload && request.reset !== false) {
        socket[kReset] = true
      }

      if (contentLength === null) {
        socket.write(`${header}transfer-encoding: chunked\r\n`, 'latin1')
      } else {
        socket.write(`${header}content-length: ${contentLength}\r\n\r\n`, 'latin1')
      }
    }

    if (contentLength === null) {
      socket.write(`\r\n${len.toString(16)}\r\n`, 'latin1')
    }

    this.bytesWritten += len

    const ret = socket.write(chunk)

    socket.uncork()

    request.onBodySent(chunk)

    if (!ret) {
      if (socket[kParser].timeout && socket[kParser].timeoutType === TIMEOUT_HEADERS) {
        if (socket[kParser].timeout.refresh) {
          socket[kParser].timeout.refresh()
        }
      }
    }

    return ret
  }

  /**
   * @returns {void}
   */
  end () {
    const { socket, contentLength, client, bytesWritten, expectsPayload, header, request } = this
    request.onRequestSent()

    socket[kWriting] = false

    if (socket[kError]) {
      throw socket[kError]
    }

    if (socket.destroyed) {
      return
    }

    if (bytesWritten === 0) {
      if (expectsPayload) {
        // https://tools.ietf.org/html/rfc7230#section-3.3.2
        // A user agent SHOULD send a Content-Length in a request message when
        // no Transfer-Encoding is sent and the request method defines a meaning
        // for an enclosed payload body.

        socket.write(`${header}content-length: 0\r\n\r\n`, 'latin1')
      } else {
        socket.write(`${header}\r\n`, 'latin1')
      }
    } else if (contentLength === null) {
      socket.write('\r\n0\r\n\r\n', 'latin1')
    }

    if (contentLength !== null && bytesWritten !== contentLength) {
      if (client[kStrictContentLength]) {
        throw new RequestContentLengthMismatchError()
      } else {
        process.emitWarning(new RequestContentLengthMismatchError())
      }
    }

    if (socket[kParser].timeout && socket[kParser].timeoutType === TIMEOUT_HEADERS) {
      if (socket[kParser].timeout.refresh) {
        socket[kParser].timeout.refresh()
      }
    }

    client[kResume]()
  }

  /**
   * @param {Error} [err]
   * @returns {void}
   */
  destroy (err) {
    const { socket, client, abort } = this

    socket[kWriting] = false

    if (err) {
      assert(client[kRunning] <= 1, 'pipeline should only contain this request')
      abort(err)
    }
  }
}

module.exports = connectH1


/***/ }),

/***/ 8788:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const assert = __nccwpck_require__(4589)
const { pipeline } = __nccwpck_require__(7075)
const util = __nccwpck_require__(3440)
const {
  RequestContentLengthMismatchError,
  RequestAbortedError,
  SocketError,
  InformationalError,
  InvalidArgumentError,
  HeadersTimeoutError,
  BodyTimeoutError
} = __nccwpck_require__(8707)
const {
  kUrl,
  kReset,
  kClient,
  kRunning,
  kPending,
  kQueue,
  kPendingIdx,
  kRunningIdx,
  kError,
  kSocket,
  kStrictContentLength,
  kOnError,
  kMaxConcurrentStreams,
  kPingInterval,
  kHTTP2Session,
  kHTTP2InitialWindowSize,
  kHTTP2ConnectionWindowSize,
  kResume,
  kSize,
  kHTTPContext,
  kClosed,
  kBodyTimeout,
  kHeadersTimeout,
  kEnableConnectProtocol,
  kRemoteSettings,
  kHTTP2Stream,
  kHTTP2SessionState
} = __nccwpck_require__(6443)
const { channels } = __nccwpck_require__(2414)

const kOpenStreams = Symbol('open streams')

let extractBody

/** @type {import('http2')} */
let http2
try {
  http2 = __nccwpck_require__(2467)
} catch {
  // @ts-ignore
  http2 = { constants: {} }
}

const {
  constants: {
    HTTP2_HEADER_AUTHORITY,
    HTTP2_HEADER_METHOD,
    HTTP2_HEADER_PATH,
    HTTP2_HEADER_SCHEME,
    HTTP2_HEADER_CONTENT_LENGTH,
    HTTP2_HEADER_EXPECT,
    HTTP2_HEADER_STATUS,
    HTTP2_HEADER_PROTOCOL,
    NGHTTP2_REFUSED_STREAM,
    NGHTTP2_CANCEL
  }
} = http2

function parseH2Headers (headers) {
  const result = []

  for (const [name, value] of Object.entries(headers)) {
    // h2 may concat the header value by array
    // e.g. Set-Cookie
    if (Array.isArray(value)) {
      for (const subvalue of value) {
        // we need to provide each header value of header name
        // because the headers handler expect name-value pair
        result.push(Buffer.from(name), Buffer.from(subvalue))
      }
    } else {
      result.push(Buffer.from(name), Buffer.from(value))
    }
  }

  return result
}

function connectH2 (client, socket) {
  client[kSocket] = socket

  const http2InitialWindowSize = client[kHTTP2InitialWindowSize]
  const http2ConnectionWindowSize = client[kHTTP2ConnectionWindowSize]

  const session = http2.connect(client[kUrl], {
    createConnection: () => socket,
    peerMaxConcurrentStreams: client[kMaxConcurrentStreams],
    settings: {
      // TODO(metcoder95): add support for PUSH
      enablePush: false,
      ...(http2InitialWindowSize != null ? { initialWindowSize: http2InitialWindowSize } : null)
    }
  })

  client[kSocket] = socket
  session[kOpenStreams] = 0
  session[kClient] = client
  session[kSocket] = socket
  session[kHTTP2SessionState] = {
    ping: {
      interval: client[kPingInterval] === 0 ? null : setInterval(onHttp2SendPing, client[kPingInterval], session).unref()
    }
  }
  // We set it to true by default in a best-effort; however once connected to an H2 server
  // we will check if extended CONNECT protocol is supported or not
  // and set this value accordingly.
  session[kEnableConnectProtocol] = false
  // States whether or not we have received the remote settings from the server
  session[kRemoteSettings] = false

  // Apply connection-level flow control once connected (if supported).
  if (http2ConnectionWindowSize) {
    util.addListener(session, 'connect', applyConnectionWindowSize.bind(session, http2ConnectionWindowSize))
  }

  util.addListener(session, 'error', onHttp2SessionError)
  util.addListener(session, 'frameError', onHttp2FrameError)
  util.addListener(session, 'end', onHttp2SessionEnd)
  util.addListener(session, 'goaway', onHttp2SessionGoAway)
  util.addListener(session, 'close', onHttp2SessionClose)
  util.addListener(session, 'remoteSettings', onHttp2RemoteSettings)
  // TODO (@metcoder95): implement SETTINGS support
  // util.addListener(session, 'localSettings', onHttp2RemoteSettings)

  session.unref()

  client[kHTTP2Session] = session
  socket[kHTTP2Session] = session

  util.addListener(socket, 'error', onHttp2SocketError)
  util.addListener(socket, 'end', onHttp2SocketEnd)
  util.addListener(socket, 'close', onHttp2SocketClose)

  socket[kClosed] = false
  socket.on('close', onSocketClose)

  return {
    version: 'h2',
    defaultPipelining: Infinity,
    /**
     * @param {import('../core/request.js')} request
     * @returns {boolean}
    */
    write (request) {
      return writeH2(client, request)
    },
    /**
     * @returns {void}
     */
    resume () {
      resumeH2(client)
    },
    /**
     * @param {Error | null} err
     * @param {() => void} callback
     */
    destroy (err, callback) {
      if (socket[kClosed]) {
        queueMicrotask(callback)
      } else {
        socket.destroy(err).on('close', callback)
      }
    },
    /**
     * @type {boolean}
     */
    get destroyed () {
      return socket.destroyed
    },
    /**
     * @param {import('../core/request.js')} request
     * @returns {boolean}
    */
    busy (request) {
      if (request != null) {
        if (client[kRunning] > 0) {
          // We are already processing requests

          // Non-idempotent request cannot be retried.
          // Ensure that no other requests are inflight and
          // could cause failure.
          if (request.idempotent === false) return true
          // Don't dispatch an upgrade until all preceding requests have completed.
          // Possibly, we do not have remote settings confirmed yet.
          if ((request.upgrade === 'websocket' || request.method === 'CONNECT') && session[kRemoteSettings] === false) return true
          // Request with stream or iterator body can error while other requests
          // are inflight and indirectly error those as well.
          // Ensure this doesn't happen by waiting for inflight
          // to complete before dispatching.

          // Request with stream or iterator body cannot be retried.
          // Ensure that no other requests are inflight and
          // could cause failure.
          if (util.bodyLength(request.body) !== 0 &&
            (util.isStream(request.body) || util.isAsyncIterable(request.body) || util.isFormDataLike(request.body))) return true
        } else {
          return (request.upgrade === 'websocket' || request.method === 'CONNECT') && session[kRemoteSettings] === false
        }
      }

      return false
    }
  }
}

function resumeH2 (client) {
  const socket = client[kSocket]

  if (socket?.destroyed === false) {
    // Only let the process exit when there is genuinely nothing outstanding.
    // Unreffing because the peer advertised MAX_CONCURRENT_STREAMS = 0 left
    // queued requests with nothing holding the event loop open, so the process
    // could exit with status 0 while an awaited request never settled.
    if (client[kSize] === 0) {
      socket.unref()
      client[kHTTP2Session].unref()
    } else {
      socket.ref()
      client[kHTTP2Session].ref()
    }
  }
}

function applyConnectionWindowSize (connectionWindowSize) {
  try {
    if (typeof this.setLocalWindowSize === 'function') {
      this.setLocalWindowSize(connectionWindowSize)
    }
  } catch {
    // Best-effort only.
  }
}

function onHttp2RemoteSettings (settings) {
  // Fallbacks are a safe bet, remote setting will always override
  this[kClient][kMaxConcurrentStreams] = settings.maxConcurrentStreams ?? this[kClient][kMaxConcurrentStreams]
  /**
   * From RFC-8441
   * A sender MUST NOT send a SETTINGS_ENABLE_CONNECT_PROTOCOL parameter
   * with the value of 0 after previously sending a value of 1.
   */
  // Note: Cannot be tested in Node, it does not supports disabling the extended CONNECT protocol once enabled
  if (this[kRemoteSettings] === true && this[kEnableConnectProtocol] === true && settings.enableConnectProtocol === false) {
    const err = new InformationalError('HTTP/2: Server disabled extended CONNECT protocol against RFC-8441')
    this[kSocket][kError] = err
    this[kClient][kOnError](err)
    return
  }

  this[kEnableConnectProtocol] = settings.enableConnectProtocol ?? this[kEnableConnectProtocol]
  this[kRemoteSettings] = true
  this[kClient][kResume]()
}

function onHttp2SendPing (session) {
  const state = session[kHTTP2SessionState]
  if ((session.closed || session.destroyed) && state.ping.interval != null) {
    clearInterval(state.ping.interval)
    state.ping.interval = null
    return
  }

  // If no ping sent, do nothing
  session.ping(onPing.bind(session))

  function onPing (err, duration) {
    const client = this[kClient]
    const socket = this[kClient]

    if (err != null) {
      const error = new InformationalError(`HTTP/2: "PING" errored - type ${err.message}`)
      socket[kError] = error
      client[kOnError](error)
    } else {
      client.emit('ping', duration)
    }
  }
}

function onHttp2SessionError (err) {
  this[kSocket][kError] = err
  this[kClient][kOnError](err)
}

function onHttp2FrameError (type, code, id) {
  if (id === 0) {
    const err = new InformationalError(`HTTP/2: "frameError" received - type ${type}, code ${code}`)
    this[kSocket][kError] = err
    this[kClient][kOnError](err)
  }
}

function onHttp2SessionEnd () {
  const err = new SocketError('other side closed', util.getSocketInfo(this[kSocket]))
  this.destroy(err)
  util.destroy(this[kSocket], err)
}

/**
 * This is the root cause of #3011
 * We need to handle GOAWAY frames properly, and trigger the session close
 * along with the socket right away
 *
 * @this {import('http2').ClientHttp2Session}
 * @param {number} errorCode
 */
// Backport of #5410 and #5569. HTTP/2 multiplexes, so requests complete out of
// order; advancing kRunningIdx blindly retired whichever request happened to
// sit at the head instead of the one that actually finished, which both lost
// requests and left phantom running slots behind.
function completeRequest (client, request, resetPendingIdx = false) {
  const queue = client[kQueue]
  const runningIdx = client[kRunningIdx]

  // In-order completion: clear the request and advance without splicing.
  // The client's resume loop compacts cleared slots once the index grows.
  if (runningIdx < client[kPendingIdx] && queue[runningIdx] === request) {
    queue[runningIdx] = null
    client[kRunningIdx] = runningIdx + 1
    return
  }

  const index = queue.indexOf(request, runningIdx)

  if (index === -1 || index >= client[kPendingIdx]) {
    return
  }

  queue.splice(index, 1)
  client[kPendingIdx]--

  if (resetPendingIdx && client[kPendingIdx] < client[kRunningIdx]) {
    client[kPendingIdx] = client[kRunningIdx]
  }
}

function onHttp2SessionGoAway (errorCode) {
  // TODO(mcollina): Verify if GOAWAY implements the spec correctly:
  // https://datatracker.ietf.org/doc/html/rfc7540#section-6.8
  // Specifically, we do not verify the "valid" stream id.

  const err = this[kError] || new SocketError(`HTTP/2: "GOAWAY" frame received with code ${errorCode}`, util.getSocketInfo(this[kSocket]))
  const client = this[kClient]

  client[kSocket] = null
  client[kHTTPContext] = null

  // this is an HTTP2 session
  this.close()
  this[kHTTP2Session] = null

  util.destroy(this[kSocket], err)

  // Fail head of pipeline.
  if (client[kRunningIdx] < client[kQueue].length) {
    const request = client[kQueue][client[kRunningIdx]]
    client[kQueue][client[kRunningIdx]++] = null
    if (request != null) {
      util.errorRequest(client, request, err)
    }
    client[kPendingIdx] = client[kRunningIdx]
  }

  assert(client[kRunning] === 0)

  client.emit('disconnect', client[kUrl], [client], err)
  client.emit('connectionError', client[kUrl], [client], err)

  client[kResume]()
}

function onHttp2SessionClose () {
  const { [kClient]: client, [kHTTP2SessionState]: state } = this
  const { [kSocket]: socket } = client

  const err = this[kSocket][kError] || this[kError] || new SocketError('closed', util.getSocketInfo(socket))

  client[kSocket] = null
  client[kHTTPContext] = null

  if (state.ping.interval != null) {
    clearInterval(state.ping.interval)
    state.ping.interval = null
  }

  if (client.destroyed) {
    assert(client[kPending] === 0)

    // Fail entire queue.
    const requests = client[kQueue].splice(client[kRunningIdx])
    for (let i = 0; i < requests.length; i++) {
      const request = requests[i]
      if (request != null) {
        util.errorRequest(client, request, err)
      }
    }
  }
}

function onHttp2SocketClose () {
  const err = this[kError] || new SocketError('closed', util.getSocketInfo(this))

  const client = this[kHTTP2Session][kClient]

  client[kSocket] = null
  client[kHTTPContext] = null

  if (this[kHTTP2Session] !== null) {
    this[kHTTP2Session].destroy(err)
  }

  client[kPendingIdx] = client[kRunningIdx]

  assert(client[kRunning] === 0)

  client.emit('disconnect', client[kUrl], [client], err)

  client[kResume]()
}

function onHttp2SocketError (err) {
  this[kError] = err

  this[kClient][kOnError](err)
}

function onHttp2SocketEnd () {
  util.destroy(this, new SocketError('other side closed', util.getSocketInfo(this)))
}

function onSocketClose () {
  this[kClosed] = true
}

// https://www.rfc-editor.org/rfc/rfc7230#section-3.3.2
function shouldSendContentLength (method) {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS' && method !== 'TRACE' && method !== 'CONNECT'
}

function writeH2 (client, request) {
  // Time to the response headers, then time between body chunks. Using
  // bodyTimeout for both made headersTimeout a no-op over HTTP/2.
  const headersTimeout = request.headersTimeout ?? client[kHeadersTimeout]
  const bodyTimeout = request.bodyTimeout ?? client[kBodyTimeout]
  const session = client[kHTTP2Session]
  const { method, path, host, upgrade, expectContinue, signal, protocol, headers: reqHeaders } = request
  let { body } = request

  if (upgrade != null && upgrade !== 'websocket') {
    util.errorRequest(client, request, new InvalidArgumentError(`Custom upgrade "${upgrade}" not supported over HTTP/2`))
    return false
  }

  const headers = {}
  for (let n = 0; n < reqHeaders.length; n += 2) {
    const key = reqHeaders[n + 0]
    const val = reqHeaders[n + 1]

    if (key === 'cookie') {
      if (headers[key] != null) {
        headers[key] = Array.isArray(headers[key]) ? (headers[key].push(val), headers[key]) : [headers[key], val]
      } else {
        headers[key] = val
      }

      continue
    }

    if (Array.isArray(val)) {
      for (let i = 0; i < val.length; i++) {
        if (headers[key]) {
          headers[key] += `, ${val[i]}`
        } else {
          headers[key] = val[i]
        }
      }
    } else if (headers[key]) {
      headers[key] += `, ${val}`
    } else {
      headers[key] = val
    }
  }

  /** @type {import('node:http2').ClientHttp2Stream} */
  let stream = null

  const { hostname, port } = client[kUrl]

  headers[HTTP2_HEADER_AUTHORITY] = host || `${hostname}${port ? `:${port}` : ''}`
  headers[HTTP2_HEADER_METHOD] = method

  const abort = (err) => {
    if (request.aborted || request.completed) {
      return
    }

    err = err || new RequestAbortedError()

    util.errorRequest(client, request, err)

    if (stream != null) {
      // Some chunks might still come after abort,
      // let's ignore them
      stream.removeAllListeners('data')

      // On Abort, we close the stream to send RST_STREAM frame
      stream.close()

      // We move the running index to the next request
      client[kOnError](err)
      completeRequest(client, request)
      client[kResume]()
    }

    // We do not destroy the socket as we can continue using the session
    // the stream gets destroyed and the session remains to create new streams
    util.destroy(body, err)
  }

  try {
    // We are already connected, streams are pending.
    // We can call on connect, and wait for abort
    request.onConnect(abort)
  } catch (err) {
    util.errorRequest(client, request, err)
  }

  if (request.aborted) {
    return false
  }

  if (upgrade || method === 'CONNECT') {
    session.ref()

    if (upgrade === 'websocket') {
      // We cannot upgrade to websocket if extended CONNECT protocol is not supported
      if (session[kEnableConnectProtocol] === false) {
        util.errorRequest(client, request, new InformationalError('HTTP/2: Extended CONNECT protocol not supported by server'))
        session.unref()
        return false
      }

      // We force the method to CONNECT
      // as per RFC-8441
      // https://datatracker.ietf.org/doc/html/rfc8441#section-4
      headers[HTTP2_HEADER_METHOD] = 'CONNECT'
      headers[HTTP2_HEADER_PROTOCOL] = 'websocket'
      // :path and :scheme headers must be omitted when sending CONNECT but set if extended-CONNECT
      headers[HTTP2_HEADER_PATH] = path

      if (protocol === 'ws:' || protocol === 'wss:') {
        headers[HTTP2_HEADER_SCHEME] = protocol === 'ws:' ? 'http' : 'https'
      } else {
        headers[HTTP2_HEADER_SCHEME] = protocol === 'http:' ? 'http' : 'https'
      }

      stream = session.request(headers, { endStream: false, signal })
      stream[kHTTP2Stream] = true
      ++session[kOpenStreams]

      stream.once('response', (headers, _flags) => {
        const { [HTTP2_HEADER_STATUS]: statusCode, ...realHeaders } = headers

        try {
          request.onUpgrade(statusCode, parseH2Headers(realHeaders), stream)
        } catch (err) {
          abort(err)
          return
        }
        completeRequest(client, request)
      })

      stream.on('error', () => {
        if (stream.rstCode === NGHTTP2_REFUSED_STREAM || stream.rstCode === NGHTTP2_CANCEL) {
          // NGHTTP2_REFUSED_STREAM (7) or NGHTTP2_CANCEL (8)
          // We do not treat those as errors as the server might
          // not support websockets and refuse the stream
          abort(new InformationalError(`HTTP/2: "stream error" received - code ${stream.rstCode}`))
        }
      })

      stream.once('close', () => {
        session[kOpenStreams] -= 1
        if (session[kOpenStreams] === 0) session.unref()
      })

      stream.setTimeout(headersTimeout)
      return true
    }

    // TODO: consolidate once we support CONNECT properly
    // NOTE: We are already connected, streams are pending, first request
    // will create a new stream. We trigger a request to create the stream and wait until
    // `ready` event is triggered
    // We disabled endStream to allow the user to write to the stream
    stream = session.request(headers, { endStream: false, signal })
    stream[kHTTP2Stream] = true
    ++session[kOpenStreams]
    stream.on('response', headers => {
      const { [HTTP2_HEADER_STATUS]: statusCode, ...realHeaders } = headers

      try {
        request.onUpgrade(statusCode, parseH2Headers(realHeaders), stream)
      } catch (err) {
        abort(err)
        return
      }
      completeRequest(client, request)
    })
    stream.on('error', abort)
    stream.once('close', () => {
      session[kOpenStreams] -= 1
      if (session[kOpenStreams] === 0) session.unref()
    })
    stream.setTimeout(headersTimeout)

    return true
  }

  // https://tools.ietf.org/html/rfc7540#section-8.3
  // :path and :scheme headers must be omitted when sending CONNECT
  headers[HTTP2_HEADER_PATH] = path
  headers[HTTP2_HEADER_SCHEME] = protocol === 'http:' ? 'http' : 'https'

  // https://tools.ietf.org/html/rfc7231#section-4.3.1
  // https://tools.ietf.org/html/rfc7231#section-4.3.2
  // https://tools.ietf.org/html/rfc7231#section-4.3.5

  // Sending a payload body on a request that does not
  // expect it can cause undefined behavior on some
  // servers and corrupt connection state. Do not
  // re-use the connection for further requests.

  const expectsPayload = (
    method === 'PUT' ||
    method === 'POST' ||
    method === 'PATCH'
  )

  if (body && typeof body.read === 'function') {
    // Try to read EOF in order to get length.
    body.read(0)
  }

  let contentLength = util.bodyLength(body)

  if (util.isFormDataLike(body)) {
    extractBody ??= (__nccwpck_require__(4492).extractBody)

    const [bodyStream, contentType] = extractBody(body)
    headers['content-type'] = contentType

    body = bodyStream.stream
    contentLength = bodyStream.length
  }

  if (contentLength == null) {
    contentLength = request.contentLength
  }

  if (!expectsPayload) {
    // https://tools.ietf.org/html/rfc7230#section-3.3.2
    // A user agent SHOULD NOT send a Content-Length header field when
    // the request message does not contain a payload body and the method
    // semantics do not anticipate such a body.
    // And for methods that don't expect a payload, omit Content-Length.
    contentLength = null
  }

  // https://github.com/nodejs/undici/issues/2046
  // A user agent may send a Content-Length header with 0 value, this should be allowed.
  if (shouldSendContentLength(method) && contentLength > 0 && request.contentLength != null && request.contentLength !== contentLength) {
    if (client[kStrictContentLength]) {
      util.errorRequest(client, request, new RequestContentLengthMismatchError())
      return false
    }

    process.emitWarning(new RequestContentLengthMismatchError())
  }

  if (contentLength != null) {
    assert(body || contentLength === 0, 'no body must not have content length')
    headers[HTTP2_HEADER_CONTENT_LENGTH] = `${contentLength}`
  }

  session.ref()

  if (channels.sendHeaders.hasSubscribers) {
    let header = ''
    for (const key in headers) {
      header += `${key}: ${headers[key]}\r\n`
    }
    channels.sendHeaders.publish({ request, headers: header, socket: session[kSocket] })
  }

  // TODO(metcoder95): add support for sending trailers
  const shouldEndStream = method === 'GET' || method === 'HEAD' || body === null
  if (expectContinue) {
    headers[HTTP2_HEADER_EXPECT] = '100-continue'
    stream = session.request(headers, { endStream: shouldEndStream, signal })
    stream[kHTTP2Stream] = true

    stream.once('continue', writeBodyH2)
  } else {
    stream = session.request(headers, {
      endStream: shouldEndStream,
      signal
    })
    stream[kHTTP2Stream] = true

    writeBodyH2()
  }

  // Increment counter as we have new streams open
  ++session[kOpenStreams]
  stream.setTimeout(headersTimeout)

  // Track whether we received a response (headers)
  let responseReceived = false

  stream.once('response', headers => {
    const { [HTTP2_HEADER_STATUS]: statusCode, ...realHeaders } = headers
    request.onResponseStarted()
    responseReceived = true
    stream.setTimeout(bodyTimeout)

    // Due to the stream nature, it is possible we face a race condition
    // where the stream has been assigned, but the request has been aborted
    // the request remains in-flight and headers hasn't been received yet
    // for those scenarios, best effort is to destroy the stream immediately
    // as there's no value to keep it open.
    if (request.aborted) {
      stream.removeAllListeners('data')
      return
    }

    if (request.onHeaders(Number(statusCode), parseH2Headers(realHeaders), stream.resume.bind(stream), '') === false) {
      stream.pause()
    }

    stream.on('data', (chunk) => {
      if (request.aborted || request.completed) {
        return
      }

      if (request.onData(chunk) === false) {
        stream.pause()
      }
    })
  })

  stream.once('end', () => {
    stream.removeAllListeners('data')
    // If we received a response, this is a normal completion
    if (responseReceived) {
      if (!request.aborted && !request.completed) {
        request.onComplete({})
      }

      completeRequest(client, request)
      client[kResume]()
    } else {
      // Stream ended without receiving a response - this is an error
      // (e.g., server destroyed the stream before sending headers)
      abort(new InformationalError('HTTP/2: stream half-closed (remote)'))
      completeRequest(client, request, true)
      client[kResume]()
    }
  })

  stream.once('close', () => {
    stream.removeAllListeners('data')
    session[kOpenStreams] -= 1
    if (session[kOpenStreams] === 0) {
      session.unref()
    }

    // A stream can close without ever emitting 'end' or 'error': a peer's
    // RST_STREAM(CANCEL) received before the response is reported by Node as a
    // bare 'close', and destroying the stream unenrolls its timeout, so no
    // 'timeout' follows either. Nothing else would ever settle this request.
    if (!request.aborted && !request.completed) {
      abort(new InformationalError('HTTP/2: stream closed before the response was complete'))
    }
  })

  stream.once('error', function (err) {
    stream.removeAllListeners('data')
    abort(err)
  })

  stream.once('frameError', (type, code) => {
    stream.removeAllListeners('data')
    abort(new InformationalError(`HTTP/2: "frameError" received - type ${type}, code ${code}`))
  })

  stream.on('aborted', () => {
    stream.removeAllListeners('data')
  })

  stream.on('timeout', () => {
    const err = responseReceived
      ? new BodyTimeoutError(`HTTP/2: "body timeout after ${bodyTimeout}"`)
      : new HeadersTimeoutError(`HTTP/2: "headers timeout after ${headersTimeout}"`)
    stream.removeAllListeners('data')
    session[kOpenStreams] -= 1

    if (session[kOpenStreams] === 0) {
      session.unref()
    }

    abort(err)
  })

  stream.once('trailers', trailers => {
    if (request.aborted || request.completed) {
      return
    }

    stream.removeAllListeners('data')
    request.onComplete(trailers)
  })

  return true

  function writeBodyH2 () {
    if (!body || contentLength === 0) {
      writeBuffer(
        abort,
        stream,
        null,
        client,
        request,
        client[kSocket],
        contentLength,
        expectsPayload
      )
    } else if (util.isBuffer(body)) {
      writeBuffer(
        abort,
        stream,
        body,
        client,
        request,
        client[kSocket],
        contentLength,
        expectsPayload
      )
    } else if (util.isBlobLike(body)) {
      if (typeof body.stream === 'function') {
        writeIterable(
          abort,
          stream,
          body.stream(),
          client,
          request,
          client[kSocket],
          contentLength,
          expectsPayload
        )
      } else {
        writeBlob(
          abort,
          stream,
          body,
          client,
          request,
          client[kSocket],
          contentLength,
          expectsPayload
        )
      }
    } else if (util.isStream(body)) {
      writeStream(
        abort,
        client[kSocket],
        expectsPayload,
        stream,
        body,
        client,
        request,
        contentLength
      )
    } else if (util.isIterable(body)) {
      writeIterable(
        abort,
        stream,
        body,
        client,
        request,
        client[kSocket],
        contentLength,
        expectsPayload
      )
    } else {
      assert(false)
    }
  }
}

function writeBuffer (abort, h2stream, body, client, request, socket, contentLength, expectsPayload) {
  try {
    if (body != null && util.isBuffer(body)) {
      assert(contentLength === body.byteLength, 'buffer body must have content length')
      h2stream.cork()
      h2stream.write(body)
      h2stream.uncork()
      h2stream.end()

      request.onBodySent(body)
    }

    if (!expectsPayload) {
      socket[kReset] = true
    }

    request.onRequestSent()
    client[kResume]()
  } catch (error) {
    abort(error)
  }
}

function writeStream (abort, socket, expectsPayload, h2stream, body, client, request, contentLength) {
  assert(contentLength !== 0 || client[kRunning] === 0, 'stream body cannot be pipelined')

  // For HTTP/2, is enough to pipe the stream
  const pipe = pipeline(
    body,
    h2stream,
    (err) => {
      if (err) {
        util.destroy(pipe, err)
        abort(err)
      } else {
        util.removeAllListeners(pipe)
        request.onRequestSent()

        if (!expectsPayload) {
          socket[kReset] = true
        }

        client[kResume]()
      }
    }
  )

  util.addListener(pipe, 'data', onPipeData)

  function onPipeData (chunk) {
    request.onBodySent(chunk)
  }
}

async function writeBlob (abort, h2stream, body, client, request, socket, contentLength, expectsPayload) {
  assert(contentLength === body.size, 'blob body must have content length')

  try {
    if (contentLength != null && contentLength !== body.size) {
      throw new RequestContentLengthMismatchError()
    }

    const buffer = Buffer.from(await body.arrayBuffer())

    h2stream.cork()
    h2stream.write(buffer)
    h2stream.uncork()
    h2stream.end()

    request.onBodySent(buffer)
    request.onRequestSent()

    if (!expectsPayload) {
      socket[kReset] = true
    }

    client[kResume]()
  } catch (err) {
    abort(err)
  }
}

async function writeIterable (abort, h2stream, body, client, request, socket, contentLength, expectsPayload) {
  assert(contentLength !== 0 || client[kRunning] === 0, 'iterator body cannot be pipelined')

  let callback = null
  function onDrain () {
    if (callback) {
      const cb = callback
      callback = null
      cb()
    }
  }

  const waitForDrain = () => new Promise((resolve, reject) => {
    assert(callback === null)

    if (socket[kError]) {
      reject(socket[kError])
    } else {
      callback = resolve
    }
  })

  h2stream
    .on('close', onDrain)
    .on('drain', onDrain)

  try {
    // It's up to the user to somehow abort the async iterable.
    for await (const chunk of body) {
      if (socket[kError]) {
        throw socket[kError]
      }

      const res = h2stream.write(chunk)
      request.onBodySent(chunk)
      if (!res) {
        await waitForDrain()
      }
    }

    h2stream.end()

    request.onRequestSent()

    if (!expectsPayload) {
      socket[kReset] = true
    }

    client[kResume]()
  } catch (err) {
    abort(err)
  } finally {
    h2stream
      .off('close', onDrain)
      .off('drain', onDrain)
  }
}

module.exports = connectH2


/***/ }),

/***/ 3701:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const assert = __nccwpck_require__(4589)
const net = __nccwpck_require__(7030)
const http = __nccwpck_require__(7067)
const util = __nccwpck_require__(3440)
const { ClientStats } = __nccwpck_require__(6854)
const { channels } = __nccwpck_require__(2414)
const Request = __nccwpck_require__(4655)
const DispatcherBase = __nccwpck_require__(1841)
const {
  InvalidArgumentError,
  InformationalError,
  ClientDestroyedError
} = __nccwpck_require__(8707)
const buildConnector = __nccwpck_require__(9136)
const {
  kUrl,
  kServerName,
  kClient,
  kBusy,
  kConnect,
  kResuming,
  kRunning,
  kPending,
  kSize,
  kQueue,
  kConnected,
  kConnecting,
  kNeedDrain,
  kKeepAliveDefaultTimeout,
  kHostHeader,
  kPendingIdx,
  kRunningIdx,
  kError,
  kPipelining,
  kKeepAliveTimeoutValue,
  kMaxHeadersSize,
  kKeepAliveMaxTimeout,
  kKeepAliveTimeoutThreshold,
  kHeadersTimeout,
  kBodyTimeout,
  kStrictContentLength,
  kConnector,
  kMaxRequests,
  kCounter,
  kClose,
  kDestroy,
  kDispatch,
  kLocalAddress,
  kMaxResponseSize,
  kOnError,
  kHTTPContext,
  kMaxConcurrentStreams,
  kHTTP2InitialWindowSize,
  kHTTP2ConnectionWindowSize,
  kResume,
  kPingInterval
} = __nccwpck_require__(6443)
const connectH1 = __nccwpck_require__(637)
const connectH2 = __nccwpck_require__(8788)

const kClosedResolve = Symbol('kClosedResolve')

const getDefaultNodeMaxHeaderSize = http &&
  http.maxHeaderSize &&
  Number.isInteger(http.maxHeaderSize) &&
  http.maxHeaderSize > 0
  ? () => http.maxHeaderSize
  : () => { throw new InvalidArgumentError('http module not available or http.maxHeaderSize invalid') }

const noop = () => { }

function getPipelining (client) {
  return client[kPipelining] ?? client[kHTTPContext]?.defaultPipelining ?? 1
}

/**
 * @type {import('../../types/client.js').default}
 */
class Client extends DispatcherBase {
  /**
   *
   * @param {string|URL} url
   * @param {import('../../types/client.js').Client.Options} options
   */
  constructor (url, {
    maxHeaderSize,
    headersTimeout,
    socketTimeout,
    requestTimeout,
    connectTimeout,
    bodyTimeout,
    idleTimeout,
    keepAlive,
    keepAliveTimeout,
    maxKeepAliveTimeout,
    keepAliveMaxTimeout,
    keepAliveTimeoutThreshold,
    socketPath,
    pipelining,
    tls,
    strictContentLength,
    maxCachedSessions,
    connect,
    maxRequestsPerClient,
    localAddress,
    maxResponseSize,
    autoSelectFamily,
    autoSelectFamilyAttemptTimeout,
    // h2
    maxConcurrentStreams,
    allowH2,
    useH2c,
    initialWindowSize,
    connectionWindowSize,
    pingInterval,
    webSocket,
    eventSource
  } = {}) {
    if (keepAlive !== undefined) {
      throw new InvalidArgumentError('unsupported keepAlive, use pipelining=0 instead')
    }

    if (socketTimeout !== undefined) {
      throw new InvalidArgumentError('unsupported socketTimeout, use headersTimeout & bodyTimeout instead')
    }

    if (requestTimeout !== undefined) {
      throw new InvalidArgumentError('unsupported requestTimeout, use headersTimeout & bodyTimeout instead')
    }

    if (idleTimeout !== undefined) {
      throw new InvalidArgumentError('unsupported idleTimeout, use keepAliveTimeout instead')
    }

    if (maxKeepAliveTimeout !== undefined) {
      throw new InvalidArgumentError('unsupported maxKeepAliveTimeout, use keepAliveMaxTimeout instead')
    }

    if (maxHeaderSize != null) {
      if (!Number.isInteger(maxHeaderSize) || maxHeaderSize < 1) {
        throw new InvalidArgumentError('invalid maxHeaderSize')
      }
    } else {
      // If maxHeaderSize is not provided, use the default value from the http module
      // or if that is not available, throw an error.
      maxHeaderSize = getDefaultNodeMaxHeaderSize()
    }

    if (socketPath != null && typeof socketPath !== 'string') {
      throw new InvalidArgumentError('invalid socketPath')
    }

    if (connectTimeout != null && (!Number.isFinite(connectTimeout) || connectTimeout < 0)) {
      throw new InvalidArgumentError('invalid connectTimeout')
    }

    if (keepAliveTimeout != null && (!Number.isFinite(keepAliveTimeout) || keepAliveTimeout <= 0)) {
      throw new InvalidArgumentError('invalid keepAliveTimeout')
    }

    if (keepAliveMaxTimeout != null && (!Number.isFinite(keepAliveMaxTimeout) || keepAliveMaxTimeout <= 0)) {
      throw new InvalidArgumentError('invalid keepAliveMaxTimeout')
    }

    if (keepAliveTimeoutThreshold != null && !Number.isFinite(keepAliveTimeoutThreshold)) {
      throw new InvalidArgumentError('invalid keepAliveTimeoutThreshold')
    }

    if (headersTimeout != null && (!Number.isInteger(headersTimeout) || headersTimeout < 0)) {
      throw new InvalidArgumentError('headersTimeout must be a positive integer or zero')
    }

    if (bodyTimeout != null && (!Number.isInteger(bodyTimeout) || bodyTimeout < 0)) {
      throw new InvalidArgumentError('bodyTimeout must be a positive integer or zero')
    }

    if (connect != null && typeof connect !== 'function' && typeof connect !== 'object') {
      throw new InvalidArgumentError('connect must be a function or an object')
    }

    if (maxRequestsPerClient != null && (!Number.isInteger(maxRequestsPerClient) || maxRequestsPerClient < 0)) {
      throw new InvalidArgumentError('maxRequestsPerClient must be a positive number')
    }

    if (localAddress != null && (typeof localAddress !== 'string' || net.isIP(localAddress) === 0)) {
      throw new InvalidArgumentError('localAddress must be valid string IP address')
    }

    if (maxResponseSize != null && (!Number.isInteger(maxResponseSize) || maxResponseSize < -1)) {
      throw new InvalidArgumentError('maxResponseSize must be a positive number')
    }

    if (
      autoSelectFamilyAttemptTimeout != null &&
      (!Number.isInteger(autoSelectFamilyAttemptTimeout) || autoSelectFamilyAttemptTimeout < -1)
    ) {
      throw new InvalidArgumentError('autoSelectFamilyAttemptTimeout must be a positive number')
    }

    // h2
    if (allowH2 != null && typeof allowH2 !== 'boolean') {
      throw new InvalidArgumentError('allowH2 must be a valid boolean value')
    }

    if (maxConcurrentStreams != null && (typeof maxConcurrentStreams !== 'number' || maxConcurrentStreams < 1)) {
      throw new InvalidArgumentError('maxConcurrentStreams must be a positive integer, greater than 0')
    }

    if (useH2c != null && typeof useH2c !== 'boolean') {
      throw new InvalidArgumentError('useH2c must be a valid boolean value')
    }

    if (initialWindowSize != null && (!Number.isInteger(initialWindowSize) || initialWindowSize < 1)) {
      throw new InvalidArgumentError('initialWindowSize must be a positive integer, greater than 0')
    }

    if (connectionWindowSize != null && (!Number.isInteger(connectionWindowSize) || connectionWindowSize < 1)) {
      throw new InvalidArgumentError('connectionWindowSize must be a positive integer, greater than 0')
    }

    if (pingInterval != null && (typeof pingInterval !== 'number' || !Number.isInteger(pingInterval) || pingInterval < 0)) {
      throw new InvalidArgumentError('pingInterval must be a positive integer, greater or equal to 0')
    }

    super({ webSocket, eventSource })

    if (typeof connect !== 'function') {
      connect = buildConnector({
        ...tls,
        maxCachedSessions,
        allowH2,
        useH2c,
        socketPath,
        timeout: connectTimeout,
        ...(typeof autoSelectFamily === 'boolean' ? { autoSelectFamily, autoSelectFamilyAttemptTimeout } : undefined),
        ...connect
      })
    } else {
      const customConnect = connect
      connect = (opts, callback) => customConnect({
        ...opts,
        ...(socketPath != null ? { socketPath } : null),
        ...(allowH2 != null ? { allowH2 } : null)
      }, callback)
    }

    this[kUrl] = util.parseOrigin(url)
    this[kConnector] = connect
    this[kPipelining] = pipelining != null ? pipelining : 1
    this[kMaxHeadersSize] = maxHeaderSize
    this[kKeepAliveDefaultTimeout] = keepAliveTimeout == null ? 4e3 : keepAliveTimeout
    this[kKeepAliveMaxTimeout] = keepAliveMaxTimeout == null ? 600e3 : keepAliveMaxTimeout
    this[kKeepAliveTimeoutThreshold] = keepAliveTimeoutThreshold == null ? 2e3 : keepAliveTimeoutThreshold
    this[kKeepAliveTimeoutValue] = this[kKeepAliveDefaultTimeout]
    this[kServerName] = null
    this[kLocalAddress] = localAddress != null ? localAddress : null
    this[kResuming] = 0 // 0, idle, 1, scheduled, 2 resuming
    this[kNeedDrain] = 0 // 0, idle, 1, scheduled, 2 resuming
    this[kHostHeader] = `host: ${this[kUrl].hostname}${this[kUrl].port ? `:${this[kUrl].port}` : ''}\r\n`
    this[kBodyTimeout] = bodyTimeout != null ? bodyTimeout : 300e3
    this[kHeadersTimeout] = headersTimeout != null ? headersTimeout : 300e3
    this[kStrictContentLength] = strictContentLength == null ? true : strictContentLength
    this[kMaxRequests] = maxRequestsPerClient
    this[kClosedResolve] = null
    this[kMaxResponseSize] = maxResponseSize > -1 ? maxResponseSize : -1
    this[kHTTPContext] = null
    // h2
    this[kMaxConcurrentStreams] = maxConcurrentStreams != null ? maxConcurrentStreams : 100 // Max peerConcurrentStreams for a Node h2 server
    // HTTP/2 window sizes are set to higher defaults than Node.js core for better performance:
    // - initialWindowSize: 262144 (256KB) vs Node.js default 65535 (64KB - 1)
    //   Allows more data to be sent before requiring acknowledgment, improving throughput
    //   especially on high-latency networks. This matches common production HTTP/2 servers.
    // - connectionWindowSize: 524288 (512KB) vs Node.js default (none set)
    //   Provides better flow control for the entire connection across multiple streams.
    this[kHTTP2InitialWindowSize] = initialWindowSize != null ? initialWindowSize : 262144
    this[kHTTP2ConnectionWindowSize] = connectionWindowSize != null ? connectionWindowSize : 524288
    this[kPingInterval] = pingInterval != null ? pingInterval : 60e3 // Default ping interval for h2 - 1 minute

    // kQueue is built up of 3 sections separated by
    // the kRunningIdx and kPendingIdx indices.
    // |   complete   |   running   |   pending   |
    //                ^ kRunningIdx ^ kPendingIdx ^ kQueue.length
    // kRunningIdx points to the first running element.
    // kPendingIdx points to the first pending element.
    // This implements a fast queue with an amortized
    // time of O(1).

    this[kQueue] = []
    this[kRunningIdx] = 0
    this[kPendingIdx] = 0

    this[kResume] = (sync) => resume(this, sync)
    this[kOnError] = (err) => onError(this, err)
  }

  get pipelining () {
    return this[kPipelining]
  }

  set pipelining (value) {
    this[kPipelining] = value
    this[kResume](true)
  }

  get stats () {
    return new ClientStats(this)
  }

  get [kPending] () {
    return this[kQueue].length - this[kPendingIdx]
  }

  get [kRunning] () {
    return this[kPendingIdx] - this[kRunningIdx]
  }

  get [kSize] () {
    return this[kQueue].length - this[kRunningIdx]
  }

  get [kConnected] () {
    return !!this[kHTTPContext] && !this[kConnecting] && !this[kHTTPContext].destroyed
  }

  get [kBusy] () {
    return Boolean(
      this[kHTTPContext]?.busy(null) ||
      (this[kSize] >= (getPipelining(this) || 1)) ||
      this[kPending] > 0
    )
  }

  [kConnect] (cb) {
    connect(this)
    this.once('connect', cb)
  }

  [kDispatch] (opts, handler) {
    const request = new Request(this[kUrl].origin, opts, handler)

    this[kQueue].push(request)
    if (this[kResuming]) {
      // Do nothing.
    } else if (util.bodyLength(request.body) == null && util.isIterable(request.body)) {
      // Wait a tick in case stream/iterator is ended in the same tick.
      this[kResuming] = 1
      queueMicrotask(() => resume(this))
    } else {
      this[kResume](true)
    }

    if (this[kResuming] && this[kNeedDrain] !== 2 && this[kBusy]) {
      this[kNeedDrain] = 2
    }

    return this[kNeedDrain] < 2
  }

  [kClose] () {
    // TODO: for H2 we need to gracefully flush the remaining enqueued
    // request and close each stream.
    return new Promise((resolve) => {
      if (this[kSize]) {
        this[kClosedResolve] = resolve
      } else {
        resolve(null)
      }
    })
  }

  [kDestroy] (err) {
    return new Promise((resolve) => {
      const requests = this[kQueue].splice(this[kPendingIdx])
      for (let i = 0; i < requests.length; i++) {
        const request = requests[i]
        if (request != null) {
          util.errorRequest(this, request, err)
        }
      }

      const callback = () => {
        if (this[kClosedResolve]) {
          // TODO (fix): Should we error here with ClientDestroyedError?
          this[kClosedResolve]()
          this[kClosedResolve] = null
        }
        resolve(null)
      }

      if (this[kHTTPContext]) {
        this[kHTTPContext].destroy(err, callback)
        this[kHTTPContext] = null
      } else {
        queueMicrotask(callback)
      }

      this[kResume]()
    })
  }
}

function onError (client, err) {
  if (
    client[kRunning] === 0 &&
    err.code !== 'UND_ERR_INFO' &&
    err.code !== 'UND_ERR_SOCKET'
  ) {
    // Error is not caused by running request and not a recoverable
    // socket error.

    assert(client[kPendingIdx] === client[kRunningIdx])

    const requests = client[kQueue].splice(client[kRunningIdx])

    for (let i = 0; i < requests.length; i++) {
      const request = requests[i]
      if (request != null) {
        util.errorRequest(client, request, err)
      }
    }
    assert(client[kSize] === 0)
  }
}

/**
 * @param {Client} client
 * @returns {void}
 */
function connect (client) {
  assert(!client[kConnecting])
  assert(!client[kHTTPContext])

  let { host, hostname, protocol, port } = client[kUrl]

  // Resolve ipv6
  if (hostname[0] === '[') {
    const idx = hostname.indexOf(']')

    assert(idx !== -1)
    const ip = hostname.substring(1, idx)

    assert(net.isIPv6(ip))
    hostname = ip
  }

  client[kConnecting] = true

  if (channels.beforeConnect.hasSubscribers) {
    channels.beforeConnect.publish({
      connectParams: {
        host,
        hostname,
        protocol,
        port,
        version: client[kHTTPContext]?.version,
        servername: client[kServerName],
        localAddress: client[kLocalAddress]
      },
      connector: client[kConnector]
    })
  }

  try {
    client[kConnector]({
      host,
      hostname,
      protocol,
      port,
      servername: client[kServerName],
      localAddress: client[kLocalAddress]
    }, (err, socket) => {
      if (err) {
        handleConnectError(client, err, { host, hostname, protocol, port })
        client[kResume]()
        return
      }

      if (client.destroyed) {
        util.destroy(socket.on('error', noop), new ClientDestroyedError())
        client[kResume]()
        return
      }

      assert(socket)

      try {
        client[kHTTPContext] = socket.alpnProtocol === 'h2'
          ? connectH2(client, socket)
          : connectH1(client, socket)
      } catch (err) {
        socket.destroy().on('error', noop)
        handleConnectError(client, err, { host, hostname, protocol, port })
        client[kResume]()
        return
      }

      client[kConnecting] = false

      socket[kCounter] = 0
      socket[kMaxRequests] = client[kMaxRequests]
      socket[kClient] = client
      socket[kError] = null

      if (channels.connected.hasSubscribers) {
        channels.connected.publish({
          connectParams: {
            host,
            hostname,
            protocol,
            port,
            version: client[kHTTPContext]?.version,
            servername: client[kServerName],
            localAddress: client[kLocalAddress]
          },
          connector: client[kConnector],
          socket
        })
      }

      client.emit('connect', client[kUrl], [client])
      client[kResume]()
    })
  } catch (err) {
    handleConnectError(client, err, { host, hostname, protocol, port })
    client[kResume]()
  }
}

function handleConnectError (client, err, { host, hostname, protocol, port }) {
  if (client.destroyed) {
    return
  }

  client[kConnecting] = false

  if (channels.connectError.hasSubscribers) {
    channels.connectError.publish({
      connectParams: {
        host,
        hostname,
        protocol,
        port,
        version: client[kHTTPContext]?.version,
        servername: client[kServerName],
        localAddress: client[kLocalAddress]
      },
      connector: client[kConnector],
      error: err
    })
  }

  if (err.code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    assert(client[kRunning] === 0)
    while (client[kPending] > 0 && client[kQueue][client[kPendingIdx]].servername === client[kServerName]) {
      const request = client[kQueue][client[kPendingIdx]++]
      util.errorRequest(client, request, err)
    }
  } else {
    onError(client, err)
  }

  client.emit('connectionError', client[kUrl], [client], err)
}

function emitDrain (client) {
  client[kNeedDrain] = 0
  client.emit('drain', client[kUrl], [client])
}

function resume (client, sync) {
  if (client[kResuming] === 2) {
    return
  }

  client[kResuming] = 2

  _resume(client, sync)
  client[kResuming] = 0

  if (client[kRunningIdx] > 256) {
    client[kQueue].splice(0, client[kRunningIdx])
    client[kPendingIdx] -= client[kRunningIdx]
    client[kRunningIdx] = 0
  }
}

function _resume (client, sync) {
  while (true) {
    if (client.destroyed) {
      assert(client[kPending] === 0)
      return
    }

    if (client[kClosedResolve] && !client[kSize]) {
      client[kClosedResolve]()
      client[kClosedResolve] = null
      return
    }

    if (client[kHTTPContext]) {
      client[kHTTPContext].resume()
    }

    if (client[kBusy]) {
      client[kNeedDrain] = 2
    } else if (client[kNeedDrain] === 2) {
      if (sync) {
        client[kNeedDrain] = 1
        queueMicrotask(() => emitDrain(client))
      } else {
        emitDrain(client)
      }
      continue
    }

    if (client[kPending] === 0) {
      return
    }

    if (client[kRunning] >= (getPipelining(client) || 1)) {
      return
    }

    const request = client[kQueue][client[kPendingIdx]]

    if (request === null) {
      return
    }

    if (client[kUrl].protocol === 'https:' && client[kServerName] !== request.servername) {
      if (client[kRunning] > 0) {
        return
      }

      client[kServerName] = request.servername
      client[kHTTPContext]?.destroy(new InformationalError('servername changed'), () => {
        client[kHTTPContext] = null
        resume(client)
      })
    }

    if (client[kConnecting]) {
      return
    }

    if (!client[kHTTPContext]) {
      connect(client)
      return
    }

    if (client[kHTTPContext].destroyed) {
      return
    }

    if (client[kHTTPContext].busy(request)) {
      return
    }

    if (!request.aborted && client[kHTTPContext].write(request)) {
      client[kPendingIdx]++
    } else {
      client[kQueue].splice(client[kPendingIdx], 1)
    }
  }
}

module.exports = Client


/***/ }),

/***/ 1841:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const buffer = __nccwpck_require__(4573)
const Dispatcher = __nccwpck_require__(883)
const UnwrapHandler = __nccwpck_require__(2365)
const {
  ClientDestroyedError,
  ClientClosedError,
  InvalidArgumentError
} = __nccwpck_require__(8707)
const { kDestroy, kClose, kClosed, kDestroyed, kDispatch } = __nccwpck_require__(6443)

const kOnDestroyed = Symbol('onDestroyed')
const kOnClosed = Symbol('onClosed')
const kWebSocketOptions = Symbol('webSocketOptions')
const kEventSourceOptions = Symbol('eventSourceOptions')

class DispatcherBase extends Dispatcher {
  /** @type {boolean} */
  [kDestroyed] = false;

  /** @type {Array<Function|null} */
  [kOnDestroyed] = null;

  /** @type {boolean} */
  [kClosed] = false;

  /** @type {Array<Function>|null} */
  [kOnClosed] = null

  /**
   * @param {import('../../types/dispatcher').DispatcherOptions} [opts]
   */
  constructor (opts) {
    super()
    this[kWebSocketOptions] = opts?.webSocket ?? {}
    this[kEventSourceOptions] = opts?.eventSource ?? {}
  }

  /**
   * @returns {import('../../types/dispatcher').WebSocketOptions}
   */
  get webSocketOptions () {
    return {
      maxFragments: this[kWebSocketOptions].maxFragments ?? 131072,
      maxPayloadSize: this[kWebSocketOptions].maxPayloadSize ?? 128 * 1024 * 1024 // 128 MB default
    }
  }

  /**
   * @returns {import('../../types/client').Client.EventSourceOptions}
   */
  get eventSourceOptions () {
    return {
      maxEventSize: this[kEventSourceOptions].maxEventSize ?? buffer.kStringMaxLength
    }
  }

  /** @returns {boolean} */
  get destroyed () {
    return this[kDestroyed]
  }

  /** @returns {boolean} */
  get closed () {
    return this[kClosed]
  }

  close (callback) {
    if (callback === undefined) {
      return new Promise((resolve, reject) => {
        this.close((err, data) => {
          return err ? reject(err) : resolve(data)
        })
      })
    }

    if (typeof callback !== 'function') {
      throw new InvalidArgumentError('invalid callback')
    }

    if (this[kDestroyed]) {
      const err = new ClientDestroyedError()
      queueMicrotask(() => callback(err, null))
      return
    }

    if (this[kClosed]) {
      if (this[kOnClosed]) {
        this[kOnClosed].push(callback)
      } else {
        queueMicrotask(() => callback(null, null))
      }
      return
    }

    this[kClosed] = true
    this[kOnClosed] ??= []
    this[kOnClosed].push(callback)

    const onClosed = () => {
      const callbacks = this[kOnClosed]
      this[kOnClosed] = null
      for (let i = 0; i < callbacks.length; i++) {
        callbacks[i](null, null)
      }
    }

    // Should not error.
    this[kClose]()
      .then(() => this.destroy())
      .then(() => queueMicrotask(onClosed))
  }

  destroy (err, callback) {
    if (typeof err === 'function') {
      callback = err
      err = null
    }

    if (callback === undefined) {
      return new Promise((resolve, reject) => {
        this.destroy(err, (err, data) => {
          return err ? reject(err) : resolve(data)
        })
      })
    }

    if (typeof callback !== 'function') {
      throw new InvalidArgumentError('invalid callback')
    }

    if (this[kDestroyed]) {
      if (this[kOnDestroyed]) {
        this[kOnDestroyed].push(callback)
      } else {
        queueMicrotask(() => callback(null, null))
      }
      return
    }

    if (!err) {
      err = new ClientDestroyedError()
    }

    this[kDestroyed] = true
    this[kOnDestroyed] ??= []
    this[kOnDestroyed].push(callback)

    const onDestroyed = () => {
      const callbacks = this[kOnDestroyed]
      this[kOnDestroyed] = null
      for (let i = 0; i < callbacks.length; i++) {
        callbacks[i](null, null)
      }
    }

    // Should not error.
    this[kDestroy](err)
      .then(() => queueMicrotask(onDestroyed))
  }

  dispatch (opts, handler) {
    if (!handler || typeof handler !== 'object') {
      throw new InvalidArgumentError('handler must be an object')
    }

    handler = UnwrapHandler.unwrap(handler)

    try {
      if (!opts || typeof opts !== 'object') {
        throw new InvalidArgumentError('opts must be an object.')
      }

      if (this[kDestroyed] || this[kOnDestroyed]) {
        throw new ClientDestroyedError()
      }

      if (this[kClosed]) {
        throw new ClientClosedError()
      }

      return this[kDispatch](opts, handler)
    } catch (err) {
      if (typeof handler.onError !== 'function') {
        throw err
      }

      handler.onError(err)

      return false
    }
  }
}

module.exports = DispatcherBase


/***/ }),

/***/ 883:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {


const EventEmitter = __nccwpck_require__(8474)
const WrapHandler = __nccwpck_require__(9510)

const wrapInterceptor = (dispatch) => (opts, handler) => dispatch(opts, WrapHandler.wrap(handler))

class Dispatcher extends EventEmitter {
  dispatch () {
    throw new Error('not implemented')
  }

  close () {
    throw new Error('not implemented')
  }

  destroy () {
    throw new Error('not implemented')
  }

  compose (...args) {
    // So we handle [interceptor1, interceptor2] or interceptor1, interceptor2, ...
    const interceptors = Array.isArray(args[0]) ? args[0] : args
    let dispatch = this.dispatch.bind(this)

    for (const interceptor of interceptors) {
      if (interceptor == null) {
        continue
      }

      if (typeof interceptor !== 'function') {
        throw new TypeError(`invalid interceptor, expected function received ${typeof interceptor}`)
      }

      dispatch = interceptor(dispatch)
      dispatch = wrapInterceptor(dispatch)

      if (dispatch == null || typeof dispatch !== 'function' || dispatch.length !== 2) {
        throw new TypeError('invalid interceptor')
      }
    }

    return new Proxy(this, {
      get: (target, key) => key === 'dispatch' ? dispatch : target[key]
    })
  }
}

module.exports = Dispatcher


/***/ }),

/***/ 4660:
/***/ ((module) => {



// Extracted from node/lib/internal/fixed_queue.js

// Currently optimal queue size, tested on V8 6.0 - 6.6. Must be power of two.
const kSize = 2048
const kMask = kSize - 1

// The FixedQueue is implemented as a singly-linked list of fixed-size
// circular buffers. It looks something like this:
//
//  head                                                       tail
//    |                                                          |
//    v                                                          v
// +-----------+ <-----\       +-----------+ <------\         +-----------+
// |  [null]   |        \----- |   next    |         \------- |   next    |
// +-----------+               +-----------+                  +-----------+
// |   item    | <-- bottom    |   item    | <-- bottom       | undefined |
// |   item    |               |   item    |                  | undefined |
// |   item    |               |   item    |                  | undefined |
// |   item    |               |   item    |                  | undefined |
// |   item    |               |   item    |       bottom --> |   item    |
// |   item    |               |   item    |                  |   item    |
// |    ...    |               |    ...    |                  |    ...    |
// |   item    |               |   item    |                  |   item    |
// |   item    |               |   item    |                  |   item    |
// | undefined | <-- top       |   item    |                  |   item    |
// | undefined |               |   item    |                  |   item    |
// | undefined |               | undefined | <-- top  top --> | undefined |
// +-----------+               +-----------+                  +-----------+
//
// Or, if there is only one circular buffer, it looks something
// like either of these:
//
//  head   tail                                 head   tail
//    |     |                                     |     |
//    v     v                                     v     v
// +-----------+                               +-----------+
// |  [null]   |                               |  [null]   |
// +-----------+                               +-----------+
// | undefined |                               |   item    |
// | undefined |                               |   item    |
// |   item    | <-- bottom            top --> | undefined |
// |   item    |                               | undefined |
// | undefined | <-- top            bottom --> |   item    |
// | undefined |                               |   item    |
// +-----------+                               +-----------+
//
// Adding a value means moving `top` forward by one, removing means
// moving `bottom` forward by one. After reaching the end, the queue
// wraps around.
//
// When `top === bottom` the current queue is empty and when
// `top + 1 === bottom` it's full. This wastes a single space of storage
// but allows much quicker checks.

/**
 * @type {FixedCircularBuffer}
 * @template T
 */
class FixedCircularBuffer {
  /** @type {number} */
  bottom = 0
  /** @type {number} */
  top = 0
  /** @type {Array<T|undefined>} */
  list = new Array(kSize).fill(undefined)
  /** @type {T|null} */
  next = null

  /** @returns {boolean} */
  isEmpty () {
    return this.top === this.bottom
  }

  /** @returns {boolean} */
  isFull () {
    return ((this.top + 1) & kMask) === this.bottom
  }

  /**
   * @param {T} data
   * @returns {void}
   */
  push (data) {
    this.list[this.top] = data
    this.top = (this.top + 1) & kMask
  }

  /** @returns {T|null} */
  shift () {
    const nextItem = this.list[this.bottom]
    if (nextItem === undefined) { return null }
    this.list[this.bottom] = undefined
    this.bottom = (this.bottom + 1) & kMask
    return nextItem
  }
}

/**
 * @template T
 */
module.exports = class FixedQueue {
  constructor () {
    /** @type {FixedCircularBuffer<T>} */
    this.head = this.tail = new FixedCircularBuffer()
  }

  /** @returns {boolean} */
  isEmpty () {
    return this.head.isEmpty()
  }

  /** @param {T} data */
  push (data) {
    if (this.head.isFull()) {
      // Head is full: Creates a new queue, sets the old queue's `.next` to it,
      // and sets it as the new main queue.
      this.head = this.head.next = new FixedCircularBuffer()
    }
    this.head.push(data)
  }

  /** @returns {T|null} */
  shift () {
    const tail = this.tail
    const next = tail.shift()
    if (tail.isEmpty() && tail.next !== null) {
      // If there is another queue, it forms the new tail.
      this.tail = tail.next
      tail.next = null
    }
    return next
  }
}


/***/ }),

/***/ 2128:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const { PoolStats } = __nccwpck_require__(6854)
const DispatcherBase = __nccwpck_require__(1841)
const FixedQueue = __nccwpck_require__(4660)
const { kConnected, kSize, kRunning, kPending, kQueued, kBusy, kFree, kUrl, kClose, kDestroy, kDispatch } = __nccwpck_require__(6443)

const kClients = Symbol('clients')
const kNeedDrain = Symbol('needDrain')
const kQueue = Symbol('queue')
const kClosedResolve = Symbol('closed resolve')
const kOnDrain = Symbol('onDrain')
const kOnConnect = Symbol('onConnect')
const kOnDisconnect = Symbol('onDisconnect')
const kOnConnectionError = Symbol('onConnectionError')
const kGetDispatcher = Symbol('get dispatcher')
const kAddClient = Symbol('add client')
const kRemoveClient = Symbol('remove client')

class PoolBase extends DispatcherBase {
  [kQueue] = new FixedQueue();

  [kQueued] = 0;

  [kClients] = [];

  [kNeedDrain] = false;

  [kOnDrain] (client, origin, targets) {
    const queue = this[kQueue]

    let needDrain = false

    while (!needDrain) {
      const item = queue.shift()
      if (!item) {
        break
      }
      this[kQueued]--
      needDrain = !client.dispatch(item.opts, item.handler)
    }

    client[kNeedDrain] = needDrain

    if (!needDrain && this[kNeedDrain]) {
      this[kNeedDrain] = false
      this.emit('drain', origin, [this, ...targets])
    }

    if (this[kClosedResolve] && queue.isEmpty()) {
      const closeAll = []
      for (let i = 0; i < this[kClients].length; i++) {
        const client = this[kClients][i]
        if (!client.destroyed) {
          closeAll.push(client.close())
        }
      }
      return Promise.all(closeAll)
        .then(this[kClosedResolve])
    }
  }

  [kOnConnect] = (origin, targets) => {
    this.emit('connect', origin, [this, ...targets])
  };

  [kOnDisconnect] = (origin, targets, err) => {
    this.emit('disconnect', origin, [this, ...targets], err)
  };

  [kOnConnectionError] = (origin, targets, err) => {
    this.emit('connectionError', origin, [this, ...targets], err)
  }

  get [kBusy] () {
    return this[kNeedDrain]
  }

  get [kConnected] () {
    let ret = 0
    for (const { [kConnected]: connected } of this[kClients]) {
      ret += connected
    }
    return ret
  }

  get [kFree] () {
    let ret = 0
    for (const { [kConnected]: connected, [kNeedDrain]: needDrain } of this[kClients]) {
      ret += connected && !needDrain
    }
    return ret
  }

  get [kPending] () {
    let ret = this[kQueued]
    for (const { [kPending]: pending } of this[kClients]) {
      ret += pending
    }
    return ret
  }

  get [kRunning] () {
    let ret = 0
    for (const { [kRunning]: running } of this[kClients]) {
      ret += running
    }
    return ret
  }

  get [kSize] () {
    let ret = this[kQueued]
    for (const { [kSize]: size } of this[kClients]) {
      ret += size
    }
    return ret
  }

  get stats () {
    return new PoolStats(this)
  }

  [kClose] () {
    if (this[kQueue].isEmpty()) {
      const closeAll = []
      for (let i = 0; i < this[kClients].length; i++) {
        const client = this[kClients][i]
        if (!client.destroyed) {
          closeAll.push(client.close())
        }
      }
      return Promise.all(closeAll)
    } else {
      return new Promise((resolve) => {
        this[kClosedResolve] = resolve
      })
    }
  }

  [kDestroy] (err) {
    while (true) {
      const item = this[kQueue].shift()
      if (!item) {
        break
      }
      item.handler.onError(err)
    }

    const destroyAll = new Array(this[kClients].length)
    for (let i = 0; i < this[kClients].length; i++) {
      destroyAll[i] = this[kClients][i].destroy(err)
    }
    return Promise.all(destroyAll)
  }

  [kDispatch] (opts, handler) {
    const dispatcher = this[kGetDispatcher]()

    if (!dispatcher) {
      this[kNeedDrain] = true
      this[kQueue].push({ opts, handler })
      this[kQueued]++
    } else if (!dispatcher.dispatch(opts, handler)) {
      dispatcher[kNeedDrain] = true
      this[kNeedDrain] = !this[kGetDispatcher]()
    }

    return !this[kNeedDrain]
  }

  [kAddClient] (client) {
    client
      .on('drain', this[kOnDrain].bind(this, client))
      .on('connect', this[kOnConnect])
      .on('disconnect', this[kOnDisconnect])
      .on('connectionError', this[kOnConnectionError])

    this[kClients].push(client)

    if (this[kNeedDrain]) {
      queueMicrotask(() => {
        if (this[kNeedDrain]) {
          this[kOnDrain](client, client[kUrl], [client, this])
        }
      })
    }

    return this
  }

  [kRemoveClient] (client) {
    client.close(() => {
      const idx = this[kClients].indexOf(client)
      if (idx !== -1) {
        this[kClients].splice(idx, 1)
      }
    })

    this[kNeedDrain] = this[kClients].some(dispatcher => (
      !dispatcher[kNeedDrain] &&
      dispatcher.closed !== true &&
      dispatcher.destroyed !== true
    ))
  }
}

module.exports = {
  PoolBase,
  kClients,
  kNeedDrain,
  kAddClient,
  kRemoveClient,
  kGetDispatcher
}


/***/ }),

/***/ 628:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const {
  PoolBase,
  kClients,
  kNeedDrain,
  kAddClient,
  kGetDispatcher,
  kRemoveClient
} = __nccwpck_require__(2128)
const Client = __nccwpck_require__(3701)
const {
  InvalidArgumentError
} = __nccwpck_require__(8707)
const util = __nccwpck_require__(3440)
const { kUrl } = __nccwpck_require__(6443)
const buildConnector = __nccwpck_require__(9136)

const kOptions = Symbol('options')
const kConnections = Symbol('connections')
const kFactory = Symbol('factory')

function defaultFactory (origin, opts) {
  return new Client(origin, opts)
}

class Pool extends PoolBase {
  constructor (origin, {
    connections,
    factory = defaultFactory,
    connect,
    connectTimeout,
    tls,
    maxCachedSessions,
    socketPath,
    autoSelectFamily,
    autoSelectFamilyAttemptTimeout,
    allowH2,
    clientTtl,
    ...options
  } = {}) {
    if (connections != null && (!Number.isFinite(connections) || connections < 0)) {
      throw new InvalidArgumentError('invalid connections')
    }

    if (typeof factory !== 'function') {
      throw new InvalidArgumentError('factory must be a function.')
    }

    if (connect != null && typeof connect !== 'function' && typeof connect !== 'object') {
      throw new InvalidArgumentError('connect must be a function or an object')
    }

    if (typeof connect !== 'function') {
      connect = buildConnector({
        ...tls,
        maxCachedSessions,
        allowH2,
        socketPath,
        timeout: connectTimeout,
        ...(typeof autoSelectFamily === 'boolean' ? { autoSelectFamily, autoSelectFamilyAttemptTimeout } : undefined),
        ...connect
      })
    }

    super(options)

    this[kConnections] = connections || null
    this[kUrl] = util.parseOrigin(origin)
    this[kOptions] = { ...util.deepClone(options), connect, allowH2, clientTtl, socketPath }
    this[kOptions].interceptors = options.interceptors
      ? { ...options.interceptors }
      : undefined
    this[kFactory] = factory

    this.on('connect', (origin, targets) => {
      if (clientTtl != null && clientTtl > 0) {
        for (const target of targets) {
          Object.assign(target, { ttl: Date.now() })
        }
      }
    })

    this.on('connectionError', (origin, targets, error) => {
      // If a connection error occurs, we remove the client from the pool,
      // and emit a connectionError event. They will not be re-used.
      // Fixes https://github.com/nodejs/undici/issues/3895
      for (const target of targets) {
        // Do not use kRemoveClient here, as it will close the client,
        // but the client cannot be closed in this state.
        const idx = this[kClients].indexOf(target)
        if (idx !== -1) {
          this[kClients].splice(idx, 1)
        }
      }
    })
  }

  [kGetDispatcher] () {
    const clientTtlOption = this[kOptions].clientTtl
    for (const client of this[kClients]) {
      // check ttl of client and if it's stale, remove it from the pool
      if (clientTtlOption != null && clientTtlOption > 0 && client.ttl && ((Date.now() - client.ttl) > clientTtlOption)) {
        this[kRemoveClient](client)
      } else if (!client[kNeedDrain]) {
        return client
      }
    }

    if (!this[kConnections] || this[kClients].length < this[kConnections]) {
      const dispatcher = this[kFactory](this[kUrl], this[kOptions])
      this[kAddClient](dispatcher)
      return dispatcher
    }
  }
}

module.exports = Pool


/***/ }),

/***/ 276:
/***/ (module) => {



const textDecoder = new TextDecoder()

/**
 * @see https://encoding.spec.whatwg.org/#utf-8-decode
 * @param {Uint8Array} buffer
 */
function utf8DecodeBytes (buffer) {
  if (buffer.length === 0) {
    return ''
  }

  // 1. Let buffer be the result of peeking three bytes from
  //    ioQueue, converted to a byte sequence.

  // 2. If buffer is 0xEF 0xBB 0xBF, then read three
  //    bytes from ioQueue. (Do nothing with those bytes.)
  if (buffer[0] === 0xEF && buffer[1] === 0xBB && buffer[2] === 0xBF) {
    buffer = buffer.subarray(3)
  }

  // 3. Process a queue with an instance of UTF-8’s
  //    decoder, ioQueue, output, and "replacement".
  const output = textDecoder.decode(buffer)

  // 4. Return output.
  return output
}

module.exports = {
  utf8DecodeBytes
}


/***/ },

/***/ 2365:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const { parseHeaders } = __nccwpck_require__(3440)
const { InvalidArgumentError } = __nccwpck_require__(8707)

const kResume = Symbol('resume')

class UnwrapController {
  #paused = false
  #reason = null
  #aborted = false
  #abort

  [kResume] = null

  rawHeaders = null
  rawTrailers = null

  constructor (abort) {
    this.#abort = abort
  }

  pause () {
    this.#paused = true
  }

  resume () {
    if (this.#paused) {
      this.#paused = false
      this[kResume]?.()
    }
  }

  abort (reason) {
    if (!this.#aborted) {
      this.#aborted = true
      this.#reason = reason
      this.#abort(reason)
    }
  }

  get aborted () {
    return this.#aborted
  }

  get reason () {
    return this.#reason
  }

  get paused () {
    return this.#paused
  }
}

module.exports = class UnwrapHandler {
  #handler
  #controller

  constructor (handler) {
    this.#handler = handler
  }

  static unwrap (handler) {
    // TODO (fix): More checks...
    return !handler.onRequestStart ? handler : new UnwrapHandler(handler)
  }

  onConnect (abort, context) {
    this.#controller = new UnwrapController(abort)
    this.#handler.onRequestStart?.(this.#controller, context)
  }

  onResponseStarted () {
    return this.#handler.onResponseStarted?.()
  }

  onUpgrade (statusCode, rawHeaders, socket) {
    this.#controller.rawHeaders = rawHeaders
    this.#handler.onRequestUpgrade?.(this.#controller, statusCode, parseHeaders(rawHeaders), socket)
  }

  onHeaders (statusCode, rawHeaders, resume, statusMessage) {
    this.#controller[kResume] = resume
    this.#controller.rawHeaders = rawHeaders
    this.#handler.onResponseStart?.(this.#controller, statusCode, parseHeaders(rawHeaders), statusMessage)
    return !this.#controller.paused
  }

  onData (data) {
    this.#handler.onResponseData?.(this.#controller, data)
    return !this.#controller.paused
  }

  onComplete (rawTrailers) {
    this.#controller.rawTrailers = rawTrailers
    this.#handler.onResponseEnd?.(this.#controller, parseHeaders(rawTrailers))
  }

  onError (err) {
    if (!this.#handler.onResponseError) {
      throw new InvalidArgumentError('invalid onError method')
    }

    this.#handler.onResponseError?.(this.#controller, err)
  }
}


/***/ }),

/***/ 9510:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const { InvalidArgumentError } = __nccwpck_require__(8707)

module.exports = class WrapHandler {
  #handler

  constructor (handler) {
    this.#handler = handler
  }

  static wrap (handler) {
    // TODO (fix): More checks...
    return handler.onRequestStart ? handler : new WrapHandler(handler)
  }

  // Unwrap Interface

  onConnect (abort, context) {
    return this.#handler.onConnect?.(abort, context)
  }

  onResponseStarted () {
    return this.#handler.onResponseStarted?.()
  }

  onHeaders (statusCode, rawHeaders, resume, statusMessage) {
    return this.#handler.onHeaders?.(statusCode, rawHeaders, resume, statusMessage)
  }

  onUpgrade (statusCode, rawHeaders, socket) {
    return this.#handler.onUpgrade?.(statusCode, rawHeaders, socket)
  }

  onData (data) {
    return this.#handler.onData?.(data)
  }

  onComplete (trailers) {
    return this.#handler.onComplete?.(trailers)
  }

  onError (err) {
    if (!this.#handler.onError) {
      throw err
    }

    return this.#handler.onError?.(err)
  }

  // Wrap Interface

  onRequestStart (controller, context) {
    this.#handler.onConnect?.((reason) => controller.abort(reason), context)
  }

  onRequestUpgrade (controller, statusCode, headers, socket) {
    const rawHeaders = []
    for (const [key, val] of Object.entries(headers)) {
      rawHeaders.push(Buffer.from(key, 'latin1'), toRawHeaderValue(val))
    }

    this.#handler.onUpgrade?.(statusCode, rawHeaders, socket)
  }

  onResponseStart (controller, statusCode, headers, statusMessage) {
    const rawHeaders = []
    for (const [key, val] of Object.entries(headers)) {
      rawHeaders.push(Buffer.from(key, 'latin1'), toRawHeaderValue(val))
    }

    if (this.#handler.onHeaders?.(statusCode, rawHeaders, () => controller.resume(), statusMessage) === false) {
      controller.pause()
    }
  }

  onResponseData (controller, data) {
    if (this.#handler.onData?.(data) === false) {
      controller.pause()
    }
  }

  onResponseEnd (controller, trailers) {
    const rawTrailers = []
    for (const [key, val] of Object.entries(trailers)) {
      rawTrailers.push(Buffer.from(key, 'latin1'), toRawHeaderValue(val))
    }

    this.#handler.onComplete?.(rawTrailers)
  }

  onResponseError (controller, err) {
    if (!this.#handler.onError) {
      throw new InvalidArgumentError('invalid onError method')
    }

    this.#handler.onError?.(err)
  }
}

function toRawHeaderValue (value) {
  return Array.isArray(value)
    ? value.map((item) => Buffer.from(item, 'latin1'))
    : Buffer.from(value, 'latin1')
}


/***/ }),

/***/ 2824:
/***/ ((__unused_webpack_module, exports, __nccwpck_require__) => {


Object.defineProperty(exports, "__esModule", ({ value: true }));
exports.SPECIAL_HEADERS = exports.MINOR = exports.MAJOR = exports.HTAB_SP_VCHAR_OBS_TEXT = exports.QUOTED_STRING = exports.CONNECTION_TOKEN_CHARS = exports.HEADER_CHARS = exports.TOKEN = exports.HEX = exports.URL_CHAR = exports.USERINFO_CHARS = exports.MARK = exports.ALPHANUM = exports.NUM = exports.HEX_MAP = exports.NUM_MAP = exports.ALPHA = exports.STATUSES_HTTP = exports.H_METHOD_MAP = exports.METHOD_MAP = exports.METHODS_RTSP = exports.METHODS_ICE = exports.METHODS_HTTP = exports.HEADER_STATE = exports.FINISH = exports.STATUSES = exports.METHODS = exports.LENIENT_FLAGS = exports.FLAGS = exports.TYPE = exports.ERROR = void 0;
const utils_1 = __nccwpck_require__(172);
// Emums
exports.ERROR = {
    OK: 0,
    INTERNAL: 1,
    STRICT: 2,
    CR_EXPECTED: 25,
    LF_EXPECTED: 3,
    UNEXPECTED_CONTENT_LENGTH: 4,
    UNEXPECTED_SPACE: 30,
    CLOSED_CONNECTION: 5,
    INVALID_METHOD: 6,
    INVALID_URL: 7,
    INVALID_CONSTANT: 8,
    INVALID_VERSION: 9,
    INVALID_HEADER_TOKEN: 10,
    INVALID_CONTENT_LENGTH: 11,
    INVALID_CHUNK_SIZE: 12,
    INVALID_STATUS: 13,
    INVALID_EOF_STATE: 14,
    INVALID_TRANSFER_ENCODING: 15,
    CB_MESSAGE_BEGIN: 16,
    CB_HEADERS_COMPLETE: 17,
    CB_MESSAGE_COMPLETE: 18,
    CB_CHUNK_HEADER: 19,
    CB_CHUNK_COMPLETE: 20,
    PAUSED: 21,
    PAUSED_UPGRADE: 22,
    PAUSED_H2_UPGRADE: 23,
    USER: 24,
    CB_URL_COMPLETE: 26,
    CB_STATUS_COMPLETE: 27,
    CB_METHOD_COMPLETE: 32,
    CB_VERSION_COMPLETE: 33,
    CB_HEADER_FIELD_COMPLETE: 28,
    CB_HEADER_VALUE_COMPLETE: 29,
    CB_CHUNK_EXTENSION_NAME_COMPLETE: 34,
    CB_CHUNK_EXTENSION_VALUE_COMPLETE: 35,
    CB_RESET: 31,
    CB_PROTOCOL_COMPLETE: 38,
};
exports.TYPE = {
    BOTH: 0, // default
    REQUEST: 1,
    RESPONSE: 2,
};
exports.FLAGS = {
    CONNECTION_KEEP_ALIVE: 1 << 0,
    CONNECTION_CLOSE: 1 << 1,
    CONNECTION_UPGRADE: 1 << 2,
    CHUNKED: 1 << 3,
    UPGRADE: 1 << 4,
    CONTENT_LENGTH: 1 << 5,
    SKIPBODY: 1 << 6,
    TRAILING: 1 << 7,
    // 1 << 8 is unused
    TRANSFER_ENCODING: 1 << 9,
};
exports.LENIENT_FLAGS = {
    HEADERS: 1 << 0,
    CHUNKED_LENGTH: 1 << 1,
    KEEP_ALIVE: 1 << 2,
    TRANSFER_ENCODING: 1 << 3,
    VERSION: 1 << 4,
    DATA_AFTER_CLOSE: 1 << 5,
    OPTIONAL_LF_AFTER_CR: 1 << 6,
    OPTIONAL_CRLF_AFTER_CHUNK: 1 << 7,
    OPTIONAL_CR_BEFORE_LF: 1 << 8,
    SPACES_AFTER_CHUNK_SIZE: 1 << 9,
};
exports.METHODS = {
    'DELETE': 0,
    'GET': 1,
    'HEAD': 2,
    'POST': 3,
    'PUT': 4,
    /* pathological */
    'CONNECT': 5,
    'OPTIONS': 6,
    'TRACE': 7,
    /* WebDAV */
    'COPY': 8,
    'LOCK': 9,
    'MKCOL': 10,
    'MOVE': 11,
    'PROPFIND': 12,
    'PROPPATCH': 13,
    'SEARCH': 14,
    'UNLOCK': 15,
    'BIND': 16,
    'REBIND': 17,
    'UNBIND': 18,
    'ACL': 19,
    /* subversion */
    'REPORT': 20,
    'MKACTIVITY': 21,
    'CHECKOUT': 22,
    'MERGE': 23,
    /* upnp */
    'M-SEARCH': 24,
    'NOTIFY': 25,
    'SUBSCRIBE': 26,
    'UNSUBSCRIBE': 27,
    /* RFC-5789 */
    'PATCH': 28,
    'PURGE': 29,
    /* CalDAV */
    'MKCALENDAR': 30,
    /* RFC-2068, section 19.6.1.2 */
    'LINK': 31,
    'UNLINK': 32,
    /* icecast */
    'SOURCE': 33,
    /* RFC-7540, section 11.6 */
    'PRI': 34,
    /* RFC-2326 RTSP */
    'DESCRIBE': 35,
    'ANNOUNCE': 36,
    'SETUP': 37,
    'PLAY': 38,
    'PAUSE': 39,
    'TEARDOWN': 40,
    'GET_PARAMETER': 41,
    'SET_PARAMETER': 42,
    'REDIRECT': 43,
    'RECORD': 44,
    /* RAOP */
    'FLUSH': 45,
    /* DRAFT https://www.ietf.org/archive/id/draft-ietf-httpbis-safe-method-w-body-02.html */
    'QUERY': 46,
};
exports.STATUSES = {
    CONTINUE: 100,
    SWITCHING_PROTOCOLS: 101,
    PROCESSING: 102,
    EARLY_HINTS: 103,
    RESPONSE_IS_STALE: 110, // Unofficial
    REVALIDATION_FAILED: 111, // Unofficial
    DISCONNECTED_OPERATION: 112, // Unofficial
    HEURISTIC_EXPIRATION: 113, // Unofficial
    MISCELLANEOUS_WARNING: 199, // Unofficial
    OK: 200,
    CREATED: 201,
    ACCEPTED: 202,
    NON_AUTHORITATIVE_INFORMATION: 203,
    NO_CONTENT: 204,
    RESET_CONTENT: 205,
    PARTIAL_CONTENT: 206,
    MULTI_STATUS: 207,
    ALREADY_REPORTED: 208,
    TRANSFORMATION_APPLIED: 214, // Unofficial
    IM_USED: 226,
    MISCELLANEOUS_PERSISTENT_WARNING: 299, // Unofficial
    MULTIPLE_CHOICES: 300,
    MOVED_PERMANENTLY: 301,
    FOUND: 302,
    SEE_OTHER: 303,
    NOT_MODIFIED: 304,
    USE_PROXY: 305,
    SWITCH_PROXY: 306, // No longer used
    TEMPORARY_REDIRECT: 307,
    PERMANENT_REDIRECT: 308,
    BAD_REQUEST: 400,
    UNAUTHORIZED: 401,
    PAYMENT_REQUIRED: 402,
    FORBIDDEN: 403,
    NOT_FOUND: 404,
    METHOD_NOT_ALLOWED: 405,
    NOT_ACCEPTABLE: 406,
    PROXY_AUTHENTICATION_REQUIRED: 407,
    REQUEST_TIMEOUT: 408,
    CONFLICT: 409,
    GONE: 410,
    LENGTH_REQUIRED: 411,
    PRECONDITION_FAILED: 412,
    PAYLOAD_TOO_LARGE: 413,
    URI_TOO_LONG: 414,
    UNSUPPORTED_MEDIA_TYPE: 415,
    RANGE_NOT_SATISFIABLE: 416,
    EXPECTATION_FAILED: 417,
    IM_A_TEAPOT: 418,
    PAGE_EXPIRED: 419, // Unofficial
    ENHANCE_YOUR_CALM: 420, // Unofficial
    MISDIRECTED_REQUEST: 421,
    UNPROCESSABLE_ENTITY: 422,
    LOCKED: 423,
    FAILED_DEPENDENCY: 424,
    TOO_EARLY: 425,
    UPGRADE_REQUIRED: 426,
    PRECONDITION_REQUIRED: 428,
    TOO_MANY_REQUESTS: 429,
    REQUEST_HEADER_FIELDS_TOO_LARGE_UNOFFICIAL: 430, // Unofficial
    REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
    LOGIN_TIMEOUT: 440, // Unofficial
    NO_RESPONSE: 444, // Unofficial
    RETRY_WITH: 449, // Unofficial
    BLOCKED_BY_PARENTAL_CONTROL: 450, // Unofficial
    UNAVAILABLE_FOR_LEGAL_REASONS: 451,
    CLIENT_CLOSED_LOAD_BALANCED_REQUEST: 460, // Unofficial
    INVALID_X_FORWARDED_FOR: 463, // Unofficial
    REQUEST_HEADER_TOO_LARGE: 494, // Unofficial
    SSL_CERTIFICATE_ERROR: 495, // Unofficial
    SSL_CERTIFICATE_REQUIRED: 496, // Unofficial
    HTTP_REQUEST_SENT_TO_HTTPS_PORT: 497, // Unofficial
    INVALID_TOKEN: 498, // Unofficial
    CLIENT_CLOSED_REQUEST: 499, // Unofficial
    INTERNAL_SERVER_ERROR: 500,
    NOT_IMPLEMENTED: 501,
    BAD_GATEWAY: 502,
    SERVICE_UNAVAILABLE: 503,
    GATEWAY_TIMEOUT: 504,
    HTTP_VERSION_NOT_SUPPORTED: 505,
    VARIANT_ALSO_NEGOTIATES: 506,
    INSUFFICIENT_STORAGE: 507,
    LOOP_DETECTED: 508,
    BANDWIDTH_LIMIT_EXCEEDED: 509,
    NOT_EXTENDED: 510,
    NETWORK_AUTHENTICATION_REQUIRED: 511,
    WEB_SERVER_UNKNOWN_ERROR: 520, // Unofficial
    WEB_SERVER_IS_DOWN: 521, // Unofficial
    CONNECTION_TIMEOUT: 522, // Unofficial
    ORIGIN_IS_UNREACHABLE: 523, // Unofficial
    TIMEOUT_OCCURED: 524, // Unofficial
    SSL_HANDSHAKE_FAILED: 525, // Unofficial
    INVALID_SSL_CERTIFICATE: 526, // Unofficial
    RAILGUN_ERROR: 527, // Unofficial
    SITE_IS_OVERLOADED: 529, // Unofficial
    SITE_IS_FROZEN: 530, // Unofficial
    IDENTITY_PROVIDER_AUTHENTICATION_ERROR: 561, // Unofficial
    NETWORK_READ_TIMEOUT: 598, // Unofficial
    NETWORK_CONNECT_TIMEOUT: 599, // Unofficial
};
exports.FINISH = {
    SAFE: 0,
    SAFE_WITH_CB: 1,
    UNSAFE: 2,
};
exports.HEADER_STATE = {
    GENERAL: 0,
    CONNECTION: 1,
    CONTENT_LENGTH: 2,
    TRANSFER_ENCODING: 3,
    UPGRADE: 4,
    CONNECTION_KEEP_ALIVE: 5,
    CONNECTION_CLOSE: 6,
    CONNECTION_UPGRADE: 7,
    TRANSFER_ENCODING_CHUNKED: 8,
};
// C headers
exports.METHODS_HTTP = [
    exports.METHODS.DELETE,
    exports.METHODS.GET,
    exports.METHODS.HEAD,
    exports.METHODS.POST,
    exports.METHODS.PUT,
    exports.METHODS.CONNECT,
    exports.METHODS.OPTIONS,
    exports.METHODS.TRACE,
    exports.METHODS.COPY,
    exports.METHODS.LOCK,
    exports.METHODS.MKCOL,
    exports.METHODS.MOVE,
    exports.METHODS.PROPFIND,
    exports.METHODS.PROPPATCH,
    exports.METHODS.SEARCH,
    exports.METHODS.UNLOCK,
    exports.METHODS.BIND,
    exports.METHODS.REBIND,
    exports.METHODS.UNBIND,
    exports.METHODS.ACL,
    exports.METHODS.REPORT,
    exports.METHODS.MKACTIVITY,
    exports.METHODS.CHECKOUT,
    exports.METHODS.MERGE,
    exports.METHODS['M-SEARCH'],
    exports.METHODS.NOTIFY,
    exports.METHODS.SUBSCRIBE,
    exports.METHODS.UNSUBSCRIBE,
    exports.METHODS.PATCH,
    exports.METHODS.PURGE,
    exports.METHODS.MKCALENDAR,
    exports.METHODS.LINK,
    exports.METHODS.UNLINK,
    exports.METHODS.PRI,
    // TODO(indutny): should we allow it with HTTP?
    exports.METHODS.SOURCE,
    exports.METHODS.QUERY,
];
exports.METHODS_ICE = [
    exports.METHODS.SOURCE,
];
exports.METHODS_RTSP = [
    exports.METHODS.OPTIONS,
    exports.METHODS.DESCRIBE,
    exports.METHODS.ANNOUNCE,
    exports.METHODS.SETUP,
    exports.METHODS.PLAY,
    exports.METHODS.PAUSE,
    exports.METHODS.TEARDOWN,
    exports.METHODS.GET_PARAMETER,
    exports.METHODS.SET_PARAMETER,
    exports.METHODS.REDIRECT,
    exports.METHODS.RECORD,
    exports.METHODS.FLUSH,
    // For AirPlay
    exports.METHODS.GET,
    exports.METHODS.POST,
];
exports.METHOD_MAP = (0, utils_1.enumToMap)(exports.METHODS);
exports.H_METHOD_MAP = Object.fromEntries(Object.entries(exports.METHODS).filter(([k]) => k.startsWith('H')));
exports.STATUSES_HTTP = [
    exports.STATUSES.CONTINUE,
    exports.STATUSES.SWITCHING_PROTOCOLS,
    exports.STATUSES.PROCESSING,
    exports.STATUSES.EARLY_HINTS,
    exports.STATUSES.RESPONSE_IS_STALE,
    exports.STATUSES.REVALIDATION_FAILED,
    exports.STATUSES.DISCONNECTED_OPERATION,
    exports.STATUSES.HEURISTIC_EXPIRATION,
    exports.STATUSES.MISCELLANEOUS_WARNING,
    exports.STATUSES.OK,
    exports.STATUSES.CREATED,
    exports.STATUSES.ACCEPTED,
    exports.STATUSES.NON_AUTHORITATIVE_INFORMATION,
    exports.STATUSES.NO_CONTENT,
    exports.STATUSES.RESET_CONTENT,
    exports.STATUSES.PARTIAL_CONTENT,
    exports.STATUSES.MULTI_STATUS,
    exports.STATUSES.ALREADY_REPORTED,
    exports.STATUSES.TRANSFORMATION_APPLIED,
    exports.STATUSES.IM_USED,
    exports.STATUSES.MISCELLANEOUS_PERSISTENT_WARNING,
    exports.STATUSES.MULTIPLE_CHOICES,
    exports.STATUSES.MOVED_PERMANENTLY,
    exports.STATUSES.FOUND,
    exports.STATUSES.SEE_OTHER,
    exports.STATUSES.NOT_MODIFIED,
    exports.STATUSES.USE_PROXY,
    exports.STATUSES.SWITCH_PROXY,
    exports.STATUSES.TEMPORARY_REDIRECT,
    exports.STATUSES.PERMANENT_REDIRECT,
    exports.STATUSES.BAD_REQUEST,
    exports.STATUSES.UNAUTHORIZED,
    exports.STATUSES.PAYMENT_REQUIRED,
    exports.STATUSES.FORBIDDEN,
    exports.STATUSES.NOT_FOUND,
    exports.STATUSES.METHOD_NOT_ALLOWED,
    exports.STATUSES.NOT_ACCEPTABLE,
    exports.STATUSES.PROXY_AUTHENTICATION_REQUIRED,
    exports.STATUSES.REQUEST_TIMEOUT,
    exports.STATUSES.CONFLICT,
    exports.STATUSES.GONE,
    exports.STATUSES.LENGTH_REQUIRED,
    exports.STATUSES.PRECONDITION_FAILED,
    exports.STATUSES.PAYLOAD_TOO_LARGE,
    exports.STATUSES.URI_TOO_LONG,
    exports.STATUSES.UNSUPPORTED_MEDIA_TYPE,
    exports.STATUSES.RANGE_NOT_SATISFIABLE,
    exports.STATUSES.EXPECTATION_FAILED,
    exports.STATUSES.IM_A_TEAPOT,
    exports.STATUSES.PAGE_EXPIRED,
    exports.STATUSES.ENHANCE_YOUR_CALM,
    exports.STATUSES.MISDIRECTED_REQUEST,
    exports.STATUSES.UNPROCESSABLE_ENTITY,
    exports.STATUSES.LOCKED,
    exports.STATUSES.FAILED_DEPENDENCY,
    exports.STATUSES.TOO_EARLY,
    exports.STATUSES.UPGRADE_REQUIRED,
    exports.STATUSES.PRECONDITION_REQUIRED,
    exports.STATUSES.TOO_MANY_REQUESTS,
    exports.STATUSES.REQUEST_HEADER_FIELDS_TOO_LARGE_UNOFFICIAL,
    exports.STATUSES.REQUEST_HEADER_FIELDS_TOO_LARGE,
    exports.STATUSES.LOGIN_TIMEOUT,
    exports.STATUSES.NO_RESPONSE,
    exports.STATUSES.RETRY_WITH,
    exports.STATUSES.BLOCKED_BY_PARENTAL_CONTROL,
    exports.STATUSES.UNAVAILABLE_FOR_LEGAL_REASONS,
    exports.STATUSES.CLIENT_CLOSED_LOAD_BALANCED_REQUEST,
    exports.STATUSES.INVALID_X_FORWARDED_FOR,
    exports.STATUSES.REQUEST_HEADER_TOO_LARGE,
    exports.STATUSES.SSL_CERTIFICATE_ERROR,
    exports.STATUSES.SSL_CERTIFICATE_REQUIRED,
    exports.STATUSES.HTTP_REQUEST_SENT_TO_HTTPS_PORT,
    exports.STATUSES.INVALID_TOKEN,
    exports.STATUSES.CLIENT_CLOSED_REQUEST,
    exports.STATUSES.INTERNAL_SERVER_ERROR,
    exports.STATUSES.NOT_IMPLEMENTED,
    exports.STATUSES.BAD_GATEWAY,
    exports.STATUSES.SERVICE_UNAVAILABLE,
    exports.STATUSES.GATEWAY_TIMEOUT,
    exports.STATUSES.HTTP_VERSION_NOT_SUPPORTED,
    exports.STATUSES.VARIANT_ALSO_NEGOTIATES,
    exports.STATUSES.INSUFFICIENT_STORAGE,
    exports.STATUSES.LOOP_DETECTED,
    exports.STATUSES.BANDWIDTH_LIMIT_EXCEEDED,
    exports.STATUSES.NOT_EXTENDED,
    exports.STATUSES.NETWORK_AUTHENTICATION_REQUIRED,
    exports.STATUSES.WEB_SERVER_UNKNOWN_ERROR,
    exports.STATUSES.WEB_SERVER_IS_DOWN,
    exports.STATUSES.CONNECTION_TIMEOUT,
    exports.STATUSES.ORIGIN_IS_UNREACHABLE,
    exports.STATUSES.TIMEOUT_OCCURED,
    exports.STATUSES.SSL_HANDSHAKE_FAILED,
    exports.STATUSES.INVALID_SSL_CERTIFICATE,
    exports.STATUSES.RAILGUN_ERROR,
    exports.STATUSES.SITE_IS_OVERLOADED,
    exports.STATUSES.SITE_IS_FROZEN,
    exports.STATUSES.IDENTITY_PROVIDER_AUTHENTICATION_ERROR,
    exports.STATUSES.NETWORK_READ_TIMEOUT,
    exports.STATUSES.NETWORK_CONNECT_TIMEOUT,
];
exports.ALPHA = [];
for (let i = 'A'.charCodeAt(0); i <= 'Z'.charCodeAt(0); i++) {
    // Upper case
    exports.ALPHA.push(String.fromCharCode(i));
    // Lower case
    exports.ALPHA.push(String.fromCharCode(i + 0x20));
}
exports.NUM_MAP = {
    0: 0, 1: 1, 2: 2, 3: 3, 4: 4,
    5: 5, 6: 6, 7: 7, 8: 8, 9: 9,
};
exports.HEX_MAP = {
    0: 0, 1: 1, 2: 2, 3: 3, 4: 4,
    5: 5, 6: 6, 7: 7, 8: 8, 9: 9,
    A: 0XA, B: 0XB, C: 0XC, D: 0XD, E: 0XE, F: 0XF,
    a: 0xa, b: 0xb, c: 0xc, d: 0xd, e: 0xe, f: 0xf,
};
exports.NUM = [
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
];
exports.ALPHANUM = exports.ALPHA.concat(exports.NUM);
exports.MARK = ['-', '_', '.', '!', '~', '*', '\'', '(', ')'];
exports.USERINFO_CHARS = exports.ALPHANUM
    .concat(exports.MARK)
    .concat(['%', ';', ':', '&', '=', '+', '$', ',']);
// TODO(indutny): use RFC
exports.URL_CHAR = [
    '!', '"', '$', '%', '&', '\'',
    '(', ')', '*', '+', ',', '-', '.', '/',
    ':', ';', '<', '=', '>',
    '@', '[', '\\', ']', '^', '_',
    '`',
    '{', '|', '}', '~',
].concat(exports.ALPHANUM);
exports.HEX = exports.NUM.concat(['a', 'b', 'c', 'd', 'e', 'f', 'A', 'B', 'C', 'D', 'E', 'F']);
/* Tokens as defined by rfc 2616. Also lowercases them.
 *        token       = 1*<any CHAR except CTLs or separators>
 *     separators     = "(" | ")" | "<" | ">" | "@"
 *                    | "," | ";" | ":" | "\" | <">
 *                    | "/" | "[" | "]" | "?" | "="
 *                    | "{" | "}" | SP | HT
 */
exports.TOKEN = [
    '!', '#', '$', '%', '&', '\'',
    '*', '+', '-', '.',
    '^', '_', '`',
    '|', '~',
].concat(exports.ALPHANUM);
/*
 * Verify that a char is a valid visible (printable) US-ASCII
 * character or %x80-FF
 */
exports.HEADER_CHARS = ['\t'];
for (let i = 32; i <= 255; i++) {
    if (i !== 127) {
        exports.HEADER_CHARS.push(i);
    }
}
// ',' = \x44
exports.CONNECTION_TOKEN_CHARS = exports.HEADER_CHARS.filter((c) => c !== 44);
exports.QUOTED_STRING = ['\t', ' '];
for (let i = 0x21; i <= 0xff; i++) {
    if (i !== 0x22 && i !== 0x5c) { // All characters in ASCII except \ and "
        exports.QUOTED_STRING.push(i);
    }
}
exports.HTAB_SP_VCHAR_OBS_TEXT = ['\t', ' '];
// VCHAR: https://tools.ietf.org/html/rfc5234#appendix-B.1
for (let i = 0x21; i <= 0x7E; i++) {
    exports.HTAB_SP_VCHAR_OBS_TEXT.push(i);
}
// OBS_TEXT: https://datatracker.ietf.org/doc/html/rfc9110#name-collected-abnf
for (let i = 0x80; i <= 0xff; i++) {
    exports.HTAB_SP_VCHAR_OBS_TEXT.push(i);
}
exports.MAJOR = exports.NUM_MAP;
exports.MINOR = exports.MAJOR;
exports.SPECIAL_HEADERS = {
    'connection': exports.HEADER_STATE.CONNECTION,
    'content-length': exports.HEADER_STATE.CONTENT_LENGTH,
    'proxy-connection': exports.HEADER_STATE.CONNECTION,
    'transfer-encoding': exports.HEADER_STATE.TRANSFER_ENCODING,
    'upgrade': exports.HEADER_STATE.UPGRADE,
};
exports["default"] = {
    ERROR: exports.ERROR,
    TYPE: exports.TYPE,
    FLAGS: exports.FLAGS,
    LENIENT_FLAGS: exports.LENIENT_FLAGS,
    METHODS: exports.METHODS,
    STATUSES: exports.STATUSES,
    FINISH: exports.FINISH,
    HEADER_STATE: exports.HEADER_STATE,
    ALPHA: exports.ALPHA,
    NUM_MAP: exports.NUM_MAP,
    HEX_MAP: exports.HEX_MAP,
    NUM: exports.NUM,
    ALPHANUM: exports.ALPHANUM,
    MARK: exports.MARK,
    USERINFO_CHARS: exports.USERINFO_CHARS,
    URL_CHAR: exports.URL_CHAR,
    HEX: exports.HEX,
    TOKEN: exports.TOKEN,
    HEADER_CHARS: exports.HEADER_CHARS,
    CONNECTION_TOKEN_CHARS: exports.CONNECTION_TOKEN_CHARS,
    QUOTED_STRING: exports.QUOTED_STRING,
    HTAB_SP_VCHAR_OBS_TEXT: exports.HTAB_SP_VCHAR_OBS_TEXT,
    MAJOR: exports.MAJOR,
    MINOR: exports.MINOR,
    SPECIAL_HEADERS: exports.SPECIAL_HEADERS,
    METHODS_HTTP: exports.METHODS_HTTP,
    METHODS_ICE: exports.METHODS_ICE,
    METHODS_RTSP: exports.METHODS_RTSP,
    METHOD_MAP: exports.METHOD_MAP,
    H_METHOD_MAP: exports.H_METHOD_MAP,
    STATUSES_HTTP: exports.STATUSES_HTTP,
};


/***/ }),

/***/ 3870:
/***/ (module, __unused_webpack_exports, __nccwpck_require__) => {

/* module decorator */ module = __nccwpck_require__.nmd(module);


const { Buffer } = __nccwpck_require__(4573)

const wasmBase64 = 'AGFzbQEAAAABJwdgAX8Bf2ADf39/AX9gAn9/AGABfwBgBH9/f38Bf2AAAGADf39/AALLAQgDZW52GHdhc21fb25faGVhZGVyc19jb21wbGV0ZQAEA2VudhV3YXNtX29uX21lc3NhZ2VfYmVnaW4AAANlbnYLd2FzbV9vbl91cmwAAQNlbnYOd2FzbV9vbl9zdGF0dXMAAQNlbnYUd2FzbV9vbl9oZWFkZXJfZmllbGQAAQNlbnYUd2FzbV9vbl9oZWFkZXJfdmFsdWUAAQNlbnYMd2FzbV9vbl9ib2R5AAEDZW52GHdhc21fb25fbWVzc2FnZV9jb21wbGV0ZQAAAzU0BQYAAAMAAAAAAAADAQMAAwMDAAACAAAAAAICAgICAgICAgIBAQEBAQEBAQEBAwAAAwAAAAQFAXABExMFAwEAAgYIAX8BQcDZBAsHxQcoBm1lbW9yeQIAC19pbml0aWFsaXplAAgZX19pbmRpcmVjdF9mdW5jdGlvbl90YWJsZQEAC2xsaHR0cF9pbml0AAkYbGxodHRwX3Nob3VsZF9rZWVwX2FsaXZlADcMbGxodHRwX2FsbG9jAAsGbWFsbG9jADkLbGxodHRwX2ZyZWUADARmcmVlAAwPbGxodHRwX2dldF90eXBlAA0VbGxodHRwX2dldF9odHRwX21ham9yAA4VbGxodHRwX2dldF9odHRwX21pbm9yAA8RbGxodHRwX2dldF9tZXRob2QAEBZsbGh0dHBfZ2V0X3N0YXR1c19jb2RlABESbGxodHRwX2dldF91cGdyYWRlABIMbGxodHRwX3Jlc2V0ABMObGxodHRwX2V4ZWN1dGUAFBRsbGh0dHBfc2V0dGluZ3NfaW5pdAAVDWxsaHR0cF9maW5pc2gAFgxsbGh0dHBfcGF1c2UAFw1sbGh0dHBfcmVzdW1lABgbbGxodHRwX3Jlc3VtZV9hZnRlcl91cGdyYWRlABkQbGxodHRwX2dldF9lcnJubwAaF2xsaHR0cF9nZXRfZXJyb3JfcmVhc29uABsXbGxodHRwX3NldF9lcnJvcl9yZWFzb24AHBRsbGh0dHBfZ2V0X2Vycm9yX3BvcwAdEWxsaHR0cF9lcnJub19uYW1lAB4SbGxodHRwX21ldGhvZF9uYW1lAB8SbGxodHRwX3N0YXR1c19uYW1lACAabGxodHRwX3NldF9sZW5pZW50X2hlYWRlcnMAISFsbGh0dHBfc2V0X2xlbmllbnRfY2h1bmtlZF9sZW5ndGgAIh1sbGh0dHBfc2V0X2xlbmllbnRfa2VlcF9hbGl2ZQAjJGxsaHR0cF9zZXRfbGVuaWVudF90cmFuc2Zlcl9lbmNvZGluZwAkGmxsaHR0cF9zZXRfbGVuaWVudF92ZXJzaW9uACUjbGxodHRwX3NldF9sZW5pZW50X2RhdGFfYWZ0ZXJfY2xvc2UAJidsbGh0dHBfc2V0X2xlbmllbnRfb3B0aW9uYWxfbGZfYWZ0ZXJfY3IAJyxsbGh0dHBfc2V0X2xlbmllbnRfb3B0aW9uYWxfY3JsZl9hZnRlcl9jaHVuawAoKGxsaHR0cF9zZXRfbGVuaWVudF9vcHRpb25hbF9jcl9iZWZvcmVfbGYAKSpsbGh0dHBfc2V0X2xlbmllbnRfc3BhY2VzX2FmdGVyX2NodW5rX3NpemUAKhhsbGh0dHBfbWVzc2FnZV9uZWVkc19lb2YANgkYAQBBAQsSAQIDBAUKBgcyNDMuKy8tLDAxCq/ZAjQWAEHA1QAoAgAEQAALQcDVAEEBNgIACxQAIAAQOCAAIAI2AjggACABOgAoCxQAIAAgAC8BNCAALQAwIAAQNxAACx4BAX9BwAAQOiIBEDggAUGACDYCOCABIAA6ACggAQuPDAEHfwJAIABFDQAgAEEIayIBIABBBGsoAgAiAEF4cSIEaiEFAkAgAEEBcQ0AIABBA3FFDQEgASABKAIAIgBrIgFB1NUAKAIASQ0BIAAgBGohBAJAAkBB2NUAKAIAIAFHBEAgAEH/AU0EQCAAQQN2IQMgASgCCCIAIAEoAgwiAkYEQEHE1QBBxNUAKAIAQX4gA3dxNgIADAULIAIgADYCCCAAIAI2AgwMBAsgASgCGCEGIAEgASgCDCIARwRAIAAgASgCCCICNgIIIAIgADYCDAwDCyABQRRqIgMoAgAiAkUEQCABKAIQIgJFDQIgAUEQaiEDCwNAIAMhByACIgBBFGoiAygCACICDQAgAEEQaiEDIAAoAhAiAg0ACyAHQQA2AgAMAgsgBSgCBCIAQQNxQQNHDQIgBSAAQX5xNgIEQczVACAENgIAIAUgBDYCACABIARBAXI2AgQMAwtBACEACyAGRQ0AAkAgASgCHCICQQJ0QfTXAGoiAygCACABRgRAIAMgADYCACAADQFByNUAQcjVACgCAEF+IAJ3cTYCAAwCCyAGQRBBFCAGKAIQIAFGG2ogADYCACAARQ0BCyAAIAY2AhggASgCECICBEAgACACNgIQIAIgADYCGAsgAUEUaigCACICRQ0AIABBFGogAjYCACACIAA2AhgLIAEgBU8NACAFKAIEIgBBAXFFDQACQAJAAkACQCAAQQJxRQRAQdzVACgCACAFRgRAQdzVACABNgIAQdDVAEHQ1QAoAgAgBGoiADYCACABIABBAXI2AgQgAUHY1QAoAgBHDQZBzNUAQQA2AgBB2NUAQQA2AgAMBgtB2NUAKAIAIAVGBEBB2NUAIAE2AgBBzNUAQczVACgCACAEaiIANgIAIAEgAEEBcjYCBCAAIAFqIAA2AgAMBgsgAEF4cSAEaiEEIABB/wFNBEAgAEEDdiEDIAUoAggiACAFKAIMIgJGBEBBxNUAQcTVACgCAEF+IAN3cTYCAAwFCyACIAA2AgggACACNgIMDAQLIAUoAhghBiAFIAUoAgwiAEcEQEHU1QAoAgAaIAAgBSgCCCICNgIIIAIgADYCDAwDCyAFQRRqIgMoAgAiAkUEQCAFKAIQIgJFDQIgBUEQaiEDCwNAIAMhByACIgBBFGoiAygCACICDQAgAEEQaiEDIAAoAhAiAg0ACyAHQQA2AgAMAgsgBSAAQX5xNgIEIAEgBGogBDYCACABIARBAXI2AgQMAwtBACEACyAGRQ0AAkAgBSgCHCICQQJ0QfTXAGoiAygCACAFRgRAIAMgADYCACAADQFByNUAQcjVACgCAEF+IAJ3cTYCAAwCCyAGQRBBFCAGKAIQIAVGG2ogADYCACAARQ0BCyAAIAY2AhggBSgCECICBEAgACACNgIQIAIgADYCGAsgBUEUaigCACICRQ0AIABBFGogAjYCACACIAA2AhgLIAEgBGogBDYCACABIARBAXI2AgQgAUHY1QAoAgBHDQBBzNUAIAQ2AgAMAQsgBEH/AU0EQCAEQXhxQezVAGohAAJ/QcTVACgCACICQQEgBEEDdnQiA3FFBEBBxNUAIAIgA3I2AgAgAAwBCyAAKAIICyICIAE2AgwgACABNgIIIAEgADYCDCABIAI2AggMAQtBHyECIARB////B00EQCAEQSYgBEEIdmciAGt2QQFxIABBAXRrQT5qIQILIAEgAjYCHCABQgA3AhAgAkECdEH01wBqIQACQEHI1QAoAgAiA0EBIAJ0IgdxRQRAIAAgATYCAEHI1QAgAyAHcjYCACABIAA2AhggASABNgIIIAEgATYCDAwBCyAEQRkgAkEBdmtBACACQR9HG3QhAiAAKAIAIQACQANAIAAiAygCBEF4cSAERg0BIAJBHXYhACACQQF0IQIgAyAAQQRxakEQaiIHKAIAIgANAAsgByABNgIAIAEgAzYCGCABIAE2AgwgASABNgIIDAELIAMoAggiACABNgIMIAMgATYCCCABQQA2AhggASADNgIMIAEgADYCCAtB5NUAQeTVACgCAEEBayIAQX8gABs2AgALCwcAIAAtACgLBwAgAC0AKgsHACAALQArCwcAIAAtACkLBwAgAC8BNAsHACAALQAwC0ABBH8gACgCGCEBIAAvAS4hAiAALQAoIQMgACgCOCEEIAAQOCAAIAQ2AjggACADOgAoIAAgAjsBLiAAIAE2AhgL5YUCAgd/A34gASACaiEEAkAgACIDKAIMIgANACADKAIEBEAgAyABNgIECyMAQRBrIgkkAAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAn8CQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkAgAygCHCICQQJrDvwBAfkBAgMEBQYHCAkKCwwNDg8QERL4ARP3ARQV9gEWF/UBGBkaGxwdHh8g/QH7ASH0ASIjJCUmJygpKivzASwtLi8wMTLyAfEBMzTwAe8BNTY3ODk6Ozw9Pj9AQUJDREVGR0hJSktMTU5P+gFQUVJT7gHtAVTsAVXrAVZXWFla6gFbXF1eX2BhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ent8fX5/gAGBAYIBgwGEAYUBhgGHAYgBiQGKAYsBjAGNAY4BjwGQAZEBkgGTAZQBlQGWAZcBmAGZAZoBmwGcAZ0BngGfAaABoQGiAaMBpAGlAaYBpwGoAakBqgGrAawBrQGuAa8BsAGxAbIBswG0AbUBtgG3AbgBuQG6AbsBvAG9Ab4BvwHAAcEBwgHDAcQBxQHGAccByAHJAcoBywHMAc0BzgHpAegBzwHnAdAB5gHRAdIB0wHUAeUB1QHWAdcB2AHZAdoB2wHcAd0B3gHfAeAB4QHiAeMBAPwBC0EADOMBC0EODOIBC0ENDOEBC0EPDOABC0EQDN8BC0ETDN4BC0EUDN0BC0EVDNwBC0EWDNsBC0EXDNoBC0EYDNkBC0EZDNgBC0EaDNcBC0EbDNYBC0EcDNUBC0EdDNQBC0EeDNMBC0EfDNIBC0EgDNEBC0EhDNABC0EIDM8BC0EiDM4BC0EkDM0BC0EjDMwBC0EHDMsBC0ElDMoBC0EmDMkBC0EnDMgBC0EoDMcBC0ESDMYBC0ERDMUBC0EpDMQBC0EqDMMBC0ErDMIBC0EsDMEBC0HeAQzAAQtBLgy/AQtBLwy+AQtBMAy9AQtBMQy8AQtBMgy7AQtBMwy6AQtBNAy5AQtB3wEMuAELQTUMtwELQTkMtgELQQwMtQELQTYMtAELQTcMswELQTgMsgELQT4MsQELQToMsAELQeABDK8BC0ELDK4BC0E/DK0BC0E7DKwBC0EKDKsBC0E8DKoBC0E9DKkBC0HhAQyoAQtBwQAMpwELQcAADKYBC0HCAAylAQtBCQykAQtBLQyjAQtBwwAMogELQcQADKEBC0HFAAygAQtBxgAMnwELQccADJ4BC0HIAAydAQtByQAMnAELQcoADJsBC0HLAAyaAQtBzAAMmQELQc0ADJgBC0HOAAyXAQtBzwAMlgELQdAADJUBC0HRAAyUAQtB0gAMkwELQdMADJIBC0HVAAyRAQtB1AAMkAELQdYADI8BC0HXAAyOAQtB2AAMjQELQdkADIwBC0HaAAyLAQtB2wAMigELQdwADIkBC0HdAAyIAQtB3gAMhwELQd8ADIYBC0HgAAyFAQtB4QAMhAELQeIADIMBC0HjAAyCAQtB5AAMgQELQeUADIABC0HiAQx/C0HmAAx+C0HnAAx9C0EGDHwLQegADHsLQQUMegtB6QAMeQtBBAx4C0HqAAx3C0HrAAx2C0HsAAx1C0HtAAx0C0EDDHMLQe4ADHILQe8ADHELQfAADHALQfIADG8LQfEADG4LQfMADG0LQfQADGwLQfUADGsLQfYADGoLQQIMaQtB9wAMaAtB+AAMZwtB+QAMZgtB+gAMZQtB+wAMZAtB/AAMYwtB/QAMYgtB/gAMYQtB/wAMYAtBgAEMXwtBgQEMXgtBggEMXQtBgwEMXAtBhAEMWwtBhQEMWgtBhgEMWQtBhwEMWAtBiAEMVwtBiQEMVgtBigEMVQtBiwEMVAtBjAEMUwtBjQEMUgtBjgEMUQtBjwEMUAtBkAEMTwtBkQEMTgtBkgEMTQtBkwEMTAtBlAEMSwtBlQEMSgtBlgEMSQtBlwEMSAtBmAEMRwtBmQEMRgtBmgEMRQtBmwEMRAtBnAEMQwtBnQEMQgtBngEMQQtBnwEMQAtBoAEMPwtBoQEMPgtBogEMPQtBowEMPAtBpAEMOwtBpQEMOgtBpgEMOQtBpwEMOAtBqAEMNwtBqQEMNgtBqgEMNQtBqwEMNAtBrAEMMwtBrQEMMgtBrgEMMQtBrwEMMAtBsAEMLwtBsQEMLgtBsgEMLQtBswEMLAtBtAEMKwtBtQEMKgtBtgEMKQtBtwEMKAtBuAEMJwtBuQEMJgtBugEMJQtBuwEMJAtBvAEMIwtBvQEMIgtBvgEMIQtBvwEMIAtBwAEMHwtBwQEMHgtBwgEMHQtBAQwcC0HDAQwbC0HEAQwaC0HFAQwZC0HGAQwYC0HHAQwXC0HIAQwWC0HJAQwVC0HKAQwUC0HLAQwTC0HMAQwSC0HNAQwRC0HOAQwQC0HPAQwPC0HQAQwOC0HRAQwNC0HSAQwMC0HTAQwLC0HUAQwKC0HVAQwJC0HWAQwIC0HjAQwHC0HXAQwGC0HYAQwFC0HZAQwEC0HaAQwDC0HbAQwCC0HdAQwBC0HcAQshAgNAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQCADAn8CQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAn8CQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAn8CQAJAAkACQAJAAkACQAJ/AkACQAJAAn8CQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAIAMCfwJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACfwJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkAgAg7jAQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEjJCUnKCmeA5sDmgORA4oDgwOAA/0C+wL4AvIC8QLvAu0C6ALnAuYC5QLkAtwC2wLaAtkC2ALXAtYC1QLPAs4CzALLAsoCyQLIAscCxgLEAsMCvgK8AroCuQK4ArcCtgK1ArQCswKyArECsAKuAq0CqQKoAqcCpgKlAqQCowKiAqECoAKfApgCkAKMAosCigKBAv4B/QH8AfsB+gH5AfgB9wH1AfMB8AHrAekB6AHnAeYB5QHkAeMB4gHhAeAB3wHeAd0B3AHaAdkB2AHXAdYB1QHUAdMB0gHRAdABzwHOAc0BzAHLAcoByQHIAccBxgHFAcQBwwHCAcEBwAG/Ab4BvQG8AbsBugG5AbgBtwG2AbUBtAGzAbIBsQGwAa8BrgGtAawBqwGqAakBqAGnAaYBpQGkAaMBogGfAZ4BmQGYAZcBlgGVAZQBkwGSAZEBkAGPAY0BjAGHAYYBhQGEAYMBggF9fHt6eXZ1dFBRUlNUVQsgASAERw1yQf0BIQIMvgMLIAEgBEcNmAFB2wEhAgy9AwsgASAERw3xAUGOASECDLwDCyABIARHDfwBQYQBIQIMuwMLIAEgBEcNigJB/wAhAgy6AwsgASAERw2RAkH9ACECDLkDCyABIARHDZQCQfsAIQIMuAMLIAEgBEcNHkEeIQIMtwMLIAEgBEcNGUEYIQIMtgMLIAEgBEcNygJBzQAhAgy1AwsgASAERw3VAkHGACECDLQDCyABIARHDdYCQcMAIQIMswMLIAEgBEcN3AJBOCECDLIDCyADLQAwQQFGDa0DDIkDC0EAIQACQAJAAkAgAy0AKkUNACADLQArRQ0AIAMvATIiAkECcUUNAQwCCyADLwEyIgJBAXFFDQELQQEhACADLQAoQQFGDQAgAy8BNCIGQeQAa0HkAEkNACAGQcwBRg0AIAZBsAJGDQAgAkHAAHENAEEAIQAgAkGIBHFBgARGDQAgAkEocUEARyEACyADQQA7ATIgA0EAOgAxAkAgAEUEQCADQQA6ADEgAy0ALkEEcQ0BDLEDCyADQgA3AyALIANBADoAMSADQQE6ADYMSAtBACEAAkAgAygCOCICRQ0AIAIoAjAiAkUNACADIAIRAAAhAAsgAEUNSCAAQRVHDWIgA0EENgIcIAMgATYCFCADQdIbNgIQIANBFTYCDEEAIQIMrwMLIAEgBEYEQEEGIQIMrwMLIAEtAABBCkcNGSABQQFqIQEMGgsgA0IANwMgQRIhAgyUAwsgASAERw2KA0EjIQIMrAMLIAEgBEYEQEEHIQIMrAMLAkACQCABLQAAQQprDgQBGBgAGAsgAUEBaiEBQRAhAgyTAwsgAUEBaiEBIANBL2otAABBAXENF0EAIQIgA0EANgIcIAMgATYCFCADQZkgNgIQIANBGTYCDAyrAwsgAyADKQMgIgwgBCABa60iCn0iC0IAIAsgDFgbNwMgIAogDFoNGEEIIQIMqgMLIAEgBEcEQCADQQk2AgggAyABNgIEQRQhAgyRAwtBCSECDKkDCyADKQMgUA2uAgxDCyABIARGBEBBCyECDKgDCyABLQAAQQpHDRYgAUEBaiEBDBcLIANBL2otAABBAXFFDRkMJgtBACEAAkAgAygCOCICRQ0AIAIoAlAiAkUNACADIAIRAAAhAAsgAA0ZDEILQQAhAAJAIAMoAjgiAkUNACACKAJQIgJFDQAgAyACEQAAIQALIAANGgwkC0EAIQACQCADKAI4IgJFDQAgAigCUCICRQ0AIAMgAhEAACEACyAADRsMMgsgA0Evai0AAEEBcUUNHAwiC0EAIQACQCADKAI4IgJFDQAgAigCVCICRQ0AIAMgAhEAACEACyAADRwMQgtBACEAAkAgAygCOCICRQ0AIAIoAlQiAkUNACADIAIRAAAhAAsgAA0dDCALIAEgBEYEQEETIQIMoAMLAkAgAS0AACIAQQprDgQfIyMAIgsgAUEBaiEBDB8LQQAhAAJAIAMoAjgiAkUNACACKAJUIgJFDQAgAyACEQAAIQALIAANIgxCCyABIARGBEBBFiECDJ4DCyABLQAAQcDBAGotAABBAUcNIwyDAwsCQANAIAEtAABBsDtqLQAAIgBBAUcEQAJAIABBAmsOAgMAJwsgAUEBaiEBQSEhAgyGAwsgBCABQQFqIgFHDQALQRghAgydAwsgAygCBCEAQQAhAiADQQA2AgQgAyAAIAFBAWoiARA0IgANIQxBC0EAIQACQCADKAI4IgJFDQAgAigCVCICRQ0AIAMgAhEAACEACyAADSMMKgsgASAERgRAQRwhAgybAwsgA0EKNgIIIAMgATYCBEEAIQACQCADKAI4IgJFDQAgAigCUCICRQ0AIAMgAhEAACEACyAADSVBJCECDIEDCyABIARHBEADQCABLQAAQbA9ai0AACIAQQNHBEAgAEEBaw4FGBomggMlJgsgBCABQQFqIgFHDQALQRshAgyaAwtBGyECDJkDCwNAIAEtAABBsD9qLQAAIgBBA0cEQCAAQQFrDgUPEScTJicLIAQgAUEBaiIBRw0AC0EeIQIMmAMLIAEgBEcEQCADQQs2AgggAyABNgIEQQchAgz/AgtBHyECDJcDCyABIARGBEBBICECDJcDCwJAIAEtAABBDWsOFC4/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8APwtBACECIANBADYCHCADQb8LNgIQIANBAjYCDCADIAFBAWo2AhQMlgMLIANBL2ohAgNAIAEgBEYEQEEhIQIMlwMLAkACQAJAIAEtAAAiAEEJaw4YAgApKQEpKSkpKSkpKSkpKSkpKSkpKSkCJwsgAUEBaiEBIANBL2otAABBAXFFDQoMGAsgAUEBaiEBDBcLIAFBAWohASACLQAAQQJxDQALQQAhAiADQQA2AhwgAyABNgIUIANBnxU2AhAgA0EMNgIMDJUDCyADLQAuQYABcUUNAQtBACEAAkAgAygCOCICRQ0AIAIoAlwiAkUNACADIAIRAAAhAAsgAEUN5gIgAEEVRgRAIANBJDYCHCADIAE2AhQgA0GbGzYCECADQRU2AgxBACECDJQDC0EAIQIgA0EANgIcIAMgATYCFCADQZAONgIQIANBFDYCDAyTAwtBACECIANBADYCHCADIAE2AhQgA0G+IDYCECADQQI2AgwMkgMLIAMoAgQhAEEAIQIgA0EANgIEIAMgACABIAynaiIBEDIiAEUNKyADQQc2AhwgAyABNgIUIAMgADYCDAyRAwsgAy0ALkHAAHFFDQELQQAhAAJAIAMoAjgiAkUNACACKAJYIgJFDQAgAyACEQAAIQALIABFDSsgAEEVRgRAIANBCjYCHCADIAE2AhQgA0HrGTYCECADQRU2AgxBACECDJADC0EAIQIgA0EANgIcIAMgATYCFCADQZMMNgIQIANBEzYCDAyPAwtBACECIANBADYCHCADIAE2AhQgA0GCFTYCECADQQI2AgwMjgMLQQAhAiADQQA2AhwgAyABNgIUIANB3RQ2AhAgA0EZNgIMDI0DC0EAIQIgA0EANgIcIAMgATYCFCADQeYdNgIQIANBGTYCDAyMAwsgAEEVRg09QQAhAiADQQA2AhwgAyABNgIUIANB0A82AhAgA0EiNgIMDIsDCyADKAIEIQBBACECIANBADYCBCADIAAgARAzIgBFDSggA0ENNgIcIAMgATYCFCADIAA2AgwMigMLIABBFUYNOkEAIQIgA0EANgIcIAMgATYCFCADQdAPNgIQIANBIjYCDAyJAwsgAygCBCEAQQAhAiADQQA2AgQgAyAAIAEQMyIARQRAIAFBAWohAQwoCyADQQ42AhwgAyAANgIMIAMgAUEBajYCFAyIAwsgAEEVRg03QQAhAiADQQA2AhwgAyABNgIUIANB0A82AhAgA0EiNgIMDIcDCyADKAIEIQBBACECIANBADYCBCADIAAgARAzIgBFBEAgAUEBaiEBDCcLIANBDzYCHCADIAA2AgwgAyABQQFqNgIUDIYDC0EAIQIgA0EANgIcIAMgATYCFCADQeIXNgIQIANBGTYCDAyFAwsgAEEVRg0zQQAhAiADQQA2AhwgAyABNgIUIANB1gw2AhAgA0EjNgIMDIQDCyADKAIEIQBBACECIANBADYCBCADIAAgARA0IgBFDSUgA0ERNgIcIAMgATYCFCADIAA2AgwMgwMLIABBFUYNMEEAIQIgA0EANgIcIAMgATYCFCADQdYMNgIQIANBIzYCDAyCAwsgAygCBCEAQQAhAiADQQA2AgQgAyAAIAEQNCIARQRAIAFBAWohAQwlCyADQRI2AhwgAyAANgIMIAMgAUEBajYCFAyBAwsgA0Evai0AAEEBcUUNAQtBFyECDOYCC0EAIQIgA0EANgIcIAMgATYCFCADQeIXNgIQIANBGTYCDAz+AgsgAEE7Rw0AIAFBAWohAQwMC0EAIQIgA0EANgIcIAMgATYCFCADQZIYNgIQIANBAjYCDAz8AgsgAEEVRg0oQQAhAiADQQA2AhwgAyABNgIUIANB1gw2AhAgA0EjNgIMDPsCCyADQRQ2AhwgAyABNgIUIAMgADYCDAz6AgsgAygCBCEAQQAhAiADQQA2AgQgAyAAIAEQNCIARQRAIAFBAWohAQz1AgsgA0EVNgIcIAMgADYCDCADIAFBAWo2AhQM+QILIAMoAgQhAEEAIQIgA0EANgIEIAMgACABEDQiAEUEQCABQQFqIQEM8wILIANBFzYCHCADIAA2AgwgAyABQQFqNgIUDPgCCyAAQRVGDSNBACECIANBADYCHCADIAE2AhQgA0HWDDYCECADQSM2AgwM9wILIAMoAgQhAEEAIQIgA0EANgIEIAMgACABEDQiAEUEQCABQQFqIQEMHQsgA0EZNgIcIAMgADYCDCADIAFBAWo2AhQM9gILIAMoAgQhAEEAIQIgA0EANgIEIAMgACABEDQiAEUEQCABQQFqIQEM7wILIANBGjYCHCADIAA2AgwgAyABQQFqNgIUDPUCCyAAQRVGDR9BACECIANBADYCHCADIAE2AhQgA0HQDzYCECADQSI2AgwM9AILIAMoAgQhACADQQA2AgQgAyAAIAEQMyIARQRAIAFBAWohAQwbCyADQRw2AhwgAyAANgIMIAMgAUEBajYCFEEAIQIM8wILIAMoAgQhACADQQA2AgQgAyAAIAEQMyIARQRAIAFBAWohAQzrAgsgA0EdNgIcIAMgADYCDCADIAFBAWo2AhRBACECDPICCyAAQTtHDQEgAUEBaiEBC0EmIQIM1wILQQAhAiADQQA2AhwgAyABNgIUIANBnxU2AhAgA0EMNgIMDO8CCyABIARHBEADQCABLQAAQSBHDYQCIAQgAUEBaiIBRw0AC0EsIQIM7wILQSwhAgzuAgsgASAERgRAQTQhAgzuAgsCQAJAA0ACQCABLQAAQQprDgQCAAADAAsgBCABQQFqIgFHDQALQTQhAgzvAgsgAygCBCEAIANBADYCBCADIAAgARAxIgBFDZ8CIANBMjYCHCADIAE2AhQgAyAANgIMQQAhAgzuAgsgAygCBCEAIANBADYCBCADIAAgARAxIgBFBEAgAUEBaiEBDJ8CCyADQTI2AhwgAyAANgIMIAMgAUEBajYCFEEAIQIM7QILIAEgBEcEQAJAA0AgAS0AAEEwayIAQf8BcUEKTwRAQTohAgzXAgsgAykDICILQpmz5syZs+bMGVYNASADIAtCCn4iCjcDICAKIACtQv8BgyILQn+FVg0BIAMgCiALfDcDICAEIAFBAWoiAUcNAAtBwAAhAgzuAgsgAygCBCEAIANBADYCBCADIAAgAUEBaiIBEDEiAA0XDOICC0HAACECDOwCCyABIARGBEBByQAhAgzsAgsCQANAAkAgAS0AAEEJaw4YAAKiAqICqQKiAqICogKiAqICogKiAqICogKiAqICogKiAqICogKiAqICogIAogILIAQgAUEBaiIBRw0AC0HJACECDOwCCyABQQFqIQEgA0Evai0AAEEBcQ2lAiADQQA2AhwgAyABNgIUIANBlxA2AhAgA0EKNgIMQQAhAgzrAgsgASAERwRAA0AgAS0AAEEgRw0VIAQgAUEBaiIBRw0AC0H4ACECDOsCC0H4ACECDOoCCyADQQI6ACgMOAtBACECIANBADYCHCADQb8LNgIQIANBAjYCDCADIAFBAWo2AhQM6AILQQAhAgzOAgtBDSECDM0CC0ETIQIMzAILQRUhAgzLAgtBFiECDMoCC0EYIQIMyQILQRkhAgzIAgtBGiECDMcCC0EbIQIMxgILQRwhAgzFAgtBHSECDMQCC0EeIQIMwwILQR8hAgzCAgtBICECDMECC0EiIQIMwAILQSMhAgy/AgtBJSECDL4CC0HlACECDL0CCyADQT02AhwgAyABNgIUIAMgADYCDEEAIQIM1QILIANBGzYCHCADIAE2AhQgA0GkHDYCECADQRU2AgxBACECDNQCCyADQSA2AhwgAyABNgIUIANBmBo2AhAgA0EVNgIMQQAhAgzTAgsgA0ETNgIcIAMgATYCFCADQZgaNgIQIANBFTYCDEEAIQIM0gILIANBCzYCHCADIAE2AhQgA0GYGjYCECADQRU2AgxBACECDNECCyADQRA2AhwgAyABNgIUIANBmBo2AhAgA0EVNgIMQQAhAgzQAgsgA0EgNgIcIAMgATYCFCADQaQcNgIQIANBFTYCDEEAIQIMzwILIANBCzYCHCADIAE2AhQgA0GkHDYCECADQRU2AgxBACECDM4CCyADQQw2AhwgAyABNgIUIANBpBw2AhAgA0EVNgIMQQAhAgzNAgtBACECIANBADYCHCADIAE2AhQgA0HdDjYCECADQRI2AgwMzAILAkADQAJAIAEtAABBCmsOBAACAgACCyAEIAFBAWoiAUcNAAtB/QEhAgzMAgsCQAJAIAMtADZBAUcNAEEAIQACQCADKAI4IgJFDQAgAigCYCICRQ0AIAMgAhEAACEACyAARQ0AIABBFUcNASADQfwBNgIcIAMgATYCFCADQdwZNgIQIANBFTYCDEEAIQIMzQILQdwBIQIMswILIANBADYCHCADIAE2AhQgA0H5CzYCECADQR82AgxBACECDMsCCwJAAkAgAy0AKEEBaw4CBAEAC0HbASECDLICC0HUASECDLECCyADQQI6ADFBACEAAkAgAygCOCICRQ0AIAIoAgAiAkUNACADIAIRAAAhAAsgAEUEQEHdASECDLECCyAAQRVHBEAgA0EANgIcIAMgATYCFCADQbQMNgIQIANBEDYCDEEAIQIMygILIANB+wE2AhwgAyABNgIUIANBgRo2AhAgA0EVNgIMQQAhAgzJAgsgASAERgRAQfoBIQIMyQILIAEtAABByABGDQEgA0EBOgAoC0HAASECDK4CC0HaASECDK0CCyABIARHBEAgA0EMNgIIIAMgATYCBEHZASECDK0CC0H5ASECDMUCCyABIARGBEBB+AEhAgzFAgsgAS0AAEHIAEcNBCABQQFqIQFB2AEhAgyrAgsgASAERgRAQfcBIQIMxAILAkACQCABLQAAQcUAaw4QAAUFBQUFBQUFBQUFBQUFAQULIAFBAWohAUHWASECDKsCCyABQQFqIQFB1wEhAgyqAgtB9gEhAiABIARGDcICIAMoAgAiACAEIAFraiEFIAEgAGtBAmohBgJAA0AgAS0AACAAQbrVAGotAABHDQMgAEECRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADMMCCyADKAIEIQAgA0IANwMAIAMgACAGQQFqIgEQLiIARQRAQeMBIQIMqgILIANB9QE2AhwgAyABNgIUIAMgADYCDEEAIQIMwgILQfQBIQIgASAERg3BAiADKAIAIgAgBCABa2ohBSABIABrQQFqIQYCQANAIAEtAAAgAEG41QBqLQAARw0CIABBAUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzCAgsgA0GBBDsBKCADKAIEIQAgA0IANwMAIAMgACAGQQFqIgEQLiIADQMMAgsgA0EANgIAC0EAIQIgA0EANgIcIAMgATYCFCADQeUfNgIQIANBCDYCDAy/AgtB1QEhAgylAgsgA0HzATYCHCADIAE2AhQgAyAANgIMQQAhAgy9AgtBACEAAkAgAygCOCICRQ0AIAIoAkAiAkUNACADIAIRAAAhAAsgAEUNbiAAQRVHBEAgA0EANgIcIAMgATYCFCADQYIPNgIQIANBIDYCDEEAIQIMvQILIANBjwE2AhwgAyABNgIUIANB7Bs2AhAgA0EVNgIMQQAhAgy8AgsgASAERwRAIANBDTYCCCADIAE2AgRB0wEhAgyjAgtB8gEhAgy7AgsgASAERgRAQfEBIQIMuwILAkACQAJAIAEtAABByABrDgsAAQgICAgICAgIAggLIAFBAWohAUHQASECDKMCCyABQQFqIQFB0QEhAgyiAgsgAUEBaiEBQdIBIQIMoQILQfABIQIgASAERg25AiADKAIAIgAgBCABa2ohBiABIABrQQJqIQUDQCABLQAAIABBtdUAai0AAEcNBCAAQQJGDQMgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAY2AgAMuQILQe8BIQIgASAERg24AiADKAIAIgAgBCABa2ohBiABIABrQQFqIQUDQCABLQAAIABBs9UAai0AAEcNAyAAQQFGDQIgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAY2AgAMuAILQe4BIQIgASAERg23AiADKAIAIgAgBCABa2ohBiABIABrQQJqIQUDQCABLQAAIABBsNUAai0AAEcNAiAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAY2AgAMtwILIAMoAgQhACADQgA3AwAgAyAAIAVBAWoiARArIgBFDQIgA0HsATYCHCADIAE2AhQgAyAANgIMQQAhAgy2AgsgA0EANgIACyADKAIEIQAgA0EANgIEIAMgACABECsiAEUNnAIgA0HtATYCHCADIAE2AhQgAyAANgIMQQAhAgy0AgtBzwEhAgyaAgtBACEAAkAgAygCOCICRQ0AIAIoAjQiAkUNACADIAIRAAAhAAsCQCAABEAgAEEVRg0BIANBADYCHCADIAE2AhQgA0HqDTYCECADQSY2AgxBACECDLQCC0HOASECDJoCCyADQesBNgIcIAMgATYCFCADQYAbNgIQIANBFTYCDEEAIQIMsgILIAEgBEYEQEHrASECDLICCyABLQAAQS9GBEAgAUEBaiEBDAELIANBADYCHCADIAE2AhQgA0GyODYCECADQQg2AgxBACECDLECC0HNASECDJcCCyABIARHBEAgA0EONgIIIAMgATYCBEHMASECDJcCC0HqASECDK8CCyABIARGBEBB6QEhAgyvAgsgAS0AAEEwayIAQf8BcUEKSQRAIAMgADoAKiABQQFqIQFBywEhAgyWAgsgAygCBCEAIANBADYCBCADIAAgARAvIgBFDZcCIANB6AE2AhwgAyABNgIUIAMgADYCDEEAIQIMrgILIAEgBEYEQEHnASECDK4CCwJAIAEtAABBLkYEQCABQQFqIQEMAQsgAygCBCEAIANBADYCBCADIAAgARAvIgBFDZgCIANB5gE2AhwgAyABNgIUIAMgADYCDEEAIQIMrgILQcoBIQIMlAILIAEgBEYEQEHlASECDK0CC0EAIQBBASEFQQEhB0EAIQICQAJAAkACQAJAAn8CQAJAAkACQAJAAkACQCABLQAAQTBrDgoKCQABAgMEBQYICwtBAgwGC0EDDAULQQQMBAtBBQwDC0EGDAILQQcMAQtBCAshAkEAIQVBACEHDAILQQkhAkEBIQBBACEFQQAhBwwBC0EAIQVBASECCyADIAI6ACsgAUEBaiEBAkACQCADLQAuQRBxDQACQAJAAkAgAy0AKg4DAQACBAsgB0UNAwwCCyAADQEMAgsgBUUNAQsgAygCBCEAIANBADYCBCADIAAgARAvIgBFDQIgA0HiATYCHCADIAE2AhQgAyAANgIMQQAhAgyvAgsgAygCBCEAIANBADYCBCADIAAgARAvIgBFDZoCIANB4wE2AhwgAyABNgIUIAMgADYCDEEAIQIMrgILIAMoAgQhACADQQA2AgQgAyAAIAEQLyIARQ2YAiADQeQBNgIcIAMgATYCFCADIAA2AgwMrQILQckBIQIMkwILQQAhAAJAIAMoAjgiAkUNACACKAJEIgJFDQAgAyACEQAAIQALAkAgAARAIABBFUYNASADQQA2AhwgAyABNgIUIANBpA02AhAgA0EhNgIMQQAhAgytAgtByAEhAgyTAgsgA0HhATYCHCADIAE2AhQgA0HQGjYCECADQRU2AgxBACECDKsCCyABIARGBEBB4QEhAgyrAgsCQCABLQAAQSBGBEAgA0EAOwE0IAFBAWohAQwBCyADQQA2AhwgAyABNgIUIANBmRE2AhAgA0EJNgIMQQAhAgyrAgtBxwEhAgyRAgsgASAERgRAQeABIQIMqgILAkAgAS0AAEEwa0H/AXEiAkEKSQRAIAFBAWohAQJAIAMvATQiAEGZM0sNACADIABBCmwiADsBNCAAQf7/A3EgAkH//wNzSw0AIAMgACACajsBNAwCC0EAIQIgA0EANgIcIAMgATYCFCADQZUeNgIQIANBDTYCDAyrAgsgA0EANgIcIAMgATYCFCADQZUeNgIQIANBDTYCDEEAIQIMqgILQcYBIQIMkAILIAEgBEYEQEHfASECDKkCCwJAIAEtAABBMGtB/wFxIgJBCkkEQCABQQFqIQECQCADLwE0IgBBmTNLDQAgAyAAQQpsIgA7ATQgAEH+/wNxIAJB//8Dc0sNACADIAAgAmo7ATQMAgtBACECIANBADYCHCADIAE2AhQgA0GVHjYCECADQQ02AgwMqgILIANBADYCHCADIAE2AhQgA0GVHjYCECADQQ02AgxBACECDKkCC0HFASECDI8CCyABIARGBEBB3gEhAgyoAgsCQCABLQAAQTBrQf8BcSICQQpJBEAgAUEBaiEBAkAgAy8BNCIAQZkzSw0AIAMgAEEKbCIAOwE0IABB/v8DcSACQf//A3NLDQAgAyAAIAJqOwE0DAILQQAhAiADQQA2AhwgAyABNgIUIANBlR42AhAgA0ENNgIMDKkCCyADQQA2AhwgAyABNgIUIANBlR42AhAgA0ENNgIMQQAhAgyoAgtBxAEhAgyOAgsgASAERgRAQd0BIQIMpwILAkACQAJAAkAgAS0AAEEKaw4XAgMDAAMDAwMDAwMDAwMDAwMDAwMDAwEDCyABQQFqDAULIAFBAWohAUHDASECDI8CCyABQQFqIQEgA0Evai0AAEEBcQ0IIANBADYCHCADIAE2AhQgA0GNCzYCECADQQ02AgxBACECDKcCCyADQQA2AhwgAyABNgIUIANBjQs2AhAgA0ENNgIMQQAhAgymAgsgASAERwRAIANBDzYCCCADIAE2AgRBASECDI0CC0HcASECDKUCCwJAAkADQAJAIAEtAABBCmsOBAIAAAMACyAEIAFBAWoiAUcNAAtB2wEhAgymAgsgAygCBCEAIANBADYCBCADIAAgARAtIgBFBEAgAUEBaiEBDAQLIANB2gE2AhwgAyAANgIMIAMgAUEBajYCFEEAIQIMpQILIAMoAgQhACADQQA2AgQgAyAAIAEQLSIADQEgAUEBagshAUHBASECDIoCCyADQdkBNgIcIAMgADYCDCADIAFBAWo2AhRBACECDKICC0HCASECDIgCCyADQS9qLQAAQQFxDQEgA0EANgIcIAMgATYCFCADQeQcNgIQIANBGTYCDEEAIQIMoAILIAEgBEYEQEHZASECDKACCwJAAkACQCABLQAAQQprDgQBAgIAAgsgAUEBaiEBDAILIAFBAWohAQwBCyADLQAuQcAAcUUNAQtBACEAAkAgAygCOCICRQ0AIAIoAjwiAkUNACADIAIRAAAhAAsgAEUNoAEgAEEVRgRAIANB2QA2AhwgAyABNgIUIANBtxo2AhAgA0EVNgIMQQAhAgyfAgsgA0EANgIcIAMgATYCFCADQYANNgIQIANBGzYCDEEAIQIMngILIANBADYCHCADIAE2AhQgA0HcKDYCECADQQI2AgxBACECDJ0CCyABIARHBEAgA0EMNgIIIAMgATYCBEG/ASECDIQCC0HYASECDJwCCyABIARGBEBB1wEhAgycAgsCQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAIAEtAABBwQBrDhUAAQIDWgQFBlpaWgcICQoLDA0ODxBaCyABQQFqIQFB+wAhAgySAgsgAUEBaiEBQfwAIQIMkQILIAFBAWohAUGBASECDJACCyABQQFqIQFBhQEhAgyPAgsgAUEBaiEBQYYBIQIMjgILIAFBAWohAUGJASECDI0CCyABQQFqIQFBigEhAgyMAgsgAUEBaiEBQY0BIQIMiwILIAFBAWohAUGWASECDIoCCyABQQFqIQFBlwEhAgyJAgsgAUEBaiEBQZgBIQIMiAILIAFBAWohAUGlASECDIcCCyABQQFqIQFBpgEhAgyGAgsgAUEBaiEBQawBIQIMhQILIAFBAWohAUG0ASECDIQCCyABQQFqIQFBtwEhAgyDAgsgAUEBaiEBQb4BIQIMggILIAEgBEYEQEHWASECDJsCCyABLQAAQc4ARw1IIAFBAWohAUG9ASECDIECCyABIARGBEBB1QEhAgyaAgsCQAJAAkAgAS0AAEHCAGsOEgBKSkpKSkpKSkoBSkpKSkpKAkoLIAFBAWohAUG4ASECDIICCyABQQFqIQFBuwEhAgyBAgsgAUEBaiEBQbwBIQIMgAILQdQBIQIgASAERg2YAiADKAIAIgAgBCABa2ohBSABIABrQQdqIQYCQANAIAEtAAAgAEGo1QBqLQAARw1FIABBB0YNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyZAgsgA0EANgIAIAZBAWohAUEbDEULIAEgBEYEQEHTASECDJgCCwJAAkAgAS0AAEHJAGsOBwBHR0dHRwFHCyABQQFqIQFBuQEhAgz/AQsgAUEBaiEBQboBIQIM/gELQdIBIQIgASAERg2WAiADKAIAIgAgBCABa2ohBSABIABrQQFqIQYCQANAIAEtAAAgAEGm1QBqLQAARw1DIABBAUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyXAgsgA0EANgIAIAZBAWohAUEPDEMLQdEBIQIgASAERg2VAiADKAIAIgAgBCABa2ohBSABIABrQQFqIQYCQANAIAEtAAAgAEGk1QBqLQAARw1CIABBAUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyWAgsgA0EANgIAIAZBAWohAUEgDEILQdABIQIgASAERg2UAiADKAIAIgAgBCABa2ohBSABIABrQQJqIQYCQANAIAEtAAAgAEGh1QBqLQAARw1BIABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyVAgsgA0EANgIAIAZBAWohAUESDEELIAEgBEYEQEHPASECDJQCCwJAAkAgAS0AAEHFAGsODgBDQ0NDQ0NDQ0NDQ0MBQwsgAUEBaiEBQbUBIQIM+wELIAFBAWohAUG2ASECDPoBC0HOASECIAEgBEYNkgIgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABBntUAai0AAEcNPyAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMkwILIANBADYCACAGQQFqIQFBBww/C0HNASECIAEgBEYNkQIgAygCACIAIAQgAWtqIQUgASAAa0EFaiEGAkADQCABLQAAIABBmNUAai0AAEcNPiAAQQVGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMkgILIANBADYCACAGQQFqIQFBKAw+CyABIARGBEBBzAEhAgyRAgsCQAJAAkAgAS0AAEHFAGsOEQBBQUFBQUFBQUEBQUFBQUECQQsgAUEBaiEBQbEBIQIM+QELIAFBAWohAUGyASECDPgBCyABQQFqIQFBswEhAgz3AQtBywEhAiABIARGDY8CIAMoAgAiACAEIAFraiEFIAEgAGtBBmohBgJAA0AgAS0AACAAQZHVAGotAABHDTwgAEEGRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADJACCyADQQA2AgAgBkEBaiEBQRoMPAtBygEhAiABIARGDY4CIAMoAgAiACAEIAFraiEFIAEgAGtBA2ohBgJAA0AgAS0AACAAQY3VAGotAABHDTsgAEEDRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADI8CCyADQQA2AgAgBkEBaiEBQSEMOwsgASAERgRAQckBIQIMjgILAkACQCABLQAAQcEAaw4UAD09PT09PT09PT09PT09PT09PQE9CyABQQFqIQFBrQEhAgz1AQsgAUEBaiEBQbABIQIM9AELIAEgBEYEQEHIASECDI0CCwJAAkAgAS0AAEHVAGsOCwA8PDw8PDw8PDwBPAsgAUEBaiEBQa4BIQIM9AELIAFBAWohAUGvASECDPMBC0HHASECIAEgBEYNiwIgAygCACIAIAQgAWtqIQUgASAAa0EIaiEGAkADQCABLQAAIABBhNUAai0AAEcNOCAAQQhGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMjAILIANBADYCACAGQQFqIQFBKgw4CyABIARGBEBBxgEhAgyLAgsgAS0AAEHQAEcNOCABQQFqIQFBJQw3C0HFASECIAEgBEYNiQIgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABBgdUAai0AAEcNNiAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMigILIANBADYCACAGQQFqIQFBDgw2CyABIARGBEBBxAEhAgyJAgsgAS0AAEHFAEcNNiABQQFqIQFBqwEhAgzvAQsgASAERgRAQcMBIQIMiAILAkACQAJAAkAgAS0AAEHCAGsODwABAjk5OTk5OTk5OTk5AzkLIAFBAWohAUGnASECDPEBCyABQQFqIQFBqAEhAgzwAQsgAUEBaiEBQakBIQIM7wELIAFBAWohAUGqASECDO4BC0HCASECIAEgBEYNhgIgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABB/tQAai0AAEcNMyAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMhwILIANBADYCACAGQQFqIQFBFAwzC0HBASECIAEgBEYNhQIgAygCACIAIAQgAWtqIQUgASAAa0EEaiEGAkADQCABLQAAIABB+dQAai0AAEcNMiAAQQRGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMhgILIANBADYCACAGQQFqIQFBKwwyC0HAASECIAEgBEYNhAIgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABB9tQAai0AAEcNMSAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMhQILIANBADYCACAGQQFqIQFBLAwxC0G/ASECIAEgBEYNgwIgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABBodUAai0AAEcNMCAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMhAILIANBADYCACAGQQFqIQFBEQwwC0G+ASECIAEgBEYNggIgAygCACIAIAQgAWtqIQUgASAAa0EDaiEGAkADQCABLQAAIABB8tQAai0AAEcNLyAAQQNGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMgwILIANBADYCACAGQQFqIQFBLgwvCyABIARGBEBBvQEhAgyCAgsCQAJAAkACQAJAIAEtAABBwQBrDhUANDQ0NDQ0NDQ0NAE0NAI0NAM0NAQ0CyABQQFqIQFBmwEhAgzsAQsgAUEBaiEBQZwBIQIM6wELIAFBAWohAUGdASECDOoBCyABQQFqIQFBogEhAgzpAQsgAUEBaiEBQaQBIQIM6AELIAEgBEYEQEG8ASECDIECCwJAAkAgAS0AAEHSAGsOAwAwATALIAFBAWohAUGjASECDOgBCyABQQFqIQFBBAwtC0G7ASECIAEgBEYN/wEgAygCACIAIAQgAWtqIQUgASAAa0EBaiEGAkADQCABLQAAIABB8NQAai0AAEcNLCAAQQFGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMgAILIANBADYCACAGQQFqIQFBHQwsCyABIARGBEBBugEhAgz/AQsCQAJAIAEtAABByQBrDgcBLi4uLi4ALgsgAUEBaiEBQaEBIQIM5gELIAFBAWohAUEiDCsLIAEgBEYEQEG5ASECDP4BCyABLQAAQdAARw0rIAFBAWohAUGgASECDOQBCyABIARGBEBBuAEhAgz9AQsCQAJAIAEtAABBxgBrDgsALCwsLCwsLCwsASwLIAFBAWohAUGeASECDOQBCyABQQFqIQFBnwEhAgzjAQtBtwEhAiABIARGDfsBIAMoAgAiACAEIAFraiEFIAEgAGtBA2ohBgJAA0AgAS0AACAAQezUAGotAABHDSggAEEDRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADPwBCyADQQA2AgAgBkEBaiEBQQ0MKAtBtgEhAiABIARGDfoBIAMoAgAiACAEIAFraiEFIAEgAGtBAmohBgJAA0AgAS0AACAAQaHVAGotAABHDScgAEECRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADPsBCyADQQA2AgAgBkEBaiEBQQwMJwtBtQEhAiABIARGDfkBIAMoAgAiACAEIAFraiEFIAEgAGtBAWohBgJAA0AgAS0AACAAQerUAGotAABHDSYgAEEBRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADPoBCyADQQA2AgAgBkEBaiEBQQMMJgtBtAEhAiABIARGDfgBIAMoAgAiACAEIAFraiEFIAEgAGtBAWohBgJAA0AgAS0AACAAQejUAGotAABHDSUgAEEBRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADPkBCyADQQA2AgAgBkEBaiEBQSYMJQsgASAERgRAQbMBIQIM+AELAkACQCABLQAAQdQAaw4CAAEnCyABQQFqIQFBmQEhAgzfAQsgAUEBaiEBQZoBIQIM3gELQbIBIQIgASAERg32ASADKAIAIgAgBCABa2ohBSABIABrQQFqIQYCQANAIAEtAAAgAEHm1ABqLQAARw0jIABBAUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAz3AQsgA0EANgIAIAZBAWohAUEnDCMLQbEBIQIgASAERg31ASADKAIAIgAgBCABa2ohBSABIABrQQFqIQYCQANAIAEtAAAgAEHk1ABqLQAARw0iIABBAUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAz2AQsgA0EANgIAIAZBAWohAUEcDCILQbABIQIgASAERg30ASADKAIAIgAgBCABa2ohBSABIABrQQVqIQYCQANAIAEtAAAgAEHe1ABqLQAARw0hIABBBUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAz1AQsgA0EANgIAIAZBAWohAUEGDCELQa8BIQIgASAERg3zASADKAIAIgAgBCABa2ohBSABIABrQQRqIQYCQANAIAEtAAAgAEHZ1ABqLQAARw0gIABBBEYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAz0AQsgA0EANgIAIAZBAWohAUEZDCALIAEgBEYEQEGuASECDPMBCwJAAkACQAJAIAEtAABBLWsOIwAkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJAEkJCQkJAIkJCQDJAsgAUEBaiEBQY4BIQIM3AELIAFBAWohAUGPASECDNsBCyABQQFqIQFBlAEhAgzaAQsgAUEBaiEBQZUBIQIM2QELQa0BIQIgASAERg3xASADKAIAIgAgBCABa2ohBSABIABrQQFqIQYCQANAIAEtAAAgAEHX1ABqLQAARw0eIABBAUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzyAQsgA0EANgIAIAZBAWohAUELDB4LIAEgBEYEQEGsASECDPEBCwJAAkAgAS0AAEHBAGsOAwAgASALIAFBAWohAUGQASECDNgBCyABQQFqIQFBkwEhAgzXAQsgASAERgRAQasBIQIM8AELAkACQCABLQAAQcEAaw4PAB8fHx8fHx8fHx8fHx8BHwsgAUEBaiEBQZEBIQIM1wELIAFBAWohAUGSASECDNYBCyABIARGBEBBqgEhAgzvAQsgAS0AAEHMAEcNHCABQQFqIQFBCgwbC0GpASECIAEgBEYN7QEgAygCACIAIAQgAWtqIQUgASAAa0EFaiEGAkADQCABLQAAIABB0dQAai0AAEcNGiAAQQVGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM7gELIANBADYCACAGQQFqIQFBHgwaC0GoASECIAEgBEYN7AEgAygCACIAIAQgAWtqIQUgASAAa0EGaiEGAkADQCABLQAAIABBytQAai0AAEcNGSAAQQZGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM7QELIANBADYCACAGQQFqIQFBFQwZC0GnASECIAEgBEYN6wEgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABBx9QAai0AAEcNGCAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM7AELIANBADYCACAGQQFqIQFBFwwYC0GmASECIAEgBEYN6gEgAygCACIAIAQgAWtqIQUgASAAa0EFaiEGAkADQCABLQAAIABBwdQAai0AAEcNFyAAQQVGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM6wELIANBADYCACAGQQFqIQFBGAwXCyABIARGBEBBpQEhAgzqAQsCQAJAIAEtAABByQBrDgcAGRkZGRkBGQsgAUEBaiEBQYsBIQIM0QELIAFBAWohAUGMASECDNABC0GkASECIAEgBEYN6AEgAygCACIAIAQgAWtqIQUgASAAa0EBaiEGAkADQCABLQAAIABBptUAai0AAEcNFSAAQQFGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM6QELIANBADYCACAGQQFqIQFBCQwVC0GjASECIAEgBEYN5wEgAygCACIAIAQgAWtqIQUgASAAa0EBaiEGAkADQCABLQAAIABBpNUAai0AAEcNFCAAQQFGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM6AELIANBADYCACAGQQFqIQFBHwwUC0GiASECIAEgBEYN5gEgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABBvtQAai0AAEcNEyAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM5wELIANBADYCACAGQQFqIQFBAgwTC0GhASECIAEgBEYN5QEgAygCACIAIAQgAWtqIQUgASAAa0EBaiEGA0AgAS0AACAAQbzUAGotAABHDREgAEEBRg0CIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADOUBCyABIARGBEBBoAEhAgzlAQtBASABLQAAQd8ARw0RGiABQQFqIQFBhwEhAgzLAQsgA0EANgIAIAZBAWohAUGIASECDMoBC0GfASECIAEgBEYN4gEgAygCACIAIAQgAWtqIQUgASAAa0EIaiEGAkADQCABLQAAIABBhNUAai0AAEcNDyAAQQhGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM4wELIANBADYCACAGQQFqIQFBKQwPC0GeASECIAEgBEYN4QEgAygCACIAIAQgAWtqIQUgASAAa0EDaiEGAkADQCABLQAAIABBuNQAai0AAEcNDiAAQQNGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM4gELIANBADYCACAGQQFqIQFBLQwOCyABIARGBEBBnQEhAgzhAQsgAS0AAEHFAEcNDiABQQFqIQFBhAEhAgzHAQsgASAERgRAQZwBIQIM4AELAkACQCABLQAAQcwAaw4IAA8PDw8PDwEPCyABQQFqIQFBggEhAgzHAQsgAUEBaiEBQYMBIQIMxgELQZsBIQIgASAERg3eASADKAIAIgAgBCABa2ohBSABIABrQQRqIQYCQANAIAEtAAAgAEGz1ABqLQAARw0LIABBBEYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzfAQsgA0EANgIAIAZBAWohAUEjDAsLQZoBIQIgASAERg3dASADKAIAIgAgBCABa2ohBSABIABrQQJqIQYCQANAIAEtAAAgAEGw1ABqLQAARw0KIABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzeAQsgA0EANgIAIAZBAWohAUEADAoLIAEgBEYEQEGZASECDN0BCwJAAkAgAS0AAEHIAGsOCAAMDAwMDAwBDAsgAUEBaiEBQf0AIQIMxAELIAFBAWohAUGAASECDMMBCyABIARGBEBBmAEhAgzcAQsCQAJAIAEtAABBzgBrDgMACwELCyABQQFqIQFB/gAhAgzDAQsgAUEBaiEBQf8AIQIMwgELIAEgBEYEQEGXASECDNsBCyABLQAAQdkARw0IIAFBAWohAUEIDAcLQZYBIQIgASAERg3ZASADKAIAIgAgBCABa2ohBSABIABrQQNqIQYCQANAIAEtAAAgAEGs1ABqLQAARw0GIABBA0YNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzaAQsgA0EANgIAIAZBAWohAUEFDAYLQZUBIQIgASAERg3YASADKAIAIgAgBCABa2ohBSABIABrQQVqIQYCQANAIAEtAAAgAEGm1ABqLQAARw0FIABBBUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzZAQsgA0EANgIAIAZBAWohAUEWDAULQZQBIQIgASAERg3XASADKAIAIgAgBCABa2ohBSABIABrQQJqIQYCQANAIAEtAAAgAEGh1QBqLQAARw0EIABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzYAQsgA0EANgIAIAZBAWohAUEQDAQLIAEgBEYEQEGTASECDNcBCwJAAkAgAS0AAEHDAGsODAAGBgYGBgYGBgYGAQYLIAFBAWohAUH5ACECDL4BCyABQQFqIQFB+gAhAgy9AQtBkgEhAiABIARGDdUBIAMoAgAiACAEIAFraiEFIAEgAGtBBWohBgJAA0AgAS0AACAAQaDUAGotAABHDQIgAEEFRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADNYBCyADQQA2AgAgBkEBaiEBQSQMAgsgA0EANgIADAILIAEgBEYEQEGRASECDNQBCyABLQAAQcwARw0BIAFBAWohAUETCzoAKSADKAIEIQAgA0EANgIEIAMgACABEC4iAA0CDAELQQAhAiADQQA2AhwgAyABNgIUIANB/h82AhAgA0EGNgIMDNEBC0H4ACECDLcBCyADQZABNgIcIAMgATYCFCADIAA2AgxBACECDM8BC0EAIQACQCADKAI4IgJFDQAgAigCQCICRQ0AIAMgAhEAACEACyAARQ0AIABBFUYNASADQQA2AhwgAyABNgIUIANBgg82AhAgA0EgNgIMQQAhAgzOAQtB9wAhAgy0AQsgA0GPATYCHCADIAE2AhQgA0HsGzYCECADQRU2AgxBACECDMwBCyABIARGBEBBjwEhAgzMAQsCQCABLQAAQSBGBEAgAUEBaiEBDAELIANBADYCHCADIAE2AhQgA0GbHzYCECADQQY2AgxBACECDMwBC0ECIQIMsgELA0AgAS0AAEEgRw0CIAQgAUEBaiIBRw0AC0GOASECDMoBCyABIARGBEBBjQEhAgzKAQsCQCABLQAAQQlrDgRKAABKAAtB9QAhAgywAQsgAy0AKUEFRgRAQfYAIQIMsAELQfQAIQIMrwELIAEgBEYEQEGMASECDMgBCyADQRA2AgggAyABNgIEDAoLIAEgBEYEQEGLASECDMcBCwJAIAEtAABBCWsOBEcAAEcAC0HzACECDK0BCyABIARHBEAgA0EQNgIIIAMgATYCBEHxACECDK0BC0GKASECDMUBCwJAIAEgBEcEQANAIAEtAABBoNAAai0AACIAQQNHBEACQCAAQQFrDgJJAAQLQfAAIQIMrwELIAQgAUEBaiIBRw0AC0GIASECDMYBC0GIASECDMUBCyADQQA2AhwgAyABNgIUIANB2yA2AhAgA0EHNgIMQQAhAgzEAQsgASAERgRAQYkBIQIMxAELAkACQAJAIAEtAABBoNIAai0AAEEBaw4DRgIAAQtB8gAhAgysAQsgA0EANgIcIAMgATYCFCADQbQSNgIQIANBBzYCDEEAIQIMxAELQeoAIQIMqgELIAEgBEcEQCABQQFqIQFB7wAhAgyqAQtBhwEhAgzCAQsgBCABIgBGBEBBhgEhAgzCAQsgAC0AACIBQS9GBEAgAEEBaiEBQe4AIQIMqQELIAFBCWsiAkEXSw0BIAAhAUEBIAJ0QZuAgARxDUEMAQsgBCABIgBGBEBBhQEhAgzBAQsgAC0AAEEvRw0AIABBAWohAQwDC0EAIQIgA0EANgIcIAMgADYCFCADQdsgNgIQIANBBzYCDAy/AQsCQAJAAkACQAJAA0AgAS0AAEGgzgBqLQAAIgBBBUcEQAJAAkAgAEEBaw4IRwUGBwgABAEIC0HrACECDK0BCyABQQFqIQFB7QAhAgysAQsgBCABQQFqIgFHDQALQYQBIQIMwwELIAFBAWoMFAsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDR4gA0HbADYCHCADIAE2AhQgAyAANgIMQQAhAgzBAQsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDR4gA0HdADYCHCADIAE2AhQgAyAANgIMQQAhAgzAAQsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDR4gA0H6ADYCHCADIAE2AhQgAyAANgIMQQAhAgy/AQsgA0EANgIcIAMgATYCFCADQfkPNgIQIANBBzYCDEEAIQIMvgELIAEgBEYEQEGDASECDL4BCwJAIAEtAABBoM4Aai0AAEEBaw4IPgQFBgAIAgMHCyABQQFqIQELQQMhAgyjAQsgAUEBagwNC0EAIQIgA0EANgIcIANB0RI2AhAgA0EHNgIMIAMgAUEBajYCFAy6AQsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDRYgA0HbADYCHCADIAE2AhQgAyAANgIMQQAhAgy5AQsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDRYgA0HdADYCHCADIAE2AhQgAyAANgIMQQAhAgy4AQsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDRYgA0H6ADYCHCADIAE2AhQgAyAANgIMQQAhAgy3AQsgA0EANgIcIAMgATYCFCADQfkPNgIQIANBBzYCDEEAIQIMtgELQewAIQIMnAELIAEgBEYEQEGCASECDLUBCyABQQFqDAILIAEgBEYEQEGBASECDLQBCyABQQFqDAELIAEgBEYNASABQQFqCyEBQQQhAgyYAQtBgAEhAgywAQsDQCABLQAAQaDMAGotAAAiAEECRwRAIABBAUcEQEHpACECDJkBCwwxCyAEIAFBAWoiAUcNAAtB/wAhAgyvAQsgASAERgRAQf4AIQIMrwELAkAgAS0AAEEJaw43LwMGLwQGBgYGBgYGBgYGBgYGBgYGBgYFBgYCBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGAAYLIAFBAWoLIQFBBSECDJQBCyABQQFqDAYLIAMoAgQhACADQQA2AgQgAyAAIAEQLCIARQ0IIANB2wA2AhwgAyABNgIUIAMgADYCDEEAIQIMqwELIAMoAgQhACADQQA2AgQgAyAAIAEQLCIARQ0IIANB3QA2AhwgAyABNgIUIAMgADYCDEEAIQIMqgELIAMoAgQhACADQQA2AgQgAyAAIAEQLCIARQ0IIANB+gA2AhwgAyABNgIUIAMgADYCDEEAIQIMqQELIANBADYCHCADIAE2AhQgA0GNFDYCECADQQc2AgxBACECDKgBCwJAAkACQAJAA0AgAS0AAEGgygBqLQAAIgBBBUcEQAJAIABBAWsOBi4DBAUGAAYLQegAIQIMlAELIAQgAUEBaiIBRw0AC0H9ACECDKsBCyADKAIEIQAgA0EANgIEIAMgACABECwiAEUNByADQdsANgIcIAMgATYCFCADIAA2AgxBACECDKoBCyADKAIEIQAgA0EANgIEIAMgACABECwiAEUNByADQd0ANgIcIAMgATYCFCADIAA2AgxBACECDKkBCyADKAIEIQAgA0EANgIEIAMgACABECwiAEUNByADQfoANgIcIAMgATYCFCADIAA2AgxBACECDKgBCyADQQA2AhwgAyABNgIUIANB5Ag2AhAgA0EHNgIMQQAhAgynAQsgASAERg0BIAFBAWoLIQFBBiECDIwBC0H8ACECDKQBCwJAAkACQAJAA0AgAS0AAEGgyABqLQAAIgBBBUcEQCAAQQFrDgQpAgMEBQsgBCABQQFqIgFHDQALQfsAIQIMpwELIAMoAgQhACADQQA2AgQgAyAAIAEQLCIARQ0DIANB2wA2AhwgAyABNgIUIAMgADYCDEEAIQIMpgELIAMoAgQhACADQQA2AgQgAyAAIAEQLCIARQ0DIANB3QA2AhwgAyABNgIUIAMgADYCDEEAIQIMpQELIAMoAgQhACADQQA2AgQgAyAAIAEQLCIARQ0DIANB+gA2AhwgAyABNgIUIAMgADYCDEEAIQIMpAELIANBADYCHCADIAE2AhQgA0G8CjYCECADQQc2AgxBACECDKMBC0HPACECDIkBC0HRACECDIgBC0HnACECDIcBCyABIARGBEBB+gAhAgygAQsCQCABLQAAQQlrDgQgAAAgAAsgAUEBaiEBQeYAIQIMhgELIAEgBEYEQEH5ACECDJ8BCwJAIAEtAABBCWsOBB8AAB8AC0EAIQACQCADKAI4IgJFDQAgAigCOCICRQ0AIAMgAhEAACEACyAARQRAQeIBIQIMhgELIABBFUcEQCADQQA2AhwgAyABNgIUIANByQ02AhAgA0EaNgIMQQAhAgyfAQsgA0H4ADYCHCADIAE2AhQgA0HqGjYCECADQRU2AgxBACECDJ4BCyABIARHBEAgA0ENNgIIIAMgATYCBEHkACECDIUBC0H3ACECDJ0BCyABIARGBEBB9gAhAgydAQsCQAJAAkAgAS0AAEHIAGsOCwABCwsLCwsLCwsCCwsgAUEBaiEBQd0AIQIMhQELIAFBAWohAUHgACECDIQBCyABQQFqIQFB4wAhAgyDAQtB9QAhAiABIARGDZsBIAMoAgAiACAEIAFraiEFIAEgAGtBAmohBgJAA0AgAS0AACAAQbXVAGotAABHDQggAEECRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADJwBCyADKAIEIQAgA0IANwMAIAMgACAGQQFqIgEQKyIABEAgA0H0ADYCHCADIAE2AhQgAyAANgIMQQAhAgycAQtB4gAhAgyCAQtBACEAAkAgAygCOCICRQ0AIAIoAjQiAkUNACADIAIRAAAhAAsCQCAABEAgAEEVRg0BIANBADYCHCADIAE2AhQgA0HqDTYCECADQSY2AgxBACECDJwBC0HhACECDIIBCyADQfMANgIcIAMgATYCFCADQYAbNgIQIANBFTYCDEEAIQIMmgELIAMtACkiAEEja0ELSQ0JAkAgAEEGSw0AQQEgAHRBygBxRQ0ADAoLQQAhAiADQQA2AhwgAyABNgIUIANB7Qk2AhAgA0EINgIMDJkBC0HyACECIAEgBEYNmAEgAygCACIAIAQgAWtqIQUgASAAa0EBaiEGAkADQCABLQAAIABBs9UAai0AAEcNBSAAQQFGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMmQELIAMoAgQhACADQgA3AwAgAyAAIAZBAWoiARArIgAEQCADQfEANgIcIAMgATYCFCADIAA2AgxBACECDJkBC0HfACECDH8LQQAhAAJAIAMoAjgiAkUNACACKAI0IgJFDQAgAyACEQAAIQALAkAgAARAIABBFUYNASADQQA2AhwgAyABNgIUIANB6g02AhAgA0EmNgIMQQAhAgyZAQtB3gAhAgx/CyADQfAANgIcIAMgATYCFCADQYAbNgIQIANBFTYCDEEAIQIMlwELIAMtAClBIUYNBiADQQA2AhwgAyABNgIUIANBkQo2AhAgA0EINgIMQQAhAgyWAQtB7wAhAiABIARGDZUBIAMoAgAiACAEIAFraiEFIAEgAGtBAmohBgJAA0AgAS0AACAAQbDVAGotAABHDQIgAEECRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADJYBCyADKAIEIQAgA0IANwMAIAMgACAGQQFqIgEQKyIARQ0CIANB7QA2AhwgAyABNgIUIAMgADYCDEEAIQIMlQELIANBADYCAAsgAygCBCEAIANBADYCBCADIAAgARArIgBFDYABIANB7gA2AhwgAyABNgIUIAMgADYCDEEAIQIMkwELQdwAIQIMeQtBACEAAkAgAygCOCICRQ0AIAIoAjQiAkUNACADIAIRAAAhAAsCQCAABEAgAEEVRg0BIANBADYCHCADIAE2AhQgA0HqDTYCECADQSY2AgxBACECDJMBC0HbACECDHkLIANB7AA2AhwgAyABNgIUIANBgBs2AhAgA0EVNgIMQQAhAgyRAQsgAy0AKSIAQSNJDQAgAEEuRg0AIANBADYCHCADIAE2AhQgA0HJCTYCECADQQg2AgxBACECDJABC0HaACECDHYLIAEgBEYEQEHrACECDI8BCwJAIAEtAABBL0YEQCABQQFqIQEMAQsgA0EANgIcIAMgATYCFCADQbI4NgIQIANBCDYCDEEAIQIMjwELQdkAIQIMdQsgASAERwRAIANBDjYCCCADIAE2AgRB2AAhAgx1C0HqACECDI0BCyABIARGBEBB6QAhAgyNAQsgAS0AAEEwayIAQf8BcUEKSQRAIAMgADoAKiABQQFqIQFB1wAhAgx0CyADKAIEIQAgA0EANgIEIAMgACABEC8iAEUNeiADQegANgIcIAMgATYCFCADIAA2AgxBACECDIwBCyABIARGBEBB5wAhAgyMAQsCQCABLQAAQS5GBEAgAUEBaiEBDAELIAMoAgQhACADQQA2AgQgAyAAIAEQLyIARQ17IANB5gA2AhwgAyABNgIUIAMgADYCDEEAIQIMjAELQdYAIQIMcgsgASAERgRAQeUAIQIMiwELQQAhAEEBIQVBASEHQQAhAgJAAkACQAJAAkACfwJAAkACQAJAAkACQAJAIAEtAABBMGsOCgoJAAECAwQFBggLC0ECDAYLQQMMBQtBBAwEC0EFDAMLQQYMAgtBBwwBC0EICyECQQAhBUEAIQcMAgtBCSECQQEhAEEAIQVBACEHDAELQQAhBUEBIQILIAMgAjoAKyABQQFqIQECQAJAIAMtAC5BEHENAAJAAkACQCADLQAqDgMBAAIECyAHRQ0DDAILIAANAQwCCyAFRQ0BCyADKAIEIQAgA0EANgIEIAMgACABEC8iAEUNAiADQeIANgIcIAMgATYCFCADIAA2AgxBACECDI0BCyADKAIEIQAgA0EANgIEIAMgACABEC8iAEUNfSADQeMANgIcIAMgATYCFCADIAA2AgxBACECDIwBCyADKAIEIQAgA0EANgIEIAMgACABEC8iAEUNeyADQeQANgIcIAMgATYCFCADIAA2AgwMiwELQdQAIQIMcQsgAy0AKUEiRg2GAUHTACECDHALQQAhAAJAIAMoAjgiAkUNACACKAJEIgJFDQAgAyACEQAAIQALIABFBEBB1QAhAgxwCyAAQRVHBEAgA0EANgIcIAMgATYCFCADQaQNNgIQIANBITYCDEEAIQIMiQELIANB4QA2AhwgAyABNgIUIANB0Bo2AhAgA0EVNgIMQQAhAgyIAQsgASAERgRAQeAAIQIMiAELAkACQAJAAkACQCABLQAAQQprDgQBBAQABAsgAUEBaiEBDAELIAFBAWohASADQS9qLQAAQQFxRQ0BC0HSACECDHALIANBADYCHCADIAE2AhQgA0G2ETYCECADQQk2AgxBACECDIgBCyADQQA2AhwgAyABNgIUIANBthE2AhAgA0EJNgIMQQAhAgyHAQsgASAERgRAQd8AIQIMhwELIAEtAABBCkYEQCABQQFqIQEMCQsgAy0ALkHAAHENCCADQQA2AhwgAyABNgIUIANBthE2AhAgA0ECNgIMQQAhAgyGAQsgASAERgRAQd0AIQIMhgELIAEtAAAiAkENRgRAIAFBAWohAUHQACECDG0LIAEhACACQQlrDgQFAQEFAQsgBCABIgBGBEBB3AAhAgyFAQsgAC0AAEEKRw0AIABBAWoMAgtBACECIANBADYCHCADIAA2AhQgA0HKLTYCECADQQc2AgwMgwELIAEgBEYEQEHbACECDIMBCwJAIAEtAABBCWsOBAMAAAMACyABQQFqCyEBQc4AIQIMaAsgASAERgRAQdoAIQIMgQELIAEtAABBCWsOBAABAQABC0EAIQIgA0EANgIcIANBmhI2AhAgA0EHNgIMIAMgAUEBajYCFAx/CyADQYASOwEqQQAhAAJAIAMoAjgiAkUNACACKAI4IgJFDQAgAyACEQAAIQALIABFDQAgAEEVRw0BIANB2QA2AhwgAyABNgIUIANB6ho2AhAgA0EVNgIMQQAhAgx+C0HNACECDGQLIANBADYCHCADIAE2AhQgA0HJDTYCECADQRo2AgxBACECDHwLIAEgBEYEQEHZACECDHwLIAEtAABBIEcNPSABQQFqIQEgAy0ALkEBcQ09IANBADYCHCADIAE2AhQgA0HCHDYCECADQR42AgxBACECDHsLIAEgBEYEQEHYACECDHsLAkACQAJAAkACQCABLQAAIgBBCmsOBAIDAwABCyABQQFqIQFBLCECDGULIABBOkcNASADQQA2AhwgAyABNgIUIANB5xE2AhAgA0EKNgIMQQAhAgx9CyABQQFqIQEgA0Evai0AAEEBcUUNcyADLQAyQYABcUUEQCADQTJqIQIgAxA1QQAhAAJAIAMoAjgiBkUNACAGKAIoIgZFDQAgAyAGEQAAIQALAkACQCAADhZNTEsBAQEBAQEBAQEBAQEBAQEBAQEAAQsgA0EpNgIcIAMgATYCFCADQawZNgIQIANBFTYCDEEAIQIMfgsgA0EANgIcIAMgATYCFCADQeULNgIQIANBETYCDEEAIQIMfQtBACEAAkAgAygCOCICRQ0AIAIoAlwiAkUNACADIAIRAAAhAAsgAEUNWSAAQRVHDQEgA0EFNgIcIAMgATYCFCADQZsbNgIQIANBFTYCDEEAIQIMfAtBywAhAgxiC0EAIQIgA0EANgIcIAMgATYCFCADQZAONgIQIANBFDYCDAx6CyADIAMvATJBgAFyOwEyDDsLIAEgBEcEQCADQRE2AgggAyABNgIEQcoAIQIMYAtB1wAhAgx4CyABIARGBEBB1gAhAgx4CwJAAkACQAJAIAEtAAAiAEEgciAAIABBwQBrQf8BcUEaSRtB/wFxQeMAaw4TAEBAQEBAQEBAQEBAQAFAQEACA0ALIAFBAWohAUHGACECDGELIAFBAWohAUHHACECDGALIAFBAWohAUHIACECDF8LIAFBAWohAUHJACECDF4LQdUAIQIgBCABIgBGDXYgBCABayADKAIAIgFqIQYgACABa0EFaiEHA0AgAUGQyABqLQAAIAAtAAAiBUEgciAFIAVBwQBrQf8BcUEaSRtB/wFxRw0IQQQgAUEFRg0KGiABQQFqIQEgBCAAQQFqIgBHDQALIAMgBjYCAAx2C0HUACECIAQgASIARg11IAQgAWsgAygCACIBaiEGIAAgAWtBD2ohBwNAIAFBgMgAai0AACAALQAAIgVBIHIgBSAFQcEAa0H/AXFBGkkbQf8BcUcNB0EDIAFBD0YNCRogAUEBaiEBIAQgAEEBaiIARw0ACyADIAY2AgAMdQtB0wAhAiAEIAEiAEYNdCAEIAFrIAMoAgAiAWohBiAAIAFrQQ5qIQcDQCABQeLHAGotAAAgAC0AACIFQSByIAUgBUHBAGtB/wFxQRpJG0H/AXFHDQYgAUEORg0HIAFBAWohASAEIABBAWoiAEcNAAsgAyAGNgIADHQLQdIAIQIgBCABIgBGDXMgBCABayADKAIAIgFqIQUgACABa0EBaiEGA0AgAUHgxwBqLQAAIAAtAAAiB0EgciAHIAdBwQBrQf8BcUEaSRtB/wFxRw0FIAFBAUYNAiABQQFqIQEgBCAAQQFqIgBHDQALIAMgBTYCAAxzCyABIARGBEBB0QAhAgxzCwJAAkAgAS0AACIAQSByIAAgAEHBAGtB/wFxQRpJG0H/AXFB7gBrDgcAOTk5OTkBOQsgAUEBaiEBQcMAIQIMWgsgAUEBaiEBQcQAIQIMWQsgA0EANgIAIAZBAWohAUHFACECDFgLQdAAIQIgBCABIgBGDXAgBCABayADKAIAIgFqIQYgACABa0EJaiEHA0AgAUHWxwBqLQAAIAAtAAAiBUEgciAFIAVBwQBrQf8BcUEaSRtB/wFxRw0CQQIgAUEJRg0EGiABQQFqIQEgBCAAQQFqIgBHDQALIAMgBjYCAAxwC0HPACECIAQgASIARg1vIAQgAWsgAygCACIBaiEGIAAgAWtBBWohBwNAIAFB0McAai0AACAALQAAIgVBIHIgBSAFQcEAa0H/AXFBGkkbQf8BcUcNASABQQVGDQIgAUEBaiEBIAQgAEEBaiIARw0ACyADIAY2AgAMbwsgACEBIANBADYCAAwzC0EBCzoALCADQQA2AgAgB0EBaiEBC0EtIQIMUgsCQANAIAEtAABB0MUAai0AAEEBRw0BIAQgAUEBaiIBRw0AC0HNACECDGsLQcIAIQIMUQsgASAERgRAQcwAIQIMagsgAS0AAEE6RgRAIAMoAgQhACADQQA2AgQgAyAAIAEQMCIARQ0zIANBywA2AhwgAyAANgIMIAMgAUEBajYCFEEAIQIMagsgA0EANgIcIAMgATYCFCADQecRNgIQIANBCjYCDEEAIQIMaQsCQAJAIAMtACxBAmsOAgABJwsgA0Ezai0AAEECcUUNJiADLQAuQQJxDSYgA0EANgIcIAMgATYCFCADQaYUNgIQIANBCzYCDEEAIQIMaQsgAy0AMkEgcUUNJSADLQAuQQJxDSUgA0EANgIcIAMgATYCFCADQb0TNgIQIANBDzYCDEEAIQIMaAtBACEAAkAgAygCOCICRQ0AIAIoAkgiAkUNACADIAIRAAAhAAsgAEUEQEHBACECDE8LIABBFUcEQCADQQA2AhwgAyABNgIUIANBpg82AhAgA0EcNgIMQQAhAgxoCyADQcoANgIcIAMgATYCFCADQYUcNgIQIANBFTYCDEEAIQIMZwsgASAERwRAA0AgAS0AAEHAwQBqLQAAQQFHDRcgBCABQQFqIgFHDQALQcQAIQIMZwtBxAAhAgxmCyABIARHBEADQAJAIAEtAAAiAEEgciAAIABBwQBrQf8BcUEaSRtB/wFxIgBBCUYNACAAQSBGDQACQAJAAkACQCAAQeMAaw4TAAMDAwMDAwMBAwMDAwMDAwMDAgMLIAFBAWohAUE2IQIMUgsgAUEBaiEBQTchAgxRCyABQQFqIQFBOCECDFALDBULIAQgAUEBaiIBRw0AC0E8IQIMZgtBPCECDGULIAEgBEYEQEHIACECDGULIANBEjYCCCADIAE2AgQCQAJAAkACQAJAIAMtACxBAWsOBBQAAQIJCyADLQAyQSBxDQNB4AEhAgxPCwJAIAMvATIiAEEIcUUNACADLQAoQQFHDQAgAy0ALkEIcUUNAgsgAyAAQff7A3FBgARyOwEyDAsLIAMgAy8BMkEQcjsBMgwECyADQQA2AgQgAyABIAEQMSIABEAgA0HBADYCHCADIAA2AgwgAyABQQFqNgIUQQAhAgxmCyABQQFqIQEMWAsgA0EANgIcIAMgATYCFCADQfQTNgIQIANBBDYCDEEAIQIMZAtBxwAhAiABIARGDWMgAygCACIAIAQgAWtqIQUgASAAa0EGaiEGAkADQCAAQcDFAGotAAAgAS0AAEEgckcNASAAQQZGDUogAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMZAsgA0EANgIADAULAkAgASAERwRAA0AgAS0AAEHAwwBqLQAAIgBBAUcEQCAAQQJHDQMgAUEBaiEBDAULIAQgAUEBaiIBRw0AC0HFACECDGQLQcUAIQIMYwsLIANBADoALAwBC0ELIQIMRwtBPyECDEYLAkACQANAIAEtAAAiAEEgRwRAAkAgAEEKaw4EAwUFAwALIABBLEYNAwwECyAEIAFBAWoiAUcNAAtBxgAhAgxgCyADQQg6ACwMDgsgAy0AKEEBRw0CIAMtAC5BCHENAiADKAIEIQAgA0EANgIEIAMgACABEDEiAARAIANBwgA2AhwgAyAANgIMIAMgAUEBajYCFEEAIQIMXwsgAUEBaiEBDFALQTshAgxECwJAA0AgAS0AACIAQSBHIABBCUdxDQEgBCABQQFqIgFHDQALQcMAIQIMXQsLQTwhAgxCCwJAAkAgASAERwRAA0AgAS0AACIAQSBHBEAgAEEKaw4EAwQEAwQLIAQgAUEBaiIBRw0AC0E/IQIMXQtBPyECDFwLIAMgAy8BMkEgcjsBMgwKCyADKAIEIQAgA0EANgIEIAMgACABEDEiAEUNTiADQT42AhwgAyABNgIUIAMgADYCDEEAIQIMWgsCQCABIARHBEADQCABLQAAQcDDAGotAAAiAEEBRwRAIABBAkYNAwwMCyAEIAFBAWoiAUcNAAtBNyECDFsLQTchAgxaCyABQQFqIQEMBAtBOyECIAQgASIARg1YIAQgAWsgAygCACIBaiEGIAAgAWtBBWohBwJAA0AgAUGQyABqLQAAIAAtAAAiBUEgciAFIAVBwQBrQf8BcUEaSRtB/wFxRw0BIAFBBUYEQEEHIQEMPwsgAUEBaiEBIAQgAEEBaiIARw0ACyADIAY2AgAMWQsgA0EANgIAIAAhAQwFC0E6IQIgBCABIgBGDVcgBCABayADKAIAIgFqIQYgACABa0EIaiEHAkADQCABQbTBAGotAAAgAC0AACIFQSByIAUgBUHBAGtB/wFxQRpJG0H/AXFHDQEgAUEIRgRAQQUhAQw+CyABQQFqIQEgBCAAQQFqIgBHDQALIAMgBjYCAAxYCyADQQA2AgAgACEBDAQLQTkhAiAEIAEiAEYNViAEIAFrIAMoAgAiAWohBiAAIAFrQQNqIQcCQANAIAFBsMEAai0AACAALQAAIgVBIHIgBSAFQcEAa0H/AXFBGkkbQf8BcUcNASABQQNGBEBBBiEBDD0LIAFBAWohASAEIABBAWoiAEcNAAsgAyAGNgIADFcLIANBADYCACAAIQEMAwsCQANAIAEtAAAiAEEgRwRAIABBCmsOBAcEBAcCCyAEIAFBAWoiAUcNAAtBOCECDFYLIABBLEcNASABQQFqIQBBASEBAkACQAJAAkACQCADLQAsQQVrDgQDAQIEAAsgACEBDAQLQQIhAQwBC0EEIQELIANBAToALCADIAMvATIgAXI7ATIgACEBDAELIAMgAy8BMkEIcjsBMiAAIQELQT4hAgw7CyADQQA6ACwLQTkhAgw5CyABIARGBEBBNiECDFILAkACQAJAAkACQCABLQAAQQprDgQAAgIBAgsgAygCBCEAIANBADYCBCADIAAgARAxIgBFDQIgA0EzNgIcIAMgATYCFCADIAA2AgxBACECDFULIAMoAgQhACADQQA2AgQgAyAAIAEQMSIARQRAIAFBAWohAQwGCyADQTI2AhwgAyAANgIMIAMgAUEBajYCFEEAIQIMVAsgAy0ALkEBcQRAQd8BIQIMOwsgAygCBCEAIANBADYCBCADIAAgARAxIgANAQxJC0E0IQIMOQsgA0E1NgIcIAMgATYCFCADIAA2AgxBACECDFELQTUhAgw3CyADQS9qLQAAQQFxDQAgA0EANgIcIAMgATYCFCADQesWNgIQIANBGTYCDEEAIQIMTwtBMyECDDULIAEgBEYEQEEyIQIMTgsCQCABLQAAQQpGBEAgAUEBaiEBDAELIANBADYCHCADIAE2AhQgA0GSFzYCECADQQM2AgxBACECDE4LQTIhAgw0CyABIARGBEBBMSECDE0LAkAgAS0AACIAQQlGDQAgAEEgRg0AQQEhAgJAIAMtACxBBWsOBAYEBQANCyADIAMvATJBCHI7ATIMDAsgAy0ALkEBcUUNASADLQAsQQhHDQAgA0EAOgAsC0E9IQIMMgsgA0EANgIcIAMgATYCFCADQcIWNgIQIANBCjYCDEEAIQIMSgtBAiECDAELQQQhAgsgA0EBOgAsIAMgAy8BMiACcjsBMgwGCyABIARGBEBBMCECDEcLIAEtAABBCkYEQCABQQFqIQEMAQsgAy0ALkEBcQ0AIANBADYCHCADIAE2AhQgA0HcKDYCECADQQI2AgxBACECDEYLQTAhAgwsCyABQQFqIQFBMSECDCsLIAEgBEYEQEEvIQIMRAsgAS0AACIAQQlHIABBIEdxRQRAIAFBAWohASADLQAuQQFxDQEgA0EANgIcIAMgATYCFCADQZcQNgIQIANBCjYCDEEAIQIMRAtBASECAkACQAJAAkACQAJAIAMtACxBAmsOBwUEBAMBAgAECyADIAMvATJBCHI7ATIMAwtBAiECDAELQQQhAgsgA0EBOgAsIAMgAy8BMiACcjsBMgtBLyECDCsLIANBADYCHCADIAE2AhQgA0GEEzYCECADQQs2AgxBACECDEMLQeEBIQIMKQsgASAERgRAQS4hAgxCCyADQQA2AgQgA0ESNgIIIAMgASABEDEiAA0BC0EuIQIMJwsgA0EtNgIcIAMgATYCFCADIAA2AgxBACECDD8LQQAhAAJAIAMoAjgiAkUNACACKAJMIgJFDQAgAyACEQAAIQALIABFDQAgAEEVRw0BIANB2AA2AhwgAyABNgIUIANBsxs2AhAgA0EVNgIMQQAhAgw+C0HMACECDCQLIANBADYCHCADIAE2AhQgA0GzDjYCECADQR02AgxBACECDDwLIAEgBEYEQEHOACECDDwLIAEtAAAiAEEgRg0CIABBOkYNAQsgA0EAOgAsQQkhAgwhCyADKAIEIQAgA0EANgIEIAMgACABEDAiAA0BDAILIAMtAC5BAXEEQEHeASECDCALIAMoAgQhACADQQA2AgQgAyAAIAEQMCIARQ0CIANBKjYCHCADIAA2AgwgAyABQQFqNgIUQQAhAgw4CyADQcsANgIcIAMgADYCDCADIAFBAWo2AhRBACECDDcLIAFBAWohAUHAACECDB0LIAFBAWohAQwsCyABIARGBEBBKyECDDULAkAgAS0AAEEKRgRAIAFBAWohAQwBCyADLQAuQcAAcUUNBgsgAy0AMkGAAXEEQEEAIQACQCADKAI4IgJFDQAgAigCXCICRQ0AIAMgAhEAACEACyAARQ0SIABBFUYEQCADQQU2AhwgAyABNgIUIANBmxs2AhAgA0EVNgIMQQAhAgw2CyADQQA2AhwgAyABNgIUIANBkA42AhAgA0EUNgIMQQAhAgw1CyADQTJqIQIgAxA1QQAhAAJAIAMoAjgiBkUNACAGKAIoIgZFDQAgAyAGEQAAIQALIAAOFgIBAAQEBAQEBAQEBAQEBAQEBAQEBAMECyADQQE6ADALIAIgAi8BAEHAAHI7AQALQSshAgwYCyADQSk2AhwgAyABNgIUIANBrBk2AhAgA0EVNgIMQQAhAgwwCyADQQA2AhwgAyABNgIUIANB5Qs2AhAgA0ERNgIMQQAhAgwvCyADQQA2AhwgAyABNgIUIANBpQs2AhAgA0ECNgIMQQAhAgwuC0EBIQcgAy8BMiIFQQhxRQRAIAMpAyBCAFIhBwsCQCADLQAwBEBBASEAIAMtAClBBUYNASAFQcAAcUUgB3FFDQELAkAgAy0AKCICQQJGBEBBASEAIAMvATQiBkHlAEYNAkEAIQAgBUHAAHENAiAGQeQARg0CIAZB5gBrQQJJDQIgBkHMAUYNAiAGQbACRg0CDAELQQAhACAFQcAAcQ0BC0ECIQAgBUEIcQ0AIAVBgARxBEACQCACQQFHDQAgAy0ALkEKcQ0AQQUhAAwCC0EEIQAMAQsgBUEgcUUEQCADEDZBAEdBAnQhAAwBC0EAQQMgAykDIFAbIQALIABBAWsOBQIABwEDBAtBESECDBMLIANBAToAMQwpC0EAIQICQCADKAI4IgBFDQAgACgCMCIARQ0AIAMgABEAACECCyACRQ0mIAJBFUYEQCADQQM2AhwgAyABNgIUIANB0hs2AhAgA0EVNgIMQQAhAgwrC0EAIQIgA0EANgIcIAMgATYCFCADQd0ONgIQIANBEjYCDAwqCyADQQA2AhwgAyABNgIUIANB+SA2AhAgA0EPNgIMQQAhAgwpC0EAIQACQCADKAI4IgJFDQAgAigCMCICRQ0AIAMgAhEAACEACyAADQELQQ4hAgwOCyAAQRVGBEAgA0ECNgIcIAMgATYCFCADQdIbNgIQIANBFTYCDEEAIQIMJwsgA0EANgIcIAMgATYCFCADQd0ONgIQIANBEjYCDEEAIQIMJgtBKiECDAwLIAEgBEcEQCADQQk2AgggAyABNgIEQSkhAgwMC0EmIQIMJAsgAyADKQMgIgwgBCABa60iCn0iC0IAIAsgDFgbNwMgIAogDFQEQEElIQIMJAsgAygCBCEAIANBADYCBCADIAAgASAMp2oiARAyIgBFDQAgA0EFNgIcIAMgATYCFCADIAA2AgxBACECDCMLQQ8hAgwJC0IAIQoCQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkAgAS0AAEEwaw43FxYAAQIDBAUGBxQUFBQUFBQICQoLDA0UFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFA4PEBESExQLQgIhCgwWC0IDIQoMFQtCBCEKDBQLQgUhCgwTC0IGIQoMEgtCByEKDBELQgghCgwQC0IJIQoMDwtCCiEKDA4LQgshCgwNC0IMIQoMDAtCDSEKDAsLQg4hCgwKC0IPIQoMCQtCCiEKDAgLQgshCgwHC0IMIQoMBgtCDSEKDAULQg4hCgwEC0IPIQoMAwsgA0EANgIcIAMgATYCFCADQZ8VNgIQIANBDDYCDEEAIQIMIQsgASAERgRAQSIhAgwhC0IAIQoCQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAIAEtAABBMGsONxUUAAECAwQFBgcWFhYWFhYWCAkKCwwNFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYODxAREhMWC0ICIQoMFAtCAyEKDBMLQgQhCgwSC0IFIQoMEQtCBiEKDBALQgchCgwPC0IIIQoMDgtCCSEKDA0LQgohCgwMC0ILIQoMCwtCDCEKDAoLQg0hCgwJC0IOIQoMCAtCDyEKDAcLQgohCgwGC0ILIQoMBQtCDCEKDAQLQg0hCgwDC0IOIQoMAgtCDyEKDAELQgEhCgsgAUEBaiEBIAMpAyAiC0L//////////w9YBEAgAyALQgSGIAqENwMgDAILIANBADYCHCADIAE2AhQgA0G1CTYCECADQQw2AgxBACECDB4LQSchAgwEC0EoIQIMAwsgAyABOgAsIANBADYCACAHQQFqIQFBDCECDAILIANBADYCACAGQQFqIQFBCiECDAELIAFBAWohAUEIIQIMAAsAC0EAIQIgA0EANgIcIAMgATYCFCADQbI4NgIQIANBCDYCDAwXC0EAIQIgA0EANgIcIAMgATYCFCADQYMRNgIQIANBCTYCDAwWC0EAIQIgA0EANgIcIAMgATYCFCADQd8KNgIQIANBCTYCDAwVC0EAIQIgA0EANgIcIAMgATYCFCADQe0QNgIQIANBCTYCDAwUC0EAIQIgA0EANgIcIAMgATYCFCADQdIRNgIQIANBCTYCDAwTC0EAIQIgA0EANgIcIAMgATYCFCADQbI4NgIQIANBCDYCDAwSC0EAIQIgA0EANgIcIAMgATYCFCADQYMRNgIQIANBCTYCDAwRC0EAIQIgA0EANgIcIAMgATYCFCADQd8KNgIQIANBCTYCDAwQC0EAIQIgA0EANgIcIAMgATYCFCADQe0QNgIQIANBCTYCDAwPC0EAIQIgA0EANgIcIAMgATYCFCADQdIRNgIQIANBCTYCDAwOC0EAIQIgA0EANgIcIAMgATYCFCADQbkXNgIQIANBDzYCDAwNC0EAIQIgA0EANgIcIAMgATYCFCADQbkXNgIQIANBDzYCDAwMC0EAIQIgA0EANgIcIAMgATYCFCADQZkTNgIQIANBCzYCDAwLC0EAIQIgA0EANgIcIAMgATYCFCADQZ0JNgIQIANBCzYCDAwKC0EAIQIgA0EANgIcIAMgATYCFCADQZcQNgIQIANBCjYCDAwJC0EAIQIgA0EANgIcIAMgATYCFCADQbEQNgIQIANBCjYCDAwIC0EAIQIgA0EANgIcIAMgATYCFCADQbsdNgIQIANBAjYCDAwHC0EAIQIgA0EANgIcIAMgATYCFCADQZYWNgIQIANBAjYCDAwGC0EAIQIgA0EANgIcIAMgATYCFCADQfkYNgIQIANBAjYCDAwFC0EAIQIgA0EANgIcIAMgATYCFCADQcQYNgIQIANBAjYCDAwECyADQQI2AhwgAyABNgIUIANBqR42AhAgA0EWNgIMQQAhAgwDC0HeACECIAEgBEYNAiAJQQhqIQcgAygCACEFAkACQCABIARHBEAgBUGWyABqIQggBCAFaiABayEGIAVBf3NBCmoiBSABaiEAA0AgAS0AACAILQAARwRAQQIhCAwDCyAFRQRAQQAhCCAAIQEMAwsgBUEBayEFIAhBAWohCCAEIAFBAWoiAUcNAAsgBiEFIAQhAQsgB0EBNgIAIAMgBTYCAAwBCyADQQA2AgAgByAINgIACyAHIAE2AgQgCSgCDCEAAkACQCAJKAIIQQFrDgIEAQALIANBADYCHCADQcIeNgIQIANBFzYCDCADIABBAWo2AhRBACECDAMLIANBADYCHCADIAA2AhQgA0HXHjYCECADQQk2AgxBACECDAILIAEgBEYEQEEoIQIMAgsgA0EJNgIIIAMgATYCBEEnIQIMAQsgASAERgRAQQEhAgwBCwNAAkACQAJAIAEtAABBCmsOBAABAQABCyABQQFqIQEMAQsgAUEBaiEBIAMtAC5BIHENAEEAIQIgA0EANgIcIAMgATYCFCADQaEhNgIQIANBBTYCDAwCC0EBIQIgASAERw0ACwsgCUEQaiQAIAJFBEAgAygCDCEADAELIAMgAjYCHEEAIQAgAygCBCIBRQ0AIAMgASAEIAMoAggRAQAiAUUNACADIAQ2AhQgAyABNgIMIAEhAAsgAAu+AgECfyAAQQA6AAAgAEHkAGoiAUEBa0EAOgAAIABBADoAAiAAQQA6AAEgAUEDa0EAOgAAIAFBAmtBADoAACAAQQA6AAMgAUEEa0EAOgAAQQAgAGtBA3EiASAAaiIAQQA2AgBB5AAgAWtBfHEiAiAAaiIBQQRrQQA2AgACQCACQQlJDQAgAEEANgIIIABBADYCBCABQQhrQQA2AgAgAUEMa0EANgIAIAJBGUkNACAAQQA2AhggAEEANgIUIABBADYCECAAQQA2AgwgAUEQa0EANgIAIAFBFGtBADYCACABQRhrQQA2AgAgAUEca0EANgIAIAIgAEEEcUEYciICayIBQSBJDQAgACACaiEAA0AgAEIANwMYIABCADcDECAAQgA3AwggAEIANwMAIABBIGohACABQSBrIgFBH0sNAAsLC1YBAX8CQCAAKAIMDQACQAJAAkACQCAALQAxDgMBAAMCCyAAKAI4IgFFDQAgASgCMCIBRQ0AIAAgAREAACIBDQMLQQAPCwALIABByhk2AhBBDiEBCyABCxoAIAAoAgxFBEAgAEHeHzYCECAAQRU2AgwLCxQAIAAoAgxBFUYEQCAAQQA2AgwLCxQAIAAoAgxBFkYEQCAAQQA2AgwLCwcAIAAoAgwLBwAgACgCEAsJACAAIAE2AhALBwAgACgCFAsrAAJAIABBJ08NAEL//////wkgAK2IQgGDUA0AIABBAnRB0DhqKAIADwsACxcAIABBL08EQAALIABBAnRB7DlqKAIAC78JAQF/QfQtIQECQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQCAAQeQAaw70A2NiAAFhYWFhYWECAwQFYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYQYHCAkKCwwNDg9hYWFhYRBhYWFhYWFhYWFhYRFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWESExQVFhcYGRobYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYRwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1NmE3ODk6YWFhYWFhYWE7YWFhPGFhYWE9Pj9hYWFhYWFhYUBhYUFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFCQ0RFRkdISUpLTE1OT1BRUlNhYWFhYWFhYVRVVldYWVpbYVxdYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhXmFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYV9gYQtB6iwPC0GYJg8LQe0xDwtBoDcPC0HJKQ8LQbQpDwtBli0PC0HrKw8LQaI1DwtB2zQPC0HgKQ8LQeMkDwtB1SQPC0HuJA8LQeYlDwtByjQPC0HQNw8LQao1DwtB9SwPC0H2Jg8LQYIiDwtB8jMPC0G+KA8LQec3DwtBzSEPC0HAIQ8LQbglDwtByyUPC0GWJA8LQY80DwtBzTUPC0HdKg8LQe4zDwtBnDQPC0GeMQ8LQfQ1DwtB5SIPC0GvJQ8LQZkxDwtBsjYPC0H5Ng8LQcQyDwtB3SwPC0GCMQ8LQcExDwtBjTcPC0HJJA8LQew2DwtB5yoPC0HIIw8LQeIhDwtByTcPC0GlIg8LQZQiDwtB2zYPC0HeNQ8LQYYmDwtBvCsPC0GLMg8LQaAjDwtB9jAPC0GALA8LQYkrDwtBpCYPC0HyIw8LQYEoDwtBqzIPC0HrJw8LQcI2DwtBoiQPC0HPKg8LQdwjDwtBhycPC0HkNA8LQbciDwtBrTEPC0HVIg8LQa80DwtB3iYPC0HWMg8LQfQ0DwtBgTgPC0H0Nw8LQZI2DwtBnScPC0GCKQ8LQY0jDwtB1zEPC0G9NQ8LQbQ3DwtB2DAPC0G2Jw8LQZo4DwtBpyoPC0HEJw8LQa4jDwtB9SIPCwALQcomIQELIAELFwAgACAALwEuQf7/A3EgAUEAR3I7AS4LGgAgACAALwEuQf3/A3EgAUEAR0EBdHI7AS4LGgAgACAALwEuQfv/A3EgAUEAR0ECdHI7AS4LGgAgACAALwEuQff/A3EgAUEAR0EDdHI7AS4LGgAgACAALwEuQe//A3EgAUEAR0EEdHI7AS4LGgAgACAALwEuQd//A3EgAUEAR0EFdHI7AS4LGgAgACAALwEuQb//A3EgAUEAR0EGdHI7AS4LGgAgACAALwEuQf/+A3EgAUEAR0EHdHI7AS4LGgAgACAALwEuQf/9A3EgAUEAR0EIdHI7AS4LGgAgACAALwEuQf/7A3EgAUEAR0EJdHI7AS4LPgECfwJAIAAoAjgiA0UNACADKAIEIgNFDQAgACABIAIgAWsgAxEBACIEQX9HDQAgAEHhEjYCEEEYIQQLIAQLPgECfwJAIAAoAjgiA0UNACADKAIIIgNFDQAgACABIAIgAWsgAxEBACIEQX9HDQAgAEH8ETYCEEEYIQQLIAQLPgECfwJAIAAoAjgiA0UNACADKAIMIgNFDQAgACABIAIgAWsgAxEBACIEQX9HDQAgAEHsCjYCEEEYIQQLIAQLPgECfwJAIAAoAjgiA0UNACADKAIQIgNFDQAgACABIAIgAWsgAxEBACIEQX9HDQAgAEH6HjYCEEEYIQQLIAQLPgECfwJAIAAoAjgiA0UNACADKAIUIgNFDQAgACABIAIgAWsgAxEBACIEQX9HDQAgAEHLEDYCEEEYIQQLIAQLPgECfwJAIAAoAjgiA0UNACADKAIYIgNFDQAgACABIAIgAWsgAxEBACIEQX9HDQAgAEG3HzYCEEEYIQQLIAQLPgECfwJAIAAoAjgiA0UNACADKAIcIgNFDQAgACABIAIgAWsgAxEBACIEQX9HDQAgAEG/FTYCEEEYIQQLIAQLPgECfwJAIAAoAjgiA0UNACADKAIsIgNFDQAgACABIAIgAWsgAxEBACIEQX9HDQAgAEH+CDYCEEEYIQQLIAQLPgECfwJAIAAoAjgiA0UNACADKAIgIgNFDQAgACABIAIgAWsgAxEBACIEQX9HDQAgAEGMHTYCEEEYIQQLIAQLPgECfwJAIAAoAjgiA0UNACADKAIkIgNFDQAgACABIAIgAWsgAxEBACIEQX9HDQAgAEHmFTYCEEEYIQQLIAQLOAAgAAJ/IAAvATJBFHFBFEYEQEEBIAAtAChBAUYNARogAC8BNEHlAEYMAQsgAC0AKUEFRgs6ADALWQECfwJAIAAtAChBAUYNACAALwE0IgFB5ABrQeQASQ0AIAFBzAFGDQAgAUGwAkYNACAALwEyIgBBwABxDQBBASECIABBiARxQYAERg0AIABBKHFFIQILIAILjAEBAn8CQAJAAkAgAC0AKkUNACAALQArRQ0AIAAvATIiAUECcUUNAQwCCyAALwEyIgFBAXFFDQELQQEhAiAALQAoQQFGDQAgAC8BNCIAQeQAa0HkAEkNACAAQcwBRg0AIABBsAJGDQAgAUHAAHENAEEAIQIgAUGIBHFBgARGDQAgAUEocUEARyECCyACC1cAIABBGGpCADcDACAAQgA3AwAgAEE4akIANwMAIABBMGpCADcDACAAQShqQgA3AwAgAEEgakIANwMAIABBEGpCADcDACAAQQhqQgA3AwAgAEH9ATYCHAsGACAAEDoLmi0BC38jAEEQayIKJABB3NUAKAIAIglFBEBBnNkAKAIAIgVFBEBBqNkAQn83AgBBoNkAQoCAhICAgMAANwIAQZzZACAKQQhqQXBxQdiq1aoFcyIFNgIAQbDZAEEANgIAQYDZAEEANgIAC0GE2QBBwNkENgIAQdTVAEHA2QQ2AgBB6NUAIAU2AgBB5NUAQX82AgBBiNkAQcCmAzYCAANAIAFBgNYAaiABQfTVAGoiAjYCACACIAFB7NUAaiIDNgIAIAFB+NUAaiADNgIAIAFBiNYAaiABQfzVAGoiAzYCACADIAI2AgAgAUGQ1gBqIAFBhNYAaiICNgIAIAIgAzYCACABQYzWAGogAjYCACABQSBqIgFBgAJHDQALQczZBEGBpgM2AgBB4NUAQazZACgCADYCAEHQ1QBBgKYDNgIAQdzVAEHI2QQ2AgBBzP8HQTg2AgBByNkEIQkLAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkAgAEHsAU0EQEHE1QAoAgAiBkEQIABBE2pBcHEgAEELSRsiBEEDdiIAdiIBQQNxBEACQCABQQFxIAByQQFzIgJBA3QiAEHs1QBqIgEgAEH01QBqKAIAIgAoAggiA0YEQEHE1QAgBkF+IAJ3cTYCAAwBCyABIAM2AgggAyABNgIMCyAAQQhqIQEgACACQQN0IgJBA3I2AgQgACACaiIAIAAoAgRBAXI2AgQMEQtBzNUAKAIAIgggBE8NASABBEACQEECIAB0IgJBACACa3IgASAAdHFoIgBBA3QiAkHs1QBqIgEgAkH01QBqKAIAIgIoAggiA0YEQEHE1QAgBkF+IAB3cSIGNgIADAELIAEgAzYCCCADIAE2AgwLIAIgBEEDcjYCBCAAQQN0IgAgBGshBSAAIAJqIAU2AgAgAiAEaiIEIAVBAXI2AgQgCARAIAhBeHFB7NUAaiEAQdjVACgCACEDAn9BASAIQQN2dCIBIAZxRQRAQcTVACABIAZyNgIAIAAMAQsgACgCCAsiASADNgIMIAAgAzYCCCADIAA2AgwgAyABNgIICyACQQhqIQFB2NUAIAQ2AgBBzNUAIAU2AgAMEQtByNUAKAIAIgtFDQEgC2hBAnRB9NcAaigCACIAKAIEQXhxIARrIQUgACECA0ACQCACKAIQIgFFBEAgAkEUaigCACIBRQ0BCyABKAIEQXhxIARrIgMgBUkhAiADIAUgAhshBSABIAAgAhshACABIQIMAQsLIAAoAhghCSAAKAIMIgMgAEcEQEHU1QAoAgAaIAMgACgCCCIBNgIIIAEgAzYCDAwQCyAAQRRqIgIoAgAiAUUEQCAAKAIQIgFFDQMgAEEQaiECCwNAIAIhByABIgNBFGoiAigCACIBDQAgA0EQaiECIAMoAhAiAQ0ACyAHQQA2AgAMDwtBfyEEIABBv39LDQAgAEETaiIBQXBxIQRByNUAKAIAIghFDQBBACAEayEFAkACQAJAAn9BACAEQYACSQ0AGkEfIARB////B0sNABogBEEmIAFBCHZnIgBrdkEBcSAAQQF0a0E+agsiBkECdEH01wBqKAIAIgJFBEBBACEBQQAhAwwBC0EAIQEgBEEZIAZBAXZrQQAgBkEfRxt0IQBBACEDA0ACQCACKAIEQXhxIARrIgcgBU8NACACIQMgByIFDQBBACEFIAIhAQwDCyABIAJBFGooAgAiByAHIAIgAEEddkEEcWpBEGooAgAiAkYbIAEgBxshASAAQQF0IQAgAg0ACwsgASADckUEQEEAIQNBAiAGdCIAQQAgAGtyIAhxIgBFDQMgAGhBAnRB9NcAaigCACEBCyABRQ0BCwNAIAEoAgRBeHEgBGsiAiAFSSEAIAIgBSAAGyEFIAEgAyAAGyEDIAEoAhAiAAR/IAAFIAFBFGooAgALIgENAAsLIANFDQAgBUHM1QAoAgAgBGtPDQAgAygCGCEHIAMgAygCDCIARwRAQdTVACgCABogACADKAIIIgE2AgggASAANgIMDA4LIANBFGoiAigCACIBRQRAIAMoAhAiAUUNAyADQRBqIQILA0AgAiEGIAEiAEEUaiICKAIAIgENACAAQRBqIQIgACgCECIBDQALIAZBADYCAAwNC0HM1QAoAgAiAyAETwRAQdjVACgCACEBAkAgAyAEayICQRBPBEAgASAEaiIAIAJBAXI2AgQgASADaiACNgIAIAEgBEEDcjYCBAwBCyABIANBA3I2AgQgASADaiIAIAAoAgRBAXI2AgRBACEAQQAhAgtBzNUAIAI2AgBB2NUAIAA2AgAgAUEIaiEBDA8LQdDVACgCACIDIARLBEAgBCAJaiIAIAMgBGsiAUEBcjYCBEHc1QAgADYCAEHQ1QAgATYCACAJIARBA3I2AgQgCUEIaiEBDA8LQQAhASAEAn9BnNkAKAIABEBBpNkAKAIADAELQajZAEJ/NwIAQaDZAEKAgISAgIDAADcCAEGc2QAgCkEMakFwcUHYqtWqBXM2AgBBsNkAQQA2AgBBgNkAQQA2AgBBgIAECyIAIARBxwBqIgVqIgZBACAAayIHcSICTwRAQbTZAEEwNgIADA8LAkBB/NgAKAIAIgFFDQBB9NgAKAIAIgggAmohACAAIAFNIAAgCEtxDQBBACEBQbTZAEEwNgIADA8LQYDZAC0AAEEEcQ0EAkACQCAJBEBBhNkAIQEDQCABKAIAIgAgCU0EQCAAIAEoAgRqIAlLDQMLIAEoAggiAQ0ACwtBABA7IgBBf0YNBSACIQZBoNkAKAIAIgFBAWsiAyAAcQRAIAIgAGsgACADakEAIAFrcWohBgsgBCAGTw0FIAZB/v///wdLDQVB/NgAKAIAIgMEQEH02AAoAgAiByAGaiEBIAEgB00NBiABIANLDQYLIAYQOyIBIABHDQEMBwsgBiADayAHcSIGQf7///8HSw0EIAYQOyEAIAAgASgCACABKAIEakYNAyAAIQELAkAgBiAEQcgAak8NACABQX9GDQBBpNkAKAIAIgAgBSAGa2pBACAAa3EiAEH+////B0sEQCABIQAMBwsgABA7QX9HBEAgACAGaiEGIAEhAAwHC0EAIAZrEDsaDAQLIAEiAEF/Rw0FDAMLQQAhAwwMC0EAIQAMCgsgAEF/Rw0CC0GA2QBBgNkAKAIAQQRyNgIACyACQf7///8HSw0BIAIQOyEAQQAQOyEBIABBf0YNASABQX9GDQEgACABTw0BIAEgAGsiBiAEQThqTQ0BC0H02ABB9NgAKAIAIAZqIgE2AgBB+NgAKAIAIAFJBEBB+NgAIAE2AgALAkACQAJAQdzVACgCACICBEBBhNkAIQEDQCAAIAEoAgAiAyABKAIEIgVqRg0CIAEoAggiAQ0ACwwCC0HU1QAoAgAiAUEARyAAIAFPcUUEQEHU1QAgADYCAAtBACEBQYjZACAGNgIAQYTZACAANgIAQeTVAEF/NgIAQejVAEGc2QAoAgA2AgBBkNkAQQA2AgADQCABQYDWAGogAUH01QBqIgI2AgAgAiABQezVAGoiAzYCACABQfjVAGogAzYCACABQYjWAGogAUH81QBqIgM2AgAgAyACNgIAIAFBkNYAaiABQYTWAGoiAjYCACACIAM2AgAgAUGM1gBqIAI2AgAgAUEgaiIBQYACRw0AC0F4IABrQQ9xIgEgAGoiAiAGQThrIgMgAWsiAUEBcjYCBEHg1QBBrNkAKAIANgIAQdDVACABNgIAQdzVACACNgIAIAAgA2pBODYCBAwCCyAAIAJNDQAgAiADSQ0AIAEoAgxBCHENAEF4IAJrQQ9xIgAgAmoiA0HQ1QAoAgAgBmoiByAAayIAQQFyNgIEIAEgBSAGajYCBEHg1QBBrNkAKAIANgIAQdDVACAANgIAQdzVACADNgIAIAIgB2pBODYCBAwBCyAAQdTVACgCAEkEQEHU1QAgADYCAAsgACAGaiEDQYTZACEBAkACQAJAA0AgAyABKAIARwRAIAEoAggiAQ0BDAILCyABLQAMQQhxRQ0BC0GE2QAhAQNAIAEoAgAiAyACTQRAIAMgASgCBGoiBSACSw0DCyABKAIIIQEMAAsACyABIAA2AgAgASABKAIEIAZqNgIEIABBeCAAa0EPcWoiCSAEQQNyNgIEIANBeCADa0EPcWoiBiAEIAlqIgRrIQEgAiAGRgRAQdzVACAENgIAQdDVAEHQ1QAoAgAgAWoiADYCACAEIABBAXI2AgQMCAtB2NUAKAIAIAZGBEBB2NUAIAQ2AgBBzNUAQczVACgCACABaiIANgIAIAQgAEEBcjYCBCAAIARqIAA2AgAMCAsgBigCBCIFQQNxQQFHDQYgBUF4cSEIIAVB/wFNBEAgBUEDdiEDIAYoAggiACAGKAIMIgJGBEBBxNUAQcTVACgCAEF+IAN3cTYCAAwHCyACIAA2AgggACACNgIMDAYLIAYoAhghByAGIAYoAgwiAEcEQCAAIAYoAggiAjYCCCACIAA2AgwMBQsgBkEUaiICKAIAIgVFBEAgBigCECIFRQ0EIAZBEGohAgsDQCACIQMgBSIAQRRqIgIoAgAiBQ0AIABBEGohAiAAKAIQIgUNAAsgA0EANgIADAQLQXggAGtBD3EiASAAaiIHIAZBOGsiAyABayIBQQFyNgIEIAAgA2pBODYCBCACIAVBNyAFa0EPcWpBP2siAyADIAJBEGpJGyIDQSM2AgRB4NUAQazZACgCADYCAEHQ1QAgATYCAEHc1QAgBzYCACADQRBqQYzZACkCADcCACADQYTZACkCADcCCEGM2QAgA0EIajYCAEGI2QAgBjYCAEGE2QAgADYCAEGQ2QBBADYCACADQSRqIQEDQCABQQc2AgAgBSABQQRqIgFLDQALIAIgA0YNACADIAMoAgRBfnE2AgQgAyADIAJrIgU2AgAgAiAFQQFyNgIEIAVB/wFNBEAgBUF4cUHs1QBqIQACf0HE1QAoAgAiAUEBIAVBA3Z0IgNxRQRAQcTVACABIANyNgIAIAAMAQsgACgCCAsiASACNgIMIAAgAjYCCCACIAA2AgwgAiABNgIIDAELQR8hASAFQf///wdNBEAgBUEmIAVBCHZnIgBrdkEBcSAAQQF0a0E+aiEBCyACIAE2AhwgAkIANwIQIAFBAnRB9NcAaiEAQcjVACgCACIDQQEgAXQiBnFFBEAgACACNgIAQcjVACADIAZyNgIAIAIgADYCGCACIAI2AgggAiACNgIMDAELIAVBGSABQQF2a0EAIAFBH0cbdCEBIAAoAgAhAwJAA0AgAyIAKAIEQXhxIAVGDQEgAUEddiEDIAFBAXQhASAAIANBBHFqQRBqIgYoAgAiAw0ACyAGIAI2AgAgAiAANgIYIAIgAjYCDCACIAI2AggMAQsgACgCCCIBIAI2AgwgACACNgIIIAJBADYCGCACIAA2AgwgAiABNgIIC0HQ1QAoAgAiASAETQ0AQdzVACgCACIAIARqIgIgASAEayIBQQFyNgIEQdDVACABNgIAQdzVACACNgIAIAAgBEEDcjYCBCAAQQhqIQEMCAtBACEBQbTZAEEwNgIADAcLQQAhAAsgB0UNAAJAIAYoAhwiAkECdEH01wBqIgMoAgAgBkYEQCADIAA2AgAgAA0BQcjVAEHI1QAoAgBBfiACd3E2AgAMAgsgB0EQQRQgBygCECAGRhtqIAA2AgAgAEUNAQsgACAHNgIYIAYoAhAiAgRAIAAgAjYCECACIAA2AhgLIAZBFGooAgAiAkUNACAAQRRqIAI2AgAgAiAANgIYCyABIAhqIQEgBiAIaiIGKAIEIQULIAYgBUF+cTYCBCABIARqIAE2AgAgBCABQQFyNgIEIAFB/wFNBEAgAUF4cUHs1QBqIQACf0HE1QAoAgAiAkEBIAFBA3Z0IgFxRQRAQcTVACABIAJyNgIAIAAMAQsgACgCCAsiASAENgIMIAAgBDYCCCAEIAA2AgwgBCABNgIIDAELQR8hBSABQf///wdNBEAgAUEmIAFBCHZnIgBrdkEBcSAAQQF0a0E+aiEFCyAEIAU2AhwgBEIANwIQIAVBAnRB9NcAaiEAQcjVACgCACICQQEgBXQiA3FFBEAgACAENgIAQcjVACACIANyNgIAIAQgADYCGCAEIAQ2AgggBCAENgIMDAELIAFBGSAFQQF2a0EAIAVBH0cbdCEFIAAoAgAhAAJAA0AgACICKAIEQXhxIAFGDQEgBUEddiEAIAVBAXQhBSACIABBBHFqQRBqIgMoAgAiAA0ACyADIAQ2AgAgBCACNgIYIAQgBDYCDCAEIAQ2AggMAQsgAigCCCIAIAQ2AgwgAiAENgIIIARBADYCGCAEIAI2AgwgBCAANgIICyAJQQhqIQEMAgsCQCAHRQ0AAkAgAygCHCIBQQJ0QfTXAGoiAigCACADRgRAIAIgADYCACAADQFByNUAIAhBfiABd3EiCDYCAAwCCyAHQRBBFCAHKAIQIANGG2ogADYCACAARQ0BCyAAIAc2AhggAygCECIBBEAgACABNgIQIAEgADYCGAsgA0EUaigCACIBRQ0AIABBFGogATYCACABIAA2AhgLAkAgBUEPTQRAIAMgBCAFaiIAQQNyNgIEIAAgA2oiACAAKAIEQQFyNgIEDAELIAMgBGoiAiAFQQFyNgIEIAMgBEEDcjYCBCACIAVqIAU2AgAgBUH/AU0EQCAFQXhxQezVAGohAAJ/QcTVACgCACIBQQEgBUEDdnQiBXFFBEBBxNUAIAEgBXI2AgAgAAwBCyAAKAIICyIBIAI2AgwgACACNgIIIAIgADYCDCACIAE2AggMAQtBHyEBIAVB////B00EQCAFQSYgBUEIdmciAGt2QQFxIABBAXRrQT5qIQELIAIgATYCHCACQgA3AhAgAUECdEH01wBqIQBBASABdCIEIAhxRQRAIAAgAjYCAEHI1QAgBCAIcjYCACACIAA2AhggAiACNgIIIAIgAjYCDAwBCyAFQRkgAUEBdmtBACABQR9HG3QhASAAKAIAIQQCQANAIAQiACgCBEF4cSAFRg0BIAFBHXYhBCABQQF0IQEgACAEQQRxakEQaiIGKAIAIgQNAAsgBiACNgIAIAIgADYCGCACIAI2AgwgAiACNgIIDAELIAAoAggiASACNgIMIAAgAjYCCCACQQA2AhggAiAANgIMIAIgATYCCAsgA0EIaiEBDAELAkAgCUUNAAJAIAAoAhwiAUECdEH01wBqIgIoAgAgAEYEQCACIAM2AgAgAw0BQcjVACALQX4gAXdxNgIADAILIAlBEEEUIAkoAhAgAEYbaiADNgIAIANFDQELIAMgCTYCGCAAKAIQIgEEQCADIAE2AhAgASADNgIYCyAAQRRqKAIAIgFFDQAgA0EUaiABNgIAIAEgAzYCGAsCQCAFQQ9NBEAgACAEIAVqIgFBA3I2AgQgACABaiIBIAEoAgRBAXI2AgQMAQsgACAEaiIHIAVBAXI2AgQgACAEQQNyNgIEIAUgB2ogBTYCACAIBEAgCEF4cUHs1QBqIQFB2NUAKAIAIQMCf0EBIAhBA3Z0IgIgBnFFBEBBxNUAIAIgBnI2AgAgAQwBCyABKAIICyICIAM2AgwgASADNgIIIAMgATYCDCADIAI2AggLQdjVACAHNgIAQczVACAFNgIACyAAQQhqIQELIApBEGokACABC0MAIABFBEA/AEEQdA8LAkAgAEH//wNxDQAgAEEASA0AIABBEHZAACIAQX9GBEBBtNkAQTA2AgBBfw8LIABBEHQPCwALC5lCIgBBgAgLDQEAAAAAAAAAAgAAAAMAQZgICwUEAAAABQBBqAgLCQYAAAAHAAAACABB5AgLwjJJbnZhbGlkIGNoYXIgaW4gdXJsIHF1ZXJ5AFNwYW4gY2FsbGJhY2sgZXJyb3IgaW4gb25fYm9keQBDb250ZW50LUxlbmd0aCBvdmVyZmxvdwBDaHVuayBzaXplIG92ZXJmbG93AEludmFsaWQgbWV0aG9kIGZvciBIVFRQL3gueCByZXF1ZXN0AEludmFsaWQgbWV0aG9kIGZvciBSVFNQL3gueCByZXF1ZXN0AEV4cGVjdGVkIFNPVVJDRSBtZXRob2QgZm9yIElDRS94LnggcmVxdWVzdABJbnZhbGlkIGNoYXIgaW4gdXJsIGZyYWdtZW50IHN0YXJ0AEV4cGVjdGVkIGRvdABTcGFuIGNhbGxiYWNrIGVycm9yIGluIG9uX3N0YXR1cwBJbnZhbGlkIHJlc3BvbnNlIHN0YXR1cwBFeHBlY3RlZCBMRiBhZnRlciBoZWFkZXJzAEludmFsaWQgY2hhcmFjdGVyIGluIGNodW5rIGV4dGVuc2lvbnMAVXNlciBjYWxsYmFjayBlcnJvcgBgb25fcmVzZXRgIGNhbGxiYWNrIGVycm9yAGBvbl9jaHVua19oZWFkZXJgIGNhbGxiYWNrIGVycm9yAGBvbl9tZXNzYWdlX2JlZ2luYCBjYWxsYmFjayBlcnJvcgBgb25fY2h1bmtfZXh0ZW5zaW9uX3ZhbHVlYCBjYWxsYmFjayBlcnJvcgBgb25fc3RhdHVzX2NvbXBsZXRlYCBjYWxsYmFjayBlcnJvcgBgb25fdmVyc2lvbl9jb21wbGV0ZWAgY2FsbGJhY2sgZXJyb3IAYG9uX3VybF9jb21wbGV0ZWAgY2FsbGJhY2sgZXJyb3IAYG9uX3Byb3RvY29sX2NvbXBsZXRlYCBjYWxsYmFjayBlcnJvcgBgb25fY2h1bmtfY29tcGxldGVgIGNhbGxiYWNrIGVycm9yAGBvbl9oZWFkZXJfdmFsdWVfY29tcGxldGVgIGNhbGxiYWNrIGVycm9yAGBvbl9tZXNzYWdlX2NvbXBsZXRlYCBjYWxsYmFjayBlcnJvcgBgb25fbWV0aG9kX2NvbXBsZXRlYCBjYWxsYmFjayBlcnJvcgBgb25faGVhZGVyX2ZpZWxkX2NvbXBsZXRlYCBjYWxsYmFjayBlcnJvcgBgb25fY2h1bmtfZXh0ZW5zaW9uX25hbWVgIGNhbGxiYWNrIGVycm9yAFVuZXhwZWN0ZWQgY2hhciBpbiB1cmwgc2VydmVyAEludmFsaWQgaGVhZGVyIHZhbHVlIGNoYXIASW52YWxpZCBoZWFkZXIgZmllbGQgY2hhcgBTcGFuIGNhbGxiYWNrIGVycm9yIGluIG9uX3ZlcnNpb24ASW52YWxpZCBtaW5vciB2ZXJzaW9uAEludmFsaWQgbWFqb3IgdmVyc2lvbgBFeHBlY3RlZCBzcGFjZSBhZnRlciB2ZXJzaW9uAEV4cGVjdGVkIENSTEYgYWZ0ZXIgdmVyc2lvbgBJbnZhbGlkIEhUVFAgdmVyc2lvbgBJbnZhbGlkIGhlYWRlciB0b2tlbgBTcGFuIGNhbGxiYWNrIGVycm9yIGluIG9uX3VybABJbnZhbGlkIGNoYXJhY3RlcnMgaW4gdXJsAFVuZXhwZWN0ZWQgc3RhcnQgY2hhciBpbiB1cmwARG91YmxlIEAgaW4gdXJsAFNwYW4gY2FsbGJhY2sgZXJyb3IgaW4gb25fcHJvdG9jb2wARW1wdHkgQ29udGVudC1MZW5ndGgASW52YWxpZCBjaGFyYWN0ZXIgaW4gQ29udGVudC1MZW5ndGgAVHJhbnNmZXItRW5jb2RpbmcgY2FuJ3QgYmUgcHJlc2VudCB3aXRoIENvbnRlbnQtTGVuZ3RoAER1cGxpY2F0ZSBDb250ZW50LUxlbmd0aABJbnZhbGlkIGNoYXIgaW4gdXJsIHBhdGgAQ29udGVudC1MZW5ndGggY2FuJ3QgYmUgcHJlc2VudCB3aXRoIFRyYW5zZmVyLUVuY29kaW5nAE1pc3NpbmcgZXhwZWN0ZWQgQ1IgYWZ0ZXIgY2h1bmsgc2l6ZQBFeHBlY3RlZCBMRiBhZnRlciBjaHVuayBzaXplAEludmFsaWQgY2hhcmFjdGVyIGluIGNodW5rIHNpemUAU3BhbiBjYWxsYmFjayBlcnJvciBpbiBvbl9oZWFkZXJfdmFsdWUAU3BhbiBjYWxsYmFjayBlcnJvciBpbiBvbl9jaHVua19leHRlbnNpb25fdmFsdWUASW52YWxpZCBjaGFyYWN0ZXIgaW4gY2h1bmsgZXh0ZW5zaW9ucyB2YWx1ZQBVbmV4cGVjdGVkIHdoaXRlc3BhY2UgYWZ0ZXIgaGVhZGVyIHZhbHVlAE1pc3NpbmcgZXhwZWN0ZWQgQ1IgYWZ0ZXIgaGVhZGVyIHZhbHVlAE1pc3NpbmcgZXhwZWN0ZWQgTEYgYWZ0ZXIgaGVhZGVyIHZhbHVlAEludmFsaWQgYFRyYW5zZmVyLUVuY29kaW5nYCBoZWFkZXIgdmFsdWUATWlzc2luZyBleHBlY3RlZCBDUiBhZnRlciBjaHVuayBleHRlbnNpb24gdmFsdWUASW52YWxpZCBjaGFyYWN0ZXIgaW4gY2h1bmsgZXh0ZW5zaW9ucyBxdW90ZSB2YWx1ZQBJbnZhbGlkIHF1b3RlZC1wYWlyIGluIGNodW5rIGV4dGVuc2lvbnMgcXVvdGVkIHZhbHVlAEludmFsaWQgY2hhcmFjdGVyIGluIGNodW5rIGV4dGVuc2lvbnMgcXVvdGVkIHZhbHVlAFBhdXNlZCBieSBvbl9oZWFkZXJzX2NvbXBsZXRlAEludmFsaWQgRU9GIHN0YXRlAG9uX3Jlc2V0IHBhdXNlAG9uX2NodW5rX2hlYWRlciBwYXVzZQBvbl9tZXNzYWdlX2JlZ2luIHBhdXNlAG9uX2NodW5rX2V4dGVuc2lvbl92YWx1ZSBwYXVzZQBvbl9zdGF0dXNfY29tcGxldGUgcGF1c2UAb25fdmVyc2lvbl9jb21wbGV0ZSBwYXVzZQBvbl91cmxfY29tcGxldGUgcGF1c2UAb25fcHJvdG9jb2xfY29tcGxldGUgcGF1c2UAb25fY2h1bmtfY29tcGxldGUgcGF1c2UAb25faGVhZGVyX3ZhbHVlX2NvbXBsZXRlIHBhdXNlAG9uX21lc3NhZ2VfY29tcGxldGUgcGF1c2UAb25fbWV0aG9kX2NvbXBsZXRlIHBhdXNlAG9uX2hlYWRlcl9maWVsZF9jb21wbGV0ZSBwYXVzZQBvbl9jaHVua19leHRlbnNpb25fbmFtZSBwYXVzZQBVbmV4cGVjdGVkIHNwYWNlIGFmdGVyIHN0YXJ0IGxpbmUATWlzc2luZyBleHBlY3RlZCBDUiBhZnRlciByZXNwb25zZSBsaW5lAFNwYW4gY2FsbGJhY2sgZXJyb3IgaW4gb25fY2h1bmtfZXh0ZW5zaW9uX25hbWUASW52YWxpZCBjaGFyYWN0ZXIgaW4gY2h1bmsgZXh0ZW5zaW9ucyBuYW1lAE1pc3NpbmcgZXhwZWN0ZWQgQ1IgYWZ0ZXIgY2h1bmsgZXh0ZW5zaW9uIG5hbWUASW52YWxpZCBzdGF0dXMgY29kZQBQYXVzZSBvbiBDT05ORUNUL1VwZ3JhZGUAUGF1c2Ugb24gUFJJL1VwZ3JhZGUARXhwZWN0ZWQgSFRUUC8yIENvbm5lY3Rpb24gUHJlZmFjZQBTcGFuIGNhbGxiYWNrIGVycm9yIGluIG9uX21ldGhvZABFeHBlY3RlZCBzcGFjZSBhZnRlciBtZXRob2QAU3BhbiBjYWxsYmFjayBlcnJvciBpbiBvbl9oZWFkZXJfZmllbGQAUGF1c2VkAEludmFsaWQgd29yZCBlbmNvdW50ZXJlZABJbnZhbGlkIG1ldGhvZCBlbmNvdW50ZXJlZABNaXNzaW5nIGV4cGVjdGVkIENSIGFmdGVyIGNodW5rIGRhdGEARXhwZWN0ZWQgTEYgYWZ0ZXIgY2h1bmsgZGF0YQBVbmV4cGVjdGVkIGNoYXIgaW4gdXJsIHNjaGVtYQBSZXF1ZXN0IGhhcyBpbnZhbGlkIGBUcmFuc2Zlci1FbmNvZGluZ2AARGF0YSBhZnRlciBgQ29ubmVjdGlvbjogY2xvc2VgAFNXSVRDSF9QUk9YWQBVU0VfUFJPWFkATUtBQ1RJVklUWQBVTlBST0NFU1NBQkxFX0VOVElUWQBRVUVSWQBDT1BZAE1PVkVEX1BFUk1BTkVOVExZAFRPT19FQVJMWQBOT1RJRlkARkFJTEVEX0RFUEVOREVOQ1kAQkFEX0dBVEVXQVkAUExBWQBQVVQAQ0hFQ0tPVVQAR0FURVdBWV9USU1FT1VUAFJFUVVFU1RfVElNRU9VVABORVRXT1JLX0NPTk5FQ1RfVElNRU9VVABDT05ORUNUSU9OX1RJTUVPVVQATE9HSU5fVElNRU9VVABORVRXT1JLX1JFQURfVElNRU9VVABQT1NUAE1JU0RJUkVDVEVEX1JFUVVFU1QAQ0xJRU5UX0NMT1NFRF9SRVFVRVNUAENMSUVOVF9DTE9TRURfTE9BRF9CQUxBTkNFRF9SRVFVRVNUAEJBRF9SRVFVRVNUAEhUVFBfUkVRVUVTVF9TRU5UX1RPX0hUVFBTX1BPUlQAUkVQT1JUAElNX0FfVEVBUE9UAFJFU0VUX0NPTlRFTlQATk9fQ09OVEVOVABQQVJUSUFMX0NPTlRFTlQASFBFX0lOVkFMSURfQ09OU1RBTlQASFBFX0NCX1JFU0VUAEdFVABIUEVfU1RSSUNUAENPTkZMSUNUAFRFTVBPUkFSWV9SRURJUkVDVABQRVJNQU5FTlRfUkVESVJFQ1QAQ09OTkVDVABNVUxUSV9TVEFUVVMASFBFX0lOVkFMSURfU1RBVFVTAFRPT19NQU5ZX1JFUVVFU1RTAEVBUkxZX0hJTlRTAFVOQVZBSUxBQkxFX0ZPUl9MRUdBTF9SRUFTT05TAE9QVElPTlMAU1dJVENISU5HX1BST1RPQ09MUwBWQVJJQU5UX0FMU09fTkVHT1RJQVRFUwBNVUxUSVBMRV9DSE9JQ0VTAElOVEVSTkFMX1NFUlZFUl9FUlJPUgBXRUJfU0VSVkVSX1VOS05PV05fRVJST1IAUkFJTEdVTl9FUlJPUgBJREVOVElUWV9QUk9WSURFUl9BVVRIRU5USUNBVElPTl9FUlJPUgBTU0xfQ0VSVElGSUNBVEVfRVJST1IASU5WQUxJRF9YX0ZPUldBUkRFRF9GT1IAU0VUX1BBUkFNRVRFUgBHRVRfUEFSQU1FVEVSAEhQRV9VU0VSAFNFRV9PVEhFUgBIUEVfQ0JfQ0hVTktfSEVBREVSAEV4cGVjdGVkIExGIGFmdGVyIENSAE1LQ0FMRU5EQVIAU0VUVVAAV0VCX1NFUlZFUl9JU19ET1dOAFRFQVJET1dOAEhQRV9DTE9TRURfQ09OTkVDVElPTgBIRVVSSVNUSUNfRVhQSVJBVElPTgBESVNDT05ORUNURURfT1BFUkFUSU9OAE5PTl9BVVRIT1JJVEFUSVZFX0lORk9STUFUSU9OAEhQRV9JTlZBTElEX1ZFUlNJT04ASFBFX0NCX01FU1NBR0VfQkVHSU4AU0lURV9JU19GUk9aRU4ASFBFX0lOVkFMSURfSEVBREVSX1RPS0VOAElOVkFMSURfVE9LRU4ARk9SQklEREVOAEVOSEFOQ0VfWU9VUl9DQUxNAEhQRV9JTlZBTElEX1VSTABCTE9DS0VEX0JZX1BBUkVOVEFMX0NPTlRST0wATUtDT0wAQUNMAEhQRV9JTlRFUk5BTABSRVFVRVNUX0hFQURFUl9GSUVMRFNfVE9PX0xBUkdFX1VOT0ZGSUNJQUwASFBFX09LAFVOTElOSwBVTkxPQ0sAUFJJAFJFVFJZX1dJVEgASFBFX0lOVkFMSURfQ09OVEVOVF9MRU5HVEgASFBFX1VORVhQRUNURURfQ09OVEVOVF9MRU5HVEgARkxVU0gAUFJPUFBBVENIAE0tU0VBUkNIAFVSSV9UT09fTE9ORwBQUk9DRVNTSU5HAE1JU0NFTExBTkVPVVNfUEVSU0lTVEVOVF9XQVJOSU5HAE1JU0NFTExBTkVPVVNfV0FSTklORwBIUEVfSU5WQUxJRF9UUkFOU0ZFUl9FTkNPRElORwBFeHBlY3RlZCBDUkxGAEhQRV9JTlZBTElEX0NIVU5LX1NJWkUATU9WRQBDT05USU5VRQBIUEVfQ0JfU1RBVFVTX0NPTVBMRVRFAEhQRV9DQl9IRUFERVJTX0NPTVBMRVRFAEhQRV9DQl9WRVJTSU9OX0NPTVBMRVRFAEhQRV9DQl9VUkxfQ09NUExFVEUASFBFX0NCX1BST1RPQ09MX0NPTVBMRVRFAEhQRV9DQl9DSFVOS19DT01QTEVURQBIUEVfQ0JfSEVBREVSX1ZBTFVFX0NPTVBMRVRFAEhQRV9DQl9DSFVOS19FWFRFTlNJT05fVkFMVUVfQ09NUExFVEUASFBFX0NCX0NIVU5LX0VYVEVOU0lPTl9OQU1FX0NPTVBMRVRFAEhQRV9DQl9NRVNTQUdFX0NPTVBMRVRFAEhQRV9DQl9NRVRIT0RfQ09NUExFVEUASFBFX0NCX0hFQURFUl9GSUVMRF9DT01QTEVURQBERUxFVEUASFBFX0lOVkFMSURfRU9GX1NUQVRFAElOVkFMSURfU1NMX0NFUlRJRklDQVRFAFBBVVNFAE5PX1JFU1BPTlNFAFVOU1VQUE9SVEVEX01FRElBX1RZUEUAR09ORQBOT1RfQUNDRVBUQUJMRQBTRVJWSUNFX1VOQVZBSUxBQkxFAFJBTkdFX05PVF9TQVRJU0ZJQUJMRQBPUklHSU5fSVNfVU5SRUFDSEFCTEUAUkVTUE9OU0VfSVNfU1RBTEUAUFVSR0UATUVSR0UAUkVRVUVTVF9IRUFERVJfRklFTERTX1RPT19MQVJHRQBSRVFVRVNUX0hFQURFUl9UT09fTEFSR0UAUEFZTE9BRF9UT09fTEFSR0UASU5TVUZGSUNJRU5UX1NUT1JBR0UASFBFX1BBVVNFRF9VUEdSQURFAEhQRV9QQVVTRURfSDJfVVBHUkFERQBTT1VSQ0UAQU5OT1VOQ0UAVFJBQ0UASFBFX1VORVhQRUNURURfU1BBQ0UAREVTQ1JJQkUAVU5TVUJTQ1JJQkUAUkVDT1JEAEhQRV9JTlZBTElEX01FVEhPRABOT1RfRk9VTkQAUFJPUEZJTkQAVU5CSU5EAFJFQklORABVTkFVVEhPUklaRUQATUVUSE9EX05PVF9BTExPV0VEAEhUVFBfVkVSU0lPTl9OT1RfU1VQUE9SVEVEAEFMUkVBRFlfUkVQT1JURUQAQUNDRVBURUQATk9UX0lNUExFTUVOVEVEAExPT1BfREVURUNURUQASFBFX0NSX0VYUEVDVEVEAEhQRV9MRl9FWFBFQ1RFRABDUkVBVEVEAElNX1VTRUQASFBFX1BBVVNFRABUSU1FT1VUX09DQ1VSRUQAUEFZTUVOVF9SRVFVSVJFRABQUkVDT05ESVRJT05fUkVRVUlSRUQAUFJPWFlfQVVUSEVOVElDQVRJT05fUkVRVUlSRUQATkVUV09SS19BVVRIRU5USUNBVElPTl9SRVFVSVJFRABMRU5HVEhfUkVRVUlSRUQAU1NMX0NFUlRJRklDQVRFX1JFUVVJUkVEAFVQR1JBREVfUkVRVUlSRUQAUEFHRV9FWFBJUkVEAFBSRUNPTkRJVElPTl9GQUlMRUQARVhQRUNUQVRJT05fRkFJTEVEAFJFVkFMSURBVElPTl9GQUlMRUQAU1NMX0hBTkRTSEFLRV9GQUlMRUQATE9DS0VEAFRSQU5TRk9STUFUSU9OX0FQUExJRUQATk9UX01PRElGSUVEAE5PVF9FWFRFTkRFRABCQU5EV0lEVEhfTElNSVRfRVhDRUVERUQAU0lURV9JU19PVkVSTE9BREVEAEhFQUQARXhwZWN0ZWQgSFRUUC8sIFJUU1AvIG9yIElDRS8A5xUAAK8VAACkEgAAkhoAACYWAACeFAAA2xkAAHkVAAB+EgAA/hQAADYVAAALFgAA2BYAAPMSAABCGAAArBYAABIVAAAUFwAA7xcAAEgUAABxFwAAshoAAGsZAAB+GQAANRQAAIIaAABEFwAA/RYAAB4YAACHFwAAqhkAAJMSAAAHGAAALBcAAMoXAACkFwAA5xUAAOcVAABYFwAAOxgAAKASAAAtHAAAwxEAAEgRAADeEgAAQhMAAKQZAAD9EAAA9xUAAKUVAADvFgAA+BkAAEoWAABWFgAA9RUAAAoaAAAIGgAAARoAAKsVAABCEgAA1xAAAEwRAAAFGQAAVBYAAB4RAADKGQAAyBkAAE4WAAD/GAAAcRQAAPAVAADuFQAAlBkAAPwVAAC/GQAAmxkAAHwUAABDEQAAcBgAAJUUAAAnFAAAGRQAANUSAADUGQAARBYAAPcQAEG5OwsBAQBB0DsL4AEBAQIBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEDAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQBBuj0LBAEAAAIAQdE9C14DBAMDAwMDAAADAwADAwADAwMDAwMDAwMDAAUAAAAAAAMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAAAAAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMAAwADAEG6PwsEAQAAAgBB0T8LXgMAAwMDAwMAAAMDAAMDAAMDAwMDAwMDAwMABAAFAAAAAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMAAAADAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwADAAMAQbDBAAsNbG9zZWVlcC1hbGl2ZQBBycEACwEBAEHgwQAL4AEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQABAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQBBycMACwEBAEHgwwAL5wEBAQEBAQEBAQEBAQECAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQABAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAWNodW5rZWQAQfHFAAteAQABAQEBAQAAAQEAAQEAAQEBAQEBAQEBAQAAAAAAAAABAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQAAAAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAAEAAQBB0McACyFlY3Rpb25lbnQtbGVuZ3Rob25yb3h5LWNvbm5lY3Rpb24AQYDIAAsgcmFuc2Zlci1lbmNvZGluZ3BncmFkZQ0KDQpTTQ0KDQoAQanIAAsFAQIAAQMAQcDIAAtfBAUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUAQanKAAsFAQIAAQMAQcDKAAtfBAUFBgUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUAQanMAAsEAQAAAQBBwcwAC14CAgACAgICAgICAgICAgICAgICAgICAgICAgICAgIAAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAEGpzgALBQECAAEDAEHAzgALXwQFAAAFBQUFBQUFBQUFBQYFBQUFBQUFBQUFBQUABQAHCAUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQAFAAUABQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUAAAAFAEGp0AALBQEBAAEBAEHA0AALAQEAQdrQAAtBAgAAAAAAAAMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAAAAAAAAAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMAQanSAAsFAQEAAQEAQcDSAAsBAQBBytIACwYCAAAAAAIAQeHSAAs6AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMAAAAAAAADAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwBBoNQAC50BTk9VTkNFRUNLT1VUTkVDVEVURUNSSUJFTFVTSEVURUFEU0VBUkNIUkdFQ1RJVklUWUxFTkRBUlZFT1RJRllQVElPTlNDSFNFQVlTVEFUQ0hHRVVFUllPUkRJUkVDVE9SVFJDSFBBUkFNRVRFUlVSQ0VCU0NSSUJFQVJET1dOQUNFSU5ETktDS1VCU0NSSUJFVFRQQ0VUU1BBRFRQLw=='

let wasmBuffer

Object.defineProperty(module, 'exports', {
  get: () => {
    return wasmBuffer
      ? wasmBuffer
      : (wasmBuffer = Buffer.from(wasmBase64, 'base64'))
  }
})


/***/ },

/***/ 3434:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {

/* module decorator */ module = __nccwpck_require__.nmd(module);


const { Buffer } = __nccwpck_require__(4573)

const wasmBase64 = 'AGFzbQEAAAABJwdgAX8Bf2ADf39/AX9gAn9/AGABfwBgBH9/f38Bf2AAAGADf39/AALLAQgDZW52GHdhc21fb25faGVhZGVyc19jb21wbGV0ZQAEA2VudhV3YXNtX29uX21lc3NhZ2VfYmVnaW4AAANlbnYLd2FzbV9vbl91cmwAAQNlbnYOd2FzbV9vbl9zdGF0dXMAAQNlbnYUd2FzbV9vbl9oZWFkZXJfZmllbGQAAQNlbnYUd2FzbV9vbl9oZWFkZXJfdmFsdWUAAQNlbnYMd2FzbV9vbl9ib2R5AAEDZW52GHdhc21fb25fbWVzc2FnZV9jb21wbGV0ZQAAAzU0BQYAAAMAAAAAAAADAQMAAwMDAAACAAAAAAICAgICAgICAgIBAQEBAQEBAQEBAwAAAwAAAAQFAXABExMFAwEAAgYIAX8BQcDZBAsHxQcoBm1lbW9yeQIAC19pbml0aWFsaXplAAgZX19pbmRpcmVjdF9mdW5jdGlvbl90YWJsZQEAC2xsaHR0cF9pbml0AAkYbGxodHRwX3Nob3VsZF9rZWVwX2FsaXZlADcMbGxodHRwX2FsbG9jAAsGbWFsbG9jADkLbGxodHRwX2ZyZWUADARmcmVlAAwPbGxodHRwX2dldF90eXBlAA0VbGxodHRwX2dldF9odHRwX21ham9yAA4VbGxodHRwX2dldF9odHRwX21pbm9yAA8RbGxodHRwX2dldF9tZXRob2QAEBZsbGh0dHBfZ2V0X3N0YXR1c19jb2RlABESbGxodHRwX2dldF91cGdyYWRlABIMbGxodHRwX3Jlc2V0ABMObGxodHRwX2V4ZWN1dGUAFBRsbGh0dHBfc2V0dGluZ3NfaW5pdAAVDWxsaHR0cF9maW5pc2gAFgxsbGh0dHBfcGF1c2UAFw1sbGh0dHBfcmVzdW1lABgbbGxodHRwX3Jlc3VtZV9hZnRlcl91cGdyYWRlABkQbGxodHRwX2dldF9lcnJubwAaF2xsaHR0cF9nZXRfZXJyb3JfcmVhc29uABsXbGxodHRwX3NldF9lcnJvcl9yZWFzb24AHBRsbGh0dHBfZ2V0X2Vycm9yX3BvcwAdEWxsaHR0cF9lcnJub19uYW1lAB4SbGxodHRwX21ldGhvZF9uYW1lAB8SbGxodHRwX3N0YXR1c19uYW1lACAabGxodHRwX3NldF9sZW5pZW50X2hlYWRlcnMAISFsbGh0dHBfc2V0X2xlbmllbnRfY2h1bmtlZF9sZW5ndGgAIh1sbGh0dHBfc2V0X2xlbmllbnRfa2VlcF9hbGl2ZQAjJGxsaHR0cF9zZXRfbGVuaWVudF90cmFuc2Zlcl9lbmNvZGluZwAkGmxsaHR0cF9zZXRfbGVuaWVudF92ZXJzaW9uACUjbGxodHRwX3NldF9sZW5pZW50X2RhdGFfYWZ0ZXJfY2xvc2UAJidsbGh0dHBfc2V0X2xlbmllbnRfb3B0aW9uYWxfbGZfYWZ0ZXJfY3IAJyxsbGh0dHBfc2V0X2xlbmllbnRfb3B0aW9uYWxfY3JsZl9hZnRlcl9jaHVuawAoKGxsaHR0cF9zZXRfbGVuaWVudF9vcHRpb25hbF9jcl9iZWZvcmVfbGYAKSpsbGh0dHBfc2V0X2xlbmllbnRfc3BhY2VzX2FmdGVyX2NodW5rX3NpemUAKhhsbGh0dHBfbWVzc2FnZV9uZWVkc19lb2YANgkYAQBBAQsSAQIDBAUKBgcyNDMuKy8tLDAxCuzaAjQWAEHA1QAoAgAEQAALQcDVAEEBNgIACxQAIAAQOCAAIAI2AjggACABOgAoCxQAIAAgAC8BNCAALQAwIAAQNxAACx4BAX9BwAAQOiIBEDggAUGACDYCOCABIAA6ACggAQuPDAEHfwJAIABFDQAgAEEIayIBIABBBGsoAgAiAEF4cSIEaiEFAkAgAEEBcQ0AIABBA3FFDQEgASABKAIAIgBrIgFB1NUAKAIASQ0BIAAgBGohBAJAAkBB2NUAKAIAIAFHBEAgAEH/AU0EQCAAQQN2IQMgASgCCCIAIAEoAgwiAkYEQEHE1QBBxNUAKAIAQX4gA3dxNgIADAULIAIgADYCCCAAIAI2AgwMBAsgASgCGCEGIAEgASgCDCIARwRAIAAgASgCCCICNgIIIAIgADYCDAwDCyABQRRqIgMoAgAiAkUEQCABKAIQIgJFDQIgAUEQaiEDCwNAIAMhByACIgBBFGoiAygCACICDQAgAEEQaiEDIAAoAhAiAg0ACyAHQQA2AgAMAgsgBSgCBCIAQQNxQQNHDQIgBSAAQX5xNgIEQczVACAENgIAIAUgBDYCACABIARBAXI2AgQMAwtBACEACyAGRQ0AAkAgASgCHCICQQJ0QfTXAGoiAygCACABRgRAIAMgADYCACAADQFByNUAQcjVACgCAEF+IAJ3cTYCAAwCCyAGQRBBFCAGKAIQIAFGG2ogADYCACAARQ0BCyAAIAY2AhggASgCECICBEAgACACNgIQIAIgADYCGAsgAUEUaigCACICRQ0AIABBFGogAjYCACACIAA2AhgLIAEgBU8NACAFKAIEIgBBAXFFDQACQAJAAkACQCAAQQJxRQRAQdzVACgCACAFRgRAQdzVACABNgIAQdDVAEHQ1QAoAgAgBGoiADYCACABIABBAXI2AgQgAUHY1QAoAgBHDQZBzNUAQQA2AgBB2NUAQQA2AgAMBgtB2NUAKAIAIAVGBEBB2NUAIAE2AgBBzNUAQczVACgCACAEaiIANgIAIAEgAEEBcjYCBCAAIAFqIAA2AgAMBgsgAEF4cSAEaiEEIABB/wFNBEAgAEEDdiEDIAUoAggiACAFKAIMIgJGBEBBxNUAQcTVACgCAEF+IAN3cTYCAAwFCyACIAA2AgggACACNgIMDAQLIAUoAhghBiAFIAUoAgwiAEcEQEHU1QAoAgAaIAAgBSgCCCICNgIIIAIgADYCDAwDCyAFQRRqIgMoAgAiAkUEQCAFKAIQIgJFDQIgBUEQaiEDCwNAIAMhByACIgBBFGoiAygCACICDQAgAEEQaiEDIAAoAhAiAg0ACyAHQQA2AgAMAgsgBSAAQX5xNgIEIAEgBGogBDYCACABIARBAXI2AgQMAwtBACEACyAGRQ0AAkAgBSgCHCICQQJ0QfTXAGoiAygCACAFRgRAIAMgADYCACAADQFByNUAQcjVACgCAEF+IAJ3cTYCAAwCCyAGQRBBFCAGKAIQIAVGG2ogADYCACAARQ0BCyAAIAY2AhggBSgCECICBEAgACACNgIQIAIgADYCGAsgBUEUaigCACICRQ0AIABBFGogAjYCACACIAA2AhgLIAEgBGogBDYCACABIARBAXI2AgQgAUHY1QAoAgBHDQBBzNUAIAQ2AgAMAQsgBEH/AU0EQCAEQXhxQezVAGohAAJ/QcTVACgCACICQQEgBEEDdnQiA3FFBEBBxNUAIAIgA3I2AgAgAAwBCyAAKAIICyICIAE2AgwgACABNgIIIAEgADYCDCABIAI2AggMAQtBHyECIARB////B00EQCAEQSYgBEEIdmciAGt2QQFxIABBAXRrQT5qIQILIAEgAjYCHCABQgA3AhAgAkECdEH01wBqIQACQEHI1QAoAgAiA0EBIAJ0IgdxRQRAIAAgATYCAEHI1QAgAyAHcjYCACABIAA2AhggASABNgIIIAEgATYCDAwBCyAEQRkgAkEBdmtBACACQR9HG3QhAiAAKAIAIQACQANAIAAiAygCBEF4cSAERg0BIAJBHXYhACACQQF0IQIgAyAAQQRxakEQaiIHKAIAIgANAAsgByABNgIAIAEgAzYCGCABIAE2AgwgASABNgIIDAELIAMoAggiACABNgIMIAMgATYCCCABQQA2AhggASADNgIMIAEgADYCCAtB5NUAQeTVACgCAEEBayIAQX8gABs2AgALCwcAIAAtACgLBwAgAC0AKgsHACAALQArCwcAIAAtACkLBwAgAC8BNAsHACAALQAwC0ABBH8gACgCGCEBIAAvAS4hAiAALQAoIQMgACgCOCEEIAAQOCAAIAQ2AjggACADOgAoIAAgAjsBLiAAIAE2AhgLhocCAwd/A34BeyABIAJqIQQCQCAAIgMoAgwiAA0AIAMoAgQEQCADIAE2AgQLIwBBEGsiCSQAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACfwJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQCADKAIcIgJBAmsO/AEB+QECAwQFBgcICQoLDA0ODxAREvgBE/cBFBX2ARYX9QEYGRobHB0eHyD9AfsBIfQBIiMkJSYnKCkqK/MBLC0uLzAxMvIB8QEzNPAB7wE1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk/6AVBRUlPuAe0BVOwBVesBVldYWVrqAVtcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AAYEBggGDAYQBhQGGAYcBiAGJAYoBiwGMAY0BjgGPAZABkQGSAZMBlAGVAZYBlwGYAZkBmgGbAZwBnQGeAZ8BoAGhAaIBowGkAaUBpgGnAagBqQGqAasBrAGtAa4BrwGwAbEBsgGzAbQBtQG2AbcBuAG5AboBuwG8Ab0BvgG/AcABwQHCAcMBxAHFAcYBxwHIAckBygHLAcwBzQHOAekB6AHPAecB0AHmAdEB0gHTAdQB5QHVAdYB1wHYAdkB2gHbAdwB3QHeAd8B4AHhAeIB4wEA/AELQQAM4wELQQ4M4gELQQ0M4QELQQ8M4AELQRAM3wELQRMM3gELQRQM3QELQRUM3AELQRYM2wELQRcM2gELQRgM2QELQRkM2AELQRoM1wELQRsM1gELQRwM1QELQR0M1AELQR4M0wELQR8M0gELQSAM0QELQSEM0AELQQgMzwELQSIMzgELQSQMzQELQSMMzAELQQcMywELQSUMygELQSYMyQELQScMyAELQSgMxwELQRIMxgELQREMxQELQSkMxAELQSoMwwELQSsMwgELQSwMwQELQd4BDMABC0EuDL8BC0EvDL4BC0EwDL0BC0ExDLwBC0EyDLsBC0EzDLoBC0E0DLkBC0HfAQy4AQtBNQy3AQtBOQy2AQtBDAy1AQtBNgy0AQtBNwyzAQtBOAyyAQtBPgyxAQtBOgywAQtB4AEMrwELQQsMrgELQT8MrQELQTsMrAELQQoMqwELQTwMqgELQT0MqQELQeEBDKgBC0HBAAynAQtBwAAMpgELQcIADKUBC0EJDKQBC0EtDKMBC0HDAAyiAQtBxAAMoQELQcUADKABC0HGAAyfAQtBxwAMngELQcgADJ0BC0HJAAycAQtBygAMmwELQcsADJoBC0HMAAyZAQtBzQAMmAELQc4ADJcBC0HPAAyWAQtB0AAMlQELQdEADJQBC0HSAAyTAQtB0wAMkgELQdUADJEBC0HUAAyQAQtB1gAMjwELQdcADI4BC0HYAAyNAQtB2QAMjAELQdoADIsBC0HbAAyKAQtB3AAMiQELQd0ADIgBC0HeAAyHAQtB3wAMhgELQeAADIUBC0HhAAyEAQtB4gAMgwELQeMADIIBC0HkAAyBAQtB5QAMgAELQeIBDH8LQeYADH4LQecADH0LQQYMfAtB6AAMewtBBQx6C0HpAAx5C0EEDHgLQeoADHcLQesADHYLQewADHULQe0ADHQLQQMMcwtB7gAMcgtB7wAMcQtB8AAMcAtB8gAMbwtB8QAMbgtB8wAMbQtB9AAMbAtB9QAMawtB9gAMagtBAgxpC0H3AAxoC0H4AAxnC0H5AAxmC0H6AAxlC0H7AAxkC0H8AAxjC0H9AAxiC0H+AAxhC0H/AAxgC0GAAQxfC0GBAQxeC0GCAQxdC0GDAQxcC0GEAQxbC0GFAQxaC0GGAQxZC0GHAQxYC0GIAQxXC0GJAQxWC0GKAQxVC0GLAQxUC0GMAQxTC0GNAQxSC0GOAQxRC0GPAQxQC0GQAQxPC0GRAQxOC0GSAQxNC0GTAQxMC0GUAQxLC0GVAQxKC0GWAQxJC0GXAQxIC0GYAQxHC0GZAQxGC0GaAQxFC0GbAQxEC0GcAQxDC0GdAQxCC0GeAQxBC0GfAQxAC0GgAQw/C0GhAQw+C0GiAQw9C0GjAQw8C0GkAQw7C0GlAQw6C0GmAQw5C0GnAQw4C0GoAQw3C0GpAQw2C0GqAQw1C0GrAQw0C0GsAQwzC0GtAQwyC0GuAQwxC0GvAQwwC0GwAQwvC0GxAQwuC0GyAQwtC0GzAQwsC0G0AQwrC0G1AQwqC0G2AQwpC0G3AQwoC0G4AQwnC0G5AQwmC0G6AQwlC0G7AQwkC0G8AQwjC0G9AQwiC0G+AQwhC0G/AQwgC0HAAQwfC0HBAQweC0HCAQwdC0EBDBwLQcMBDBsLQcQBDBoLQcUBDBkLQcYBDBgLQccBDBcLQcgBDBYLQckBDBULQcoBDBQLQcsBDBMLQcwBDBILQc0BDBELQc4BDBALQc8BDA8LQdABDA4LQdEBDA0LQdIBDAwLQdMBDAsLQdQBDAoLQdUBDAkLQdYBDAgLQeMBDAcLQdcBDAYLQdgBDAULQdkBDAQLQdoBDAMLQdsBDAILQd0BDAELQdwBCyECA0ACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAIAMCfwJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACfwJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACfwJAAkACQAJAAkACQAJAAn8CQAJAAkACfwJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkAgAwJ/AkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJ/AkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQCACDuMBAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISMkJScoKZ4DmwOaA5EDigODA4AD/QL7AvgC8gLxAu8C7QLoAucC5gLlAuQC3ALbAtoC2QLYAtcC1gLVAs8CzgLMAssCygLJAsgCxwLGAsQCwwK+ArwCugK5ArgCtwK2ArUCtAKzArICsQKwAq4CrQKpAqgCpwKmAqUCpAKjAqICoQKgAp8CmAKQAowCiwKKAoEC/gH9AfwB+wH6AfkB+AH3AfUB8wHwAesB6QHoAecB5gHlAeQB4wHiAeEB4AHfAd4B3QHcAdoB2QHYAdcB1gHVAdQB0wHSAdEB0AHPAc4BzQHMAcsBygHJAcgBxwHGAcUBxAHDAcIBwQHAAb8BvgG9AbwBuwG6AbkBuAG3AbYBtQG0AbMBsgGxAbABrwGuAa0BrAGrAaoBqQGoAacBpgGlAaQBowGiAZ8BngGZAZgBlwGWAZUBlAGTAZIBkQGQAY8BjQGMAYcBhgGFAYQBgwGCAX18e3p5dnV0UFFSU1RVCyABIARHDXJB/QEhAgy+AwsgASAERw2YAUHbASECDL0DCyABIARHDfEBQY4BIQIMvAMLIAEgBEcN/AFBhAEhAgy7AwsgASAERw2KAkH/ACECDLoDCyABIARHDZECQf0AIQIMuQMLIAEgBEcNlAJB+wAhAgy4AwsgASAERw0eQR4hAgy3AwsgASAERw0ZQRghAgy2AwsgASAERw3KAkHNACECDLUDCyABIARHDdUCQcYAIQIMtAMLIAEgBEcN1gJBwwAhAgyzAwsgASAERw3cAkE4IQIMsgMLIAMtADBBAUYNrQMMiQMLQQAhAAJAAkACQCADLQAqRQ0AIAMtACtFDQAgAy8BMiICQQJxRQ0BDAILIAMvATIiAkEBcUUNAQtBASEAIAMtAChBAUYNACADLwE0IgZB5ABrQeQASQ0AIAZBzAFGDQAgBkGwAkYNACACQcAAcQ0AQQAhACACQYgEcUGABEYNACACQShxQQBHIQALIANBADsBMiADQQA6ADECQCAARQRAIANBADoAMSADLQAuQQRxDQEMsQMLIANCADcDIAsgA0EAOgAxIANBAToANgxIC0EAIQACQCADKAI4IgJFDQAgAigCMCICRQ0AIAMgAhEAACEACyAARQ1IIABBFUcNYiADQQQ2AhwgAyABNgIUIANB0hs2AhAgA0EVNgIMQQAhAgyvAwsgASAERgRAQQYhAgyvAwsgAS0AAEEKRw0ZIAFBAWohAQwaCyADQgA3AyBBEiECDJQDCyABIARHDYoDQSMhAgysAwsgASAERgRAQQchAgysAwsCQAJAIAEtAABBCmsOBAEYGAAYCyABQQFqIQFBECECDJMDCyABQQFqIQEgA0Evai0AAEEBcQ0XQQAhAiADQQA2AhwgAyABNgIUIANBmSA2AhAgA0EZNgIMDKsDCyADIAMpAyAiDCAEIAFrrSIKfSILQgAgCyAMWBs3AyAgCiAMWg0YQQghAgyqAwsgASAERwRAIANBCTYCCCADIAE2AgRBFCECDJEDC0EJIQIMqQMLIAMpAyBQDa4CDEMLIAEgBEYEQEELIQIMqAMLIAEtAABBCkcNFiABQQFqIQEMFwsgA0Evai0AAEEBcUUNGQwmC0EAIQACQCADKAI4IgJFDQAgAigCUCICRQ0AIAMgAhEAACEACyAADRkMQgtBACEAAkAgAygCOCICRQ0AIAIoAlAiAkUNACADIAIRAAAhAAsgAA0aDCQLQQAhAAJAIAMoAjgiAkUNACACKAJQIgJFDQAgAyACEQAAIQALIAANGwwyCyADQS9qLQAAQQFxRQ0cDCILQQAhAAJAIAMoAjgiAkUNACACKAJUIgJFDQAgAyACEQAAIQALIAANHAxCC0EAIQACQCADKAI4IgJFDQAgAigCVCICRQ0AIAMgAhEAACEACyAADR0MIAsgASAERgRAQRMhAgygAwsCQCABLQAAIgBBCmsOBB8jIwAiCyABQQFqIQEMHwtBACEAAkAgAygCOCICRQ0AIAIoAlQiAkUNACADIAIRAAAhAAsgAA0iDEILIAEgBEYEQEEWIQIMngMLIAEtAABBwMEAai0AAEEBRw0jDIMDCwJAA0AgAS0AAEGwO2otAAAiAEEBRwRAAkAgAEECaw4CAwAnCyABQQFqIQFBISECDIYDCyAEIAFBAWoiAUcNAAtBGCECDJ0DCyADKAIEIQBBACECIANBADYCBCADIAAgAUEBaiIBEDQiAA0hDEELQQAhAAJAIAMoAjgiAkUNACACKAJUIgJFDQAgAyACEQAAIQALIAANIwwqCyABIARGBEBBHCECDJsDCyADQQo2AgggAyABNgIEQQAhAAJAIAMoAjgiAkUNACACKAJQIgJFDQAgAyACEQAAIQALIAANJUEkIQIMgQMLIAEgBEcEQANAIAEtAABBsD1qLQAAIgBBA0cEQCAAQQFrDgUYGiaCAyUmCyAEIAFBAWoiAUcNAAtBGyECDJoDC0EbIQIMmQMLA0AgAS0AAEGwP2otAAAiAEEDRwRAIABBAWsOBQ8RJxMmJwsgBCABQQFqIgFHDQALQR4hAgyYAwsgASAERwRAIANBCzYCCCADIAE2AgRBByECDP8CC0EfIQIMlwMLIAEgBEYEQEEgIQIMlwMLAkAgAS0AAEENaw4ULj8/Pz8/Pz8/Pz8/Pz8/Pz8/PwA/C0EAIQIgA0EANgIcIANBvws2AhAgA0ECNgIMIAMgAUEBajYCFAyWAwsgA0EvaiECA0AgASAERgRAQSEhAgyXAwsCQAJAAkAgAS0AACIAQQlrDhgCACkpASkpKSkpKSkpKSkpKSkpKSkpKQInCyABQQFqIQEgA0Evai0AAEEBcUUNCgwYCyABQQFqIQEMFwsgAUEBaiEBIAItAABBAnENAAtBACECIANBADYCHCADIAE2AhQgA0GfFTYCECADQQw2AgwMlQMLIAMtAC5BgAFxRQ0BC0EAIQACQCADKAI4IgJFDQAgAigCXCICRQ0AIAMgAhEAACEACyAARQ3mAiAAQRVGBEAgA0EkNgIcIAMgATYCFCADQZsbNgIQIANBFTYCDEEAIQIMlAMLQQAhAiADQQA2AhwgAyABNgIUIANBkA42AhAgA0EUNgIMDJMDC0EAIQIgA0EANgIcIAMgATYCFCADQb4gNgIQIANBAjYCDAySAwsgAygCBCEAQQAhAiADQQA2AgQgAyAAIAEgDKdqIgEQMiIARQ0rIANBBzYCHCADIAE2AhQgAyAANgIMDJEDCyADLQAuQcAAcUUNAQtBACEAAkAgAygCOCICRQ0AIAIoAlgiAkUNACADIAIRAAAhAAsgAEUNKyAAQRVGBEAgA0EKNgIcIAMgATYCFCADQesZNgIQIANBFTYCDEEAIQIMkAMLQQAhAiADQQA2AhwgAyABNgIUIANBkww2AhAgA0ETNgIMDI8DC0EAIQIgA0EANgIcIAMgATYCFCADQYIVNgIQIANBAjYCDAyOAwtBACECIANBADYCHCADIAE2AhQgA0HdFDYCECADQRk2AgwMjQMLQQAhAiADQQA2AhwgAyABNgIUIANB5h02AhAgA0EZNgIMDIwDCyAAQRVGDT1BACECIANBADYCHCADIAE2AhQgA0HQDzYCECADQSI2AgwMiwMLIAMoAgQhAEEAIQIgA0EANgIEIAMgACABEDMiAEUNKCADQQ02AhwgAyABNgIUIAMgADYCDAyKAwsgAEEVRg06QQAhAiADQQA2AhwgAyABNgIUIANB0A82AhAgA0EiNgIMDIkDCyADKAIEIQBBACECIANBADYCBCADIAAgARAzIgBFBEAgAUEBaiEBDCgLIANBDjYCHCADIAA2AgwgAyABQQFqNgIUDIgDCyAAQRVGDTdBACECIANBADYCHCADIAE2AhQgA0HQDzYCECADQSI2AgwMhwMLIAMoAgQhAEEAIQIgA0EANgIEIAMgACABEDMiAEUEQCABQQFqIQEMJwsgA0EPNgIcIAMgADYCDCADIAFBAWo2AhQMhgMLQQAhAiADQQA2AhwgAyABNgIUIANB4hc2AhAgA0EZNgIMDIUDCyAAQRVGDTNBACECIANBADYCHCADIAE2AhQgA0HWDDYCECADQSM2AgwMhAMLIAMoAgQhAEEAIQIgA0EANgIEIAMgACABEDQiAEUNJSADQRE2AhwgAyABNgIUIAMgADYCDAyDAwsgAEEVRg0wQQAhAiADQQA2AhwgAyABNgIUIANB1gw2AhAgA0EjNgIMDIIDCyADKAIEIQBBACECIANBADYCBCADIAAgARA0IgBFBEAgAUEBaiEBDCULIANBEjYCHCADIAA2AgwgAyABQQFqNgIUDIEDCyADQS9qLQAAQQFxRQ0BC0EXIQIM5gILQQAhAiADQQA2AhwgAyABNgIUIANB4hc2AhAgA0EZNgIMDP4CCyAAQTtHDQAgAUEBaiEBDAwLQQAhAiADQQA2AhwgAyABNgIUIANBkhg2AhAgA0ECNgIMDPwCCyAAQRVGDShBACECIANBADYCHCADIAE2AhQgA0HWDDYCECADQSM2AgwM+wILIANBFDYCHCADIAE2AhQgAyAANgIMDPoCCyADKAIEIQBBACECIANBADYCBCADIAAgARA0IgBFBEAgAUEBaiEBDPUCCyADQRU2AhwgAyAANgIMIAMgAUEBajYCFAz5AgsgAygCBCEAQQAhAiADQQA2AgQgAyAAIAEQNCIARQRAIAFBAWohAQzzAgsgA0EXNgIcIAMgADYCDCADIAFBAWo2AhQM+AILIABBFUYNI0EAIQIgA0EANgIcIAMgATYCFCADQdYMNgIQIANBIzYCDAz3AgsgAygCBCEAQQAhAiADQQA2AgQgAyAAIAEQNCIARQRAIAFBAWohAQwdCyADQRk2AhwgAyAANgIMIAMgAUEBajYCFAz2AgsgAygCBCEAQQAhAiADQQA2AgQgAyAAIAEQNCIARQRAIAFBAWohAQzvAgsgA0EaNgIcIAMgADYCDCADIAFBAWo2AhQM9QILIABBFUYNH0EAIQIgA0EANgIcIAMgATYCFCADQdAPNgIQIANBIjYCDAz0AgsgAygCBCEAIANBADYCBCADIAAgARAzIgBFBEAgAUEBaiEBDBsLIANBHDYCHCADIAA2AgwgAyABQQFqNgIUQQAhAgzzAgsgAygCBCEAIANBADYCBCADIAAgARAzIgBFBEAgAUEBaiEBDOsCCyADQR02AhwgAyAANgIMIAMgAUEBajYCFEEAIQIM8gILIABBO0cNASABQQFqIQELQSYhAgzXAgtBACECIANBADYCHCADIAE2AhQgA0GfFTYCECADQQw2AgwM7wILIAEgBEcEQANAIAEtAABBIEcNhAIgBCABQQFqIgFHDQALQSwhAgzvAgtBLCECDO4CCyABIARGBEBBNCECDO4CCwJAAkADQAJAIAEtAABBCmsOBAIAAAMACyAEIAFBAWoiAUcNAAtBNCECDO8CCyADKAIEIQAgA0EANgIEIAMgACABEDEiAEUNnwIgA0EyNgIcIAMgATYCFCADIAA2AgxBACECDO4CCyADKAIEIQAgA0EANgIEIAMgACABEDEiAEUEQCABQQFqIQEMnwILIANBMjYCHCADIAA2AgwgAyABQQFqNgIUQQAhAgztAgsgASAERwRAAkADQCABLQAAQTBrIgBB/wFxQQpPBEBBOiECDNcCCyADKQMgIgtCmbPmzJmz5swZVg0BIAMgC0IKfiIKNwMgIAogAK1C/wGDIgtCf4VWDQEgAyAKIAt8NwMgIAQgAUEBaiIBRw0AC0HAACECDO4CCyADKAIEIQAgA0EANgIEIAMgACABQQFqIgEQMSIADRcM4gILQcAAIQIM7AILIAEgBEYEQEHJACECDOwCCwJAA0ACQCABLQAAQQlrDhgAAqICogKpAqICogKiAqICogKiAqICogKiAqICogKiAqICogKiAqICogKiAgCiAgsgBCABQQFqIgFHDQALQckAIQIM7AILIAFBAWohASADQS9qLQAAQQFxDaUCIANBADYCHCADIAE2AhQgA0GXEDYCECADQQo2AgxBACECDOsCCyABIARHBEADQCABLQAAQSBHDRUgBCABQQFqIgFHDQALQfgAIQIM6wILQfgAIQIM6gILIANBAjoAKAw4C0EAIQIgA0EANgIcIANBvws2AhAgA0ECNgIMIAMgAUEBajYCFAzoAgtBACECDM4CC0ENIQIMzQILQRMhAgzMAgtBFSECDMsCC0EWIQIMygILQRghAgzJAgtBGSECDMgCC0EaIQIMxwILQRshAgzGAgtBHCECDMUCC0EdIQIMxAILQR4hAgzDAgtBHyECDMICC0EgIQIMwQILQSIhAgzAAgtBIyECDL8CC0ElIQIMvgILQeUAIQIMvQILIANBPTYCHCADIAE2AhQgAyAANgIMQQAhAgzVAgsgA0EbNgIcIAMgATYCFCADQaQcNgIQIANBFTYCDEEAIQIM1AILIANBIDYCHCADIAE2AhQgA0GYGjYCECADQRU2AgxBACECDNMCCyADQRM2AhwgAyABNgIUIANBmBo2AhAgA0EVNgIMQQAhAgzSAgsgA0ELNgIcIAMgATYCFCADQZgaNgIQIANBFTYCDEEAIQIM0QILIANBEDYCHCADIAE2AhQgA0GYGjYCECADQRU2AgxBACECDNACCyADQSA2AhwgAyABNgIUIANBpBw2AhAgA0EVNgIMQQAhAgzPAgsgA0ELNgIcIAMgATYCFCADQaQcNgIQIANBFTYCDEEAIQIMzgILIANBDDYCHCADIAE2AhQgA0GkHDYCECADQRU2AgxBACECDM0CC0EAIQIgA0EANgIcIAMgATYCFCADQd0ONgIQIANBEjYCDAzMAgsCQANAAkAgAS0AAEEKaw4EAAICAAILIAQgAUEBaiIBRw0AC0H9ASECDMwCCwJAAkAgAy0ANkEBRw0AQQAhAAJAIAMoAjgiAkUNACACKAJgIgJFDQAgAyACEQAAIQALIABFDQAgAEEVRw0BIANB/AE2AhwgAyABNgIUIANB3Bk2AhAgA0EVNgIMQQAhAgzNAgtB3AEhAgyzAgsgA0EANgIcIAMgATYCFCADQfkLNgIQIANBHzYCDEEAIQIMywILAkACQCADLQAoQQFrDgIEAQALQdsBIQIMsgILQdQBIQIMsQILIANBAjoAMUEAIQACQCADKAI4IgJFDQAgAigCACICRQ0AIAMgAhEAACEACyAARQRAQd0BIQIMsQILIABBFUcEQCADQQA2AhwgAyABNgIUIANBtAw2AhAgA0EQNgIMQQAhAgzKAgsgA0H7ATYCHCADIAE2AhQgA0GBGjYCECADQRU2AgxBACECDMkCCyABIARGBEBB+gEhAgzJAgsgAS0AAEHIAEYNASADQQE6ACgLQcABIQIMrgILQdoBIQIMrQILIAEgBEcEQCADQQw2AgggAyABNgIEQdkBIQIMrQILQfkBIQIMxQILIAEgBEYEQEH4ASECDMUCCyABLQAAQcgARw0EIAFBAWohAUHYASECDKsCCyABIARGBEBB9wEhAgzEAgsCQAJAIAEtAABBxQBrDhAABQUFBQUFBQUFBQUFBQUBBQsgAUEBaiEBQdYBIQIMqwILIAFBAWohAUHXASECDKoCC0H2ASECIAEgBEYNwgIgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABButUAai0AAEcNAyAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMwwILIAMoAgQhACADQgA3AwAgAyAAIAZBAWoiARAuIgBFBEBB4wEhAgyqAgsgA0H1ATYCHCADIAE2AhQgAyAANgIMQQAhAgzCAgtB9AEhAiABIARGDcECIAMoAgAiACAEIAFraiEFIAEgAGtBAWohBgJAA0AgAS0AACAAQbjVAGotAABHDQIgAEEBRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADMICCyADQYEEOwEoIAMoAgQhACADQgA3AwAgAyAAIAZBAWoiARAuIgANAwwCCyADQQA2AgALQQAhAiADQQA2AhwgAyABNgIUIANB5R82AhAgA0EINgIMDL8CC0HVASECDKUCCyADQfMBNgIcIAMgATYCFCADIAA2AgxBACECDL0CC0EAIQACQCADKAI4IgJFDQAgAigCQCICRQ0AIAMgAhEAACEACyAARQ1uIABBFUcEQCADQQA2AhwgAyABNgIUIANBgg82AhAgA0EgNgIMQQAhAgy9AgsgA0GPATYCHCADIAE2AhQgA0HsGzYCECADQRU2AgxBACECDLwCCyABIARHBEAgA0ENNgIIIAMgATYCBEHTASECDKMCC0HyASECDLsCCyABIARGBEBB8QEhAgy7AgsCQAJAAkAgAS0AAEHIAGsOCwABCAgICAgICAgCCAsgAUEBaiEBQdABIQIMowILIAFBAWohAUHRASECDKICCyABQQFqIQFB0gEhAgyhAgtB8AEhAiABIARGDbkCIAMoAgAiACAEIAFraiEGIAEgAGtBAmohBQNAIAEtAAAgAEG11QBqLQAARw0EIABBAkYNAyAAQQFqIQAgBCABQQFqIgFHDQALIAMgBjYCAAy5AgtB7wEhAiABIARGDbgCIAMoAgAiACAEIAFraiEGIAEgAGtBAWohBQNAIAEtAAAgAEGz1QBqLQAARw0DIABBAUYNAiAAQQFqIQAgBCABQQFqIgFHDQALIAMgBjYCAAy4AgtB7gEhAiABIARGDbcCIAMoAgAiACAEIAFraiEGIAEgAGtBAmohBQNAIAEtAAAgAEGw1QBqLQAARw0CIABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBjYCAAy3AgsgAygCBCEAIANCADcDACADIAAgBUEBaiIBECsiAEUNAiADQewBNgIcIAMgATYCFCADIAA2AgxBACECDLYCCyADQQA2AgALIAMoAgQhACADQQA2AgQgAyAAIAEQKyIARQ2cAiADQe0BNgIcIAMgATYCFCADIAA2AgxBACECDLQCC0HPASECDJoCC0EAIQACQCADKAI4IgJFDQAgAigCNCICRQ0AIAMgAhEAACEACwJAIAAEQCAAQRVGDQEgA0EANgIcIAMgATYCFCADQeoNNgIQIANBJjYCDEEAIQIMtAILQc4BIQIMmgILIANB6wE2AhwgAyABNgIUIANBgBs2AhAgA0EVNgIMQQAhAgyyAgsgASAERgRAQesBIQIMsgILIAEtAABBL0YEQCABQQFqIQEMAQsgA0EANgIcIAMgATYCFCADQbI4NgIQIANBCDYCDEEAIQIMsQILQc0BIQIMlwILIAEgBEcEQCADQQ42AgggAyABNgIEQcwBIQIMlwILQeoBIQIMrwILIAEgBEYEQEHpASECDK8CCyABLQAAQTBrIgBB/wFxQQpJBEAgAyAAOgAqIAFBAWohAUHLASECDJYCCyADKAIEIQAgA0EANgIEIAMgACABEC8iAEUNlwIgA0HoATYCHCADIAE2AhQgAyAANgIMQQAhAgyuAgsgASAERgRAQecBIQIMrgILAkAgAS0AAEEuRgRAIAFBAWohAQwBCyADKAIEIQAgA0EANgIEIAMgACABEC8iAEUNmAIgA0HmATYCHCADIAE2AhQgAyAANgIMQQAhAgyuAgtBygEhAgyUAgsgASAERgRAQeUBIQIMrQILQQAhAEEBIQVBASEHQQAhAgJAAkACQAJAAkACfwJAAkACQAJAAkACQAJAIAEtAABBMGsOCgoJAAECAwQFBggLC0ECDAYLQQMMBQtBBAwEC0EFDAMLQQYMAgtBBwwBC0EICyECQQAhBUEAIQcMAgtBCSECQQEhAEEAIQVBACEHDAELQQAhBUEBIQILIAMgAjoAKyABQQFqIQECQAJAIAMtAC5BEHENAAJAAkACQCADLQAqDgMBAAIECyAHRQ0DDAILIAANAQwCCyAFRQ0BCyADKAIEIQAgA0EANgIEIAMgACABEC8iAEUNAiADQeIBNgIcIAMgATYCFCADIAA2AgxBACECDK8CCyADKAIEIQAgA0EANgIEIAMgACABEC8iAEUNmgIgA0HjATYCHCADIAE2AhQgAyAANgIMQQAhAgyuAgsgAygCBCEAIANBADYCBCADIAAgARAvIgBFDZgCIANB5AE2AhwgAyABNgIUIAMgADYCDAytAgtByQEhAgyTAgtBACEAAkAgAygCOCICRQ0AIAIoAkQiAkUNACADIAIRAAAhAAsCQCAABEAgAEEVRg0BIANBADYCHCADIAE2AhQgA0GkDTYCECADQSE2AgxBACECDK0CC0HIASECDJMCCyADQeEBNgIcIAMgATYCFCADQdAaNgIQIANBFTYCDEEAIQIMqwILIAEgBEYEQEHhASECDKsCCwJAIAEtAABBIEYEQCADQQA7ATQgAUEBaiEBDAELIANBADYCHCADIAE2AhQgA0GZETYCECADQQk2AgxBACECDKsCC0HHASECDJECCyABIARGBEBB4AEhAgyqAgsCQCABLQAAQTBrQf8BcSICQQpJBEAgAUEBaiEBAkAgAy8BNCIAQZkzSw0AIAMgAEEKbCIAOwE0IABB/v8DcSACQf//A3NLDQAgAyAAIAJqOwE0DAILQQAhAiADQQA2AhwgAyABNgIUIANBlR42AhAgA0ENNgIMDKsCCyADQQA2AhwgAyABNgIUIANBlR42AhAgA0ENNgIMQQAhAgyqAgtBxgEhAgyQAgsgASAERgRAQd8BIQIMqQILAkAgAS0AAEEwa0H/AXEiAkEKSQRAIAFBAWohAQJAIAMvATQiAEGZM0sNACADIABBCmwiADsBNCAAQf7/A3EgAkH//wNzSw0AIAMgACACajsBNAwCC0EAIQIgA0EANgIcIAMgATYCFCADQZUeNgIQIANBDTYCDAyqAgsgA0EANgIcIAMgATYCFCADQZUeNgIQIANBDTYCDEEAIQIMqQILQcUBIQIMjwILIAEgBEYEQEHeASECDKgCCwJAIAEtAABBMGtB/wFxIgJBCkkEQCABQQFqIQECQCADLwE0IgBBmTNLDQAgAyAAQQpsIgA7ATQgAEH+/wNxIAJB//8Dc0sNACADIAAgAmo7ATQMAgtBACECIANBADYCHCADIAE2AhQgA0GVHjYCECADQQ02AgwMqQILIANBADYCHCADIAE2AhQgA0GVHjYCECADQQ02AgxBACECDKgCC0HEASECDI4CCyABIARGBEBB3QEhAgynAgsCQAJAAkACQCABLQAAQQprDhcCAwMAAwMDAwMDAwMDAwMDAwMDAwMDAQMLIAFBAWoMBQsgAUEBaiEBQcMBIQIMjwILIAFBAWohASADQS9qLQAAQQFxDQggA0EANgIcIAMgATYCFCADQY0LNgIQIANBDTYCDEEAIQIMpwILIANBADYCHCADIAE2AhQgA0GNCzYCECADQQ02AgxBACECDKYCCyABIARHBEAgA0EPNgIIIAMgATYCBEEBIQIMjQILQdwBIQIMpQILAkACQANAAkAgAS0AAEEKaw4EAgAAAwALIAQgAUEBaiIBRw0AC0HbASECDKYCCyADKAIEIQAgA0EANgIEIAMgACABEC0iAEUEQCABQQFqIQEMBAsgA0HaATYCHCADIAA2AgwgAyABQQFqNgIUQQAhAgylAgsgAygCBCEAIANBADYCBCADIAAgARAtIgANASABQQFqCyEBQcEBIQIMigILIANB2QE2AhwgAyAANgIMIAMgAUEBajYCFEEAIQIMogILQcIBIQIMiAILIANBL2otAABBAXENASADQQA2AhwgAyABNgIUIANB5Bw2AhAgA0EZNgIMQQAhAgygAgsgASAERgRAQdkBIQIMoAILAkACQAJAIAEtAABBCmsOBAECAgACCyABQQFqIQEMAgsgAUEBaiEBDAELIAMtAC5BwABxRQ0BC0EAIQACQCADKAI4IgJFDQAgAigCPCICRQ0AIAMgAhEAACEACyAARQ2gASAAQRVGBEAgA0HZADYCHCADIAE2AhQgA0G3GjYCECADQRU2AgxBACECDJ8CCyADQQA2AhwgAyABNgIUIANBgA02AhAgA0EbNgIMQQAhAgyeAgsgA0EANgIcIAMgATYCFCADQdwoNgIQIANBAjYCDEEAIQIMnQILIAEgBEcEQCADQQw2AgggAyABNgIEQb8BIQIMhAILQdgBIQIMnAILIAEgBEYEQEHXASECDJwCCwJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkAgAS0AAEHBAGsOFQABAgNaBAUGWlpaBwgJCgsMDQ4PEFoLIAFBAWohAUH7ACECDJICCyABQQFqIQFB/AAhAgyRAgsgAUEBaiEBQYEBIQIMkAILIAFBAWohAUGFASECDI8CCyABQQFqIQFBhgEhAgyOAgsgAUEBaiEBQYkBIQIMjQILIAFBAWohAUGKASECDIwCCyABQQFqIQFBjQEhAgyLAgsgAUEBaiEBQZYBIQIMigILIAFBAWohAUGXASECDIkCCyABQQFqIQFBmAEhAgyIAgsgAUEBaiEBQaUBIQIMhwILIAFBAWohAUGmASECDIYCCyABQQFqIQFBrAEhAgyFAgsgAUEBaiEBQbQBIQIMhAILIAFBAWohAUG3ASECDIMCCyABQQFqIQFBvgEhAgyCAgsgASAERgRAQdYBIQIMmwILIAEtAABBzgBHDUggAUEBaiEBQb0BIQIMgQILIAEgBEYEQEHVASECDJoCCwJAAkACQCABLQAAQcIAaw4SAEpKSkpKSkpKSgFKSkpKSkoCSgsgAUEBaiEBQbgBIQIMggILIAFBAWohAUG7ASECDIECCyABQQFqIQFBvAEhAgyAAgtB1AEhAiABIARGDZgCIAMoAgAiACAEIAFraiEFIAEgAGtBB2ohBgJAA0AgAS0AACAAQajVAGotAABHDUUgAEEHRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADJkCCyADQQA2AgAgBkEBaiEBQRsMRQsgASAERgRAQdMBIQIMmAILAkACQCABLQAAQckAaw4HAEdHR0dHAUcLIAFBAWohAUG5ASECDP8BCyABQQFqIQFBugEhAgz+AQtB0gEhAiABIARGDZYCIAMoAgAiACAEIAFraiEFIAEgAGtBAWohBgJAA0AgAS0AACAAQabVAGotAABHDUMgAEEBRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADJcCCyADQQA2AgAgBkEBaiEBQQ8MQwtB0QEhAiABIARGDZUCIAMoAgAiACAEIAFraiEFIAEgAGtBAWohBgJAA0AgAS0AACAAQaTVAGotAABHDUIgAEEBRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADJYCCyADQQA2AgAgBkEBaiEBQSAMQgtB0AEhAiABIARGDZQCIAMoAgAiACAEIAFraiEFIAEgAGtBAmohBgJAA0AgAS0AACAAQaHVAGotAABHDUEgAEECRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADJUCCyADQQA2AgAgBkEBaiEBQRIMQQsgASAERgRAQc8BIQIMlAILAkACQCABLQAAQcUAaw4OAENDQ0NDQ0NDQ0NDQwFDCyABQQFqIQFBtQEhAgz7AQsgAUEBaiEBQbYBIQIM+gELQc4BIQIgASAERg2SAiADKAIAIgAgBCABa2ohBSABIABrQQJqIQYCQANAIAEtAAAgAEGe1QBqLQAARw0/IABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyTAgsgA0EANgIAIAZBAWohAUEHDD8LQc0BIQIgASAERg2RAiADKAIAIgAgBCABa2ohBSABIABrQQVqIQYCQANAIAEtAAAgAEGY1QBqLQAARw0+IABBBUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAySAgsgA0EANgIAIAZBAWohAUEoDD4LIAEgBEYEQEHMASECDJECCwJAAkACQCABLQAAQcUAaw4RAEFBQUFBQUFBQQFBQUFBQQJBCyABQQFqIQFBsQEhAgz5AQsgAUEBaiEBQbIBIQIM+AELIAFBAWohAUGzASECDPcBC0HLASECIAEgBEYNjwIgAygCACIAIAQgAWtqIQUgASAAa0EGaiEGAkADQCABLQAAIABBkdUAai0AAEcNPCAAQQZGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMkAILIANBADYCACAGQQFqIQFBGgw8C0HKASECIAEgBEYNjgIgAygCACIAIAQgAWtqIQUgASAAa0EDaiEGAkADQCABLQAAIABBjdUAai0AAEcNOyAAQQNGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMjwILIANBADYCACAGQQFqIQFBIQw7CyABIARGBEBByQEhAgyOAgsCQAJAIAEtAABBwQBrDhQAPT09PT09PT09PT09PT09PT09AT0LIAFBAWohAUGtASECDPUBCyABQQFqIQFBsAEhAgz0AQsgASAERgRAQcgBIQIMjQILAkACQCABLQAAQdUAaw4LADw8PDw8PDw8PAE8CyABQQFqIQFBrgEhAgz0AQsgAUEBaiEBQa8BIQIM8wELQccBIQIgASAERg2LAiADKAIAIgAgBCABa2ohBSABIABrQQhqIQYCQANAIAEtAAAgAEGE1QBqLQAARw04IABBCEYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyMAgsgA0EANgIAIAZBAWohAUEqDDgLIAEgBEYEQEHGASECDIsCCyABLQAAQdAARw04IAFBAWohAUElDDcLQcUBIQIgASAERg2JAiADKAIAIgAgBCABa2ohBSABIABrQQJqIQYCQANAIAEtAAAgAEGB1QBqLQAARw02IABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyKAgsgA0EANgIAIAZBAWohAUEODDYLIAEgBEYEQEHEASECDIkCCyABLQAAQcUARw02IAFBAWohAUGrASECDO8BCyABIARGBEBBwwEhAgyIAgsCQAJAAkACQCABLQAAQcIAaw4PAAECOTk5OTk5OTk5OTkDOQsgAUEBaiEBQacBIQIM8QELIAFBAWohAUGoASECDPABCyABQQFqIQFBqQEhAgzvAQsgAUEBaiEBQaoBIQIM7gELQcIBIQIgASAERg2GAiADKAIAIgAgBCABa2ohBSABIABrQQJqIQYCQANAIAEtAAAgAEH+1ABqLQAARw0zIABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyHAgsgA0EANgIAIAZBAWohAUEUDDMLQcEBIQIgASAERg2FAiADKAIAIgAgBCABa2ohBSABIABrQQRqIQYCQANAIAEtAAAgAEH51ABqLQAARw0yIABBBEYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyGAgsgA0EANgIAIAZBAWohAUErDDILQcABIQIgASAERg2EAiADKAIAIgAgBCABa2ohBSABIABrQQJqIQYCQANAIAEtAAAgAEH21ABqLQAARw0xIABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyFAgsgA0EANgIAIAZBAWohAUEsDDELQb8BIQIgASAERg2DAiADKAIAIgAgBCABa2ohBSABIABrQQJqIQYCQANAIAEtAAAgAEGh1QBqLQAARw0wIABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyEAgsgA0EANgIAIAZBAWohAUERDDALQb4BIQIgASAERg2CAiADKAIAIgAgBCABa2ohBSABIABrQQNqIQYCQANAIAEtAAAgAEHy1ABqLQAARw0vIABBA0YNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyDAgsgA0EANgIAIAZBAWohAUEuDC8LIAEgBEYEQEG9ASECDIICCwJAAkACQAJAAkAgAS0AAEHBAGsOFQA0NDQ0NDQ0NDQ0ATQ0AjQ0AzQ0BDQLIAFBAWohAUGbASECDOwBCyABQQFqIQFBnAEhAgzrAQsgAUEBaiEBQZ0BIQIM6gELIAFBAWohAUGiASECDOkBCyABQQFqIQFBpAEhAgzoAQsgASAERgRAQbwBIQIMgQILAkACQCABLQAAQdIAaw4DADABMAsgAUEBaiEBQaMBIQIM6AELIAFBAWohAUEEDC0LQbsBIQIgASAERg3/ASADKAIAIgAgBCABa2ohBSABIABrQQFqIQYCQANAIAEtAAAgAEHw1ABqLQAARw0sIABBAUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyAAgsgA0EANgIAIAZBAWohAUEdDCwLIAEgBEYEQEG6ASECDP8BCwJAAkAgAS0AAEHJAGsOBwEuLi4uLgAuCyABQQFqIQFBoQEhAgzmAQsgAUEBaiEBQSIMKwsgASAERgRAQbkBIQIM/gELIAEtAABB0ABHDSsgAUEBaiEBQaABIQIM5AELIAEgBEYEQEG4ASECDP0BCwJAAkAgAS0AAEHGAGsOCwAsLCwsLCwsLCwBLAsgAUEBaiEBQZ4BIQIM5AELIAFBAWohAUGfASECDOMBC0G3ASECIAEgBEYN+wEgAygCACIAIAQgAWtqIQUgASAAa0EDaiEGAkADQCABLQAAIABB7NQAai0AAEcNKCAAQQNGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM/AELIANBADYCACAGQQFqIQFBDQwoC0G2ASECIAEgBEYN+gEgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABBodUAai0AAEcNJyAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM+wELIANBADYCACAGQQFqIQFBDAwnC0G1ASECIAEgBEYN+QEgAygCACIAIAQgAWtqIQUgASAAa0EBaiEGAkADQCABLQAAIABB6tQAai0AAEcNJiAAQQFGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM+gELIANBADYCACAGQQFqIQFBAwwmC0G0ASECIAEgBEYN+AEgAygCACIAIAQgAWtqIQUgASAAa0EBaiEGAkADQCABLQAAIABB6NQAai0AAEcNJSAAQQFGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM+QELIANBADYCACAGQQFqIQFBJgwlCyABIARGBEBBswEhAgz4AQsCQAJAIAEtAABB1ABrDgIAAScLIAFBAWohAUGZASECDN8BCyABQQFqIQFBmgEhAgzeAQtBsgEhAiABIARGDfYBIAMoAgAiACAEIAFraiEFIAEgAGtBAWohBgJAA0AgAS0AACAAQebUAGotAABHDSMgAEEBRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADPcBCyADQQA2AgAgBkEBaiEBQScMIwtBsQEhAiABIARGDfUBIAMoAgAiACAEIAFraiEFIAEgAGtBAWohBgJAA0AgAS0AACAAQeTUAGotAABHDSIgAEEBRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADPYBCyADQQA2AgAgBkEBaiEBQRwMIgtBsAEhAiABIARGDfQBIAMoAgAiACAEIAFraiEFIAEgAGtBBWohBgJAA0AgAS0AACAAQd7UAGotAABHDSEgAEEFRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADPUBCyADQQA2AgAgBkEBaiEBQQYMIQtBrwEhAiABIARGDfMBIAMoAgAiACAEIAFraiEFIAEgAGtBBGohBgJAA0AgAS0AACAAQdnUAGotAABHDSAgAEEERg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADPQBCyADQQA2AgAgBkEBaiEBQRkMIAsgASAERgRAQa4BIQIM8wELAkACQAJAAkAgAS0AAEEtaw4jACQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkASQkJCQkAiQkJAMkCyABQQFqIQFBjgEhAgzcAQsgAUEBaiEBQY8BIQIM2wELIAFBAWohAUGUASECDNoBCyABQQFqIQFBlQEhAgzZAQtBrQEhAiABIARGDfEBIAMoAgAiACAEIAFraiEFIAEgAGtBAWohBgJAA0AgAS0AACAAQdfUAGotAABHDR4gAEEBRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADPIBCyADQQA2AgAgBkEBaiEBQQsMHgsgASAERgRAQawBIQIM8QELAkACQCABLQAAQcEAaw4DACABIAsgAUEBaiEBQZABIQIM2AELIAFBAWohAUGTASECDNcBCyABIARGBEBBqwEhAgzwAQsCQAJAIAEtAABBwQBrDg8AHx8fHx8fHx8fHx8fHwEfCyABQQFqIQFBkQEhAgzXAQsgAUEBaiEBQZIBIQIM1gELIAEgBEYEQEGqASECDO8BCyABLQAAQcwARw0cIAFBAWohAUEKDBsLQakBIQIgASAERg3tASADKAIAIgAgBCABa2ohBSABIABrQQVqIQYCQANAIAEtAAAgAEHR1ABqLQAARw0aIABBBUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzuAQsgA0EANgIAIAZBAWohAUEeDBoLQagBIQIgASAERg3sASADKAIAIgAgBCABa2ohBSABIABrQQZqIQYCQANAIAEtAAAgAEHK1ABqLQAARw0ZIABBBkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAztAQsgA0EANgIAIAZBAWohAUEVDBkLQacBIQIgASAERg3rASADKAIAIgAgBCABa2ohBSABIABrQQJqIQYCQANAIAEtAAAgAEHH1ABqLQAARw0YIABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzsAQsgA0EANgIAIAZBAWohAUEXDBgLQaYBIQIgASAERg3qASADKAIAIgAgBCABa2ohBSABIABrQQVqIQYCQANAIAEtAAAgAEHB1ABqLQAARw0XIABBBUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzrAQsgA0EANgIAIAZBAWohAUEYDBcLIAEgBEYEQEGlASECDOoBCwJAAkAgAS0AAEHJAGsOBwAZGRkZGQEZCyABQQFqIQFBiwEhAgzRAQsgAUEBaiEBQYwBIQIM0AELQaQBIQIgASAERg3oASADKAIAIgAgBCABa2ohBSABIABrQQFqIQYCQANAIAEtAAAgAEGm1QBqLQAARw0VIABBAUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzpAQsgA0EANgIAIAZBAWohAUEJDBULQaMBIQIgASAERg3nASADKAIAIgAgBCABa2ohBSABIABrQQFqIQYCQANAIAEtAAAgAEGk1QBqLQAARw0UIABBAUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzoAQsgA0EANgIAIAZBAWohAUEfDBQLQaIBIQIgASAERg3mASADKAIAIgAgBCABa2ohBSABIABrQQJqIQYCQANAIAEtAAAgAEG+1ABqLQAARw0TIABBAkYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAznAQsgA0EANgIAIAZBAWohAUECDBMLQaEBIQIgASAERg3lASADKAIAIgAgBCABa2ohBSABIABrQQFqIQYDQCABLQAAIABBvNQAai0AAEcNESAAQQFGDQIgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM5QELIAEgBEYEQEGgASECDOUBC0EBIAEtAABB3wBHDREaIAFBAWohAUGHASECDMsBCyADQQA2AgAgBkEBaiEBQYgBIQIMygELQZ8BIQIgASAERg3iASADKAIAIgAgBCABa2ohBSABIABrQQhqIQYCQANAIAEtAAAgAEGE1QBqLQAARw0PIABBCEYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAzjAQsgA0EANgIAIAZBAWohAUEpDA8LQZ4BIQIgASAERg3hASADKAIAIgAgBCABa2ohBSABIABrQQNqIQYCQANAIAEtAAAgAEG41ABqLQAARw0OIABBA0YNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAziAQsgA0EANgIAIAZBAWohAUEtDA4LIAEgBEYEQEGdASECDOEBCyABLQAAQcUARw0OIAFBAWohAUGEASECDMcBCyABIARGBEBBnAEhAgzgAQsCQAJAIAEtAABBzABrDggADw8PDw8PAQ8LIAFBAWohAUGCASECDMcBCyABQQFqIQFBgwEhAgzGAQtBmwEhAiABIARGDd4BIAMoAgAiACAEIAFraiEFIAEgAGtBBGohBgJAA0AgAS0AACAAQbPUAGotAABHDQsgAEEERg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADN8BCyADQQA2AgAgBkEBaiEBQSMMCwtBmgEhAiABIARGDd0BIAMoAgAiACAEIAFraiEFIAEgAGtBAmohBgJAA0AgAS0AACAAQbDUAGotAABHDQogAEECRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADN4BCyADQQA2AgAgBkEBaiEBQQAMCgsgASAERgRAQZkBIQIM3QELAkACQCABLQAAQcgAaw4IAAwMDAwMDAEMCyABQQFqIQFB/QAhAgzEAQsgAUEBaiEBQYABIQIMwwELIAEgBEYEQEGYASECDNwBCwJAAkAgAS0AAEHOAGsOAwALAQsLIAFBAWohAUH+ACECDMMBCyABQQFqIQFB/wAhAgzCAQsgASAERgRAQZcBIQIM2wELIAEtAABB2QBHDQggAUEBaiEBQQgMBwtBlgEhAiABIARGDdkBIAMoAgAiACAEIAFraiEFIAEgAGtBA2ohBgJAA0AgAS0AACAAQazUAGotAABHDQYgAEEDRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADNoBCyADQQA2AgAgBkEBaiEBQQUMBgtBlQEhAiABIARGDdgBIAMoAgAiACAEIAFraiEFIAEgAGtBBWohBgJAA0AgAS0AACAAQabUAGotAABHDQUgAEEFRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADNkBCyADQQA2AgAgBkEBaiEBQRYMBQtBlAEhAiABIARGDdcBIAMoAgAiACAEIAFraiEFIAEgAGtBAmohBgJAA0AgAS0AACAAQaHVAGotAABHDQQgAEECRg0BIABBAWohACAEIAFBAWoiAUcNAAsgAyAFNgIADNgBCyADQQA2AgAgBkEBaiEBQRAMBAsgASAERgRAQZMBIQIM1wELAkACQCABLQAAQcMAaw4MAAYGBgYGBgYGBgYBBgsgAUEBaiEBQfkAIQIMvgELIAFBAWohAUH6ACECDL0BC0GSASECIAEgBEYN1QEgAygCACIAIAQgAWtqIQUgASAAa0EFaiEGAkADQCABLQAAIABBoNQAai0AAEcNAiAAQQVGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAM1gELIANBADYCACAGQQFqIQFBJAwCCyADQQA2AgAMAgsgASAERgRAQZEBIQIM1AELIAEtAABBzABHDQEgAUEBaiEBQRMLOgApIAMoAgQhACADQQA2AgQgAyAAIAEQLiIADQIMAQtBACECIANBADYCHCADIAE2AhQgA0H+HzYCECADQQY2AgwM0QELQfgAIQIMtwELIANBkAE2AhwgAyABNgIUIAMgADYCDEEAIQIMzwELQQAhAAJAIAMoAjgiAkUNACACKAJAIgJFDQAgAyACEQAAIQALIABFDQAgAEEVRg0BIANBADYCHCADIAE2AhQgA0GCDzYCECADQSA2AgxBACECDM4BC0H3ACECDLQBCyADQY8BNgIcIAMgATYCFCADQewbNgIQIANBFTYCDEEAIQIMzAELIAEgBEYEQEGPASECDMwBCwJAIAEtAABBIEYEQCABQQFqIQEMAQsgA0EANgIcIAMgATYCFCADQZsfNgIQIANBBjYCDEEAIQIMzAELQQIhAgyyAQsDQCABLQAAQSBHDQIgBCABQQFqIgFHDQALQY4BIQIMygELIAEgBEYEQEGNASECDMoBCwJAIAEtAABBCWsOBEoAAEoAC0H1ACECDLABCyADLQApQQVGBEBB9gAhAgywAQtB9AAhAgyvAQsgASAERgRAQYwBIQIMyAELIANBEDYCCCADIAE2AgQMCgsgASAERgRAQYsBIQIMxwELAkAgAS0AAEEJaw4ERwAARwALQfMAIQIMrQELIAEgBEcEQCADQRA2AgggAyABNgIEQfEAIQIMrQELQYoBIQIMxQELAkAgASAERwRAA0AgAS0AAEGg0ABqLQAAIgBBA0cEQAJAIABBAWsOAkkABAtB8AAhAgyvAQsgBCABQQFqIgFHDQALQYgBIQIMxgELQYgBIQIMxQELIANBADYCHCADIAE2AhQgA0HbIDYCECADQQc2AgxBACECDMQBCyABIARGBEBBiQEhAgzEAQsCQAJAAkAgAS0AAEGg0gBqLQAAQQFrDgNGAgABC0HyACECDKwBCyADQQA2AhwgAyABNgIUIANBtBI2AhAgA0EHNgIMQQAhAgzEAQtB6gAhAgyqAQsgASAERwRAIAFBAWohAUHvACECDKoBC0GHASECDMIBCyAEIAEiAEYEQEGGASECDMIBCyAALQAAIgFBL0YEQCAAQQFqIQFB7gAhAgypAQsgAUEJayICQRdLDQEgACEBQQEgAnRBm4CABHENQQwBCyAEIAEiAEYEQEGFASECDMEBCyAALQAAQS9HDQAgAEEBaiEBDAMLQQAhAiADQQA2AhwgAyAANgIUIANB2yA2AhAgA0EHNgIMDL8BCwJAAkACQAJAAkADQCABLQAAQaDOAGotAAAiAEEFRwRAAkACQCAAQQFrDghHBQYHCAAEAQgLQesAIQIMrQELIAFBAWohAUHtACECDKwBCyAEIAFBAWoiAUcNAAtBhAEhAgzDAQsgAUEBagwUCyADKAIEIQAgA0EANgIEIAMgACABECwiAEUNHiADQdsANgIcIAMgATYCFCADIAA2AgxBACECDMEBCyADKAIEIQAgA0EANgIEIAMgACABECwiAEUNHiADQd0ANgIcIAMgATYCFCADIAA2AgxBACECDMABCyADKAIEIQAgA0EANgIEIAMgACABECwiAEUNHiADQfoANgIcIAMgATYCFCADIAA2AgxBACECDL8BCyADQQA2AhwgAyABNgIUIANB+Q82AhAgA0EHNgIMQQAhAgy+AQsgASAERgRAQYMBIQIMvgELAkAgAS0AAEGgzgBqLQAAQQFrDgg+BAUGAAgCAwcLIAFBAWohAQtBAyECDKMBCyABQQFqDA0LQQAhAiADQQA2AhwgA0HREjYCECADQQc2AgwgAyABQQFqNgIUDLoBCyADKAIEIQAgA0EANgIEIAMgACABECwiAEUNFiADQdsANgIcIAMgATYCFCADIAA2AgxBACECDLkBCyADKAIEIQAgA0EANgIEIAMgACABECwiAEUNFiADQd0ANgIcIAMgATYCFCADIAA2AgxBACECDLgBCyADKAIEIQAgA0EANgIEIAMgACABECwiAEUNFiADQfoANgIcIAMgATYCFCADIAA2AgxBACECDLcBCyADQQA2AhwgAyABNgIUIANB+Q82AhAgA0EHNgIMQQAhAgy2AQtB7AAhAgycAQsgASAERgRAQYIBIQIMtQELIAFBAWoMAgsgASAERgRAQYEBIQIMtAELIAFBAWoMAQsgASAERg0BIAFBAWoLIQFBBCECDJgBC0GAASECDLABCwNAIAEtAABBoMwAai0AACIAQQJHBEAgAEEBRwRAQekAIQIMmQELDDELIAQgAUEBaiIBRw0AC0H/ACECDK8BCyABIARGBEBB/gAhAgyvAQsCQCABLQAAQQlrDjcvAwYvBAYGBgYGBgYGBgYGBgYGBgYGBgUGBgIGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYABgsgAUEBagshAUEFIQIMlAELIAFBAWoMBgsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDQggA0HbADYCHCADIAE2AhQgAyAANgIMQQAhAgyrAQsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDQggA0HdADYCHCADIAE2AhQgAyAANgIMQQAhAgyqAQsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDQggA0H6ADYCHCADIAE2AhQgAyAANgIMQQAhAgypAQsgA0EANgIcIAMgATYCFCADQY0UNgIQIANBBzYCDEEAIQIMqAELAkACQAJAAkADQCABLQAAQaDKAGotAAAiAEEFRwRAAkAgAEEBaw4GLgMEBQYABgtB6AAhAgyUAQsgBCABQQFqIgFHDQALQf0AIQIMqwELIAMoAgQhACADQQA2AgQgAyAAIAEQLCIARQ0HIANB2wA2AhwgAyABNgIUIAMgADYCDEEAIQIMqgELIAMoAgQhACADQQA2AgQgAyAAIAEQLCIARQ0HIANB3QA2AhwgAyABNgIUIAMgADYCDEEAIQIMqQELIAMoAgQhACADQQA2AgQgAyAAIAEQLCIARQ0HIANB+gA2AhwgAyABNgIUIAMgADYCDEEAIQIMqAELIANBADYCHCADIAE2AhQgA0HkCDYCECADQQc2AgxBACECDKcBCyABIARGDQEgAUEBagshAUEGIQIMjAELQfwAIQIMpAELAkACQAJAAkADQCABLQAAQaDIAGotAAAiAEEFRwRAIABBAWsOBCkCAwQFCyAEIAFBAWoiAUcNAAtB+wAhAgynAQsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDQMgA0HbADYCHCADIAE2AhQgAyAANgIMQQAhAgymAQsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDQMgA0HdADYCHCADIAE2AhQgAyAANgIMQQAhAgylAQsgAygCBCEAIANBADYCBCADIAAgARAsIgBFDQMgA0H6ADYCHCADIAE2AhQgAyAANgIMQQAhAgykAQsgA0EANgIcIAMgATYCFCADQbwKNgIQIANBBzYCDEEAIQIMowELQc8AIQIMiQELQdEAIQIMiAELQecAIQIMhwELIAEgBEYEQEH6ACECDKABCwJAIAEtAABBCWsOBCAAACAACyABQQFqIQFB5gAhAgyGAQsgASAERgRAQfkAIQIMnwELAkAgAS0AAEEJaw4EHwAAHwALQQAhAAJAIAMoAjgiAkUNACACKAI4IgJFDQAgAyACEQAAIQALIABFBEBB4gEhAgyGAQsgAEEVRwRAIANBADYCHCADIAE2AhQgA0HJDTYCECADQRo2AgxBACECDJ8BCyADQfgANgIcIAMgATYCFCADQeoaNgIQIANBFTYCDEEAIQIMngELIAEgBEcEQCADQQ02AgggAyABNgIEQeQAIQIMhQELQfcAIQIMnQELIAEgBEYEQEH2ACECDJ0BCwJAAkACQCABLQAAQcgAaw4LAAELCwsLCwsLCwILCyABQQFqIQFB3QAhAgyFAQsgAUEBaiEBQeAAIQIMhAELIAFBAWohAUHjACECDIMBC0H1ACECIAEgBEYNmwEgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABBtdUAai0AAEcNCCAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMnAELIAMoAgQhACADQgA3AwAgAyAAIAZBAWoiARArIgAEQCADQfQANgIcIAMgATYCFCADIAA2AgxBACECDJwBC0HiACECDIIBC0EAIQACQCADKAI4IgJFDQAgAigCNCICRQ0AIAMgAhEAACEACwJAIAAEQCAAQRVGDQEgA0EANgIcIAMgATYCFCADQeoNNgIQIANBJjYCDEEAIQIMnAELQeEAIQIMggELIANB8wA2AhwgAyABNgIUIANBgBs2AhAgA0EVNgIMQQAhAgyaAQsgAy0AKSIAQSNrQQtJDQkCQCAAQQZLDQBBASAAdEHKAHFFDQAMCgtBACECIANBADYCHCADIAE2AhQgA0HtCTYCECADQQg2AgwMmQELQfIAIQIgASAERg2YASADKAIAIgAgBCABa2ohBSABIABrQQFqIQYCQANAIAEtAAAgAEGz1QBqLQAARw0FIABBAUYNASAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAyZAQsgAygCBCEAIANCADcDACADIAAgBkEBaiIBECsiAARAIANB8QA2AhwgAyABNgIUIAMgADYCDEEAIQIMmQELQd8AIQIMfwtBACEAAkAgAygCOCICRQ0AIAIoAjQiAkUNACADIAIRAAAhAAsCQCAABEAgAEEVRg0BIANBADYCHCADIAE2AhQgA0HqDTYCECADQSY2AgxBACECDJkBC0HeACECDH8LIANB8AA2AhwgAyABNgIUIANBgBs2AhAgA0EVNgIMQQAhAgyXAQsgAy0AKUEhRg0GIANBADYCHCADIAE2AhQgA0GRCjYCECADQQg2AgxBACECDJYBC0HvACECIAEgBEYNlQEgAygCACIAIAQgAWtqIQUgASAAa0ECaiEGAkADQCABLQAAIABBsNUAai0AAEcNAiAAQQJGDQEgAEEBaiEAIAQgAUEBaiIBRw0ACyADIAU2AgAMlgELIAMoAgQhACADQgA3AwAgAyAAIAZBAWoiARArIgBFDQIgA0HtADYCHCADIAE2AhQgAyAANgIMQQAhAgyVAQsgA0EANgIACyADKAIEIQAgA0EANgIEIAMgACABECsiAEUNgAEgA0HuADYCHCADIAE2AhQgAyAANgIMQQAhAgyTAQtB3AAhAgx5C0EAIQACQCADKAI4IgJFDQAgAigCNCICRQ0AIAMgAhEAACEACwJAIAAEQCAAQRVGDQEgA0EANgIcIAMgATYCFCADQeoNNgIQIANBJjYCDEEAIQIMkwELQdsAIQIMeQsgA0HsADYCHCADIAE2AhQgA0GAGzYCECADQRU2AgxBACECDJEBCyADLQApIgBBI0kNACAAQS5GDQAgA0EANgIcIAMgATYCFCADQckJNgIQIANBCDYCDEEAIQIMkAELQdoAIQIMdgsgASAERgRAQesAIQIMjwELAkAgAS0AAEEvRgRAIAFBAWohAQwBCyADQQA2AhwgAyABNgIUIANBsjg2AhAgA0EINgIMQQAhAgyPAQtB2QAhAgx1CyABIARHBEAgA0EONgIIIAMgATYCBEHYACECDHULQeoAIQIMjQELIAEgBEYEQEHpACECDI0BCyABLQAAQTBrIgBB/wFxQQpJBEAgAyAAOgAqIAFBAWohAUHXACECDHQLIAMoAgQhACADQQA2AgQgAyAAIAEQLyIARQ16IANB6AA2AhwgAyABNgIUIAMgADYCDEEAIQIMjAELIAEgBEYEQEHnACECDIwBCwJAIAEtAABBLkYEQCABQQFqIQEMAQsgAygCBCEAIANBADYCBCADIAAgARAvIgBFDXsgA0HmADYCHCADIAE2AhQgAyAANgIMQQAhAgyMAQtB1gAhAgxyCyABIARGBEBB5QAhAgyLAQtBACEAQQEhBUEBIQdBACECAkACQAJAAkACQAJ/AkACQAJAAkACQAJAAkAgAS0AAEEwaw4KCgkAAQIDBAUGCAsLQQIMBgtBAwwFC0EEDAQLQQUMAwtBBgwCC0EHDAELQQgLIQJBACEFQQAhBwwCC0EJIQJBASEAQQAhBUEAIQcMAQtBACEFQQEhAgsgAyACOgArIAFBAWohAQJAAkAgAy0ALkEQcQ0AAkACQAJAIAMtACoOAwEAAgQLIAdFDQMMAgsgAA0BDAILIAVFDQELIAMoAgQhACADQQA2AgQgAyAAIAEQLyIARQ0CIANB4gA2AhwgAyABNgIUIAMgADYCDEEAIQIMjQELIAMoAgQhACADQQA2AgQgAyAAIAEQLyIARQ19IANB4wA2AhwgAyABNgIUIAMgADYCDEEAIQIMjAELIAMoAgQhACADQQA2AgQgAyAAIAEQLyIARQ17IANB5AA2AhwgAyABNgIUIAMgADYCDAyLAQtB1AAhAgxxCyADLQApQSJGDYYBQdMAIQIMcAtBACEAAkAgAygCOCICRQ0AIAIoAkQiAkUNACADIAIRAAAhAAsgAEUEQEHVACECDHALIABBFUcEQCADQQA2AhwgAyABNgIUIANBpA02AhAgA0EhNgIMQQAhAgyJAQsgA0HhADYCHCADIAE2AhQgA0HQGjYCECADQRU2AgxBACECDIgBCyABIARGBEBB4AAhAgyIAQsCQAJAAkACQAJAIAEtAABBCmsOBAEEBAAECyABQQFqIQEMAQsgAUEBaiEBIANBL2otAABBAXFFDQELQdIAIQIMcAsgA0EANgIcIAMgATYCFCADQbYRNgIQIANBCTYCDEEAIQIMiAELIANBADYCHCADIAE2AhQgA0G2ETYCECADQQk2AgxBACECDIcBCyABIARGBEBB3wAhAgyHAQsgAS0AAEEKRgRAIAFBAWohAQwJCyADLQAuQcAAcQ0IIANBADYCHCADIAE2AhQgA0G2ETYCECADQQI2AgxBACECDIYBCyABIARGBEBB3QAhAgyGAQsgAS0AACICQQ1GBEAgAUEBaiEBQdAAIQIMbQsgASEAIAJBCWsOBAUBAQUBCyAEIAEiAEYEQEHcACECDIUBCyAALQAAQQpHDQAgAEEBagwCC0EAIQIgA0EANgIcIAMgADYCFCADQcotNgIQIANBBzYCDAyDAQsgASAERgRAQdsAIQIMgwELAkAgAS0AAEEJaw4EAwAAAwALIAFBAWoLIQFBzgAhAgxoCyABIARGBEBB2gAhAgyBAQsgAS0AAEEJaw4EAAEBAAELQQAhAiADQQA2AhwgA0GaEjYCECADQQc2AgwgAyABQQFqNgIUDH8LIANBgBI7ASpBACEAAkAgAygCOCICRQ0AIAIoAjgiAkUNACADIAIRAAAhAAsgAEUNACAAQRVHDQEgA0HZADYCHCADIAE2AhQgA0HqGjYCECADQRU2AgxBACECDH4LQc0AIQIMZAsgA0EANgIcIAMgATYCFCADQckNNgIQIANBGjYCDEEAIQIMfAsgASAERgRAQdkAIQIMfAsgAS0AAEEgRw09IAFBAWohASADLQAuQQFxDT0gA0EANgIcIAMgATYCFCADQcIcNgIQIANBHjYCDEEAIQIMewsgASAERgRAQdgAIQIMewsCQAJAAkACQAJAIAEtAAAiAEEKaw4EAgMDAAELIAFBAWohAUEsIQIMZQsgAEE6Rw0BIANBADYCHCADIAE2AhQgA0HnETYCECADQQo2AgxBACECDH0LIAFBAWohASADQS9qLQAAQQFxRQ1zIAMtADJBgAFxRQRAIANBMmohAiADEDVBACEAAkAgAygCOCIGRQ0AIAYoAigiBkUNACADIAYRAAAhAAsCQAJAIAAOFk1MSwEBAQEBAQEBAQEBAQEBAQEBAQABCyADQSk2AhwgAyABNgIUIANBrBk2AhAgA0EVNgIMQQAhAgx+CyADQQA2AhwgAyABNgIUIANB5Qs2AhAgA0ERNgIMQQAhAgx9C0EAIQACQCADKAI4IgJFDQAgAigCXCICRQ0AIAMgAhEAACEACyAARQ1ZIABBFUcNASADQQU2AhwgAyABNgIUIANBmxs2AhAgA0EVNgIMQQAhAgx8C0HLACECDGILQQAhAiADQQA2AhwgAyABNgIUIANBkA42AhAgA0EUNgIMDHoLIAMgAy8BMkGAAXI7ATIMOwsgASAERwRAIANBETYCCCADIAE2AgRBygAhAgxgC0HXACECDHgLIAEgBEYEQEHWACECDHgLAkACQAJAAkAgAS0AACIAQSByIAAgAEHBAGtB/wFxQRpJG0H/AXFB4wBrDhMAQEBAQEBAQEBAQEBAAUBAQAIDQAsgAUEBaiEBQcYAIQIMYQsgAUEBaiEBQccAIQIMYAsgAUEBaiEBQcgAIQIMXwsgAUEBaiEBQckAIQIMXgtB1QAhAiAEIAEiAEYNdiAEIAFrIAMoAgAiAWohBiAAIAFrQQVqIQcDQCABQZDIAGotAAAgAC0AACIFQSByIAUgBUHBAGtB/wFxQRpJG0H/AXFHDQhBBCABQQVGDQoaIAFBAWohASAEIABBAWoiAEcNAAsgAyAGNgIADHYLQdQAIQIgBCABIgBGDXUgBCABayADKAIAIgFqIQYgACABa0EPaiEHA0AgAUGAyABqLQAAIAAtAAAiBUEgciAFIAVBwQBrQf8BcUEaSRtB/wFxRw0HQQMgAUEPRg0JGiABQQFqIQEgBCAAQQFqIgBHDQALIAMgBjYCAAx1C0HTACECIAQgASIARg10IAQgAWsgAygCACIBaiEGIAAgAWtBDmohBwNAIAFB4scAai0AACAALQAAIgVBIHIgBSAFQcEAa0H/AXFBGkkbQf8BcUcNBiABQQ5GDQcgAUEBaiEBIAQgAEEBaiIARw0ACyADIAY2AgAMdAtB0gAhAiAEIAEiAEYNcyAEIAFrIAMoAgAiAWohBSAAIAFrQQFqIQYDQCABQeDHAGotAAAgAC0AACIHQSByIAcgB0HBAGtB/wFxQRpJG0H/AXFHDQUgAUEBRg0CIAFBAWohASAEIABBAWoiAEcNAAsgAyAFNgIADHMLIAEgBEYEQEHRACECDHMLAkACQCABLQAAIgBBIHIgACAAQcEAa0H/AXFBGkkbQf8BcUHuAGsOBwA5OTk5OQE5CyABQQFqIQFBwwAhAgxaCyABQQFqIQFBxAAhAgxZCyADQQA2AgAgBkEBaiEBQcUAIQIMWAtB0AAhAiAEIAEiAEYNcCAEIAFrIAMoAgAiAWohBiAAIAFrQQlqIQcDQCABQdbHAGotAAAgAC0AACIFQSByIAUgBUHBAGtB/wFxQRpJG0H/AXFHDQJBAiABQQlGDQQaIAFBAWohASAEIABBAWoiAEcNAAsgAyAGNgIADHALQc8AIQIgBCABIgBGDW8gBCABayADKAIAIgFqIQYgACABa0EFaiEHA0AgAUHQxwBqLQAAIAAtAAAiBUEgciAFIAVBwQBrQf8BcUEaSRtB/wFxRw0BIAFBBUYNAiABQQFqIQEgBCAAQQFqIgBHDQALIAMgBjYCAAxvCyAAIQEgA0EANgIADDMLQQELOgAsIANBADYCACAHQQFqIQELQS0hAgxSCwJAA0AgAS0AAEHQxQBqLQAAQQFHDQEgBCABQQFqIgFHDQALQc0AIQIMawtBwgAhAgxRCyABIARGBEBBzAAhAgxqCyABLQAAQTpGBEAgAygCBCEAIANBADYCBCADIAAgARAwIgBFDTMgA0HLADYCHCADIAA2AgwgAyABQQFqNgIUQQAhAgxqCyADQQA2AhwgAyABNgIUIANB5xE2AhAgA0EKNgIMQQAhAgxpCwJAAkAgAy0ALEECaw4CAAEnCyADQTNqLQAAQQJxRQ0mIAMtAC5BAnENJiADQQA2AhwgAyABNgIUIANBphQ2AhAgA0ELNgIMQQAhAgxpCyADLQAyQSBxRQ0lIAMtAC5BAnENJSADQQA2AhwgAyABNgIUIANBvRM2AhAgA0EPNgIMQQAhAgxoC0EAIQACQCADKAI4IgJFDQAgAigCSCICRQ0AIAMgAhEAACEACyAARQRAQcEAIQIMTwsgAEEVRwRAIANBADYCHCADIAE2AhQgA0GmDzYCECADQRw2AgxBACECDGgLIANBygA2AhwgAyABNgIUIANBhRw2AhAgA0EVNgIMQQAhAgxnCyABIARHBEAgASECA0AgBCACIgFrQRBOBEAgAUEQaiEC/Qz/////////////////////IAH9AAAAIg1BB/1sIA39DODg4ODg4ODg4ODg4ODg4OD9bv0MX19fX19fX19fX19fX19fX/0mIA39DAkJCQkJCQkJCQkJCQkJCQn9I/1Q/VL9ZEF/c2giAEEQRg0BIAAgAWohAQwYCyABIARGBEBBxAAhAgxpCyABLQAAQcDBAGotAABBAUcNFyAEIAFBAWoiAkcNAAtBxAAhAgxnC0HEACECDGYLIAEgBEcEQANAAkAgAS0AACIAQSByIAAgAEHBAGtB/wFxQRpJG0H/AXEiAEEJRg0AIABBIEYNAAJAAkACQAJAIABB4wBrDhMAAwMDAwMDAwEDAwMDAwMDAwMCAwsgAUEBaiEBQTYhAgxSCyABQQFqIQFBNyECDFELIAFBAWohAUE4IQIMUAsMFQsgBCABQQFqIgFHDQALQTwhAgxmC0E8IQIMZQsgASAERgRAQcgAIQIMZQsgA0ESNgIIIAMgATYCBAJAAkACQAJAAkAgAy0ALEEBaw4EFAABAgkLIAMtADJBIHENA0HgASECDE8LAkAgAy8BMiIAQQhxRQ0AIAMtAChBAUcNACADLQAuQQhxRQ0CCyADIABB9/sDcUGABHI7ATIMCwsgAyADLwEyQRByOwEyDAQLIANBADYCBCADIAEgARAxIgAEQCADQcEANgIcIAMgADYCDCADIAFBAWo2AhRBACECDGYLIAFBAWohAQxYCyADQQA2AhwgAyABNgIUIANB9BM2AhAgA0EENgIMQQAhAgxkC0HHACECIAEgBEYNYyADKAIAIgAgBCABa2ohBSABIABrQQZqIQYCQANAIABBwMUAai0AACABLQAAQSByRw0BIABBBkYNSiAAQQFqIQAgBCABQQFqIgFHDQALIAMgBTYCAAxkCyADQQA2AgAMBQsCQCABIARHBEADQCABLQAAQcDDAGotAAAiAEEBRwRAIABBAkcNAyABQQFqIQEMBQsgBCABQQFqIgFHDQALQcUAIQIMZAtBxQAhAgxjCwsgA0EAOgAsDAELQQshAgxHC0E/IQIMRgsCQAJAA0AgAS0AACIAQSBHBEACQCAAQQprDgQDBQUDAAsgAEEsRg0DDAQLIAQgAUEBaiIBRw0AC0HGACECDGALIANBCDoALAwOCyADLQAoQQFHDQIgAy0ALkEIcQ0CIAMoAgQhACADQQA2AgQgAyAAIAEQMSIABEAgA0HCADYCHCADIAA2AgwgAyABQQFqNgIUQQAhAgxfCyABQQFqIQEMUAtBOyECDEQLAkADQCABLQAAIgBBIEcgAEEJR3ENASAEIAFBAWoiAUcNAAtBwwAhAgxdCwtBPCECDEILAkACQCABIARHBEADQCABLQAAIgBBIEcEQCAAQQprDgQDBAQDBAsgBCABQQFqIgFHDQALQT8hAgxdC0E/IQIMXAsgAyADLwEyQSByOwEyDAoLIAMoAgQhACADQQA2AgQgAyAAIAEQMSIARQ1OIANBPjYCHCADIAE2AhQgAyAANgIMQQAhAgxaCwJAIAEgBEcEQANAIAEtAABBwMMAai0AACIAQQFHBEAgAEECRg0DDAwLIAQgAUEBaiIBRw0AC0E3IQIMWwtBNyECDFoLIAFBAWohAQwEC0E7IQIgBCABIgBGDVggBCABayADKAIAIgFqIQYgACABa0EFaiEHAkADQCABQZDIAGotAAAgAC0AACIFQSByIAUgBUHBAGtB/wFxQRpJG0H/AXFHDQEgAUEFRgRAQQchAQw/CyABQQFqIQEgBCAAQQFqIgBHDQALIAMgBjYCAAxZCyADQQA2AgAgACEBDAULQTohAiAEIAEiAEYNVyAEIAFrIAMoAgAiAWohBiAAIAFrQQhqIQcCQANAIAFBtMEAai0AACAALQAAIgVBIHIgBSAFQcEAa0H/AXFBGkkbQf8BcUcNASABQQhGBEBBBSEBDD4LIAFBAWohASAEIABBAWoiAEcNAAsgAyAGNgIADFgLIANBADYCACAAIQEMBAtBOSECIAQgASIARg1WIAQgAWsgAygCACIBaiEGIAAgAWtBA2ohBwJAA0AgAUGwwQBqLQAAIAAtAAAiBUEgciAFIAVBwQBrQf8BcUEaSRtB/wFxRw0BIAFBA0YEQEEGIQEMPQsgAUEBaiEBIAQgAEEBaiIARw0ACyADIAY2AgAMVwsgA0EANgIAIAAhAQwDCwJAA0AgAS0AACIAQSBHBEAgAEEKaw4EBwQEBwILIAQgAUEBaiIBRw0AC0E4IQIMVgsgAEEsRw0BIAFBAWohAEEBIQECQAJAAkACQAJAIAMtACxBBWsOBAMBAgQACyAAIQEMBAtBAiEBDAELQQQhAQsgA0EBOgAsIAMgAy8BMiABcjsBMiAAIQEMAQsgAyADLwEyQQhyOwEyIAAhAQtBPiECDDsLIANBADoALAtBOSECDDkLIAEgBEYEQEE2IQIMUgsCQAJAAkACQAJAIAEtAABBCmsOBAACAgECCyADKAIEIQAgA0EANgIEIAMgACABEDEiAEUNAiADQTM2AhwgAyABNgIUIAMgADYCDEEAIQIMVQsgAygCBCEAIANBADYCBCADIAAgARAxIgBFBEAgAUEBaiEBDAYLIANBMjYCHCADIAA2AgwgAyABQQFqNgIUQQAhAgxUCyADLQAuQQFxBEBB3wEhAgw7CyADKAIEIQAgA0EANgIEIAMgACABEDEiAA0BDEkLQTQhAgw5CyADQTU2AhwgAyABNgIUIAMgADYCDEEAIQIMUQtBNSECDDcLIANBL2otAABBAXENACADQQA2AhwgAyABNgIUIANB6xY2AhAgA0EZNgIMQQAhAgxPC0EzIQIMNQsgASAERgRAQTIhAgxOCwJAIAEtAABBCkYEQCABQQFqIQEMAQsgA0EANgIcIAMgATYCFCADQZIXNgIQIANBAzYCDEEAIQIMTgtBMiECDDQLIAEgBEYEQEExIQIMTQsCQCABLQAAIgBBCUYNACAAQSBGDQBBASECAkAgAy0ALEEFaw4EBgQFAA0LIAMgAy8BMkEIcjsBMgwMCyADLQAuQQFxRQ0BIAMtACxBCEcNACADQQA6ACwLQT0hAgwyCyADQQA2AhwgAyABNgIUIANBwhY2AhAgA0EKNgIMQQAhAgxKC0ECIQIMAQtBBCECCyADQQE6ACwgAyADLwEyIAJyOwEyDAYLIAEgBEYEQEEwIQIMRwsgAS0AAEEKRgRAIAFBAWohAQwBCyADLQAuQQFxDQAgA0EANgIcIAMgATYCFCADQdwoNgIQIANBAjYCDEEAIQIMRgtBMCECDCwLIAFBAWohAUExIQIMKwsgASAERgRAQS8hAgxECyABLQAAIgBBCUcgAEEgR3FFBEAgAUEBaiEBIAMtAC5BAXENASADQQA2AhwgAyABNgIUIANBlxA2AhAgA0EKNgIMQQAhAgxEC0EBIQICQAJAAkACQAJAAkAgAy0ALEECaw4HBQQEAwECAAQLIAMgAy8BMkEIcjsBMgwDC0ECIQIMAQtBBCECCyADQQE6ACwgAyADLwEyIAJyOwEyC0EvIQIMKwsgA0EANgIcIAMgATYCFCADQYQTNgIQIANBCzYCDEEAIQIMQwtB4QEhAgwpCyABIARGBEBBLiECDEILIANBADYCBCADQRI2AgggAyABIAEQMSIADQELQS4hAgwnCyADQS02AhwgAyABNgIUIAMgADYCDEEAIQIMPwtBACEAAkAgAygCOCICRQ0AIAIoAkwiAkUNACADIAIRAAAhAAsgAEUNACAAQRVHDQEgA0HYADYCHCADIAE2AhQgA0GzGzYCECADQRU2AgxBACECDD4LQcwAIQIMJAsgA0EANgIcIAMgATYCFCADQbMONgIQIANBHTYCDEEAIQIMPAsgASAERgRAQc4AIQIMPAsgAS0AACIAQSBGDQIgAEE6Rg0BCyADQQA6ACxBCSECDCELIAMoAgQhACADQQA2AgQgAyAAIAEQMCIADQEMAgsgAy0ALkEBcQRAQd4BIQIMIAsgAygCBCEAIANBADYCBCADIAAgARAwIgBFDQIgA0EqNgIcIAMgADYCDCADIAFBAWo2AhRBACECDDgLIANBywA2AhwgAyAANgIMIAMgAUEBajYCFEEAIQIMNwsgAUEBaiEBQcAAIQIMHQsgAUEBaiEBDCwLIAEgBEYEQEErIQIMNQsCQCABLQAAQQpGBEAgAUEBaiEBDAELIAMtAC5BwABxRQ0GCyADLQAyQYABcQRAQQAhAAJAIAMoAjgiAkUNACACKAJcIgJFDQAgAyACEQAAIQALIABFDRIgAEEVRgRAIANBBTYCHCADIAE2AhQgA0GbGzYCECADQRU2AgxBACECDDYLIANBADYCHCADIAE2AhQgA0GQDjYCECADQRQ2AgxBACECDDULIANBMmohAiADEDVBACEAAkAgAygCOCIGRQ0AIAYoAigiBkUNACADIAYRAAAhAAsgAA4WAgEABAQEBAQEBAQEBAQEBAQEBAQEAwQLIANBAToAMAsgAiACLwEAQcAAcjsBAAtBKyECDBgLIANBKTYCHCADIAE2AhQgA0GsGTYCECADQRU2AgxBACECDDALIANBADYCHCADIAE2AhQgA0HlCzYCECADQRE2AgxBACECDC8LIANBADYCHCADIAE2AhQgA0GlCzYCECADQQI2AgxBACECDC4LQQEhByADLwEyIgVBCHFFBEAgAykDIEIAUiEHCwJAIAMtADAEQEEBIQAgAy0AKUEFRg0BIAVBwABxRSAHcUUNAQsCQCADLQAoIgJBAkYEQEEBIQAgAy8BNCIGQeUARg0CQQAhACAFQcAAcQ0CIAZB5ABGDQIgBkHmAGtBAkkNAiAGQcwBRg0CIAZBsAJGDQIMAQtBACEAIAVBwABxDQELQQIhACAFQQhxDQAgBUGABHEEQAJAIAJBAUcNACADLQAuQQpxDQBBBSEADAILQQQhAAwBCyAFQSBxRQRAIAMQNkEAR0ECdCEADAELQQBBAyADKQMgUBshAAsgAEEBaw4FAgAHAQMEC0ERIQIMEwsgA0EBOgAxDCkLQQAhAgJAIAMoAjgiAEUNACAAKAIwIgBFDQAgAyAAEQAAIQILIAJFDSYgAkEVRgRAIANBAzYCHCADIAE2AhQgA0HSGzYCECADQRU2AgxBACECDCsLQQAhAiADQQA2AhwgAyABNgIUIANB3Q42AhAgA0ESNgIMDCoLIANBADYCHCADIAE2AhQgA0H5IDYCECADQQ82AgxBACECDCkLQQAhAAJAIAMoAjgiAkUNACACKAIwIgJFDQAgAyACEQAAIQALIAANAQtBDiECDA4LIABBFUYEQCADQQI2AhwgAyABNgIUIANB0hs2AhAgA0EVNgIMQQAhAgwnCyADQQA2AhwgAyABNgIUIANB3Q42AhAgA0ESNgIMQQAhAgwmC0EqIQIMDAsgASAERwRAIANBCTYCCCADIAE2AgRBKSECDAwLQSYhAgwkCyADIAMpAyAiDCAEIAFrrSIKfSILQgAgCyAMWBs3AyAgCiAMVARAQSUhAgwkCyADKAIEIQAgA0EANgIEIAMgACABIAynaiIBEDIiAEUNACADQQU2AhwgAyABNgIUIAMgADYCDEEAIQIMIwtBDyECDAkLQgAhCgJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQCABLQAAQTBrDjcXFgABAgMEBQYHFBQUFBQUFAgJCgsMDRQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUDg8QERITFAtCAiEKDBYLQgMhCgwVC0IEIQoMFAtCBSEKDBMLQgYhCgwSC0IHIQoMEQtCCCEKDBALQgkhCgwPC0IKIQoMDgtCCyEKDA0LQgwhCgwMC0INIQoMCwtCDiEKDAoLQg8hCgwJC0IKIQoMCAtCCyEKDAcLQgwhCgwGC0INIQoMBQtCDiEKDAQLQg8hCgwDCyADQQA2AhwgAyABNgIUIANBnxU2AhAgA0EMNgIMQQAhAgwhCyABIARGBEBBIiECDCELQgAhCgJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkAgAS0AAEEwaw43FRQAAQIDBAUGBxYWFhYWFhYICQoLDA0WFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFg4PEBESExYLQgIhCgwUC0IDIQoMEwtCBCEKDBILQgUhCgwRC0IGIQoMEAtCByEKDA8LQgghCgwOC0IJIQoMDQtCCiEKDAwLQgshCgwLC0IMIQoMCgtCDSEKDAkLQg4hCgwIC0IPIQoMBwtCCiEKDAYLQgshCgwFC0IMIQoMBAtCDSEKDAMLQg4hCgwCC0IPIQoMAQtCASEKCyABQQFqIQEgAykDICILQv//////////D1gEQCADIAtCBIYgCoQ3AyAMAgsgA0EANgIcIAMgATYCFCADQbUJNgIQIANBDDYCDEEAIQIMHgtBJyECDAQLQSghAgwDCyADIAE6ACwgA0EANgIAIAdBAWohAUEMIQIMAgsgA0EANgIAIAZBAWohAUEKIQIMAQsgAUEBaiEBQQghAgwACwALQQAhAiADQQA2AhwgAyABNgIUIANBsjg2AhAgA0EINgIMDBcLQQAhAiADQQA2AhwgAyABNgIUIANBgxE2AhAgA0EJNgIMDBYLQQAhAiADQQA2AhwgAyABNgIUIANB3wo2AhAgA0EJNgIMDBULQQAhAiADQQA2AhwgAyABNgIUIANB7RA2AhAgA0EJNgIMDBQLQQAhAiADQQA2AhwgAyABNgIUIANB0hE2AhAgA0EJNgIMDBMLQQAhAiADQQA2AhwgAyABNgIUIANBsjg2AhAgA0EINgIMDBILQQAhAiADQQA2AhwgAyABNgIUIANBgxE2AhAgA0EJNgIMDBELQQAhAiADQQA2AhwgAyABNgIUIANB3wo2AhAgA0EJNgIMDBALQQAhAiADQQA2AhwgAyABNgIUIANB7RA2AhAgA0EJNgIMDA8LQQAhAiADQQA2AhwgAyABNgIUIANB0hE2AhAgA0EJNgIMDA4LQQAhAiADQQA2AhwgAyABNgIUIANBuRc2AhAgA0EPNgIMDA0LQQAhAiADQQA2AhwgAyABNgIUIANBuRc2AhAgA0EPNgIMDAwLQQAhAiADQQA2AhwgAyABNgIUIANBmRM2AhAgA0ELNgIMDAsLQQAhAiADQQA2AhwgAyABNgIUIANBnQk2AhAgA0ELNgIMDAoLQQAhAiADQQA2AhwgAyABNgIUIANBlxA2AhAgA0EKNgIMDAkLQQAhAiADQQA2AhwgAyABNgIUIANBsRA2AhAgA0EKNgIMDAgLQQAhAiADQQA2AhwgAyABNgIUIANBux02AhAgA0ECNgIMDAcLQQAhAiADQQA2AhwgAyABNgIUIANBlhY2AhAgA0ECNgIMDAYLQQAhAiADQQA2AhwgAyABNgIUIANB+Rg2AhAgA0ECNgIMDAULQQAhAiADQQA2AhwgAyABNgIUIANBxBg2AhAgA0ECNgIMDAQLIANBAjYCHCADIAE2AhQgA0GpHjYCECADQRY2AgxBACECDAMLQd4AIQIgASAERg0CIAlBCGohByADKAIAIQUCQAJAIAEgBEcEQCAFQZbIAGohCCAEIAVqIAFrIQYgBUF/c0EKaiIFIAFqIQADQCABLQAAIAgtAABHBEBBAiEIDAMLIAVFBEBBACEIIAAhAQwDCyAFQQFrIQUgCEEBaiEIIAQgAUEBaiIBRw0ACyAGIQUgBCEBCyAHQQE2AgAgAyAFNgIADAELIANBADYCACAHIAg2AgALIAcgATYCBCAJKAIMIQACQAJAIAkoAghBAWsOAgQBAAsgA0EANgIcIANBwh42AhAgA0EXNgIMIAMgAEEBajYCFEEAIQIMAwsgA0EANgIcIAMgADYCFCADQdceNgIQIANBCTYCDEEAIQIMAgsgASAERgRAQSghAgwCCyADQQk2AgggAyABNgIEQSchAgwBCyABIARGBEBBASECDAELA0ACQAJAAkAgAS0AAEEKaw4EAAEBAAELIAFBAWohAQwBCyABQQFqIQEgAy0ALkEgcQ0AQQAhAiADQQA2AhwgAyABNgIUIANBoSE2AhAgA0EFNgIMDAILQQEhAiABIARHDQALCyAJQRBqJAAgAkUEQCADKAIMIQAMAQsgAyACNgIcQQAhACADKAIEIgFFDQAgAyABIAQgAygCCBEBACIBRQ0AIAMgBDYCFCADIAE2AgwgASEACyAAC74CAQJ/IABBADoAACAAQeQAaiIBQQFrQQA6AAAgAEEAOgACIABBADoAASABQQNrQQA6AAAgAUECa0EAOgAAIABBADoAAyABQQRrQQA6AABBACAAa0EDcSIBIABqIgBBADYCAEHkACABa0F8cSICIABqIgFBBGtBADYCAAJAIAJBCUkNACAAQQA2AgggAEEANgIEIAFBCGtBADYCACABQQxrQQA2AgAgAkEZSQ0AIABBADYCGCAAQQA2AhQgAEEANgIQIABBADYCDCABQRBrQQA2AgAgAUEUa0EANgIAIAFBGGtBADYCACABQRxrQQA2AgAgAiAAQQRxQRhyIgJrIgFBIEkNACAAIAJqIQADQCAAQgA3AxggAEIANwMQIABCADcDCCAAQgA3AwAgAEEgaiEAIAFBIGsiAUEfSw0ACwsLVgEBfwJAIAAoAgwNAAJAAkACQAJAIAAtADEOAwEAAwILIAAoAjgiAUUNACABKAIwIgFFDQAgACABEQAAIgENAwtBAA8LAAsgAEHKGTYCEEEOIQELIAELGgAgACgCDEUEQCAAQd4fNgIQIABBFTYCDAsLFAAgACgCDEEVRgRAIABBADYCDAsLFAAgACgCDEEWRgRAIABBADYCDAsLBwAgACgCDAsHACAAKAIQCwkAIAAgATYCEAsHACAAKAIUCysAAkAgAEEnTw0AQv//////CSAArYhCAYNQDQAgAEECdEHQOGooAgAPCwALFwAgAEEvTwRAAAsgAEECdEHsOWooAgALvwkBAX9B9C0hAQJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAIABB5ABrDvQDY2IAAWFhYWFhYQIDBAVhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhBgcICQoLDA0OD2FhYWFhEGFhYWFhYWFhYWFhEWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYRITFBUWFxgZGhthYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhHB0eHyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2YTc4OTphYWFhYWFhYTthYWE8YWFhYT0+P2FhYWFhYWFhQGFhQWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYUJDREVGR0hJSktMTU5PUFFSU2FhYWFhYWFhVFVWV1hZWlthXF1hYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFeYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhX2BhC0HqLA8LQZgmDwtB7TEPC0GgNw8LQckpDwtBtCkPC0GWLQ8LQesrDwtBojUPC0HbNA8LQeApDwtB4yQPC0HVJA8LQe4kDwtB5iUPC0HKNA8LQdA3DwtBqjUPC0H1LA8LQfYmDwtBgiIPC0HyMw8LQb4oDwtB5zcPC0HNIQ8LQcAhDwtBuCUPC0HLJQ8LQZYkDwtBjzQPC0HNNQ8LQd0qDwtB7jMPC0GcNA8LQZ4xDwtB9DUPC0HlIg8LQa8lDwtBmTEPC0GyNg8LQfk2DwtBxDIPC0HdLA8LQYIxDwtBwTEPC0GNNw8LQckkDwtB7DYPC0HnKg8LQcgjDwtB4iEPC0HJNw8LQaUiDwtBlCIPC0HbNg8LQd41DwtBhiYPC0G8Kw8LQYsyDwtBoCMPC0H2MA8LQYAsDwtBiSsPC0GkJg8LQfIjDwtBgSgPC0GrMg8LQesnDwtBwjYPC0GiJA8LQc8qDwtB3CMPC0GHJw8LQeQ0DwtBtyIPC0GtMQ8LQdUiDwtBrzQPC0HeJg8LQdYyDwtB9DQPC0GBOA8LQfQ3DwtBkjYPC0GdJw8LQYIpDwtBjSMPC0HXMQ8LQb01DwtBtDcPC0HYMA8LQbYnDwtBmjgPC0GnKg8LQcQnDwtBriMPC0H1Ig8LAAtByiYhAQsgAQsXACAAIAAvAS5B/v8DcSABQQBHcjsBLgsaACAAIAAvAS5B/f8DcSABQQBHQQF0cjsBLgsaACAAIAAvAS5B+/8DcSABQQBHQQJ0cjsBLgsaACAAIAAvAS5B9/8DcSABQQBHQQN0cjsBLgsaACAAIAAvAS5B7/8DcSABQQBHQQR0cjsBLgsaACAAIAAvAS5B3/8DcSABQQBHQQV0cjsBLgsaACAAIAAvAS5Bv/8DcSABQQBHQQZ0cjsBLgsaACAAIAAvAS5B//4DcSABQQBHQQd0cjsBLgsaACAAIAAvAS5B//0DcSABQQBHQQh0cjsBLgsaACAAIAAvAS5B//sDcSABQQBHQQl0cjsBLgs+AQJ/AkAgACgCOCIDRQ0AIAMoAgQiA0UNACAAIAEgAiABayADEQEAIgRBf0cNACAAQeESNgIQQRghBAsgBAs+AQJ/AkAgACgCOCIDRQ0AIAMoAggiA0UNACAAIAEgAiABayADEQEAIgRBf0cNACAAQfwRNgIQQRghBAsgBAs+AQJ/AkAgACgCOCIDRQ0AIAMoAgwiA0UNACAAIAEgAiABayADEQEAIgRBf0cNACAAQewKNgIQQRghBAsgBAs+AQJ/AkAgACgCOCIDRQ0AIAMoAhAiA0UNACAAIAEgAiABayADEQEAIgRBf0cNACAAQfoeNgIQQRghBAsgBAs+AQJ/AkAgACgCOCIDRQ0AIAMoAhQiA0UNACAAIAEgAiABayADEQEAIgRBf0cNACAAQcsQNgIQQRghBAsgBAs+AQJ/AkAgACgCOCIDRQ0AIAMoAhgiA0UNACAAIAEgAiABayADEQEAIgRBf0cNACAAQbcfNgIQQRghBAsgBAs+AQJ/AkAgACgCOCIDRQ0AIAMoAhwiA0UNACAAIAEgAiABayADEQEAIgRBf0cNACAAQb8VNgIQQRghBAsgBAs+AQJ/AkAgACgCOCIDRQ0AIAMoAiwiA0UNACAAIAEgAiABayADEQEAIgRBf0cNACAAQf4INgIQQRghBAsgBAs+AQJ/AkAgACgCOCIDRQ0AIAMoAiAiA0UNACAAIAEgAiABayADEQEAIgRBf0cNACAAQYwdNgIQQRghBAsgBAs+AQJ/AkAgACgCOCIDRQ0AIAMoAiQiA0UNACAAIAEgAiABayADEQEAIgRBf0cNACAAQeYVNgIQQRghBAsgBAs4ACAAAn8gAC8BMkEUcUEURgRAQQEgAC0AKEEBRg0BGiAALwE0QeUARgwBCyAALQApQQVGCzoAMAtZAQJ/AkAgAC0AKEEBRg0AIAAvATQiAUHkAGtB5ABJDQAgAUHMAUYNACABQbACRg0AIAAvATIiAEHAAHENAEEBIQIgAEGIBHFBgARGDQAgAEEocUUhAgsgAguMAQECfwJAAkACQCAALQAqRQ0AIAAtACtFDQAgAC8BMiIBQQJxRQ0BDAILIAAvATIiAUEBcUUNAQtBASECIAAtAChBAUYNACAALwE0IgBB5ABrQeQASQ0AIABBzAFGDQAgAEGwAkYNACABQcAAcQ0AQQAhAiABQYgEcUGABEYNACABQShxQQBHIQILIAILcwAgAEEQav0MAAAAAAAAAAAAAAAAAAAAAP0LAwAgAP0MAAAAAAAAAAAAAAAAAAAAAP0LAwAgAEEwav0MAAAAAAAAAAAAAAAAAAAAAP0LAwAgAEEgav0MAAAAAAAAAAAAAAAAAAAAAP0LAwAgAEH9ATYCHAsGACAAEDoLmi0BC38jAEEQayIKJABB3NUAKAIAIglFBEBBnNkAKAIAIgVFBEBBqNkAQn83AgBBoNkAQoCAhICAgMAANwIAQZzZACAKQQhqQXBxQdiq1aoFcyIFNgIAQbDZAEEANgIAQYDZAEEANgIAC0GE2QBBwNkENgIAQdTVAEHA2QQ2AgBB6NUAIAU2AgBB5NUAQX82AgBBiNkAQcCmAzYCAANAIAFBgNYAaiABQfTVAGoiAjYCACACIAFB7NUAaiIDNgIAIAFB+NUAaiADNgIAIAFBiNYAaiABQfzVAGoiAzYCACADIAI2AgAgAUGQ1gBqIAFBhNYAaiICNgIAIAIgAzYCACABQYzWAGogAjYCACABQSBqIgFBgAJHDQALQczZBEGBpgM2AgBB4NUAQazZACgCADYCAEHQ1QBBgKYDNgIAQdzVAEHI2QQ2AgBBzP8HQTg2AgBByNkEIQkLAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkACQAJAAkAgAEHsAU0EQEHE1QAoAgAiBkEQIABBE2pBcHEgAEELSRsiBEEDdiIAdiIBQQNxBEACQCABQQFxIAByQQFzIgJBA3QiAEHs1QBqIgEgAEH01QBqKAIAIgAoAggiA0YEQEHE1QAgBkF+IAJ3cTYCAAwBCyABIAM2AgggAyABNgIMCyAAQQhqIQEgACACQQN0IgJBA3I2AgQgACACaiIAIAAoAgRBAXI2AgQMEQtBzNUAKAIAIgggBE8NASABBEACQEECIAB0IgJBACACa3IgASAAdHFoIgBBA3QiAkHs1QBqIgEgAkH01QBqKAIAIgIoAggiA0YEQEHE1QAgBkF+IAB3cSIGNgIADAELIAEgAzYCCCADIAE2AgwLIAIgBEEDcjYCBCAAQQN0IgAgBGshBSAAIAJqIAU2AgAgAiAEaiIEIAVBAXI2AgQgCARAIAhBeHFB7NUAaiEAQdjVACgCACEDAn9BASAIQQN2dCIBIAZxRQRAQcTVACABIAZyNgIAIAAMAQsgACgCCAsiASADNgIMIAAgAzYCCCADIAA2AgwgAyABNgIICyACQQhqIQFB2NUAIAQ2AgBBzNUAIAU2AgAMEQtByNUAKAIAIgtFDQEgC2hBAnRB9NcAaigCACIAKAIEQXhxIARrIQUgACECA0ACQCACKAIQIgFFBEAgAkEUaigCACIBRQ0BCyABKAIEQXhxIARrIgMgBUkhAiADIAUgAhshBSABIAAgAhshACABIQIMAQsLIAAoAhghCSAAKAIMIgMgAEcEQEHU1QAoAgAaIAMgACgCCCIBNgIIIAEgAzYCDAwQCyAAQRRqIgIoAgAiAUUEQCAAKAIQIgFFDQMgAEEQaiECCwNAIAIhByABIgNBFGoiAigCACIBDQAgA0EQaiECIAMoAhAiAQ0ACyAHQQA2AgAMDwtBfyEEIABBv39LDQAgAEETaiIBQXBxIQRByNUAKAIAIghFDQBBACAEayEFAkACQAJAAn9BACAEQYACSQ0AGkEfIARB////B0sNABogBEEmIAFBCHZnIgBrdkEBcSAAQQF0a0E+agsiBkECdEH01wBqKAIAIgJFBEBBACEBQQAhAwwBC0EAIQEgBEEZIAZBAXZrQQAgBkEfRxt0IQBBACEDA0ACQCACKAIEQXhxIARrIgcgBU8NACACIQMgByIFDQBBACEFIAIhAQwDCyABIAJBFGooAgAiByAHIAIgAEEddkEEcWpBEGooAgAiAkYbIAEgBxshASAAQQF0IQAgAg0ACwsgASADckUEQEEAIQNBAiAGdCIAQQAgAGtyIAhxIgBFDQMgAGhBAnRB9NcAaigCACEBCyABRQ0BCwNAIAEoAgRBeHEgBGsiAiAFSSEAIAIgBSAAGyEFIAEgAyAAGyEDIAEoAhAiAAR/IAAFIAFBFGooAgALIgENAAsLIANFDQAgBUHM1QAoAgAgBGtPDQAgAygCGCEHIAMgAygCDCIARwRAQdTVACgCABogACADKAIIIgE2AgggASAANgIMDA4LIANBFGoiAigCACIBRQRAIAMoAhAiAUUNAyADQRBqIQILA0AgAiEGIAEiAEEUaiICKAIAIgENACAAQRBqIQIgACgCECIBDQALIAZBADYCAAwNC0HM1QAoAgAiAyAETwRAQdjVACgCACEBAkAgAyAEayICQRBPBEAgASAEaiIAIAJBAXI2AgQgASADaiACNgIAIAEgBEEDcjYCBAwBCyABIANBA3I2AgQgASADaiIAIAAoAgRBAXI2AgRBACEAQQAhAgtBzNUAIAI2AgBB2NUAIAA2AgAgAUEIaiEBDA8LQdDVACgCACIDIARLBEAgBCAJaiIAIAMgBGsiAUEBcjYCBEHc1QAgADYCAEHQ1QAgATYCACAJIARBA3I2AgQgCUEIaiEBDA8LQQAhASAEAn9BnNkAKAIABEBBpNkAKAIADAELQajZAEJ/NwIAQaDZAEKAgISAgIDAADcCAEGc2QAgCkEMakFwcUHYqtWqBXM2AgBBsNkAQQA2AgBBgNkAQQA2AgBBgIAECyIAIARBxwBqIgVqIgZBACAAayIHcSICTwRAQbTZAEEwNgIADA8LAkBB/NgAKAIAIgFFDQBB9NgAKAIAIgggAmohACAAIAFNIAAgCEtxDQBBACEBQbTZAEEwNgIADA8LQYDZAC0AAEEEcQ0EAkACQCAJBEBBhNkAIQEDQCABKAIAIgAgCU0EQCAAIAEoAgRqIAlLDQMLIAEoAggiAQ0ACwtBABA7IgBBf0YNBSACIQZBoNkAKAIAIgFBAWsiAyAAcQRAIAIgAGsgACADakEAIAFrcWohBgsgBCAGTw0FIAZB/v///wdLDQVB/NgAKAIAIgMEQEH02AAoAgAiByAGaiEBIAEgB00NBiABIANLDQYLIAYQOyIBIABHDQEMBwsgBiADayAHcSIGQf7///8HSw0EIAYQOyEAIAAgASgCACABKAIEakYNAyAAIQELAkAgBiAEQcgAak8NACABQX9GDQBBpNkAKAIAIgAgBSAGa2pBACAAa3EiAEH+////B0sEQCABIQAMBwsgABA7QX9HBEAgACAGaiEGIAEhAAwHC0EAIAZrEDsaDAQLIAEiAEF/Rw0FDAMLQQAhAwwMC0EAIQAMCgsgAEF/Rw0CC0GA2QBBgNkAKAIAQQRyNgIACyACQf7///8HSw0BIAIQOyEAQQAQOyEBIABBf0YNASABQX9GDQEgACABTw0BIAEgAGsiBiAEQThqTQ0BC0H02ABB9NgAKAIAIAZqIgE2AgBB+NgAKAIAIAFJBEBB+NgAIAE2AgALAkACQAJAQdzVACgCACICBEBBhNkAIQEDQCAAIAEoAgAiAyABKAIEIgVqRg0CIAEoAggiAQ0ACwwCC0HU1QAoAgAiAUEARyAAIAFPcUUEQEHU1QAgADYCAAtBACEBQYjZACAGNgIAQYTZACAANgIAQeTVAEF/NgIAQejVAEGc2QAoAgA2AgBBkNkAQQA2AgADQCABQYDWAGogAUH01QBqIgI2AgAgAiABQezVAGoiAzYCACABQfjVAGogAzYCACABQYjWAGogAUH81QBqIgM2AgAgAyACNgIAIAFBkNYAaiABQYTWAGoiAjYCACACIAM2AgAgAUGM1gBqIAI2AgAgAUEgaiIBQYACRw0AC0F4IABrQQ9xIgEgAGoiAiAGQThrIgMgAWsiAUEBcjYCBEHg1QBBrNkAKAIANgIAQdDVACABNgIAQdzVACACNgIAIAAgA2pBODYCBAwCCyAAIAJNDQAgAiADSQ0AIAEoAgxBCHENAEF4IAJrQQ9xIgAgAmoiA0HQ1QAoAgAgBmoiByAAayIAQQFyNgIEIAEgBSAGajYCBEHg1QBBrNkAKAIANgIAQdDVACAANgIAQdzVACADNgIAIAIgB2pBODYCBAwBCyAAQdTVACgCAEkEQEHU1QAgADYCAAsgACAGaiEDQYTZACEBAkACQAJAA0AgAyABKAIARwRAIAEoAggiAQ0BDAILCyABLQAMQQhxRQ0BC0GE2QAhAQNAIAEoAgAiAyACTQRAIAMgASgCBGoiBSACSw0DCyABKAIIIQEMAAsACyABIAA2AgAgASABKAIEIAZqNgIEIABBeCAAa0EPcWoiCSAEQQNyNgIEIANBeCADa0EPcWoiBiAEIAlqIgRrIQEgAiAGRgRAQdzVACAENgIAQdDVAEHQ1QAoAgAgAWoiADYCACAEIABBAXI2AgQMCAtB2NUAKAIAIAZGBEBB2NUAIAQ2AgBBzNUAQczVACgCACABaiIANgIAIAQgAEEBcjYCBCAAIARqIAA2AgAMCAsgBigCBCIFQQNxQQFHDQYgBUF4cSEIIAVB/wFNBEAgBUEDdiEDIAYoAggiACAGKAIMIgJGBEBBxNUAQcTVACgCAEF+IAN3cTYCAAwHCyACIAA2AgggACACNgIMDAYLIAYoAhghByAGIAYoAgwiAEcEQCAAIAYoAggiAjYCCCACIAA2AgwMBQsgBkEUaiICKAIAIgVFBEAgBigCECIFRQ0EIAZBEGohAgsDQCACIQMgBSIAQRRqIgIoAgAiBQ0AIABBEGohAiAAKAIQIgUNAAsgA0EANgIADAQLQXggAGtBD3EiASAAaiIHIAZBOGsiAyABayIBQQFyNgIEIAAgA2pBODYCBCACIAVBNyAFa0EPcWpBP2siAyADIAJBEGpJGyIDQSM2AgRB4NUAQazZACgCADYCAEHQ1QAgATYCAEHc1QAgBzYCACADQRBqQYzZACkCADcCACADQYTZACkCADcCCEGM2QAgA0EIajYCAEGI2QAgBjYCAEGE2QAgADYCAEGQ2QBBADYCACADQSRqIQEDQCABQQc2AgAgBSABQQRqIgFLDQALIAIgA0YNACADIAMoAgRBfnE2AgQgAyADIAJrIgU2AgAgAiAFQQFyNgIEIAVB/wFNBEAgBUF4cUHs1QBqIQACf0HE1QAoAgAiAUEBIAVBA3Z0IgNxRQRAQcTVACABIANyNgIAIAAMAQsgACgCCAsiASACNgIMIAAgAjYCCCACIAA2AgwgAiABNgIIDAELQR8hASAFQf///wdNBEAgBUEmIAVBCHZnIgBrdkEBcSAAQQF0a0E+aiEBCyACIAE2AhwgAkIANwIQIAFBAnRB9NcAaiEAQcjVACgCACIDQQEgAXQiBnFFBEAgACACNgIAQcjVACADIAZyNgIAIAIgADYCGCACIAI2AgggAiACNgIMDAELIAVBGSABQQF2a0EAIAFBH0cbdCEBIAAoAgAhAwJAA0AgAyIAKAIEQXhxIAVGDQEgAUEddiEDIAFBAXQhASAAIANBBHFqQRBqIgYoAgAiAw0ACyAGIAI2AgAgAiAANgIYIAIgAjYCDCACIAI2AggMAQsgACgCCCIBIAI2AgwgACACNgIIIAJBADYCGCACIAA2AgwgAiABNgIIC0HQ1QAoAgAiASAETQ0AQdzVACgCACIAIARqIgIgASAEayIBQQFyNgIEQdDVACABNgIAQdzVACACNgIAIAAgBEEDcjYCBCAAQQhqIQEMCAtBACEBQbTZAEEwNgIADAcLQQAhAAsgB0UNAAJAIAYoAhwiAkECdEH01wBqIgMoAgAgBkYEQCADIAA2AgAgAA0BQcjVAEHI1QAoAgBBfiACd3E2AgAMAgsgB0EQQRQgBygCECAGRhtqIAA2AgAgAEUNAQsgACAHNgIYIAYoAhAiAgRAIAAgAjYCECACIAA2AhgLIAZBFGooAgAiAkUNACAAQRRqIAI2AgAgAiAANgIYCyABIAhqIQEgBiAIaiIGKAIEIQULIAYgBUF+cTYCBCABIARqIAE2AgAgBCABQQFyNgIEIAFB/wFNBEAgAUF4cUHs1QBqIQACf0HE1QAoAgAiAkEBIAFBA3Z0IgFxRQRAQcTVACABIAJyNgIAIAAMAQsgACgCCAsiASAENgIMIAAgBDYCCCAEIAA2AgwgBCABNgIIDAELQR8hBSABQf///wdNBEAgAUEmIAFBCHZnIgBrdkEBcSAAQQF0a0E+aiEFCyAEIAU2AhwgBEIANwIQIAVBAnRB9NcAaiEAQcjVACgCACICQQEgBXQiA3FFBEAgACAENgIAQcjVACACIANyNgIAIAQgADYCGCAEIAQ2AgggBCAENgIMDAELIAFBGSAFQQF2a0EAIAVBH0cbdCEFIAAoAgAhAAJAA0AgACICKAIEQXhxIAFGDQEgBUEddiEAIAVBAXQhBSACIABBBHFqQRBqIgMoAgAiAA0ACyADIAQ2AgAgBCACNgIYIAQgBDYCDCAEIAQ2AggMAQsgAigCCCIAIAQ2AgwgAiAENgIIIARBADYCGCAEIAI2AgwgBCAANgIICyAJQQhqIQEMAgsCQCAHRQ0AAkAgAygCHCIBQQJ0QfTXAGoiAigCACADRgRAIAIgADYCACAADQFByNUAIAhBfiABd3EiCDYCAAwCCyAHQRBBFCAHKAIQIANGG2ogADYCACAARQ0BCyAAIAc2AhggAygCECIBBEAgACABNgIQIAEgADYCGAsgA0EUaigCACIBRQ0AIABBFGogATYCACABIAA2AhgLAkAgBUEPTQRAIAMgBCAFaiIAQQNyNgIEIAAgA2oiACAAKAIEQQFyNgIEDAELIAMgBGoiAiAFQQFyNgIEIAMgBEEDcjYCBCACIAVqIAU2AgAgBUH/AU0EQCAFQXhxQezVAGohAAJ/QcTVACgCACIBQQEgBUEDdnQiBXFFBEBBxNUAIAEgBXI2AgAgAAwBCyAAKAIICyIBIAI2AgwgACACNgIIIAIgADYCDCACIAE2AggMAQtBHyEBIAVB////B00EQCAFQSYgBUEIdmciAGt2QQFxIABBAXRrQT5qIQELIAIgATYCHCACQgA3AhAgAUECdEH01wBqIQBBASABdCIEIAhxRQRAIAAgAjYCAEHI1QAgBCAIcjYCACACIAA2AhggAiACNgIIIAIgAjYCDAwBCyAFQRkgAUEBdmtBACABQR9HG3QhASAAKAIAIQQCQANAIAQiACgCBEF4cSAFRg0BIAFBHXYhBCABQQF0IQEgACAEQQRxakEQaiIGKAIAIgQNAAsgBiACNgIAIAIgADYCGCACIAI2AgwgAiACNgIIDAELIAAoAggiASACNgIMIAAgAjYCCCACQQA2AhggAiAANgIMIAIgATYCCAsgA0EIaiEBDAELAkAgCUUNAAJAIAAoAhwiAUECdEH01wBqIgIoAgAgAEYEQCACIAM2AgAgAw0BQcjVACALQX4gAXdxNgIADAILIAlBEEEUIAkoAhAgAEYbaiADNgIAIANFDQELIAMgCTYCGCAAKAIQIgEEQCADIAE2AhAgASADNgIYCyAAQRRqKAIAIgFFDQAgA0EUaiABNgIAIAEgAzYCGAsCQCAFQQ9NBEAgACAEIAVqIgFBA3I2AgQgACABaiIBIAEoAgRBAXI2AgQMAQsgACAEaiIHIAVBAXI2AgQgACAEQQNyNgIEIAUgB2ogBTYCACAIBEAgCEF4cUHs1QBqIQFB2NUAKAIAIQMCf0EBIAhBA3Z0IgIgBnFFBEBBxNUAIAIgBnI2AgAgAQwBCyABKAIICyICIAM2AgwgASADNgIIIAMgATYCDCADIAI2AggLQdjVACAHNgIAQczVACAFNgIACyAAQQhqIQELIApBEGokACABC0MAIABFBEA/AEEQdA8LAkAgAEH//wNxDQAgAEEASA0AIABBEHZAACIAQX9GBEBBtNkAQTA2AgBBfw8LIABBEHQPCwALC5lCIgBBgAgLDQEAAAAAAAAAAgAAAAMAQZgICwUEAAAABQBBqAgLCQYAAAAHAAAACABB5AgLwjJJbnZhbGlkIGNoYXIgaW4gdXJsIHF1ZXJ5AFNwYW4gY2FsbGJhY2sgZXJyb3IgaW4gb25fYm9keQBDb250ZW50LUxlbmd0aCBvdmVyZmxvdwBDaHVuayBzaXplIG92ZXJmbG93AEludmFsaWQgbWV0aG9kIGZvciBIVFRQL3gueCByZXF1ZXN0AEludmFsaWQgbWV0aG9kIGZvciBSVFNQL3gueCByZXF1ZXN0AEV4cGVjdGVkIFNPVVJDRSBtZXRob2QgZm9yIElDRS94LnggcmVxdWVzdABJbnZhbGlkIGNoYXIgaW4gdXJsIGZyYWdtZW50IHN0YXJ0AEV4cGVjdGVkIGRvdABTcGFuIGNhbGxiYWNrIGVycm9yIGluIG9uX3N0YXR1cwBJbnZhbGlkIHJlc3BvbnNlIHN0YXR1cwBFeHBlY3RlZCBMRiBhZnRlciBoZWFkZXJzAEludmFsaWQgY2hhcmFjdGVyIGluIGNodW5rIGV4dGVuc2lvbnMAVXNlciBjYWxsYmFjayBlcnJvcgBgb25fcmVzZXRgIGNhbGxiYWNrIGVycm9yAGBvbl9jaHVua19oZWFkZXJgIGNhbGxiYWNrIGVycm9yAGBvbl9tZXNzYWdlX2JlZ2luYCBjYWxsYmFjayBlcnJvcgBgb25fY2h1bmtfZXh0ZW5zaW9uX3ZhbHVlYCBjYWxsYmFjayBlcnJvcgBgb25fc3RhdHVzX2NvbXBsZXRlYCBjYWxsYmFjayBlcnJvcgBgb25fdmVyc2lvbl9jb21wbGV0ZWAgY2FsbGJhY2sgZXJyb3IAYG9uX3VybF9jb21wbGV0ZWAgY2FsbGJhY2sgZXJyb3IAYG9uX3Byb3RvY29sX2NvbXBsZXRlYCBjYWxsYmFjayBlcnJvcgBgb25fY2h1bmtfY29tcGxldGVgIGNhbGxiYWNrIGVycm9yAGBvbl9oZWFkZXJfdmFsdWVfY29tcGxldGVgIGNhbGxiYWNrIGVycm9yAGBvbl9tZXNzYWdlX2NvbXBsZXRlYCBjYWxsYmFjayBlcnJvcgBgb25fbWV0aG9kX2NvbXBsZXRlYCBjYWxsYmFjayBlcnJvcgBgb25faGVhZGVyX2ZpZWxkX2NvbXBsZXRlYCBjYWxsYmFjayBlcnJvcgBgb25fY2h1bmtfZXh0ZW5zaW9uX25hbWVgIGNhbGxiYWNrIGVycm9yAFVuZXhwZWN0ZWQgY2hhciBpbiB1cmwgc2VydmVyAEludmFsaWQgaGVhZGVyIHZhbHVlIGNoYXIASW52YWxpZCBoZWFkZXIgZmllbGQgY2hhcgBTcGFuIGNhbGxiYWNrIGVycm9yIGluIG9uX3ZlcnNpb24ASW52YWxpZCBtaW5vciB2ZXJzaW9uAEludmFsaWQgbWFqb3IgdmVyc2lvbgBFeHBlY3RlZCBzcGFjZSBhZnRlciB2ZXJzaW9uAEV4cGVjdGVkIENSTEYgYWZ0ZXIgdmVyc2lvbgBJbnZhbGlkIEhUVFAgdmVyc2lvbgBJbnZhbGlkIGhlYWRlciB0b2tlbgBTcGFuIGNhbGxiYWNrIGVycm9yIGluIG9uX3VybABJbnZhbGlkIGNoYXJhY3RlcnMgaW4gdXJsAFVuZXhwZWN0ZWQgc3RhcnQgY2hhciBpbiB1cmwARG91YmxlIEAgaW4gdXJsAFNwYW4gY2FsbGJhY2sgZXJyb3IgaW4gb25fcHJvdG9jb2wARW1wdHkgQ29udGVudC1MZW5ndGgASW52YWxpZCBjaGFyYWN0ZXIgaW4gQ29udGVudC1MZW5ndGgAVHJhbnNmZXItRW5jb2RpbmcgY2FuJ3QgYmUgcHJlc2VudCB3aXRoIENvbnRlbnQtTGVuZ3RoAER1cGxpY2F0ZSBDb250ZW50LUxlbmd0aABJbnZhbGlkIGNoYXIgaW4gdXJsIHBhdGgAQ29udGVudC1MZW5ndGggY2FuJ3QgYmUgcHJlc2VudCB3aXRoIFRyYW5zZmVyLUVuY29kaW5nAE1pc3NpbmcgZXhwZWN0ZWQgQ1IgYWZ0ZXIgY2h1bmsgc2l6ZQBFeHBlY3RlZCBMRiBhZnRlciBjaHVuayBzaXplAEludmFsaWQgY2hhcmFjdGVyIGluIGNodW5rIHNpemUAU3BhbiBjYWxsYmFjayBlcnJvciBpbiBvbl9oZWFkZXJfdmFsdWUAU3BhbiBjYWxsYmFjayBlcnJvciBpbiBvbl9jaHVua19leHRlbnNpb25fdmFsdWUASW52YWxpZCBjaGFyYWN0ZXIgaW4gY2h1bmsgZXh0ZW5zaW9ucyB2YWx1ZQBVbmV4cGVjdGVkIHdoaXRlc3BhY2UgYWZ0ZXIgaGVhZGVyIHZhbHVlAE1pc3NpbmcgZXhwZWN0ZWQgQ1IgYWZ0ZXIgaGVhZGVyIHZhbHVlAE1pc3NpbmcgZXhwZWN0ZWQgTEYgYWZ0ZXIgaGVhZGVyIHZhbHVlAEludmFsaWQgYFRyYW5zZmVyLUVuY29kaW5nYCBoZWFkZXIgdmFsdWUATWlzc2luZyBleHBlY3RlZCBDUiBhZnRlciBjaHVuayBleHRlbnNpb24gdmFsdWUASW52YWxpZCBjaGFyYWN0ZXIgaW4gY2h1bmsgZXh0ZW5zaW9ucyBxdW90ZSB2YWx1ZQBJbnZhbGlkIHF1b3RlZC1wYWlyIGluIGNodW5rIGV4dGVuc2lvbnMgcXVvdGVkIHZhbHVlAEludmFsaWQgY2hhcmFjdGVyIGluIGNodW5rIGV4dGVuc2lvbnMgcXVvdGVkIHZhbHVlAFBhdXNlZCBieSBvbl9oZWFkZXJzX2NvbXBsZXRlAEludmFsaWQgRU9GIHN0YXRlAG9uX3Jlc2V0IHBhdXNlAG9uX2NodW5rX2hlYWRlciBwYXVzZQBvbl9tZXNzYWdlX2JlZ2luIHBhdXNlAG9uX2NodW5rX2V4dGVuc2lvbl92YWx1ZSBwYXVzZQBvbl9zdGF0dXNfY29tcGxldGUgcGF1c2UAb25fdmVyc2lvbl9jb21wbGV0ZSBwYXVzZQBvbl91cmxfY29tcGxldGUgcGF1c2UAb25fcHJvdG9jb2xfY29tcGxldGUgcGF1c2UAb25fY2h1bmtfY29tcGxldGUgcGF1c2UAb25faGVhZGVyX3ZhbHVlX2NvbXBsZXRlIHBhdXNlAG9uX21lc3NhZ2VfY29tcGxldGUgcGF1c2UAb25fbWV0aG9kX2NvbXBsZXRlIHBhdXNlAG9uX2hlYWRlcl9maWVsZF9jb21wbGV0ZSBwYXVzZQBvbl9jaHVua19leHRlbnNpb25fbmFtZSBwYXVzZQBVbmV4cGVjdGVkIHNwYWNlIGFmdGVyIHN0YXJ0IGxpbmUATWlzc2luZyBleHBlY3RlZCBDUiBhZnRlciByZXNwb25zZSBsaW5lAFNwYW4gY2FsbGJhY2sgZXJyb3IgaW4gb25fY2h1bmtfZXh0ZW5zaW9uX25hbWUASW52YWxpZCBjaGFyYWN0ZXIgaW4gY2h1bmsgZXh0ZW5zaW9ucyBuYW1lAE1pc3NpbmcgZXhwZWN0ZWQgQ1IgYWZ0ZXIgY2h1bmsgZXh0ZW5zaW9uIG5hbWUASW52YWxpZCBzdGF0dXMgY29kZQBQYXVzZSBvbiBDT05ORUNUL1VwZ3JhZGUAUGF1c2Ugb24gUFJJL1VwZ3JhZGUARXhwZWN0ZWQgSFRUUC8yIENvbm5lY3Rpb24gUHJlZmFjZQBTcGFuIGNhbGxiYWNrIGVycm9yIGluIG9uX21ldGhvZABFeHBlY3RlZCBzcGFjZSBhZnRlciBtZXRob2QAU3BhbiBjYWxsYmFjayBlcnJvciBpbiBvbl9oZWFkZXJfZmllbGQAUGF1c2VkAEludmFsaWQgd29yZCBlbmNvdW50ZXJlZABJbnZhbGlkIG1ldGhvZCBlbmNvdW50ZXJlZABNaXNzaW5nIGV4cGVjdGVkIENSIGFmdGVyIGNodW5rIGRhdGEARXhwZWN0ZWQgTEYgYWZ0ZXIgY2h1bmsgZGF0YQBVbmV4cGVjdGVkIGNoYXIgaW4gdXJsIHNjaGVtYQBSZXF1ZXN0IGhhcyBpbnZhbGlkIGBUcmFuc2Zlci1FbmNvZGluZ2AARGF0YSBhZnRlciBgQ29ubmVjdGlvbjogY2xvc2VgAFNXSVRDSF9QUk9YWQBVU0VfUFJPWFkATUtBQ1RJVklUWQBVTlBST0NFU1NBQkxFX0VOVElUWQBRVUVSWQBDT1BZAE1PVkVEX1BFUk1BTkVOVExZAFRPT19FQVJMWQBOT1RJRlkARkFJTEVEX0RFUEVOREVOQ1kAQkFEX0dBVEVXQVkAUExBWQBQVVQAQ0hFQ0tPVVQAR0FURVdBWV9USU1FT1VUAFJFUVVFU1RfVElNRU9VVABORVRXT1JLX0NPTk5FQ1RfVElNRU9VVABDT05ORUNUSU9OX1RJTUVPVVQATE9HSU5fVElNRU9VVABORVRXT1JLX1JFQURfVElNRU9VVABQT1NUAE1JU0RJUkVDVEVEX1JFUVVFU1QAQ0xJRU5UX0NMT1NFRF9SRVFVRVNUAENMSUVOVF9DTE9TRURfTE9BRF9CQUxBTkNFRF9SRVFVRVNUAEJBRF9SRVFVRVNUAEhUVFBfUkVRVUVTVF9TRU5UX1RPX0hUVFBTX1BPUlQAUkVQT1JUAElNX0FfVEVBUE9UAFJFU0VUX0NPTlRFTlQATk9fQ09OVEVOVABQQVJUSUFMX0NPTlRFTlQASFBFX0lOVkFMSURfQ09OU1RBTlQASFBFX0NCX1JFU0VUAEdFVABIUEVfU1RSSUNUAENPTkZMSUNUAFRFTVBPUkFSWV9SRURJUkVDVABQRVJNQU5FTlRfUkVESVJFQ1QAQ09OTkVDVABNVUxUSV9TVEFUVVMASFBFX0lOVkFMSURfU1RBVFVTAFRPT19NQU5ZX1JFUVVFU1RTAEVBUkxZX0hJTlRTAFVOQVZBSUxBQkxFX0ZPUl9MRUdBTF9SRUFTT05TAE9QVElPTlMAU1dJVENISU5HX1BST1RPQ09MUwBWQVJJQU5UX0FMU09fTkVHT1RJQVRFUwBNVUxUSVBMRV9DSE9JQ0VTAElOVEVSTkFMX1NFUlZFUl9FUlJPUgBXRUJfU0VSVkVSX1VOS05PV05fRVJST1IAUkFJTEdVTl9FUlJPUgBJREVOVElUWV9QUk9WSURFUl9BVVRIRU5USUNBVElPTl9FUlJPUgBTU0xfQ0VSVElGSUNBVEVfRVJST1IASU5WQUxJRF9YX0ZPUldBUkRFRF9GT1IAU0VUX1BBUkFNRVRFUgBHRVRfUEFSQU1FVEVSAEhQRV9VU0VSAFNFRV9PVEhFUgBIUEVfQ0JfQ0hVTktfSEVBREVSAEV4cGVjdGVkIExGIGFmdGVyIENSAE1LQ0FMRU5EQVIAU0VUVVAAV0VCX1NFUlZFUl9JU19ET1dOAFRFQVJET1dOAEhQRV9DTE9TRURfQ09OTkVDVElPTgBIRVVSSVNUSUNfRVhQSVJBVElPTgBESVNDT05ORUNURURfT1BFUkFUSU9OAE5PTl9BVVRIT1JJVEFUSVZFX0lORk9STUFUSU9OAEhQRV9JTlZBTElEX1ZFUlNJT04ASFBFX0NCX01FU1NBR0VfQkVHSU4AU0lURV9JU19GUk9aRU4ASFBFX0lOVkFMSURfSEVBREVSX1RPS0VOAElOVkFMSURfVE9LRU4ARk9SQklEREVOAEVOSEFOQ0VfWU9VUl9DQUxNAEhQRV9JTlZBTElEX1VSTABCTE9DS0VEX0JZX1BBUkVOVEFMX0NPTlRST0wATUtDT0wAQUNMAEhQRV9JTlRFUk5BTABSRVFVRVNUX0hFQURFUl9GSUVMRFNfVE9PX0xBUkdFX1VOT0ZGSUNJQUwASFBFX09LAFVOTElOSwBVTkxPQ0sAUFJJAFJFVFJZX1dJVEgASFBFX0lOVkFMSURfQ09OVEVOVF9MRU5HVEgASFBFX1VORVhQRUNURURfQ09OVEVOVF9MRU5HVEgARkxVU0gAUFJPUFBBVENIAE0tU0VBUkNIAFVSSV9UT09fTE9ORwBQUk9DRVNTSU5HAE1JU0NFTExBTkVPVVNfUEVSU0lTVEVOVF9XQVJOSU5HAE1JU0NFTExBTkVPVVNfV0FSTklORwBIUEVfSU5WQUxJRF9UUkFOU0ZFUl9FTkNPRElORwBFeHBlY3RlZCBDUkxGAEhQRV9JTlZBTElEX0NIVU5LX1NJWkUATU9WRQBDT05USU5VRQBIUEVfQ0JfU1RBVFVTX0NPTVBMRVRFAEhQRV9DQl9IRUFERVJTX0NPTVBMRVRFAEhQRV9DQl9WRVJTSU9OX0NPTVBMRVRFAEhQRV9DQl9VUkxfQ09NUExFVEUASFBFX0NCX1BST1RPQ09MX0NPTVBMRVRFAEhQRV9DQl9DSFVOS19DT01QTEVURQBIUEVfQ0JfSEVBREVSX1ZBTFVFX0NPTVBMRVRFAEhQRV9DQl9DSFVOS19FWFRFTlNJT05fVkFMVUVfQ09NUExFVEUASFBFX0NCX0NIVU5LX0VYVEVOU0lPTl9OQU1FX0NPTVBMRVRFAEhQRV9DQl9NRVNTQUdFX0NPTVBMRVRFAEhQRV9DQl9NRVRIT0RfQ09NUExFVEUASFBFX0NCX0hFQURFUl9GSUVMRF9DT01QTEVURQBERUxFVEUASFBFX0lOVkFMSURfRU9GX1NUQVRFAElOVkFMSURfU1NMX0NFUlRJRklDQVRFAFBBVVNFAE5PX1JFU1BPTlNFAFVOU1VQUE9SVEVEX01FRElBX1RZUEUAR09ORQBOT1RfQUNDRVBUQUJMRQBTRVJWSUNFX1VOQVZBSUxBQkxFAFJBTkdFX05PVF9TQVRJU0ZJQUJMRQBPUklHSU5fSVNfVU5SRUFDSEFCTEUAUkVTUE9OU0VfSVNfU1RBTEUAUFVSR0UATUVSR0UAUkVRVUVTVF9IRUFERVJfRklFTERTX1RPT19MQVJHRQBSRVFVRVNUX0hFQURFUl9UT09fTEFSR0UAUEFZTE9BRF9UT09fTEFSR0UASU5TVUZGSUNJRU5UX1NUT1JBR0UASFBFX1BBVVNFRF9VUEdSQURFAEhQRV9QQVVTRURfSDJfVVBHUkFERQBTT1VSQ0UAQU5OT1VOQ0UAVFJBQ0UASFBFX1VORVhQRUNURURfU1BBQ0UAREVTQ1JJQkUAVU5TVUJTQ1JJQkUAUkVDT1JEAEhQRV9JTlZBTElEX01FVEhPRABOT1RfRk9VTkQAUFJPUEZJTkQAVU5CSU5EAFJFQklORABVTkFVVEhPUklaRUQATUVUSE9EX05PVF9BTExPV0VEAEhUVFBfVkVSU0lPTl9OT1RfU1VQUE9SVEVEAEFMUkVBRFlfUkVQT1JURUQAQUNDRVBURUQATk9UX0lNUExFTUVOVEVEAExPT1BfREVURUNURUQASFBFX0NSX0VYUEVDVEVEAEhQRV9MRl9FWFBFQ1RFRABDUkVBVEVEAElNX1VTRUQASFBFX1BBVVNFRABUSU1FT1VUX09DQ1VSRUQAUEFZTUVOVF9SRVFVSVJFRABQUkVDT05ESVRJT05fUkVRVUlSRUQAUFJPWFlfQVVUSEVOVElDQVRJT05fUkVRVUlSRUQATkVUV09SS19BVVRIRU5USUNBVElPTl9SRVFVSVJFRABMRU5HVEhfUkVRVUlSRUQAU1NMX0NFUlRJRklDQVRFX1JFUVVJUkVEAFVQR1JBREVfUkVRVUlSRUQAUEFHRV9FWFBJUkVEAFBSRUNPTkRJVElPTl9GQUlMRUQARVhQRUNUQVRJT05fRkFJTEVEAFJFVkFMSURBVElPTl9GQUlMRUQAU1NMX0hBTkRTSEFLRV9GQUlMRUQATE9DS0VEAFRSQU5TRk9STUFUSU9OX0FQUExJRUQATk9UX01PRElGSUVEAE5PVF9FWFRFTkRFRABCQU5EV0lEVEhfTElNSVRfRVhDRUVERUQAU0lURV9JU19PVkVSTE9BREVEAEhFQUQARXhwZWN0ZWQgSFRUUC8sIFJUU1AvIG9yIElDRS8A5xUAAK8VAACkEgAAkhoAACYWAACeFAAA2xkAAHkVAAB+EgAA/hQAADYVAAALFgAA2BYAAPMSAABCGAAArBYAABIVAAAUFwAA7xcAAEgUAABxFwAAshoAAGsZAAB+GQAANRQAAIIaAABEFwAA/RYAAB4YAACHFwAAqhkAAJMSAAAHGAAALBcAAMoXAACkFwAA5xUAAOcVAABYFwAAOxgAAKASAAAtHAAAwxEAAEgRAADeEgAAQhMAAKQZAAD9EAAA9xUAAKUVAADvFgAA+BkAAEoWAABWFgAA9RUAAAoaAAAIGgAAARoAAKsVAABCEgAA1xAAAEwRAAAFGQAAVBYAAB4RAADKGQAAyBkAAE4WAAD/GAAAcRQAAPAVAADuFQAAlBkAAPwVAAC/GQAAmxkAAHwUAABDEQAAcBgAAJUUAAAnFAAAGRQAANUSAADUGQAARBYAAPcQAEG5OwsBAQBB0DsL4AEBAQIBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEDAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQBBuj0LBAEAAAIAQdE9C14DBAMDAwMDAAADAwADAwADAwMDAwMDAwMDAAUAAAAAAAMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAAAAAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMAAwADAEG6PwsEAQAAAgBB0T8LXgMAAwMDAwMAAAMDAAMDAAMDAwMDAwMDAwMABAAFAAAAAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMAAAADAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwADAAMAQbDBAAsNbG9zZWVlcC1hbGl2ZQBBycEACwEBAEHgwQAL4AEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQABAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQBBycMACwEBAEHgwwAL5wEBAQEBAQEBAQEBAQECAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQABAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAWNodW5rZWQAQfHFAAteAQABAQEBAQAAAQEAAQEAAQEBAQEBAQEBAQAAAAAAAAABAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQAAAAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAAEAAQBB0McACyFlY3Rpb25lbnQtbGVuZ3Rob25yb3h5LWNvbm5lY3Rpb24AQYDIAAsgcmFuc2Zlci1lbmNvZGluZ3BncmFkZQ0KDQpTTQ0KDQoAQanIAAsFAQIAAQMAQcDIAAtfBAUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUAQanKAAsFAQIAAQMAQcDKAAtfBAUFBgUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUAQanMAAsEAQAAAQBBwcwAC14CAgACAgICAgICAgICAgICAgICAgICAgICAgICAgIAAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAEGpzgALBQECAAEDAEHAzgALXwQFAAAFBQUFBQUFBQUFBQYFBQUFBQUFBQUFBQUABQAHCAUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQAFAAUABQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUAAAAFAEGp0AALBQEBAAEBAEHA0AALAQEAQdrQAAtBAgAAAAAAAAMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAAAAAAAAAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMAQanSAAsFAQEAAQEAQcDSAAsBAQBBytIACwYCAAAAAAIAQeHSAAs6AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMAAAAAAAADAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwBBoNQAC50BTk9VTkNFRUNLT1VUTkVDVEVURUNSSUJFTFVTSEVURUFEU0VBUkNIUkdFQ1RJVklUWUxFTkRBUlZFT1RJRllQVElPTlNDSFNFQVlTVEFUQ0hHRVVFUllPUkRJUkVDVE9SVFJDSFBBUkFNRVRFUlVSQ0VCU0NSSUJFQVJET1dOQUNFSU5ETktDS1VCU0NSSUJFVFRQQ0VUU1BBRFRQLw=='

let wasmBuffer

Object.defineProperty(module, 'exports', {
  get: () => {
    return wasmBuffer
      ? wasmBuffer
      : (wasmBuffer = Buffer.from(wasmBase64, 'base64'))
  }
})


/***/ }),

/***/ 172:
/***/ ((__unused_webpack_module, exports) => {


Object.defineProperty(exports, "__esModule", ({ value: true }));
exports.enumToMap = enumToMap;
function enumToMap(obj, filter = [], exceptions = []) {
    const emptyFilter = (filter?.length ?? 0) === 0;
    const emptyExceptions = (exceptions?.length ?? 0) === 0;
    return Object.fromEntries(Object.entries(obj).filter(([, value]) => {
        return (typeof value === 'number' &&
            (emptyFilter || filter.includes(value)) &&
            (emptyExceptions || !exceptions.includes(value)));
    }));
}


/***/ }),

/***/ 6436:
/***/ (module) => {



/**
 * @template {*} T
 * @typedef {Object} DeferredPromise
 * @property {Promise<T>} promise
 * @property {(value?: T) => void} resolve
 * @property {(reason?: any) => void} reject
 */

/**
 * @template {*} T
 * @returns {DeferredPromise<T>} An object containing a promise and its resolve/reject methods.
 */
function createDeferredPromise () {
  let res
  let rej
  const promise = new Promise((resolve, reject) => {
    res = resolve
    rej = reject
  })

  return { promise, resolve: res, reject: rej }
}

module.exports = {
  createDeferredPromise
}


/***/ },

/***/ 313:
/***/ (module, __unused_webpack_exports, __nccwpck_require__) => {



/** @typedef {`node:${string}`} NodeModuleName */

/** @type {Record<NodeModuleName, () => any>} */
const lazyLoaders = {
  __proto__: null,
  'node:crypto': () => __nccwpck_require__(7598),
  'node:sqlite': () => __nccwpck_require__(99),
  'node:worker_threads': () => __nccwpck_require__(5919),
  'node:zlib': () => __nccwpck_require__(8522)
}

/**
 * @param {NodeModuleName} moduleName
 * @returns {boolean}
 */
function detectRuntimeFeatureByNodeModule (moduleName) {
  try {
    lazyLoaders[moduleName]()
    return true
  } catch (err) {
    if (err.code !== 'ERR_UNKNOWN_BUILTIN_MODULE' && err.code !== 'ERR_NO_CRYPTO') {
      throw err
    }
    return false
  }
}

/**
 * @param {NodeModuleName} moduleName
 * @param {string} property
 * @returns {boolean}
 */
function detectRuntimeFeatureByExportedProperty (moduleName, property) {
  const module = lazyLoaders[moduleName]()
  return typeof module[property] !== 'undefined'
}

const runtimeFeaturesByExportedProperty = /** @type {const} */ (['markAsUncloneable', 'zstd'])

/** @type {Record<RuntimeFeatureByExportedProperty, [NodeModuleName, string]>} */
const exportedPropertyLookup = {
  markAsUncloneable: ['node:worker_threads', 'markAsUncloneable'],
  zstd: ['node:zlib', 'createZstdDecompress']
}

/** @typedef {typeof runtimeFeaturesByExportedProperty[number]} RuntimeFeatureByExportedProperty */

const runtimeFeaturesAsNodeModule = /** @type {const} */ (['crypto', 'sqlite'])
/** @typedef {typeof runtimeFeaturesAsNodeModule[number]} RuntimeFeatureByNodeModule */

const features = /** @type {const} */ ([
  ...runtimeFeaturesAsNodeModule,
  ...runtimeFeaturesByExportedProperty
])

/** @typedef {typeof features[number]} Feature */

/**
 * @param {Feature} feature
 * @returns {boolean}
 */
function detectRuntimeFeature (feature) {
  if (runtimeFeaturesAsNodeModule.includes(/** @type {RuntimeFeatureByNodeModule} */ (feature))) {
    return detectRuntimeFeatureByNodeModule(`node:${feature}`)
  } else if (runtimeFeaturesByExportedProperty.includes(/** @type {RuntimeFeatureByExportedProperty} */ (feature))) {
    const [moduleName, property] = exportedPropertyLookup[feature]
    return detectRuntimeFeatureByExportedProperty(moduleName, property)
  }
  throw new TypeError(`unknown feature: ${feature}`)
}

/**
 * @class
 * @name RuntimeFeatures
 */
class RuntimeFeatures {
  /** @type {Map<Feature, boolean>} */
  #map = new Map()

  /**
   * Clears all cached feature detections.
   */
  clear () {
    this.#map.clear()
  }

  /**
   * @param {Feature} feature
   * @returns {boolean}
   */
  has (feature) {
    return (
      this.#map.get(feature) ?? this.#detectRuntimeFeature(feature)
    )
  }

  /**
   * @param {Feature} feature
   * @param {boolean} value
   */
  set (feature, value) {
    if (features.includes(feature) === false) {
      throw new TypeError(`unknown feature: ${feature}`)
    }
    this.#map.set(feature, value)
  }

  /**
   * @param {Feature} feature
   * @returns {boolean}
   */
  #detectRuntimeFeature (feature) {
    const result = detectRuntimeFeature(feature)
    this.#map.set(feature, result)
    return result
  }
}

const instance = new RuntimeFeatures()

module.exports.runtimeFeatures = instance
module.exports["default"] = instance


/***/ },

/***/ 6854:
/***/ ((module, __unused_webpack_exports, __nccwpck_require__) => {



const {
  kConnected,
  kPending,
  kRunning,
  kSize,
  kFree,
  kQueued
} = __nccwpck_require__(6443)

class ClientStats {
  constructor (client) {
    this.connected = client[kConnected]
    this.pending = client[kPending]
    this.running = client[kRunning]
    this.size = client[kSize]
  }
}

class PoolStats {
  constructor (pool) {
    this.connected = pool[kConnected]
    this.free = pool[kFree]
    this.pending = pool[kPending]
    this.queued = pool[kQueued]
    this.running = pool[kRunning]
    this.size = pool[kSize]
  }
}

module.exports = { ClientStats, PoolStats }


/***/ }),

/***/ 6603:
/***/ ((module) => {



/**
 * This module offers an optimized timer implementation designed for scenarios
 * where high precision is not critical.
 *
 * The timer achieves faster performance by using a low-resolution approach,
 * with an accuracy target of within 500ms. This makes it particularly useful
 * for timers with delays of 1 second or more, where exact timing is less
 * crucial.
 *
 * It's important to note that Node.js timers are inherently imprecise, as
 * delays can occur due to the event loop being blocked by other operations.
 * Consequently, timers may trigger later than their scheduled time.
 */

/**
 * The fastNow variable contains the internal fast timer clock value.
 *
 * @type {number}
 */
let fastNow = 0

/**
 * RESOLUTION_MS represents the target resolution time in milliseconds.
 *
 * @type {number}
 * @default 1000
 */
const RESOLUTION_MS = 1e3

/**
 * TICK_MS defines the desired interval in milliseconds between each tick.
 * The target value is set to half the resolution time, minus 1 ms, to account
 * for potential event loop overhead.
 *
 * @type {number}
 * @default 499
 */
const TICK_MS = (RESOLUTION_MS >> 1) - 1

/**
 * fastNowTimeout is a Node.js timer used to manage and process
 * the FastTimers stored in the `fastTimers` array.
 *
 * @type {NodeJS.Timeout}
 */
let fastNowTimeout

/**
 * The kFastTimer symbol is used to identify FastTimer instances.
 *
 * @type {Symbol}
 */
const kFastTimer = Symbol('kFastTimer')

/**
 * The fastTimers array contains all active FastTimers.
 *
 * @type {FastTimer[]}
 */
const fastTimers = []

/**
 * These constants represent the various states of a FastTimer.
 */

/**
 * The `NOT_IN_LIST` constant indicates that the FastTimer is not included
 * in the `fastTimers` array. Timers with this status will not be processed
 * during the next tick by the `onTick` function.
 *
 * A FastTimer can be re-added to the `fastTimers` array by invoking the
 * `refresh` method on the FastTimer instance.
 *
 * @type {-2}
 */
const NOT_IN_LIST = -2

/**
 * The `TO_BE_CLEARED` constant indicates that the FastTimer is scheduled
 * for removal from the `fastTimers` array. A FastTimer in this state will
 * be removed in the next tick by the `onTick` function and will no longer
 * be processed.
 *
 * This status is also set when the `clear` method is called on the FastTimer instance.
 *
 * @type {-1}
 */
const TO_BE_CLEARED = -1

/**
 * The `PENDING` constant signifies that the FastTimer is awaiting processing
 * in the next tick by the `onTick` function. Timers with this status will have
 * their `_idleStart` value set and their status updated to `ACTIVE` in the next tick.
 *
 * @type {0}
 */
const PENDING = 0

/**
 * The `ACTIVE` constant indicates that the FastTimer is active and waiting
 * for its timer to expire. During the next tick, the `onTick` function will
 * check if the timer has expired, and if so, it will execute the associated callback.
 *
 * @type {1}
 */
const ACTIVE = 1

/**
 * The onTick function processes the fastTimers array.
 *
 * @returns {void}
 */
function onTick () {
  /**
   * Increment the fastNow value by the TICK_MS value, despite the actual time
   * that has passed since the last tick. This approach ensures independence
   * from the system clock and delays caused by a blocked event loop.
   *
   * @type {number}
   */
  fastNow += TICK_MS

  /**
   * The `idx` variable is used to iterate over the `fastTimers` array.
   * Expired timers are removed by replacing them with the last element in the array.
   * Consequently, `idx` is only incremented when the current element is not removed.
   *
   * @type {number}
   */
  let idx = 0

  /**
   * The len variable will contain the length of the fastTimers array
   * and will be decremented when a FastTimer should be removed from the
   * fastTimers array.
   *
   * @type {number}
   */
  let len = fastTimers.length

  while (idx < len) {
    /**
     * @type {FastTimer}
     */
    const timer = fastTimers[idx]

    // If the timer is in the ACTIVE state and the timer has expired, it will
    // be processed in the next tick.
    if (timer._state === PENDING) {
      // Set the _idleStart value to the fastNow value minus the TICK_MS value
      // to account for the time the timer was in the PENDING state.
      timer._idleStart = fastNow - TICK_MS
      timer._state = ACTIVE
    } else if (
      timer._state === ACTIVE &&
      fastNow >= timer._idleStart + timer._idleTimeout
    ) {
      timer._state = TO_BE_CLEARED
      timer._idleStart = -1
      timer._onTimeout(timer._timerArg)
    }

    if (timer._state === TO_BE_CLEARED) {
      timer._state = NOT_IN_LIST

      // Move the last element to the current index and decrement len if it is
      // not the only element in the array.
      if (--len !== 0) {
        fastTimers[idx] = fastTimers[len]
      }
    } else {
      ++idx
    }
  }

  // Set the length of the fastTimers array to the new length and thus
  // removing the excess FastTimers elements from the array.
  fastTimers.length = len

  // If there are still active FastTimers in the array, refresh the Timer.
  // If there are no active FastTimers, the timer will be refreshed again
  // when a new FastTimer is instantiated.
  if (fastTimers.length !== 0) {
    refreshTimeout()
  }
}

function refreshTimeout () {
  // If the fastNowTimeout is already set and the Timer has the refresh()-
  // method available, call it to refresh the timer.
  // Some timer objects returned by setTimeout may not have a .refresh()
  // method (e.g. mocked timers in tests).
  if (fastNowTimeout?.refresh) {
    fastNowTimeout.refresh()
    // fastNowTimeout is not instantiated yet or refresh is not availabe,
    // create a new Timer.
  } else {
    clearTimeout(fastNowTimeout)
    fastNowTimeout = setTimeout(onTick, TICK_MS)
    // If the Timer has an unref method, call it to allow the process to exit,
    // if there are no other active handles. When using fake timers or mocked
    // environments (like Jest), .unref() may not be defined,
    fastNowTimeout?.unref()
  }
}

/**
 * The `FastTimer` class is a data structure designed to store and manage
 * timer information.
 */
class FastTimer {
  [kFastTimer] = true

  /**
   * The state of the timer, which can be one of the following:
   * - NOT_IN_LIST (-2)
   * - TO_BE_CLEARED (-1)
   * - PENDING (0)
   * - ACTIVE (1)
   *
   * @type {-2|-1|0|1}
   * @private
   */
  _state = NOT_IN_LIST

  /**
   * The number of milliseconds to wait before calling the callback.
   *
   * @type {number}
   * @private
   */
  _idleTimeout = -1

  /**
   * The time in milliseconds when the timer was started. This value is used to
   * calculate when the timer should expire.
   *
   * @type {number}
   * @default -1
   * @private
   */
  _idleStart = -1

  /**
   * The function to be executed when the timer expires.
   * @type {Function}
   * @private
   */
  _onTimeout

  /**
   * The argument to be passed to the callback when the timer expires.
   *
   * @type {*}
   * @private
   */
  _timerArg

  /**
   * @constructor
   * @param {Function} callback A function to be executed after the timer
   * expires.
   * @param {number} delay The time, in milliseconds that the timer should wait
   * before the specified function or code is executed.
   * @param {*} arg
   */
  constructor (callback, delay, arg) {
    this._onTimeout = callback
    this._idleTimeout = delay
    this._timerArg = arg

    this.refresh()
  }

  /**
   * Sets the timer's start time to the current time, and reschedules the timer
   * to call its callback at the previously specified duration adjusted to the
   * current time.
   * Using this on a timer that has already called its callback will reactivate
   * the timer.
   *
   * @returns {void}
   */
  refresh () {
    // In the special case that the timer is not in the list of active timers,
    // add it back to the array to be processed in the next tick by the onTick
    // function.
    if (this._state === NOT_IN_LIST) {
      fastTimers.push(this)
    }

    // If the timer is the only active timer, refresh the fastNowTimeout for
    // better resolution.
    if (!fastNowTimeout || fastTimers.length === 1) {
      refreshTimeout()
    }

    // Setting the state to PENDING will cause the timer to be reset in the
    // next tick by the onTick function.
    this._state = PENDING
  }

  /**
   * The `clear` method cancels the timer, preventing it from executing.
   *
   * @returns {void}
   * @private
   */
  clear () {
    // Set the state to TO_BE_CLEARED to mark the timer for removal in the next
    // tick by the onTick function.
    this._state = TO_BE_CLEARED

    // Reset the _idleStart value to -1 to indicate that the timer is no longer
    // active.
    this._idleStart = -1
  }
}

/**
 * This module exports a setTimeout and clearTimeout function that can be
 * used as a drop-in replacement for the native functions.
 */
module.exports = {
  /**
   * The setTimeout() method sets a timer which executes a function once the
   * timer expires.
   * @param {Function} callback A function to be executed after the timer
   * expires.
   * @param {number} delay The time, in milliseconds that the timer should
   * wait before the specified function or code is executed.
   * @param {*} [arg] An optional argument to be passed to the callback function
   * when the timer expires.
   * @returns {NodeJS.Timeout|FastTimer}
   */
  setTimeout (callback, delay, arg) {
    // If the delay is less than or equal to the RESOLUTION_MS value return a
    // native Node.js Timer instance.
    return delay <= RESOLUTION_MS
      ? setTimeout(callback, delay, arg)
      : new FastTimer(callback, delay, arg)
  },
  /**
   * The clearTimeout method cancels an instantiated Timer previously created
   * by calling setTimeout.
   *
   * @param {NodeJS.Timeout|FastTimer} timeout
   */
  clearTimeout (timeout) {
    // If the timeout is a FastTimer, call its own clear method.
    if (timeout[kFastTimer]) {
      /**
       * @type {FastTimer}
       */
      timeout.clear()
      // Otherwise it is an instance of a native NodeJS.Timeout, so call the
      // Node.js native clearTimeout function.
    } else {
      clearTimeout(timeout)
    }
  },
  /**
   * The setFastTimeout() method sets a fastTimer which executes a function once
   * the timer expires.
   * @param {Function} callback A function to be executed after the timer
   * expires.
   * @param {number} delay The time, in milliseconds that the timer should
   * wait before the specified function or code is executed.
   * @param {*} [arg] An optional argument to be passed to the callback function
   * when the timer expires.
   * @returns {FastTimer}
   */
  setFastTimeout (callback, delay, arg) {
    return new FastTimer(callback, delay, arg)
  },
  /**
   * The clearTimeout method cancels an instantiated FastTimer previously
   * created by calling setFastTimeout.
   *
   * @param {FastTimer} timeout
   */
  clearFastTimeout (timeout) {
    timeout.clear()
  },
  /**
   * The now method returns the value of the internal fast timer clock.
   *
   * @returns {number}
   */
  now () {
    return fastNow
  },
  /**
   * Trigger the onTick function to process the fastTimers array.
   * Exported for testing purposes only.
   * Marking as deprecated to discourage any use outside of testing.
   * @deprecated
   * @param {number} [delay=0] The delay in milliseconds to add to the now value.
   */
  tick (delay = 0) {
    fastNow += delay - RESOLUTION_MS + 1
    onTick()
    onTick()
  },
  /**
   * Reset FastTimers.
   * Exported for testing purposes only.
   * Marking as deprecated to discourage any use outside of testing.
   * @deprecated
   */
  reset () {
    fastNow = 0
    fastTimers.length = 0
    clearTimeout(fastNowTimeout)
    fastNowTimeout = null
  },
  /**
   * Exporting for testing purposes only.
   * Marking as deprecated to discourage any use outside of testing.
   * @deprecated
   */
  kFastTimer
}


/***/ }),

/***/ 4492:
/***/ (module, __unused_webpack_exports, __nccwpck_require__) => {



const util = __nccwpck_require__(3440)
const {
  ReadableStreamFrom,
  readableStreamClose,
  fullyReadBody,
  extractMimeType
} = __nccwpck_require__(3168)
const { FormData, setFormDataState } = __nccwpck_require__(5910)
const { webidl } = __nccwpck_require__(7879)
const assert = __nccwpck_require__(4589)
const { isErrored, isDisturbed } = __nccwpck_require__(7075)
const { isUint8Array } = __nccwpck_require__(3429)
const { serializeAMimeType } = __nccwpck_require__(1900)
const { multipartFormDataParser } = __nccwpck_require__(116)
const { createDeferredPromise } = __nccwpck_require__(6436)
const { parseJSONFromBytes } = __nccwpck_require__(8116)
const { utf8DecodeBytes } = __nccwpck_require__(276)
const { runtimeFeatures } = __nccwpck_require__(313)

const random = runtimeFeatures.has('crypto')
  ? (__nccwpck_require__(7598).randomInt)
  : (max) => Math.floor(Math.random() * max)

const textEncoder = new TextEncoder()
function noop () {}

const streamRegistry = new FinalizationRegistry((weakRef) => {
  const stream = weakRef.deref()
  if (stream && !stream.locked && !isDisturbed(stream) && !isErrored(stream)) {
    stream.cancel('Response object has been garbage collected').catch(noop)
  }
})

/**
 * Extract a body with type from a byte sequence or BodyInit object
 *
 * @param {import('../../../types').BodyInit} object - The BodyInit object to extract from
 * @param {boolean} [keepalive=false] - If true, indicates that the body
 * @returns {[{stream: ReadableStream, source: any, length: number | null}, string | null]} - Returns a tuple containing the body and its type
 *
 * @see https://fetch.spec.whatwg.org/#concept-bodyinit-extract
 */
function extractBody (object, keepalive = false) {
  // 1. Let stream be null.
  let stream = null

  // 2. If object is a ReadableStream object, then set stream to object.
  if (webidl.is.ReadableStream(object)) {
    stream = object
  } else if (webidl.is.Blob(object)) {
    // 3. Otherwise, if object is a Blob object, set stream to the
    //    result of running object’s get stream.
    stream = object.stream()
  } else {
    // 4. Otherwise, set stream to a new ReadableStream object, and set
    //    up stream with byte reading support.
    stream = new ReadableStream({
      start () {},
      async pull (controller) {
        // 19.1. Run action.
        const result = action()

        const iterator = result?.[Symbol.asyncIterator]?.()
        if (iterator == null) {
          // 19.2. Whenever one or more bytes are available and stream is not errored,
          // enqueue the result of creating a Uint8Array from the available bytes into stream.
          if (result?.length && !isErrored(stream)) {
            controller.enqueue(typeof result === 'string' ? textEncoder.encode(result) : new Uint8Array(result))
          }

          // 19.3. When running action is done, close stream.
          queueMicrotask(() => readableStreamClose(controller))
          return
        }

        while (true) {
          const { value, done } = await iterator.next()

          // 19.3. When running action is done, close stream.
          if (done) {
            queueMicrotask(() => readableStreamClose(controller))
            return
          }

          // 19.2. Whenever one or more bytes are available and stream is not errored,
          // enqueue the result of creating a Uint8Array from the available bytes into stream.
          if (value.length && !isErrored(stream)) {
            controller.enqueue(new Uint8Array(value))
            return
          }
        }
      },
      cancel (reason) {
        return action()[Symbol.asyncIterator]?.().return(reason)
      },
      type: 'bytes'
    })
  }

  // 5. Assert: stream is a ReadableStream object.
  assert(webidl.is.ReadableStream(stream))

  // 6. Let action be null.
  let action = null

  // 7. Let source be null.
  let source = null

  // 8. Let length be null.
  let length = null

  // 9. Let type be null.
  let type = null

  // 10. Switch on object:
  if (typeof object === 'string') {
    // Set source to the UTF-8 encoding of object.
    // Note: setting source to a Uint8Array here breaks some mocking assumptions.
    source = object

    // Set type to `text/plain;charset=UTF-8`.
    type = 'text/plain;charset=UTF-8'
  } else if (webidl.is.URLSearchParams(object)) {
    // URLSearchParams

    // spec says to run application/x-www-form-urlencoded on body.list
    // this is implemented in Node.js as apart of an URLSearchParams instance toString method
    // See: https://github.com/nodejs/node/blob/e46c680bf2b211bbd52cf959ca17ee98c7f657f5/lib/internal/url.js#L490
    // and https://github.com/nodejs/node/blob/e46c680bf2b211bbd52cf959ca17ee98c7f657f5/lib/internal/url.js#L1100

    // Set source to the result of running the application/x-www-form-urlencoded serializer with object’s list.
    source = object.toString()

    // Set type to `application/x-www-form-urlencoded;charset=UTF-8`.
    type = 'application/x-www-form-urlencoded;charset=UTF-8'
  } else if (webidl.is.BufferSource(object)) {
    // Set source to a copy of the bytes held by object.
    source = webidl.util.getCopyOfBytesHeldByBufferSource(object)
  } else if (webidl.is.FormData(object)) {
    const boundary = `----formdata-undici-0${`${random(1e11)}`.padStart(11, '0')}`
    const prefix = `--${boundary}\r\nContent-Disposition: form-data`

    /*! formdata-polyfill. MIT License. Jimmy Wärting <https://jimmy.warting.se/opensource> */
    const formdataEscape = (str) =>
      str.replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/"/g, '%22')
    const normalizeLinefeeds = (value) => value.replace(/\r?\n|\r/g, '\r\n')

    // Set action to this step: run the multipart/form-data
    // encoding algorithm, with object’s entry list and UTF-8.
    // - This ensures that the body is immutable and can't be changed afterwords
    // - That the content-length is calculated in advance.
    // - And that all parts are pre-encoded and ready to be sent.

    const blobParts = []
    const rn = new Uint8Array([13, 10]) // '\r\n'
    length = 0
    let hasUnknownSizeValue = false

    for (const [name, value] of object) {
      if (typeof value === 'string') {
        const chunk = textEncoder.encode(prefix +
          `; name="${formdataEscape(normalizeLinefeeds(name))}"` +
          `\r\n\r\n${normalizeLinefeeds(value)}\r\n`)
        blobParts.push(chunk)
        length += chunk.byteLength
      } else {
        const chunk = textEncoder.encode(`${prefix}; name="${formdataEscape(normalizeLinefeeds(name))}"` +
          (value.name ? `; filename="${formdataEscape(value.name)}"` : '') + '\r\n' +
          `Content-Type: ${
            value.type || 'application/octet-stream'
          }\r\n\r\n`)
        blobParts.push(chunk, value, rn)
        if (typeof value.size === 'number') {
          length += chunk.byteLength + value.size + rn.byteLength
        } else {
          hasUnknownSizeValue = true
        }
      }
    }

    // CRLF is appended to the body to function with legacy servers and match other implementations.
    // https://github.com/curl/curl/blob/3434c6b46e682452973972e8313613dfa58cd690/lib/mime.c#L1029-L1030
    // https://github.com/form-data/form-data/issues/63
    const chunk = textEncoder.encode(`--${boundary}--\r\n`)
    blobParts.push(chunk)
    length += chunk.byteLength
    if (hasUnknownSizeValue) {
      length = null
    }

    // Set source to object.
    source = object

    const parts = (async function * () {
      for (const part of blobParts) {
        if (part.stream) {
          yield * part.stream()
        } else {
          yield part
        }
      }
    })()
    action = () => parts

    // Set type to `multipart/form-data; boundary=`,
    // followed by the multipart/form-data boundary string generated
    // by the multipart/form-data encoding algorithm.
    type = `multipart/form-data; boundary=${boundary}`
  } else if (webidl.is.Blob(object)) {
    // Blob

    // Set source to object.
    source = object

    // Set length to object’s size.
    length = object.size

    // If object’s type attribute is not the empty byte sequence, set
    // type to its value.
    if (object.type) {
      type = object.type
    }
  } else if (typeof object[Symbol.asyncIterator] === 'function') {
    // If keepalive is true, then throw a TypeError.
    if (keepalive) {
      throw new TypeError('keepalive')
    }

    // If object is disturbed or locked, then throw a TypeError.
    if (util.isDisturbed(object) || object.locked) {
      throw new TypeError(
        'Response body object should not be disturbed or locked'
      )
    }

    stream =
      webidl.is.ReadableStream(object) ? object : ReadableStreamFrom(object)
  }

  // 18. If source is a byte sequence, then set action to a
  // step that returns source and length to source’s length.
  if (typeof source === 'string' || isUint8Array(source)) {
    action = () => source
    length = typeof source === 'string' ? Buffer.byteLength(source) : source.length
  }

  // 19. If action is non-null, then run these steps in parallel:
  // Note: this is done in the pull method of the stream created above

  // 20. Let body be a body whose stream is stream, source is source,
  // and length is length.
  const body = { stream, source, length }

  // 21. Return (body, type).
  return [body, type]
}

/**
 * @typedef {object} ExtractBodyResult
 * @property {ReadableStream<Uint8Array<ArrayBuffer>>} stream - The ReadableStream containing the body data
 * @property {any} source - The original source of the body data
 * @property {number | null} length - The length of the body data, or null
 */

/**
 * Safely extract a body with type from a byte sequence or BodyInit object.
 *
 * @param {import('../../../types').BodyInit} object - The BodyInit object to extract from
 * @param {boolean} [keepalive=false] - If true, indicates that the body
 * @returns {[ExtractBodyResult, string | null]} - Returns a tuple containing the body and its type
 *
 * @see https://fetch.spec.whatwg.org/#bodyinit-safely-extract
 */
function safelyExtractBody (object, keepalive = false) {
  // To safely extract a body and a `Content-Type` value from
  // a byte sequence or BodyInit object object, run these steps:

  // 1. If object is a ReadableStream object, then:
  if (webidl.is.ReadableStream(object)) {
    // Assert: object is neither disturbed nor locked.
    assert(!util.isDisturbed(object), 'The body has already been consumed.')
    assert(!object.locked, 'The stream is locked.')
  }

  // 2. Return the results of extracting object.
  return extractBody(object, keepalive)
}

function cloneBody (body) {
  // To clone a body body, run these steps:

  // https://fetch.spec.whatwg.org/#concept-body-clone

  // 1. Let « out1, out2 » be the result of teeing body’s stream.
  const { 0: out1, 1: out2 } = body.stream.tee()

  // 2. Set body’s stream to out1.
  body.stream = out1

  // 3. Return a body whose stream is out2 and other members are copied from body.
  return {
    stream: out2,
    length: body.length,
    source: body.source
  }
}

function bodyMixinMethods (instance, getInternalState) {
  const methods = {
    blob () {
      // The blob() method steps are to return the result of
      // running consume body with this and the following step
      // given a byte sequence bytes: return a Blob whose
      // contents are bytes and whose type attribute is this’s
      // MIME type.
      return consumeBody(this, (bytes) => {
        let mimeType = bodyMimeType(getInternalState(this))

        if (mimeType === null) {
          mimeType = ''
        } else if (mimeType) {
          mimeType = serializeAMimeType(mimeType)
        }

        // Return a Blob whose contents are bytes and type attribute
        // is mimeType.
        return new Blob([bytes], { type: mimeType })
      }, instance, getInternalState)
    },

    arrayBuffer () {
      // The arrayBuffer() method steps are to return the result
      // of running consume body with this and the following step
      // given a byte sequence bytes: return a new ArrayBuffer
      // whose contents are bytes.
      return consumeBody(this, (bytes) => {
        return new Uint8Array(bytes).buffer
      }, instance, getInternalState)
    },

    text () {
      // The text() method steps are to return the result of running
      // consume body with this and UTF-8 decode.
      return consumeBody(this, utf8DecodeBytes, instance, getInternalState)
    },

    json () {
      // The json() method steps are to return the result of running
      // consume body with this and parse JSON from bytes.
      return consumeBody(this, parseJSONFromBytes, instance, getInternalState)
    },

    formData () {
      // The formData() method steps are to return the result of running
      // consume body with this and the following step given a byte sequence bytes:
      return consumeBody(this, (value) => {
        // 1. Let mimeType be the result of get the MIME type with this.
        const mimeType = bodyMimeType(getInternalState(this))

        // 2. If mimeType is non-null, then switch on mimeType’s essence and run
        //    the corresponding steps:
        if (mimeType !== null) {
          switch (mimeType.essence) {
            case 'multipart/form-data': {
              // 1. ... [long step]
              // 2. If that fails for some reason, then throw a TypeError.
              const parsed = multipartFormDataParser(value, mimeType)

              // 3. Return a new FormData object, appending each entry,
              //    resulting from the parsing operation, to its entry list.
              const fd = new FormData()
              setFormDataState(fd, parsed)

              return fd
            }
            case 'application/x-www-form-urlencoded': {
              // 1. Let entries be the result of parsing bytes.
              const entries = new URLSearchParams(value.toString())

              // 2. If entries is failure, then throw a TypeError.

              // 3. Return a new FormData object whose entry list is entries.
              const fd = new FormData()

              for (const [name, value] of entries) {
                fd.append(name, value)
              }

              return fd
            }
          }
        }

        // 3. Throw a TypeError.
        throw new TypeError(
          'Content-Type was not one of "multipart/form-data" or "application/x-www-form-urlencoded".'
        )
      }, instance, getInternalState)
    },

    bytes () {
      // The bytes() method steps are to return the result of running consume body
      // with this and the following step given a byte sequence bytes: return the
      // result of creating a Uint8Array from bytes in this’s relevant realm.
      return consumeBody(this, (bytes) => {
        return new Uint8Array(bytes)
      }, instance, getInternalState)
    }
  }

  return methods
}

function mixinBody (prototype, getInternalState) {
  Object.assign(prototype.prototype, bodyMixinMethods(prototype, getInternalState))
}

/**
 * @see https://fetch.spec.whatwg.org/#concept-body-consume-body
 * @param {any} object internal state
 * @param {(value: unknown) => unknown} convertBytesToJSValue
 * @param {any} instance
 * @param {(target: any) => any} getInternalState
 */
function consumeBody (object, convertBytesToJSValue, instance, getInternalState) {
  try {
    webidl.brandCheck(object, instance)
  } catch (e) {
    return Promise.reject(e)
  }

  object = getInternalState(object)

  // 1. If object is unusable, then return a promise rejected
  //    with a TypeError.
  if (bodyUnusable(object)) {
    return Promise.reject(new TypeError('Body is unusable: Body has already been read'))
  }

  // 2. Let promise be a new promise.
  const promise = createDeferredPromise()

  // 3. Let errorSteps given error be to reject promise with error.
  const errorSteps = promise.reject

  // 4. Let successSteps given a byte sequence data be to resolve
  //    promise with the result of running convertBytesToJSValue
  //    with data. If that threw an exception, then run errorSteps
  //    with that exception.
  const successSteps = (data) => {
    try {
      promise.resolve(convertBytesToJSValue(data))
    } catch (e) {
      errorSteps(e)
    }
  }

  // 5. If object’s body is null, then run successSteps with an
  //    empty byte sequence.
  if (object.body == null) {
    successSteps(Buffer.allocUnsafe(0))
    return promise.promise
  }

  // 6. Otherwise, fully read object’s body given successSteps,
  //    errorSteps, and object’s relevant global object.
  fullyReadBody(object.body, successSteps, errorSteps)

  // 7. Return promise.
  return promise.promise
}

/**
 * @see https://fetch.spec.whatwg.org/#body-unusable
 * @param {any} object internal state
 */
function bodyUnusable (object) {
  const body = object.body

  // An object including the Body interface mixin is
  // said to be unusable if its body is non-null and
  // its body’s stream is disturbed or locked.
  return body != null && (body.stream.locked || util.isDisturbed(body.stream))
}

/**
 * @see https://fetch.spec.whatwg.org/#concept-body-mime-type
 * @param {any} requestOrResponse internal state
 */
function bodyMimeType (requestOrResponse) {
  // 1. Let headers be null.
  // 2. If requestOrResponse is a Request object, then set headers to requestOrResponse’s request’s header list.
  // 3. Otherwise, set headers to requestOrResponse’s response’s header list.
  /** @type {import('./headers').HeadersList} */
  const headers = requestOrResponse.headersList

  // 4. Let mimeType be the result of extracting a MIME type from headers.
  const mimeType = extractMimeType(headers)

  // 5. If mimeType is failure, then return null.
  if (mimeType === 'failure') {
    return null
  }

  // 6. Return mimeType.
  return mimeType
}

module.exports = {
  extractBody,
  safelyExtractBody,
  cloneBody,
  mixinBody,
  streamRegistry,
  bodyUnusable
}


/***/ },

/***/ 4495:
/***/ (module) => {



const corsSafeListedMethods = /** @type {const} */ (['GET', 'HEAD', 'POST'])
const corsSafeListedMethodsSet = new Set(corsSafeListedMethods)

const nullBodyStatus = /** @type {const} */ ([101, 204, 205, 304])

const redirectStatus = /** @type {const} */ ([301, 302, 303, 307, 308])
const redirectStatusSet = new Set(redirectStatus)

/**
 * @see https://fetch.spec.whatwg.org/#block-bad-port
 */
const badPorts = /** @type {const} */ ([
  '1', '7', '9', '11', '13', '15', '17', '19', '20', '21', '22', '23', '25', '37', '42', '43', '53', '69', '77', '79',
  '87', '95', '101', '102', '103', '104', '109', '110', '111', '113', '115', '117', '119', '123', '135', '137',
  '139', '143', '161', '179', '389', '427', '465', '512', '513', '514', '515', '526', '530', '531', '532',
  '540', '548', '554', '556', '563', '587', '601', '636', '989', '990', '993', '995', '1719', '1720', '1723',
  '2049', '3659', '4045', '4190', '5060', '5061', '6000', '6566', '6665', '6666', '6667', '6668', '6669', '6679',
  '6697', '10080'
])
const badPortsSet = new Set(badPorts)

/**
 * @see https://w3c.github.io/webappsec-referrer-policy/#referrer-policy-header
 */
const referrerPolicyTokens = /** @type {const} */ ([
  'no-referrer',
  'no-referrer-when-downgrade',
  'same-origin',
  'origin',
  'strict-origin',
  'origin-when-cross-origin',
  'strict-origin-when-cross-origin',
  'unsafe-url'
])

/**
 * @see https://w3c.github.io/webappsec-referrer-policy/#referrer-policies
 */
const referrerPolicy = /** @type {const} */ ([
  '',
  ...referrerPolicyTokens
])
const referrerPolicyTokensSet = new Set(referrerPolicyTokens)

const requestRedirect = /** @type {const} */ (['follow', 'manual', 'error'])

const safeMethods = /** @type {const} */ (['GET', 'HEAD', 'OPTIONS', 'TRACE'])
const safeMethodsSet = new Set(safeMethods)

const requestMode = /** @type {const} */ (['navigate', 'same-origin', 'no-cors', 'cors'])

const requestCredentials = /** @type {const} */ (['omit', 'same-origin', 'include'])

const requestCache = /** @type {const} */ ([
  'default',
  'no-store',
  'reload',
  'no-cache',
  'force-cache',
  'only-if-cached'
])

/**
 * @see https://fetch.spec.whatwg.org/#request-body-header-name
 */
const requestBodyHeader = /** @type {const} */ ([
  'content-encoding',
  'content-language',
  'content-location',
  'content-type',
  // See https://github.com/nodejs/undici/issues/2021
  // 'Content-Length' is a forbidden header name, which is typically
  // removed in the Headers implementation. However, undici doesn't
  // filter out headers, so we add it here.
  'content-length'
])

/**
 * @see https://fetch.spec.whatwg.org/#enumdef-requestduplex
 */
const requestDuplex = /** @type {const} */ ([
  'half'
])

/**
 * @see http://fetch.spec.whatwg.org/#forbidden-method
 */
const forbiddenMethods = /** @type {const} */ (['CONNECT', 'TRACE', 'TRACK'])
const forbiddenMethodsSet = new Set(forbiddenMethods)

const subresource = /** @type {const} */ ([
  'audio',
  'audioworklet',
  'font',
  'image',
  'manifest',
  'paintworklet',
  'script',
  'style',
  'track',
  'video',
  'xslt',
  ''
])
const subresourceSet = new Set(subresource)

module.exports = {
  subresource,
  forbiddenMethods,
  requestBodyHeader,
  referrerPolicy,
  requestRedirect,
  requestMode,
  requestCredentials,
  requestCache,
  redirectStatus,
  corsSafeListedMethods,
  nullBodyStatus,
  safeMethods,
  badPorts,
  requestDuplex,
  subresourceSet,
  badPortsSet,
  redirectStatusSet,
  corsSafeListedMethodsSet,
  safeMethodsSet,
  forbiddenMethodsSet,
  referrerPolicyTokens: referrerPolicyTokensSet
}


/***/ },

/***/ 1900:
/***/ (module, __unused_webpack_exports, __nccwpck_require__) => {



const assert = __nccwpck_require__(4589)
const { forgivingBase64, collectASequenceOfCodePoints, collectASequenceOfCodePointsFast, isomorphicDecode, removeASCIIWhitespace, removeChars } = __nccwpck_require__(8116)

const encoder = new TextEncoder()

/**
 * @see https://mimesniff.spec.whatwg.org/#http-token-code-point
 */
const HTTP_TOKEN_CODEPOINTS = /^[-!#$%&'*+.^_|~A-Za-z0-9]+$/u
const HTTP_WHITESPACE_REGEX = /[\u000A\u000D\u0009\u0020]/u // eslint-disable-line

/**
 * @see https://mimesniff.spec.whatwg.org/#http-quoted-string-token-code-point
 */
const HTTP_QUOTED_STRING_TOKENS = /^[\u0009\u0020-\u007E\u0080-\u00FF]+$/u // eslint-disable-line

// https://fetch.spec.whatwg.org/#data-url-processor
/** @param {URL} dataURL */
function dataURLProcessor (dataURL) {
  // 1. Assert: dataURL’s scheme is "data".
  assert(dataURL.protocol === 'data:')

  // 2. Let input be the result of running the URL
  // serializer on dataURL with exclude fragment
  // set to true.
  let input = URLSerializer(dataURL, true)

  // 3. Remove the leading "data:" string from input.
  input = input.slice(5)

  // 4. Let position point at the start of input.
  const position = { position: 0 }

  // 5. Let mimeType be the result of collecting a
  // sequence of code points that are not equal
  // to U+002C (,), given position.
  let mimeType = collectASequenceOfCodePointsFast(
    ',',
    input,
    position
  )

  // 6. Strip leading and trailing ASCII whitespace
  // from mimeType.
  // Undici implementation note: we need to store the
  // length because if the mimetype has spaces removed,
  // the wrong amount will be sliced from the input in
  // step #9
  const mimeTypeLength = mimeType.length
  mimeType = removeASCIIWhitespace(mimeType, true, true)

  // 7. If position is past the end of input, then
  // return failure
  if (position.position >= input.length) {
    return 'failure'
  }

  // 8. Advance position by 1.
  position.position++

  // 9. Let encodedBody be the remainder of input.
  const encodedBody = input.slice(mimeTypeLength + 1)

  // 10. Let body be the percent-decoding of encodedBody.
  let body = stringPercentDecode(encodedBody)

  // 11. If mimeType ends with U+003B (;), followed by
  // zero or more U+0020 SPACE, followed by an ASCII
  // case-insensitive match for "base64", then:
  if (/;(?:\u0020*)base64$/ui.test(mimeType)) {
    // 1. Let stringBody be the isomorphic decode of body.
    const stringBody = isomorphicDecode(body)

    // 2. Set body to the forgiving-base64 decode of
    // stringBody.
    body = forgivingBase64(stringBody)

    // 3. If body is failure, then return failure.
    if (body === 'failure') {
      return 'failure'
    }

    // 4. Remove the last 6 code points from mimeType.
    mimeType = mimeType.slice(0, -6)

    // 5. Remove trailing U+0020 SPACE code points from mimeType,
    // if any.
    mimeType = mimeType.replace(/(\u0020+)$/u, '')

    // 6. Remove the last U+003B (;) code point from mimeType.
    mimeType = mimeType.slice(0, -1)
  }

  // 12. If mimeType starts with U+003B (;), then prepend
  // "text/plain" to mimeType.
  if (mimeType.startsWith(';')) {
    mimeType = 'text/plain' + mimeType
  }

  // 13. Let mimeTypeRecord be the result of parsing
  // mimeType.
  let mimeTypeRecord = parseMIMEType(mimeType)

  // 14. If mimeTypeRecord is failure, then set
  // mimeTypeRecord to text/plain;charset=US-ASCII.
  if (mimeTypeRecord === 'failure') {
    mimeTypeRecord = parseMIMEType('text/plain;charset=US-ASCII')
  }

  // 15. Return a new data: URL struct whose MIME
  // type is mimeTypeRecord and body is body.
  // https://fetch.spec.whatwg.org/#data-url-struct
  return { mimeType: mimeTypeRecord, body }
}

// https://url.spec.whatwg.org/#concept-url-serializer
/**
 * @param {URL} url
 * @param {boolean} excludeFragment
 */
function URLSerializer (url, excludeFragment = false) {
  if (!excludeFragment) {
    return url.href
  }

  const href = url.href
  const hashLength = url.hash.length

  const serialized = hashLength === 0 ? href : href.substring(0, href.length - hashLength)

  if (!hashLength && href.endsWith('#')) {
    return serialized.slice(0, -1)
  }

  return serialized
}

// https://url.spec.whatwg.org/#string-percent-decode
/** @param {string} input */
function stringPercentDecode (input) {
  // 1. Let bytes be the UTF-8 encoding of input.
  const bytes = encoder.encode(input)

  // 2. Return the percent-decoding of bytes.
  return percentDecode(bytes)
}

/**
 * @param {number} byte
 */
function isHexCharByte (byte) {
  // 0-9 A-F a-f
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
}

/**
 * @param {number} byte
 */
function hexByteToNumber (byte) {
  return (
    // 0-9
    byte >= 0x30 && byte <= 0x39
      ? (byte - 48)
    // Convert to uppercase
    // ((byte & 0xDF) - 65) + 10
      : ((byte & 0xDF) - 55)
  )
}

// https://url.spec.whatwg.org/#percent-decode
/** @param {Uint8Array} input */
function percentDecode (input) {
  const length = input.length
  // 1. Let output be an empty byte sequence.
  /** @type {Uint8Array} */
  const output = new Uint8Array(length)
  let j = 0
  let i = 0
  // 2. For each byte byte in input:
  while (i < length) {
    const byte = input[i]

    // 1. If byte is not 0x25 (%), then append byte to output.
    if (byte !== 0x25) {
      output[j++] = byte

    // 2. Otherwise, if byte is 0x25 (%) and the next two bytes
    // after byte in input are not in the ranges
    // 0x30 (0) to 0x39 (9), 0x41 (A) to 0x46 (F),
    // and 0x61 (a) to 0x66 (f), all inclusive, append byte
    // to output.
    } else if (
      byte === 0x25 &&
      !(isHexCharByte(input[i + 1]) && isHexCharByte(input[i + 2]))
    ) {
      output[j++] = 0x25

    // 3. Otherwise:
    } else {
      // 1. Let bytePoint be the two bytes after byte in input,
      // decoded, and then interpreted as hexadecimal number.
      // 2. Append a byte whose value is bytePoint to output.
      output[j++] = (hexByteToNumber(input[i + 1]) << 4) | hexByteToNumber(input[i + 2])

      // 3. Skip the next two bytes in input.
      i += 2
    }
    ++i
  }

  // 3. Return output.
  return length === j ? output : output.subarray(0, j)
}

// https://mimesniff.spec.whatwg.org/#parse-a-mime-type
/** @param {string} input */
function parseMIMEType (input) {
  // 1. Remove any leading and trailing HTTP whitespace
  // from input.
  input = removeHTTPWhitespace(input, true, true)

  // 2. Let position be a position variable for input,
  // initially pointing at the start of input.
  const position = { position: 0 }

  // 3. Let type be the result of collecting a sequence
  // of code points that are not U+002F (/) from
  // input, given position.
  const type = collectASequenceOfCodePointsFast(
    '/',
    input,
    position
  )

  // 4. If type is the empty string or does not solely
  // contain HTTP token code points, then return failure.
  // https://mimesniff.spec.whatwg.org/#http-token-code-point
  if (type.length === 0 || !HTTP_TOKEN_CODEPOINTS.test(type)) {
    return 'failure'
  }

  // 5. If position is past the end of input, then return
  // failure
  if (position.position >= input.length) {
    return 'failure'
  }

  // 6. Advance position by 1. (This skips past U+002F (/).)
  position.position++

  // 7. Let subtype be the result of collecting a sequence of
  // code points that are not U+003B (;) from input, given
  // position.
  let subtype = collectASequenceOfCodePointsFast(
    ';',
    input,
    position
  )

  // 8. Remove any trailing HTTP whitespace from subtype.
  subtype = removeHTTPWhitespace(subtype, false, true)

  // 9. If subtype is the empty string or does not solely
  // contain HTTP token code points, then return failure.
  if (subtype.length === 0 || !HTTP_TOKEN_CODEPOINTS.test(subtype)) {
    return 'failure'
  }

  const typeLowercase = type.toLowerCase()
  const subtypeLowercase = subtype.toLowerCase()

  // 10. Let mimeType be a new MIME type record whose type
  // is type, in ASCII lowercase, and subtype is subtype,
  // in ASCII lowercase.
  // https://mimesniff.spec.whatwg.org/#mime-type
  const mimeType = {
    type: typeLowercase,
    subtype: subtypeLowercase,
    /** @type {Map<string, string>} */
    parameters: new Map(),
    // https://mimesniff.spec.whatwg.org/#mime-type-essence
    essence: `${typeLowercase}/${subtypeLowercase}`
  }

  // 11. While position is not past the end of input:
  while (position.position < input.length) {
    // 1. Advance position by 1. (This skips past U+003B (;).)
    position.position++

    // 2. Collect a sequence of code points that are HTTP
    // whitespace from input given position.
    collectASequenceOfCodePoints(
      // https://fetch.spec.whatwg.org/#http-whitespace
      char => HTTP_WHITESPACE_REGEX.test(char),
      input,
      position
    )

    // 3. Let parameterName be the result of collecting a
    // sequence of code points that are not U+003B (;)
    // or U+003D (=) from input, given position.
    let parameterName = collectASequenceOfCodePoints(
      (char) => char !== ';' && char !== '=',
      input,
      position
    )

    // 4. Set parameterName to parameterName, in ASCII
    // lowercase.
    parameterName = parameterName.toLowerCase()

    // 5. If position is not past the end of input, then:
    if (position.position < input.length) {
      // 1. If the code point at position within input is
      // U+003B (;), then continue.
      if (input[position.position] === ';') {
        continue
      }

      // 2. Advance position by 1. (This skips past U+003D (=).)
      position.position++
    }

    // 6. If position is past the end of input, then break.
    if (position.position >= input.length) {
      break
    }

    // 7. Let parameterValue be null.
    let parameterValue = null

    // 8. If the code point at position within input is
    // U+0022 ("), then:
    if (input[position.position] === '"') {
      // 1. Set parameterValue to the result of collecting
      // an HTTP quoted string from input, given position
      // and the extract-value flag.
      parameterValue = collectAnHTTPQuotedString(input, position, true)

      // 2. Collect a sequence of code points that are not
      // U+003B (;) from input, given position.
      collectASequenceOfCodePointsFast(
        ';',
        input,
        position
      )

    // 9. Otherwise:
    } else {
      // 1. Set parameterValue to the result of collecting
      // a sequence of code points that are not U+003B (;)
      // from input, given position.
      parameterValue = collectASequenceOfCodePointsFast(
        ';',
        input,
        position
      )

      // 2. Remove any trailing HTTP whitespace from parameterValue.
      parameterValue = removeHTTPWhitespace(parameterValue, false, true)

      // 3. If parameterValue is the empty string, then continue.
      if (parameterValue.length === 0) {
        continue
      }
    }

    // 10. If all of the following are true
    // - parameterName is not the empty string
    // - parameterName solely contains HTTP token code points
    // - parameterValue solely contains HTTP quoted-string token code points
    // - mimeType’s parameters[parameterName] does not exist
    // then set mimeType’s parameters[parameterName] to parameterValue.
    if (
      parameterName.length !== 0 &&
      HTTP_TOKEN_CODEPOINTS.test(parameterName) &&
      (parameterValue.length === 0 || HTTP_QUOTED_STRING_TOKENS.test(parameterValue)) &&
      !mimeType.parameters.has(parameterName)
    ) {
      mimeType.parameters.set(parameterName, parameterValue)
    }
  }

  // 12. Return mimeType.
  return mimeType
}

// https://fetch.spec.whatwg.org/#collect-an-http-quoted-string
// tests: https://fetch.spec.whatwg.org/#example-http-quoted-string
/**
 * @param {string} input
 * @param {{ position: number }} position
 * @param {boolean} [extractValue=false]
 */
function collectAnHTTPQuotedString (input, position, extractValue = false) {
  // 1. Let positionStart be position.
  const positionStart = position.position

  // 2. Let value be the empty string.
  let value = ''

  // 3. Assert: the code point at position within input
  // is U+0022 (").
  assert(input[position.position] === '"')

  // 4. Advance position by 1.
  position.position++

  // 5. While true:
  while (true) {
    // 1. Append the result of collecting a sequence of code points
    // that are not U+0022 (") or U+005C (\) from input, given
    // position, to value.
    value += collectASequenceOfCodePoints(
      (char) => char !== '"' && char !== '\\',
      input,
      position
    )

    // 2. If position is past the end of input, then break.
    if (position.position >= input.length) {
      break
    }

    // 3. Let quoteOrBackslash be the code point at position within
    // input.
    const quoteOrBackslash = input[position.position]

    // 4. Advance position by 1.
    position.position++

    // 5. If quoteOrBackslash is U+005C (\), then:
    if (quoteOrBackslash === '\\') {
      // 1. If position is past the end of input, then append
      // U+005C (\) to value and break.
      if (position.position >= input.length) {
        value += '\\'
        break
      }

      // 2. Append the code point at position within input to value.
      value += input[position.position]

      // 3. Advance position by 1.
      position.position++

    // 6. Otherwise:
    } else {
      // 1. Assert: quoteOrBackslash is U+0022 (").
      assert(quoteOrBackslash === '"')

      // 2. Break.
      break
    }
  }

  // 6. If the extract-value flag is set, then return value.
  if (extractValue) {
    return value
  }

  // 7. Return the code points from positionStart to position,
  // inclusive, within input.
  return input.slice(positionStart, position.position)
}

/**
 * @see https://mimesniff.spec.whatwg.org/#serialize-a-mime-type
 */
function serializeAMimeType (mimeType) {
  assert(mimeType !== 'failure')
  const { parameters, essence } = mimeType

  // 1. Let serialization be the concatenation of mimeType’s
  //    type, U+002F (/), and mimeType’s subtype.
  let serialization = essence

  // 2. For each name → value of mimeType’s parameters:
  for (let [name, value] of parameters.entries()) {
    // 1. Append U+003B (;) to serialization.
    serialization += ';'

    // 2. Append name to serialization.
    serialization += name

    // 3. Append U+003D (=) to serialization.
    serialization += '='

    // 4. If value does not solely contain HTTP token code
    //    points or value is the empty string, then:
    if (!HTTP_TOKEN_CODEPOINTS.test(value)) {
      // 1. Precede each occurrence of U+0022 (") or
      //    U+005C (\) in value with U+005C (\).
      value = value.replace(/[\\"]/ug, '\\$&')

      // 2. Prepend U+0022 (") to value.
      value = '"' + value

      // 3. Append U+0022 (") to value.
      value += '"'
    }

    // 5. Append value to serialization.
    serialization += value
  }

  // 3. Return serialization.
  return serialization
}

/**
 * @see https://fetch.spec.whatwg.org/#http-whitespace
 * @param {number} char
 */
function isHTTPWhiteSpace (char) {
  // "\r\n\t "
  return char === 0x00d || char === 0x00a || char === 0x009 || char === 0x020
}

/**
 * @see https://fetch.spec.whatwg.org/#http-whitespace
 * @param {string} str
 * @param {boolean} [leading=true]
 * @param {boolean} [trailing=true]
 */
function removeHTTPWhitespace (str, leading = true, trailing = true) {
  return removeChars(str, leading, trailing, isHTTPWhiteSpace)
}

/**
 * @see https://mimesniff.spec.whatwg.org/#minimize-a-supported-mime-type
 * @param {Exclude<ReturnType<typeof parseMIMEType>, 'failure'>} mimeType
 */
function minimizeSupportedMimeType (mimeType) {
  switch (mimeType.essence) {
    case 'application/ecmascript':
    case 'application/javascript':
    case 'application/x-ecmascript':
    case 'application/x-javascript':
    case 'text/ecmascript':
    case 'text/javascript':
    case 'text/javascript1.0':
    case 'text/javascript1.1':
    case 'text/javascript1.2':
    case 'text/javascript1.3':
    case 'text/javascript1.4':
    case 'text/javascript1.5':
    case 'text/jscript':
    case 'text/livescript':
    case 'text/x-ecmascript':
    case 'text/x-javascript':
      // 1. If mimeType is a JavaScript MIME type, then return "text/javascript".
      return 'text/javascript'
    case 'application/json':
    case 'text/json':
      // 2. If mimeType is a JSON MIME type, then return "application/json".
      return 'application/json'
    case 'image/svg+xml':
      // 3. If mimeType’s essence is "image/svg+xml", then return "image/svg+xml".
      return 'image/svg+xml'
    case 'text/xml':
    case 'application/xml':
      // 4. If mimeType is an XML MIME type, then return "application/xml".
      return 'application/xml'
  }

  // 2. If mimeType is a JSON MIME type, then return "application/json".
  if (mimeType.subtype.endsWith('+json')) {
    return 'application/json'
  }

  // 4. If mimeType is an XML MIME type, then return "application/xml".
  if (mimeType.subtype.endsWith('+xml')) {
    return 'application/xml'
  }

  // 5. If mimeType is supported by the user agent, then return mimeType’s essence.
  // Technically, node doesn't support any mimetypes.

  // 6. Return the empty string.
  return ''
}

module.exports = {
  dataURLProcessor,
  URLSerializer,
  stringPercentDecode,
  parseMIMEType,
  collectAnHTTPQuotedString,
  serializeAMimeType,
  removeHTTPWhitespace,
  minimizeSupportedMimeType,
  HTTP_TOKEN_CODEPOINTS
}


/***/ },

/***/ 116:
/***/ (module, __unused_webpack_exports, __nccwpck_require__) => {



const { bufferToLowerCasedHeaderName } = __nccwpck_require__(3440)
const { HTTP_TOKEN_CODEPOINTS } = __nccwpck_require__(1900)
const { makeEntry } = __nccwpck_require__(5910)
const { webidl } = __nccwpck_require__(7879)
const assert = __nccwpck_require__(4589)
const { isomorphicDecode } = __nccwpck_require__(8116)

const dd = Buffer.from('--')
const decoder = new TextDecoder()
const decoderIgnoreBOM = new TextDecoder('utf-8', { ignoreBOM: true })

/**
 * @param {string} chars
 */
function isAsciiString (chars) {
  for (let i = 0; i < chars.length; ++i) {
    if ((chars.charCodeAt(i) & ~0x7F) !== 0) {
      return false
    }
  }
  return true
}

/**
 * @see https://andreubotella.github.io/multipart-form-data/#multipart-form-data-boundary
 * @param {string} boundary
 */
function validateBoundary (boundary) {
  const length = boundary.length

  // - its length is greater or equal to 27 and lesser or equal to 70, and
  if (length < 27 || length > 70) {
    return false
  }

  // - it is composed by bytes in the ranges 0x30 to 0x39, 0x41 to 0x5A, or
  //   0x61 to 0x7A, inclusive (ASCII alphanumeric), or which are 0x27 ('),
  //   0x2D (-) or 0x5F (_).
  for (let i = 0; i < length; ++i) {
    const cp = boundary.charCodeAt(i)

    if (!(
      (cp >= 0x30 && cp <= 0x39) ||
      (cp >= 0x41 && cp <= 0x5a) ||
      (cp >= 0x61 && cp <= 0x7a) ||
      cp === 0x27 ||
      cp === 0x2d ||
      cp === 0x5f
    )) {
      return false
    }
  }

  return true
}

/**
 * @see https://andreubotella.github.io/multipart-form-data/#multipart-form-data-parser
 * @param {Buffer} input
 * @param {ReturnType<import('./data-url')['parseMIMEType']>} mimeType
 */
function multipartFormDataParser (input, mimeType) {
  // 1. Assert: mimeType’s essence is "multipart/form-data".
  assert(mimeType !== 'failure' && mimeType.essence === 'multipart/form-data')

  const boundaryString = mimeType.parameters.get('boundary')

  // 2. If mimeType’s parameters["boundary"] does not exist, return failure.
  //    Otherwise, let boundary be the result of UTF-8 decoding mimeType’s
  //    parameters["boundary"].
  if (boundaryString === undefined) {
    throw parsingError('missing boundary in content-type header')
  }

  const boundary = Buffer.from(`--${boundaryString}`, 'utf8')

  // 3. Let entry list be an empty entry list.
  const entryList = []

  // 4. Let position be a pointer to a byte in input, initially pointing at
  //    the first byte.
  const position = { position: 0 }

  // Note: Per RFC 2046 Section 5.1.1, we must ignore anything before the
  // first boundary delimiter line (preamble). Search for the first boundary.
  const firstBoundaryIndex = input.indexOf(boundary)

  if (firstBoundaryIndex === -1) {
    throw parsingError('no boundary found in multipart body')
  }

  // Start parsing from the first boundary, ignoring any preamble
  position.position = firstBoundaryIndex

  // 5. While true:
  while (true) {
    // 5.1. If position points to a sequence of bytes starting with 0x2D 0x2D
    //      (`--`) followed by boundary, advance position by 2 + the length of
    //      boundary. Otherwise, return failure.
    // Note: boundary is padded with 2 dashes already, no need to add 2.
    if (input.subarray(position.position, position.position + boundary.length).equals(boundary)) {
      position.position += boundary.length
    } else {
      throw parsingError('expected a value starting with -- and the boundary')
    }

    // 5.2. If position points to the sequence of bytes 0x2D 0x2D 0x0D 0x0A
    //      (`--` followed by CR LF) followed by the end of input, return entry list.
    // Note: Per RFC 2046 Section 5.1.1, we must ignore anything after the
    // final boundary delimiter (epilogue). Check for -- or --CRLF and return
    // regardless of what follows.
    if (bufferStartsWith(input, dd, position)) {
      // Found closing boundary delimiter (--), ignore any epilogue
      return entryList
    }

    // 5.3. If position does not point to a sequence of bytes starting with 0x0D
    //      0x0A (CR LF), return failure.
    if (input[position.position] !== 0x0d || input[position.position + 1] !== 0x0a) {
      throw parsingError('expected CRLF')
    }

    // 5.4. Advance position by 2. (This skips past the newline.)
    position.position += 2

    // 5.5. Let name, filename and contentType be the result of parsing
    //      multipart/form-data headers on input and position, if the result
    //      is not failure. Otherwise, return failure.
    const result = parseMultipartFormDataHeaders(input, position)

    let { name, filename, contentType, encoding } = result

    // 5.6. Advance position by 2. (This skips past the empty line that marks
    //      the end of the headers.)
    position.position += 2

    // 5.7. Let body be the empty byte sequence.
    let body

    // 5.8. Body loop: While position is not past the end of input:
    // TODO: the steps here are completely wrong
    {
      const boundaryIndex = input.indexOf(boundary.subarray(2), position.position)

      if (boundaryIndex === -1) {
        throw parsingError('expected boundary after body')
      }

      body = input.subarray(position.position, boundaryIndex - 4)

      position.position += body.length

      // Note: position must be advanced by the body's length before being
      // decoded, otherwise the parsing will fail.
      if (encoding === 'base64') {
        body = Buffer.from(body.toString(), 'base64')
      }
    }

    // 5.9. If position does not point to a sequence of bytes starting with
    //      0x0D 0x0A (CR LF), return failure. Otherwise, advance position by 2.
    if (input[position.position] !== 0x0d || input[position.position + 1] !== 0x0a) {
      throw parsingError('expected CRLF')
    } else {
      position.position += 2
    }

    // 5.10. If filename is not null:
    let value

    if (filename !== null) {
      // 5.10.1. If contentType is null, set contentType to "text/plain".
      contentType ??= 'text/plain'

      // 5.10.2. If contentType is not an ASCII string, set contentType to the empty string.

      // Note: `buffer.isAscii` can be used at zero-cost, but converting a string to a buffer is a high overhead.
      // Content-Type is a relatively small string, so it is faster to use `String#charCodeAt`.
      if (!isAsciiString(contentType)) {
        contentType = ''
      }

      // 5.10.3. Let value be a new File object with name filename, type contentType, and body body.
      value = new File([body], filename, { type: contentType })
    } else {
      // 5.11. Otherwise:

      // 5.11.1. Let value be the UTF-8 decoding without BOM of body.
      value = decoderIgnoreBOM.decode(Buffer.from(body))
    }

    // 5.12. Assert: name is a scalar value string and value is either a scalar value string or a File object.
    assert(webidl.is.USVString(name))
    assert((typeof value === 'string' && webidl.is.USVString(value)) || webidl.is.File(value))

    // 5.13. Create an entry with name and value, and append it to entry list.
    entryList.push(makeEntry(name, value, filename))
  }
}

/**
 * Parses content-disposition attributes (e.g., name="value" or filename*=utf-8''encoded)
 * @param {Buffer} input
 * @param {{ position: number }} position
 * @returns {{ name: string, value: string, extended: boolean } | null}
 */
function parseContentDispositionAttribute (input, position) {
  // Skip leading semicolon and whitespace
  if (input[position.position] === 0x3b /* ; */) {
    position.position++
  }

  // Skip whitespace
  collectASequenceOfBytes(
    (char) => char === 0x20 || char === 0x09,
    input,
    position
  )

  // Collect attribute name (token characters)
  const attributeName = collectASequenceOfBytes(
    (char) => isToken(char) && char !== 0x3d && char !== 0x2a, // not = or *
    input,
    position
  )

  if (attributeName.length === 0) {
    return null
  }

  const attrNameStr = attributeName.toString('ascii').toLowerCase()

  // Check for extended notation (attribute*)
  const isExtended = input[position.position] === 0x2a /* * */
  if (isExtended) {
    position.position++ // skip *
  }

  // Expect = sign
  if (input[position.position] !== 0x3d /* = */) {
    return null
  }
  position.position++ // skip =

  // Skip whitespace
  collectASequenceOfBytes(
    (char) => char === 0x20 || char === 0x09,
    input,
    position
  )

  let value

  if (isExtended) {
    // Extended attribute format: charset'language'encoded-value
    const headerValue = collectASequenceOfBytes(
      (char) => char !== 0x20 && char !== 0x0d && char !== 0x0a && char !== 0x3b, // not space, CRLF, or ;
      input,
      position
    )

    // Check for utf-8'' prefix (case insensitive)
    if (
      (headerValue[0] !== 0x75 && headerValue[0] !== 0x55) || // u or U
      (headerValue[1] !== 0x74 && headerValue[1] !== 0x54) || // t or T
      (headerValue[2] !== 0x66 && headerValue[2] !== 0x46) || // f or F
      headerValue[3] !== 0x2d || // -
      headerValue[4] !== 0x38 // 8
    ) {
      throw parsingError('unknown encoding, expected utf-8\'\'')
    }

    // Skip utf-8'' and decode the rest
    value = decodeURIComponent(decoder.decode(headerValue.subarray(7)))
  } else if (input[position.position] === 0x22 /* " */) {
    // Quoted string
    position.position++ // skip opening quote

    const quotedValue = collectASequenceOfBytes(
      (char) => char !== 0x0a && char !== 0x0d && char !== 0x22, // not LF, CR, or "
      input,
      position
    )

    if (input[position.position] !== 0x22) {
      throw parsingError('Closing quote not found')
    }
    position.position++ // skip closing quote

    value = decoder.decode(quotedValue)
      .replace(/%0A/ig, '\n')
      .replace(/%0D/ig, '\r')
      .replace(/%22/g, '"')
  } else {
    // Token value (no quotes)
    const tokenValue = collectASequenceOfBytes(
      (char) => isToken(char) && char !== 0x3b, // not ;
      input,
      position
    )

    value = decoder.decode(tokenValue)
  }

  return { name: attrNameStr, value, extended: isExtended }
}

/**
 * @see https://andreubotella.github.io/multipart-form-data/#parse-multipart-form-data-headers
 * @param {Buffer} input
 * @param {{ position: number }} position
 */
function parseMultipartFormDataHeaders (input, position) {
  // 1. Let name, filename and contentType be null.
  let name = null
  let filename = null
  let contentType = null
  let encoding = null

  // 2. While true:
  while (true) {
    // 2.1. If position points to a sequence of bytes starting with 0x0D 0x0A (CR LF):
    if (input[position.position] === 0x0d && input[position.position + 1] === 0x0a) {
      // 2.1.1. If name is null, return failure.
      if (name === null) {
        throw parsingError('header name is null')
      }

      // 2.1.2. Return name, filename and contentType.
      return { name, filename, contentType, encoding }
    }

    // 2.2. Let header name be the result of collecting a sequence of bytes that are
    //      not 0x0A (LF), 0x0D (CR) or 0x3A (:), given position.
    let headerName = collectASequenceOfBytes(
      (char) => char !== 0x0a && char !== 0x0d && char !== 0x3a,
      input,
      position
    )

    // 2.3. Remove any HTTP tab or space bytes from the start or end of header name.
    headerName = removeChars(headerName, true, true, (char) => char === 0x9 || char === 0x20)

    // 2.4. If header name does not match the field-name token production, return failure.
    if (!HTTP_TOKEN_CODEPOINTS.test(headerName.toString())) {
      throw parsingError('header name does not match the field-name token production')
    }

    // 2.5. If the byte at position is not 0x3A (:), return failure.
    if (input[position.position] !== 0x3a) {
      throw parsingError('expected :')
    }

    // 2.6. Advance position by 1.
    position.position++

    // 2.7. Collect a sequence of bytes that are HTTP tab or space bytes given position.
    //      (Do nothing with those bytes.)
    collectASequenceOfBytes(
      (char) => char === 0x20 || char === 0x09,
      input,
      position
    )

    // 2.8. Byte-lowercase header name and switch on the result:
    switch (bufferToLowerCasedHeaderName(headerName)) {
      case 'content-disposition': {
        name = filename = null
        // Track whether filename was set from the extended (RFC 5987) form so
        // a subsequent legacy `filename` attribute does not override it.
        let filenameIsExtended = false

        // Collect the disposition type (should be "form-data")
        const dispositionType = collectASequenceOfBytes(
          (char) => isToken(char),
          input,
          position
        )

        if (dispositionType.toString('ascii').toLowerCase() !== 'form-data') {
          throw parsingError('expected form-data for content-disposition header')
        }

        // Parse attributes recursively until CRLF
        while (
          position.position < input.length &&
          (input[position.position] !== 0x0d ||
          input[position.position + 1] !== 0x0a)
        ) {
          const attribute = parseContentDispositionAttribute(input, position)

          if (!attribute) {
            break
          }

          if (attribute.name === 'name') {
            name = attribute.value
          } else if (attribute.name === 'filename') {
            // Per RFC 5987 §4.1, when both legacy and extended forms of the
            // same parameter are present, the extended (filename*) form takes
            // precedence regardless of the order they appear in.
            if (attribute.extended) {
              filename = attribute.value
              filenameIsExtended = true
            } else if (!filenameIsExtended) {
              filename = attribute.value
            }
          }
        }

        if (name === null) {
          throw parsingError('name attribute is required in content-disposition header')
        }

        break
      }
      case 'content-type': {
        // 1. Let header value be the result of collecting a sequence of bytes that are
        //    not 0x0A (LF) or 0x0D (CR), given position.
        let headerValue = collectASequenceOfBytes(
          (char) => char !== 0x0a && char !== 0x0d,
          input,
          position
        )

        // 2. Remove any HTTP tab or space bytes from the end of header value.
        headerValue = removeChars(headerValue, false, true, (char) => char === 0x9 || char === 0x20)

        // 3. Set contentType to the isomorphic decoding of header value.
        contentType = isomorphicDecode(headerValue)

        break
      }
      case 'content-transfer-encoding': {
        let headerValue = collectASequenceOfBytes(
          (char) => char !== 0x0a && char !== 0x0d,
          input,
          position
        )

        headerValue = removeChars(headerValue, false, true, (char) => char === 0x9 || char === 0x20)

        encoding = isomorphicDecode(headerValue)

        break
      }
      default: {
        // Collect a sequence of bytes that are not 0x0A (LF) or 0x0D (CR), given position.
        // (Do nothing with those bytes.)
        collectASequenceOfBytes(
          (char) => char !== 0x0a && char !== 0x0d,
          input,
          position
        )
      }
    }

    // 2.9. If position does not point to a sequence of bytes starting with 0x0D 0x0A
    //      (CR LF), return failure. Otherwise, advance position by 2 (past the newline).
    if (input[position.position] !== 0x0d || input[position.position + 1] !== 0x0a) {
      throw parsingError('expected CRLF')
    } else {
      position.position += 2
    }
  }
}

/**
 * @param {(char: number) => boolean} condition
 * @param {Buffer} input
 * @param {{ position: number }} position
 */
function collectASequenceOfBytes (condition, input, position) {
  let start = position.position

  while (start < input.length && condition(input[start])) {
    ++start
  }

  return input.subarray(position.position, (position.position = start))
}

/**
 * @param {Buffer} buf
 * @param {boolean} leading
 * @param {boolean} trailing
 * @param {(charCode: number) => boolean} predicate
 * @returns {Buffer}
 */
function removeChars (buf, leading, trailing, predicate) {
  let lead = 0
  let trail = buf.length - 1

  if (leading) {
    while (lead < buf.length && predicate(buf[lead])) lead++
  }

  if (trailing) {
    while (trail > 0 && predicate(buf[trail])) trail--
  }

  return lead === 0 && trail === buf.length - 1 ? buf : buf.subarray(lead, trail + 1)
}

/**
 * Checks if {@param buffer} starts with {@param start}
 * @param {Buffer} buffer
 * @param {Buffer} start
 * @param {{ position: number }} position
 */
function bufferStartsWith (buffer, start, position) {
  if (buffer.length < start.length) {
    return false
  }

  for (let i = 0; i < start.length; i++) {
    if (start[i] !== buffer[position.position + i]) {
      return false
    }
  }

  return true
}

function parsingError (cause) {
  return new TypeError('Failed to parse body as FormData.', { cause: new TypeError(cause) })
}

/**
 * CTL            = <any US-ASCII control character
 *                  (octets 0 - 31) and DEL (127)>
 * @param {number} char
 */
function isCTL (char) {
  return char <= 0x1f || char === 0x7f
}

/**
 * tspecials :=  "(" / ")" / "<" / ">" / "@" /
 *                "," / ";" / ":" / "\" / <">
 *                "/" / "[" / "]" / "?" / "="
 *                ; Must be in quoted-string,
 *                ; to use within parameter values
 * @param {number} char
 */
function isTSpecial (char) {
  return (
    char === 0x28 || // (
    char === 0x29 || // )
    char === 0x3c || // <
    char === 0x3e || // >
    char === 0x40 || // @
    char === 0x2c || // ,
    char === 0x3b || // ;
    char === 0x3a || // :
    char === 0x5c || // \
    char === 0x22 || // "
    char === 0x2f || // /
    char === 0x5b || // [
    char === 0x5d || // ]
    char === 0x3f || // ?
    char === 0x3d    // +
  )
}

/**
 * token := 1*<any (US-ASCII) CHAR except SPACE, CTLs,
 *          or tspecials>
 * @param {number} char
 */
function isToken (char) {
  return (
    char <= 0x7f &&  // ascii
    char !== 0x20 && // space
    char !== 0x09 &&
    !isCTL(char) &&
    !isTSpecial(char)
  )
}

module.exports = {
  multipartFormDataParser,
  validateBoundary
}


/***/ },

/***/ 5910:
/***/ (module, __unused_webpack_exports, __nccwpck_require__) => {



const { iteratorMixin } = __nccwpck_require__(3168)
const { kEnumerableProperty } = __nccwpck_require__(3440)
const { webidl } = __nccwpck_require__(7879)
const nodeUtil = __nccwpck_require__(7975)

// https://xhr.spec.whatwg.org/#formdata
class FormData {
  #state = []

  constructor (form = undefined) {
    webidl.util.markAsUncloneable(this)

    if (form !== undefined) {
      throw webidl.errors.conversionFailed({
        prefix: 'FormData constructor',
        argument: 'Argument 1',
        types: ['undefined']
      })
    }
  }

  append (name, value, filename = undefined) {
    webidl.brandCheck(this, FormData)

    const prefix = 'FormData.append'
    webidl.argumentLengthCheck(arguments, 2, prefix)

    name = webidl.converters.USVString(name)

    if (arguments.length === 3 || webidl.is.Blob(value)) {
      value = webidl.converters.Blob(value, prefix, 'value')

      if (filename !== undefined) {
        filename = webidl.converters.USVString(filename)
      }
    } else {
      value = webidl.converters.USVString(value)
    }

    // 1. Let value be value if given; otherwise blobValue.

    // 2. Let entry be the result of creating an entry with
    // name, value, and filename if given.
    const entry = makeEntry(name, value, filename)

    // 3. Append entry to this’s entry list.
    this.#state.push(entry)
  }

  delete (name) {
    webidl.brandCheck(this, FormData)

    const prefix = 'FormData.delete'
    webidl.argumentLengthCheck(arguments, 1, prefix)

    name = webidl.converters.USVString(name)

    // The delete(name) method steps are to remove all entries whose name
    // is name from this’s entry list.
    this.#state = this.#state.filter(entry => entry.name !== name)
  }

  get (name) {
    webidl.brandCheck(this, FormData)

    const prefix = 'FormData.get'
    webidl.argumentLengthCheck(arguments, 1, prefix)

    name = webidl.converters.USVString(name)

    // 1. If there is no entry whose name is name in this’s entry list,
    // then return null.
    const idx = this.#state.findIndex((entry) => entry.name === name)
    if (idx === -1) {
      return null
    }

    // 2. Return the value of the first entry whose name is name from
    // this’s entry list.
    return this.#state[idx].value
  }

  getAll (name) {
    webidl.brandCheck(this, FormData)

    const prefix = 'FormData.getAll'
    webidl.argumentLengthCheck(arguments, 1, prefix)

    name = webidl.converters.USVString(name)

    // 1. If there is no entry whose name is name in this’s entry list,
    // then return the empty list.
    // 2. Return the values of all entries whose name is name, in order,
    // from this’s entry list.
    return this.#state
      .filter((entry) => entry.name === name)
      .map((entry) => entry.value)
  }

  has (name) {
    webidl.brandCheck(this, FormData)

    const prefix = 'FormData.has'
    webidl.argumentLengthCheck(arguments, 1, prefix)

    name = webidl.converters.USVString(name)

    // The has(name) method steps are to return true if there is an entry
    // whose name is name in this’s entry list; otherwise false.
    return this.#state.findIndex((entry) => entry.name === name) !== -1
  }

  set (name, value, filename = undefined) {
    webidl.brandCheck(this, FormData)

    const prefix = 'FormData.set'
    webidl.argumentLengthCheck(arguments, 2, prefix)

    name = webidl.converters.USVString(name)

    if (arguments.length === 3 || webidl.is.Blob(value)) {
      value = webidl.converters.Blob(value, prefix, 'value')

      if (filename !== undefined) {
        filename = webidl.converters.USVString(filename)
      }
    } else {
      value = webidl.converters.USVString(value)
    }

    // The set(name, value) and set(name, blobValue, filename) method steps
    // are:

    // 1. Let value be value if given; otherwise blobValue.

    // 2. Let entry be the result of creating an entry with name, value, and
    // filename if given.
    const entry = makeEntry(name, value, filename)

    // 3. If there are entries in this’s entry list whose name is name, then
    // replace the first such entry with entry and remove the others.
    const idx = this.#state.findIndex((entry) => entry.name === name)
    if (idx !== -1) {
      this.#state = [
        ...this.#state.slice(0, idx),
        entry,
        ...this.#state.slice(idx + 1).filter((entry) => entry.name !== name)
      ]
    } else {
      // 4. Otherwise, append entry to this’s entry list.
      this.#state.push(entry)
    }
  }

  [nodeUtil.inspect.custom] (depth, options) {
    const state = this.#state.reduce((a, b) => {
      if (a[b.name]) {
        if (Array.isArray(a[b.name])) {
          a[b.name].push(b.value)
        } else {
          a[b.name] = [a[b.name], b.value]
        }
      } else {
        a[b.name] = b.value
      }

      return a
    }, { __proto__: null })

    options.depth ??= depth
    options.colors ??= true

    const output = nodeUtil.formatWithOptions(options, state)

    // remove [Object null prototype]
    return `FormData ${output.slice(output.indexOf(']') + 2)}`
  }

  /**
   * @param {FormData} formData
   */
  static getFormDataState (formData) {
    return formData.#state
  }

  /**
   * @param {FormData} formData
   * @param {any[]} newState
   */
  static setFormDataState (formData, newState) {
    formData.#state = newState
  }
}

const { getFormDataState, setFormDataState } = FormData
Reflect.deleteProperty(FormData, 'getFormDataState')
Reflect.deleteProperty(FormData, 'setFormDataState')

iteratorMixin('FormData', FormData, getFormDataState, 'name', 'value')

Object.defineProperties(FormData.prototype, {
  append: kEnumerableProperty,
  delete: kEnumerableProperty,
  get: kEnumerableProperty,
  getAll: kEnumerableProperty,
  has: kEnumerableProperty,
  set: kEnumerableProperty,
  [Symbol.toStringTag]: {
    value: 'FormData',
    configurable: true
  }
})

/**
 * @see https://html.spec.whatwg.org/multipage/form-control-infrastructure.html#create-an-entry
 * @param {string} name
 * @param {string|Blob} value
 * @param {?string} filename
 * @returns
 */
function makeEntry (name, value, filename) {
  // 1. Set name to the result of converting name into a scalar value string.
  // Note: This operation was done by the webidl converter USVString.

  // 2. If value is a string, then set value to the result of converting
  //    value into a scalar value string.
  if (typeof value === 'string') {
    // Note: This operation was done by the webidl converter USVString.
  } else {
    // 3. Otherwise:

    // 1. If value is not a File object, then set value to a new File object,
    //    representing the same bytes, whose name attribute value is "blob"
    if (!webidl.is.File(value)) {
      value = new File([value], 'blob', { type: value.type })
    }

    // 2. If filename is given, then set value to a new File object,
    //    representing the same bytes, whose name attribute is filename.
    if (filename !== undefined) {
      /** @type {FilePropertyBag} */
      const options = {
        type: value.type,
        lastModified: value.lastModified
      }

      value = new File([value], filename, options)
    }
  }

  // 4. Return an entry whose name is name and whose value is value.
  return { name, value }
}

webidl.is.FormData = webidl.util.MakeTypeAssertion(FormData)

module.exports = { FormData, makeEntry, setFormDataState }


/***/ },

/***/ 1059:
/***/ (module) => {



// In case of breaking changes, increase the version
// number to avoid conflicts.
const globalOrigin = Symbol.for('undici.globalOrigin.1')

function getGlobalOrigin () {
  return globalThis[globalOrigin]
}

function setGlobalOrigin (newOrigin) {
  if (newOrigin === undefined) {
    Object.defineProperty(globalThis, globalOrigin, {
      value: undefined,
      writable: true,
      enumerable: false,
      configurable: false
    })

    return
  }

  const parsedURL = new URL(newOrigin)

  if (parsedURL.protocol !== 'http:' && parsedURL.protocol !== 'https:') {
    throw new TypeError(`Only http & https urls are allowed, received ${parsedURL.protocol}`)
  }

  Object.defineProperty(globalThis, globalOrigin, {
    value: parsedURL,
    writable: true,
    enumerable: false,
    configurable: false
  })
}

module.exports = {
  getGlobalOrigin,
  setGlobalOrigin
}


/***/ },

/***/ 3168:
/***/ (module, __unused_webpack_exports, __nccwpck_require__) => {



const { Transform } = __nccwpck_require__(7075)
const zlib = __nccwpck_require__(8522)
const { redirectStatusSet, referrerPolicyTokens, badPortsSet } = __nccwpck_require__(4495)
const { getGlobalOrigin } = __nccwpck_require__(1059)
const { collectAnHTTPQuotedString, parseMIMEType } = __nccwpck_require__(1900)
const { performance } = __nccwpck_require__(643)
const { ReadableStreamFrom, isValidHTTPToken, normalizedMethodRecordsBase } = __nccwpck_require__(3440)
const assert = __nccwpck_require__(4589)
const { isUint8Array } = __nccwpck_require__(3429)
const { webidl } = __nccwpck_require__(7879)
const { isomorphicEncode, collectASequenceOfCodePoints, removeChars } = __nccwpck_require__(8116)

function responseURL (response) {
  // https://fetch.spec.whatwg.org/#responses
  // A response has an associated URL. It is a pointer to the last URL
  // in response’s URL list and null if response’s URL list is empty.
  const urlList = response.urlList
  const length = urlList.length
  return length === 0 ? null : urlList[length - 1].toString()
}

// https://fetch.spec.whatwg.org/#concept-response-location-url
function responseLocationURL (response, requestFragment) {
  // 1. If response’s status is not a redirect status, then return null.
  if (!redirectStatusSet.has(response.status)) {
    return null
  }

  // 2. Let location be the result of extracting header list values given
  // `Location` and response’s header list.
  let location = response.headersList.get('location', true)

  // 3. If location is a header value, then set location to the result of
  //    parsing location with response’s URL.
  if (location !== null && isValidHeaderValue(location)) {
    if (!isValidEncodedURL(location)) {
      // Some websites respond location header in UTF-8 form without encoding them as ASCII
      // and major browsers redirect them to correctly UTF-8 encoded addresses.
      // Here, we handle that behavior in the same way.
      location = normalizeBinaryStringToUtf8(location)
    }
    location = new URL(location, responseURL(response))
  }

  // 4. If location is a URL whose fragment is null, then set location’s
  // fragment to requestFragment.
  if (location && !location.hash) {
    location.hash = requestFragment
  }

  // 5. Return location.
  return location
}

/**
 * @see https://www.rfc-editor.org/rfc/rfc1738#section-2.2
 * @param {string} url
 * @returns {boolean}
 */
function isValidEncodedURL (url) {
  for (let i = 0; i < url.length; ++i) {
    const code = url.charCodeAt(i)

    if (
      code > 0x7E || // Non-US-ASCII + DEL
      code < 0x20 // Control characters NUL - US
    ) {
      return false
    }
  }
  return true
}

/**
 * If string contains non-ASCII characters, assumes it's UTF-8 encoded and decodes it.
 * Since UTF-8 is a superset of ASCII, this will work for ASCII strings as well.
 * @param {string} value
 * @returns {string}
 */
function normalizeBinaryStringToUtf8 (value) {
  return Buffer.from(value, 'binary').toString('utf8')
}

/** @returns {URL} */
function requestCurrentURL (request) {
  return request.urlList[request.urlList.length - 1]
}

function requestBadPort (request) {
  // 1. Let url be request’s current URL.
  const url = requestCurrentURL(request)

  // 2. If url’s scheme is an HTTP(S) scheme and url’s port is a bad port,
  // then return blocked.
  if (urlIsHttpHttpsScheme(url) && badPortsSet.has(url.port)) {
    return 'blocked'
  }

  // 3. Return allowed.
  return 'allowed'
}

function isErrorLike (object) {
  return object instanceof Error || (
    object?.constructor?.name === 'Error' ||
    object?.constructor?.name === 'DOMException'
  )
}

// Check whether |statusText| is a ByteString and
// matches the Reason-Phrase token production.
// RFC 2616: https://tools.ietf.org/html/rfc2616
// RFC 7230: https://tools.ietf.org/html/rfc7230
// "reason-phrase = *( HTAB / SP / VCHAR / obs-text )"
// https://github.com/chromium/chromium/blob/94.0.4604.1/third_party/blink/renderer/core/fetch/response.cc#L116
function isValidReasonPhrase (statusText) {
  for (let i = 0; i < statusText.length; ++i) {
    const c = statusText.charCodeAt(i)
    if (
      !(
        (
          c === 0x09 || // HTAB
          (c >= 0x20 && c <= 0x7e) || // SP / VCHAR
          (c >= 0x80 && c <= 0xff)
        ) // obs-text
      )
    ) {
      return false
    }
  }
  return true
}

/**
 * @see https://fetch.spec.whatwg.org/#header-name
 * @param {string} potentialValue
 */
const isValidHeaderName = isValidHTTPToken

/**
 * @see https://fetch.spec.whatwg.org/#header-value
 * @param {string} potentialValue
 */
function isValidHeaderValue (potentialValue) {
  // - Has no leading or trailing HTTP tab or space bytes.
  // - Contains no 0x00 (NUL) or HTTP newline bytes.
  return (
    potentialValue[0] === '\t' ||
    potentialValue[0] === ' ' ||
    potentialValue[potentialValue.length - 1] === '\t' ||
    potentialValue[potentialValue.length - 1] === ' ' ||
    potentialValue.includes('\n') ||
    potentialValue.includes('\r') ||
    potentialValue.includes('\0')
  ) === false
}

/**
 * Parse a referrer policy from a Referrer-Policy header
 * @see https://w3c.github.io/webappsec-referrer-policy/#parse-referrer-policy-from-header
 */
function parseReferrerPolicy (actualResponse) {
  // 1. Let policy-tokens be the result of extracting header list values given `Referrer-Policy` and response’s header list.
  const policyHeader = (actualResponse.headersList.get('referrer-policy', true) ?? '').split(',')

  // 2. Let policy be the empty string.
  let policy = ''

  // 3. For each token in policy-tokens, if token is a referrer policy and token is not the empty string, then set policy to token.

  // Note: As the referrer-policy can contain multiple policies
  // separated by comma, we need to loop through all of them
  // and pick the first valid one.
  // Ref: https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Referrer-Policy#specify_a_fallback_policy
  if (policyHeader.length) {
    // The right-most policy takes precedence.
    // The left-most policy is the fallback.
    for (let i = policyHeader.length; i !== 0; i--) {
      const token = policyHeader[i - 1].trim()
      if (referrerPolicyTokens.has(token)) {
        policy = token
        break
      }
    }
  }

  // 4. Return policy.
  return policy
}

/**
 * Given a request request and a response actualResponse, this algorithm
 * updates request’s referrer policy according to the Referrer-Policy
 * header (if any) in actualResponse.
 * @see https://w3c.github.io/webappsec-referrer-policy/#set-requests-referrer-policy-on-redirect
 * @param {import('./request').Request} request
 * @param {import('./response').Response} actualResponse
 */
function setRequestReferrerPolicyOnRedirect (request, actualResponse) {
  // 1. Let policy be the result of executing § 8.1 Parse a referrer policy
  // from a Referrer-Policy header on actualResponse.
  const policy = parseReferrerPolicy(actualResponse)

  // 2. If policy is not the empty string, then set request’s referrer policy to policy.
  if (policy !== '') {
    request.referrerPolicy = policy
  }
}

// https://fetch.spec.whatwg.org/#cross-origin-resource-policy-check
function crossOriginResourcePolicyCheck () {
  // TODO
  return 'allowed'
}

// https://fetch.spec.whatwg.org/#concept-cors-check
function corsCheck () {
  // TODO
  return 'success'
}

// https://fetch.spec.whatwg.org/#concept-tao-check
function TAOCheck () {
  // TODO
  return 'success'
}

function appendFetchMetadata (httpRequest) {
  //  https://w3c.github.io/webappsec-fetch-metadata/#sec-fetch-dest-header
  //  TODO

  //  https://w3c.github.io/webappsec-fetch-metadata/#sec-fetch-mode-header

  //  1. Assert: r’s url is a potentially trustworthy URL.
  //  TODO

  //  2. Let header be a Structured Header whose value is a token.
  let header = null

  //  3. Set header’s value to r’s mode.
  header = httpRequest.mode

  //  4. Set a structured field value `Sec-Fetch-Mode`/header in r’s header list.
  httpRequest.headersList.set('sec-fetch-mode', header, true)

  //  https://w3c.github.io/webappsec-fetch-metadata/#sec-fetch-site-header
  //  TODO

  //  https://w3c.github.io/webappsec-fetch-metadata/#sec-fetch-user-header
  //  TODO
}

// https://fetch.spec.whatwg.org/#append-a-request-origin-header
function appendRequestOriginHeader (request) {
  // 1. Let serializedOrigin be the result of byte-serializing a request origin
  //    with request.
  // TODO: implement "byte-serializing a request origin"
  let serializedOrigin = request.origin

  // - "'client' is changed to an origin during fetching."
  //   This doesn't happen in undici (in most cases) because undici, by default,
  //   has no concept of origin.
  // - request.origin can also be set to request.client.origin (client being
  //   an environment settings object), which is undefined without using
  //   setGlobalOrigin.
  if (serializedOrigin === 'client' || serializedOrigin === undefined) {
    return
  }

  // 2. If request’s response tainting is "cors" or request’s mode is "websocket",
  //    then append (`Origin`, serializedOrigin) to request’s header list.
  // 3. Otherwise, if request’s method is neither `GET` nor `HEAD`, then:
  if (request.responseTainting === 'cors' || request.mode === 'websocket') {
    request.headersList.append('origin', serializedOrigin, true)
  } else if (request.method !== 'GET' && request.method !== 'HEAD') {
    // 1. Switch on request’s referrer policy:
    switch (request.referrerPolicy) {
      case 'no-referrer':
        // Set serializedOrigin to `null`.
        serializedOrigin = null
        break
      case 'no-referrer-when-downgrade':
      case 'strict-origin':
      case 'strict-origin-when-cross-origin':
        // If request’s origin is a tuple origin, its scheme is "https", and
        // request’s current URL’s scheme is not "https", then set
        // serializedOrigin to `null`.
        if (request.origin && urlHasHttpsScheme(request.origin) && !urlHasHttpsScheme(requestCurrentURL(request))) {
          serializedOrigin = null
        }
        break
      case 'same-origin':
        // If request’s origin is not same origin with request’s current URL’s
        // origin, then set serializedOrigin to `null`.
        if (!sameOrigin(request, requestCurrentURL(request))) {
          serializedOrigin = null
        }
        break
      default:
        // Do nothing.
    }

    // 2. Append (`Origin`, serializedOrigin) to request’s header list.
    request.headersList.append('origin', serializedOrigin, true)
  }
}

// https://w3c.github.io/hr-time/#dfn-coarsen-time
function coarsenTime (timestamp, crossOriginIsolatedCapability) {
  // TODO
  return timestamp
}

// https://fetch.spec.whatwg.org/#clamp-and-coarsen-connection-timing-info
function clampAndCoarsenConnectionTimingInfo (connectionTimingInfo, defaultStartTime, crossOriginIsolatedCapability) {
  if (!connectionTimingInfo?.startTime || connectionTimingInfo.startTime < defaultStartTime) {
    return {
      domainLookupStartTime: defaultStartTime,
      domainLookupEndTime: defaultStartTime,
      connectionStartTime: defaultStartTime,
      connectionEndTime: defaultStartTime,
      secureConnectionStartTime: defaultStartTime,
      ALPNNegotiatedProtocol: connectionTimingInfo?.ALPNNegotiatedProtocol
    }
  }

  return {
    domainLookupStartTime: coarsenTime(connectionTimingInfo.domainLookupStartTime, crossOriginIsolatedCapability),
    domainLookupEndTime: coarsenTime(connectionTimingInfo.domainLookupEndTime, crossOriginIsolatedCapability),
    connectionStartTime: coarsenTime(connectionTimingInfo.connectionStartTime, crossOriginIsolatedCapability),
    connectionEndTime: coarsenTime(connectionTimingInfo.connectionEndTime, crossOriginIsolatedCapability),
    secureConnectionStartTime: coarsenTime(connectionTimingInfo.secureConnectionStartTime, crossOriginIsolatedCapability),
    ALPNNegotiatedProtocol: connectionTimingInfo.ALPNNegotiatedProtocol
  }
}

// https://w3c.github.io/hr-time/#dfn-coarsened-shared-current-time
function coarsenedSharedCurrentTime (crossOriginIsolatedCapability) {
  return coarsenTime(performance.now(), crossOriginIsolatedCapability)
}

// https://fetch.spec.whatwg.org/#create-an-opaque-timing-info
function createOpaqueTimingInfo (timingInfo) {
  return {
    startTime: timingInfo.startTime ?? 0,
    redirectStartTime: 0,
    redirectEndTime: 0,
    postRedirectStartTime: timingInfo.startTime ?? 0,
    finalServiceWorkerStartTime: 0,
    finalNetworkResponseStartTime: 0,
    finalNetworkRequestStartTime: 0,
    endTime: 0,
    encodedBodySize: 0,
    decodedBodySize: 0,
    finalConnectionTimingInfo: null
  }
}

// https://html.spec.whatwg.org/multipage/origin.html#policy-container
function makePolicyContainer () {
  // Note: the fetch spec doesn't make use of embedder policy or CSP list
  return {
    referrerPolicy: 'strict-origin-when-cross-origin'
  }
}

// https://html.spec.whatwg.org/multipage/origin.html#clone-a-policy-container
function clonePolicyContainer (policyContainer) {
  return {
    referrerPolicy: policyContainer.referrerPolicy
  }
}

/**
 * Determine request’s Referrer
 *
 * @see https://w3c.github.io/webappsec-referrer-policy/#determine-requests-referrer
 */
function determineRequestsReferrer (request) {
  // Given a request request, we can determine the correct referrer information
  // to send by examining its referrer policy as detailed in the following
  // steps, which return either no referrer or a URL:

  // 1. Let policy be request's referrer policy.
  const policy = request.referrerPolicy

  // Note: policy cannot (shouldn't) be null or an empty string.
  assert(policy)

  // 2. Let environment be request’s client.

  let referrerSource = null

  // 3. Switch on request’s referrer:

  // "client"
  if (request.referrer === 'client') {
    // Note: node isn't a browser and doesn't implement document/iframes,
    // so we bypass this step and replace it with our own.

    const globalOrigin = getGlobalOrigin()

    if (!globalOrigin || globalOrigin.origin === 'null') {
      return 'no-referrer'
    }

    // Note: we need to clone it as it's mutated
    referrerSource = new URL(globalOrigin)
  // a URL
  } else if (webidl.is.URL(request.referrer)) {
    // Let referrerSource be request’s referrer.
    referrerSource = request.referrer
  }

  // 4. Let request’s referrerURL be the result of stripping referrerSource for
  //    use as a referrer.
  let referrerURL = stripURLForReferrer(referrerSource)

  // 5. Let referrerOrigin be the result of stripping referrerSource for use as
  //    a referrer, with the origin-only flag set to true.
  const referrerOrigin = stripURLForReferrer(referrerSource, true)

  // 6. If the result of serializing referrerURL is a string whose length is
  //    greater than 4096, set referrerURL to referrerOrigin.
  if (referrerURL.toString().length > 4096) {
    referrerURL = referrerOrigin
  }

  // 7. The user agent MAY alter referrerURL or referrerOrigin at this point
  // to enforce arbitrary policy considerations in the interests of minimizing
  // data leakage. For example, the user agent could strip the URL down to an
  // origin, modify its host, replace it with an empty string, etc.

  // 8. Execute the switch statements corresponding to the value of policy:
  switch (policy) {
    case 'no-referrer':
      // Return no referrer
      return 'no-referrer'
    case 'origin':
      // Return referrerOrigin
      if (referrerOrigin != null) {
        return referrerOrigin
      }
      return stripURLForReferrer(referrerSource, true)
    case 'unsafe-url':
      // Return referrerURL.
      return referrerURL
    case 'strict-origin': {
      const currentURL = requestCurrentURL(request)

      // 1. If referrerURL is a potentially trustworthy URL and request’s
      //    current URL is not a potentially trustworthy URL, then return no
      //    referrer.
      if (isURLPotentiallyTrustworthy(referrerURL) && !isURLPotentiallyTrustworthy(currentURL)) {
        return 'no-referrer'
      }
      // 2. Return referrerOrigin
      return referrerOrigin
    }
    case 'strict-origin-when-cross-origin': {
      const currentURL = requestCurrentURL(request)

      // 1. If the origin of referrerURL and the origin of request’s current
      //    URL are the same, then return referrerURL.
      if (sameOrigin(referrerURL, currentURL)) {
        return referrerURL
      }

      // 2. If referrerURL is a potentially trustworthy URL and request’s
      //    current URL is not a potentially trustworthy URL, then return no
      //    referrer.
      if (isURLPotentiallyTrustworthy(referrerURL) && !isURLPotentiallyTrustworthy(currentURL)) {
        return 'no-referrer'
      }

      // 3. Return referrerOrigin.
      return referrerOrigin
    }
    case 'same-origin':
      // 1. If the origin of referrerURL and the origin of request’s current
      // URL are the same, then return referrerURL.
      if (sameOrigin(request, referrerURL)) {
        return referrerURL
      }
      // 2. Return no referrer.
      return 'no-referrer'
    case 'origin-when-cross-origin':
      // 1. If the origin of referrerURL and the origin of request’s current
      // URL are the same, then return referrerURL.
      if (sameOrigin(request, referrerURL)) {
        return referrerURL
      }
      // 2. Return referrerOrigin.
      return referrerOrigin
    case 'no-referrer-when-downgrade': {
      const currentURL = requestCurrentURL(request)

      // 1. If referrerURL is a potentially trustworthy URL and request’s
      //    current URL is not a potentially trustworthy URL, then return no
      //    referrer.
      if (isURLPotentiallyTrustworthy(referrerURL) && !isURLPotentiallyTrustworthy(currentURL)) {
        return 'no-referrer'
      }
      // 2. Return referrerURL.
      return referrerURL
    }
  }
}

/**
 * Certain portions of URLs must not be included when sending a URL as the
 * value of a `Referer` header: a URLs fragment, username, and password
 * components must be stripped from the URL before it’s sent out. This
 * algorithm accepts a origin-only flag, which defaults to false. If set to
 * true, the algorithm will additionally remove the URL’s path and query
 * components, leaving only the scheme, host, and port.
 *
 * @see https://w3c.github.io/webappsec-referrer-policy/#strip-url
 * @param {URL} url
 * @param {boolean} [originOnly=false]
 */
function stripURLForReferrer (url, originOnly = false) {
  // 1. Assert: url is a URL.
  assert(webidl.is.URL(url))

  // Note: Create a new URL instance to avoid mutating the original URL.
  url = new URL(url)

  // 2. If url’s scheme is a local scheme, then return no referrer.
  if (urlIsLocal(url)) {
    return 'no-referrer'
  }

  // 3. Set url’s username to the empty string.
  url.username = ''

  // 4. Set url’s password to the empty string.
  url.password = ''

  // 5. Set url’s fragment to null.
  url.hash = ''

  // 6. If the origin-only flag is true, then:
  if (originOnly === true) {
    // 1. Set url’s path to « the empty string ».
    url.pathname = ''

    // 2. Set url’s query to null.
    url.search = ''
  }

  // 7. Return url.
  return url
}

const isPotentialleTrustworthyIPv4 = RegExp.prototype.test
  .bind(/^127\.(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)\.){2}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/)

const isPotentiallyTrustworthyIPv6 = RegExp.prototype.test
  .bind(/^(?:(?:0{1,4}:){7}|(?:0{1,4}:){1,6}:|::)0{0,3}1$/)

/**
 * Check if host matches one of the CIDR notations 127.0.0.0/8 or ::1/128.
 *
 * @param {string} origin
 * @returns {boolean}
 */
function isOriginIPPotentiallyTrustworthy (origin) {
  // IPv6
  if (origin.includes(':')) {
    // Remove brackets from IPv6 addresses
    if (origin[0] === '[' && origin[origin.length - 1] === ']') {
      origin = origin.slice(1, -1)
    }
    return isPotentiallyTrustworthyIPv6(origin)
  }

  // IPv4
  return isPotentialleTrustworthyIPv4(origin)
}

/**
 * A potentially trustworthy origin is one which a user agent can generally
 * trust as delivering data securely.
 *
 * Return value `true` means `Potentially Trustworthy`.
 * Return value `false` means `Not Trustworthy`.
 *
 * @see https://w3c.github.io/webappsec-secure-contexts/#is-origin-trustworthy
 * @param {string} origin
 * @returns {boolean}
 */
function isOriginPotentiallyTrustworthy (origin) {
  // 1. If origin is an opaque origin, return "Not Trustworthy".
  if (origin == null || origin === 'null') {
    return false
  }

  // 2. Assert: origin is a tuple origin.
  origin = new URL(origin)

  // 3. If origin’s scheme is either "https" or "wss",
  //    return "Potentially Trustworthy".
  if (origin.protocol === 'https:' || origin.protocol === 'wss:') {
    return true
  }

  // 4. If origin’s host matches one of the CIDR notations 127.0.0.0/8 or
  // ::1/128 [RFC4632], return "Potentially Trustworthy".
  if (isOriginIPPotentiallyTrustworthy(origin.hostname)) {
    return true
  }

  // 5. If the user agent conforms to the name resolution rules in
  //    [let-localhost-be-localhost] and one of the following is true:

  //    origin’s host is "localhost" or "localhost."
  if (origin.hostname === 'localhost' || origin.hostname === 'localhost.') {
    return true
  }

  //    origin’s host ends with ".localhost" or ".localhost."
  if (origin.hostname.endsWith('.localhost') || origin.hostname.endsWith('.localhost.')) {
    return true
  }

  // 6. If origin’s scheme is "file", return "Potentially Trustworthy".
  if (origin.protocol === 'file:') {
    return true
  }

  // 7. If origin’s scheme component is one which the user agent considers to
  // be authenticated, return "Potentially Trustworthy".

  // 8. If origin has been configured as a trustworthy origin, return
  //    "Potentially Trustworthy".

  // 9. Return "Not Trustworthy".
  return false
}

/**
 * A potentially trustworthy URL is one which either inherits context from its
 * creator (about:blank, about:srcdoc, data) or one whose origin is a
 * potentially trustworthy origin.
 *
 * Return value `true` means `Potentially Trustworthy`.
 * Return value `false` means `Not Trustworthy`.
 *
 * @see https://www.w3.org/TR/secure-contexts/#is-url-trustworthy
 * @param {URL} url
 * @returns {boolean}
 */
function isURLPotentiallyTrustworthy (url) {
  // Given a URL record (url), the following algorithm returns "Potentially
  // Trustworthy" or "Not Trustworthy" as appropriate:
  if (!webidl.is.URL(url)) {
    return false
  }

  // 1. If url is "about:blank" or "about:srcdoc",
  //    return "Potentially Trustworthy".
  if (url.href === 'about:blank' || url.href === 'about:srcdoc') {
    return true
  }

  // 2. If url’s scheme is "data", return "Potentially Trustworthy".
  if (url.protocol === 'data:') return true

  // Note: The origin of blob: URLs is the origin of the context in which they
  // were created. Therefore, blobs created in a trustworthy origin will
  // themselves be potentially trustworthy.
  if (url.protocol === 'blob:') return true

  // 3. Return the result of executing § 3.1 Is origin potentially trustworthy?
  // on url’s origin.
  return isOriginPotentiallyTrustworthy(url.origin)
}

// https://w3c.github.io/webappsec-upgrade-insecure-requests/#upgrade-request
function tryUpgradeRequestToAPotentiallyTrustworthyURL (request) {
  // TODO
}

/**
 * @link {https://html.spec.whatwg.org/multipage/origin.html#same-origin}
 * @param {URL} A
 * @param {URL} B
 */
function sameOrigin (A, B) {
  // 1. If A and B are the same opaque origin, then return true.
  if (A.origin === B.origin && A.origin === 'null') {
    return true
  }

  // 2. If A and B are both tuple origins and their schemes,
  //    hosts, and port are identical, then return true.
  if (A.protocol === B.protocol && A.hostname === B.hostname && A.port === B.port) {
    return true
  }

  // 3. Return false.
  return false
}

function isAborted (fetchParams) {
  return fetchParams.controller.state === 'aborted'
}

function isCancelled (fetchParams) {
  return fetchParams.controller.state === 'aborted' ||
    fetchParams.controller.state === 'terminated'
}

/**
 * @see https://fetch.spec.whatwg.org/#concept-method-normalize
 * @param {string} method
 */
function normalizeMethod (method) {
  return normalizedMethodRecordsBase[method.toLowerCase()] ?? method
}

// https://tc39.es/ecma262/#sec-%25iteratorprototype%25-object
const esIteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()))

/**
 * @see https://webidl.spec.whatwg.org/#dfn-iterator-prototype-object
 * @param {string} name name of the instance
 * @param {((target: any) => any)} kInternalIterator
 * @param {string | number} [keyIndex]
 * @param {string | number} [valueIndex]
 */
function createIterator (name, kInternalIterator, keyIndex = 0, valueIndex = 1) {
  class FastIterableIterator {
    /** @type {any} */
    #target
    /** @type {'key' | 'value' | 'key+value'} */
    #kind
    /** @type {number} */
    #index

    /**
     * @see https://webidl.spec.whatwg.org/#dfn-default-iterator-object
     * @param {unknown} target
     * @param {'key' | 'value' | 'key+value'} kind
     */
    constructor (target, kind) {
      this.#target = target
      this.#kind = kind
      this.#index = 0
    }

    next () {
      // 1. Let interface be the interface for which the iterator prototype object exists.
      // 2. Let thisValue be the this value.
      // 3. Let object be ? ToObject(thisValue).
      // 4. If object is a platform object, then perform a security
      //    check, passing:
      // 5. If object is not a default iterator object for interface,
      //    then throw a TypeError.
      if (typeof this !== 'object' || this === null || !(#target in this)) {
        throw new TypeError(
          `'next' called on an object that does not implement interface ${name} Iterator.`
        )
      }

      // 6. Let index be object’s index.
      // 7. Let kind be object’s kind.
      // 8. Let values be object’s target's value pairs to iterate over.
      const index = this.#index
      const values = kInternalIterator(this.#target)

      // 9. Let len be the length of values.
      const len = values.length

      // 10. If index is greater than or equal to len, then return
      //     CreateIterResultObject(undefined, true).
      if (index >= len) {
        return {
          value: undefined,
          done: true
        }
      }

      // 11. Let pair be the entry in values at index index.
      const { [keyIndex]: key, [valueIndex]: value } = values[index]

      // 12. Set object’s index to index + 1.
      this.#index = index + 1

      // 13. Return the iterator result for pair and kind.

      // https://webidl.spec.whatwg.org/#iterator-result

      // 1. Let result be a value determined by the value of kind:
      let result
      switch (this.#kind) {
        case 'key':
          // 1. Let idlKey be pair’s key.
          // 2. Let key be the result of converting idlKey to an
          //    ECMAScript value.
          // 3. result is key.
          result = key
          break
        case 'value':
          // 1. Let idlValue be pair’s value.
          // 2. Let value be the result of converting idlValue to
          //    an ECMAScript value.
          // 3. result is value.
          result = value
          break
        case 'key+value':
          // 1. Let idlKey be pair’s key.
          // 2. Let idlValue be pair’s value.
          // 3. Let key be the result of converting idlKey to an
          //    ECMAScript value.
          // 4. Let value be the result of converting idlValue to
          //    an ECMAScript value.
          // 5. Let array be ! ArrayCreate(2).
          // 6. Call ! CreateDataProperty(array, "0", key).
          // 7. Call ! CreateDataProperty(array, "1", value).
          // 8. result is array.
          result = [key, value]
          break
      }

      // 2. Return CreateIterResultObject(result, false).
      return {
        value: result,
        done: false
      }
    }
  }

  // https://webidl.spec.whatwg.org/#dfn-iterator-prototype-object
  // @ts-ignore
  delete FastIterableIterator.prototype.constructor

  Object.setPrototypeOf(FastIterableIterator.prototype, esIteratorPrototype)

  Object.defineProperties(FastIterableIterator.prototype, {
    [Symbol.toStringTag]: {
      writable: false,
      enumerable: false,
      configurable: true,
      value: `${name} Iterator`
    },
    next: { writable: true, enumerable: true, configurable: true }
  })

  /**
   * @param {unknown} target
   * @param {'key' | 'value' | 'key+value'} kind
   * @returns {IterableIterator<any>}
   */
  return function (target, kind) {
    return new FastIterableIterator(target, kind)
  }
}

/**
 * @see https://webidl.spec.whatwg.org/#dfn-iterator-prototype-object
 * @param {string} name name of the instance
 * @param {any} object class
 * @param {(target: any) => any} kInternalIterator
 * @param {string | number} [keyIndex]
 * @param {string | number} [valueIndex]
 */
function iteratorMixin (name, object, kInternalIterator, keyIndex = 0, valueIndex = 1) {
  const makeIterator = createIterator(name, kInternalIterator, keyIndex, valueIndex)

  const properties = {
    keys: {
      writable: true,
      enumerable: true,
      configurable: true,
      value: function keys () {
        webidl.brandCheck(this, object)
        return makeIterator(this, 'key')
      }
    },
    values: {
      writable: true,
      enumerable: true,
      configurable: true,
      value: function values () {
        webidl.brandCheck(this, object)
        return makeIterator(this, 'value')
      }
    },
    entries: {
      writable: true,
      enumerable: true,
      configurable: true,
      value: function entries () {
        webidl.brandCheck(this, object)
        return makeIterator(this, 'key+value')
      }
    },
    forEach: {
      writable: true,
      enumerable: true,
      configurable: true,
      value: function forEach (callbackfn, thisArg = globalThis) {
        webidl.brandCheck(this, object)
        webidl.argumentLengthCheck(arguments, 1, `${name}.forEach`)
        if (typeof callbackfn !== 'function') {
          throw new TypeError(
            `Failed to execute 'forEach' on '${name}': parameter 1 is not of type 'Function'.`
          )
        }
        for (const { 0: key, 1: value } of makeIterator(this, 'key+value')) {
          callbackfn.call(thisArg, value, key, this)
        }
      }
    }
  }

  return Object.defineProperties(object.prototype, {
    ...properties,
    [Symbol.iterator]: {
      writable: true,
      enumerable: false,
      configurable: true,
      value: properties.entries.value
    }
  })
}

/**
 * @param {import('./body').ExtractBodyResult} body
 * @param {(bytes: Uint8Array) => void} processBody
 * @param {(error: Error) => void} processBodyError
 * @returns {void}
 *
 * @see https://fetch.spec.whatwg.org/#body-fully-read
 */
function fullyReadBody (body, processBody, processBodyError) {
  // 1. If taskDestination is null, then set taskDestination to
  //    the result of starting a new parallel queue.

  // 2. Let successSteps given a byte sequence bytes be to queue a
  //    fetch task to run processBody given bytes, with taskDestination.
  const successSteps = processBody

  // 3. Let errorSteps be to queue a fetch task to run processBodyError,
  //    with taskDestination.
  const errorSteps = processBodyError

  try {
  // 4. Let reader be the result of getting a reader for body’s stream.
  //    If that threw an exception, then run errorSteps with that
  //    exception and return.
    const reader = body.stream.getReader()

    // 5. Read all bytes from reader, given successSteps and errorSteps.
    readAllBytes(reader, successSteps, errorSteps)
  } catch (e) {
    errorSteps(e)
  }
}

/**
 * @param {ReadableStreamController<Uint8Array>} controller
 */
function readableStreamClose (controller) {
  try {
    controller.close()
    controller.byobRequest?.respond(0)
  } catch (err) {
    // TODO: add comment explaining why this error occurs.
    if (!err.message.includes('Controller is already closed') && !err.message.includes('ReadableStream is already closed')) {
      throw err
    }
  }
}

/**
 * @see https://streams.spec.whatwg.org/#readablestreamdefaultreader-read-all-bytes
 * @see https://streams.spec.whatwg.org/#read-loop
 * @param {ReadableStream<Uint8Array<ArrayBuffer>>} reader
 * @param {(bytes: Uint8Array) => void} successSteps
 * @param {(error: Error) => void} failureSteps
 * @returns {Promise<void>}
 */
async function readAllBytes (reader, successSteps, failureSteps) {
  try {
    const bytes = []
    let byteLength = 0

    do {
      const { done, value: chunk } = await reader.read()

      if (done) {
        // 1. Call successSteps with bytes.
        successSteps(Buffer.concat(bytes, byteLength))
        return
      }

      // 1. If chunk is not a Uint8Array object, call failureSteps
      //    with a TypeError and abort these steps.
      if (!isUint8Array(chunk)) {
        failureSteps(new TypeError('Received non-Uint8Array chunk'))
        return
      }

      // 2. Append the bytes represented by chunk to bytes.
      bytes.push(chunk)
      byteLength += chunk.length

    // 3. Read-loop given reader, bytes, successSteps, and failureSteps.
    } while (true)
  } catch (e) {
    // 1. Call failureSteps with e.
    failureSteps(e)
  }
}

/**
 * @see https://fetch.spec.whatwg.org/#is-local
 * @param {URL} url
 * @returns {boolean}
 */
function urlIsLocal (url) {
  assert('protocol' in url) // ensure it's a url object

  const protocol = url.protocol

  // A URL is local if its scheme is a local scheme.
  // A local scheme is "about", "blob", or "data".
  return protocol === 'about:' || protocol === 'blob:' || protocol === 'data:'
}

/**
 * @param {string|URL} url
 * @returns {boolean}
 */
function urlHasHttpsScheme (url) {
  return (
    (
      typeof url === 'string' &&
      url[5] === ':' &&
      url[0] === 'h' &&
      url[1] === 't' &&
      url[2] === 't' &&
      url[3] === 'p' &&
      url[4] === 's'
    ) ||
    url.protocol === 'https:'
  )
}

/**
 * @see https://fetch.spec.whatwg.org/#http-scheme
 * @param {URL} url
 */
function urlIsHttpHttpsScheme (url) {
  assert('protocol' in url) // ensure it's a url object

  const protocol = url.protocol

  return protocol === 'http:' || protocol === 'https:'
}

/**
 * @typedef {Object} RangeHeaderValue
 * @property {number|null} rangeStartValue
 * @property {number|null} rangeEndValue
 */

/**
 * @see https://fetch.spec.whatwg.org/#simple-range-header-value
 * @param {string} value
 * @param {boolean} allowWhitespace
 * @return {RangeHeaderValue|'failure'}
 */
function simpleRangeHeaderValue (value, allowWhitespace) {
  // 1. Let data be the isomorphic decoding of value.
  // Note: isomorphic decoding takes a sequence of bytes (ie. a Uint8Array) and turns it into a string,
  // nothing more. We obviously don't need to do that if value is a string already.
  const data = value

  // 2. If data does not start with "bytes", then return failure.
  if (!data.startsWith('bytes')) {
    return 'failure'
  }

  // 3. Let position be a position variable for data, initially pointing at the 5th code point of data.
  const position = { position: 5 }

  // 4. If allowWhitespace is true, collect a sequence of code points that are HTTP tab or space,
  //    from data given position.
  if (allowWhitespace) {
    collectASequenceOfCodePoints(
      (char) => char === '\t' || char === ' ',
      data,
      position
    )
  }

  // 5. If the code point at position within data is not U+003D (=), then return failure.
  if (data.charCodeAt(position.position) !== 0x3D) {
    return 'failure'
  }

  // 6. Advance position by 1.
  position.position++

  // 7. If allowWhitespace is true, collect a sequence of code points that are HTTP tab or space, from
  //    data given position.
  if (allowWhitespace) {
    collectASequenceOfCodePoints(
      (char) => char === '\t' || char === ' ',
      data,
      position
    )
  }

  // 8. Let rangeStart be the result of collecting a sequence of code points that are ASCII digits,
  //    from data given position.
  const rangeStart = collectASequenceOfCodePoints(
    (char) => {
      const code = char.charCodeAt(0)

      return code >= 0x30 && code <= 0x39
    },
    data,
    position
  )

  // 9. Let rangeStartValue be rangeStart, interpreted as decimal number, if rangeStart is not the
  //    empty string; otherwise null.
  const rangeStartValue = rangeStart.length ? Number(rangeStart) : null

  // 10. If allowWhitespace is true, collect a sequence of code points that are HTTP tab or space,
  //     from data given position.
  if (allowWhitespace) {
    collectASequenceOfCodePoints(
      (char) => char === '\t' || char === ' ',
      data,
      position
    )
  }

  // 11. If the code point at position within data is not U+002D (-), then return failure.
  if (data.charCodeAt(position.position) !== 0x2D) {
    return 'failure'
  }

  // 12. Advance position by 1.
  position.position++

  // 13. If allowWhitespace is true, collect a sequence of code points that are HTTP tab
  //     or space, from data given position.
  // Note from Khafra: its the same step as in #8 again lol
  if (allowWhitespace) {
    collectASequenceOfCodePoints(
      (char) => char === '\t' || char === ' ',
      data,
      position
    )
  }

  // 14. Let rangeEnd be the result of collecting a sequence of code points that are
  //     ASCII digits, from data given position.
  // Note from Khafra: you wouldn't guess it, but this is also the same step as #8
  const rangeEnd = collectASequenceOfCodePoints(
    (char) => {
      const code = char.charCodeAt(0)

      return code >= 0x30 && code <= 0x39
    },
    data,
    position
  )

  // 15. Let rangeEndValue be rangeEnd, interpreted as decimal number, if rangeEnd
  //     is not the empty string; otherwise null.
  // Note from Khafra: THE SAME STEP, AGAIN!!!
  // Note: why interpret as a decimal if we only collect ascii digits?
  const rangeEndValue = rangeEnd.length ? Number(rangeEnd) : null

  // 16. If position is not past the end of data, then return failure.
  if (position.position < data.length) {
    return 'failure'
  }

  // 17. If rangeEndValue and rangeStartValue are null, then return failure.
  if (rangeEndValue === null && rangeStartValue === null) {
    return 'failure'
  }

  // 18. If rangeStartValue and rangeEndValue are numbers, and rangeStartValue is
  //     greater than rangeEndValue, then return failure.
  // Note: ... when can they not be numbers?
  if (rangeStartValue > rangeEndValue) {
    return 'failure'
  }

  // 19. Return (rangeStartValue, rangeEndValue).
  return { rangeStartValue, rangeEndValue }
}

/**
 * @see https://fetch.spec.whatwg.org/#build-a-content-range
 * @param {number} rangeStart
 * @param {number} rangeEnd
 * @param {number} fullLength
 */
function buildContentRange (rangeStart, rangeEnd, fullLength) {
  // 1. Let contentRange be `bytes `.
  let contentRange = 'bytes '

  // 2. Append rangeStart, serialized and isomorphic encoded, to contentRange.
  contentRange += isomorphicEncode(`${rangeStart}`)

  // 3. Append 0x2D (-) to contentRange.
  contentRange += '-'

  // 4. Append rangeEnd, serialized and isomorphic encoded to contentRange.
  contentRange += isomorphicEncode(`${rangeEnd}`)

  // 5. Append 0x2F (/) to contentRange.
  contentRange += '/'

  // 6. Append fullLength, serialized and isomorphic encoded to contentRange.
  contentRange += isomorphicEncode(`${fullLength}`)

  // 7. Return contentRange.
  return contentRange
}

// A Stream, which pipes the response to zlib.createInflate() or
// zlib.createInflateRaw() depending on the first byte of the Buffer.
// If the lower byte of the first byte is 0x08, then the stream is
// interpreted as a zlib stream, otherwise it's interpreted as a
// raw deflate stream.
class InflateStream extends Transform {
  #zlibOptions

  /** @param {zlib.ZlibOptions} [zlibOptions] */
  constructor (zlibOptions) {
    super()
    this.#zlibOptions = zlibOptions
  }

  _transform (chunk, encoding, callback) {
    if (!this._inflateStream) {
      if (chunk.length === 0) {
        callback()
        return
      }
      this._inflateStream = (chunk[0] & 0x0F) === 0x08
        ? zlib.createInflate(this.#zlibOptions)
        : zlib.createInflateRaw(this.#zlibOptions)

      this._inflateStream.on('data', this.push.bind(this))
      this._inflateStream.on('end', () => this.push(null))
      this._inflateStream.on('error', (err) => this.destroy(err))
    }

    this._inflateStream.write(chunk, encoding, callback)
  }

  _final (callback) {
    if (this._inflateStream) {
      this._inflateStream.end()
      this._inflateStream = null
    }
    callback()
  }
}

/**
 * @param {zlib.ZlibOptions} [zlibOptions]
 * @returns {InflateStream}
 */
function createInflate (zlibOptions) {
  return new InflateStream(zlibOptions)
}

/**
 * @see https://fetch.spec.whatwg.org/#concept-header-extract-mime-type
 * @param {import('./headers').HeadersList} headers
 */
function extractMimeType (headers) {
  // 1. Let charset be null.
  let charset = null

  // 2. Let essence be null.
  let essence = null

  // 3. Let mimeType be null.
  let mimeType = null

  // 4. Let values be the result of getting, decoding, and splitting `Content-Type` from headers.
  const values = getDecodeSplit('content-type', headers)

  // 5. If values is null, then return failure.
  if (values === null) {
    return 'failure'
  }

  // 6. For each value of values:
  for (const value of values) {
    // 6.1. Let temporaryMimeType be the result of parsing value.
    const temporaryMimeType = parseMIMEType(value)

    // 6.2. If temporaryMimeType is failure or its essence is "*/*", then continue.
    if (temporaryMimeType === 'failure' || temporaryMimeType.essence === '*/*') {
      continue
    }

    // 6.3. Set mimeType to temporaryMimeType.
    mimeType = temporaryMimeType

    // 6.4. If mimeType’s essence is not essence, then:
    if (mimeType.essence !== essence) {
      // 6.4.1. Set charset to null.
      charset = null

      // 6.4.2. If mimeType’s parameters["charset"] exists, then set charset to
      //        mimeType’s parameters["charset"].
      if (mimeType.parameters.has('charset')) {
        charset = mimeType.parameters.get('charset')
      }

      // 6.4.3. Set essence to mimeType’s essence.
      essence = mimeType.essence
    } else if (!mimeType.parameters.has('charset') && charset !== null) {
      // 6.5. Otherwise, if mimeType’s parameters["charset"] does not exist, and
      //      charset is non-null, set mimeType’s parameters["charset"] to charset.
      mimeType.parameters.set('charset', charset)
    }
  }

  // 7. If mimeType is null, then return failure.
  if (mimeType == null) {
    return 'failure'
  }

  // 8. Return mimeType.
  return mimeType
}

/**
 * @see https://fetch.spec.whatwg.org/#header-value-get-decode-and-split
 * @param {string|null} value
 */
function gettingDecodingSplitting (value) {
  // 1. Let input be the result of isomorphic decoding value.
  const input = value

  // 2. Let position be a position variable for input, initially pointing at the start of input.
  const position = { position: 0 }

  // 3. Let values be a list of strings, initially empty.
  const values = []

  // 4. Let temporaryValue be the empty string.
  let temporaryValue = ''

  // 5. While position is not past the end of input:
  while (position.position < input.length) {
    // 5.1. Append the result of collecting a sequence of code points that are not U+0022 (")
    //      or U+002C (,) from input, given position, to temporaryValue.
    temporaryValue += collectASequenceOfCodePoints(
      (char) => char !== '"' && char !== ',',
      input,
      position
    )

    // 5.2. If position is not past the end of input, then:
    if (position.position < input.length) {
      // 5.2.1. If the code point at position within input is U+0022 ("), then:
      if (input.charCodeAt(position.position) === 0x22) {
        // 5.2.1.1. Append the result of collecting an HTTP quoted string from input, given position, to temporaryValue.
        temporaryValue += collectAnHTTPQuotedString(
          input,
          position
        )

        // 5.2.1.2. If position is not past the end of input, then continue.
        if (position.position < input.length) {
          continue
        }
      } else {
        // 5.2.2. Otherwise:

        // 5.2.2.1. Assert: the code point at position within input is U+002C (,).
        assert(input.charCodeAt(position.position) === 0x2C)

        // 5.2.2.2. Advance position by 1.
        position.position++
      }
    }

    // 5.3. Remove all HTTP tab or space from the start and end of temporaryValue.
    temporaryValue = removeChars(temporaryValue, true, true, (char) => char === 0x9 || char === 0x20)

    // 5.4. Append temporaryValue to values.
    values.push(temporaryValue)

    // 5.6. Set temporaryValue to the empty string.
    temporaryValue = ''
  }

  // 6. Return values.
  return values
}

/**
 * @see https://fetch.spec.whatwg.org/#concept-header-list-get-decode-split
 * @param {string} name lowercase header name
 * @param {import('./headers').HeadersList} list
 */
function getDecodeSplit (name, list) {
  // 1. Let value be the result of getting name from list.
  const value = list.get(name, true)

  // 2. If value is null, then return null.
  if (value === null) {
    return null
  }

  // 3. Return the result of getting, decoding, and splitting value.
  return gettingDecodingSplitting(value)
}

function hasAuthenticationEntry (request) {
  return false
}

/**
 * @see https://url.spec.whatwg.org/#include-credentials
 * @param {URL} url
 */
function includesCredentials (url) {
  // A URL includes credentials if its username or password is not the empty string.
  return !!(url.username || url.password)
}

/**
 * @see https://html.spec.whatwg.org/multipage/document-sequences.html#traversable-navigable
 * @param {object|string} navigable
 */
function isTraversableNavigable (navigable) {
  // Returns true only if we have an actual traversable navigable object
  // that can prompt the user for credentials. In Node.js, this will always
  // be false since there's no Window object or navigable.
  return navigable != null && navigable !== 'client' && navigable !== 'no-traversable'
}

class EnvironmentSettingsObjectBase {
  get baseUrl () {
    return getGlobalOrigin()
  }

  get origin () {
    return this.baseUrl?.origin
  }

  policyContainer = makePolicyContainer()
}

class EnvironmentSettingsObject {
  settingsObject = new EnvironmentSettingsObjectBase()
}

const environmentSettingsObject = new EnvironmentSettingsObject()

module.exports = {
  isAborted,
  isCancelled,
  isValidEncodedURL,
  ReadableStreamFrom,
  tryUpgradeRequestToAPotentiallyTrustworthyURL,
  clampAndCoarsenConnectionTimingInfo,
  coarsenedSharedCurrentTime,
  determineRequestsReferrer,
  makePolicyContainer,
  clonePolicyContainer,
  appendFetchMetadata,
  appendRequestOriginHeader,
  TAOCheck,
  corsCheck,
  crossOriginResourcePolicyCheck,
  createOpaqueTimingInfo,
  setRequestReferrerPolicyOnRedirect,
  isValidHTTPToken,
  requestBadPort,
  requestCurrentURL,
  responseURL,
  responseLocationURL,
  isURLPotentiallyTrustworthy,
  isValidReasonPhrase,
  sameOrigin,
  normalizeMethod,
  iteratorMixin,
  createIterator,
  isValidHeaderName,
  isValidHeaderValue,
  isErrorLike,
  fullyReadBody,
  readableStreamClose,
  urlIsLocal,
  urlHasHttpsScheme,
  urlIsHttpHttpsScheme,
  readAllBytes,
  simpleRangeHeaderValue,
  buildContentRange,
  createInflate,
  extractMimeType,
  getDecodeSplit,
  environmentSettingsObject,
  isOriginIPPotentiallyTrustworthy,
  hasAuthenticationEntry,
  includesCredentials,
  isTraversableNavigable
}


/***/ },

/***/ 8116:
/***/ (module, __unused_webpack_exports, __nccwpck_require__) => {



const assert = __nccwpck_require__(4589)
const { utf8DecodeBytes } = __nccwpck_require__(276)

/**
 * @param {(char: string) => boolean} condition
 * @param {string} input
 * @param {{ position: number }} position
 * @returns {string}
 *
 * @see https://infra.spec.whatwg.org/#collect-a-sequence-of-code-points
 */
function collectASequenceOfCodePoints (condition, input, position) {
  // 1. Let result be the empty string.
  let result = ''

  // 2. While position doesn’t point past the end of input and the
  // code point at position within input meets the condition condition:
  while (position.position < input.length && condition(input[position.position])) {
    // 1. Append that code point to the end of result.
    result += input[position.position]

    // 2. Advance position by 1.
    position.position++
  }

  // 3. Return result.
  return result
}

/**
 * A faster collectASequenceOfCodePoints that only works when comparing a single character.
 * @param {string} char
 * @param {string} input
 * @param {{ position: number }} position
 * @returns {string}
 *
 * @see https://infra.spec.whatwg.org/#collect-a-sequence-of-code-points
 */
function collectASequenceOfCodePointsFast (char, input, position) {
  const idx = input.indexOf(char, position.position)
  const start = position.position

  if (idx === -1) {
    position.position = input.length
    return input.slice(start)
  }

  position.position = idx
  return input.slice(start, position.position)
}

const ASCII_WHITESPACE_REPLACE_REGEX = /[\u0009\u000A\u000C\u000D\u0020]/g // eslint-disable-line no-control-regex
const nonASCIIRegex = /[^\x00-\x7F]/ // eslint-disable-line no-control-regex

/**
 * @param {string} str
 * @returns {string}
 *
 * @see https://infra.spec.whatwg.org/#ascii-lowercase
 */
function asciiLowercase (str) {
  return nonASCIIRegex.test(str)
    ? str.replace(/[A-Z]+/g, (upper) => upper.toLowerCase())
    : str.toLowerCase()
}

/**
 * @param {string} data
 * @returns {Uint8Array | 'failure'}
 *
 * @see https://infra.spec.whatwg.org/#forgiving-base64-decode
 */
function forgivingBase64 (data) {
  // 1. Remove all ASCII whitespace from data.
  data = data.replace(ASCII_WHITESPACE_REPLACE_REGEX, '')

  let dataLength = data.length
  // 2. If data’s code point length divides by 4 leaving
  // no remainder, then:
  if (dataLength % 4 === 0) {
    // 1. If data ends with one or two U+003D (=) code points,
    // then remove them from data.
    if (data.charCodeAt(dataLength - 1) === 0x003D) {
      --dataLength
      if (data.charCodeAt(dataLength - 1) === 0x003D) {
        --dataLength
      }
    }
  }

  // 3. If data’s code point length divides by 4 leaving
  // a remainder of 1, then return failure.
  if (dataLength % 4 === 1) {
    return 'failure'
  }

  // 4. If data contains a code point that is not one of
  //  U+002B (+)
  //  U+002F (/)
  //  ASCII alphanumeric
  // then return failure.
  if (/[^+/0-9A-Za-z]/.test(data.length === dataLength ? data : data.substring(0, dataLength))) {
    return 'failure'
  }

  const buffer = Buffer.from(data, 'base64')
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/**
 * @param {number} char
 * @returns {boolean}
 *
 * @see https://infra.spec.whatwg.org/#ascii-whitespace
 */
function isASCIIWhitespace (char) {
  return (
    char === 0x09 || // \t
    char === 0x0a || // \n
    char === 0x0c || // \f
    char === 0x0d || // \r
    char === 0x20    // space
  )
}

/**
 * @param {Uint8Array} input
 * @returns {string}
 *
 * @see https://infra.spec.whatwg.org/#isomorphic-decode
 */
function isomorphicDecode (input) {
  // 1. To isomorphic decode a byte sequence input, return a string whose code point
  //    length is equal to input’s length and whose code points have the same values
  //    as the values of input’s bytes, in the same order.
  const length = input.length
  if ((2 << 15) - 1 > length) {
    return String.fromCharCode.apply(null, input)
  }
  let result = ''
  let i = 0
  let addition = (2 << 15) - 1
  while (i < length) {
    if (i + addition > length) {
      addition = length - i
    }
    result += String.fromCharCode.apply(null, input.subarray(i, i += addition))
  }
  return result
}

const invalidIsomorphicEncodeValueRegex = /[^\x00-\xFF]/ // eslint-disable-line no-control-regex

/**
 * @param {string} input
 * @returns {string}
 *
 * @see https://infra.spec.whatwg.org/#isomorphic-encode
 */
function isomorphicEncode (input) {
  // 1. Assert: input contains no code points greater than U+00FF.
  assert(!invalidIsomorphicEncodeValueRegex.test(input))

  // 2. Return a byte sequence whose length is equal to input’s code
  //    point length and whose bytes have the same values as the
  //    values of input’s code points, in the same order
  return input
}

/**
 * @see https://infra.spec.whatwg.org/#parse-json-bytes-to-a-javascript-value
 * @param {Uint8Array} bytes
 */
function parseJSONFromBytes (bytes) {
  return JSON.parse(utf8DecodeBytes(bytes))
}

/**
 * @param {string} str
 * @param {boolean} [leading=true]
 * @param {boolean} [trailing=true]
 * @returns {string}
 *
 * @see https://infra.spec.whatwg.org/#strip-leading-and-trailing-ascii-whitespace
 */
function removeASCIIWhitespace (str, leading = true, trailing = true) {
  return removeChars(str, leading, trailing, isASCIIWhitespace)
}

/**
 * @param {string} str
 * @param {boolean} leading
 * @param {boolean} trailing
 * @param {(charCode: number) => boolean} predicate
 * @returns {string}
 */
function removeChars (str, leading, trailing, predicate) {
  let lead = 0
  let trail = str.length - 1

  if (leading) {
    while (lead < str.length && predicate(str.charCodeAt(lead))) lead++
  }

  if (trailing) {
    while (trail > 0 && predicate(str.charCodeAt(trail))) trail--
  }

  return lead === 0 && trail === str.length - 1 ? str : str.slice(lead, trail + 1)
}

// https://infra.spec.whatwg.org/#serialize-a-javascript-value-to-a-json-string
function serializeJavascriptValueToJSONString (value) {
  // 1. Let result be ? Call(%JSON.stringify%, undefined, « value »).
  const result = JSON.stringify(value)

  // 2. If result is undefined, then throw a TypeError.
  if (result === undefined) {
    throw new TypeError('Value is not JSON serializable')
  }

  // 3. Assert: result is a string.
  assert(typeof result === 'string')

  // 4. Return result.
  return result
}

module.exports = {
  asciiLowercase,
  collectASequenceOfCodePoints,
  collectASequenceOfCodePointsFast,
  forgivingBase64,
  isASCIIWhitespace,
  isomorphicDecode,
  isomorphicEncode,
  parseJSONFromBytes,
  removeASCIIWhitespace,
  removeChars,
  serializeJavascriptValueToJSONString
}


/***/ },

/***/ 7879:
/***/ (module, __unused_webpack_exports, __nccwpck_require__) => {



const assert = __nccwpck_require__(4589)
const { types, inspect } = __nccwpck_require__(7975)
const { runtimeFeatures } = __nccwpck_require__(313)

const UNDEFINED = 1
const BOOLEAN = 2
const STRING = 3
const SYMBOL = 4
const NUMBER = 5
const BIGINT = 6
const NULL = 7
const OBJECT = 8 // function and object

const FunctionPrototypeSymbolHasInstance = Function.call.bind(Function.prototype[Symbol.hasInstance])

/** @type {import('../../../types/webidl').Webidl} */
const webidl = {
  converters: {},
  util: {},
  errors: {},
  is: {}
}

/**
 * @description Instantiate an error.
 *
 * @param {Object} opts
 * @param {string} opts.header
 * @param {string} opts.message
 * @returns {TypeError}
 */
webidl.errors.exception = function (message) {
  return new TypeError(`${message.header}: ${message.message}`)
}

/**
 * @description Instantiate an error when conversion from one type to another has failed.
 *
 * @param {Object} opts
 * @param {string} opts.prefix
 * @param {string} opts.argument
 * @param {string[]} opts.types
 * @returns {TypeError}
 */
webidl.errors.conversionFailed = function (opts) {
  const plural = opts.types.length === 1 ? '' : ' one of'
  const message =
    `${opts.argument} could not be converted to` +
    `${plural}: ${opts.types.join(', ')}.`

  return webidl.errors.exception({
    header: opts.prefix,
    message
  })
}

/**
 * @description Instantiate an error when an invalid argument is provided
 *
 * @param {Object} context
 * @param {string} context.prefix
 * @param {string} context.value
 * @param {string} context.type
 * @returns {TypeError}
 */
webidl.errors.invalidArgument = function (context) {
  return webidl.errors.exception({
    header: context.prefix,
    message: `"${context.value}" is an invalid ${context.type}.`
  })
}

// https://webidl.spec.whatwg.org/#implements
webidl.brandCheck = function (V, I) {
  if (!FunctionPrototypeSymbolHasInstance(I, V)) {
    const err = new TypeError('Illegal invocation')
    err.code = 'ERR_INVALID_THIS' // node compat.
    throw err
  }
}

webidl.brandCheckMultiple = function (List) {
  const prototypes = List.map((c) => webidl.util.MakeTypeAssertion(c))

  return (V) => {
    if (prototypes.every(typeCheck => !typeCheck(V))) {
      const err = new TypeError('Illegal invocation')
      err.code = 'ERR_INVALID_THIS' // node compat.
      throw err
    }
  }
}

webidl.argumentLengthCheck = function ({ length }, min, ctx) {
  if (length < min) {
    throw webidl.errors.exception({
      message: `${min} argument${min !== 1 ? 's' : ''} required, ` +
               `but${length ? ' only' : ''} ${length} found.`,
      header: ctx
    })
  }
}

webidl.illegalConstructor = function () {
  throw webidl.errors.exception({
    header: 'TypeError',
    message: 'Illegal constructor'
  })
}

webidl.util.MakeTypeAssertion = function (I) {
  return (O) => FunctionPrototypeSymbolHasInstance(I, O)
}

// https://tc39.es/ecma262/#sec-ecmascript-data-types-and-values
webidl.util.Type = function (V) {
  switch (typeof V) {
    case 'undefined': return UNDEFINED
    case 'boolean': return BOOLEAN
    case 'string': return STRING
    case 'symbol': return SYMBOL
    case 'number': return NUMBER
    case 'bigint': return BIGINT
    case 'function':
    case 'object': {
      if (V === null) {
        return NULL
      }

      return OBJECT
    }
  }
}

webidl.util.Types = {
  UNDEFINED,
  BOOLEAN,
  STRING,
  SYMBOL,
  NUMBER,
  BIGINT,
  NULL,
  OBJECT
}

webidl.util.TypeValueToString = function (o) {
  switch (webidl.util.Type(o)) {
    case UNDEFINED: return 'Undefined'
    case BOOLEAN: return 'Boolean'
    case STRING: return 'String'
    case SYMBOL: return 'Symbol'
    case NUMBER: return 'Number'
    case BIGINT: return 'BigInt'
    case NULL: return 'Null'
    case OBJECT: return 'Object'
  }
}

webidl.util.markAsUncloneable = runtimeFeatures.has('markAsUncloneable')
  ? (__nccwpck_require__(5919).markAsUncloneable)
  : () => {}

// https://webidl.spec.whatwg.org/#abstract-opdef-converttoint
webidl.util.ConvertToInt = function (V, bitLength, signedness, flags) {
  let upperBound
  let lowerBound

  // 1. If bitLength is 64, then:
  if (bitLength === 64) {
    // 1. Let upperBound be 2^53 − 1.
    upperBound = Math.pow(2, 53) - 1

    // 2. If signedness is "unsigned", then let lowerBound be 0.
    if (signedness === 'unsigned') {
      lowerBound = 0
    } else {
      // 3. Otherwise let lowerBound be −2^53 + 1.
      lowerBound = Math.pow(-2, 53) + 1
    }
  } else if (signedness === 'unsigned') {
    // 2. Otherwise, if signedness is "unsigned", then:

    // 1. Let lowerBound be 0.
    lowerBound = 0

    // 2. Let upperBound be 2^bitLength − 1.
    upperBound = Math.pow(2, bitLength) - 1
  } else {
    // 3. Otherwise:

    // 1. Let lowerBound be -2^(bitLength − 1).
    lowerBound = -Math.pow(2, bitLength - 1)

    // 2. Let upperBound be 2^(bitLength − 1) − 1.
    upperBound = Math.pow(2, bitLength - 1) - 1
  }

  // 4. Let x be ? ToNumber(V).
  let x = Number(V)

  // 5. If x is −0, then set x to +0.
  if (x === 0) {
    x = 0
  }

  // 6. If the conversion is to an IDL type associated
  //    with the [EnforceRange] extended attribute, then:
  if (webidl.util.HasFlag(flags, webidl.attributes.EnforceRange)) {
    // 1. If x is NaN, +∞, or −∞, then throw a TypeError.
    if (
      Number.isNaN(x) ||
      x === Number.POSITIVE_INFINITY ||
      x === Number.NEGATIVE_INFINITY
    ) {
      throw webidl.errors.exception({
        header: 'Integer conversion',
        message: `Could not convert ${webidl.util.Stringify(V)} to an integer.`
      })
    }

    // 2. Set x to IntegerPart(x).
    x = webidl.util.IntegerPart(x)

    // 3. If x < lowerBound or x > upperBound, then
    //    throw a TypeError.
    if (x < lowerBound || x > upperBound) {
      throw webidl.errors.exception({
        header: 'Integer conversion',
        message: `Value must be between ${lowerBound}-${upperBound}, got ${x}.`
      })
    }

    // 4. Return x.
    return x
  }

  // 7. If x is not NaN and the conversion is to an IDL
  //    type associated with the [Clamp] extended
  //    attribute, then:
  if (!Number.isNaN(x) && webidl.util.HasFlag(flags, webidl.attributes.Clamp)) {
    // 1. Set x to min(max(x, lowerBound), upperBound).
    x = Math.min(Math.max(x, lowerBound), upperBound)

    // 2. Round x to the nearest integer, choosing the
    //    even integer if it lies halfway between two,
    //    and choosing +0 rather than −0.
    if (Math.floor(x) % 2 === 0) {
      x = Math.floor(x)
    } else {
      x = Math.ceil(x)
    }

    // 3. Return x.
    return x
  }

  // 8. If x is NaN, +0, +∞, or −∞, then return +0.
  if (
    Number.isNaN(x) ||
    (x === 0 && Object.is(0, x)) ||
    x === Number.POSITIVE_INFINITY ||
    x === Number.NEGATIVE_INFINITY
  ) {
    return 0
  }

  // 9. Set x to IntegerPart(x).
  x = webidl.util.IntegerPart(x)

  // 10. Set x to x modulo 2^bitLength.
  x = x % Math.pow(2, bitLength)

  // 11. If signedness is "signed" and x ≥ 2^(bitLength − 1),
  //    then return x − 2^bitLength.
  if (signedness === 'signed' && x >= Math.pow(2, bitLength - 1)) {
    return x - Math.pow(2, bitLength)
  }

  // 12. Otherwise, return x.
  return x
}

// https://webidl.spec.whatwg.org/#abstract-opdef-integerpart
webidl.util.IntegerPart = function (n) {
  // 1. Let r be floor(abs(n)).
  const r = Math.floor(Math.abs(n))

  // 2. If n < 0, then return -1 × r.
  if (n < 0) {
    return -1 * r
  }

  // 3. Otherwise, return r.
  return r
}

webidl.util.Stringify = function (V) {
  const type = webidl.util.Type(V)

  switch (type) {
    case SYMBOL:
      return `Symbol(${V.description})`
    case OBJECT:
      return inspect(V)
    case STRING:
      return `"${V}"`
    case BIGINT:
      return `${V}n`
    default:
      return `${V}`
  }
}

webidl.util.IsResizableArrayBuffer = function (V) {
  if (types.isArrayBuffer(V)) {
    return V.resizable
  }

  if (types.isSharedArrayBuffer(V)) {
    return V.growable
  }

  throw webidl.errors.exception({
    header: 'IsResizableArrayBuffer',
    message: `"${webidl.util.Stringify(V)}" is not an array buffer.`
  })
}

webidl.util.HasFlag = function (flags, attributes) {
  return typeof flags === 'number' && (flags & attributes) === attributes
}

// https://webidl.spec.whatwg.org/#es-sequence
webidl.sequenceConverter = function (converter) {
  return (V, prefix, argument, Iterable) => {
    // 1. If Type(V) is not Object, throw a TypeError.
    if (webidl.util.Type(V) !== OBJECT) {
      throw webidl.errors.exception({
        header: prefix,
        message: `${argument} (${webidl.util.Stringify(V)}) is not iterable.`
      })
    }

    // 2. Let method be ? GetMethod(V, @@iterator).
    /** @type {Generator} */
    const method = typeof Iterable === 'function' ? Iterable() : V?.[Symbol.iterator]?.()
    const seq = []
    let index = 0

    // 3. If method is undefined, throw a TypeError.
    if (
      method === undefined ||
      typeof method.next !== 'function'
    ) {
      throw webidl.errors.exception({
        header: prefix,
        message: `${argument} is not iterable.`
      })
    }

    // https://webidl.spec.whatwg.org/#create-sequence-from-iterable
    while (true) {
      const { done, value } = method.next()

      if (done) {
        break
      }

      seq.push(converter(value, prefix, `${argument}[${index++}]`))
    }

    return seq
  }
}

// https://webidl.spec.whatwg.org/#es-to-record
webidl.recordConverter = function (keyConverter, valueConverter) {
  return (O, prefix, argument) => {
    // 1. If Type(O) is not Object, throw a TypeError.
    if (webidl.util.Type(O) !== OBJECT) {
      throw webidl.errors.exception({
        header: prefix,
        message: `${argument} ("${webidl.util.TypeValueToString(O)}") is not an Object.`
      })
    }

    // 2. Let result be a new empty instance of record<K, V>.
    const result = {}

    if (!types.isProxy(O)) {
      // 1. Let desc be ? O.[[GetOwnProperty]](key).
      const keys = [...Object.getOwnPropertyNames(O), ...Object.getOwnPropertySymbols(O)]

      for (const key of keys) {
        const keyName = webidl.util.Stringify(key)

        // 1. Let typedKey be key converted to an IDL value of type K.
        const typedKey = keyConverter(key, prefix, `Key ${keyName} in ${argument}`)

        // 2. Let value be ? Get(O, key).
        // 3. Let typedValue be value converted to an IDL value of type V.
        const typedValue = valueConverter(O[key], prefix, `${argument}[${keyName}]`)

        // 4. Set result[typedKey] to typedValue.
        result[typedKey] = typedValue
      }

      // 5. Return result.
      return result
    }

    // 3. Let keys be ? O.[[OwnPropertyKeys]]().
    const keys = Reflect.ownKeys(O)

    // 4. For each key of keys.
    for (const key of keys) {
      // 1. Let desc be ? O.[[GetOwnProperty]](key).
      const desc = Reflect.getOwnPropertyDescriptor(O, key)

      // 2. If desc is not undefined and desc.[[Enumerable]] is true:
      if (desc?.enumerable) {
        // 1. Let typedKey be key converted to an IDL value of type K.
        const typedKey = keyConverter(key, prefix, argument)

        // 2. Let value be ? Get(O, key).
        // 3. Let typedValue be value converted to an IDL value of type V.
        const typedValue = valueConverter(O[key], prefix, argument)

        // 4. Set result[typedKey] to typedValue.
        result[typedKey] = typedValue
      }
    }

    // 5. Return result.
    return result
  }
}

webidl.interfaceConverter = function (TypeCheck, name) {
  return (V, prefix, argument) => {
    if (!TypeCheck(V)) {
      throw webidl.errors.exception({
        header: prefix,
        message: `Expected ${argument} ("${webidl.util.Stringify(V)}") to be an instance of ${name}.`
      })
    }

    return V
  }
}

webidl.dictionaryConverter = function (converters) {
  // "For each dictionary member member declared on dictionary, in lexicographical order:"
  converters.sort((a, b) => (a.key > b.key) - (a.key < b.key))

  return (dictionary, prefix, argument) => {
    const dict = {}

    if (dictionary != null && webidl.util.Type(dictionary) !== OBJECT) {
      throw webidl.errors.exception({
        header: prefix,
        message: `Expected ${dictionary} to be one of: Null, Undefined, Object.`
      })
    }

    for (const options of converters) {
      const { key, defaultValue, required, converter } = options

      if (required === true) {
        if (dictionary == null || !Object.hasOwn(dictionary, key)) {
          throw webidl.errors.exception({
            header: prefix,
            message: `Missing required key "${key}".`
          })
        }
      }

      let value = dictionary?.[key]
      const hasDefault = defaultValue !== undefined

      // Only use defaultValue if value is undefined and
      // a defaultValue options was provided.
      if (hasDefault && value === undefined) {
        value = defaultValue()
      }

      // A key can be optional and have no default value.
      // When this happens, do not perform a conversion,
      // and do not assign the key a value.
      if (required || hasDefault || value !== undefined) {
        value = converter(value, prefix, `${argument}.${key}`)

        if (
          options.allowedValues &&
          !options.allowedValues.includes(value)
        ) {
          throw webidl.errors.exception({
            header: prefix,
            message: `${value} is not an accepted type. Expected one of ${options.allowedValues.join(', ')}.`
          })
        }

        dict[key] = value
      }
    }

    return dict
  }
}

webidl.nullableConverter = function (converter) {
  return (V, prefix, argument) => {
    if (V === null) {
      return V
    }

    return converter(V, prefix, argument)
  }
}

/**
 * @param {*} value
 * @returns {boolean}
 */
webidl.is.USVString = function (value) {
  return (
    typeof value === 'string' &&
    value.isWellFormed()
  )
}

webidl.is.ReadableStream = webidl.util.MakeTypeAssertion(ReadableStream)
webidl.is.Blob = webidl.util.MakeTypeAssertion(Blob)
webidl.is.URLSearchParams = webidl.util.MakeTypeAssertion(URLSearchParams)
webidl.is.File = webidl.util.MakeTypeAssertion(File)
webidl.is.URL = webidl.util.MakeTypeAssertion(URL)
webidl.is.AbortSignal = webidl.util.MakeTypeAssertion(AbortSignal)
webidl.is.MessagePort = webidl.util.MakeTypeAssertion(MessagePort)

webidl.is.BufferSource = function (V) {
  return types.isArrayBuffer(V) || (
    ArrayBuffer.isView(V) &&
    types.isArrayBuffer(V.buffer)
  )
}

// https://webidl.spec.whatwg.org/#dfn-get-buffer-source-copy
webidl.util.getCopyOfBytesHeldByBufferSource = function (bufferSource) {
  // 1. Let jsBufferSource be the result of converting bufferSource to a JavaScript value.
  const jsBufferSource = bufferSource

  // 2. Let jsArrayBuffer be jsBufferSource.
  let jsArrayBuffer = jsBufferSource

  // 3. Let offset be 0.
  let offset = 0

  // 4. Let length be 0.
  let length = 0

  // 5. If jsBufferSource has a [[ViewedArrayBuffer]] internal slot, then:
  if (types.isTypedArray(jsBufferSource) || types.isDataView(jsBufferSource)) {
    // 5.1. Set jsArrayBuffer to jsBufferSource.[[ViewedArrayBuffer]].
    jsArrayBuffer = jsBufferSource.buffer

    // 5.2. Set offset to jsBufferSource.[[ByteOffset]].
    offset = jsBufferSource.byteOffset

    // 5.3. Set length to jsBufferSource.[[ByteLength]].
    length = jsBufferSource.byteLength
  } else {
    // 6. Otherwise:

    // 6.1. Assert: jsBufferSource is an ArrayBuffer or SharedArrayBuffer object.
    assert(types.isAnyArrayBuffer(jsBufferSource))

    // 6.2. Set length to jsBufferSource.[[ArrayBufferByteLength]].
    length = jsBufferSource.byteLength
  }

  // 7. If IsDetachedBuffer(jsArrayBuffer) is true, then return the empty byte sequence.
  if (jsArrayBuffer.detached) {
    return new Uint8Array(0)
  }

  // 8. Let bytes be a new byte sequence of length equal to length.
  const bytes = new Uint8Array(length)

  // 9. For i in the range offset to offset + length − 1, inclusive,
  //    set bytes[i − offset] to GetValueFromBuffer(jsArrayBuffer, i, Uint8, true, Unordered).
  const view = new Uint8Array(jsArrayBuffer, offset, length)
  bytes.set(view)

  // 10. Return bytes.
  return bytes
}

// https://webidl.spec.whatwg.org/#es-DOMString
webidl.converters.DOMString = function (V, prefix, argument, flags) {
  // 1. If V is null and the conversion is to an IDL type
  //    associated with the [LegacyNullToEmptyString]
  //    extended attribute, then return the DOMString value
  //    that represents the empty string.
  if (V === null && webidl.util.HasFlag(flags, webidl.attributes.LegacyNullToEmptyString)) {
    return ''
  }

  // 2. Let x be ? ToString(V).
  if (typeof V === 'symbol') {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} is a symbol, which cannot be converted to a DOMString.`
    })
  }

  // 3. Return the IDL DOMString value that represents the
  //    same sequence of code units as the one the
  //    ECMAScript String value x represents.
  return String(V)
}

// https://webidl.spec.whatwg.org/#es-ByteString
webidl.converters.ByteString = function (V, prefix, argument) {
  // 1. Let x be ? ToString(V).
  if (typeof V === 'symbol') {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} is a symbol, which cannot be converted to a ByteString.`
    })
  }

  const x = String(V)

  // 2. If the value of any element of x is greater than
  //    255, then throw a TypeError.
  for (let index = 0; index < x.length; index++) {
    if (x.charCodeAt(index) > 255) {
      throw new TypeError(
        'Cannot convert argument to a ByteString because the character at ' +
        `index ${index} has a value of ${x.charCodeAt(index)} which is greater than 255.`
      )
    }
  }

  // 3. Return an IDL ByteString value whose length is the
  //    length of x, and where the value of each element is
  //    the value of the corresponding element of x.
  return x
}

/**
 * @param {unknown} value
 * @returns {string}
 * @see https://webidl.spec.whatwg.org/#es-USVString
 */
webidl.converters.USVString = function (value) {
  // TODO: rewrite this so we can control the errors thrown
  if (typeof value === 'string') {
    return value.toWellFormed()
  }
  return `${value}`.toWellFormed()
}

// https://webidl.spec.whatwg.org/#es-boolean
webidl.converters.boolean = function (V) {
  // 1. Let x be the result of computing ToBoolean(V).
  // https://262.ecma-international.org/10.0/index.html#table-10
  const x = Boolean(V)

  // 2. Return the IDL boolean value that is the one that represents
  //    the same truth value as the ECMAScript Boolean value x.
  return x
}

// https://webidl.spec.whatwg.org/#es-any
webidl.converters.any = function (V) {
  return V
}

// https://webidl.spec.whatwg.org/#es-long-long
webidl.converters['long long'] = function (V, prefix, argument) {
  // 1. Let x be ? ConvertToInt(V, 64, "signed").
  const x = webidl.util.ConvertToInt(V, 64, 'signed', 0, prefix, argument)

  // 2. Return the IDL long long value that represents
  //    the same numeric value as x.
  return x
}

// https://webidl.spec.whatwg.org/#es-unsigned-long-long
webidl.converters['unsigned long long'] = function (V, prefix, argument) {
  // 1. Let x be ? ConvertToInt(V, 64, "unsigned").
  const x = webidl.util.ConvertToInt(V, 64, 'unsigned', 0, prefix, argument)

  // 2. Return the IDL unsigned long long value that
  //    represents the same numeric value as x.
  return x
}

// https://webidl.spec.whatwg.org/#es-unsigned-long
webidl.converters['unsigned long'] = function (V, prefix, argument) {
  // 1. Let x be ? ConvertToInt(V, 32, "unsigned").
  const x = webidl.util.ConvertToInt(V, 32, 'unsigned', 0, prefix, argument)

  // 2. Return the IDL unsigned long value that
  //    represents the same numeric value as x.
  return x
}

// https://webidl.spec.whatwg.org/#es-unsigned-short
webidl.converters['unsigned short'] = function (V, prefix, argument, flags) {
  // 1. Let x be ? ConvertToInt(V, 16, "unsigned").
  const x = webidl.util.ConvertToInt(V, 16, 'unsigned', flags, prefix, argument)

  // 2. Return the IDL unsigned short value that represents
  //    the same numeric value as x.
  return x
}

// https://webidl.spec.whatwg.org/#idl-ArrayBuffer
webidl.converters.ArrayBuffer = function (V, prefix, argument, flags) {
  // 1. If V is not an Object, or V does not have an
  //    [[ArrayBufferData]] internal slot, then throw a
  //    TypeError.
  // 2. If IsSharedArrayBuffer(V) is true, then throw a
  //    TypeError.
  // see: https://tc39.es/ecma262/#sec-properties-of-the-arraybuffer-instances
  if (
    webidl.util.Type(V) !== OBJECT ||
    !types.isArrayBuffer(V)
  ) {
    throw webidl.errors.conversionFailed({
      prefix,
      argument: `${argument} ("${webidl.util.Stringify(V)}")`,
      types: ['ArrayBuffer']
    })
  }

  // 3. If the conversion is not to an IDL type associated
  //    with the [AllowResizable] extended attribute, and
  //    IsResizableArrayBuffer(V) is true, then throw a
  //    TypeError.
  if (!webidl.util.HasFlag(flags, webidl.attributes.AllowResizable) && webidl.util.IsResizableArrayBuffer(V)) {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} cannot be a resizable ArrayBuffer.`
    })
  }

  // 4. Return the IDL ArrayBuffer value that is a
  //    reference to the same object as V.
  return V
}

// https://webidl.spec.whatwg.org/#idl-SharedArrayBuffer
webidl.converters.SharedArrayBuffer = function (V, prefix, argument, flags) {
  // 1. If V is not an Object, or V does not have an
  //    [[ArrayBufferData]] internal slot, then throw a
  //    TypeError.
  // 2. If IsSharedArrayBuffer(V) is false, then throw a
  //    TypeError.
  // see: https://tc39.es/ecma262/#sec-properties-of-the-sharedarraybuffer-instances
  if (
    webidl.util.Type(V) !== OBJECT ||
    !types.isSharedArrayBuffer(V)
  ) {
    throw webidl.errors.conversionFailed({
      prefix,
      argument: `${argument} ("${webidl.util.Stringify(V)}")`,
      types: ['SharedArrayBuffer']
    })
  }

  // 3. If the conversion is not to an IDL type associated
  //    with the [AllowResizable] extended attribute, and
  //    IsResizableArrayBuffer(V) is true, then throw a
  //    TypeError.
  if (!webidl.util.HasFlag(flags, webidl.attributes.AllowResizable) && webidl.util.IsResizableArrayBuffer(V)) {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} cannot be a resizable SharedArrayBuffer.`
    })
  }

  // 4. Return the IDL SharedArrayBuffer value that is a
  //    reference to the same object as V.
  return V
}

// https://webidl.spec.whatwg.org/#dfn-typed-array-type
webidl.converters.TypedArray = function (V, T, prefix, argument, flags) {
  // 1. Let T be the IDL type V is being converted to.

  // 2. If Type(V) is not Object, or V does not have a
  //    [[TypedArrayName]] internal slot with a value
  //    equal to T’s name, then throw a TypeError.
  if (
    webidl.util.Type(V) !== OBJECT ||
    !types.isTypedArray(V) ||
    V.constructor.name !== T.name
  ) {
    throw webidl.errors.conversionFailed({
      prefix,
      argument: `${argument} ("${webidl.util.Stringify(V)}")`,
      types: [T.name]
    })
  }

  // 3. If the conversion is not to an IDL type associated
  //    with the [AllowShared] extended attribute, and
  //    IsSharedArrayBuffer(V.[[ViewedArrayBuffer]]) is
  //    true, then throw a TypeError.
  if (!webidl.util.HasFlag(flags, webidl.attributes.AllowShared) && types.isSharedArrayBuffer(V.buffer)) {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} cannot be a view on a shared array buffer.`
    })
  }

  // 4. If the conversion is not to an IDL type associated
  //    with the [AllowResizable] extended attribute, and
  //    IsResizableArrayBuffer(V.[[ViewedArrayBuffer]]) is
  //    true, then throw a TypeError.
  if (!webidl.util.HasFlag(flags, webidl.attributes.AllowResizable) && webidl.util.IsResizableArrayBuffer(V.buffer)) {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} cannot be a view on a resizable array buffer.`
    })
  }

  // 5. Return the IDL value of type T that is a reference
  //    to the same object as V.
  return V
}

// https://webidl.spec.whatwg.org/#idl-DataView
webidl.converters.DataView = function (V, prefix, argument, flags) {
  // 1. If Type(V) is not Object, or V does not have a
  //    [[DataView]] internal slot, then throw a TypeError.
  if (webidl.util.Type(V) !== OBJECT || !types.isDataView(V)) {
    throw webidl.errors.conversionFailed({
      prefix,
      argument: `${argument} ("${webidl.util.Stringify(V)}")`,
      types: ['DataView']
    })
  }

  // 2. If the conversion is not to an IDL type associated
  //    with the [AllowShared] extended attribute, and
  //    IsSharedArrayBuffer(V.[[ViewedArrayBuffer]]) is true,
  //    then throw a TypeError.
  if (!webidl.util.HasFlag(flags, webidl.attributes.AllowShared) && types.isSharedArrayBuffer(V.buffer)) {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} cannot be a view on a shared array buffer.`
    })
  }

  // 3. If the conversion is not to an IDL type associated
  //    with the [AllowResizable] extended attribute, and
  //    IsResizableArrayBuffer(V.[[ViewedArrayBuffer]]) is
  //    true, then throw a TypeError.
  if (!webidl.util.HasFlag(flags, webidl.attributes.AllowResizable) && webidl.util.IsResizableArrayBuffer(V.buffer)) {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} cannot be a view on a resizable array buffer.`
    })
  }

  // 4. Return the IDL DataView value that is a reference
  //    to the same object as V.
  return V
}

// https://webidl.spec.whatwg.org/#ArrayBufferView
webidl.converters.ArrayBufferView = function (V, prefix, argument, flags) {
  if (
    webidl.util.Type(V) !== OBJECT ||
    !types.isArrayBufferView(V)
  ) {
    throw webidl.errors.conversionFailed({
      prefix,
      argument: `${argument} ("${webidl.util.Stringify(V)}")`,
      types: ['ArrayBufferView']
    })
  }

  if (!webidl.util.HasFlag(flags, webidl.attributes.AllowShared) && types.isSharedArrayBuffer(V.buffer)) {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} cannot be a view on a shared array buffer.`
    })
  }

  if (!webidl.util.HasFlag(flags, webidl.attributes.AllowResizable) && webidl.util.IsResizableArrayBuffer(V.buffer)) {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} cannot be a view on a resizable array buffer.`
    })
  }

  return V
}

// https://webidl.spec.whatwg.org/#BufferSource
webidl.converters.BufferSource = function (V, prefix, argument, flags) {
  if (types.isArrayBuffer(V)) {
    return webidl.converters.ArrayBuffer(V, prefix, argument, flags)
  }

  if (types.isArrayBufferView(V)) {
    flags &= ~webidl.attributes.AllowShared

    return webidl.converters.ArrayBufferView(V, prefix, argument, flags)
  }

  // Make this explicit for easier debugging
  if (types.isSharedArrayBuffer(V)) {
    throw webidl.errors.exception({
      header: prefix,
      message: `${argument} cannot be a SharedArrayBuffer.`
    })
  }

  throw webidl.errors.conversionFailed({
    prefix,
    argument: `${argument} ("${webidl.util.Stringify(V)}")`,
    types: ['ArrayBuffer', 'ArrayBufferView']
  })
}

// https://webidl.spec.whatwg.org/#AllowSharedBufferSource
webidl.converters.AllowSharedBufferSource = function (V, prefix, argument, flags) {
  if (types.isArrayBuffer(V)) {
    return webidl.converters.ArrayBuffer(V, prefix, argument, flags)
  }

  if (types.isSharedArrayBuffer(V)) {
    return webidl.converters.SharedArrayBuffer(V, prefix, argument, flags)
  }

  if (types.isArrayBufferView(V)) {
    flags |= webidl.attributes.AllowShared
    return webidl.converters.ArrayBufferView(V, prefix, argument, flags)
  }

  throw webidl.errors.conversionFailed({
    prefix,
    argument: `${argument} ("${webidl.util.Stringify(V)}")`,
    types: ['ArrayBuffer', 'SharedArrayBuffer', 'ArrayBufferView']
  })
}

webidl.converters['sequence<ByteString>'] = webidl.sequenceConverter(
  webidl.converters.ByteString
)

webidl.converters['sequence<sequence<ByteString>>'] = webidl.sequenceConverter(
  webidl.converters['sequence<ByteString>']
)

webidl.converters['record<ByteString, ByteString>'] = webidl.recordConverter(
  webidl.converters.ByteString,
  webidl.converters.ByteString
)

webidl.converters.Blob = webidl.interfaceConverter(webidl.is.Blob, 'Blob')

webidl.converters.AbortSignal = webidl.interfaceConverter(
  webidl.is.AbortSignal,
  'AbortSignal'
)

/**
 * [LegacyTreatNonObjectAsNull]
 * callback EventHandlerNonNull = any (Event event);
 * typedef EventHandlerNonNull? EventHandler;
 * @param {*} V
 */
webidl.converters.EventHandlerNonNull = function (V) {
  if (webidl.util.Type(V) !== OBJECT) {
    return null
  }

  // [I]f the value is not an object, it will be converted to null, and if the value is not callable,
  // it will be converted to a callback function value that does nothing when called.
  if (typeof V === 'function') {
    return V
  }

  return () => {}
}

webidl.attributes = {
  Clamp: 1 << 0,
  EnforceRange: 1 << 1,
  AllowShared: 1 << 2,
  AllowResizable: 1 << 3,
  LegacyNullToEmptyString: 1 << 4
}

module.exports = {
  webidl
}


/***/ },

/***/ 107:
/***/ ((module, __unused_webpack___webpack_exports__, __nccwpck_require__) => {

__nccwpck_require__.a(module, async (__webpack_handle_async_dependencies__, __webpack_async_result__) => { try {
/* harmony import */ var _src_cli_index_js__WEBPACK_IMPORTED_MODULE_0__ = __nccwpck_require__(486);
var __webpack_async_dependencies__ = __webpack_handle_async_dependencies__([_src_cli_index_js__WEBPACK_IMPORTED_MODULE_0__]);
_src_cli_index_js__WEBPACK_IMPORTED_MODULE_0__ = (__webpack_async_dependencies__.then ? (await __webpack_async_dependencies__)() : __webpack_async_dependencies__)[0];


__webpack_async_result__();
} catch(e) { __webpack_async_result__(e); } });

/***/ }),

/***/ 486:
/***/ ((module, __unused_webpack___webpack_exports__, __nccwpck_require__) => {

__nccwpck_require__.a(module, async (__webpack_handle_async_dependencies__, __webpack_async_result__) => { try {
/* harmony import */ var _main_js__WEBPACK_IMPORTED_MODULE_0__ = __nccwpck_require__(879);

// A reader that went away (`| head -1`) ends nothing: the deploy goes on, and what it would have
// read is dropped, rather than an EPIPE crashing the run after the trigger.
const open = { stdout: true, stderr: true };
for (const name of ['stdout', 'stderr']) {
    process[name].on('error', (error) => {
        if (error.code !== 'EPIPE')
            throw error;
        open[name] = false;
    });
}
process.exitCode = await (0,_main_js__WEBPACK_IMPORTED_MODULE_0__/* .main */ .iW)(process.argv.slice(2), process.env, text => void (open.stdout && process.stdout.write(text)), text => void (open.stderr && process.stderr.write(text)));

__webpack_async_result__();
} catch(e) { __webpack_async_result__(e); } }, 1);

/***/ }),

/***/ 879:
/***/ ((__unused_webpack_module, __webpack_exports__, __nccwpck_require__) => {


// EXPORTS
__nccwpck_require__.d(__webpack_exports__, {
  iW: () => (/* binding */ main)
});

// UNUSED EXPORTS: EXIT, colors

;// CONCATENATED MODULE: external "node:fs"
const external_node_fs_namespaceObject = __nodeBuiltin("node:fs");
;// CONCATENATED MODULE: external "node:path"
const external_node_path_namespaceObject = __nodeBuiltin("node:path");
;// CONCATENATED MODULE: external "node:url"
const external_node_url_namespaceObject = __nodeBuiltin("node:url");
;// CONCATENATED MODULE: ./src/time/duration.ts
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

;// CONCATENATED MODULE: ./src/errors.ts
/**
 * An error the user can act on: its message is one line that says what went wrong and what to do.
 * Anything else that reaches the top is a defect and is reported as such.
 */
class ActionError extends Error {
    name = 'ActionError';
}
/**
 * An input the run cannot take, found out only once Coolify was read (an image tag for an
 * application built from git): a bad input like any other, and nothing was changed for it.
 */
class InputError extends ActionError {
    name = 'InputError';
}
/** One line, never a stack: the last word on any failure. */
function describeError(error) {
    if (error instanceof ActionError)
        return error.message;
    const text = error instanceof Error ? error.message : String(error);
    return `Unexpected error: ${text.split('\n')[0]}. Please report it with the step's log.`;
}

;// CONCATENATED MODULE: ./src/transport/errors.ts
/** How the transport's failures are named: by the stage and the party that failed. */
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
/**
 * A compressed body that does not decode: cut off on the way, or broken by something in between.
 * Asked for again like an answer cut short.
 */
class HttpBrokenBody extends Error {
    code = 'BROKEN_BODY';
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
/** undici's timeouts, by the stage they name. */
const TIMEOUTS = {
    UND_ERR_CONNECT_TIMEOUT: 'CONNECT_TIMEOUT',
    UND_ERR_HEADERS_TIMEOUT: 'HEADERS_TIMEOUT',
    UND_ERR_BODY_TIMEOUT: 'BODY_TIMEOUT'
};
/** A failure on the way to the proxy, or of its answer to CONNECT: the proxy's, not the site's. */
function proxyFailure(error) {
    const stage = TIMEOUTS[error.code ?? ''];
    return new ProxyFailure(stage ? new HttpTimeout(stage) : error);
}
/** The failure as the client reads it: ours when we have a word for it, undici's otherwise. */
function failure(error) {
    const code = codeOf(error);
    if (TIMEOUTS[code])
        return new HttpTimeout(TIMEOUTS[code]);
    // zlib's codes: Z_DATA_ERROR, Z_BUF_ERROR (cut off); brotli's: ERR__ERROR_FORMAT_…
    if (code.startsWith('Z_') || code.startsWith('ERR__ERROR')) {
        return new HttpBrokenBody(`its compressed body does not decode (${code})`);
    }
    if (code === 'UND_ERR_HEADERS_OVERFLOW') {
        return new HttpUnreadable('its headers are larger than Node reads (16 KB)');
    }
    if (code === 'UND_ERR_SOCKET') {
        return Object.assign(new Error('the connection closed before the answer ended'), {
            code: 'ECONNRESET',
            cause: error
        });
    }
    return error;
}
function codeOf(error) {
    const code = error?.code;
    return typeof code === 'string' ? code : '';
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
/** Coolify's 403 for a token without the route's ability (app/Http/Middleware/ApiAbility.php). */
function isMissingAbility(error) {
    return (error instanceof CoolifyError &&
        error.status === 403 &&
        /^missing required permissions/i.test(error.details.serverMessage ?? ''));
}
/** A 404 about the thing asked for (it is not there, or no longer), not about a missing route. */
function isGone(error) {
    return error instanceof CoolifyError && error.status === 404 && !isMissingRoute(error);
}
/** Sanctum answers an expired token as an unknown one: the hint names both. */
const TOKEN_HINT = 'Check that the `token` secret holds an API token of this instance that has not expired (Keys & Tokens in Coolify shows when each one expires); if it has, create a new one and store it there';
const ABILITIES = 'deploy and read, plus read:sensitive to see build logs (and write for `git-branch`, `domains`, `env`, `image-tag`, `commit`, `delete-preview`, `review-app` and `rollback-on-failure`)';
/** Coolify's team members are read-only through the API: anything more takes an admin or owner. */
const ROLE_HINT = "A team member's token may only read; deploying, changing settings and reading build logs take a token of an admin or owner: raise the user's role (Team, Members in Coolify) or create the token as an admin or owner";
/** What answers nothing can read come from: a proxy in front of Coolify that rewrites them. */
const UNREADABLE_HINT = 'A proxy in front of Coolify changes its answers: let the API through as Coolify sends it (gzip or plain, no other encoding, no added headers)';
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
        // Coolify's api.token.team middleware: Sanctum knew the token, but its user is no longer in
        // the team it was made for (or it names no team).
        return {
            reason: `${answered}: the token's user is no longer in the team the token was made for`,
            hint: 'Create a new API token in Coolify (Keys & Tokens) as an admin or owner of the team that owns the resources, and store it in the `token` secret',
            transient: false
        };
    }
    if (status === 401) {
        // Sanctum finds no token, or one past its expiry: both are "Unauthenticated.".
        return {
            reason: `${answered}: the token was refused: it has expired, was deleted, or is not one of this instance's`,
            hint: TOKEN_HINT,
            transient: false
        };
    }
    if (status === 400 && /invalid token/i.test(serverMessage ?? '')) {
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
    'ERR_INVALID_URL',
    // undici's word for the same, before anything leaves.
    'UND_ERR_INVALID_ARG'
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
/** How a connection fails before it reaches anyone: through a proxy, it is the proxy not reached. */
const PROXY_UNREACHABLE = new Set([
    'ECONNREFUSED',
    'ENOTFOUND',
    'EAI_AGAIN',
    'EHOSTUNREACH',
    'ENETUNREACH'
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
    if (code === 'BROKEN_BODY') {
        // Like an answer cut short: asked for again.
        return { reason: error.message, hint: '', transient: true, unsent: false };
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
    if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number/i.test(messageOf(error))) {
        return {
            reason: `${host} speaks plain HTTP, not TLS: https:// can never connect to it (${code || 'EPROTO'})`,
            hint: 'Use http:// in `coolify-url`, or the port that serves https (Coolify behind its proxy: 443)',
            transient: true,
            unsent: true
        };
    }
    if (/^ERR_SSL_|^EPROTO$/.test(code)) {
        return {
            reason: `the TLS handshake with ${host} failed (${code})`,
            hint: 'Check `coolify-url`: its port must serve https',
            transient: true,
            unsent: true
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
    if (error instanceof ProxyFailure && /TIMEOUT/.test(code)) {
        return {
            reason: `the proxy ${proxy} did not answer in time (${code})`,
            hint,
            transient: true,
            unsent: true
        };
    }
    if (PROXY_UNREACHABLE.has(code)) {
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
function messageOf(error) {
    const message = error?.message;
    return typeof message === 'string' ? message : '';
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
    started: { ended: true, fails: false, rank: 7, mark: '▶️', github: 'success' },
    // `dry-run` deploys nothing: the status of the run, never of a deployment.
    'dry-run': { ended: true, fails: false, rank: 8, mark: '🔍' }
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
 * version (failed, or cancelled when another deploy's version superseded it) or unconfirmed when
 * `timeout` cut its health check; a started service or database comes up or not; a cancel this
 * action sent at `timeout` reads as cancelled first. Nothing else that ended changes again.
 */
const AFTER_END = {
    finished: ['unhealthy', 'failed', 'timeout', 'cancelled'],
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
/** For sorting: the worse of two statuses first (failed before unhealthy, timeout, cancelled). */
function worseFirst(a, b) {
    return STATUSES[a].rank - STATUSES[b].rank;
}
/** How a status reads in a sentence: `in progress`. */
function describeStatus(status) {
    return status.replace('_', ' ');
}

;// CONCATENATED MODULE: ./src/model/outcome.ts



/**
 * The status table's verdict on the deployments, or, without any, on why there are none. An error
 * that stopped the step is never reported as a status that would pass (`queued` after a failure
 * once the deployments were queued): it is `failed`, or `cancelled` with the run.
 */
function decide(deployments, ending) {
    const stopped = ending.cancelled ? 'cancelled' : 'failed';
    let status = ending.dryRun
        ? 'dry-run'
        : ending.removed
            ? 'finished'
            : deployments.length
                ? worstOf(deployments.map(deployment => deployment.status))
                : stopped;
    if (ending.error !== undefined && !failsStep(status))
        status = stopped;
    const error = ending.error === undefined ? undefined : describeError(ending.error);
    const fails = error !== undefined || failsStep(status);
    const byCoolify = ending.error instanceof CoolifyError;
    const byInput = ending.error instanceof InputError;
    return {
        status,
        deployments,
        error,
        fails,
        reviewAppUuid: ending.reviewAppUuid,
        byCoolify,
        byInput
    };
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
        deployment_url: deployment.link ?? null,
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
    setOutput('deployment-url', first?.deployment_url ?? '');
    setOutput('status', status);
    // The first resource that has a URL, whichever deployment came first.
    setOutput('url', records.find(record => record.url)?.url ?? '');
    setOutput('duration', first?.duration === null || first === undefined ? '' : String(first.duration));
    setOutput('deployments', JSON.stringify(records));
    setOutput('rolled-back', String(deployments.some(deployment => deployment.rolledBack)));
    setOutput('review-app-uuid', reviewAppUuid ?? '');
}

// EXTERNAL MODULE: external "node:events"
var external_node_events_ = __nccwpck_require__(8474);
;// CONCATENATED MODULE: ./src/time/signals.ts
/**
 * Deadlines and combined signals that a garbage collection cannot disarm. On Node 20 the signals
 * that AbortSignal's own `timeout` and `any` make are held only weakly: once collected they never
 * abort (nodejs/node#57736), and a step with a chatty build log runs past its `timeout`. Here a
 * plain timer holds its controller, and each parent signal's listener holds its child's, until
 * they fire or are let go.
 */

/** Node fires a longer timer at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;
/**
 * A controller whose signal any number of requests may listen to at once: a step reads many
 * deployments together, and Node 20 would print a MaxListenersExceededWarning past ten.
 */
function sharedController() {
    const controller = new AbortController();
    // Not 0 ("no limit" for an EventEmitter): on an EventTarget, getMaxListeners() then throws, and
    // undici's fetch (GitHub's client) calls it on every request's signal.
    (0,external_node_events_.setMaxListeners)(Infinity, controller.signal);
    return controller;
}
/** Aborts after `ms` with a TimeoutError, as AbortSignal's `timeout` does; no hold on the process. */
function deadline(ms) {
    return linked([], ms);
}
/**
 * Aborts with the first of `parents` to abort, or after `ms` when given, with that one's reason.
 * Once aborted (or released) it leaves its parents alone: a long-lived parent gathers no listeners.
 */
function linked(parents, ms) {
    const controller = sharedController();
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

;// CONCATENATED MODULE: ./src/time/budget.ts
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
    cancelGraceMs;
    /** When `timeout` passes (epoch ms). */
    deadline;
    #deploy;
    #held = [];
    #timer;
    #cancelledAt;
    /** Aborted when the step is over, before the transport closes. */
    #over = sharedController();
    #lifetime;
    constructor(timeoutMs, healthTimeoutMs, 
    /** The workflow run's cancel: it ends every share but the grace. */
    cancelled, now = Date.now, timer, 
    /** The host's time between a cancel's signal and its kill. */
    cancelGraceMs = CANCEL_GRACE_MS) {
        this.healthTimeoutMs = healthTimeoutMs;
        this.cancelled = cancelled;
        this.now = now;
        this.cancelGraceMs = cancelGraceMs;
        this.#timer = timer ?? (ms => this.#hold(deadline(ms)));
        this.deadline = now() + timeoutMs;
        this.#deploy = this.#any([cancelled, this.#timer(timeoutMs)]);
        cancelled.addEventListener('abort', () => (this.#cancelledAt = now()), { once: true });
        this.#lifetime = this.#any([cancelled, this.#over.signal]);
    }
    /**
     * The step's whole life: what is shared by everyone for as long as anyone needs it (reads many
     * wait for) goes under it, and ends with the run's cancel or with the step, so that nothing
     * outlives it and keeps the process waiting.
     */
    lifetime() {
        return this.#lifetime;
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
            : this.#cancelledAt + this.cancelGraceMs;
        return this.#timer(Math.max(0, Math.min(ms, end - now)));
    }
    /** Stops every timer and unhooks every signal handed out: the step is over. */
    release() {
        this.#over.abort(new ActionError('the step is over'));
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

;// CONCATENATED MODULE: ./src/coolify/escaped-log.ts
/**
 * A deployment's log as it stands in Coolify's answer: the JSON text of its entries, held in the
 * answer's JSON as a string, still escaped. Every read of a deployment carries the whole log, and
 * parsing the answer as a whole would unescape all of it every time; kept as it came, only what
 * the log grew by is unescaped (LogCursor).
 */
class EscapedLog {
    answer;
    start;
    end;
    constructor(
    /** The answer's text. */
    answer, 
    /** Where the log's escaped text starts in it, and ends (the closing quote's index). */
    start, end) {
        this.answer = answer;
        this.start = start;
        this.end = end;
    }
    /** The escaped text's length. */
    get length() {
        return this.end - this.start;
    }
    /** Whether it opens as `json_encode` writes an array of entries, or an empty one. */
    isArray() {
        const next = this.answer.charCodeAt(this.start + 1);
        return next === OPEN_BRACE || next === CLOSE_BRACKET;
    }
    /** The log unescaped from `from` (an index in the answer) to its end; undefined when not JSON. */
    text(from = this.start) {
        try {
            // Joined with `+`: V8 parses a template literal around a slice at half the speed.
            return JSON.parse('"' + this.answer.slice(from, this.end) + '"');
        }
        catch {
            return undefined;
        }
    }
}
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
/** Where 4.x's log begins in a deployment's answer: a key, then a string holding an array. */
const LOGS_KEY = '"logs":"[';
/**
 * The end of that string. Every quote inside a JSON string is escaped, so a quote right after a
 * `]` closes one; the log is `json_encode`d whole at every entry (ApplicationDeploymentQueue.php
 * 205-211, ExecuteRemoteCommand.php 181-204), so its text always ends with the array's `]`.
 */
const LOG_END = ']"';
/**
 * What starts the answer's next field in compact JSON, which a string cannot hold unescaped: found
 * before that end, the log ended earlier (a text log that looks like an array). Laravel writes
 * compact JSON; an answer that is not, as the end shows, is parsed whole.
 */
const NEXT_FIELD = ',"';
/** Where the log was, while the rest is parsed: what no log of Coolify's is (a lone NUL). */
const CUT = '\\u0000';
/**
 * A deployment's answer parsed without its log, which is returned as it stands in the text. The
 * answer's `logs` is read from that text when asked for. Undefined when the answer does not hold
 * a 4.x log (none, hidden from the token, plain text) or is not the JSON object it looks like: it
 * is then parsed as a whole.
 */
function parseApart(text) {
    const key = text.indexOf(LOGS_KEY);
    if (key < 0)
        return undefined;
    const start = key + LOGS_KEY.length - 1;
    const close = text.indexOf(LOG_END, start);
    if (close < 0)
        return undefined;
    const field = text.indexOf(NEXT_FIELD, start);
    if (field >= 0 && field < close)
        return undefined;
    const end = close + 1;
    if (!text.startsWith(NEXT_FIELD, end + 1) && text.charCodeAt(end + 1) !== CLOSE_BRACE) {
        return undefined;
    }
    const log = new EscapedLog(text, start, end);
    let body;
    try {
        body = JSON.parse(text.slice(0, start) + CUT + text.slice(end));
    }
    catch {
        return undefined;
    }
    // The key found was the answer's own, not one of an object inside it.
    if (!body || typeof body !== 'object' || body.logs !== '\0') {
        return undefined;
    }
    let logs;
    Object.defineProperty(body, 'logs', {
        enumerable: true,
        get: () => (logs ??= log.text() ?? '')
    });
    return { body, log };
}

;// CONCATENATED MODULE: external "node:v8"
const external_node_v8_namespaceObject = __nodeBuiltin("node:v8");
// EXTERNAL MODULE: ./node_modules/undici/lib/api/api-request.js
var api_request = __nccwpck_require__(4043);
var api_request_default = /*#__PURE__*/__nccwpck_require__.n(api_request);
// EXTERNAL MODULE: ./node_modules/undici/lib/core/connect.js
var connect = __nccwpck_require__(9136);
var connect_default = /*#__PURE__*/__nccwpck_require__.n(connect);
// EXTERNAL MODULE: ./node_modules/undici/lib/dispatcher/agent.js
var agent = __nccwpck_require__(7405);
var agent_default = /*#__PURE__*/__nccwpck_require__.n(agent);
// EXTERNAL MODULE: ./node_modules/undici/lib/dispatcher/dispatcher.js
var dispatcher = __nccwpck_require__(883);
var dispatcher_default = /*#__PURE__*/__nccwpck_require__.n(dispatcher);
// EXTERNAL MODULE: ./node_modules/undici/lib/dispatcher/pool.js
var dispatcher_pool = __nccwpck_require__(628);
var pool_default = /*#__PURE__*/__nccwpck_require__.n(dispatcher_pool);
;// CONCATENATED MODULE: ./src/transport/body.ts

/**
 * The encodings every request accepts (`Accept-Encoding`), each with the node:zlib function that
 * decodes it: Coolify's image gzips JSON, and a build log's JSON shrinks about tenfold. node:zlib
 * is loaded with the first compressed answer, not before the first request: it takes a few ms of
 * the start.
 */
const DECODERS = new Map([
    ['gzip', 'gunzipSync'],
    ['x-gzip', 'gunzipSync'],
    ['deflate', 'inflateSync'],
    ['br', 'brotliDecompressSync']
]);
const ACCEPT_ENCODING = 'gzip, deflate, br';
/** The most a body may hold decoded: a long build log is a few MB; past this it is refused, not held. */
const MAX_BODY_BYTES = 256 * 1024 * 1024;
/**
 * The decoder's output comes in pieces this large, unless gzip's trailer says how large the whole
 * is. Its default, 16 KB, costs a log of a few MB several times the decoding itself in calls and
 * copies.
 */
const DECODED_CHUNK_BYTES = 1024 * 1024;
/**
 * A body as text, decoded as its `Content-Encoding` says, within `maxBytes`; `received` is told of
 * each chunk's size as it came on the wire.
 *
 * A compressed body is read whole and then decoded in one call: it is a tenth of the text it
 * holds, and one call costs a fraction of decoding it piece by piece as it streams.
 */
async function readBody(body, contentEncoding = '', maxBytes, received) {
    const encoding = contentEncoding.trim().toLowerCase();
    const plain = encoding === '' || encoding === 'identity';
    const decoder = plain ? undefined : DECODERS.get(encoding);
    if (!plain && decoder === undefined) {
        body.destroy();
        throw new HttpUnreadable(`its body came compressed (${encoding}), which was not asked for`);
    }
    const chunks = [];
    let size = 0;
    try {
        for await (const chunk of body) {
            received(chunk.length);
            size += chunk.length;
            if (size > maxBytes)
                throw tooLarge(maxBytes);
            chunks.push(chunk);
        }
    }
    finally {
        // Left unread, the rest would hold the connection: it is closed instead.
        if (!body.readableEnded)
            body.destroy();
    }
    const wire = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
    if (!decoder)
        return wire.toString('utf8');
    const decode = process.getBuiltinModule('node:zlib')[decoder === 'inflateSync' && !zlibWrapped(wire) ? 'inflateRawSync' : decoder];
    try {
        const chunkSize = decodedSize(encoding, wire, maxBytes) ?? DECODED_CHUNK_BYTES;
        return decode(wire, { maxOutputLength: maxBytes, chunkSize }).toString('utf8');
    }
    catch (error) {
        // zlib stops at `maxOutputLength`: the rest is never decoded, let alone held.
        if (error.code === 'ERR_BUFFER_TOO_LARGE')
            throw tooLarge(maxBytes);
        throw error;
    }
}
/**
 * The size gzip's trailer gives the decoded body (modulo 4 GB; one more byte, so that the body
 * decodes into one piece and is not copied again), within `maxBytes` and what deflate can make of
 * the bytes at all; undefined for the other encodings. zlib checks the trailer: one that lies
 * fails the body as broken, after a piece no larger than its bytes could fill.
 */
function decodedSize(encoding, wire, maxBytes) {
    if (!encoding.endsWith('gzip') || wire.length < GZIP_SMALLEST)
        return undefined;
    const told = wire.readUInt32LE(wire.length - 4) + 1;
    return Math.max(Math.min(told, wire.length * DEFLATE_MOST_RATIO, maxBytes), MIN_CHUNK_BYTES);
}
/**
 * `deflate` is a deflate stream in zlib's wrapper (RFC 9110 8.4.1.2), which its first two bytes
 * tell; some servers send the bare stream, and browsers read that too.
 */
function zlibWrapped(wire) {
    return wire.length >= 2 && (wire[0] & 0x0f) === 8 && ((wire[0] << 8) | wire[1]) % 31 === 0;
}
/** A gzip member's 10-byte header and 8-byte trailer around at least an empty block. */
const GZIP_SMALLEST = 20;
/** The most deflate decodes a byte into (RFC 1951: a 258-byte match in about two bits). */
const DEFLATE_MOST_RATIO = 1032;
/** zlib's smallest `chunkSize`. */
const MIN_CHUNK_BYTES = 64;
function tooLarge(maxBytes) {
    return new HttpUnreadable(`its body is over ${megabytes(maxBytes)} MB`);
}
function megabytes(bytes) {
    return String(Math.round((bytes / 1024 / 1024) * 100) / 100);
}

;// CONCATENATED MODULE: ./src/transport/certificates.ts

/**
 * The CAs Node trusts by default: its own list, the runner's NODE_EXTRA_CA_CERTS and, where Node
 * reads it, the system's store. Node 20 has no call for that store: its own list and the extra
 * file then.
 */
function defaultCertificates(env) {
    // node:tls, and node:crypto with it, only for a run given CAs: they take 5–10 ms to load.
    const tls = process.getBuiltinModule('node:tls');
    const store = tls.getCACertificates;
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
    return [...tls.rootCertificates, ...added];
}
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

// EXTERNAL MODULE: external "node:net"
var external_node_net_ = __nccwpck_require__(7030);
;// CONCATENATED MODULE: ./src/transport/proxy.ts


/**
 * The proxy for a request to `target`, chosen as the runner's own tools (`@actions/http-client`)
 * choose it: `https_proxy`/`HTTPS_PROXY` for https, `http_proxy`/`HTTP_PROXY` for http (the
 * lower-case name first); none for loopback addresses, nor for a host that `no_proxy`/`NO_PROXY`
 * names (see `names`).
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
        throw new ActionError(`${variable} is not a proxy URL: give it as http://host:port (or https://, with user:password@ before the host if the proxy asks for them), or add ${target.hostname} to NO_PROXY.`);
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
    // The proxy is its origin: a path, query or fragment after it means nothing to a proxy.
    return { url: new URL(url.origin), name: url.host, credentials };
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
    if (!target.hostname)
        return false;
    if (isLoopback(target.hostname))
        return true;
    const host = target.hostname.toLowerCase().replace(/^\[|\]$/g, '');
    const port = target.port || (target.protocol === 'https:' ? '443' : '80');
    return (env.no_proxy || env.NO_PROXY || '')
        .split(',')
        .map(item => item.trim().toLowerCase())
        .filter(Boolean)
        .some(item => names(item, host, port));
}
/**
 * Whether a `NO_PROXY` item names `host` on `port`, as curl (7.86 and later) and Go read it: `*`,
 * a name or a domain it ends in (`example.com`, `.example.com`, `*.example.com`), an address or a
 * CIDR range (`10.0.0.0/8`, `fd00::/8`; IPv6 with or without brackets), each with an optional
 * `:port` (IPv6 in brackets then).
 */
function names(item, host, port) {
    if (item === '*')
        return true;
    const { name, port: only } = splitPort(item);
    if (only && only !== port)
        return false;
    const range = /^(.+)\/(\d{1,3})$/.exec(name);
    const address = range ? range[1] : name;
    const family = (0,external_node_net_.isIP)(address);
    if (family) {
        const hostFamily = (0,external_node_net_.isIP)(host);
        if (hostFamily !== family)
            return false;
        const type = family === 4 ? 'ipv4' : 'ipv6';
        const list = new external_node_net_.BlockList();
        try {
            list.addSubnet(address, range ? Number(range[2]) : family === 4 ? 32 : 128, type);
        }
        catch {
            return false;
        }
        return list.check(host, type);
    }
    const domain = name.startsWith('*.') ? name.slice(1) : name;
    return host === domain || host.endsWith(domain.startsWith('.') ? domain : `.${domain}`);
}
/** `host:port`, `[v6]:port`, or an IPv6 address (or range) without brackets, which has no port. */
function splitPort(item) {
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(item);
    if (bracketed)
        return { name: bracketed[1], port: bracketed[2] };
    if ((item.match(/:/g) ?? []).length > 1)
        return { name: item };
    const at = item.lastIndexOf(':');
    return at < 0 ? { name: item } : { name: item.slice(0, at), port: item.slice(at + 1) };
}

;// CONCATENATED MODULE: ./src/transport/tunnel.ts

/** The most an answer to CONNECT may hold before its end: Node's limit for headers. */
const MAX_TUNNEL_HEAD_BYTES = 16 * 1024;
/**
 * Asks the proxy on `socket` for a tunnel to `authority` (`host:port`); calls back without an
 * error once it answered 2xx, the socket then the tunnel. Its status line is read here: a refusal
 * is told by its status (407: it wants credentials), a silence by what never came.
 */
function openTunnel(socket, authority, token, timeoutMs, callback) {
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => done(new ProxyFailure(new HttpTimeout('CONNECT_TIMEOUT'))), timeoutMs);
    const done = (error, rest) => {
        clearTimeout(timer);
        socket.off('data', read).off('error', failed).off('close', closed);
        if (error) {
            socket.destroy();
            return callback(error);
        }
        socket.pause();
        // Nothing should come before the client speaks; whatever did is the tunnel's.
        if (rest?.length)
            socket.unshift(rest);
        callback();
    };
    const failed = (error) => done(proxyFailure(error));
    const closed = () => done(proxyFailure(Object.assign(new Error('the proxy closed the connection'), { code: 'ECONNRESET' })));
    const read = (chunk) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0 && head.length <= MAX_TUNNEL_HEAD_BYTES)
            return;
        const status = /^HTTP\/1\.[01] (\d{3})\b/.exec(head.toString('latin1', 0, Math.max(end, 0)));
        if (!status)
            return done(proxyFailure(new Error('its answer to CONNECT is not HTTP')));
        const code = Number(status[1]);
        if (code < 200 || code > 299)
            return done(new ProxyRefusal(code));
        done(undefined, head.subarray(end + 4));
    };
    socket.on('data', read).on('error', failed).on('close', closed);
    socket.write([
        `CONNECT ${authority} HTTP/1.1`,
        `Host: ${authority}`,
        ...(token ? [`Proxy-Authorization: ${token}`] : []),
        '',
        ''
    ].join('\r\n'));
}
function defaultPort(protocol) {
    return protocol === 'https:' ? 443 : 80;
}

;// CONCATENATED MODULE: ./src/transport/agent.ts











// undici's index gives every dispatcher its request methods (and loads them all); loaded part by
// part, the one used here is given here.
Object.assign((dispatcher_default()).prototype, { request: (api_request_default()) });
// undici parses HTTP in WebAssembly. Once that code is warm, V8 compiles it again with its
// optimizing compiler in the background: some 60 ms of CPU and 20 MB of memory, more than the
// optimized parser could ever save on the few dozen answers a deployment is followed with. The
// budget a function spends before it is optimized is set out of reach, before the parser loads.
(0,external_node_v8_namespaceObject.setFlagsFromString)('--wasm-tiering-budget=2000000000');
/**
 * How long a connection may sit idle before it is closed: servers and the proxies before them
 * close idle ones (Apache after 5 s; firewalls drop them silently), and a request sent on one
 * they closed is lost. Shorter when the server's `Keep-Alive: timeout=N` says so, by a margin.
 */
const IDLE_MS = 4000;
const IDLE_MARGIN_MS = 1000;
/** Methods a request may be sent again with: the server does the same however often it gets it. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** How a connection the server closed fails the request on it, before any answer. */
const STALE_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'ECONNABORTED']);
/** The connections to one site, straight or through the runner's proxy for it. */
class HttpAgent {
    /** The outbound proxy the requests go through, when the runner has one for this site. */
    proxy;
    /**
     * `kept`: connections kept open between requests (when `keepAlive`); `fresh`: a new connection
     * for each request, closed after its answer.
     */
    #dispatchers;
    #sockets = new Sockets();
    #route;
    /** `Proxy-Authorization`, when the proxy's URL carries credentials. */
    #authorization;
    #keepAlive;
    #maxBodyBytes;
    constructor(site, options, env = process.env) {
        this.proxy = proxyFor(site, env);
        this.#route = !this.proxy
            ? 'straight'
            : site.protocol === 'https:' || this.proxy.url.protocol === 'https:'
                ? 'tunnel'
                : 'forward';
        const credentials = this.proxy?.credentials;
        this.#authorization = credentials && `Basic ${Buffer.from(credentials).toString('base64')}`;
        this.#keepAlive = options.keepAlive ?? false;
        this.#maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
        const ca = options.ca?.length ? [...defaultCertificates(env), ...options.ca] : undefined;
        const connect = this.#connector(options.timeoutMs, ca);
        this.#dispatchers = {
            kept: agent_dispatcher(options.timeoutMs, connect),
            fresh: agent_dispatcher(options.timeoutMs, connect)
        };
    }
    /**
     * Opens a connection as the route says, every socket of it held from the start: close() ends
     * those still connecting too, which undici would let finish (or time out) before it looked.
     */
    #connector(timeoutMs, ca) {
        const sockets = this.#sockets;
        // The site's TLS, checked against its name or address: `ca` trusted besides Node's own.
        const toSite = connect_default()({ timeout: timeoutMs, ...(ca && { ca }) });
        const straight = (options, callback) => sockets.hold(toSite(options, callback));
        const proxy = this.proxy;
        if (!proxy)
            return straight;
        // The proxy's own TLS trusts what Node trusts: `ca` is for the site. No server name is sent
        // to a proxy given by its address (Node warns of one: DEP0123), as none is to such a site.
        const toProxy = connect_default()({ timeout: timeoutMs });
        const { hostname, host, port, protocol } = proxy.url;
        const address = {
            hostname: hostname.replace(/^\[|\]$/g, ''),
            host,
            port: port || String(defaultPort(protocol)),
            protocol
        };
        // Before the tunnel, the only peer is the proxy: whatever fails, it is the proxy's.
        const reachProxy = (then, callback) => {
            sockets.hold(toProxy(address, (error, socket) => {
                if (error)
                    callback(proxyFailure(error), null);
                else
                    then(socket);
            }));
        };
        if (this.#route === 'forward') {
            return (_options, callback) => reachProxy(socket => callback(null, socket), callback);
        }
        return (options, callback) => reachProxy(socket => {
            // undici gives the site's `host` as its URL has it: without the port when it is the default.
            const host = options.host ?? options.hostname;
            const authority = options.port ? host : `${host}:${defaultPort(options.protocol)}`;
            openTunnel(socket, authority, this.#authorization, timeoutMs, error => {
                if (error)
                    callback(error, null);
                else if (options.protocol === 'https:') {
                    sockets.hold(toSite({ ...options, httpSocket: socket }, callback));
                }
                else
                    callback(null, socket);
            });
        }, callback);
    }
    /**
     * Sends a request; resolves once the answer's headers are in. A request that may be sent again
     * is, at once and on a new connection, when a kept connection turns out closed before any
     * answer: the server closed it while it sat idle, and never saw the request.
     */
    async request(url, request) {
        const kept = this.#keepAlive && !request.once;
        // It goes on a connection kept from an earlier answer, which the server may have closed.
        const reused = kept && this.#dispatchers.kept.idle();
        try {
            return await this.#send(url, request, kept ? 'kept' : 'fresh');
        }
        catch (error) {
            const stale = reused && STALE_CODES.has(codeOf(error));
            if (!stale || !IDEMPOTENT.has(request.method) || request.signal.aborted)
                throw error;
            return this.#send(url, request, 'fresh');
        }
    }
    async #send(url, request, kind) {
        const { signal } = request;
        const { dispatcher } = this.#dispatchers[kind];
        if (signal.aborted)
            throw signal.reason;
        // Sent whole to the proxy: its path the full URL, with the proxy's credentials.
        const forward = this.#route === 'forward';
        const path = url.pathname + url.search;
        const authorization = forward && this.#authorization;
        let abort = () => { };
        // Ends at once on an abort, even while its connection is still being opened: undici applies
        // an abort only once the request is on a connection. That connection, once open, serves the
        // next request; close() ends it if none comes.
        const aborted = new Promise((_resolve, reject) => {
            abort = () => reject(signal.reason);
            signal.addEventListener('abort', abort, { once: true });
        });
        aborted.catch(() => { });
        let answer;
        try {
            answer = await Promise.race([
                dispatcher.request({
                    origin: url.origin,
                    path: forward ? url.origin + path : path,
                    method: request.method,
                    headers: authorization
                        ? { ...request.headers, 'proxy-authorization': authorization }
                        : request.headers,
                    body: request.body,
                    signal,
                    // Closed after its answer: the next one of its kind gets a new connection.
                    reset: kind === 'fresh'
                }),
                aborted
            ]);
        }
        catch (error) {
            throw signal.aborted ? signal.reason : failure(error);
        }
        finally {
            signal.removeEventListener('abort', abort);
        }
        const { statusCode, headers, body } = answer;
        // Until its body is read, a failure of the answer is kept, not thrown (a probe never reads it).
        body.on('error', () => { });
        // Sent whole to the proxy, a 407 is the proxy's own answer; through a tunnel, the site's.
        if (statusCode === 407 && forward) {
            body.destroy();
            throw new ProxyRefusal(407);
        }
        const header = (name) => {
            const value = headers[name.toLowerCase()];
            return Array.isArray(value) ? value[0] : value;
        };
        let wire = 0;
        return {
            status: statusCode,
            header,
            wireBytes: () => wire,
            text: async () => {
                try {
                    const max = this.#maxBodyBytes;
                    const text = await readBody(body, header('content-encoding'), max, n => (wire += n));
                    // undici frees the connection for the next request a turn after the body's end.
                    await new Promise(resolve => setImmediate(resolve));
                    return text;
                }
                catch (error) {
                    throw signal.aborted ? signal.reason : failure(error);
                }
            }
        };
    }
    /** Closes every connection, those under way and those still being opened, so that the process can exit. */
    close() {
        // The dispatchers first: they open no new connection once closed.
        for (const { dispatcher } of Object.values(this.#dispatchers)) {
            dispatcher.destroy().catch(() => { });
        }
        this.#sockets.destroy();
    }
}
/** A dispatcher whose connections `connect` opens: whether one of them sits idle, too. */
function agent_dispatcher(timeoutMs, connect) {
    const pools = new Set();
    const factory = (origin, options) => {
        const pool = new (pool_default())(origin, {
            ...options,
            connect,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
            keepAliveTimeout: IDLE_MS,
            keepAliveMaxTimeout: IDLE_MS,
            keepAliveTimeoutThreshold: IDLE_MARGIN_MS
        });
        pools.add(pool);
        return pool;
    };
    const idle = () => [...pools].some(pool => !pool.closed && pool.stats.free > 0);
    return { dispatcher: new (agent_default())({ factory }), idle };
}
/** The sockets an agent opened that are not closed yet, from the moment each is opened. */
class Sockets {
    #open = new Set();
    #closed = false;
    hold(socket) {
        if (this.#closed)
            return void socket.destroy(new Error('the connections were closed'));
        this.#open.add(socket);
        socket.once('close', () => this.#open.delete(socket));
    }
    /** Ends them all, with an error: a connect still under way calls back, and its timer stops. */
    destroy() {
        this.#closed = true;
        for (const socket of this.#open)
            socket.destroy(new Error('the connections were closed'));
    }
}

;// CONCATENATED MODULE: external "node:timers/promises"
const promises_namespaceObject = __nodeBuiltin("node:timers/promises");
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
/** Share of every window polls leave to other tools that use the same token, at the least. */
const RESERVE_SHARE = 0.2;
/**
 * Share of every window polls leave, at the most, however much the reads still to come need: the
 * polls that find what has ended must go on too.
 */
const MOST_HELD_SHARE = 0.5;
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
 * through, and holds a request only when the window has nothing left for it, or after a 429 until
 * its `Retry-After`; never past the end of the window. Polls leave part of every window alone: what
 * the reads still to come need to end what is followed (`holdBack`), a fifth of the window at the
 * least (for other tools on the same token), half at the most. A read whose answer can end a
 * following, a trigger and a cancel may spend it.
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
    /** What the followers say their reads still to come need, each asked anew every time. */
    needs = new Set();
    constructor(now = Date.now, wait = sleep) {
        this.now = now;
        this.wait = wait;
    }
    /** Holds back from polls what `need` says, asked anew each time, from now on. */
    holdBack(need) {
        this.needs.add(need);
    }
    /**
     * Resolves when a request may go out, and charges it to the window. Polls (`read: true`) leave
     * what is held back alone; a trigger, a cancel or a read that can end a following may spend it.
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
        const held = this.reserve();
        return {
            spare: Math.max(0, this.left - held),
            held: Math.min(held, Math.max(0, this.left)),
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
    /**
     * What polls leave alone: what the reads still to come need to end what is followed, so that
     * polls early in a window do not leave the last ends waiting for the next one.
     */
    reserve() {
        const limit = this.limitPerMinute ?? 0;
        let needed = 0;
        for (const need of this.needs)
            needed += need();
        const most = Math.floor(limit * MOST_HELD_SHARE);
        return Math.max(Math.ceil(limit * RESERVE_SHARE), Math.min(needed, most));
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
    /** Coolify's API answered, whatever it said (a web page instead does not count). */
    answeredAtAll() {
        this.heard = true;
    }
    /**
     * The same failure, no longer worth retrying, once the address never answered anything and
     * could not be connected to for FIRST_ANSWER_GRACE_MS; undefined while it is still worth it.
     */
    givenUp(error, attempts) {
        if (!this.suspect(error) || this.downSince === undefined)
            return undefined;
        const waited = this.now() - this.downSince;
        if (waited < FIRST_ANSWER_GRACE_MS)
            return undefined;
        const never = error.details.notCoolify ? "does not answer as Coolify's API" : 'never answered';
        return new CoolifyError(error.request, `${this.address} ${never}: ${error.reason}, ${attempts} attempts in ${formatDuration(waited)}`, error.hint, { ...error.details, transient: false });
    }
    /**
     * A failure that says the address may be wrong, as long as Coolify's API never answered: no
     * connection at all, or a web page where its JSON was expected.
     */
    suspect(error) {
        return !this.heard && (error.details.unsent === true || error.details.notCoolify === true);
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
        if (this.suspect(error)) {
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
    gate;
    /** Aborted by close(): a call still under way then (a courtesy no one waits for) ends at once. */
    closing = sharedController();
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
        this.gate = options.gate ?? new RateGate();
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
            // Coolify's image gzips JSON when asked: every read carries the whole log so far.
            'accept-encoding': ACCEPT_ENCODING,
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
     * Holds back from polls, in every window, what `need` says the reads still to come will take to
     * end what is followed; the reads that end it spend it.
     */
    holdBack(need) {
        this.gate.holdBack(need);
    }
    /** GET /version: Coolify's version, as plain text ("4.3.11"). */
    version(signal, { final = false } = {}) {
        return this.call({ method: 'GET', path: '/version', plain: true, retry: true, signal, final });
    }
    /** GET /team: the team the token belongs to (Coolify 4.3.0+; older servers lack the route). */
    team(signal) {
        return this.call({ method: 'GET', path: '/team', retry: true, signal });
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
    async checkAbility(ability, signal) {
        const path = ability === 'deploy' ? '/deploy' : '/servers/ability-check/validate';
        try {
            await this.call({ method: 'GET', path, retry: true, signal });
        }
        catch (error) {
            if (error instanceof CoolifyError && error.status === 405)
                return;
            throw error;
        }
        throw new ActionError(`GET ${path}: Coolify took a GET that 4.2.0 and later refuse with 405: not asked again, nothing more is checked.`);
    }
    /**
     * GET /deployments: every queued or in-progress deployment of the team, each the row a read by
     * uuid gives (logs with `read:sensitive`); undefined when the answer is no list at all. Coolify
     * sorts the rows after its query and keeps their keys, so the list may come as an object keyed
     * by the query's order: its values are the rows.
     */
    async runningDeployments(signal, kind = {}) {
        return (await this.runningDeploymentsDated(signal, kind)).body;
    }
    /** `runningDeployments`, with what its answer took on the wire. */
    async runningDeploymentsDated(signal, { final = false } = {}) {
        const answer = await this.dated({
            method: 'GET',
            path: '/deployments',
            retry: true,
            signal,
            final
        });
        const rows = answer.body;
        const body = Array.isArray(rows)
            ? rows
            : rows && typeof rows === 'object'
                ? Object.values(rows)
                : undefined;
        return { ...answer, body };
    }
    /** GET /applications: all the token sees, or (4.0.0 and later) those with the Coolify tag. */
    listApplications(signal, tag) {
        const query = tag ? { tag } : undefined;
        return this.call({ method: 'GET', path: '/applications', query, retry: true, signal });
    }
    getApplication(uuid, signal) {
        return this.call({ method: 'GET', path: `/applications/${enc(uuid)}`, retry: true, signal });
    }
    /** `getApplication`, dated: its status's refresh time is on Coolify's clock. */
    getApplicationDated(uuid, signal, { final = false } = {}) {
        const path = `/applications/${enc(uuid)}`;
        return this.dated({ method: 'GET', path, retry: true, signal, final });
    }
    /** `listApplications`, dated. */
    listApplicationsDated(signal, { final = false } = {}) {
        return this.dated({ method: 'GET', path: '/applications', retry: true, signal, final });
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
     * `getDeployment`, dated: its `updated_at` (the last log entry's write) is on Coolify's clock. Its
     * log, when 4.x's, also comes as it stands in the answer (`log`), to be unescaped only where it
     * grew.
     */
    getDeploymentDated(uuid, signal, { final = false } = {}) {
        const path = `/deployments/${enc(uuid)}`;
        return this.dated({ method: 'GET', path, retry: true, signal, final, logApart: true });
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
    /**
     * GET /applications/{uuid}/rollback-images (4.3+): `current`, the tag the running container was
     * started from (null for a digest, or when Coolify cannot reach the server), and the images kept.
     */
    rollbackImages(uuid, signal) {
        return this.call({
            method: 'GET',
            path: `/applications/${enc(uuid)}/rollback-images`,
            retry: true,
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
    /** GET /destinations (4.3.11): the Docker networks on all the team's servers. */
    listTeamDestinations(signal) {
        return this.call({ method: 'GET', path: '/destinations', retry: true, signal });
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
    getService(uuid, signal, { final = false } = {}) {
        const path = `/services/${enc(uuid)}`;
        return this.dated({ method: 'GET', path, retry: true, signal, final });
    }
    /** GET /databases/{uuid}, dated: its refresh time is on Coolify's clock. */
    getDatabase(uuid, signal, { final = false } = {}) {
        const path = `/databases/${enc(uuid)}`;
        return this.dated({ method: 'GET', path, retry: true, signal, final });
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
                // GETs that poll leave what the window holds back alone.
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
        const date = Date.parse(response.header('date') ?? '');
        const wireBytes = response.wireBytes();
        if (call.plain && status >= 200 && status < 300) {
            observe();
            return { body: text.trim(), date: Number.isNaN(date) ? undefined : date, wireBytes };
        }
        const apart = call.logApart && status >= 200 && status < 300 ? parseApart(text) : undefined;
        const json = apart ? apart.body : parseJson(text);
        const html = json === undefined && looksLikeHtml(text, response.header('content-type'));
        // A web page says nothing of whether Coolify's API is at this address.
        if (!html)
            this.reachability.answeredAtAll();
        const serverMessage = client_messageOf(json);
        observe(serverMessage);
        if (status < 200 || status >= 300) {
            const described = describeHttpFailure(status, serverMessage, {
                location: response.header('location'),
                'cf-mitigated': response.header('cf-mitigated')
            }, url);
            // A web page instead of Coolify's JSON: a proxy failing, or an address that is not the API.
            const page = html && status >= 400 && status !== 429 && !response.header('cf-mitigated');
            // Through a proxy, plain http is answered by the proxy when it cannot reach Coolify.
            const byProxy = this.proxy && url.protocol === 'http:' && status >= 500 && serverMessage === undefined;
            const reason = byProxy
                ? `the proxy ${this.proxy.name} or Coolify behind it answered ${status}`
                : !page
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
            throw new CoolifyError(label, reason, hint, { status, transient: true, notCoolify: html });
        }
        return {
            body: json,
            date: Number.isNaN(date) ? undefined : date,
            wireBytes,
            ...(apart && { log: apart.log })
        };
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
function client_messageOf(json) {
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

;// CONCATENATED MODULE: ./src/config/secrets.ts

/**
 * Values shorter than this are never masked: the runner would star out every "1" or "on" in the
 * log, and the pull request comment leaves out only what the log does.
 */
const MIN_MASKED_LENGTH = 4;
/** A plain number of at most six digits (a port, a count, a size): `3000`, `8080`, `0.5`. */
const PLAIN_NUMBER = /^\d{1,6}(\.\d+)?$/;
/** One word of at most twelve letters, all of one case: `https`, `production`, `true`, `INFO`. */
const PLAIN_WORD = /^(?:[a-z]{1,12}|[A-Z]{1,12})$/;
/**
 * Whether one of the application's own settings (`env`, its variables) is worth masking. A mask
 * stars out the value in every line printed after it, links included: `PORT=3000` would make the
 * preview's link `…:***`, `PROTOCOL=https` every link `***://…`. So values that give nothing away
 * stay readable: under four characters, a plain number, or one word of letters in one case.
 * Anything else (digits among letters, mixed case, symbols, a URL) is masked.
 */
function worthMasking(value) {
    return value.length >= MIN_MASKED_LENGTH && !PLAIN_NUMBER.test(value) && !PLAIN_WORD.test(value);
}
/**
 * Everything the step masked, for what the runner does not mask itself: the pull request comment,
 * the summary's escaped text, a line cut before the runner sees it.
 */
const masked = new Set();
/**
 * Masks a value in the host's log from now on, and remembers it, so that what the runner does not
 * mask (`redactMasked`) can leave it out too.
 */
function mask(value) {
    if (!value)
        return;
    masked.add(value);
    host().mask(value);
}
/**
 * Every form in which GitHub's runner hides a masked value: the value and each of its lines,
 * trimmed (`::add-mask::` adds them, actions/runner `ActionCommandManager.cs`), each as the
 * encoders registered in `src/Runner.Common/HostContext.cs` write it (`ValueEncoders.cs`): base64
 * from its first, second and third byte, quotes escaped for a command line and for an expression,
 * JSON-, URI- and XML-escaped, without its surrounding double quotes, and its PowerShell halves
 * around `&`. Beyond the runner's list: base64 forms also without their last, padded character,
 * which depends on what follows the value in a longer text, and URI forms as JavaScript and HTML
 * forms write them. Forms under `MIN_MASKED_LENGTH` are left out, as values are.
 */
function maskedForms(value) {
    const lines = value
        .split(/[\r\n]+/)
        .map(line => line.trim())
        .filter(Boolean);
    const forms = [value, ...lines].flatMap(one => [
        one,
        ...base64Forms(one),
        one.replaceAll('"', '\\"'),
        one.replaceAll("'", "''"),
        jsonEscaped(one),
        ...uriEscaped(one),
        xmlEscaped(one),
        one.length > 8 && one.startsWith('"') && one.endsWith('"') ? one.slice(1, -1) : '',
        ...powerShellHalves(one)
    ]);
    return [...new Set(forms)].filter(form => form.length >= MIN_MASKED_LENGTH);
}
/**
 * `text` with every form of every masked value (and `escape` of each, as a report escapes it)
 * replaced by `***`: for what the runner never sees, or sees only after it was cut. The longest
 * form is taken first, so that no part of a longer one is left.
 */
function redactMasked(text, escape) {
    const forms = [...masked].flatMap(maskedForms);
    const all = [...new Set(escape ? [...forms, ...forms.map(escape)] : forms)];
    if (all.length === 0)
        return text;
    all.sort((a, b) => b.length - a.length);
    const pattern = new RegExp(all.map(form => form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
    return text.replace(pattern, '***');
}
/** Base64 of the value from its first, second and third byte; each also without what padding makes uncertain. */
function base64Forms(value) {
    const bytes = Buffer.from(value, 'utf8');
    return [0, 1, 2].flatMap(shift => {
        const encoded = (bytes.length > shift ? bytes.subarray(shift) : bytes).toString('base64');
        const certain = encoded.replace(/=+$/, '').slice(0, -1);
        return encoded.endsWith('=') && certain.length >= 8 ? [encoded, certain] : [encoded];
    });
}
/** As Newtonsoft.Json writes a string, without its quotes: it also escapes U+0085, U+2028, U+2029. */
function jsonEscaped(value) {
    return JSON.stringify(value)
        .slice(1, -1)
        .replace(/[\u0085\u2028\u2029]/g, char => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
/**
 * As .NET's `Uri.EscapeDataString` writes it (only RFC 3986's unreserved characters stay), and
 * beyond the runner's list, as JavaScript's `encodeURIComponent` and a form's query write it.
 */
function uriEscaped(value) {
    try {
        const component = encodeURIComponent(value);
        const strict = component.replace(/[!'()*]/g, char => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
        return [strict, component, new URLSearchParams({ v: value }).toString().slice(2)];
    }
    catch {
        return []; // a lone surrogate: .NET refuses it too
    }
}
/** As .NET's `SecurityElement.Escape`. */
function xmlEscaped(value) {
    const names = {
        '&': 'amp',
        '<': 'lt',
        '>': 'gt',
        '"': 'quot',
        "'": 'apos'
    };
    return value.replace(/[&<>"']/g, char => `&${names[char]};`);
}
/**
 * PowerShell colours part of a failing command's text: the runner masks the part up to the last
 * `&` (or to the first `&+`) and the part after it (after `&+` and one more character), each when
 * it has six characters or more.
 */
function powerShellHalves(value) {
    if (!value.includes('&'))
        return [];
    const plus = value.indexOf('&+');
    const before = plus >= 0 ? value.slice(0, plus + 2) : value.slice(0, value.lastIndexOf('&') + 1);
    const after = plus >= 0
        ? value.length > plus + 3
            ? value.slice(plus + 3)
            : ''
        : value.slice(value.lastIndexOf('&') + 1);
    return [before, after].filter(half => half.length >= 6);
}
/**
 * A run of base64 piped to `base64 -d`, whatever quotes close it: `echo '…' | base64 -d`, and as
 * Coolify 4.3 quotes a command for `docker exec … bash -c '…'`, `echo '\''…'\'' | base64 -d`
 * (`bootstrap/helpers/docker.php`, `executeInDocker`).
 */
const BASE64_PAYLOAD = /[A-Za-z0-9+/]{16,}={0,2}(?=['"\\]*\s*\|\s*base64\s+(?:-d|-D|--decode)\b)/g;
/**
 * Coolify's hidden entries carry the commands of its deployment job, some with every variable of
 * the application encoded in them (`echo '<base64>' | base64 -d | tee .env`, heredocs): their
 * payloads are replaced before such a line is printed.
 */
function redactPayloads(text) {
    return text
        .replace(BASE64_PAYLOAD, '<redacted>')
        .replace(/(<<-?\s*(['"]?)(\w+)\2[^\n]*\n)[\s\S]*?(\n\3\b)/g, '$1<redacted>$4');
}

;// CONCATENATED MODULE: ./src/transport/connect.ts



/**
 * The client for the instance and credentials in `config`, with timeouts scaled to its cadence,
 * through the runner's proxy when it has one (its password masked first).
 */
function connect_connect(config, say) {
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

;// CONCATENATED MODULE: ./src/coolify/answers.ts
/**
 * Reading values out of Coolify's answers, which older servers and odd rows give in other shapes:
 * its timestamps, and its lists.
 */
/** A date and time with no zone: `2026-11-28 12:00:01`, or with a `T`, fractions allowed. */
const ZONELESS = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?$/;
/**
 * Epoch ms of one of Coolify's timestamps (ISO 8601, microseconds allowed); undefined if none.
 * A column no model casts (`last_online_at`) comes as Postgres prints it, without a zone: Coolify
 * stores UTC, so it is read as UTC, never in the runner's own time zone.
 */
function timeOf(value) {
    if (typeof value !== 'string' || value === '')
        return undefined;
    const trimmed = value.trim();
    const ms = Date.parse(ZONELESS.test(trimmed) ? `${trimmed.replace(' ', 'T')}Z` : trimmed);
    return Number.isNaN(ms) ? undefined : ms;
}
function listOf(value) {
    return Array.isArray(value) ? value : [];
}
/**
 * Whether Coolify's `version` ("4.3.11", "v4.0.0-beta.405", "4.0.0-beta.420.7") is `since` or
 * later; undefined when either does not read as one. A beta comes before its release.
 */
function releaseAtLeast(version, since) {
    const [have, want] = [releaseOf(version), releaseOf(since)];
    if (!have || !want)
        return undefined;
    for (let i = 0; i < have.length; i++) {
        if (have[i] !== want[i])
            return have[i] > want[i];
    }
    return true;
}
/** major, minor, patch, beta (Infinity for a release) and the beta's own fix of a version. */
function releaseOf(version) {
    const match = /^v?(\d+)\.(\d+)\.(\d+)(?:-beta\.(\d+)(?:\.(\d+))?)?$/.exec(version.trim());
    if (!match)
        return undefined;
    const [, major, minor, patch, beta, fix] = match;
    return [Number(major), Number(minor), Number(patch), Number(beta ?? Infinity), Number(fix ?? 0)];
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
const copied = (why, job) => ({ kind: 'copied', why, ...(job ? { job } : {}) });
const set = (why) => ({ kind: 'set', why });
const fields_reset = (to, why, field) => ({ kind: 'reset', to, why, ...(field ? { field } : {}) });
function each(keys, rule) {
    return keys.map(key => [key, rule]);
}
const BUILD = copied('how its image is built from the pull request’s code', 'the job builds the image with it in a helper container on the review app’s own server (the build server is reset), from the pull request’s branch');
const HEALTH = copied('how Coolify checks its own container’s health', 'the job writes it into the review app’s container as its health check and waits on it');
const LIMITS = copied('limits of its own container', 'the job sets it on the review app’s own container (docker run / compose deploy resources)');
const COMPOSE_ONLY = copied('read only for compose applications, which are refused', 'the job reads it only for compose applications (or beside `custom_internal_name`, which is reset); compose templates are refused');
const SOURCE = copied('where its code comes from: the same repository, read with the same access', 'the job clones the pull request’s branch of the same repository with it (generateGitImportCommands); submodules and LFS, which reach further with the same credentials, are reset');
const PROXY = copied('how the proxy serves its own domain', 'the job writes it into the Traefik/Caddy labels of the review app’s own domain (generateLabelsApplication)');
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
    [
        'git_commit_sha',
        set('the pull request’s head commit the event names, on every run: production’s pin would build production’s commit, `HEAD` whatever the branch holds when the build starts')
    ],
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
    [
        'settings.is_preserve_repository_enabled',
        fields_reset(false, 'the job copies the built repository onto the server (/data/coolify/applications/<uuid>) and writes README.md and .env into it through the shell: a symlink committed there writes as the server’s user, even when the build fails')
    ],
    [
        'settings.is_git_lfs_enabled',
        fields_reset(false, 'the job runs git lfs pull with the same GitHub App token or deploy key: a .lfsconfig on the branch could fetch from any repository they reach (a template with it on is refused: the clone fetches LFS objects even with it off; an application created from the repository starts with it on)')
    ],
    [
        'settings.is_build_server_enabled',
        fields_reset(false, 'the job builds on one of the team’s build servers, whatever `review-destination` says, with its Docker socket, registry credentials and host network', 'use_build_server')
    ],
    [
        'settings.is_git_submodules_enabled',
        fields_reset(false, 'the job clones submodules from the branch’s .gitmodules with the template’s GitHub App token or deploy key: a pull request could add any private repository they reach and ship it in the image')
    ],
    [
        'is_http_basic_auth_enabled',
        fields_reset(false, 'Traefik’s basicauth forwards the Authorization header to the container: every reviewer who logs in would hand production’s password to pull request code')
    ],
    // Copied: settings of its own container and build.
    ...each(['repository_project_id', 'git_repository', 'source_id', 'source_type', 'private_key_id'], SOURCE),
    ['git_full_url', copied('the repository’s address as shown; the job clones from git_repository')],
    [
        'watch_paths',
        copied('which pushed paths trigger a webhook deploy, which is off (auto-deploy and secrets)')
    ],
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
        'settings.is_static',
        'settings.is_spa',
        'settings.is_git_shallow_clone_enabled',
        'settings.disable_build_cache',
        'settings.use_build_secrets',
        'settings.inject_build_args_to_dockerfile',
        'settings.include_source_commit_in_build',
        'settings.is_env_sorting_enabled'
    ], BUILD),
    [
        'ports_exposes',
        copied('ports inside its own container, reached through its own domain', 'the job exposes them on the review app’s own container and routes its own domain to the first')
    ],
    [
        'preview_url_template',
        copied('the address of Coolify’s own previews of it, which are turned off')
    ],
    ...each([
        'redirect',
        'settings.is_force_https_enabled',
        'settings.is_gzip_enabled',
        'settings.is_stripprefix_enabled',
        'settings.is_container_label_escape_enabled'
    ], PROXY),
    ...each(['http_basic_auth_username', 'http_basic_auth_password'], copied('Coolify refuses a null one, so the value stays in the row, unused', 'the job writes it into the basicauth middleware of the proxy labels only while `is_http_basic_auth_enabled` is on, which is reset')),
    ...each([
        'pre_deployment_command',
        'pre_deployment_command_container',
        'post_deployment_command',
        'post_deployment_command_container'
    ], copied('commands run inside its own container, with its own variables', 'the job runs it with docker exec in the review app’s own container, before or after the switch')),
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
        'health_check_interval',
        'health_check_timeout',
        'health_check_retries',
        'health_check_start_period'
    ], HEALTH),
    [
        'health_check_response_text',
        copied('the text Coolify looks for in its own container’s health check answer')
    ],
    ...each([
        'limits_memory',
        'limits_memory_swap',
        'limits_memory_swappiness',
        'limits_memory_reservation',
        'limits_cpus',
        'limits_cpuset',
        'limits_cpu_shares',
        'settings.is_gpu_enabled',
        'settings.gpu_driver',
        'settings.gpu_count',
        'settings.gpu_device_ids',
        'settings.gpu_options'
    ], LIMITS),
    ...each(['max_restart_count', 'settings.stop_grace_period', 'settings.docker_images_to_keep'], copied('how Coolify restarts, stops and prunes its own container and images')),
    ...each([
        'swarm_replicas',
        'swarm_placement_constraints',
        'settings.is_swarm_only_worker_nodes',
        'settings.is_log_drain_enabled',
        'settings.is_debug_enabled'
    ], copied('how its own container runs and logs', 'the job sets it on the review app’s own service or container (swarm placement, the log drain’s labels), or shows its own build’s commands in its log')),
    ['settings.is_include_timestamps', copied('how Coolify shows its own logs')],
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
/**
 * What Coolify turns on in every application it creates and the table turns off: an application
 * created from the repository (no clone) starts with these.
 */
const NEW_APPLICATION_FIELDS = {
    'settings.is_git_submodules_enabled': true,
    'settings.is_git_lfs_enabled': true
};
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
/**
 * The field of PATCH /applications/{uuid} that writes a key: the settings' keep their name, unless
 * the rule names update_by_uuid's own.
 */
function patchField(key, rule) {
    if (rule?.kind === 'reset' && rule.field)
        return rule.field;
    return key.startsWith('settings.') ? key.slice('settings.'.length) : key;
}

;// CONCATENATED MODULE: ./src/review-app/names.ts
/**
 * How a review app is known: the marker its description carries — the pull request, the
 * repository and the template's uuid — by which runs find it again, whatever the template is
 * called now or whether it still exists, and never take another application for it; and the name
 * a new one is given, `<template>-pr-<N>`.
 */

/**
 * The markers of the pull request's review app of the template (`app-uuid`), naming the
 * repository the event says the run is in. No read of the template: it may be gone.
 */
function markersOf(config, repository) {
    const where = repository ?? 'this repository';
    const marker = `Review app for pull request #${config.pr} of ${where}, template ${config.appUuids[0]}`;
    return { marker, pending: `${marker} (being set up)` };
}
/** The template (`app-uuid`), the markers and the name of a new review app for this pull request. */
async function templateOf(client, config, repository, signal) {
    const uuid = config.appUuids[0];
    const template = await client.getApplication(uuid, signal);
    const names = {
        name: `${template.name ?? uuid}-pr-${config.pr}`,
        ...markersOf(config, repository)
    };
    return { template: { ...template, uuid }, names };
}
/** The uuids of the applications with this name. */
function namesakesIn(listed, name) {
    return listOf(listed)
        .filter(app => app?.name === name && typeof app.uuid === 'string')
        .map(app => app.uuid);
}
/** Applications with the review app's marker, the oldest first; never any other. */
function reviewAppsIn(listed, names) {
    return listOf(listed)
        .filter((app) => typeof app?.uuid === 'string' &&
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



/**
 * `delete-preview` with `review-app`: deletes the pull request's review app, if there is one,
 * found by its marker alone — renamed or deleted, the template is not read.
 */
async function deleteReviewApp(client, config, event, signal, say) {
    const found = reviewAppsIn(await client.listApplications(signal), markersOf(config, event.repository));
    if (found.length === 0) {
        say.note(`No review app of pull request ${config.pr} in Coolify (already deleted)`);
        return;
    }
    for (const app of found) {
        await deleteApplication(client, app.uuid, signal);
        say.note(`Coolify is deleting review app ${app.name ?? app.uuid} (${app.uuid})`);
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

;// CONCATENATED MODULE: ./src/review-app/make.ts
/**
 * Making a review app: a clone of the template where Coolify can clone (4.3+), else an application
 * created from the template's repository. Either is left for setup.ts to make safe to deploy.
 */




const SHARED_SERVER_WARNING = (name) => `Review app ${name} runs on a server production runs on, as \`review-destination\` chose: pull request code shares that server's Docker daemon (an image LABEL can claim production's Traefik routes, FROM can build on production's image, the build cache is shared), its builds run on the host network, production's containers answer it by name on the destination's network, and on Coolify's own server Coolify's database and Redis are beside it. Give \`review-destination\` a destination on a server without production to isolate review apps (see docs/review-apps.md).`;
/**
 * `review-destination`, refused when not given; none when Coolify has no clone route (before
 * 4.3). It shares production's server when that server holds any of the template's destinations,
 * primary or additional: production deploys to each (ApplicationDeploymentJob.php 2214-2249).
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
    if (!list.some(destination => destination?.uuid)) {
        throw new ActionError('Coolify names no destination for the template.');
    }
    const production = new Set(list.map(destination => destination?.server_uuid).filter((uuid) => !!uuid));
    const chosen = config.reviewPlacement.destination;
    if (!chosen)
        throw await noDestination(client, list, production, signal);
    if (list.some(destination => destination?.uuid === chosen)) {
        return { uuid: chosen, sharesServer: true };
    }
    let unknown = production.size === 0;
    for (const server of production) {
        try {
            const onServer = listOf(await client.listServerDestinations(server, signal));
            if (onServer.some(destination => destination?.uuid === chosen)) {
                return { uuid: chosen, sharesServer: true };
            }
        }
        catch (error) {
            if (!isMissingRoute(error) && !isGone(error))
                throw error;
            unknown = true;
        }
    }
    return { uuid: chosen, sharesServer: unknown ? undefined : false };
}
/** The refusal when `review-destination` is not given: the team's destinations, isolated or not. */
async function noDestination(client, template, production, signal) {
    let team = template;
    try {
        team = listOf(await client.listTeamDestinations(signal));
    }
    catch (error) {
        if (!isMissingRoute(error))
            throw error;
    }
    const described = team
        .filter(destination => destination?.uuid)
        .map(destination => {
        const where = `${destination.uuid}${destination.name && destination.name !== destination.uuid ? ` (${destination.name})` : ''} on server ${destination.server_uuid ?? '?'}`;
        return `${where}: ${destination.server_uuid && production.has(destination.server_uuid) ? "shares production's server" : 'isolated'}`;
    });
    return new ActionError(`Review apps need \`review-destination\`: the uuid of a destination on a server without production, where pull request code cannot reach production's containers, Docker daemon or network. The team's destinations: ${described.join('; ')}.`);
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

;// CONCATENATED MODULE: ./src/config/event.ts

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

;// CONCATENATED MODULE: ./src/rollout/configure.ts


/**
 * Sets `git-branch`, `domains` and `env` on every application before it is deployed: variables
 * through PATCH /applications/{uuid}/envs/bulk (the previews' own with `pr`; the inputs refuse
 * `git-branch` and `domains` there, which have no preview form), the other settings through PATCH
 * /applications/{uuid} carrying only the fields given. A server without the bulk route (the seed
 * contract) takes the variables as one string in that PATCH instead. A change Coolify refuses
 * throws, so nothing is deployed with settings other than those asked for.
 */
async function applySettings(client, config, signal, say) {
    const settings = settingsOf(config);
    const env = config.env;
    if (Object.keys(settings).length === 0 && !env)
        return;
    // Learnt from the first answer, so that later applications skip a route that is not there.
    let bulkRoute = true;
    for (const uuid of config.appUuids) {
        try {
            const changes = { ...settings };
            const preview = config.pr !== undefined;
            if (env && bulkRoute && !(await setVariables(client, uuid, env, preview, signal))) {
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
/** The application's fields `git-branch` and `domains` set. */
function settingsOf(config) {
    const settings = {};
    if (config.gitBranch !== undefined)
        settings.git_branch = config.gitBranch;
    if (config.domains !== undefined)
        settings.domains = config.domains;
    return settings;
}
/** What `git-branch`, `domains` and `env` set, in words; undefined when they set nothing. */
function settingsToApply(config) {
    const settings = settingsOf(config);
    if (Object.keys(settings).length === 0 && !config.env)
        return undefined;
    return describeSettings(settings, config.env);
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
    if (await setVariables(client, uuid, env, false, signal))
        return;
    await client.updateApplication(uuid, { environment_variables: joined(env) }, signal);
}
/**
 * True once set; false when the server has no bulk route, so nothing was set. Each existing
 * variable keeps its own flags: left out, Coolify would make a literal one interpolated and null
 * the others, which its database refuses.
 */
async function setVariables(client, uuid, env, preview, signal) {
    try {
        const existing = await client.listApplicationEnvs(uuid, signal);
        const items = env.map(variable => withOwnFlags(variable, existing, preview));
        await client.updateApplicationEnvs(uuid, items, signal);
        return true;
    }
    catch (error) {
        if (isMissingRoute(error))
            return false;
        throw error;
    }
}
/** The bulk route's item for `variable`: production's or the previews', with the flags it has. */
function withOwnFlags(variable, existing, preview) {
    const item = preview ? { ...variable, is_preview: true } : { ...variable };
    const own = listOf(existing).find(found => found?.key === variable.key && (found.is_preview ?? false) === preview);
    if (!own)
        return item;
    return {
        ...item,
        is_literal: item.is_literal ?? own.is_literal ?? false,
        is_multiline: item.is_multiline ?? own.is_multiline ?? false,
        is_shown_once: item.is_shown_once ?? own.is_shown_once ?? false
    };
}
/** The seed contract's form: `KEY=value` lines. */
function joined(env) {
    return env.map(({ key, value }) => `${key}=${value}`).join('\n');
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
 * webhook secrets, production's pin) goes, with the marker that it is being set up, and the pull
 * request's head commit is pinned (a push after the run was approved is never built); then its
 * domains; then the template's tasks, tags and variables; then its own variables; the pull
 * request's branch only after all of that (a push to it deploys whatever carries it); then the
 * read-back; the marker that it is ready last.
 */
function planReviewApp(template, request) {
    const refused = [
        ...fieldRefusals(template.fields),
        ...lfsRefusals(template.fields),
        ...mountRefusals(template),
        ...routeRefusals(template, request)
    ];
    const { variables, warnings, secrets, leaks } = reviewVariables(template.variables, request.env);
    refused.push(...leaks);
    if (refused.length > 0)
        return { refused };
    const domains = request.domain || undefined;
    const writes = [
        {
            kind: 'update',
            changes: {
                description: request.pending,
                is_auto_deploy_enabled: false,
                git_commit_sha: request.commit,
                ...Object.fromEntries(WEBHOOK_SECRETS.map(field => [field, ''])),
                ...resets(template.cloned ? template.fields : NEW_APPLICATION_FIELDS)
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
        target: { domains, branch: request.branch, commit: request.commit, variables },
        writes,
        warnings,
        secrets
    };
}
/**
 * Every trace of production the review app still carries, named without values: a host of the
 * template's in its domains or labels (a server without a proxy drops a new domain and still
 * answers 200), a mount path of the template's, a variable that hands over a value of
 * production's, what could build it behind the run's back, a pin to any commit but the pull
 * request's head. Empty when it is the pull request's own.
 */
function tracesOfProduction(template, app, { env = [], commit }) {
    const traces = [];
    const hosts = templateHosts(template);
    const named = (where, text, note = '') => {
        const found = [...hosts].filter(host => hostsOf(text ?? '').has(host));
        if (found.length > 0)
            traces.push(`its ${where} still name ${found.join(', ')}${note}`);
    };
    named('domains', app.fqdn, ' (a server without a proxy keeps the old domain)');
    named('compose domains', Object.values(app.composeDomains).join(','));
    if (app.customLabels === undefined) {
        traces.push('its labels are hidden from this token (`read:sensitive`), so they were not checked');
    }
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
    const production = productionHolds(template.variables);
    const given = new Set(env.map(variable => variable.key));
    // `env` gives its own values, but a reference in one resolves in production's environment too.
    const equal = app.variables
        .filter(v => typeof v.key === 'string' && typeof v.value === 'string' && v.value !== '')
        .filter(v => given.has(v.key)
        ? refersToShared(v.value) && productionIn(v, production) !== undefined
        : production.byKey.get(v.key) === v.value || productionIn(v, production) !== undefined)
        .map(v => v.key);
    const fromEnv = [...new Set(equal.filter(key => given.has(key)))];
    const copied = [...new Set(equal.filter(key => !given.has(key)))];
    if (copied.length > 0)
        traces.push(`its variable(s) ${copied.join(', ')} hold production's values`);
    if (fromEnv.length > 0) {
        traces.push(`\`env\` gives ${fromEnv.join(', ')} a shared variable that resolves to production's value in production's environment, or that Coolify did not resolve: give the review app's own value`);
    }
    if (app.autoDeploy === true)
        traces.push('auto-deploy is still on');
    if (app.gitCommitSha !== commit) {
        traces.push(!app.gitCommitSha || app.gitCommitSha === 'HEAD'
            ? `it is not pinned to the pull request's head commit ${commit} (it would build whatever its branch holds)`
            : `it is pinned to commit ${app.gitCommitSha}, not the pull request's head commit ${commit}`);
    }
    if (app.webhookSecrets.length > 0)
        traces.push(`it keeps ${app.webhookSecrets.join(', ')}`);
    return [...traces, ...fieldTraces(app.fields)];
}
/**
 * A review app found again, as the table finds it: what to put back before it is deployed, with
 * the pull request's head commit pinned, or why it may not be (one made by an older version of
 * the action, or changed in Coolify since).
 */
function reviewAppRepairs(fields, name, commit) {
    const changes = resets(fields);
    if (fields.git_commit_sha !== commit)
        changes.git_commit_sha = commit;
    return { changes, refused: fieldRefusals(fields, `review app ${name}`) };
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
        changes[patchField(key, rule)] = rule.to;
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
 * Coolify 4.3.11 never sets GIT_LFS_SKIP_SMUDGE and its helper image installs git-lfs for the
 * whole system, so the clone fetches the LFS objects the branch points to whatever "Git LFS" says
 * ("off" only leaves out `git lfs pull`, Application.php 1455-1456; coollabsio/coolify#10360).
 * Until it skips them, a template with Git LFS on, whose repository uses LFS, is refused.
 */
function lfsRefusals(fields) {
    // Coolify shows an application's settings from 4.2.0 (ApplicationsController's show, with
    // `settings`); before, its PATCH also refuses them, so LFS could be neither checked nor reset.
    if (!('settings.is_git_lfs_enabled' in fields)) {
        return [
            'Coolify does not show the template\'s Git settings (`settings`, shown by Coolify 4.2.0 and later), so whether "Git LFS" is on cannot be checked, nor can the review app\'s be turned off: review apps need Coolify 4.2 or newer'
        ];
    }
    if (fields['settings.is_git_lfs_enabled'] !== true)
        return [];
    return [
        'the template has "Git LFS" on (`settings.is_git_lfs_enabled`): Coolify fetches the LFS objects a branch points to with the template\'s credentials, and does not skip them even with the setting off (coollabsio/coolify#10360), so pull request code could ship any LFS object those credentials reach in its image — turn "Git LFS" off in the template\'s Git settings only if review apps may see every LFS object its credentials can fetch (see docs/review-apps.md), else give review apps a template of a repository without LFS'
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
function productionHolds(variables) {
    const holds = { byKey: new Map(), values: new Map() };
    for (const v of variables) {
        if (v?.is_preview === true || typeof v?.key !== 'string')
            continue;
        holds.byKey.set(v.key, listedValue(v));
        const seen = resolvedValue(v) ?? (refersToShared(v.value ?? '') ? undefined : v.value);
        if (typeof seen === 'string' && seen !== '') {
            holds.values.set(seen, [...(holds.values.get(seen) ?? []), v.key]);
        }
    }
    return holds;
}
/**
 * A variable's value as Coolify lists it: null once emptied (its middleware turns an empty string
 * into null before the variable is saved, app/Http/Kernel.php 61), left out where the token may not
 * see it (removeSensitiveData in ApplicationsController.php). Undefined when not shown.
 */
function listedValue(v) {
    if (v.value === null)
        return '';
    return typeof v.value === 'string' ? v.value : undefined;
}
/** `{{team.X}}`, `{{project.X}}`, `{{environment.X}}`, `{{server.X}}`: a shared variable. */
const SHARED_REFERENCE = /\{\{\s*(team|project|environment|server)\.[^}]*\}\}/i;
function refersToShared(value) {
    return SHARED_REFERENCE.test(value);
}
/**
 * A variable's value as a deployment sees it, from `real_value` (shown with read:sensitive):
 * Coolify resolves its shared variables, then leaves a JSON object or array as it is, puts a
 * literal or multiline one in single quotes, and escapes any other (EnvironmentVariable.php
 * 203-216, escapeEnvVariables in bootstrap/helpers/docker.php 1516-1522). Undefined when not shown.
 */
function resolvedValue(v) {
    const real = v.real_value;
    if (typeof real !== 'string')
        return undefined;
    if (/^[[{]/.test(real) && isJson(real))
        return real;
    if (v.is_literal === true || v.is_multiline === true) {
        return real.length >= 2 && real.startsWith("'") && real.endsWith("'") ? real.slice(1, -1) : real;
    }
    return real.replace(/\\([\\rt0"'])/g, (_, char) => UNESCAPED[char]);
}
const UNESCAPED = {
    '\\': '\\',
    r: '\r',
    t: '\t',
    '0': '\0',
    '"': '"',
    "'": "'"
};
function isJson(text) {
    try {
        JSON.parse(text);
        return true;
    }
    catch {
        return false;
    }
}
/**
 * What each run of references in a value resolved to: the written value's other text stays as it
 * is, so it frames them. Undefined when the resolved value does not fit the written one.
 */
function substitutions(written, resolved) {
    const runs = new RegExp(`(?:${SHARED_REFERENCE.source})+`, 'gi');
    const parts = [];
    let last = 0;
    const text = written.trim();
    for (const match of text.matchAll(runs)) {
        parts.push(escapeRegExp(text.slice(last, match.index)));
        last = match.index + match[0].length;
    }
    parts.push(escapeRegExp(text.slice(last)));
    return new RegExp(`^${parts.join('(.*)')}$`, 's').exec(resolved)?.slice(1);
}
function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
/**
 * Why a variable would hand pull request code a value production holds, under any of its keys,
 * or undefined: a reference (whole or within the value) that resolves to one — Coolify resolves
 * it in the template's environment, which the review app shares — or that Coolify did not show
 * resolved; a value of its own equal to one of production's that gives something away (a value
 * such as `true` or `3000` is anyone's). Keys only, never values.
 */
function productionIn(v, production) {
    const written = v.value ?? '';
    const keys = (value) => production.values.get(value) ?? [];
    const named = (found) => `production's ${[...new Set(found)].join(', ')}`;
    if (!refersToShared(written)) {
        const found = keys(written);
        return found.length > 0 && worthMasking(written)
            ? `holds the value of ${named(found)}`
            : undefined;
    }
    const resolved = resolvedValue(v);
    if (resolved === undefined)
        return 'refers to a shared variable that Coolify did not show resolved';
    const parts = substitutions(written, resolved);
    if (!parts)
        return 'refers to a shared variable whose resolved value could not be read apart';
    // What a reference brought in: equal to a value production holds, or holding one that gives
    // something away (two references side by side resolve into one part). The text written around
    // them is the preview's own.
    const within = (part) => [...production.values]
        .filter(([value]) => worthMasking(value) && part.includes(value))
        .flatMap(([, held]) => held);
    const found = [...keys(resolved), ...parts.flatMap(part => [...keys(part), ...within(part)])];
    return found.length > 0
        ? `refers to a shared variable that resolves to the value of ${named(found)}`
        : undefined;
}
/**
 * The review app's variables: the template's preview variables that are not production's (Coolify
 * gives every production variable a preview twin with the same value, left out), with their flags,
 * then `env` over them; and, naming their keys, the preview variables that would hand over a value
 * production holds, which refuse the template. Locked ("shown once") values are shown to no token,
 * so they cannot be copied.
 */
function reviewVariables(listed, env) {
    const production = productionHolds(listed);
    const given = new Set((env ?? []).map(variable => variable.key));
    const byKey = new Map();
    const twins = [];
    const locked = [];
    const unverifiable = [];
    const leaks = [];
    for (const v of listed) {
        if (v?.is_preview !== true || typeof v.key !== 'string' || given.has(v.key))
            continue;
        const key = v.key;
        if (v.is_shown_once === true) {
            locked.push(key);
            continue;
        }
        const value = listedValue(v);
        // Hidden although not locked: the token cannot read sensitive values (checked before).
        if (value === undefined)
            continue;
        if (production.byKey.has(key) && production.byKey.get(key) === undefined) {
            unverifiable.push(key);
            continue;
        }
        if (production.byKey.get(key) === value) {
            twins.push(key);
            continue;
        }
        const leak = productionIn(v, production);
        if (leak) {
            leaks.push(`the template's preview variable ${key} ${leak}: pull request code would read it — give the preview variable a value of its own in Coolify, or give the review app its own with \`env\``);
            continue;
        }
        const flags = Object.fromEntries(FLAGS.filter(flag => typeof v[flag] === 'boolean').map(flag => [flag, v[flag]]));
        byKey.set(key, { key, value, ...flags });
    }
    for (const variable of env ?? [])
        byKey.set(variable.key, variable);
    const warnings = [];
    const own = "give the review app its own with `env`, or a value of its own in the template's preview variable in Coolify";
    if (twins.length > 0) {
        warnings.push(`Not copied to the review app: ${twins.join(', ')} — the template's preview value is production's (Coolify gives each preview variable production's value until it is edited); ${own}.`);
    }
    if (unverifiable.length > 0) {
        warnings.push(`Not copied to the review app: ${unverifiable.join(', ')} — production's value is locked, so the preview value cannot be shown to differ from it; ${own}.`);
    }
    if (locked.length > 0) {
        warnings.push(`Not copied to the review app: ${locked.join(', ')} — locked ("shown once") in the template, so Coolify shows the value to no token; give it with \`env\`.`);
    }
    const copied = [...byKey.values()];
    const secrets = copied.filter(v => !given.has(v.key)).map(v => v.value);
    return { variables: copied, warnings, secrets, leaks };
}

;// CONCATENATED MODULE: ./src/review-app/setup.ts
/**
 * Setting a review app up: the plan (plan.ts) applied to one just made or left half set up, read
 * back and checked for traces of production; and a found one put back to the table.
 */









/**
 * A review app found again is held to the table like a new one: what reaches production is put
 * back before it is deployed (one made by an older version of the action may carry it), the pull
 * request's head commit is pinned, and one the table refuses is not deployed at all.
 */
async function repairFound(client, uuid, name, commit, signal, say) {
    const { changes, refused } = reviewAppRepairs(flattenApplication(await client.getApplication(uuid, signal)), name, commit);
    if (refused.length > 0) {
        throw new ActionError(`Review app ${uuid} was not deployed: ${refused.join('; ')}. Delete it (\`delete-preview\`) and run again.`);
    }
    const { git_commit_sha: pin, ...reset } = changes;
    const fields = Object.keys(reset);
    if (fields.length === 0 && !pin)
        return;
    await client.updateApplication(uuid, changes, signal);
    if (pin)
        say.note(`Review app ${name} (${uuid}): pinned to commit ${pin}`);
    if (fields.length > 0) {
        say.note(`Review app ${name} (${uuid}): put back ${fields.join(', ')} to Coolify's default`);
    }
}
/**
 * Where a new review app would go and the writes that make it, refused before anything is made as
 * the run refuses it: what a run does next, and what a dry run says.
 */
async function planNew(client, config, template, names, { branch, commit }, signal) {
    const destination = await cloneDestination(client, config, template.uuid, signal);
    const facts = await templateFacts(client, template, destination !== undefined, signal);
    const plan = planReviewApp(facts, {
        branch,
        commit,
        domain: config.reviewDomain,
        env: config.env,
        pending: names.pending,
        marker: names.marker
    });
    if (plan.refused) {
        throw new ActionError(`No review app for pull request ${config.pr}: ${plan.refused.join('; ')}.`);
    }
    return { destination, facts, plan };
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
    if (variables.some(v => v?.is_shown_once !== true && (!v || listedValue(v) === undefined))) {
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
    // Absent, not null, when hidden: labels the read-back cannot see would pass it unchecked.
    if (template.custom_labels === undefined)
        throw new ActionError(HIDDEN_LABELS);
    const storages = await client.listApplicationStorages(template.uuid, signal);
    return {
        ...base,
        composeDomains: composeDomainsOf(template.docker_compose_domains),
        customLabels: labelsOf(template.custom_labels),
        persistentStorages: listOf(storages?.persistent_storages),
        fileStorages: listOf(storages?.file_storages)
    };
}
const HIDDEN_LABELS = "Coolify hides the template's labels from this token: a review app's labels are checked for production's hosts before it is deployed, which needs the `read:sensitive` ability.";
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
/** custom_labels are stored base64-encoded; undefined when Coolify hid them, '' when none. */
function labelsOf(stored) {
    if (stored === undefined)
        return undefined;
    if (typeof stored !== 'string')
        return '';
    return Buffer.from(stored, 'base64').toString('utf8');
}
/**
 * Applies the plan to an application this run made, or finishes one a run left half set up.
 * Anything failing deletes it; when even that fails, the error names it. Returns the uuid of
 * another run's review app when that one was finished meanwhile (this run's is then deleted).
 */
async function setUp(client, uuid, setup, signal, undo, say, state) {
    const { plan, names } = setup;
    const [first, ...rest] = plan.writes;
    const made = !state.marked;
    try {
        await applyWrite(client, uuid, first, setup, signal);
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
            await applyWrite(client, uuid, write, setup, signal);
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
async function applyWrite(client, uuid, write, { facts, plan, env }, signal) {
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
            const traces = tracesOfProduction(facts, await readBack(client, uuid, signal), {
                env,
                commit: plan.target.commit
            });
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
 * repository (Coolify builds branches of the template's repository only), its branch and its
 * head commit.
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
    if (!config.deletePreview)
        headCommit(event);
}
/**
 * The commit the review app builds, pinned: the pull request's head as the event names it
 * (`pull_request.head.sha`; on GitLab the merge request's source branch), never what its branch
 * holds when the build starts — a push after the run was approved is not built by it.
 */
function headCommit(event) {
    const sha = event.headSha;
    if (!sha || !/^[0-9a-f]{40}$/i.test(sha)) {
        throw new ActionError("Input `review-app` builds the pull request's head commit, which the event does not name as a full SHA: run it on `pull_request_target` (or `pull_request`).");
    }
    return sha.toLowerCase();
}
/**
 * The review app for the pull request: found again by its marker, or made from the
 * template — cloned where Coolify can (4.3+), else created from the template's repository — and
 * set up by the plan (plan.ts) before anything deploys it, then read back: any trace of
 * production left on it deletes it and fails the step. A run that made one while another run made
 * one too keeps the older and deletes its own.
 */
async function openReviewApp(client, config, event, signal, undo, say) {
    const { template, names } = await templateOf(client, config, event.repository, signal);
    const branch = config.gitBranch ?? event.headRef;
    const commit = headCommit(event);
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
    const reviewApp = (uuid, setUp, name = names.name) => ({
        uuid,
        name,
        config: target(uuid, setUp)
    });
    // One another run finished, or one found again: held to the table, pinned to this run's commit.
    const adopted = async (uuid, name = names.name) => {
        await repairFound(client, uuid, name, commit, signal, say);
        return reviewApp(uuid, false, name);
    };
    const listed = await client.listApplications(signal);
    const found = reviewAppsIn(listed, names);
    const ready = found.find(app => app.description === names.marker);
    if (ready) {
        // Its own name: the template may have been renamed since it was made.
        const name = ready.name ?? names.name;
        say.note(`Review app ${name} (${ready.uuid}) found: deploying pull request ${config.pr} to it`);
        return adopted(ready.uuid, name);
    }
    const { destination, facts, plan } = await planNew(client, config, template, names, { branch, commit }, signal);
    for (const warning of plan.warnings)
        say.warn(warning);
    // As the variables of debug logs: "true" or "3000" would star out the whole log.
    for (const line of plan.secrets.flatMap(secret => secret.split('\n'))) {
        if (worthMasking(line))
            mask(line);
    }
    const setup = { facts, plan, env: config.env, names };
    const unfinished = found[0];
    if (unfinished) {
        // Another run may be setting it up right now: give it a short while, then finish what it left.
        const name = unfinished.name ?? names.name;
        if ((await waitForOtherRun(client, unfinished.uuid, names, signal)) === 'ready') {
            return adopted(unfinished.uuid, name);
        }
        say.note(`Review app ${name} (${unfinished.uuid}) was left half set up: finishing it`);
        await setUp(client, unfinished.uuid, setup, signal, undo, say, { marked: true });
        return reviewApp(unfinished.uuid, true, name);
    }
    const before = new Set(namesakesIn(listed, names.name));
    const warning = destination?.sharesServer ? SHARED_SERVER_WARNING(names.name) : undefined;
    if (warning)
        say.warn(warning);
    const uuid = destination
        ? await cloneTemplate(client, template, destination.uuid, names, before, signal, undo, say)
        : await createFromRepository(client, config, template, { names, branch }, signal);
    say.note(`Review app ${names.name} (${uuid}) made from the template for pull request ${config.pr}`);
    const other = await setUp(client, uuid, setup, signal, undo, say, { marked: false });
    if (other)
        return { ...(await adopted(other)), warning };
    const kept = await keepOlder(client, names, uuid, signal, undo, say);
    return { ...(kept === uuid ? reviewApp(kept, true) : await adopted(kept)), warning };
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

;// CONCATENATED MODULE: ./src/review-app/forecast.ts







/** Says what the run would do for the review app; throws what the run would refuse. */
async function forecastReviewApp(client, config, event, signal, say) {
    const { template, names } = await templateOf(client, config, event.repository, signal);
    const branch = config.gitBranch ?? event.headRef;
    const commit = headCommit(event);
    const found = reviewAppsIn(await client.listApplications(signal), names);
    const ready = found.find(app => app.description === names.marker);
    if (ready) {
        const name = ready.name ?? names.name;
        const app = await client.getApplication(ready.uuid, signal);
        const { changes, refused } = reviewAppRepairs(flattenApplication(app), name, commit);
        if (refused.length > 0) {
            throw new ActionError(`Review app ${ready.uuid} would not be deployed: ${refused.join('; ')}. Delete it (\`delete-preview\`) and run again.`);
        }
        const reset = Object.keys(changes).filter(field => field !== 'git_commit_sha');
        say.note(`Review app ${name} (${ready.uuid}) exists: it would be deployed with branch ${branch}, commit ${commit} pinned${reset.length ? `, after putting back ${reset.join(', ')}` : ''}`);
        return;
    }
    const { destination, facts, plan } = await planNew(client, config, template, names, { branch, commit }, signal);
    const made = destination
        ? `cloned from ${facts.name} (${template.uuid}) into destination ${destination.uuid}${destination.sharesServer ? ', on a server production runs on' : destination.sharesServer === false ? ', on another server' : ''}`
        : `created from the repository of ${facts.name} (${template.uuid}) in project ${config.reviewPlacement.project ?? '?'}, server ${config.reviewPlacement.server ?? '?'} (Coolify before 4.3 cannot clone)`;
    const unfinished = found[0];
    say.note(unfinished
        ? `Review app ${unfinished.name ?? names.name} (${unfinished.uuid}) was left half set up: it would be finished as planned below`
        : `Review app ${names.name} would be ${made}`);
    for (const line of describeWrites(plan.writes, plan.target.domains))
        say.note(`  ${line}`);
    for (const warning of plan.warnings)
        say.warn(warning);
    if (!unfinished && destination?.sharesServer)
        say.warn(SHARED_SERVER_WARNING(names.name));
}
/** The plan's writes in words: field and variable names, never values. */
function describeWrites(writes, domains) {
    const [first] = writes;
    const reset = first?.kind === 'update'
        ? Object.keys(first.changes).filter(field => field !== 'description' && field !== 'git_commit_sha')
        : [];
    const pin = first?.kind === 'update' ? first.changes.git_commit_sha : undefined;
    const variables = writes.flatMap(write => write.kind === 'set-variables' ? write.variables.map(variable => variable.key) : []);
    const branch = writes.flatMap(write => write.kind === 'update' && write.changes.git_branch ? [write.changes.git_branch] : []);
    return [
        `reset: ${reset.join(', ')}`,
        `commit: ${pin} pinned (the pull request's head)`,
        `domains: ${domains ?? 'none'}`,
        "removed: the template's scheduled tasks, tags and variables",
        `variables: ${variables.length ? variables.join(', ') : 'none'}`,
        `branch: ${branch.join(', ')}`,
        'then read back and checked for any trace of production before its first deploy'
    ];
}

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
    /** Aborted once every waiter of the round waiting for its turn has left. */
    #abandoned;
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
            // A signal waited with read after read (a health check's) must not gather a listener each.
            const done = () => leave?.removeEventListener('abort', onLeave);
            const waiter = {
                resolve: result => (done(), resolve(result)),
                reject: error => (done(), reject(error)),
                leave
            };
            const onLeave = () => {
                reject(this.#left(leave));
                this.#forget(key, waiter);
            };
            leave?.addEventListener('abort', onLeave, { once: true });
            this.#waiting.set(key, [...(this.#waiting.get(key) ?? []), waiter]);
            if (this.#waiting.size >= this.options.expected())
                this.#allWaiting?.();
            if (!this.#reading)
                void this.#readAll(signal);
        });
    }
    /**
     * A waiter that left before its round's read: the round no longer waits for it, and once
     * nobody is left, the wait for the turn ends too (a turn can be a window's end, a minute away).
     */
    #forget(key, waiter) {
        const waiters = this.#waiting.get(key)?.filter(other => other !== waiter);
        if (!waiters)
            return;
        if (waiters.length > 0)
            this.#waiting.set(key, waiters);
        else
            this.#waiting.delete(key);
        if (this.#waiting.size === 0)
            this.#abandoned?.abort();
    }
    /** Reads for everyone waiting once the turn comes, then again for any who came meanwhile. */
    async #readAll(signal) {
        this.#reading = true;
        const abandoned = (this.#abandoned = new AbortController());
        const wait = linked([signal, abandoned.signal]);
        let turned = true;
        let failure;
        try {
            await this.#gather(wait.signal);
            await this.options.turn(wait.signal);
        }
        catch (error) {
            turned = false;
            failure = error;
        }
        wait.release();
        this.#abandoned = undefined;
        if (!turned) {
            this.#reading = false;
            // Everyone left: nobody to answer, unless someone came since.
            if (abandoned.signal.aborted && !signal.aborted) {
                if (this.#waiting.size > 0)
                    void this.#readAll(signal);
                return;
            }
            void this.#settle(this.#take(), () => Promise.reject(failure));
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
    const abandoned = sharedController();
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

;// CONCATENATED MODULE: ./src/follow/application-reads.ts



/**
 * The status reads the health checks ahead may still need, whatever their number: one read serves
 * every check due at its turn, and one more when Coolify had not refreshed the status yet.
 */
const STATUS_READS_HELD = 2;
/**
 * The applications in Coolify, for all rollouts: their names and URLs, and their status for the
 * health checks. The reads due at the same turn, whatever they are for, share one request — of
 * the application alone, or the list when several wait — so thirty applications finishing
 * together cost one request, not thirty. The read goes on under the step's signal while anyone
 * waits for it: a reader whose own time ran out stops waiting, the others do not. A status read
 * confirms that a finished deployment's application is up, which ends its rollout: it may spend
 * what the window holds back from polls, and the window holds back what the checks ahead need.
 */
class ApplicationReads {
    client;
    signal;
    #batch;
    /** Status reads waiting: while any does, the next read can end a rollout. */
    #confirming = 0;
    constructor(client, 
    /** Waits for the next turn among the step's reads of Coolify; `final` ones may spend more. */
    turn, 
    /** The step's lifetime: the shared reads, and the waits for their turns, are made under it. */
    signal, 
    /** How many applications may still be read: their health checks are under way or ahead. */
    expected = () => 1, 
    /** Longest a turn waits for the others to be due too. */
    gatherMs = 0) {
        this.client = client;
        this.signal = signal;
        client.holdBack(() => Math.min(expected(), STATUS_READS_HELD));
        this.#batch = new Batch({
            turn: signal => turn(signal, this.#confirming > 0),
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
        this.#confirming++;
        let read;
        try {
            read = await this.read(appUuid, signal);
        }
        finally {
            this.#confirming--;
        }
        const { app, answeredAt } = read;
        return {
            status: typeof app.status === 'string' ? app.status : undefined,
            refreshedAt: timeOf(app.last_online_at),
            answeredAt,
            appUrl: typeof app.fqdn === 'string' ? (app.fqdn.split(',')[0]?.trim() ?? '') : ''
        };
    }
    /** One read for all `uuids`; an application the list lacks is not found. */
    async readApps(uuids, signal) {
        const kind = { final: this.#confirming > 0 };
        const { apps, date } = await readDated(this.client, uuids, signal, kind);
        return uuid => {
            const app = apps.find(item => item?.uuid === uuid) ?? (uuids.length === 1 ? apps[0] : undefined);
            if (!app)
                throw notListed(uuid);
            return { app, answeredAt: date };
        };
    }
}
/** Applications of Coolify, with the time it answered: one read for one, the list for several. */
async function readDated(client, uuids, signal, kind) {
    if (uuids.length === 1) {
        const { body, date } = await client.getApplicationDated(uuids[0], signal, kind);
        return { apps: [body], date };
    }
    const { body, date } = await client.listApplicationsDated(signal, kind);
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
    #stopGraceSeconds;
    #link;
    #commit;
    #endedAt;
    /** Coolify's own times, on Coolify's clock: the duration when both are known. */
    #createdAt;
    #finishedAt;
    #seenRunningAt;
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
    /**
     * When Coolify's job wrote its end (`finished_at`), on Coolify's clock; undefined until then.
     * The status turns final earlier: the post-deployment command runs in between.
     */
    get finishedAt() {
        return this.#finishedAt;
    }
    /**
     * When a read last showed it running, on Coolify's clock (its `Date`, else its row's
     * `updated_at`): its status turned final later, and the status check Coolify runs then (before
     * `finished_at`) comes after this.
     */
    get seenRunningAt() {
        return this.#seenRunningAt;
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
     * How long Coolify's job gives the application's container to stop, in seconds, when its
     * record's settings said (the detail of one application shows them, the list does not).
     */
    get stopGraceSeconds() {
        return this.#stopGraceSeconds;
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
        if (app.settings)
            this.#stopGraceSeconds = stopGraceSeconds(app.settings);
    }
    /**
     * Takes in a read of the deployment, answered at `answeredAt` on Coolify's clock when known;
     * returns true when Coolify's status word changed.
     */
    observe(detail, instanceUrl, answeredAt) {
        if (detail.application_name)
            this.#name = detail.application_name;
        if (detail.commit)
            this.#commit = detail.commit;
        this.locate(detail, instanceUrl);
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
            // The answer's `Date`, or at the least when the row was last written (undated reads).
            else
                this.#seenRunningAt = answeredAt ?? timeOf(detail.updated_at) ?? this.#seenRunningAt;
        }
        return previous !== this.#coolifyStatus;
    }
    /** Takes the link to its page in Coolify from a read: `deployment_url`, a path on the instance. */
    locate(detail, instanceUrl) {
        if (detail.deployment_url)
            this.#link = new URL(detail.deployment_url, `${instanceUrl}/`).href;
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
    /** Passes, with a warning for the summary: each one said is kept. */
    doubt(warning) {
        this.#warning = this.#warning ? `${this.#warning} ${warning}` : warning;
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
/** Coolify's bounds for an application's stop grace period, and what it uses outside them. */
const GRACE_MIN_SECONDS = 1;
const GRACE_MAX_SECONDS = 3600;
const GRACE_DEFAULT_SECONDS = 30;
/**
 * The seconds Coolify's job waits for a container it stops in a deployment: the setting when it
 * lies within Coolify's bounds, else its default (ApplicationSetting.php 124-144; constants.php
 * 38-40).
 */
function stopGraceSeconds(settings) {
    const set = settings.stop_grace_period;
    return typeof set === 'number' && set >= GRACE_MIN_SECONDS && set <= GRACE_MAX_SECONDS
        ? set
        : GRACE_DEFAULT_SECONDS;
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
    /**
     * Where the last whole 4.x log read ended (its closing `]`), and the text just before it, in the
     * log as it stood: escaped in Coolify's answer, or not.
     */
    arrayEnd = -1;
    probe = '';
    escaped = false;
    /** The last entry taken, to recognise the same log grown when it must be parsed whole. */
    lastEntry;
    /**
     * Every entry taken (`keyOf`), so that none is taken twice when the log is reordered: in an
     * array, which holds numbers unboxed, and in a set made from it only once a log comes reordered:
     * a log that only grows never pays for a set's inserts.
     */
    takenKeys = [];
    takenSet;
    /** The command whose `$ command` line was printed last, with its batch. */
    lastCommand;
    lastBatch = 0;
    /** Text of an unterminated last line, held until it ends or the deployment does. */
    pending = '';
    sawClosing = false;
    constructor(showHidden) {
        this.showHidden = showHidden;
    }
    /** Grows whenever a read brings anything new, hidden entries and unfinished lines included. */
    get progress() {
        return this.takenKeys.length + this.consumed + this.pending.length;
    }
    /** Coolify's last entry has been read: no more lines will come. */
    get closed() {
        return this.sawClosing;
    }
    /**
     * The new visible lines in `logs`, the deployment's whole log as read now: as text, or as it
     * stands escaped in Coolify's answer, where only what it grew by is unescaped.
     */
    next(logs) {
        if (!logs)
            return [];
        const log = typeof logs === 'string' ? new PlainLog(logs) : logs;
        if (!log.isArray()) {
            // Not as json_encode writes an array: read as text, whatever it turns out to be.
            const text = log.text();
            if (text === undefined)
                return [];
            if (log instanceof EscapedLog)
                return this.next(text);
            return this.nextText(text);
        }
        let fresh = this.appended(log);
        let grown = fresh !== undefined;
        if (!fresh) {
            const whole = log.text();
            const entries = whole === undefined ? undefined : parseEntries(whole);
            // An array that does not parse was cut off on the way: wait for a whole one.
            if (!entries)
                return [];
            grown =
                entries.length >= this.consumed &&
                    (this.consumed === 0 || sameEntry(entries[this.consumed - 1], this.lastEntry));
            // Not the log seen before plus entries at its end (reordered, trimmed, a stale copy): take
            // every entry not taken yet, wherever it stands.
            fresh = grown ? entries.slice(this.consumed) : entries.filter(entry => !this.taken(entry));
        }
        this.take(fresh, grown);
        // Only a log holding all that was taken may serve as the start of the next one, read as the
        // same kind of text: where its `]` stood, and the text before it.
        this.escaped = log instanceof EscapedLog;
        this.arrayEnd = grown ? log.answer.lastIndexOf(']', log.end - 1) - log.start : -1;
        const at = log.start + this.arrayEnd;
        this.probe = grown ? copyOf(log.answer.slice(Math.max(log.start, at - PROBE_LENGTH), at)) : '';
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
    appended(log) {
        const end = this.arrayEnd;
        const at = log.start + end;
        if (end < 0 ||
            this.escaped !== log instanceof EscapedLog ||
            log.length <= end ||
            !log.answer.startsWith(this.probe, at - this.probe.length)) {
            return undefined;
        }
        if (log.length === end + 1 && log.answer.charCodeAt(at) === CLOSE)
            return [];
        if (log.answer.charCodeAt(at) !== COMMA)
            return undefined;
        const rest = log.text(at + 1);
        // Joined with `+`: V8 parses a template literal around a slice at half the speed.
        return rest === undefined ? undefined : parseEntries('[' + rest);
    }
    /**
     * Records new entries as taken. Those that extend the log seen so far also move its end, which
     * the next read is compared with; others (from a reordered log) do not.
     */
    take(fresh, grown) {
        for (let i = 0; i < fresh.length; i++) {
            const key = keyOf(fresh[i]);
            this.takenKeys.push(key);
            this.takenSet?.add(key);
        }
        if (!grown || fresh.length === 0)
            return;
        this.consumed += fresh.length;
        this.lastEntry = fresh[fresh.length - 1];
    }
    taken(entry) {
        this.takenSet ??= new Set(this.takenKeys);
        return this.takenSet.has(keyOf(entry));
    }
    /** The printed lines of new entries, in Coolify's `order`. */
    linesOf(fresh) {
        // New entries nearly always come in that order already; a stable sort keeps it otherwise.
        // Never by `batch`: the job's own lines carry 1, a command's output a counter that only grows.
        fresh.sort(byOrder);
        const lines = [];
        // Runs for every entry of a log: an indexed loop keeps the code V8 optimizes for it small,
        // and the rarer paths are calls made every time, so that none lacks what V8 learned of it.
        for (let i = 0; i < fresh.length; i++) {
            const entry = fresh[i];
            const output = entry.output ?? '';
            this.sawClosing = this.sawClosing || CLOSING.test(output);
            const hidden = entry.hidden === true;
            if (hidden && !this.showHidden)
                continue;
            const command = this.commandLineOf(entry, hidden);
            if (command)
                lines.push(command);
            const kind = entryKind(entry.type);
            // Hidden entries are the job's own commands, some carrying every variable encoded.
            const text = hidden ? redactPayloads(output) : output;
            if (!text.includes('\n'))
                lines.push(lineOf(kind, text, hidden));
            else {
                const parts = text.split('\n');
                for (let k = 0; k < parts.length; k++)
                    lines.push(lineOf(kind, parts[k], hidden));
            }
        }
        return lines;
    }
    /** The `$ command` line due before an entry: its command's, when not the one printed last. */
    commandLineOf(entry, hidden) {
        if (!entry.command)
            return undefined;
        const batch = entry.batch ?? 0;
        if (entry.command === this.lastCommand && batch === this.lastBatch)
            return undefined;
        this.lastCommand = entry.command;
        this.lastBatch = batch;
        // A command shown in the log can carry a payload too: redacted, and kept to the log.
        const text = redactPayloads(entry.command);
        return lineOf('command', text, hidden || text !== entry.command);
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
/** A log given as text, read as an escaped one is. */
class PlainLog {
    answer;
    start = 0;
    constructor(answer) {
        this.answer = answer;
    }
    get end() {
        return this.answer.length;
    }
    get length() {
        return this.answer.length;
    }
    isArray() {
        return JSON_ARRAY.test(this.answer);
    }
    text(from = 0) {
        return from === 0 ? this.answer : this.answer.slice(from);
    }
}
function parseEntries(logs) {
    try {
        const parsed = JSON.parse(logs);
        return Array.isArray(parsed) ? parsed : undefined;
    }
    catch {
        return undefined;
    }
}
/**
 * The text as a string of its own. V8 makes a slice of a string point into it, and a probe that
 * did would keep the whole log it was cut from alive until the next read.
 */
function copyOf(text) {
    return Buffer.from(text, 'utf8').toString('utf8');
}
/** A printed line, without the `\r` of a CRLF ending. */
function lineOf(kind, text, hidden) {
    return hidden ? { kind, text: withoutCr(text), hidden } : { kind, text: withoutCr(text) };
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
function byOrder(a, b) {
    return (a.order ?? 0) - (b.order ?? 0);
}
function sameEntry(a, b) {
    return (a !== undefined &&
        b !== undefined &&
        a.batch === b.batch &&
        a.order === b.order &&
        a.output === b.output &&
        a.command === b.command);
}
/**
 * An entry by its `order` and its output, in one number. Coolify numbers entries over the whole
 * log (the first may have none: 0), but a cancel through the API writes its entries into one copy
 * of the row while the job saves its output from another (DeployController.php 278-287,
 * ExecuteRemoteCommand.php 180-206): the job's next entries then replace the cancel's under the
 * same numbers.
 */
function keyOf(entry) {
    return (entry.order ?? 0) * 2 ** 32 + hashOf(entry.output ?? '');
}
/** FNV-1a over UTF-16 code units: a short stand-in for the text of an entry. */
function hashOf(text) {
    let hash = 0x811c9dc5;
    for (let i = 0; i < text.length; i++)
        hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
    return hash >>> 0;
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

;// CONCATENATED MODULE: ./src/follow/deployment-reads.ts


/** How the reads of running deployments go: as polls. */
const POLL = { final: false };
/**
 * Reads of running deployments, for all rollouts: the reads due at the same turn share one
 * request — a deployment's own read when it is alone, else GET /deployments, every running
 * deployment of the team in one answer — so thirty deployments cost one read a turn, not thirty.
 * A deployment missing from that list has ended: its follower reads it once by uuid, for its final
 * status and last lines. A server without the list, or a token it refuses, is read by uuid. These
 * reads are polls, whatever has ended: they never spend what the window holds back from them, so
 * that other tools on the token keep their share while deployments run on.
 */
class DeploymentReads {
    client;
    turn;
    #batch;
    /** False once the list was refused: reads by uuid from then on. */
    #listed = true;
    constructor(client, 
    /** Waits for the next turn among the step's reads of Coolify, as a poll. */
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
        const { body, wireBytes, log } = await this.client.getDeploymentDated(uuid, signal, POLL);
        return { detail: body, wireBytes, log };
    }
    /**
     * A read of a deployment that has ended (it left the running list, or its closing lines are
     * due): it ends the step's work on it, so it goes as soon as the window has any request left,
     * the share kept for other tools included, rather than waiting for a turn.
     */
    final(uuid, signal) {
        return this.client.getDeploymentDated(uuid, signal, { final: true });
    }
    /** The deployment as the next turn's reads find it, while it runs. */
    running(uuid, signal) {
        if (!this.#listed)
            return this.one(uuid, signal);
        return this.#batch.wait(uuid, signal);
    }
    /** One read for all `uuids`: its own read for one, else the list, else each by uuid. */
    async readRunning(uuids, signal) {
        if (uuids.length === 1) {
            const read = await this.client.getDeploymentDated(uuids[0], signal, POLL);
            return () => ({
                detail: read.body,
                answeredAt: read.date,
                wireBytes: read.wireBytes,
                log: read.log
            });
        }
        const listed = this.#listed ? await this.list(signal) : undefined;
        if (!listed) {
            // Each its own read, each in its turn, as the budget allows.
            const reads = await Promise.all(uuids.map(uuid => this.one(uuid, signal)));
            return uuid => reads[uuids.indexOf(uuid)];
        }
        const { rows, wireBytes } = listed;
        const logged = (row) => row && typeof row.logs === 'string' ? row.logs.length : 0;
        const total = rows.reduce((sum, row) => sum + logged(row), 0);
        return uuid => {
            const detail = rows.find(row => (row?.deployment_uuid ?? row?.uuid) === uuid);
            if (!detail)
                return { left: true };
            // Its log's part of the answer: what reading it again costs, whoever else it carries.
            const share = total > 0 && wireBytes !== undefined ? logged(detail) / total : 0;
            return { detail, wireBytes: Math.round(share * (wireBytes ?? 0)) };
        };
    }
    /** The running deployments; undefined when the server refuses the list or has none to give. */
    async list(signal) {
        try {
            const { body: rows, wireBytes } = await this.client.runningDeploymentsDated(signal, POLL);
            if (rows)
                return { rows, wireBytes };
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
/**
 * `findStarted`'s row, and whether it was created before the trigger: then another's, joined. The
 * slack that finds rows is no proof of ownership: a row from a second before the trigger's own
 * (Coolify stores whole seconds) is another's, which a cancel must leave alone.
 */
async function findStartedRow(client, appUuid, mark, signal) {
    const joined = (item) => {
        const created = timeOf(item.created_at);
        return created !== undefined && created < mark.at - (mark.at % 1000);
    };
    // One queued since the trigger is its own only where the API could have queued it: not a push
    // webhook's, nor one Coolify queued itself (another server's, once a deployment finished).
    const row = (await history_history(client, appUuid, signal)).find(item => isFrom(item, mark) && (joined(item) || queuedBy(item, mark)));
    if (!row)
        return undefined;
    return { deployment_uuid: row.deployment_uuid, joined: joined(row) };
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
 * client's gate holds part of it back from polls, and never lets a request past it). While the
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
    /**
     * Resolves at the next turn. A `final` read, whose answer can end a following, may spend what
     * the window holds back from polls.
     */
    turn(signal, final = false) {
        return sleep(this.take(final), signal);
    }
    /** Takes the next turn; how long until it comes. */
    take(final = false) {
        const window = this.budget();
        if (!window)
            return 0;
        const spare = window.spare + (final ? window.held : 0);
        if (spare <= 0)
            return window.endsInMs;
        const due = Math.ceil(Math.min(window.endsInMs, PLAN_AHEAD_MS) * this.cadence());
        if (spare > due)
            return 0;
        const now = this.now();
        const at = Math.max(now, this.last + Math.ceil(window.endsInMs / (spare + 1)));
        this.last = at;
        return at - now;
    }
}

;// CONCATENATED MODULE: ./src/follow/follower.ts











/** First reads come quickly, so a deployment that fails at once is reported at once. */
const FIRST_DELAY_MS = 500;
/**
 * Coolify most often writes its closing entry 0.4–1.2 s after `finished_at`. A row that cannot
 * tell (a server without the column) ends once the log has been quiet for longer than that past
 * the final status. Reads wait for the quiet, at least this pause apart.
 */
const CLOSING_PAUSE_MS = 500;
const CLOSING_QUIET_MS = 1500;
/**
 * Once `finished_at` is written, the closing entry follows (ApplicationDeploymentJob.php 389-411)
 * on every server since 4.0.0-beta.443. The configuration is written in between, its remote
 * commands writing no entry but moving `updated_at` as each starts (ExecuteRemoteCommand.php
 * 221-223), the file storages not even that. On a remote server that takes seconds; while SSH is
 * in trouble, before a command starts, a check of the shared connection (5 s), a wait for its lock
 * (10 s) and a new connection (10 s) may pass without a write (config/constants.php 73-78), and a
 * failed attempt writes an entry, then sleeps 2 s, then 4 s (SshRetryable.php 59-68). The wait
 * ends without it once the row has been still this long: a job killed in its finally.
 */
const PROMISED_QUIET_MS = 45_000;
/**
 * The first release whose finally always writes the closing entry: from 4.0.0-beta.407 it did
 * unless writing the configuration failed, which then ended the finally (a cancel, say).
 */
const CLOSING_ENTRY_SINCE = '4.0.0-beta.443';
/** Longest a read for a closing entry waits for Coolify to say its version. */
const VERSION_WAIT_MS = 3000;
/** A timer may fire a millisecond early by `Date.now()`: a pause for a quiet ends this much later. */
const TIMER_SLACK_MS = 5;
/** Coolify's `Date` and `updated_at` keep whole seconds: a quiet read from them may be this short. */
const SECOND_MS = 1000;
/**
 * A deployment that left the list of running ones ended within the last turn: read a moment later,
 * its closing entry is most often there already, and one read gives the status and the last lines.
 */
const LEFT_PAUSE_MS = 1000;
/** What a stop or removal of the container's own takes beyond its wait: over SSH, a few seconds. */
const STOP_MARGIN_MS = 5000;
/**
 * How long a failed or cancelled row may stay quiet without `finished_at` before its job is taken
 * for gone: the job's own failure path removes the new container, writing nothing until it ends,
 * before its finally (ApplicationDeploymentJob.php 3991-4018), for up to 60 s and, when the
 * removal ignores that end, 10 s more (`timeout -k 10s 60s`, docker.php 267-272), while a job that
 * failed outside it never writes one (a server not functional, 313-317; Coolify restarted under
 * it, Init.php 94-100). Longer when the job's last line says it is at something longer.
 */
const FAILED_JOB_QUIET_MS = 70_000 + STOP_MARGIN_MS;
/**
 * The job's last line before it stops a container, giving it the application's stop grace period
 * (30 s unless set, up to an hour): the new one found unhealthy, or the old ones
 * (ApplicationDeploymentJob.php 3971-3984, 4021-4047).
 */
const STOPPING = new Set([
    'New container is not healthy, rolling back to the old container.',
    'Removing old containers.'
]);
/**
 * The job's line before its post-deployment command, which runs after a failed rollout too,
 * hidden and silent until it ends, for up to Coolify's command timeout, an hour
 * (ApplicationDeploymentJob.php 526-557, 4822-4866; config/constants.php 80).
 */
const POST_DEPLOYMENT_RUNS = 'Executing post-deployment command (see debug log for output).';
/** Coolify's own line when the post-deployment command failed (ApplicationDeploymentJob.php 4863). */
const POST_DEPLOYMENT_FAILED = 'Post-deployment command failed.';
/**
 * Coolify has no log offset: every read of a deployment carries its whole log. Reads of one are
 * spaced so that they carry about this many bytes a millisecond on the wire (a quarter of a MB a
 * second), however big the log and whether compressed or not, and never further apart than
 * LONGEST_PACE_MS, so that no line waits longer than that to be printed.
 */
const WIRE_BYTES_PER_MS = 250;
const LONGEST_PACE_MS = 10_000;
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
    /**
     * One of the deployments followed together ended: those still running with it may be ending
     * too. Cleared once none runs, so that a later one (a rollback) is followed at its own pace.
     */
    someEnded = false;
    /**
     * How long each deployment's log had been quiet when Coolify last answered, at the least, on
     * its clock: its answer's `Date` less its `updated_at`, which moves with every entry written.
     */
    quietAtAnswer = new Map();
    /** When Coolify last wrote each deployment's row (`updated_at`), as its last answer told. */
    rowWrittenAt = new Map();
    /**
     * Whether Coolify's job has ended, as the last read told: `finished_at` written, still null
     * (the job writes on after the final status: the post-deployment command), or not told at all.
     */
    jobEnd = new Map();
    /** Deployments Coolify's job took, as a read showed: in progress, or with its worker. */
    jobTook = new Set();
    /** What the last read of each deployment took on the wire: its own part of a shared one. */
    carried = new Map();
    pacer;
    reads;
    logsHidden = false;
    /** Whether this Coolify's job writes a closing entry, asked once a closing entry is late. */
    closingEntries;
    /** Each application's stop grace period (s), read once a failed job of it was long quiet. */
    graces = new Map();
    constructor(client, options) {
        this.client = client;
        this.options = options;
        this.pacer = new ReadPacer(() => client.readBudget(), () => this.reads.perTurn(this.running.size) / this.interval());
        this.reads = new DeploymentReads(client, signal => this.pacer.turn(signal), () => this.listed(), Math.min(GATHER_MS, options.pollIntervalMs));
        // What is still to come to end what is followed: each deployment's read by uuid, and the read
        // of the list that shows it left.
        client.holdBack(() => this.running.size + Math.min(this.listed(), 1));
    }
    /**
     * Time between reads of a running deployment: `poll-interval`, or half of it (not under the
     * first delay) once one of the deployments followed with it ended: those started together end
     * together, and one read of the list serves them all, so each end is seen sooner for little.
     */
    interval() {
        const interval = this.options.pollIntervalMs;
        if (!this.someEnded)
            return interval;
        return Math.min(interval, Math.max(FIRST_DELAY_MS, interval / 2));
    }
    /**
     * How long the reads of `deployment` wait for what its last answer carried on the wire: a
     * small log is read at `poll-interval`, a big one no more than WIRE_BYTES_PER_MS allows.
     */
    paceOf(deployment) {
        return Math.min(LONGEST_PACE_MS, (this.carried.get(deployment) ?? 0) / WIRE_BYTES_PER_MS);
    }
    /** Deployments followed through the list of running ones. */
    listed() {
        let listed = 0;
        for (const deployment of this.running)
            if (!this.unlisted.has(deployment))
                listed++;
        return listed;
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
            this.quietAtAnswer.delete(deployment);
            this.rowWrittenAt.delete(deployment);
            this.jobEnd.delete(deployment);
            this.jobTook.delete(deployment);
            this.carried.delete(deployment);
            if (this.running.size === 0)
                this.someEnded = false;
            else if (deployment.ended)
                this.someEnded = true;
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
                const due = Math.min(this.interval(), FIRST_DELAY_MS * 2 ** reads);
                await sleep(Math.max(due, this.paceOf(deployment)), signal);
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
                this.take(deployment, { detail: result.detail });
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
     * After the final status Coolify's job goes on: the post-deployment command (for minutes, maybe),
     * then its finally writes `finished_at`, the configuration and the closing entry. Reads go on
     * until the closing entry is read: at `poll-interval` while `finished_at` is null, then once the
     * log may have been quiet long enough: 1.5 s, or, with `finished_at` written, the row dated and
     * a Coolify that writes closing entries (asked once), PROMISED_QUIET_MS. A row without
     * `finished_at` (a server before 4.0.0-beta.381) or one whose closing entry never comes ends
     * after that quiet, and so does the wait when `signal` ends it; unless `finished_at` was read,
     * the log says that the job's end was not seen. How long the log
     * has been quiet is what the reads showed: from the answer that brought its last entries,
     * `finished_at` or a later `updated_at` to a later read that brought nothing, or by Coolify's own
     * clock when its answer tells.
     */
    async readClosingLines(deployment, signal) {
        if (!this.options.logs || this.logsHidden)
            return;
        const cursor = this.cursorOf(deployment);
        let quietSince = Date.now();
        let askedAt = quietSince;
        let awaited = false;
        while (!cursor.closed) {
            const before = cursor.progress;
            const endBefore = this.jobEnd.get(deployment);
            const writtenBefore = this.rowWrittenAt.get(deployment);
            const told = this.quietAtAnswer.get(deployment);
            // The quiet the answers showed: a read asked for after `quietSince` that brought nothing new,
            // or Coolify's own clock. Time since the last answer is not counted: on a busy runner the
            // closing entry may have come meanwhile, unread.
            const seen = Math.max(askedAt - quietSince, told?.ms ?? 0);
            const pending = endBefore === 'pending' && !(await this.jobGone(deployment, seen, signal));
            let answeredAt;
            try {
                if (pending) {
                    await sleep(Math.max(this.options.pollIntervalMs, this.paceOf(deployment)), signal);
                    askedAt = Date.now();
                    answeredAt = await this.readOne(deployment, signal);
                }
                else {
                    // With `finished_at` written and the closing entry late, a Coolify whose job writes
                    // one is waited for until the row has been still for long, since the configuration is
                    // written without an entry. A server that does not say when it wrote the row tells
                    // nothing.
                    let needed = CLOSING_QUIET_MS;
                    const dated = endBefore === 'written' && this.rowWrittenAt.has(deployment);
                    if (dated && seen >= CLOSING_QUIET_MS)
                        awaited ||= await this.writesClosingEntry(signal);
                    if (awaited)
                        needed = PROMISED_QUIET_MS;
                    if (seen >= needed)
                        break;
                    // The next read once the quiet it can show is long enough, or, for a closing entry
                    // late to come, twice what it is: a few reads, whatever `poll-interval`.
                    const next = Math.min(needed, Math.max(CLOSING_QUIET_MS, 2 * seen));
                    const due = Math.min(quietSince + next, told ? told.at - told.ms + next : Infinity);
                    await sleep(Math.max(CLOSING_PAUSE_MS, due - Date.now() + TIMER_SLACK_MS), signal);
                    askedAt = Date.now();
                    answeredAt = await this.readFinal(deployment, signal);
                }
            }
            catch {
                break;
            }
            // The quiet starts again with what a read brought: new entries, `finished_at` written after
            // a silent post-deployment command (the closing entry follows it), or the row written since
            // (a remote command of the job's moves `updated_at` as it starts, ExecuteRemoteCommand.php
            // 221-223).
            const ended = endBefore !== 'written' && this.jobEnd.get(deployment) === 'written';
            const written = (this.rowWrittenAt.get(deployment) ?? 0) > (writtenBefore ?? Infinity);
            if (cursor.progress !== before || ended || written)
                askedAt = quietSince = answeredAt;
        }
        // A cancelled job fails to stop its build container after the closing entry, and says so.
        if (cursor.closed && deployment.status === 'cancelled') {
            await sleep(CLOSING_PAUSE_MS, signal)
                .then(() => this.readFinal(deployment, signal))
                .catch(() => undefined);
        }
        // `finished_at` is written after everything but the configuration and the closing entry.
        const end = this.jobEnd.get(deployment);
        if (!cursor.closed && (end !== 'written' || awaited)) {
            this.options.say.note(`${deployment.name}: the end of Coolify's deployment job could not be seen (no closing entry${end === 'pending' ? ' and no `finished_at`' : ''}); lines it writes after this are not printed.`);
        }
    }
    /**
     * Whether the job of a failed or cancelled row, quiet without `finished_at` for `seen` ms, is
     * gone: quiet for longer than what its last line says it is at can take — its post-deployment
     * command, which only the deadline bounds; a stop of a container, for its grace period; anything
     * else, FAILED_JOB_QUIET_MS.
     */
    async jobGone(deployment, seen, signal) {
        if (!['failed', 'cancelled'].includes(deployment.status) || seen < FAILED_JOB_QUIET_MS)
            return false;
        // The job's own last line: not a cancel's, nor the `$ command` a cancel in the UI shows.
        const last = deployment.tail.findLast(line => line.kind !== 'command' && !writtenByCancel(line.text))
            ?.text ?? '';
        if (last === POST_DEPLOYMENT_RUNS)
            return false;
        if (!STOPPING.has(last))
            return true;
        const grace = await this.stopGraceOf(deployment, signal);
        return seen >= (grace ?? 0) * 1000 + STOP_MARGIN_MS;
    }
    /**
     * The stop grace period of the deployment's application, in seconds: from its record when read
     * before, else read now, once (a list of applications does not show it); undefined when Coolify
     * does not tell.
     */
    stopGraceOf(deployment, signal) {
        if (deployment.stopGraceSeconds !== undefined || deployment.kind !== 'application') {
            return Promise.resolve(deployment.stopGraceSeconds);
        }
        let grace = this.graces.get(deployment.appUuid);
        if (!grace) {
            grace = this.client.getApplicationDated(deployment.appUuid, signal, { final: true }).then(({ body }) => (body?.settings ? stopGraceSeconds(body.settings) : undefined), () => undefined);
            this.graces.set(deployment.appUuid, grace);
        }
        return grace;
    }
    /**
     * Whether this Coolify's job writes a closing entry: unless its version says it is too old.
     * Asked once, apart from any deployment's deadline (the client's end ends the request); each
     * read waits for the answer until VERSION_WAIT_MS or `signal`, and takes the entry as coming.
     */
    async writesClosingEntry(signal) {
        if (signal.aborted)
            return true;
        this.closingEntries ??= this.client.version(new AbortController().signal, { final: true }).then(version => releaseAtLeast(version, CLOSING_ENTRY_SINCE) ?? true, () => true);
        const waited = new AbortController();
        const stop = () => waited.abort();
        signal.addEventListener('abort', stop, { once: true });
        try {
            const unanswered = sleep(VERSION_WAIT_MS, waited.signal).then(() => true, () => true);
            return await Promise.race([this.closingEntries, unanswered]);
        }
        finally {
            waited.abort();
            signal.removeEventListener('abort', stop);
        }
    }
    /**
     * Resolves when the next read of Coolify may go out: every rollout's reads (deployments, health)
     * take turns within one budget. A `final` read, whose answer can end a following, may spend what
     * the window holds back from polls.
     */
    turn(signal, final = false) {
        return this.pacer.turn(signal, final);
    }
    /**
     * Reads the deployment once, in its turn, with the others due then: status, links and new log
     * lines. One that left the list of running ones is read by uuid, a moment later.
     */
    async read(deployment, signal) {
        if (!this.unlisted.has(deployment)) {
            const read = await this.reads.running(deployment.uuid, signal);
            if ('detail' in read) {
                this.take(deployment, read);
                return;
            }
            this.unlisted.add(deployment);
            this.someEnded = true;
            await sleep(LEFT_PAUSE_MS, signal);
            await this.readFinal(deployment, signal);
            return;
        }
        await this.readOne(deployment, signal);
    }
    /** Reads the deployment by uuid, in its turn; resolves with when its answer came. */
    async readOne(deployment, signal) {
        const read = await this.reads.one(deployment.uuid, signal);
        const answeredAt = Date.now();
        this.take(deployment, read);
        return answeredAt;
    }
    /** Reads an ended deployment by uuid, as soon as the window allows; resolves with when its answer came. */
    async readFinal(deployment, signal) {
        const { body, date, wireBytes, log } = await this.reads.final(deployment.uuid, signal);
        const answeredAt = Date.now();
        this.take(deployment, { detail: body, answeredAt: date, wireBytes, log });
        return answeredAt;
    }
    /**
     * Takes in a read of the deployment: its row, answered at `answeredAt` on Coolify's clock when
     * known, what the answer took on the wire, and its log as it stands in the answer when 4.x's.
     */
    take(deployment, { detail, answeredAt, wireBytes, log }) {
        if (wireBytes !== undefined)
            this.carried.set(deployment, wireBytes);
        // A read that does not tell leaves nothing known: an earlier answer's quiet would outlive
        // entries written since.
        const written = timeOf(detail.updated_at);
        if (written === undefined)
            this.rowWrittenAt.delete(deployment);
        else
            this.rowWrittenAt.set(deployment, written);
        if (answeredAt !== undefined && written !== undefined) {
            const ms = answeredAt - written - SECOND_MS;
            this.quietAtAnswer.set(deployment, { ms, at: Date.now() });
        }
        else {
            this.quietAtAnswer.delete(deployment);
        }
        // Taken by the job: seen in progress, or its worker written, which a row cancelled in the
        // queue never gets, however quickly the cancel followed.
        if (statusFromCoolify(detail.status) === 'in_progress' || detail.horizon_job_worker) {
            this.jobTook.add(deployment);
        }
        this.jobEnd.set(deployment, jobEndOf(detail, this.jobTook.has(deployment)));
        const changed = deployment.observe(detail, this.options.instanceUrl, answeredAt);
        if (changed && !deployment.ended)
            this.announce(deployment, detail);
        this.printLogs(deployment, detail, log);
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
    printLogs(deployment, detail, log) {
        if (!this.options.logs)
            return;
        if (!('logs' in detail)) {
            if (!this.logsHidden) {
                this.logsHidden = true;
                this.options.say.warn(`${LOGS_HIDDEN_HINT} The deployment is followed all the same.`);
            }
            return;
        }
        const lines = this.cursorOf(deployment).next(log ?? detail.logs);
        deployment.remember(lines);
        this.options.sink.lines(deployment, lines);
        // Coolify's status stays as it was; the failure is the user's to see.
        if (lines.some(line => !line.hidden && line.text === POST_DEPLOYMENT_FAILED)) {
            this.options.say.warn(`${deployment.name}: Coolify ran the post-deployment command after the deployment ${deployment.status === 'finished' ? 'finished' : 'ended'}, and it failed; its output is in the log above.`);
        }
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
/**
 * A line a cancel writes into the job's log while the job runs on until its next command: from
 * the API, the UI, MCP, or a pull request closed (DeployController.php 278-288;
 * DeploymentNavbar.php 119-143; CancelDeployment.php 75-84; CleanupPreviewDeployment.php 112;
 * DeleteResourceJob.php 197-209). Each says it cancels, or that it stopped the build container.
 */
function writtenByCancel(text) {
    return /\bcancel/i.test(text) || text === 'Deployment container stopped.';
}
/**
 * What a row tells of the job's end. The job's own final statuses promise a `finished_at` to come,
 * and so does a cancel of a job `took` (seen in progress or with its worker): it fails at its next
 * command and runs its finally (ExecuteRemoteCommand.php 92-97; ApplicationDeploymentJob.php
 * 380-392). A deployment cancelled before the job took it never gets one (303-306).
 */
function jobEndOf(detail, took) {
    if (!('finished_at' in detail))
        return 'untold';
    if (detail.finished_at)
        return 'written';
    const status = statusFromCoolify(detail.status);
    const promised = status === 'finished' || status === 'failed' || (status === 'cancelled' && took);
    return promised ? 'pending' : 'untold';
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
                if (typeof value !== 'string' || !worthMasking(value))
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
async function probe(url, signal, 
/** `ca-certificate`: an application on the same private PKI as Coolify is trusted alike. */
ca) {
    // Through the runner's proxy, as a browser on it would reach the application.
    const target = new URL(url);
    let agent;
    try {
        agent = new HttpAgent(target, { timeoutMs: PROBE_TIMEOUT_MS, ca: ca ? [ca] : undefined });
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
/** How long a refresh within the second a change ended waits for a newer one before it counts. */
const AMBIGUOUS_WAIT_MS = 3000;
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
    /** The second the change was last seen under way: a refresh within it is ambiguous. */
    #ambiguousFrom;
    /**
     * `endedAt`: when the change was last seen under way, on Coolify's clock, when that is known.
     * A refresh in a later second is proof. One within that same second may have come before the
     * end or after it: it counts once Coolify has answered for `AMBIGUOUS_WAIT_MS` past that second
     * without a newer one — a scheduled check that saw the old container is followed by the check
     * Coolify runs as a deployment finishes, while on a Sentinel server that check, often within
     * the same second, is the only refresh an unchanged status gets.
     */
    constructor(endedAt) {
        this.#since = endedAt === undefined ? undefined : nextSecond(endedAt);
        this.#ambiguousFrom = endedAt === undefined ? undefined : wholeSecond(endedAt);
    }
    counts(look) {
        this.#since ??=
            look.answeredAt !== undefined
                ? nextSecond(look.answeredAt)
                : (look.refreshedAt ?? Number.NEGATIVE_INFINITY) + 1;
        if (look.refreshedAt === undefined)
            return false;
        if (look.refreshedAt >= this.#since)
            return true;
        return (this.#ambiguousFrom !== undefined &&
            look.refreshedAt >= this.#ambiguousFrom &&
            look.answeredAt !== undefined &&
            look.answeredAt >= this.#since + AMBIGUOUS_WAIT_MS);
    }
}
/** Coolify's timestamps and `Date` keep whole seconds: the start of the second `ms` falls in. */
function wholeSecond(ms) {
    return Math.floor(ms / DATE_RESOLUTION_MS) * DATE_RESOLUTION_MS;
}
/** The start of the second after the one `ms` falls in: a refresh from then on is later. */
function nextSecond(ms) {
    return wholeSecond(ms) + DATE_RESOLUTION_MS;
}

;// CONCATENATED MODULE: ./src/health/health.ts




/** Lines of the runtime log read for an application that did not come up. */
const RUNTIME_LINES = 100;
/** Shortest wait before reading again a status Coolify has not refreshed yet. */
const STALE_PAUSE_MIN_MS = 500;
/**
 * After `finished`: waits, until `signal` aborts, for Coolify to report the application running
 * and, with `health-url`, for that URL to answer 2xx or 3xx. Undefined when there is nothing to
 * check (a preview without a whole URL). An application that is up at once costs one read of it
 * (and one request to the URL).
 */
async function checkHealth(deployment, options, signal) {
    const preview = options.pr !== undefined;
    let url = healthUrlOf(options.healthUrl, deployment.appUrl, preview);
    if (preview && !url)
        return undefined;
    // A path on a URL the step has not read yet: the status reads carry it.
    const path = options.healthUrl && !url ? options.healthUrl : undefined;
    let last;
    const freshness = new Freshness(options.since);
    for (;;) {
        const found = await look(deployment.appUuid, url, path, !preview, options, freshness, signal);
        url = found.url ?? url;
        // A look cut off by the end of the check says less than the one before it.
        if (signal.aborted && last)
            break;
        // An unknown look (unread, or not refreshed) never replaces a known one.
        if (!last || !isUnknown(found.health) || isUnknown(last))
            last = found.health;
        if (found.health.up || signal.aborted)
            break;
        try {
            await sleep(pauseAfter(found.health, options.pollIntervalMs), signal);
        }
        catch {
            break;
        }
    }
    return last;
}
/**
 * Until the next look: `poll-interval`, or half of it while Coolify has not refreshed the status
 * since the deployment ended — its status check follows the end within seconds, and one read
 * serves every check due at its turn.
 */
function pauseAfter(found, pollIntervalMs) {
    if (!isUnknown(found))
        return pollIntervalMs;
    return Math.min(pollIntervalMs, Math.max(STALE_PAUSE_MIN_MS, pollIntervalMs / 2));
}
function isUnknown(health) {
    return !health.up && health.unknown;
}
/**
 * One look at the application: its status in Coolify, then its URL — `path` on the URL that
 * status read gives, when the step had none. A status Coolify has not refreshed since the
 * deployment ended may be the old container's: it decides nothing.
 */
async function look(appUuid, known, path, checkStatus, { readStatus, caCertificate }, freshness, signal) {
    let unread;
    let url = known;
    if (checkStatus) {
        try {
            const found = await readStatus(appUuid, signal);
            if (!url && path && found.appUrl !== undefined) {
                if (!found.appUrl) {
                    const problem = `\`health-url\` ${shownUrl(path)} is a path, but the application has no URL in Coolify`;
                    return { health: { up: false, problem, unknown: false } };
                }
                url = healthUrlOf(path, found.appUrl, false);
            }
            const status = (found.status ?? 'unknown').slice(0, 40);
            // Without a refresh time (servers before 4.x), the status is taken as read.
            const fresh = found.refreshedAt === undefined || freshness.counts(found);
            if (!fresh) {
                unread = `Coolify has not refreshed its status since the deployment ended (it still reports ${status})`;
            }
            else if (!isUp(status)) {
                return {
                    health: { up: false, problem: `Coolify reports it ${status}`, unknown: false },
                    url
                };
            }
        }
        catch (error) {
            unread = `could not read its status: ${describeError(error)}`;
        }
    }
    if (url) {
        const result = await probe(url, signal, caCertificate);
        if (!result.ok)
            return {
                health: { up: false, problem: `${shownUrl(url)} ${result.what}`, unknown: false },
                url
            };
    }
    else if (path) {
        // The URL to probe is not known yet: nothing is, whatever the status says.
        return {
            health: {
                up: false,
                problem: unread ?? `the application's URL could not be read`,
                unknown: true
            }
        };
    }
    // The URL answering says it is up, whatever Coolify could not tell.
    if (unread && !url)
        return { health: { up: false, problem: unread, unknown: true }, url };
    return { health: { up: true, url: url && shownUrl(url) }, url };
}
/**
 * A URL as lines and reports show it: without credentials, and with `?…` for its query, where a
 * key can be (`?token=…`) that the step never masked.
 */
function shownUrl(url) {
    return url
        .replace(/^([a-z][a-z\d+.-]*:\/\/)[^/?#@]*@/i, '$1')
        .replace(/[?#][\s\S]*$/, query => (query.startsWith('?') ? '?…' : ''));
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
            // A status read can say it is up, which ends the following.
            await options.turn(signal, true);
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
        const { body, date } = await client.getDatabase(resource.appUuid, signal, { final: true });
        const status = statusIn(body?.status, resource);
        return {
            status,
            refreshedAt: timeOf(body.last_online_at),
            answeredAt: date,
            starting: false,
            parts: []
        };
    }
    const { body, date } = await client.getService(resource.appUuid, signal, { final: true });
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

;// CONCATENATED MODULE: ./src/rollout/trigger.ts







const NOTHING_STARTED = 'Coolify started no deployment for it';
const LOST_TAG_ANSWER = "POST /deploy: Coolify's answer was lost after it queued the tag's applications; following the deployments found in their histories (the tag's services, if it has any, are not followed).";
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
 * run cancelled, the deadline reached) or killed, found in the applications' histories. Throws
 * when a history cannot be read.
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
/**
 * The applications a request for `tags` deploys, as Coolify lists them (`?tag=`, 4.0.0 and later;
 * older servers list every application, whose histories then show what the request started).
 */
async function taggedApplications(client, tags, signal) {
    const listed = await Promise.all(tags.map(tag => client.listApplications(signal, tag)));
    const uuids = listed.flatMap(list => listOf(list).map(app => app?.uuid));
    return [...new Set(uuids)].filter((uuid) => typeof uuid === 'string' && !!uuid);
}
/**
 * What a request whose answer was lost started: for a tag, in its applications' histories. A
 * forced tag deploy whose tag has no application to look at throws: Coolify's "already queued"
 * check is off when forcing, so nothing else would keep a repeat from deploying twice.
 */
async function lookUpLost(client, uuids, { tags, force, mark, signal }) {
    const apps = tags.length > 0 ? await taggedApplications(client, tags, signal) : uuids;
    if (tags.length > 0 && force && apps.length === 0)
        throw new Error('nothing to look at');
    return findTriggered(client, apps, mark, signal);
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
                // A history that cannot be read proves nothing: then stop rather than risk a second one.
                const found = await lookUpLost(client, uuids, options).catch(() => {
                    throw error.afterAttempts(attempt);
                });
                const entries = found.map(deployment => ({
                    resource_uuid: deployment.appUuid,
                    deployment_uuid: deployment.uuid,
                    message: deployment.startedElsewhere ? JOINED : 'Deployment queued.'
                }));
                if (options.tags.length > 0) {
                    // Coolify queues all of a tag's applications in the one request: one queued after the
                    // trigger shows that it arrived, and asking again would start them twice.
                    if (found.some(deployment => !deployment.startedElsewhere)) {
                        options.say.warn(LOST_TAG_ANSWER);
                        return { deployments: entries };
                    }
                }
                else {
                    recovered.push(...entries);
                    uuids = uuids.filter(uuid => !found.some(deployment => deployment.appUuid === uuid));
                    if (uuids.length === 0)
                        return { deployments: recovered };
                }
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
    return onePerResource(entries);
}
/**
 * An application carrying two of the tags is queued once: the later tag's entry says "already
 * queued", with a uuid Coolify never saved. The first entry of each resource stands for it.
 */
function onePerResource(entries) {
    return entries.filter((entry, index) => !entry.resource_uuid ||
        entries.findIndex(other => other.resource_uuid === entry.resource_uuid) === index);
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








/**
 * The full SHA of `commit`: Coolify fetches a pinned commit by name (with shallow clone, on by
 * default, `git fetch --depth=1 origin SHA`, which takes no abbreviation). An abbreviated one is
 * taken as the workflow's or the pull request's commit when it starts it, else refused.
 */
function fullCommit(commit, event) {
    if (commit.length >= 40)
        return commit;
    const known = [event.sha, event.headSha].find(sha => sha !== undefined && /^[0-9a-f]{40}$/i.test(sha) && sameCommit(sha, commit));
    if (known)
        return known.toLowerCase();
    throw new InputError(`Input \`commit\`: ${commit} is abbreviated, and Coolify fetches a pinned commit by its full SHA: give all 40 digits. A short one is taken only when it starts the commit the run is for (GITHUB_SHA or the pull request's head on GitHub, CI_COMMIT_SHA on GitLab).`);
}
/** History rows searched for what runs now. */
const versions_HISTORY_ROWS = 20;
/** How long to wait for a joined deployment's first log line, to learn which tag it runs. */
const STARTING_WAIT_MS = 10_000;
const STARTING_POLL_MS = 500;
/**
 * How long a pin found before this run's own is watched: another run pins right before its
 * trigger and takes its pin off as soon as Coolify queued the deployment, within seconds; one that
 * stays longer is the application's own.
 * Only a full queue keeps it on longer, by the queue's wait and the request that follows it: so
 * the longer watch is kept for a Coolify whose list of running deployments has some waiting (or
 * cannot be read).
 */
const PIN_WAIT_MS = 10_000;
const FOREIGN_PIN_WAIT_MS = QUEUE_FULL_WAIT_MS + 15_000;
const FOREIGN_PIN_POLL_MS = 1000;
const SYSTEM_CLOCK = { now: () => Date.now(), sleep: sleep };
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
            throw new InputError(`Input \`image-tag\` is for Docker-image applications; ${version.name} is built from git (build pack ${app.build_pack ?? 'unknown'}): use \`commit\` for it.`);
        }
        if (config.commit && version.dockerImage) {
            throw new InputError(`Input \`commit\` is for applications built from git; ${version.name} deploys a Docker image: use \`image-tag\` for it.`);
        }
        refuseOtherServers(config, version, app);
        if (config.rollbackOnFailure && !version.dockerImage) {
            const history = await client.listDeployments(uuid, versions_HISTORY_ROWS, signal);
            version.runningCommit = runningCommit(history?.deployments);
        }
        else if (config.rollbackOnFailure) {
            version.runningTag = await runningTag(client, version, signal);
        }
        versions.push(version);
    }
    return versions;
}
/**
 * A git application's deployments to its other servers are queued by Coolify once the main one
 * finishes, without a commit (ApplicationDeploymentJob `deploy_to_additional_destinations`, 4.3.11):
 * they build whatever is pinned then, the branch's head once this run's pin is put back. So neither
 * `commit` nor a rollback can reach them; refused before anything changes. Image tags stay set and
 * reach them, and previews are never deployed there.
 */
function refuseOtherServers(config, version, app) {
    const servers = Number(app?.additional_networks_count ?? 0);
    if (version.dockerImage || config.pr !== undefined || !(servers > 0))
        return;
    const input = config.commit ? 'commit' : config.rollbackOnFailure ? 'rollback-on-failure' : '';
    if (!input)
        return;
    throw new InputError(`Input \`${input}\` cannot reach all of ${version.name}: it also runs on ${servers} more server${servers === 1 ? '' : 's'}, which Coolify deploys after the main one without a commit, at the branch's head. Leave \`${input}\` out for this application.`);
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
/**
 * The tag the application's container runs now, read before the deploy: what a rollback goes
 * back to. The configured tag may be one that never ran, set by an earlier failed deploy.
 * Coolify's `current` comes from `docker inspect <uuid>`, which finds the container only with
 * "consistent container name" on (off by default): otherwise what ran is in the history.
 */
async function runningTag(client, version, signal) {
    try {
        const current = (await client.rollbackImages(version.appUuid, signal))?.current;
        if (current)
            return current;
    }
    catch (error) {
        if (isMissingRoute(error))
            return version.imageTag;
        throw error;
    }
    const history = await client.listDeployments(version.appUuid, versions_HISTORY_ROWS, signal);
    return lastRanTag(history?.deployments);
}
/** The tag the newest finished production deployment ran, as its row or log names it. */
function lastRanTag(items) {
    for (const item of listOf(items)) {
        if (Number(item?.pull_request_id ?? 0) !== 0)
            continue;
        if (!isFinished(statusFromCoolify(item.status)))
            continue;
        return ranImageTag(item);
    }
    return undefined;
}
/**
 * The commit of the newest finished production deployment; undefined when there is none, or when
 * Coolify recorded it abbreviated (a pin given so), which a rollback could not fetch.
 */
function runningCommit(items) {
    for (const item of listOf(items)) {
        if (Number(item?.pull_request_id ?? 0) !== 0)
            continue;
        if (!isFinished(statusFromCoolify(item.status)))
            continue;
        if (item.commit && item.commit !== 'HEAD') {
            return /^[0-9a-f]{40}([0-9a-f]{24})?$/i.test(item.commit) ? item.commit : undefined;
        }
    }
    return undefined;
}
/**
 * With `commit`, waits for every pin found on the applications to settle (see `standingPin`)
 * before this run writes any: a wait after a pin of its own would keep that pin on for as long,
 * and another run watching it would take it for the application's own.
 */
async function settlePins(client, config, versions, signal, say) {
    if (!config.commit)
        return;
    for (const version of versions ?? []) {
        version.pinned = await standingPin(client, version, signal, say);
    }
}
/**
 * Sets the version to deploy on every application: the image tag, or the commit pin (saved for
 * the post step before it is set, so that a killed run still undoes it), in front of what was
 * settled (`settlePins`). Called right before the trigger, so that a pin is on only until Coolify
 * answers it. Returns the pins to undo once the deploy is queued; on failure, undoes those
 * already set within `undo` and throws.
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
                const ours = { appUuid: version.appUuid, previous: version.pinned, commit: config.commit };
                // Counted before the PATCH: one cut off (SIGINT, SIGTERM) may still have been saved.
                pins.push(ours);
                await pin(client, ours, config.commit, { state, signal }).catch((error) => {
                    if (isRefused(error))
                        pins.pop();
                    throw error;
                });
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
async function standingPin(client, version, signal, say, clock = SYSTEM_CLOCK) {
    let pinned = version.pinned;
    if (pinned === 'HEAD')
        return pinned;
    const running = await client.runningDeployments(signal).catch(() => undefined);
    const waiting = !running || running.some(row => row?.status === 'queued');
    const watchMs = waiting ? FOREIGN_PIN_WAIT_MS : PIN_WAIT_MS;
    say.note(`${version.name}: pinned to ${pinned} already, maybe by another run; waiting up to ${watchMs / 1000} s to see whether it stays`);
    const until = clock.now() + watchMs;
    while (clock.now() < until) {
        await clock.sleep(FOREIGN_PIN_POLL_MS, signal);
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
/**
 * The application's own `git_commit_sha` now, read afresh and settled as `standingPin` does: what
 * a later pin (a rollback's, on a server before 4.3) puts back.
 */
async function ownPin(client, version, signal, say) {
    const pinned = (await client.getApplication(version.appUuid, signal))?.git_commit_sha || 'HEAD';
    return standingPin(client, { ...version, pinned }, signal, say);
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
        if (isRefused(error)) {
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
            const now = pin.commit && (await currentPin(client, pin, signal));
            if (now === pin.previous) {
                // A pin cut off before Coolify saved it: nothing to put back.
                state.update(pin.appUuid, { unpin: undefined, pinned: undefined });
                continue;
            }
            if (pin.commit && !(now === undefined || (now !== 'HEAD' && sameCommit(now, pin.commit)))) {
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
 * The application's `git_commit_sha` now, to tell whether it is still this run's pin. Coolify has
 * no compare-and-set, so this narrows the race rather than closing it; `concurrency:` closes it.
 * Undefined when unreadable: then the pin is taken as ours, a pin left on being the worse outcome.
 */
async function currentPin(client, pin, signal) {
    try {
        return (await client.getApplication(pin.appUuid, signal))?.git_commit_sha || 'HEAD';
    }
    catch {
        return undefined;
    }
}
/** Coolify answered and said no: nothing was saved. */
function isRefused(error) {
    return error instanceof CoolifyError && error.status !== undefined && error.status < 500;
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
/**
 * The tag named in a deployment's `Starting deployment of NAME:TAG` line, if its log shows it. A
 * digest, `NAME@sha256:HEX`, is the tag `sha256-HEX` as Coolify takes it in.
 */
function ranImageTag(detail) {
    const match = firstMatch(detail, STARTING);
    if (!match)
        return detail.docker_registry_image_tag || undefined;
    return match[2] ?? match[3]?.replace(':', '-') ?? 'latest';
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
 * Checks, once it finished, that the deployment ran the version asked for: one that ran another
 * tag or commit failed (its success is not this version's), or was superseded when another
 * deploy's version was set before it started (tag) or was queued (commit). The log is read once;
 * a deployment whose log this token cannot read is taken as asked.
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
        if (ran === asked.imageTag)
            return;
        if (await supersededBy(client, deployment.appUuid, ran, signal)) {
            // Another run set its tag before this deployment started: its success is that run's to
            // report, and a rollback would undo it.
            deployment.end('cancelled', `superseded: the application's image tag was set to ${ran} by another deploy before this one started, and it ran that`);
        }
        else {
            deployment.end('failed', `it ran image tag ${ran}, not ${asked.imageTag}`);
        }
    }
    else if (asked.commit) {
        // Another commit passing green would be a lie, as another image tag would.
        const built = builtCommit(detail);
        if (!built || sameCommit(built, asked.commit))
            return;
        // Coolify queues the application's git_commit_sha as it is at the trigger (applications.php
        // 16, 4.3.11) and builds the row's commit: a row of another commit means another deploy
        // replaced this run's pin before Coolify queued it. Its success is that deploy's to report,
        // and a rollback would undo it.
        if (detail.commit && !sameCommit(detail.commit, asked.commit)) {
            deployment.end('cancelled', `superseded: another deploy changed the application's commit before Coolify queued this one, which built ${built} (see the Importing line of its log)`);
        }
        else {
            deployment.end('failed', `Coolify built commit ${built}, not ${asked.commit} (see the Importing line of its log)`);
        }
    }
}
/** Whether the application is set to `ran` now: another deploy's tag, in place of this run's. */
async function supersededBy(client, appUuid, ran, signal) {
    try {
        return (await client.getApplication(appUuid, signal))?.docker_registry_image_tag === ran;
    }
    catch {
        return false;
    }
}

;// CONCATENATED MODULE: ./src/rollout/rollback.ts






/**
 * `rollback-on-failure`, for a deployment whose new version failed or is unhealthy: queues again
 * what ran before (noted in `version` before deploying). Git apps go back to the commit of their
 * last finished deployment, through Coolify's rollback route (4.3+) or, on older servers, a pin
 * of that commit for one deploy; Docker-image apps go back to the tag their container ran, never
 * to the one that just failed. Undefined, with
 * the reason recorded on `failed`, when there is nothing to go back to or it could not start.
 */
async function startRollback(client, failed, version, { state, signal, undo, say }) {
    const target = version.dockerImage ? version.runningTag : version.runningCommit;
    if (!target) {
        failed.rollback(false, 'nothing to roll back to: no earlier version is known');
        return undefined;
    }
    if (version.dockerImage && target === (failed.imageTag ?? version.imageTag)) {
        // Deploying the tag that just failed again is no rollback.
        failed.rollback(false, `nothing to roll back to: image tag ${target}, which failed, is what ran before`);
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
    // A server before 4.3 has no rollback route: pin the commit for one deploy, as `commit` does,
    // in front of the application's own commit: what was read before the deploy may have been
    // another run's pin. One of this run's own left on has its recorded value to go back to.
    const previous = state.get(appUuid).unpin ?? (await ownPin(client, version, signal, say));
    const pins = [{ appUuid, previous, commit: target }];
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








/** How long `wait: false` waits for the read that gives a deployment's link. */
const LOCATE_MS = 5000;
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
        const why = this.cancelledWhy();
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
    /**
     * Saves, for the post step, which of this run's deployments are still under way: never its
     * rollback, which a cancel leaves running.
     */
    save() {
        const { config, state } = this.step;
        if (!config.wait || !config.cancelOnAbort)
            return;
        // Only what this run started is the post step's to cancel.
        const running = [this.deployment]
            .filter(deployment => deployment.running && !deployment.startedElsewhere)
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
            return this.locate();
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
    /**
     * `wait: false`: one read of the deployment, for the link to its page (`deployment-url`): the
     * trigger's answer has only its uuid. The status stays as the trigger left it.
     */
    async locate() {
        const { client, config, budget, say } = this.step;
        const { uuid, name } = this.deployment;
        if (!uuid)
            return;
        const bounded = linked([budget.deploy()], LOCATE_MS);
        try {
            this.deployment.locate(await client.getDeployment(uuid, bounded.signal), config.instanceUrl);
        }
        catch (error) {
            say.warn(`${name}: could not read deployment ${uuid} for the link to its page, so \`deployment-url\` is empty: ${describeError(error)}`);
        }
        finally {
            bounded.release();
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
            caCertificate: config.caCertificate,
            pr: config.pr,
            readStatus: (appUuid, signal) => this.step.applications.status(appUuid, signal),
            // Coolify checks the containers once the status turns final, before the post-deployment
            // command and `finished_at`: a refresh counts from the last read that still showed it running.
            since: deployment.seenRunningAt ?? deployment.finishedAt
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
        const turn = (signal, final) => follower.turn(signal, final);
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
        if (!rollback.deployment.ended) {
            this.leaveRunning(failed, rollback);
            return;
        }
        await this.checkHealth(rollback.deployment, budget.health(signal));
        say.note(`${failed.name}: rollback ${rollback.deployment.status}`);
        judgeRollback(failed, rollback);
    }
    /**
     * A rollback still under way when the run was cancelled or its time ran out is never cancelled:
     * that would leave the application worse off. It goes on in Coolify, and the log, the summary,
     * the annotation and the GitHub deployment say so.
     */
    leaveRunning(failed, { deployment, what }) {
        const { budget, follower, say } = this.step;
        const cancelled = budget.cancelled.aborted;
        const why = cancelled ? this.cancelledWhy() : 'its time ran out';
        follower.leave(deployment, cancelled ? 'cancelled' : 'timeout', `${why}; it goes on in Coolify`);
        const note = `the rollback to ${what} (deployment ${deployment.uuid}) was started and is left running in Coolify, since ${why}: Coolify shows how it ends`;
        failed.rollback(false, note);
        say.note(`${failed.name}: ${note}`);
    }
    /** What cancelled the run, in the host's words, to follow a colon or a comma. */
    cancelledWhy() {
        const said = this.step.budget.why();
        return said.charAt(0).toLowerCase() + said.slice(1);
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
 * needs, and the wait for other runs' pins to come off. Nothing is deployed when any of it fails;
 * nothing is pinned yet.
 */
async function prepare(client, config, budget, event, say) {
    const follow = config.trigger ? undefined : commitToFollow(config, event);
    const signal = budget.deploy();
    await guardDebugLogs(client, config, signal, say);
    // `trigger: false` changes nothing: no settings, no pins.
    if (follow)
        return { config, follow };
    if (config.commit)
        config = { ...config, commit: fullCommit(config.commit, event) };
    await applySettings(client, config, signal, say);
    const versions = await readVersions(client, config, signal);
    await settlePins(client, config, versions, signal, say);
    return { config, versions };
}
/**
 * The versions set, then at once POST /deploy for every resource, and a Rollout for each resource
 * it touched. The trigger is saved before it goes out, and each rollout's deployment as soon as
 * it is known, so that the post step cancels only what this run started. The pins come off once
 * Coolify has queued the deployments, whatever happened: another run finds one on only between
 * the two.
 */
async function launch(step, prepared, follower) {
    const { client, config, budget, state, say } = step;
    const undo = () => budget.grace();
    const { versions } = prepared;
    const pins = await pinVersions(client, config, versions, state, budget.deploy(), undo, say);
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
        await restorePins(client, pins, state, budget.grace(), say);
    }
    // Under way or still to be found (`trigger: false`): each one's lines need its name.
    const reads = follower(deployments.filter(deployment => !deployment.ended).length > 1);
    let rollouts = [];
    const applications = new ApplicationReads(client, (signal, final) => reads.turn(signal, final), budget.lifetime(), () => rollouts.filter(rollout => rollout.checksHealth).length, Math.min(GATHER_MS, config.pollIntervalMs));
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
    rollouts = deployments.map(deployment => new Rollout(deployment, context, versions?.find(version => version.appUuid === deployment.appUuid)));
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
        const apps = config.tags.length
            ? taggedApplications(client, config.tags, recovery)
            : Promise.resolve(config.appUuids);
        deployments = await apps
            .then(uuids => findTriggered(client, uuids, mark, recovery))
            .catch(() => []);
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
        throw new InputError(config.pr === undefined
            ? 'Input `trigger: false` follows the commit the run is for, which the CI does not name: give `commit`.'
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

;// CONCATENATED MODULE: ./src/jobs/dry-run.ts






/**
 * `dry-run`, before the names are looked up: the address answers as Coolify's API, and which
 * version; the token is valid, of a team, and its user may use it (Coolify refuses a member's token
 * with more than `read` on every route, 403 "Missing required team role.").
 */
async function checkAccess(client, config, signal, say) {
    const version = await coolifyVersion(client, signal);
    const team = await teamName(client, signal);
    say.note(`${config.apiUrl} answers as Coolify's API${version ? ` (Coolify ${version})` : ' (no version route)'}; the token is valid${team ? ` and belongs to the team ${team}` : ''}`);
    return { version };
}
/**
 * `dry-run`, once the names resolved: the inputs fit the applications, the token holds the
 * abilities the run needs, and what the run would do — the deployments, the settings written, a
 * review app's plan — from reads only, not one request that changes Coolify. Throws what the run
 * would fail with.
 */
async function forecast(client, config, event, { version }, signal, say) {
    const versions = config.reviewApp || config.deletePreview
        ? undefined
        : await readVersions(client, config, signal);
    await checkAbilities(client, config, version, versions, signal, say);
    if (config.deletePreview) {
        say.note(config.reviewApp
            ? `Would delete pull request ${config.pr}'s review app of ${config.appUuids[0]}`
            : `Would remove the preview of pull request ${config.pr} of ${config.appUuids.join(', ')}`);
    }
    else if (config.reviewApp) {
        await forecastReviewApp(client, config, event, signal, say);
    }
    else {
        describeDeploy(config, event, versions, say);
    }
    say.note('Dry run: nothing was deployed or changed in Coolify.');
}
/** GET /version: "4.3.11"; undefined where Coolify has no such route. */
async function coolifyVersion(client, signal) {
    try {
        return (await client.version(signal)).replace(/^v/, '') || undefined;
    }
    catch (error) {
        if (isMissingRoute(error))
            return undefined;
        throw error;
    }
}
/** The token's team, by name; undefined before 4.3.0 (no GET /team). */
async function teamName(client, signal) {
    try {
        const team = await client.team(signal);
        return typeof team?.name === 'string' && team.name ? team.name : undefined;
    }
    catch (error) {
        if (isMissingRoute(error))
            return undefined;
        throw error;
    }
}
/** Coolify 4.`minor` or later, its betas included; false for a version that does not say. */
function atLeast(version, minor) {
    return version !== undefined && (releaseAtLeast(version, `4.${minor}.0-beta.0`) ?? false);
}
/**
 * The abilities the run needs beyond `read` (which every read so far proved), each with what needs
 * it: `deploy` to deploy and cancel, `write` for every setting the run writes.
 */
function abilitiesNeeded(config, version, versions) {
    const needed = [];
    if (!config.deletePreview && (config.trigger || config.cancelOnTimeout || config.cancelOnAbort)) {
        needed.push({ ability: 'deploy', why: config.trigger ? 'deploying' : 'cancelling' });
    }
    // Rolling back edits the application on image apps, and everywhere before 4.3's rollback route.
    const rollbackWrites = config.rollbackOnFailure && ((versions ?? []).some(v => v.dockerImage) || !atLeast(version, 3));
    const writing = [
        config.gitBranch && '`git-branch`',
        config.domains && '`domains`',
        config.env && '`env`',
        config.imageTag && config.pr === undefined && '`image-tag`',
        config.commit && config.trigger && '`commit`',
        config.deletePreview && '`delete-preview`',
        config.reviewApp && '`review-app`',
        rollbackWrites && '`rollback-on-failure`'
    ].filter(Boolean);
    if (writing.length > 0)
        needed.push({ ability: 'write', why: writing.join(', ') });
    return needed;
}
async function checkAbilities(client, config, version, versions, signal, say) {
    const needed = abilitiesNeeded(config, version, versions);
    // 4.2.0 and later answer a GET of a POST route with 405, after the ability check.
    if (!atLeast(version, 2)) {
        for (const { ability, why } of needed) {
            say.warn(`The token's \`${ability}\` ability (for ${why}) could not be checked: Coolify ${version ?? 'without a version route'} has no route that tells without acting (4.2.0 and later have).`);
        }
        return;
    }
    for (const { ability, why } of needed) {
        try {
            await client.checkAbility(ability, signal);
        }
        catch (error) {
            if (!isMissingAbility(error))
                throw error;
            throw error.withHint(`The token lacks the \`${ability}\` ability, which ${why} needs: create a token with it (Keys & Tokens in Coolify, by an admin or owner of the team)`);
        }
    }
    const held = ['read', ...needed.map(({ ability }) => ability)];
    say.note(`The token holds what this run needs: ${held.join(', ')}`);
}
/** The deployments and the settings written before them, in words: variable names, never values. */
function describeDeploy(config, event, versions, say) {
    const named = (uuid) => {
        const name = versions?.find(version => version.appUuid === uuid)?.name;
        return name && name !== uuid ? `${name} (${uuid})` : uuid;
    };
    const targets = config.tags.length
        ? `every resource tagged ${config.tags.join(', ')}`
        : config.appUuids.map(named).join(', ');
    if (!config.trigger) {
        const commit = commitToFollow(config, event);
        say.note(`Would start nothing: it would wait for the deployment Coolify starts by itself of commit ${commit.slice(0, 7)} of ${targets}`);
        return;
    }
    const settings = settingsToApply(config);
    if (settings)
        for (const uuid of config.appUuids)
            say.note(`${named(uuid)}: would set ${settings}`);
    for (const version of versions ?? []) {
        if (config.imageTag && config.pr === undefined) {
            say.note(`${version.name}: would set the image tag to ${config.imageTag} (now ${version.imageTag ?? 'none'})`);
        }
        else if (config.commit) {
            // A pin already there may be another run's, which that run puts back: the run watches it
            // first (`standingPin`), and puts back what is set once it has settled.
            const back = version.pinned === 'HEAD'
                ? 'HEAD'
                : `what is pinned once it settles (now ${version.pinned}, which may be another run's pin: the run first watches whether it stays)`;
            say.note(`${version.name}: would pin commit ${config.commit} for this deploy, then put back ${back}`);
        }
    }
    const how = [
        config.force && 'forced rebuild',
        config.pr !== undefined && `pull request ${config.pr}`,
        config.pr !== undefined && config.imageTag && `image tag ${config.imageTag}`
    ].filter(Boolean);
    say.note(`Would deploy ${targets} on ${config.instanceUrl}${how.length ? ` (${how.join(', ')})` : ''}`);
    if (config.rollbackOnFailure) {
        for (const version of versions ?? []) {
            const back = version.dockerImage ? version.imageTag : version.runningCommit;
            say.note(`${version.name}: on failure would roll back to ${back ?? 'nothing (no earlier version found)'}`);
        }
    }
    if (config.healthUrl)
        say.note(`Then would check ${config.healthUrl}`);
}

;// CONCATENATED MODULE: ./src/config/inputs.ts




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
/**
 * Headers a `headers` line cannot send, and why: they speak of the connection or the proxy, not
 * of the request (the HTTP client refuses them, or they would reach no one meant to read them).
 */
const UNSENDABLE_HEADERS = {
    expect: 'asks Coolify to confirm before a body is sent, which the action never waits for; remove that line.',
    'proxy-authorization': 'is for the proxy, which takes its credentials from the proxy variable (http://user:password@proxy:3128); remove that line.',
    ...Object.fromEntries([
        'connection',
        'keep-alive',
        'proxy-connection',
        'te',
        'trailer',
        'transfer-encoding',
        'upgrade'
    ].map(name => [
        name,
        'is about the connection, which the action manages itself; remove that line.'
    ]))
};
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
        dryRun: parseBoolean(read, 'dry-run', false),
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
/** The inputs that start or change something, which `trigger: false` refuses. */
const REFUSED_WITHOUT_TRIGGER = [
    'git-branch',
    'domains',
    'env',
    'image-tag',
    'force',
    'rollback-on-failure',
    'review-app',
    'delete-preview',
    'tag'
];
/** `trigger: false` starts and changes nothing: inputs that would are refused. */
function checkFollowInputs(config, read) {
    if (config.trigger)
        return;
    const changing = REFUSED_WITHOUT_TRIGGER.filter(name => !['', 'false'].includes(read(name).trim().toLowerCase()));
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
    if (config.rollbackOnFailure && !config.wait) {
        throw new ActionError('Inputs `rollback-on-failure` and `wait: false` together: a run that does not wait never sees the deployment fail, so it cannot roll it back. Drop one of them.');
    }
    if (config.rollbackOnFailure && config.pr !== undefined) {
        throw new ActionError('Input `rollback-on-failure` works for production deploys: a preview (`pr`) has no earlier version to go back to.');
    }
    if (config.pr !== undefined && !config.reviewApp) {
        const production = config.gitBranch ? 'git-branch' : config.domains ? 'domains' : undefined;
        if (production) {
            throw new ActionError(`Input \`${production}\` changes production's application: a preview (\`pr\`) has no \`${production}\` of its own. Leave it out, or deploy without \`pr\`.`);
        }
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
    if (!/^\d+$/.test(value) || Number(value) === 0 || !Number.isSafeInteger(Number(value))) {
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
        // As `env`: a plain word (`https`) would star out every link printed after it.
        if (value && worthMasking(value))
            mask(value);
        refuseUnsendable(`Input \`headers\`, line ${index + 1}`, value);
        if (!HEADER_NAME.test(name) || !value) {
            throw new ActionError(`Input \`headers\`, line ${index + 1}: write one \`Name: value\` a line, like \`CF-Access-Client-Id: \${{ secrets.CF_ID }}\`.`);
        }
        if (name.toLowerCase() === 'accept-encoding') {
            throw new ActionError(`Input \`headers\`, line ${index + 1}: ${name} asks for compressed answers, which the action does not read; remove that line.`);
        }
        const unsendable = UNSENDABLE_HEADERS[name.toLowerCase()];
        if (unsendable) {
            throw new ActionError(`Input \`headers\`, line ${index + 1}: ${name} ${unsendable}`);
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
    if (value.includes(PEM_BEGIN))
        return parsedPem(value, 'the PEM text');
    refuseControl('Input `ca-certificate`', value);
    let pem;
    try {
        pem = (0,external_node_fs_namespaceObject.readFileSync)(value, 'utf8');
    }
    catch {
        throw new ActionError(`Input \`ca-certificate\`: "${value}" is neither a PEM certificate nor a readable file; give the PEM text or its path.`);
    }
    if (!pem.includes(PEM_BEGIN)) {
        throw new ActionError(`Input \`ca-certificate\`: the file "${value}" holds no PEM certificate.`);
    }
    return parsedPem(pem, `the file "${value}"`);
}
const PEM_BEGIN = '-----BEGIN CERTIFICATE-----';
const PEM_BLOCK = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g;
/**
 * The certificates, each as PEM with its lines back: a CI variable often holds the PEM flattened
 * to one line, which TLS would not read. One that does not parse is refused now, not when the
 * connection fails as untrusted.
 */
function parsedPem(text, where) {
    const blocks = [...text.matchAll(PEM_BLOCK)].map(([, body]) => {
        const base64 = body.replace(/\s+/g, '');
        const lines = base64.match(/.{1,64}/g) ?? [];
        return [PEM_BEGIN, ...lines, '-----END CERTIFICATE-----'].join('\n');
    });
    const { X509Certificate } = process.getBuiltinModule('node:crypto');
    for (const [index, block] of blocks.entries()) {
        try {
            new X509Certificate(block);
        }
        catch {
            throw new ActionError(`Input \`ca-certificate\`: certificate ${index + 1} in ${where} does not parse; give the PEM text as exported, or its path.`);
        }
    }
    if (blocks.length === 0) {
        throw new ActionError(`Input \`ca-certificate\`: ${where} has no complete PEM certificate.`);
    }
    return `${blocks.join('\n')}\n`;
}
/**
 * Masks the values of `env` worth masking (see `worthMasking`): masking `3000` or `https` would
 * blank every occurrence in the whole log, links included, and hides nothing.
 */
function maskEnvValues(text, mask) {
    for (const line of text.split(/\r?\n/)) {
        const value = line.slice(line.indexOf('=') + 1).trim();
        if (line.includes('=') && worthMasking(value))
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

;// CONCATENATED MODULE: ./src/jobs/remove-preview.ts


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
        const text = this.format.verbatim(styled(lines, prefix));
        this.format.write(this.several ? this.format.startGroup(name) + text + this.format.endGroup() : text);
    }
}
/**
 * Each line the host will show, with the prefix and style of its kind. Runs for every line of a
 * log, in a function of its own with indexed loops and plain concatenation: the code V8 optimizes
 * for it stays small (iterators, destructuring and callbacks cost a big log tens of ms of that).
 */
function styled(lines, prefix) {
    const printed = [];
    for (let i = 0; i < lines.length; i++) {
        const { kind, text } = lines[i];
        const style = STYLE[kind];
        const marker = kind === 'command' ? '$ ' : '';
        if (!LINE_BREAK.test(text)) {
            printed.push(prefix + style[0] + marker + text + style[1]);
            continue;
        }
        const parts = text.split(LINE_BREAK);
        for (let k = 0; k < parts.length; k++) {
            printed.push(prefix + style[0] + (k === 0 ? marker : '') + parts[k] + style[1]);
        }
    }
    return printed;
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

;// CONCATENATED MODULE: ./src/jobs/run.ts


















/**
 * The deploy, from options to outcome, for any host: config → rollouts → run them → one outcome →
 * the front's report. SIGINT and SIGTERM cancel what this run started, within the grace time.
 */
async function deployAndFollow(front) {
    const say = sayThrough(host());
    const cancelled = sharedController();
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
        // An abbreviated commit is an input error, found before anything is read, in a dry run too.
        if (read.commit && read.trigger)
            fullCommit(read.commit, event);
        budget = new Budget(read.timeoutMs, read.healthTimeoutMs, cancelled.signal, undefined, undefined, host().cancelGraceMs);
        warnIfPlainHttp(read, say);
        client = connect_connect(read, say);
        const access = read.dryRun ? await checkAccess(client, read, budget.deploy(), say) : undefined;
        // Names become uuids before anything is written: a name that is not one resource's is an
        // input the config cannot hold.
        config = await resolveApps(client, read, budget.deploy(), say);
        if (access) {
            await forecast(client, config, event, access, budget.deploy(), say);
            ending.dryRun = true;
        }
        else if (config.deletePreview) {
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
        // A call cut short by the cancel throws the last failure it retried: the cancel is what
        // stopped the run, not Coolify.
        ending.error = cancelled.signal.aborted ? cancelled.signal.reason : error;
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
    const prepared = await prepare(client, reviewApp?.config ?? config, budget, event, say);
    // Opened before any pin: the GitHub deployment may take seconds, which a pin must not outlast.
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
    if (reviewApp?.warning)
        for (const deployment of deployments)
            deployment.doubt(reviewApp.warning);
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
/** After SIGINT or SIGTERM: the cancels and the report, then the exit, before a 5 s kill. */
const CLI_CANCEL_GRACE_MS = 4000;
/** Text from outside (a build's last line, a name) as one plain line: no colours, no controls. */
function plainLine(text) {
    return text.replace(ANSI, '').replace(host_CONTROL, ' ');
}
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
        const text = plainLine(`${title ? `${title}: ` : ''}${message}`);
        this.options.fail(`${this.redact(this.paint('31', `error: ${this.options.words(text)}`))}\n`);
    }
    debug(message) {
        if (this.options.verbose)
            this.line(`debug: ${this.options.words(message)}`);
    }
    /**
     * Within the shortest grace a CI gives: Jenkins kills 5 s after its SIGTERM (GitLab's shell
     * runners and `docker stop` wait longer).
     */
    cancelGraceMs = CLI_CANCEL_GRACE_MS;
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
        oneLine: plainLine
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
        oneLine: plainLine
    };
}

// EXTERNAL MODULE: external "node:util"
var external_node_util_ = __nccwpck_require__(7975);
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
    {
        name: 'dry-run',
        input: 'dry-run',
        kind: 'on',
        about: 'change nothing: check the address, the token and the names, and say what would be done'
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
        kind: 'value',
        value: 'FILE|PEM',
        about: 'extra CA certificates to trust: a PEM file, or the PEM text'
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
/** The ways of naming what to deploy: one given as a flag puts the others' variables aside. */
const TARGETS = ['app', 'app-uuid', 'tag'];
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
        ({ values } = (0,external_node_util_.parseArgs)({ args: [...args], options, strict: true, allowPositionals: false }));
    }
    catch (error) {
        throw new UsageError(usageProblem(error));
    }
    const invocation = {
        inputs: new Map(),
        json: values.json,
        dotenv: values.dotenv,
        verbose: values.verbose === true,
        help: values.help === true,
        version: values.version === true
    };
    // Nothing is read for --help and --version: a file that cannot be read is no reason to fail.
    if (invocation.help || invocation.version)
        return invocation;
    if (values.token !== undefined) {
        throw new UsageError('--token: the token is not taken on the command line, where the process list and the job log show it: set COOLIFY_TOKEN, or give --token-file FILE.');
    }
    // A flag beats a variable: `--app web` with COOLIFY_APP_UUID set (say, a CI's project
    // variable) deploys web, rather than refusing two ways of naming it.
    const targeted = TARGETS.some(name => nonEmpty(values[name]));
    for (const flag of options_FLAGS) {
        const fallback = targeted && TARGETS.includes(flag.name) ? '' : (env[envName(flag)] ?? '');
        invocation.inputs.set(flag.input, options_valueOf(flag, values[flag.name], fallback));
    }
    invocation.inputs.set('token', token(values['token-file'], env));
    return invocation;
}
/**
 * Where the report files go, read leniently from arguments that did not parse: a usage error
 * still writes them, for the jobs after this one.
 */
function reportFiles(args) {
    try {
        const { values } = (0,external_node_util_.parseArgs)({
            args: [...args],
            options: { json: { type: 'string' }, dotenv: { type: 'string' } },
            strict: false,
            allowPositionals: true
        });
        const path = (value) => typeof value === 'string' && value ? value : undefined;
        return { json: path(values.json), dotenv: path(values.dotenv) };
    }
    catch {
        return {};
    }
}
function nonEmpty(given) {
    return Array.isArray(given) ? given.some(value => value !== '') : Boolean(given);
}
function options_valueOf(flag, given, fallback) {
    switch (flag.kind) {
        case 'on':
            return given === true ? 'true' : fallback;
        case 'off':
            return given === true ? 'false' : fallback;
        case 'lines':
            return Array.isArray(given) && given.length > 0 ? given.join('\n') : fallback;
        default:
            return typeof given === 'string' ? given : fallback;
    }
}
/** The token: from --token-file (or COOLIFY_TOKEN_FILE), else COOLIFY_TOKEN; never a flag's value. */
function token(file, env) {
    const path = file ?? (env.COOLIFY_TOKEN_FILE || undefined);
    if (path !== undefined) {
        return readText(file !== undefined ? '--token-file' : 'COOLIFY_TOKEN_FILE', path).trim();
    }
    return env.COOLIFY_TOKEN ?? '';
}
function readText(option, path) {
    try {
        return (0,external_node_fs_namespaceObject.readFileSync)(path, 'utf8');
    }
    catch (error) {
        const code = error.code;
        // The path is not echoed: a token put where its file was meant would be printed.
        throw new UsageError(`${option}: cannot read the file it names (${code ?? 'unreadable'}).`);
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
            if (message?.includes('argument missing'))
                return `${option ?? 'An option'}: needs a value.`;
            if (message?.includes('ambiguous')) {
                return `${option ?? 'An option'}: its value starts with "-": write ${option ?? 'the option'}=VALUE.`;
            }
            return `${option ?? 'An option'}: takes no value.`;
        case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
            // Not echoed: a stray argument may be a secret split off its option by a space.
            return 'An argument without an option (not shown): every value follows its option, quoted when it holds spaces (--help lists them).';
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
        'dry-run',
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
    // GitHub's expressions mean nothing in another CI: GitLab's variables say the same.
    const said = message
        .replaceAll('${{ github.sha }}', '$CI_COMMIT_SHA')
        .replaceAll('${{ github.event.number }}', '$CI_MERGE_REQUEST_IID');
    return said.replace(/(Input )?`([a-z-]+)(?:: (true|false))?`/g, (whole, subject, input, value) => {
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
    rows.push(['--token-file FILE', 'read the API token from FILE [COOLIFY_TOKEN_FILE; else COOLIFY_TOKEN]'], ['--json FILE', 'write the deployments as JSON (the action’s `deployments` output)'], ['--dotenv FILE', 'write the results as COOLIFY_* variables (GitLab’s dotenv report)'], ['--verbose', 'print debug lines too'], ['--version', 'print the version'], ['-h, --help', 'print this help']);
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
 * (standard error). `exit` ends the process at once, on a second SIGINT or SIGTERM.
 */
async function main(args, env, write, fail, exit = status => process.exit(status)) {
    const refuse = (message, files) => {
        fail(`${NAME}: ${message}\n`);
        const outcome = decide([], { cancelled: false, error: new UsageError(message) });
        writeReports(files, outcome, text => text, warning => fail(`${NAME}: ${warning}\n`));
        return EXIT.usage;
    };
    let invocation;
    try {
        invocation = parseInvocation(args, env);
    }
    catch (error) {
        if (!(error instanceof UsageError))
            throw error;
        return refuse(error.message, reportFiles(args));
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
        return refuse("no API token: set COOLIFY_TOKEN (from your CI's secret variables), or give --token-file FILE.", invocation);
    }
    const gitlab = env.GITLAB_CI === 'true';
    const host = new TerminalHost({
        inputs: invocation.inputs,
        colors: colors(env, gitlab, process.stdout.isTTY === true),
        gitlab,
        verbose: invocation.verbose,
        words: message => inCommandLineTerms(message, env[COMPONENT_VARIABLE] === 'true' ? 'component' : 'command line'),
        write,
        fail
    });
    setHost(host);
    // What is known when a signal comes, written at once: a host that kills soon after (Jenkins,
    // 5 s after its SIGTERM) still leaves the files for later jobs. A second signal ends the run.
    let started = [];
    let signals = 0;
    const onSignal = (signal) => {
        const why = host.cancelled(signal);
        const known = decide(started, { cancelled: true, error: new ActionError(`${why}.`) });
        writeReports(invocation, known, text => host.redact(text), warning => host.warning(warning));
        if (++signals === 1)
            return;
        if (known.deployments.length > 0)
            host.info(table(known));
        const running = started.filter(deployment => !hasEnded(deployment.status));
        host.error(`${why} again: stopped at once${running.length > 0 ? `; still running in Coolify: ${running.map(d => `${d.name} (${d.uuid ?? 'no deployment yet'})`).join(', ')}` : ''}.`);
        exit(EXIT.failed);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let status = EXIT.finished;
    try {
        await deployAndFollow({
            event: () => mergeRequest(env),
            watchers: async () => [
                {
                    building: async (deployments) => void (started = deployments),
                    finish: async () => { }
                }
            ],
            removed: async () => { },
            report: async (outcome, config) => {
                status = report(host, outcome, config, invocation);
            }
        });
    }
    finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
    }
    return status;
}
/** The result table, the files for later jobs, and the exit status. */
function report(host, outcome, config, invocation) {
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
    writeReports(invocation, outcome, text => host.redact(text), warning => host.warning(warning));
    // Coolify may refuse, and the run be cancelled, before the config is whole: while names are
    // looked up.
    if (outcome.byCoolify)
        return EXIT.coolify;
    if (outcome.error && config === undefined && outcome.status !== 'cancelled')
        return EXIT.usage;
    if (outcome.byInput)
        return EXIT.usage;
    return outcome.fails ? EXIT.failed : EXIT.finished;
}
/**
 * `--json` and `--dotenv`, each replaced whole: written beside the file, then renamed over it, so
 * that a job killed while writing never leaves half a file for the jobs after it.
 */
function writeReports(files, outcome, redact, warn) {
    const outputs = new Map();
    setOutputs(outcome, (name, value) => outputs.set(name, value));
    // Only the error is free text: the rest are Coolify's ids, statuses and URLs, which a mask of
    // an `env` or `--header` value would star out for the jobs that read them.
    for (const [file, text] of [
        [files.json, () => `${JSON.stringify(outcome.deployments.map(toRecord), null, 2)}\n`],
        [files.dotenv, () => dotenv(outputs, redact(outcome.error ?? ''))]
    ]) {
        if (!file)
            continue;
        const temporary = (0,external_node_path_namespaceObject.join)((0,external_node_path_namespaceObject.dirname)(file), `.${(0,external_node_path_namespaceObject.basename)(file)}.${process.pid}.tmp`);
        try {
            (0,external_node_fs_namespaceObject.writeFileSync)(temporary, text());
            (0,external_node_fs_namespaceObject.renameSync)(temporary, file);
        }
        catch (error) {
            (0,external_node_fs_namespaceObject.rmSync)(temporary, { force: true });
            warn(`Could not write ${file}: ${error.message}`);
        }
    }
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
 * also gives an environment its URL), and the error that stopped the run, if any.
 * `deployments` stays in --json: a dotenv value is one line.
 */
function dotenv(outputs, error = '') {
    const names = {
        status: 'COOLIFY_STATUS',
        'deployment-uuid': 'COOLIFY_DEPLOYMENT_UUID',
        'deployment-url': 'COOLIFY_DEPLOYMENT_URL',
        url: 'COOLIFY_APP_URL',
        duration: 'COOLIFY_DURATION',
        'rolled-back': 'COOLIFY_ROLLED_BACK',
        'review-app-uuid': 'COOLIFY_REVIEW_APP_UUID'
    };
    const lines = Object.entries(names).map(([output, name]) => [name, outputs.get(output) ?? '']);
    return [...lines, ['COOLIFY_ERROR', error]]
        .map(([name, value]) => `${name}=${plainLine(value)}\n`)
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
/**
 * Colours on a terminal and in GitLab's log. FORCE_COLOR decides first, as Node reads it: set
 * empty, `1`, `2`, `3` or `true`, colours; any other value (`0`, `false`), none. Then NO_COLOR.
 */
function colors(env, gitlab, terminal) {
    if (env.FORCE_COLOR !== undefined)
        return ['', '1', '2', '3', 'true'].includes(env.FORCE_COLOR);
    if (env.NO_COLOR)
        return false;
    return gitlab || terminal;
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


/***/ }),

/***/ 4589:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:assert");

/***/ }),

/***/ 6698:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:async_hooks");

/***/ }),

/***/ 4573:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:buffer");

/***/ }),

/***/ 7598:
/***/ (module) => {

module.exports = __nodeBuiltin("node:crypto");

/***/ },

/***/ 3053:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:diagnostics_channel");

/***/ }),

/***/ 8474:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:events");

/***/ }),

/***/ 7067:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:http");

/***/ }),

/***/ 2467:
/***/ ((module) => {

module.exports = { constants: {} }; // node:http2, never used

/***/ }),

/***/ 7030:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:net");

/***/ }),

/***/ 643:
/***/ (module) => {

module.exports = __nodeBuiltin("node:perf_hooks");

/***/ },

/***/ 1792:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:querystring");

/***/ }),

/***/ 99:
/***/ (module) => {

module.exports = __nodeBuiltin("node:sqlite");

/***/ },

/***/ 7075:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:stream");

/***/ }),

/***/ 1692:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:tls");

/***/ }),

/***/ 7975:
/***/ ((module) => {

module.exports = __nodeBuiltin("node:util");

/***/ }),

/***/ 3429:
/***/ (module) => {

module.exports = __nodeBuiltin("node:util/types");

/***/ },

/***/ 5919:
/***/ (module) => {

module.exports = __nodeBuiltin("node:worker_threads");

/***/ },

/***/ 8522:
/***/ (module) => {

module.exports = __nodeBuiltin("node:zlib");

/***/ }

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
/******/ 		id: moduleId,
/******/ 		loaded: false,
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
/******/ 	// Flag the module as loaded
/******/ 	module.loaded = true;
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
/******/ /* webpack/runtime/node module decorator */
/******/ (() => {
/******/ 	__nccwpck_require__.nmd = (module) => {
/******/ 		module.paths = [];
/******/ 		if (!module.children) module.children = [];
/******/ 		return module;
/******/ 	};
/******/ })();
/******/ 
/************************************************************************/
/******/ 
/******/ // startup
/******/ // Load entry module and return exports
/******/ // This entry module used 'module' so it can't be inlined
/******/ var __webpack_exports__ = __nccwpck_require__(107);
/******/ __webpack_exports__ = await __webpack_exports__;
/******/ 
