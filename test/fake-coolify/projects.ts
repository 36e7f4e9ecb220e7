/**
 * /projects (4x): the team's projects, and one project with its environments. Coolify's own
 * OpenAPI document shows neither the environments nor that GET /projects/{uuid} loads them; the
 * controller does (ProjectController::project_by_uuid).
 */
import type { Ctx } from './context.js'
import { laravelDate } from './format.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'

function timestamps(ctx: Ctx): Record<string, string> {
  const created = laravelDate(ctx.store.bootedAt - 24 * 3600_000)
  return { created_at: created, updated_at: created }
}

/** GET /projects: `select('id', 'name', 'description', 'uuid')`, no environments. */
export function listProjects(ctx: Ctx): Reply {
  return json(
    ctx.flavor,
    200,
    ctx.store.projects.map(project => ({
      id: project.id,
      uuid: project.uuid,
      name: project.name,
      description: null
    }))
  )
}

/** GET /projects/{uuid}: the whole row, its environments loaded. */
export function getProject(ctx: Ctx): Reply {
  const project = ctx.store.projects.find(p => p.uuid === ctx.params[0])
  if (!project) return json(ctx.flavor, 404, { message: 'Project not found.' })
  return json(ctx.flavor, 200, {
    id: project.id,
    uuid: project.uuid,
    name: project.name,
    description: null,
    team_id: 0,
    ...timestamps(ctx),
    environments: project.environments.map(environment => ({
      id: environment.id,
      uuid: environment.uuid,
      name: environment.name,
      description: null,
      project_id: project.id,
      ...timestamps(ctx)
    }))
  })
}
