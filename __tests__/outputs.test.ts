import { describe, expect, it } from '@jest/globals'
import { Deployment, type Status } from '../src/deploy/deployment.js'
import { setOutputs, worstStatus } from '../src/report/outputs.js'

function deployment(name: string, status: Status, extra: Partial<Deployment> = {}): Deployment {
  const d = new Deployment(`${name}-uuid`, name, `${name}-dep`, 1000)
  if (status !== 'queued') d.end(status)
  Object.assign(d, extra)
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
    const a = deployment('api', 'finished', {
      appUrl: 'https://api.example.com',
      commit: 'abc',
      endedAt: 43_600
    })
    const b = deployment('db', 'started')
    b.uuid = undefined
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
})
