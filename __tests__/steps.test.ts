/**
 * The main and post steps in-process, with the workflow commands stood in for (as GitHub's
 * action template does with @actions/core), against the fake Coolify over real HTTP: the same
 * journeys as the bundle's end-to-end tests, here where coverage sees them.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import { captureStdout } from '../test/support/stdout.js'
import { commandsStandIn, recorded, resetStep, summaryText } from '../test/support/commands.js'
import { startFakeCoolify } from '../test/fake-coolify/index.js'
import type { FakeCoolify, Scenario } from '../test/fake-coolify/index.js'
import {
  actionRequests,
  APP,
  build,
  endless,
  FINISHED_LOG,
  inputsFor,
  savedRollouts,
  savedState,
  startElsewhere,
  TOKEN
} from '../test/support/scenarios.js'

jest.unstable_mockModule('../src/action/commands.js', () => commandsStandIn)
const { run } = await import('../src/action/main.js')
const { run: runPost } = await import('../src/action/cleanup.js')

let server: FakeCoolify | undefined
const printed = captureStdout()

afterEach(async () => {
  await server?.close()
  server = undefined
  process.exitCode = undefined
})

async function fake(scenarios: Scenario[] = [build('finished')], extra = {}): Promise<FakeCoolify> {
  server = await startFakeCoolify({
    token: TOKEN,
    rateLimit: 6000,
    apps: [{ ...APP, scenarios }],
    ...extra
  })
  return server
}

/** The build log lines printed, without workflow commands and colours. */
function logLines(): string[] {
  return (
    printed
      .join('')
      .split('\n')
      // eslint-disable-next-line no-control-regex -- colours start with ESC
      .map(line => line.replace(/\u001b\[[0-9;]*m/g, ''))
      .filter(line => line !== '' && !line.startsWith('::'))
  )
}

describe('the main step', () => {
  it('deploys, prints the log once, sets the outputs and clears its saved state', async () => {
    const coolify = await fake()
    resetStep(inputsFor(coolify))
    await run()

    expect(process.exitCode).toBeUndefined()
    expect(recorded.failed).toEqual([])
    expect(logLines()).toEqual(FINISHED_LOG)
    const [deployment] = coolify.deployments()
    expect(recorded.outputs).toMatchObject({
      status: 'finished',
      'deployment-uuid': deployment.uuid,
      url: APP.fqdn,
      // Coolify's created_at to finished_at, each to the second: a 0.46 s build spans one or two.
      duration: expect.stringMatching(/^[01]$/)
    })
    expect(recorded.secrets).toContain(TOKEN)
    expect(savedRollouts(recorded.state)).toEqual({})
    expect(summaryText()).toContain('✅ finished')
  })

  it('fails the step on a failed build, with an annotation that says why', async () => {
    const coolify = await fake([build('failed')])
    resetStep(inputsFor(coolify))
    await run()

    expect(process.exitCode).toBe(1)
    expect(recorded.outputs.status).toBe('failed')
    expect(recorded.errors).toEqual([
      expect.stringMatching(
        /^web: deployment failed — http.*\nwarning: deprecated\nnpm ERR! build script failed$/
      )
    ])
    expect(summaryText()).toContain('npm ERR! build script failed')
  })

  it('follows the deployment under way when Coolify answers "already queued"', async () => {
    const coolify = await fake([build('finished')])
    const first = await startElsewhere(coolify)
    resetStep(inputsFor(coolify))
    await run()

    expect(recorded.outputs['deployment-uuid']).toBe(first)
    expect(recorded.outputs.status).toBe('finished')
    expect(coolify.deployments()).toHaveLength(1)
  })

  it('finds the deployment a lost trigger answer started, and deploys once', async () => {
    const coolify = await fake()
    coolify.inject({ method: 'POST', path: '/deploy', do: 'truncate' })
    resetStep(inputsFor(coolify))
    await run()

    expect(recorded.outputs.status).toBe('finished')
    expect(coolify.deployments()).toHaveLength(1)
  })

  it('times out, cancels in Coolify and says so', async () => {
    const coolify = await fake([endless()])
    resetStep(inputsFor(coolify, { timeout: '1s' }))
    await run()

    expect(process.exitCode).toBe(1)
    expect(recorded.outputs.status).toBe('timeout')
    expect(coolify.deployments()[0].status).toBe('cancelled-by-user')
    expect(recorded.errors[0]).toMatch(/it outlasted `timeout`; it was cancelled in Coolify/)
  })

  it('cancels in Coolify when the run is cancelled (SIGINT)', async () => {
    const coolify = await fake([endless()])
    resetStep(inputsFor(coolify))
    const running = run()
    while (coolify.deployments()[0]?.status !== 'in_progress') await pause(20)
    await pause(200)
    process.emit('SIGINT')
    await running

    expect(recorded.outputs.status).toBe('cancelled')
    expect(coolify.deployments()[0].status).toBe('cancelled-by-user')
    expect(recorded.failed).toEqual(['The workflow run was cancelled.'])
    expect(savedRollouts(recorded.state)).toEqual({})
  })

  it('sets status failed and an empty list when the trigger is refused', async () => {
    const coolify = await fake()
    resetStep(inputsFor(coolify, { 'app-uuid': 'nosuchapp' }))
    await run()

    expect(recorded.outputs).toMatchObject({ status: 'failed', deployments: '[]' })
    expect(recorded.failed[0]).toMatch(/404 "No resources found\.".*`app-uuid`/)
  })

  it('refuses bad input before any request', async () => {
    const coolify = await fake()
    resetStep(inputsFor(coolify, { timeout: 'soon' }))
    await run()

    expect(recorded.failed).toEqual([expect.stringMatching(/^Input `timeout`: "soon"/)])
    expect(recorded.outputs.status).toBe('failed')
    expect(coolify.requests).toEqual([])
  })
})

describe('the post step', () => {
  it('cancels what a killed main step left on its list, unknown statuses included', async () => {
    const coolify = await fake([endless()])
    const uuid = await startElsewhere(coolify)
    coolify.inject({
      method: 'GET',
      path: `/deployments/${uuid}`,
      do: { status: 200, body: { deployment_uuid: uuid, status: 'Building' } }
    })
    resetStep(inputsFor(coolify), savedState({ [APP.uuid]: { name: 'web', running: [uuid] } }))
    await runPost()

    expect(coolify.deployments()[0].status).toBe('cancelled-by-user')
    expect(recorded.info).toContain(
      `web: cancelled deployment ${uuid} in Coolify, left running when the main step stopped`
    )
    expect(recorded.warnings).toEqual([])
  })

  it('finds and cancels what a trigger killed before its answer started', async () => {
    const coolify = await fake([endless()])
    const at = Date.now()
    await startElsewhere(coolify)
    resetStep(inputsFor(coolify), savedState({ [APP.uuid]: { trigger: { at } } }))
    await runPost()

    expect(coolify.deployments()[0].status).toBe('cancelled-by-user')
  })

  it('leaves alone what was under way before the trigger: another run started it', async () => {
    const coolify = await fake([endless()])
    await startElsewhere(coolify)
    await pause(50)
    resetStep(
      inputsFor(coolify),
      savedState({ [APP.uuid]: { trigger: { at: Date.now() + 6000 } } })
    )
    await runPost()

    expect(coolify.deployments()[0].status).toBe('in_progress')
    expect(actionRequests(coolify).map(request => request.method)).not.toContain('POST')
  })

  it('does nothing without saved state', async () => {
    const coolify = await fake()
    resetStep(inputsFor(coolify))
    await runPost()
    expect(coolify.requests).toEqual([])
  })
})

function pause(ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms))
}
