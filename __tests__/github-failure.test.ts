/**
 * `callGitHub`: which failures of a GitHub call are asked again, through Octokit against
 * addresses on this machine.
 */
import { describe, expect, it } from '@jest/globals'
import { getOctokit } from '@actions/github'
import { createServer } from 'node:net'
import { callGitHub } from '../src/action/github-failure.js'

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>(done => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as { port: number }
  await new Promise(done => server.close(done))
  return port
}

async function attempts(baseUrl: string): Promise<number> {
  const octokit = getOctokit('token', { baseUrl })
  let count = 0
  await expect(
    callGitHub(signal => {
      count++
      return octokit.rest.repos.get({ owner: 'o', repo: 'r', request: { signal } })
    }, new AbortController().signal)
  ).rejects.toThrow()
  return count
}

describe('a GitHub call that could send nothing', () => {
  it('is not asked again when nothing listens at the address', async () => {
    expect(await attempts(`http://127.0.0.1:${await closedPort()}`)).toBe(1)
  })

  it('is not asked again when fetch refuses the port', async () => {
    expect(await attempts('http://127.0.0.1:9')).toBe(1)
  })
})
