/**
 * `npm run demo` as a reader of the README runs it: the action twice, then the command-line tool
 * once, against the fake Coolify; from the tests' fresh bundle (ACTION_DIR).
 */
import { describe, expect, it } from '@jest/globals'
import { execFileSync, spawn } from 'node:child_process'
import { join } from 'node:path'
import { PROJECT } from '../test/support/runner.js'

describe('the demo', () => {
  it('shows the action green, then red, then the command line deploying once', async () => {
    execFileSync('npx', ['tsc', '-p', 'tsconfig.scripts.json'], { cwd: PROJECT })
    const child = spawn(process.execPath, [join(PROJECT, '.build', 'scripts', 'demo.js')], {
      cwd: PROJECT,
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.resume()
    const code = await new Promise<number | null>(done => child.on('close', done))

    expect(code).toBe(0)
    const command = stdout.slice(stdout.indexOf('3. The same deploy from the command line'))
    expect(command).toMatch(
      /^\$ COOLIFY_TOKEN=… coolify-deploy-follow --url http:\/\/127\.0\.0\.1:\d+ --app /m
    )
    expect(command).toMatch(/^Result:\n {2}web {2}finished {2}\S+ {2}https:\/\/web\.example\.com$/m)
    expect(command).toMatch(/^The command exited with 0\.$/m)
  }, 120_000)
})
