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
  BuildPack,
  DeploymentStatus,
  FakeApp,
  FakeAppState,
  FakeCoolify,
  FakeDeployment,
  FakeDestination,
  FakeEnv,
  FakeEnvInput,
  FakeOptions,
  FakePreview,
  Fault,
  Flavor,
  LogLine,
  LogType,
  RecordedRequest,
  ResourceStart,
  RuntimeState,
  Scenario,
  SlowAnswer,
  Step
} from './types.js'
export { DEFAULT_SCENARIO, UUID_MARK } from './scenario.js'
export { ENV_FIELDS, PATCH_ALLOWED, ROLLBACK_ALLOWED } from './allow-list.js'
export { CLONE_ALLOWED } from './clone.js'
export { DEFAULT_DESTINATION } from './state.js'

export async function startFakeCoolify(options: FakeOptions = {}): Promise<FakeCoolify> {
  const store = new Store(
    options.flavor ?? '4x',
    options.clock,
    options.queueLimit,
    options.statusCheckEveryMs,
    options.version !== '4.0-beta'
  )
  store.sharedVariables = { ...options.sharedVariables }
  const faults = new Faults()
  const requests: RecordedRequest[] = []
  const gzip = (options.flavor ?? '4x') === '4x' && options.gzip !== false
  const server = await listen(createPipeline(options, store), faults, requests, {
    tls: options.tls,
    gzip,
    clock: store.clock
  })
  // Added once the URL is known, for `{{self}}` in their addresses.
  store.home = server.url
  for (const destination of options.destinations ?? []) store.addDestination(destination)
  for (const app of options.apps ?? []) store.addApp(app)
  return {
    url: server.url,
    requests,
    deployments: () => store.snapshot(),
    app: uuid => {
      const app = store.apps.get(uuid)
      return app && store.view(app)
    },
    apps: () =>
      [...store.apps.values()]
        .filter(app => app.kind === 'application')
        .map(app => store.view(app)),
    inject: fault => faults.add(fault),
    clearFaults: () => faults.clear(),
    addApp: app => void store.addApp(app),
    push: (uuid, { pr, commit } = {}) => {
      const app = store.application(uuid)
      const queued = app && store.queue(app, { pr, webhookCommit: commit })
      if (queued?.kind !== 'queued') return undefined
      return store.snapshot().find(deployment => deployment.uuid === queued.deployment.uuid)
    },
    close: () => server.close()
  }
}
