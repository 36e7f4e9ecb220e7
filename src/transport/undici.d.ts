// The transport loads undici's dispatchers from their own modules, not from its index, which also
// loads fetch, WebSocket, the cache and the mocks: a third of the start-up. The types are the index's.
declare module 'undici/lib/dispatcher/dispatcher.js' {
  import { Dispatcher } from 'undici'
  export default Dispatcher
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici'
  const request: Dispatcher['request']
  export default request
}
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici'
  export default Agent
}
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici'
  export default Pool
}
declare module 'undici/lib/dispatcher/proxy-agent.js' {
  import { ProxyAgent } from 'undici'
  export default ProxyAgent
}
declare module 'undici/lib/core/connect.js' {
  import type { Socket } from 'node:net'
  import type { buildConnector as Connector } from 'undici'
  /** undici's connector, which returns the socket it opens (its types leave that out). */
  export default function buildConnector(
    options?: Connector.BuildOptions
  ): (options: Connector.Options, callback: Connector.Callback) => Socket
}
