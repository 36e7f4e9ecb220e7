/**
 * A fake GitHub REST API on loopback, just the deployments part: creating a deployment and its
 * statuses. It records what it received; `refuse` makes it answer every request with that status,
 * as GitHub does when the token lacks `deployments: write`.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface GitHubRequest {
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  body: Record<string, unknown>
}

export interface FakeGitHubOptions {
  /** Answer every request with this status and GitHub's error body (403, 404, 500…). */
  refuse?: number
}

export interface FakeGitHub {
  /** For GITHUB_API_URL. */
  url: string
  requests: GitHubRequest[]
  close(): Promise<void>
}

const DEPLOYMENTS = /^\/repos\/([^/]+)\/([^/]+)\/deployments$/
const STATUSES = /^\/repos\/([^/]+)\/([^/]+)\/deployments\/(\d+)\/statuses$/

export async function startFakeGitHub(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const requests: GitHubRequest[] = []
  let deployments = 0

  function answer(request: GitHubRequest): [number, unknown] {
    if (options.refuse) {
      return [
        options.refuse,
        {
          message: 'Resource not accessible by integration',
          documentation_url: 'https://docs.github.com/rest/deployments/deployments',
          status: String(options.refuse)
        }
      ]
    }
    if (request.method !== 'POST') return [404, { message: 'Not Found' }]
    if (DEPLOYMENTS.test(request.path)) {
      deployments += 1
      return [201, { id: deployments, sha: request.body.ref, ...request.body }]
    }
    const id = Number(STATUSES.exec(request.path)?.[3])
    if (id >= 1 && id <= deployments) return [201, { id: Date.now(), ...request.body }]
    return [404, { message: 'Not Found' }]
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const request: GitHubRequest = {
        method: req.method ?? 'GET',
        path: new URL(req.url ?? '/', 'http://localhost').pathname,
        headers: { ...req.headers },
        body: text ? JSON.parse(text) : {}
      }
      requests.push(request)
      const [status, body] = answer(request)
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
      res.end(JSON.stringify(body))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>(resolve => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
