/**
 * A scriptable fake Coolify on loopback, real HTTP, started in-process.
 *
 * Flavor 'seed' answers as spec/interface.md describes; '4x' as real Coolify 4.x does
 * (spec/coolify-4x.md). Each deployment follows its app's next Scenario, evaluated from the real
 * clock whenever it is read.
 */
import { Faults } from './faults.js'
import { createPipeline } from './pipeline.js'
import { listen } from './server.js'
import { Store } from './state.js'
import type { FakeCoolify, FakeOptions, RecordedRequest } from './types.js'

export type {
  DeploymentStatus,
  FakeApp,
  FakeCoolify,
  FakeDeployment,
  FakeOptions,
  Fault,
  Flavor,
  LogLine,
  LogType,
  RecordedRequest,
  Scenario,
  Step
} from './types.js'
export { DEFAULT_SCENARIO } from './scenario.js'

export async function startFakeCoolify(options: FakeOptions = {}): Promise<FakeCoolify> {
  const store = new Store(options.flavor ?? '4x')
  for (const app of options.apps ?? []) store.addApp(app)
  const faults = new Faults()
  const requests: RecordedRequest[] = []
  const server = await listen(createPipeline(options, store), faults, requests, options.tls)
  return {
    url: server.url,
    requests,
    deployments: () => store.snapshot(),
    inject: fault => faults.add(fault),
    addApp: app => void store.addApp(app),
    close: () => server.close()
  }
}
