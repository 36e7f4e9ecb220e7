/**
 * `callGitHub`: which failures of a GitHub call are asked again, through the action's GitHub
 * client against addresses on this machine.
 */
import { describe, expect, it } from '@jest/globals'
import { createServer as createHttpServer } from 'node:http'
import { createServer } from 'node:net'
import { closeGitHub, GitHubApi } from '../src/action/github-api.js'
import { callGitHub, isRefusal, warnGitHubFailure } from '../src/action/github-failure.js'

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>(done => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as { port: number }
  await new Promise(done => server.close(done))
  return port
}

async function attempts(baseUrl: string, fails = true): Promise<number> {
  const github = new GitHubApi('token', baseUrl)
  let count = 0
  const call = callGitHub(signal => {
    count++
    return github.request('GET', '/repos/o/r', { signal })
  }, new AbortController().signal)
  if (fails) await expect(call).rejects.toThrow()
  else await call
  return count
}

describe('a GitHub call that could send nothing', () => {
  it('is not asked again when nothing listens at the address', async () => {
    expect(await attempts(`http://127.0.0.1:${await closedPort()}`)).toBe(1)
  })

  it('is not asked again at a port nothing may serve', async () => {
    expect(await attempts('http://127.0.0.1:9')).toBe(1)
  })
})

/** A GitHub answering 403 with its primary rate limit used up, freeing after `resetIn` ms, then 200. */
async function rateLimited(resetIn: number): Promise<{ url: string; close: () => Promise<void> }> {
  let calls = 0
  const server = createHttpServer((_request, response) => {
    calls++
    if (calls === 1) {
      response.writeHead(403, {
        'content-type': 'application/json',
        'x-ratelimit-limit': '1000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(Math.ceil((Date.now() + resetIn) / 1000))
      })
      response.end(JSON.stringify({ message: 'API rate limit exceeded for installation.' }))
    } else {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ id: 1 }))
    }
  })
  await new Promise<void>(done => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>(done => server.close(() => done()))
  }
}

describe("a 403 from GitHub's primary rate limit", () => {
  it('is asked again once the limit frees up within the call', async () => {
    const github = await rateLimited(1000)
    try {
      expect(await attempts(github.url, false)).toBe(2)
    } finally {
      await github.close()
    }
  })

  it('is not a refusal, and its warning says rate limited, not a permission', async () => {
    const github = await rateLimited(3_600_000)
    const written: string[] = []
    const write = process.stdout.write
    process.stdout.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof write
    try {
      const api = new GitHubApi('token', github.url)
      const error = await callGitHub(
        signal => api.request('GET', '/repos/o/r', { signal }),
        new AbortController().signal
      ).catch((failure: unknown) => failure)
      expect(isRefusal(error)).toBe(false)
      warnGitHubFailure('update the comment', error, '`pull-requests: write`')
    } finally {
      process.stdout.write = write
      await github.close()
    }
    const line = written.join('')
    expect(line).toMatch(/rate limit for this token is used up until/)
    expect(line).not.toMatch(/pull-requests: write/)
  })
})

describe('the end of the step', () => {
  it('closes the connections GitHub calls left opening, so that the process can exit', async () => {
    // A GitHub that accepts the connection and never answers the TLS handshake.
    let closed: (() => void) | undefined
    const ended = new Promise<void>(resolve => (closed = resolve))
    const server = createServer(socket => {
      // Read, never answered: the client's end is seen.
      socket.resume()
      socket.on('close', () => closed!())
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    try {
      const github = new GitHubApi('ghp_token', `https://127.0.0.1:${port}`, {})
      const controller = new AbortController()
      const call = github.request('GET', '/user', { signal: controller.signal })
      await new Promise(resolve => setTimeout(resolve, 200))
      // The call's deadline: it ends at once, its connection goes on opening.
      controller.abort(new Error('deadline'))
      await expect(call).rejects.toThrow('deadline')
      closeGitHub()
      const outcome = await Promise.race([
        ended.then(() => 'closed'),
        new Promise(resolve => setTimeout(resolve, 3000, 'still open'))
      ])
      expect(outcome).toBe('closed')
    } finally {
      server.close()
    }
  })
})
