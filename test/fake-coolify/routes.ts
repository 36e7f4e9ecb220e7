/** The route table under /api/v1: method, path, the token ability it needs, the handler. */
import {
  createApplication,
  deleteApplication,
  getApplication,
  listApplications,
  updateApplication
} from './applications.js'
import {
  cloneApplication,
  listDestinations,
  listServerDestinations,
  listTeamDestinations
} from './clone.js'
import type { Ctx } from './context.js'
import {
  cancelDeployment,
  deploy,
  getDeployment,
  listDeployments,
  runningDeployments
} from './deployments.js'
import { bulkEnvs, deleteEnv, listEnvs } from './envs.js'
import { currentTeam, postRequired, version as versionOf } from './instance.js'
import { deletePreview } from './previews.js'
import { getProject, listProjects } from './projects.js'
import type { Reply } from './reply.js'
import {
  databaseLogs,
  getDatabase,
  getService,
  listDatabases,
  listServices,
  serviceLogs
} from './resources.js'
import { rollback, rollbackImages } from './rollback.js'
import { applicationLogs } from './runtime.js'
import { deleteScheduledTask, listScheduledTasks, listStorages } from './storages.js'
import { listTags, removeTag } from './tags.js'
import type { FakeOptions, Flavor } from './types.js'

export interface Route {
  method: string
  pattern: RegExp
  /** Ability the token needs (or 'root'); none for answers that need no permission. */
  ability?: string
  handle(ctx: Ctx): Reply
}

const ID = '([^/]+)'

/**
 * Routes real 4.x servers have beyond interface.md, services, databases and projects among them; rollback,
 * clone, destinations, storages and scheduled tasks came with 4.3.
 */
function coolify4x(version: FakeOptions['version']): Route[] {
  const at = (path: string): RegExp => new RegExp(`^${path}$`)
  const app = (rest: string): RegExp => at(`/applications/${ID}${rest}`)
  return [
    { method: 'PATCH', pattern: app('/envs/bulk'), ability: 'write', handle: bulkEnvs },
    { method: 'GET', pattern: app('/envs'), ability: 'read', handle: listEnvs },
    { method: 'DELETE', pattern: app(`/envs/${ID}`), ability: 'write', handle: deleteEnv },
    { method: 'GET', pattern: app('/tags'), ability: 'read', handle: listTags },
    { method: 'DELETE', pattern: app(`/tags/${ID}`), ability: 'write', handle: removeTag },
    { method: 'GET', pattern: app('/logs'), ability: 'read', handle: applicationLogs },
    { method: 'DELETE', pattern: app(`/previews/${ID}`), ability: 'write', handle: deletePreview },
    { method: 'GET', pattern: at('/services'), ability: 'read', handle: listServices },
    { method: 'GET', pattern: at(`/services/${ID}`), ability: 'read', handle: getService },
    { method: 'GET', pattern: at(`/services/${ID}/logs`), ability: 'read', handle: serviceLogs },
    { method: 'GET', pattern: at('/databases'), ability: 'read', handle: listDatabases },
    { method: 'GET', pattern: at(`/databases/${ID}`), ability: 'read', handle: getDatabase },
    { method: 'GET', pattern: at(`/databases/${ID}/logs`), ability: 'read', handle: databaseLogs },
    { method: 'GET', pattern: at('/projects'), ability: 'read', handle: listProjects },
    // routes/api.php: GET /version (read), GET /servers/{uuid}/validate behind `write` (185).
    { method: 'GET', pattern: at('/version'), ability: 'read', handle: () => versionOf(version) },
    {
      method: 'GET',
      pattern: at(`/servers/${ID}/validate`),
      ability: 'write',
      handle: postRequired
    },
    { method: 'GET', pattern: at(`/projects/${ID}`), ability: 'read', handle: getProject },
    ...(version !== '4.3'
      ? []
      : [
          {
            method: 'GET',
            pattern: app('/rollback-images'),
            ability: 'read',
            handle: rollbackImages
          },
          { method: 'POST', pattern: app('/rollback'), ability: 'deploy', handle: rollback },
          { method: 'POST', pattern: app('/clone'), ability: 'write', handle: cloneApplication },
          {
            method: 'GET',
            pattern: app('/destinations'),
            ability: 'read',
            handle: listDestinations
          },
          // routes/api.php 178: the team's destinations.
          {
            method: 'GET',
            pattern: at('/destinations'),
            ability: 'read',
            handle: listTeamDestinations
          },
          {
            method: 'GET',
            pattern: at(`/servers/${ID}/destinations`),
            ability: 'read',
            handle: listServerDestinations
          },
          { method: 'GET', pattern: app('/storages'), ability: 'read', handle: listStorages },
          // GET /team came after 4.2 (the older /teams/current stays beside it).
          { method: 'GET', pattern: at('/team'), ability: 'read', handle: currentTeam },
          {
            method: 'GET',
            pattern: app('/scheduled-tasks'),
            ability: 'read',
            handle: listScheduledTasks
          },
          {
            method: 'DELETE',
            pattern: app(`/scheduled-tasks/${ID}`),
            ability: 'write',
            handle: deleteScheduledTask
          }
        ])
  ]
}

export function routes(flavor: Flavor, version: FakeOptions['version'] = '4.3'): Route[] {
  const at = (path: string): RegExp => new RegExp(`^${path}$`)
  return [
    ...(flavor === '4x' ? coolify4x(version) : []),
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
    // Since 4.2.0 GET /deploy only answers 405, behind `deploy` all the same (routes/api.php
    // 144): a token without it gets 403 first. The seed contract still deploys on it.
    {
      method: 'GET',
      pattern: at('/deploy'),
      ability: 'deploy',
      handle: flavor === 'seed' ? deploy : postRequired
    },
    // Not in the seed contract.
    ...(flavor === '4x'
      ? [
          {
            method: 'GET',
            pattern: at('/deployments'),
            ability: 'read',
            handle: runningDeployments
          }
        ]
      : []),
    {
      method: 'GET',
      pattern: at(`/deployments/applications/${ID}`),
      ability: 'read',
      handle: listDeployments
    },
    { method: 'GET', pattern: at(`/deployments/${ID}`), ability: 'read', handle: getDeployment },
    // Added in 4.0.0-beta.436 (routes/api.php).
    ...(version === '4.0-beta'
      ? []
      : [
          {
            method: 'POST',
            pattern: at(`/deployments/${ID}/cancel`),
            ability: 'deploy',
            handle: cancelDeployment
          }
        ])
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
