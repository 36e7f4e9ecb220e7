/** /deploy and /deployments: trigger, read, history, cancel. */
import { laravelValidation } from './context.js'
import type { Ctx } from './context.js'
import { isoDate, laravelDate } from './format.js'
import { coolifyLogs, seedLogs } from './logs.js'
import { dockerImagePreview } from './previews.js'
import { json } from './reply.js'
import type { Reply } from './reply.js'
import { QUEUE_FULL } from './state.js'
import type { AppRecord, DeploymentRecord } from './state.js'

/** Stand-ins for the ids of the project and environment every fake app lives in. */
const PROJECT_UUID = 'p0jectfakecoolify0000001'
const ENVIRONMENT_UUID = 'e0vironmentfakecoolify01'

interface Outcome {
  message: string
  deploymentUuid?: string
  /** The server's queue is full: the whole request is answered 429, after what came before. */
  full?: boolean
}

/** Coolify's answer when a resource met a full queue: those before it stay queued. */
function queueFull(ctx: Ctx): Reply {
  return json(ctx.flavor, 429, { message: QUEUE_FULL }, { 'Retry-After': '60' })
}

/** Coolify's deploy_resource(): one message per resource, a deployment uuid for applications. */
function deployResource(
  ctx: Ctx,
  app: AppRecord,
  force: boolean,
  pr: number,
  imageTag: string | null = null
): Outcome {
  if (app.kind === 'service') {
    if (app.unauthorized) return { message: 'Unauthorized to deploy this service.' }
    ctx.store.startResource(app, ctx.now)
    return { message: `Service ${app.name} started. It could take a while, be patient.` }
  }
  if (app.kind === 'database') {
    if (app.unauthorized) return { message: 'Unauthorized to start this database.' }
    ctx.store.startResource(app, ctx.now)
    return { message: `Database ${app.name} started.` }
  }
  if (app.unauthorized) return { message: 'Unauthorized to deploy this application.' }
  if (imageTag !== null && app.build_pack !== 'dockerimage') {
    return { message: 'docker_tag can only be used with Docker Image applications.' }
  }
  const queued = ctx.store.queue(app, { force, pr, imageTag }, ctx.now)
  if (queued.kind === 'queue-full') return { message: QUEUE_FULL, full: true }
  if (queued.kind === 'already-queued') {
    return {
      message: 'Deployment already queued for this commit.',
      deploymentUuid: queued.placeholder
    }
  }
  return {
    message: `Application ${app.name} deployment queued.`,
    deploymentUuid: queued.deployment.uuid
  }
}

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').filter(s => s !== '')
}

export function deploy(ctx: Ctx): Reply {
  // Query string only: older servers never read a body.
  const { uuid, tag } = ctx.query
  const force = ctx.query.force === 'true' || ctx.query.force === '1'
  const prParam = ctx.query.pull_request_id || ctx.query.pr
  const pr = prParam ? Math.max(parseInt(prParam, 10) || 0, 0) : 0
  const dockerTag = ctx.flavor === '4x' ? ctx.query.docker_tag?.trim() || null : null
  if (uuid && tag) {
    return json(ctx.flavor, 400, { message: 'You can only use uuid or tag, not both.' })
  }
  if (tag && pr) return json(ctx.flavor, 400, { message: 'You can only use tag or pr, not both.' })
  if (dockerTag && !pr) {
    return json(ctx.flavor, 400, { message: 'docker_tag requires pull_request_id.' })
  }
  if (dockerTag && tag) {
    return json(ctx.flavor, 400, { message: 'You can only use tag or docker_tag, not both.' })
  }
  if (tag) return deployByTags(ctx, list(tag), force)
  if (uuid) return deployByUuids(ctx, list(uuid), force, pr, dockerTag)
  return json(ctx.flavor, 400, { message: 'You must provide uuid or tag.' })
}

function deployByUuids(
  ctx: Ctx,
  uuids: string[],
  force: boolean,
  pr: number,
  dockerTag: string | null
): Reply {
  if (uuids.length === 0) return json(ctx.flavor, 400, { message: 'No UUIDs provided.' })
  const deployments: Array<Record<string, string>> = []
  for (const uuid of uuids) {
    const app = ctx.store.apps.get(uuid)
    if (!app) continue // unknown uuids are skipped silently
    let imageTag = dockerTag
    if (pr) {
      // Docker-image apps get their preview made or retagged on the way.
      const preview =
        app.build_pack === 'dockerimage'
          ? dockerImagePreview(app, pr, dockerTag)
          : app.previews.find(p => p.pr === pr)
      if (!preview) {
        deployments.push({
          message: `Pull request ${pr} not found for this resource.`,
          resource_uuid: uuid
        })
        continue
      }
      if (app.build_pack === 'dockerimage') imageTag = preview.docker_registry_image_tag
    }
    const { message, deploymentUuid, full } = deployResource(ctx, app, force, pr, imageTag)
    // As by_uuids does: one by one, and a full queue answers for the whole request.
    if (full) return queueFull(ctx)
    deployments.push({
      message,
      resource_uuid: uuid,
      ...(deploymentUuid ? { deployment_uuid: deploymentUuid } : {})
    })
  }
  if (deployments.length === 0) return json(ctx.flavor, 404, { message: 'No resources found.' })
  return json(ctx.flavor, 200, { deployments })
}

function deployByTags(ctx: Ctx, tags: string[], force: boolean): Reply {
  if (tags.length === 0) return json(ctx.flavor, 400, { message: 'No TAGs provided.' })
  const messages: string[] = []
  const details: Array<Record<string, string>> = []
  const resources = [...ctx.store.apps.values()]
  for (const tag of tags) {
    const tagged = resources.filter(r => r.tags.includes(tag))
    if (tagged.length === 0) continue // no such tag
    // Coolify deploys a tag's applications, then its services; databases are not deployed by tag.
    const apps = tagged.filter(r => r.kind === 'application')
    const services = tagged.filter(r => r.kind === 'service')
    if (apps.length + services.length === 0) {
      messages.push(`No resources found for tag ${tag}.`)
      continue
    }
    for (const app of [...apps, ...services]) {
      const { message, deploymentUuid, full } = deployResource(ctx, app, force, 0)
      if (full) return queueFull(ctx)
      messages.push(message)
      if (deploymentUuid) details.push({ resource_uuid: app.uuid, deployment_uuid: deploymentUuid })
    }
  }
  if (messages.length === 0) {
    return json(ctx.flavor, 404, { message: 'No resources found with this tag.' })
  }
  return json(ctx.flavor, 200, { message: messages, ...(details.length ? { details } : {}) })
}

/** The full ApplicationDeploymentQueue row, as 4.x returns it. */
function row(ctx: Ctx, d: DeploymentRecord, withLogs: boolean): Record<string, unknown> {
  const p = ctx.store.progress(d, ctx.now)
  return {
    id: d.id,
    application_id: String(d.app.id),
    deployment_uuid: d.uuid,
    pull_request_id: d.pr,
    force_rebuild: d.force,
    commit: ctx.store.commit(d, ctx.now),
    status: ctx.store.spell(p.phase),
    is_webhook: d.webhook,
    is_api: !d.webhook,
    // timestamp(0) columns, as created_at and finished_at are: whole seconds.
    created_at: laravelDate(wholeSeconds(d.createdAt)),
    // A timestamps() column, precision 0 (migration 2023_05_24_083426): whole seconds. It moves
    // with every log entry, as addLogEntry saves the row (ApplicationDeploymentQueue.php 182-216).
    updated_at: laravelDate(wholeSeconds(p.updatedAt)),
    // Absent, not empty, without read:sensitive.
    ...(withLogs ? { logs: coolifyLogs(p.entries) } : {}),
    current_process_id: null,
    // gethostname() of the worker, written with in_progress by the job alone
    // (ApplicationDeploymentJob.php 309-312): null on a row cancelled while queued.
    horizon_job_worker: p.startedAt === null ? null : 'coolify',
    restart_only: false,
    git_type: null,
    server_id: 0,
    application_name: d.app.name,
    server_name: 'localhost',
    deployment_url: `/project/${PROJECT_UUID}/environment/${ENVIRONMENT_UUID}/application/${d.app.uuid}/deployment/${d.uuid}`,
    destination_id: '0',
    only_this_server: false,
    rollback: d.rollback,
    docker_registry_image_tag: d.imageTag,
    commit_message: null,
    // Written by the job's finally, after the post-deployment command (see Progress.finallyAt).
    finished_at: p.finallyAt === null ? null : laravelDate(wholeSeconds(p.finallyAt))
  }
}

function wholeSeconds(ms: number): number {
  return Math.floor(ms / 1000) * 1000
}

function deploymentNotFound(ctx: Ctx): Reply {
  return json(ctx.flavor, 404, { message: 'Deployment not found.' })
}

export function getDeployment(ctx: Ctx): Reply {
  const d = ctx.store.deployment(ctx.params[0])
  if (!d) return deploymentNotFound(ctx)
  if (ctx.flavor === '4x') {
    return json(ctx.flavor, 200, row(ctx, d, ctx.canReadSensitive))
  }
  const p = ctx.store.progress(d, ctx.now)
  return json(ctx.flavor, 200, {
    uuid: d.uuid,
    status: ctx.store.spell(p.phase),
    created_at: isoDate(d.createdAt),
    finished_at: p.finishedAt === null ? null : isoDate(p.finishedAt),
    logs: seedLogs(p.entries)
  })
}

/**
 * GET /deployments, as DeployController::deployments answers it: every queued or in-progress
 * deployment on the team's servers (all the fake's), each the row a read by uuid gives, logs only
 * for a token that may read sensitive data. Coolify sorts the query's rows by id afterwards
 * (`->get()->sortBy('id')`), and a Laravel collection keeps each row's key, its place in the
 * query's answer: when the database gave them in another order, JSON makes the list an object
 * keyed by those places. PostgreSQL gives them in no set order; here, as a heap does, a row written
 * later comes later.
 */
export function runningDeployments(ctx: Ctx): Reply {
  const stored = ctx.store.deployments
    .filter(d => ['queued', 'in_progress'].includes(ctx.store.status(d, ctx.now)))
    .map(d => ({ d, writtenAt: ctx.store.progress(d, ctx.now).updatedAt }))
    .sort((a, b) => a.writtenAt - b.writtenAt || a.d.id - b.d.id)
  const byId = stored.map((row, key) => ({ key, ...row })).sort((a, b) => a.d.id - b.d.id)
  const rows = byId.map(({ key, d }) => [String(key), row(ctx, d, ctx.canReadSensitive)] as const)
  const inOrder = byId.every(({ key }, index) => key === index)
  return json(ctx.flavor, 200, inOrder ? rows.map(([, value]) => value) : Object.fromEntries(rows))
}

export function listDeployments(ctx: Ctx): Reply {
  const errors: Record<string, string[]> = {}
  const number = (field: string, min: number, fallback: number): number => {
    const raw = ctx.query[field]
    if (raw === undefined || raw === '') return fallback
    if (!/^-?\d+$/.test(raw)) errors[field] = [`The ${field} field must be an integer.`]
    else if (Number(raw) < min) errors[field] = [`The ${field} field must be at least ${min}.`]
    return Number(raw)
  }
  const skip = number('skip', 0, 0)
  const take = number('take', 1, 10)
  if (Object.keys(errors).length > 0) return laravelValidation(ctx, errors)

  const app = ctx.store.application(ctx.params[0])
  // Coolify writes this one without a period.
  if (!app) return json(ctx.flavor, 404, { message: 'Application not found' })
  const all = ctx.store.deployments.filter(d => d.app === app).reverse()
  const page = all.slice(skip, skip + take)
  const items = page.map(d =>
    ctx.flavor === '4x'
      ? // Whole rows; the model hides `logs` (ApplicationDeploymentQueue.php 86-90) and the
        // history shows them only with read:sensitive (DeployController.php 727-729).
        row(ctx, d, ctx.canReadSensitive)
      : {
          deployment_uuid: d.uuid,
          status: ctx.store.status(d, ctx.now),
          commit: ctx.store.commit(d, ctx.now),
          created_at: isoDate(d.createdAt)
        }
  )
  return json(ctx.flavor, 200, { count: all.length, deployments: items })
}

export function cancelDeployment(ctx: Ctx): Reply {
  const d = ctx.store.deployment(ctx.params[0])
  if (!d) return deploymentNotFound(ctx)
  const before = ctx.store.status(d, ctx.now)
  const cancelled = ctx.store.cancel(d, ctx.now)
  if (ctx.flavor === 'seed') return json(ctx.flavor, 200, { message: 'Deployment cancelled.' })
  if (!cancelled) {
    return json(ctx.flavor, 400, {
      message: `Deployment cannot be cancelled. Current status: ${before}`
    })
  }
  return json(ctx.flavor, 200, {
    message: 'Deployment cancelled successfully.',
    deployment_uuid: d.uuid,
    status: ctx.store.status(d, ctx.now)
  })
}
