/** The route table under /api/v1: method, path, the token ability it needs, the handler. */
import {
  createApplication,
  deleteApplication,
  getApplication,
  listApplications,
  updateApplication
} from './applications.js'
import type { Ctx } from './context.js'
import { cancelDeployment, deploy, getDeployment, listDeployments } from './deployments.js'
import type { Reply } from './reply.js'
import type { Flavor } from './types.js'

export interface Route {
  method: string
  pattern: RegExp
  /** Ability the token needs (or 'root'); none for answers that need no permission. */
  ability?: string
  handle(ctx: Ctx): Reply
}

const ID = '([^/]+)'

export function routes(flavor: Flavor): Route[] {
  const at = (path: string): RegExp => new RegExp(`^${path}$`)
  return [
    { method: 'GET', pattern: at('/applications'), ability: 'read', handle: listApplications },
    {
      method: 'POST',
      pattern: at('/applications/private-deploy-key'),
      ability: 'write',
      handle: createApplication
    },
    { method: 'GET', pattern: at(`/applications/${ID}`), ability: 'read', handle: getApplication },
    {
      method: 'PATCH',
      pattern: at(`/applications/${ID}`),
      ability: 'write',
      handle: updateApplication
    },
    {
      method: 'DELETE',
      pattern: at(`/applications/${ID}`),
      ability: 'write',
      handle: deleteApplication
    },
    { method: 'POST', pattern: at('/deploy'), ability: 'deploy', handle: deploy },
    // Since 4.2.0 GET /deploy only answers 405; the seed contract still serves it.
    {
      method: 'GET',
      pattern: at('/deploy'),
      ability: flavor === 'seed' ? 'deploy' : undefined,
      handle: deploy
    },
    {
      method: 'GET',
      pattern: at(`/deployments/applications/${ID}`),
      ability: 'read',
      handle: listDeployments
    },
    { method: 'GET', pattern: at(`/deployments/${ID}`), ability: 'read', handle: getDeployment },
    {
      method: 'POST',
      pattern: at(`/deployments/${ID}/cancel`),
      ability: 'deploy',
      handle: cancelDeployment
    }
  ]
}

/** The first route for this method and path, with the path's captures. */
export function match(
  table: Route[],
  method: string,
  path: string
): { route: Route; params: string[] } | undefined {
  for (const route of table) {
    if (route.method !== method) continue
    const m = route.pattern.exec(path)
    if (m) return { route, params: m.slice(1).map(decode) }
  }
  return undefined
}

/** A malformed escape stays as sent: it then matches no resource. */
function decode(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
