import type { Readable } from 'node:stream'
import type { BrotliOptions, ZlibOptions } from 'node:zlib'
import { HttpUnreadable } from './errors.js'

type Decoder = (wire: Buffer, options: ZlibOptions & BrotliOptions) => Buffer

/**
 * The encodings every request accepts (`Accept-Encoding`), each with the node:zlib function that
 * decodes it: Coolify's image gzips JSON, and a build log's JSON shrinks about tenfold. node:zlib
 * is loaded with the first compressed answer, not before the first request: it takes a few ms of
 * the start.
 */
const DECODERS = new Map<
  string,
  'gunzipSync' | 'inflateSync' | 'inflateRawSync' | 'brotliDecompressSync'
>([
  ['gzip', 'gunzipSync'],
  ['x-gzip', 'gunzipSync'],
  ['deflate', 'inflateSync'],
  ['br', 'brotliDecompressSync']
])
export const ACCEPT_ENCODING = 'gzip, deflate, br'
/** The most a body may hold decoded: a long build log is a few MB; past this it is refused, not held. */
export const MAX_BODY_BYTES = 256 * 1024 * 1024
/**
 * The decoder's output comes in pieces this large, unless gzip's trailer says how large the whole
 * is. Its default, 16 KB, costs a log of a few MB several times the decoding itself in calls and
 * copies.
 */
const DECODED_CHUNK_BYTES = 1024 * 1024

/**
 * A body as text, decoded as its `Content-Encoding` says, within `maxBytes`; `received` is told of
 * each chunk's size as it came on the wire.
 *
 * A compressed body is read whole and then decoded in one call: it is a tenth of the text it
 * holds, and one call costs a fraction of decoding it piece by piece as it streams.
 */
export async function readBody(
  body: Readable,
  contentEncoding = '',
  maxBytes: number,
  received: (bytes: number) => void
): Promise<string> {
  const encoding = contentEncoding.trim().toLowerCase()
  const plain = encoding === '' || encoding === 'identity'
  const decoder = plain ? undefined : DECODERS.get(encoding)
  if (!plain && decoder === undefined) {
    body.destroy()
    throw new HttpUnreadable(`its body came compressed (${encoding}), which was not asked for`)
  }
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      received(chunk.length)
      size += chunk.length
      if (size > maxBytes) throw tooLarge(maxBytes)
      chunks.push(chunk)
    }
  } finally {
    // Left unread, the rest would hold the connection: it is closed instead.
    if (!body.readableEnded) body.destroy()
  }
  const wire = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)
  if (!decoder) return wire.toString('utf8')
  const decode: Decoder =
    process.getBuiltinModule('node:zlib')[
      decoder === 'inflateSync' && !zlibWrapped(wire) ? 'inflateRawSync' : decoder
    ]
  try {
    const chunkSize = decodedSize(encoding, wire, maxBytes) ?? DECODED_CHUNK_BYTES
    return decode(wire, { maxOutputLength: maxBytes, chunkSize }).toString('utf8')
  } catch (error) {
    // zlib stops at `maxOutputLength`: the rest is never decoded, let alone held.
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes)
    throw error
  }
}

/**
 * The size gzip's trailer gives the decoded body (modulo 4 GB; one more byte, so that the body
 * decodes into one piece and is not copied again), within `maxBytes` and what deflate can make of
 * the bytes at all; undefined for the other encodings. zlib checks the trailer: one that lies
 * fails the body as broken, after a piece no larger than its bytes could fill.
 */
function decodedSize(encoding: string, wire: Buffer, maxBytes: number): number | undefined {
  if (!encoding.endsWith('gzip') || wire.length < GZIP_SMALLEST) return undefined
  const told = wire.readUInt32LE(wire.length - 4) + 1
  return Math.max(Math.min(told, wire.length * DEFLATE_MOST_RATIO, maxBytes), MIN_CHUNK_BYTES)
}

/**
 * `deflate` is a deflate stream in zlib's wrapper (RFC 9110 8.4.1.2), which its first two bytes
 * tell; some servers send the bare stream, and browsers read that too.
 */
function zlibWrapped(wire: Buffer): boolean {
  return wire.length >= 2 && (wire[0] & 0x0f) === 8 && ((wire[0] << 8) | wire[1]) % 31 === 0
}

/** A gzip member's 10-byte header and 8-byte trailer around at least an empty block. */
const GZIP_SMALLEST = 20
/** The most deflate decodes a byte into (RFC 1951: a 258-byte match in about two bits). */
const DEFLATE_MOST_RATIO = 1032
/** zlib's smallest `chunkSize`. */
const MIN_CHUNK_BYTES = 64

function tooLarge(maxBytes: number): HttpUnreadable {
  return new HttpUnreadable(`its body is over ${megabytes(maxBytes)} MB`)
}

function megabytes(bytes: number): string {
  return String(Math.round((bytes / 1024 / 1024) * 100) / 100)
}
