/**
 * The token ability each route of Coolify's API asks for, as Coolify 4.3.11 declares it
 * (coollabsio/coolify at 379abb2526, `routes/api.php`; each row gives its line there). Only the
 * routes this project calls or its pages name, and their neighbours: applications, deployments,
 * services, databases, projects, the version, the team and destinations. The docs' table of
 * abilities and the fake Coolify's routes are both checked against this, so neither vouches for
 * the other.
 */
export const COOLIFY_VERSION = '4.3.11'
export const COOLIFY_COMMIT = '379abb252621f34b318190bd49b614aed9818716'

/** [line in routes/api.php, method, path, the ability its `api.ability:` middleware names]. */
export const ROUTE_ABILITIES: ReadonlyArray<readonly [number, string, string, string]> = [
  [66, 'GET', '/version', 'read'],
  [70, 'GET', '/team', 'read'],
  [73, 'GET', '/teams/current', 'read'],
  [74, 'GET', '/teams/current/members', 'read'],
  [96, 'GET', '/projects', 'read'],
  [97, 'GET', '/projects/{uuid}', 'read'],
  [98, 'GET', '/projects/{uuid}/environments', 'read'],
  [100, 'GET', '/projects/{uuid}/envs', 'read'],
  [101, 'POST', '/projects/{uuid}/envs', 'write'],
  [102, 'PATCH', '/projects/{uuid}/envs/{env_id}', 'write'],
  [103, 'DELETE', '/projects/{uuid}/envs/{env_id}', 'write'],
  [104, 'GET', '/projects/{uuid}/environments/{environment_name_or_uuid}/envs', 'read'],
  [105, 'POST', '/projects/{uuid}/environments/{environment_name_or_uuid}/envs', 'write'],
  [106, 'PATCH', '/projects/{uuid}/environments/{environment_name_or_uuid}/envs/{env_id}', 'write'],
  [
    107,
    'DELETE',
    '/projects/{uuid}/environments/{environment_name_or_uuid}/envs/{env_id}',
    'write'
  ],
  [108, 'GET', '/projects/{uuid}/{environment_name_or_uuid}', 'read'],
  [109, 'POST', '/projects/{uuid}/environments', 'write'],
  [110, 'PATCH', '/projects/{uuid}/environments/{environment_name_or_uuid}', 'write'],
  [111, 'DELETE', '/projects/{uuid}/environments/{environment_name_or_uuid}', 'write'],
  [113, 'POST', '/projects', 'write'],
  [114, 'PATCH', '/projects/{uuid}', 'write'],
  [115, 'DELETE', '/projects/{uuid}', 'write'],
  [144, 'GET', '/deploy', 'deploy'],
  [145, 'POST', '/deploy', 'deploy'],
  [146, 'GET', '/deployments', 'read'],
  [147, 'GET', '/deployments/{uuid}', 'read'],
  [148, 'POST', '/deployments/{uuid}/cancel', 'deploy'],
  [149, 'GET', '/deployments/applications/{uuid}', 'read'],
  [178, 'GET', '/destinations', 'read'],
  [182, 'GET', '/servers/{server_uuid}/destinations', 'read'],
  [183, 'POST', '/servers/{server_uuid}/destinations', 'write'],
  [185, 'GET', '/servers/{uuid}/validate', 'write'],
  [186, 'POST', '/servers/{uuid}/validate', 'write'],
  [230, 'GET', '/applications', 'read'],
  [231, 'POST', '/applications/public', 'write'],
  [232, 'POST', '/applications/private-github-app', 'write'],
  [233, 'POST', '/applications/private-deploy-key', 'write'],
  [234, 'POST', '/applications/dockerfile', 'write'],
  [235, 'POST', '/applications/dockerimage', 'write'],
  [237, 'GET', '/applications/{uuid}', 'read'],
  [238, 'PATCH', '/applications/{uuid}', 'write'],
  [239, 'DELETE', '/applications/{uuid}', 'write'],
  [241, 'GET', '/applications/{uuid}/envs', 'read'],
  [242, 'POST', '/applications/{uuid}/envs', 'write'],
  [243, 'PATCH', '/applications/{uuid}/envs/bulk', 'write'],
  [244, 'PATCH', '/applications/{uuid}/envs', 'write'],
  [245, 'DELETE', '/applications/{uuid}/envs/{env_uuid}', 'write'],
  [246, 'GET', '/applications/{uuid}/logs', 'read'],
  [247, 'GET', '/applications/{uuid}/storages', 'read'],
  [248, 'POST', '/applications/{uuid}/storages', 'write'],
  [249, 'PATCH', '/applications/{uuid}/storages', 'write'],
  [250, 'DELETE', '/applications/{uuid}/storages/{storage_uuid}', 'write'],
  [261, 'GET', '/applications/{uuid}/tags', 'read'],
  [262, 'POST', '/applications/{uuid}/tags', 'write'],
  [263, 'DELETE', '/applications/{uuid}/tags/{tag_uuid}', 'write'],
  [265, 'POST', '/applications/{uuid}/move', 'write'],
  [266, 'POST', '/applications/{uuid}/migrate', 'write'],
  [267, 'POST', '/applications/{uuid}/clone', 'write'],
  [268, 'GET', '/applications/{uuid}/rollback-images', 'read'],
  [269, 'POST', '/applications/{uuid}/rollback', 'deploy'],
  [270, 'GET', '/applications/{uuid}/destinations', 'read'],
  [271, 'POST', '/applications/{uuid}/destinations', 'write'],
  [272, 'DELETE', '/applications/{uuid}/destinations/{destination_uuid}', 'write'],
  [273, 'GET', '/applications/{uuid}/start', 'deploy'],
  [274, 'GET', '/applications/{uuid}/restart', 'deploy'],
  [275, 'GET', '/applications/{uuid}/stop', 'deploy'],
  [276, 'POST', '/applications/{uuid}/start', 'deploy'],
  [277, 'POST', '/applications/{uuid}/restart', 'deploy'],
  [278, 'POST', '/applications/{uuid}/stop', 'deploy'],
  [280, 'DELETE', '/applications/{uuid}/previews/{pull_request_id}', 'write'],
  [294, 'GET', '/databases', 'read'],
  [295, 'POST', '/databases/postgresql', 'write'],
  [296, 'POST', '/databases/mysql', 'write'],
  [297, 'POST', '/databases/mariadb', 'write'],
  [298, 'POST', '/databases/mongodb', 'write'],
  [299, 'POST', '/databases/redis', 'write'],
  [300, 'POST', '/databases/clickhouse', 'write'],
  [301, 'POST', '/databases/dragonfly', 'write'],
  [302, 'POST', '/databases/keydb', 'write'],
  [304, 'GET', '/databases/{uuid}', 'read'],
  [305, 'GET', '/databases/{uuid}/backups', 'read'],
  [306, 'GET', '/databases/{uuid}/backups/{scheduled_backup_uuid}/executions', 'read'],
  [307, 'PATCH', '/databases/{uuid}', 'write'],
  [308, 'POST', '/databases/{uuid}/backups', 'write'],
  [309, 'PATCH', '/databases/{uuid}/backups/{scheduled_backup_uuid}', 'write'],
  [310, 'DELETE', '/databases/{uuid}', 'write'],
  [311, 'GET', '/databases/{uuid}/logs', 'read'],
  [312, 'DELETE', '/databases/{uuid}/backups/{scheduled_backup_uuid}', 'write'],
  [
    313,
    'DELETE',
    '/databases/{uuid}/backups/{scheduled_backup_uuid}/executions/{execution_uuid}',
    'write'
  ],
  [315, 'GET', '/databases/{uuid}/storages', 'read'],
  [316, 'POST', '/databases/{uuid}/storages', 'write'],
  [317, 'PATCH', '/databases/{uuid}/storages', 'write'],
  [318, 'DELETE', '/databases/{uuid}/storages/{storage_uuid}', 'write'],
  [329, 'GET', '/databases/{uuid}/envs', 'read'],
  [330, 'POST', '/databases/{uuid}/envs', 'write'],
  [331, 'PATCH', '/databases/{uuid}/envs/bulk', 'write'],
  [332, 'PATCH', '/databases/{uuid}/envs', 'write'],
  [333, 'DELETE', '/databases/{uuid}/envs/{env_uuid}', 'write'],
  [335, 'GET', '/databases/{uuid}/tags', 'read'],
  [336, 'POST', '/databases/{uuid}/tags', 'write'],
  [337, 'DELETE', '/databases/{uuid}/tags/{tag_uuid}', 'write'],
  [339, 'POST', '/databases/{uuid}/move', 'write'],
  [340, 'POST', '/databases/{uuid}/migrate', 'write'],
  [341, 'POST', '/databases/{uuid}/clone', 'write'],
  [342, 'GET', '/databases/{uuid}/start', 'deploy'],
  [343, 'GET', '/databases/{uuid}/restart', 'deploy'],
  [344, 'GET', '/databases/{uuid}/stop', 'deploy'],
  [345, 'POST', '/databases/{uuid}/start', 'deploy'],
  [346, 'POST', '/databases/{uuid}/restart', 'deploy'],
  [347, 'POST', '/databases/{uuid}/stop', 'deploy'],
  [349, 'GET', '/services', 'read'],
  [350, 'POST', '/services', 'write'],
  [352, 'GET', '/services/{uuid}', 'read'],
  [353, 'PATCH', '/services/{uuid}', 'write'],
  [354, 'DELETE', '/services/{uuid}', 'write'],
  [356, 'GET', '/services/{uuid}/storages', 'read'],
  [357, 'POST', '/services/{uuid}/storages', 'write'],
  [358, 'PATCH', '/services/{uuid}/storages', 'write'],
  [359, 'DELETE', '/services/{uuid}/storages/{storage_uuid}', 'write'],
  [370, 'GET', '/services/{uuid}/envs', 'read'],
  [371, 'POST', '/services/{uuid}/envs', 'write'],
  [372, 'PATCH', '/services/{uuid}/envs/bulk', 'write'],
  [373, 'PATCH', '/services/{uuid}/envs', 'write'],
  [374, 'DELETE', '/services/{uuid}/envs/{env_uuid}', 'write'],
  [375, 'GET', '/services/{uuid}/logs', 'read'],
  [377, 'GET', '/services/{uuid}/tags', 'read'],
  [378, 'POST', '/services/{uuid}/tags', 'write'],
  [379, 'DELETE', '/services/{uuid}/tags/{tag_uuid}', 'write'],
  [381, 'POST', '/services/{uuid}/move', 'write'],
  [382, 'POST', '/services/{uuid}/migrate', 'write'],
  [383, 'POST', '/services/{uuid}/clone', 'write'],
  [384, 'GET', '/services/{uuid}/start', 'deploy'],
  [385, 'GET', '/services/{uuid}/restart', 'deploy'],
  [386, 'GET', '/services/{uuid}/stop', 'deploy'],
  [387, 'POST', '/services/{uuid}/start', 'deploy'],
  [388, 'POST', '/services/{uuid}/restart', 'deploy'],
  [389, 'POST', '/services/{uuid}/stop', 'deploy'],
  [391, 'GET', '/services/{uuid}/applications', 'read'],
  [392, 'GET', '/services/{uuid}/applications/{app_uuid}', 'read'],
  [393, 'PATCH', '/services/{uuid}/applications/{app_uuid}', 'write'],
  [395, 'GET', '/services/{uuid}/applications/{app_uuid}/start', 'deploy'],
  [396, 'GET', '/services/{uuid}/applications/{app_uuid}/restart', 'deploy'],
  [397, 'GET', '/services/{uuid}/applications/{app_uuid}/stop', 'deploy'],
  [398, 'POST', '/services/{uuid}/applications/{app_uuid}/start', 'deploy'],
  [399, 'POST', '/services/{uuid}/applications/{app_uuid}/restart', 'deploy'],
  [400, 'POST', '/services/{uuid}/applications/{app_uuid}/stop', 'deploy'],
  [402, 'GET', '/services/{uuid}/databases', 'read'],
  [403, 'GET', '/services/{uuid}/databases/{database_uuid}', 'read'],
  [404, 'PATCH', '/services/{uuid}/databases/{database_uuid}', 'write'],
  [405, 'GET', '/services/{uuid}/databases/{database_uuid}/logs', 'read'],
  [406, 'POST', '/services/{uuid}/databases/{database_uuid}/start', 'deploy'],
  [407, 'POST', '/services/{uuid}/databases/{database_uuid}/restart', 'deploy'],
  [408, 'POST', '/services/{uuid}/databases/{database_uuid}/stop', 'deploy'],
  [410, 'GET', '/applications/{uuid}/scheduled-tasks', 'read'],
  [411, 'POST', '/applications/{uuid}/scheduled-tasks', 'write'],
  [412, 'PATCH', '/applications/{uuid}/scheduled-tasks/{task_uuid}', 'write'],
  [413, 'DELETE', '/applications/{uuid}/scheduled-tasks/{task_uuid}', 'write'],
  [414, 'GET', '/applications/{uuid}/scheduled-tasks/{task_uuid}/executions', 'read'],
  [415, 'POST', '/applications/{uuid}/scheduled-tasks/{task_uuid}/execute', 'write'],
  [417, 'GET', '/services/{uuid}/scheduled-tasks', 'read'],
  [418, 'POST', '/services/{uuid}/scheduled-tasks', 'write'],
  [419, 'PATCH', '/services/{uuid}/scheduled-tasks/{task_uuid}', 'write'],
  [420, 'DELETE', '/services/{uuid}/scheduled-tasks/{task_uuid}', 'write'],
  [421, 'GET', '/services/{uuid}/scheduled-tasks/{task_uuid}/executions', 'read'],
  [422, 'POST', '/services/{uuid}/scheduled-tasks/{task_uuid}/execute', 'write']
]

/** The row Coolify would match for a request, in the order routes/api.php declares them. */
export function routeAbility(
  method: string,
  path: string
): { line: number; route: string; ability: string } | undefined {
  for (const [line, verb, route, ability] of ROUTE_ABILITIES) {
    const pattern = new RegExp(`^${route.replace(/\{[^}]+\}/g, '[^/]+')}$`)
    if (verb === method && pattern.test(path)) return { line, route, ability }
  }
  return undefined
}

/**
 * What Coolify answers a token of a plain team member (neither admin nor owner), by version. The
 * team check (app/Http/Middleware/EnsureTokenBelongsToCurrentTeamMember.php) runs on every route
 * before the route's ability check (app/Http/Middleware/ApiAbility.php).
 */
export const MEMBER_REFUSALS: ReadonlyArray<{
  since: string
  abilities: string[]
  message: string
  source: string
}> = [
  {
    since: '4.1.2',
    abilities: ['root', 'write', 'write:sensitive'],
    message: 'Missing required team role.',
    source:
      'v4.1.2 EnsureTokenBelongsToCurrentTeamMember.php 29-33 (the middleware is new in 4.1.2)'
  },
  {
    since: '4.2.0',
    abilities: ['deploy', 'read:sensitive'],
    message: 'This API token has permissions (…) that exceed your current role as a team member.',
    source: 'v4.2.0 ApiAbility.php 13-36 (the team check above still refuses root and write first)'
  },
  {
    since: '4.3.0',
    abilities: ['root', 'write', 'write:sensitive', 'deploy', 'read:sensitive'],
    message: 'Missing required team role.',
    source: 'v4.3.0 EnsureTokenBelongsToCurrentTeamMember.php 29-52'
  }
]
