import type { Readable, Transform } from 'node:stream'
import zlib from 'node:zlib'
import { HttpUnreadable } from './errors.js'

/**
 * The encodings every request accepts (`Accept-Encoding`), each with its decoder: Coolify's image
 * gzips JSON, and a build log's JSON shrinks about tenfold.
 */
const DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress()
}
export const ACCEPT_ENCODING = 'gzip, deflate, br'
/** The most a body may hold decoded: a long build log is a few MB; past this it is refused, not held. */
export const MAX_BODY_BYTES = 256 * 1024 * 1024

/**
 * A body as text, decoded as its `Content-Encoding` says, within `maxBytes`; `received` is told of
 * each chunk's size as it came on the wire.
 */
export async function readBody(
  body: Readable,
  contentEncoding = '',
  maxBytes: number,
  received: (bytes: number) => void
): Promise<string> {
  const encoding = contentEncoding.trim().toLowerCase()
  const plain = encoding === '' || encoding === 'identity'
  const decoder = plain ? undefined : DECODERS[encoding]
  if (!plain && decoder === undefined) {
    body.destroy()
    throw new HttpUnreadable(`its body came compressed (${encoding}), which was not asked for`)
  }
  const decoded = decoder ? body.pipe(decoder()) : body
  // A failure of the connection ends the reading of what it decodes.
  if (decoded !== body) {
    body.on('error', error => decoded.destroy(error))
    body.on('data', (chunk: Buffer) => received(chunk.length))
  }
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of decoded as AsyncIterable<Buffer>) {
      if (decoded === body) received(chunk.length)
      size += chunk.length
      if (size > maxBytes) throw new HttpUnreadable(`its body is over ${megabytes(maxBytes)} MB`)
      chunks.push(chunk)
    }
  } finally {
    // Left unread, the rest would hold the connection: it is closed instead.
    if (!body.readableEnded) body.destroy()
  }
  return Buffer.concat(chunks).toString('utf8')
}

function megabytes(bytes: number): string {
  return String(Math.round((bytes / 1024 / 1024) * 100) / 100)
}
