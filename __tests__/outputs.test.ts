import { describe, expect, it } from '@jest/globals'
import { Deployment, type Status } from '../src/model/deployment.js'
import { decide } from '../src/model/outcome.js'
import { setOutputs } from '../src/report/outputs.js'
import { ActionError } from '../src/errors.js'

function deployment(name: string, status: Status) {
  const d = new Deployment(`${name}-uuid`, name, `${name}-dep`, 1000)
  if (status !== 'queued') d.end(status)
  return d
}

const statusOf = (...deployments: Deployment[]): Status =>
  decide(deployments, { cancelled: false }).status

describe('the outcome', () => {
  it('is the worst status of the deployments', () => {
    expect(statusOf(deployment('a', 'finished'), deployment('b', 'timeout'))).toBe('timeout')
    expect(statusOf(deployment('a', 'cancelled'), deployment('b', 'failed'))).toBe('failed')
    expect(statusOf(deployment('a', 'finished'), deployment('b', 'started'))).toBe('finished')
    expect(statusOf(deployment('a', 'queued'))).toBe('queued')
    expect(decide([deployment('a', 'queued')], { cancelled: false }).fails).toBe(false)
  })

  it('never passes when an error stopped the step, whatever the deployments said', () => {
    const error = new ActionError('Coolify refused the second deploy.')
    const outcome = decide([deployment('a', 'queued')], { error, cancelled: false })
    expect(outcome).toMatchObject({ status: 'failed', fails: true, error: error.message })
    expect(decide([deployment('a', 'in_progress')], { error, cancelled: true }).status).toBe(
      'cancelled'
    )
    // A failing status stays what it is: it says more than the error.
    expect(decide([deployment('a', 'timeout')], { error, cancelled: false }).status).toBe('timeout')
  })

  it('says why nothing was deployed', () => {
    expect(decide([], { cancelled: false })).toMatchObject({ status: 'failed', fails: true })
    expect(decide([], { cancelled: true }).status).toBe('cancelled')
    expect(decide([], { cancelled: false, removed: true })).toMatchObject({
      status: 'finished',
      fails: false
    })
  })
})

describe('a deployment that ended', () => {
  it('keeps its status, but for the turns a rollout may give it', () => {
    const failed = deployment('a', 'failed')
    expect(failed.end('finished')).toBe(false)
    expect(failed.end('unhealthy')).toBe(false)
    failed.observe({ status: 'in_progress' }, 'https://coolify.example.com')
    expect(failed.status).toBe('failed')

    const finished = deployment('b', 'finished')
    expect(finished.end('unhealthy')).toBe(true)
    expect(finished.end('finished')).toBe(false)
    expect(finished.status).toBe('unhealthy')

    // A cancel sent at `timeout` reads as cancelled first; the rollout calls it a timeout.
    const cancelled = deployment('c', 'cancelled')
    expect(cancelled.end('timeout', 'it outlasted `timeout`')).toBe(true)
    expect(cancelled.end('failed')).toBe(false)
  })

  it('is timed from the trigger when a started service or database comes up', () => {
    const service = new Deployment('svc-uuid', 'svc', undefined, Date.now() - 5000, 'service')
    service.started()
    expect(service).toMatchObject({ status: 'started', ended: true, running: false })
    expect(service.durationMs).toBeUndefined()
    expect(service.end('finished')).toBe(true)
    expect(service.durationMs).toBeGreaterThanOrEqual(5000)
    expect(service.end('unhealthy')).toBe(true)
    expect(service.end('started')).toBe(false)
  })
})

describe('outputs', () => {
  it('sets every output from the deployments', () => {
    const outputs: Record<string, string> = {}
    const a = new Deployment('api-uuid', 'api', 'api-dep', 1000)
    a.describe({ uuid: 'api-uuid', fqdn: 'https://api.example.com,https://www.example.com' })
    // Coolify's own times make the duration, whatever the trigger's time.
    a.observe(
      {
        status: 'finished',
        commit: 'abc',
        deployment_url: '/project/p/environment/e/application/api-uuid/deployment/api-dep',
        created_at: '2026-01-01T10:00:00.000000Z',
        finished_at: '2026-01-01T10:00:43.200000Z'
      },
      'https://coolify.example.com'
    )
    const b = new Deployment('db-uuid', 'db', undefined, 1000, 'database')
    b.started()
    setOutputs(decide([a, b], { cancelled: false }), (name, value) => (outputs[name] = value))
    expect(outputs['deployment-uuid']).toBe('api-dep')
    const page =
      'https://coolify.example.com/project/p/environment/e/application/api-uuid/deployment/api-dep'
    expect(outputs['deployment-url']).toBe(page)
    expect(outputs.status).toBe('finished')
    expect(outputs.url).toBe('https://api.example.com')
    expect(outputs.duration).toBe('43')
    expect(JSON.parse(outputs.deployments)).toEqual([
      {
        app_uuid: 'api-uuid',
        kind: 'application',
        name: 'api',
        deployment_uuid: 'api-dep',
        deployment_url: page,
        status: 'finished',
        url: 'https://api.example.com',
        duration: 43,
        commit: 'abc'
      },
      expect.objectContaining({
        kind: 'database',
        name: 'db',
        deployment_uuid: null,
        deployment_url: null,
        status: 'started',
        duration: null
      })
    ])
  })

  it('sets status and an empty list when nothing was deployed', () => {
    const outputs: Record<string, string> = {}
    setOutputs(decide([], { cancelled: true }), (name, value) => (outputs[name] = value))
    expect(outputs).toEqual({
      'deployment-uuid': '',
      'deployment-url': '',
      status: 'cancelled',
      url: '',
      duration: '',
      deployments: '[]',
      'rolled-back': 'false',
      'review-app-uuid': ''
    })
  })
})
