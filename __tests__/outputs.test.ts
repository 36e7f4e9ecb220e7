import { describe, expect, it } from '@jest/globals'
import { Deployment, type Status } from '../src/rollout/deployment.js'
import { setOutputs, worstStatus } from '../src/report/outputs.js'

function deployment(name: string, status: Status) {
  const d = new Deployment(`${name}-uuid`, name, `${name}-dep`, 1000)
  if (status !== 'queued') d.end(status)
  return d
}

describe('outputs', () => {
  it('picks the worst status', () => {
    expect(worstStatus([deployment('a', 'finished'), deployment('b', 'timeout')])).toBe('timeout')
    expect(worstStatus([deployment('a', 'cancelled'), deployment('b', 'failed')])).toBe('failed')
    expect(worstStatus([deployment('a', 'finished'), deployment('b', 'started')])).toBe('finished')
    expect(worstStatus([deployment('a', 'queued')])).toBe('queued')
  })

  it('sets every output from the deployments', () => {
    const outputs: Record<string, string> = {}
    const a = new Deployment('api-uuid', 'api', 'api-dep', 1000)
    a.describe({ uuid: 'api-uuid', fqdn: 'https://api.example.com,https://www.example.com' })
    // Coolify's own times make the duration, whatever the trigger's time.
    a.observe(
      {
        status: 'finished',
        commit: 'abc',
        created_at: '2026-01-01T10:00:00.000000Z',
        finished_at: '2026-01-01T10:00:43.200000Z'
      },
      'https://coolify.example.com'
    )
    const b = new Deployment('db-uuid', 'db', undefined, 1000)
    b.end('started')
    setOutputs([a, b], (name, value) => (outputs[name] = value))
    expect(outputs['deployment-uuid']).toBe('api-dep')
    expect(outputs.status).toBe('finished')
    expect(outputs.url).toBe('https://api.example.com')
    expect(outputs.duration).toBe('43')
    expect(JSON.parse(outputs.deployments)).toEqual([
      {
        app_uuid: 'api-uuid',
        name: 'api',
        deployment_uuid: 'api-dep',
        status: 'finished',
        url: 'https://api.example.com',
        duration: 43,
        commit: 'abc'
      },
      expect.objectContaining({ name: 'db', deployment_uuid: null, status: 'started' })
    ])
  })

  it('sets status and an empty list when nothing was deployed', () => {
    const outputs: Record<string, string> = {}
    setOutputs([], (name, value) => (outputs[name] = value), 'cancelled')
    expect(outputs).toEqual({
      'deployment-uuid': '',
      status: 'cancelled',
      url: '',
      duration: '',
      deployments: '[]',
      'rolled-back': 'false'
    })
  })
})
