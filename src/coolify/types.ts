/** Shapes of Coolify's answers, as loose as real servers make them: every field may be missing. */

export interface ApplicationSummary {
  id?: number
  uuid: string
  name?: string
  description?: string | null
  created_at?: string
  status?: string
  /** 4.x: when Coolify last refreshed `status` from the containers (on its clock). */
  last_online_at?: string | null
  fqdn?: string | null
  git_repository?: string
  git_branch?: string
  build_pack?: string
  /** 4.x: how a preview's host is made from the app's first domain; `{{pr_id}}.{{domain}}` by default. */
  preview_url_template?: string | null
  /** 4.x: the environment it belongs to (an environment's `id` in GET /projects/{uuid}). */
  environment_id?: number
}

export interface ApplicationDetail extends Omit<ApplicationSummary, 'id'> {
  ports_exposes?: string
  /** 4.x: the pinned commit, 'HEAD' (or empty) when the branch head is built. */
  git_commit_sha?: string | null
  docker_registry_image_name?: string | null
  docker_registry_image_tag?: string | null
  /** 4.x: the servers it is deployed to besides its own (Coolify's "additional destinations"). */
  additional_networks_count?: number
  environment_variables?: Array<{ key: string; value: string; is_secret?: boolean }>
  /** Compose applications: JSON of `{service: {domain}}`. */
  docker_compose_domains?: string | null
  /** Base64; only with `read:sensitive`. */
  custom_labels?: string | null
  manual_webhook_secret_github?: string | null
  manual_webhook_secret_gitlab?: string | null
  manual_webhook_secret_bitbucket?: string | null
  manual_webhook_secret_gitea?: string | null
  /** 4.x: the application's settings row. */
  settings?: {
    is_auto_deploy_enabled?: boolean
    is_container_label_readonly_enabled?: boolean
    /** From 4.1: seconds a container stopped in a deployment is given before it is killed. */
    stop_grace_period?: number | null
  } | null
}

/** GET /applications/{uuid}/storages (4.3+). */
export interface ApplicationStorages {
  /** Named volumes, and bind mounts (those with a `host_path`). */
  persistent_storages?: Array<{
    uuid?: string
    name?: string
    mount_path?: string
    host_path?: string | null
  }>
  /** Files and directories of the server mounted into the container. */
  file_storages?: Array<{ uuid?: string; fs_path?: string; mount_path?: string }>
}

/** A scheduled task as GET /applications/{uuid}/scheduled-tasks lists it. */
export interface ScheduledTask {
  uuid?: string
  name?: string
}

/** The write side of an application: `domains` sets what reads show as `fqdn`. */
export interface ApplicationChanges {
  name?: string
  description?: string
  domains?: string
  git_branch?: string
  git_repository?: string
  /**
   * `KEY=value` entries separated by newlines: the seed contract's way to set variables. Coolify
   * 4.x refuses this field (422); it takes variables through PATCH /applications/{uuid}/envs/bulk.
   */
  environment_variables?: string
  dockerfile_location?: string
  /** The commit every deploy builds; 'HEAD' builds the branch head. */
  git_commit_sha?: string
  /** Docker-image apps: the tag the next deployment pulls. */
  docker_registry_image_tag?: string | null
  /** Whether a push to its branch deploys it. */
  is_auto_deploy_enabled?: boolean
  /** Empty clears one (Coolify reads '' as null): a push signed with it no longer deploys. */
  manual_webhook_secret_github?: string
  manual_webhook_secret_gitlab?: string
  manual_webhook_secret_bitbucket?: string
  manual_webhook_secret_gitea?: string
  /** Compose applications: the domain(s) of each service; the ones not named lose theirs. */
  docker_compose_domains?: Array<{ name: string; domain: string }>
  /** What a review app's clone must not keep of production's (review-app/fields.ts), put back. */
  custom_internal_name?: null
  custom_docker_run_options?: null
  docker_registry_image_name?: null
  custom_network_aliases?: null
  ports_mappings?: null
  connect_to_docker_network?: false
  is_preview_deployments_enabled?: false
  is_pr_deployments_public_enabled?: false
}

/** One variable for PATCH /applications/{uuid}/envs/bulk, which creates or updates it by key. */
export interface EnvVariable {
  key: string
  value: string
  /** The pull request previews' variable, not production's. */
  is_preview?: boolean
  /**
   * Coolify's defaults when left out: false, false, true, true. For an existing variable the bulk
   * route sets `is_literal` to false and `is_multiline`/`is_shown_once` to null when left out.
   */
  is_literal?: boolean
  is_multiline?: boolean
  is_shown_once?: boolean
  is_runtime?: boolean
  is_buildtime?: boolean
}

/** A variable as the bulk route answers it; `value` is left out without `write:sensitive`. */
export interface SavedEnvVariable {
  uuid?: string
  key: string
  value?: string | null
}

export interface DeployRequest {
  uuids?: string[]
  tags?: string[]
  force?: boolean
  pr?: number
  /** Docker-image apps, with `pr`: the preview's image tag; Coolify creates the preview if needed. */
  dockerTag?: string
}

/** One entry of a deploy answer, from either shape (`deployments` or tag deploy's `details`). */
export interface DeployEntry {
  message?: string
  resource_uuid?: string
  deployment_uuid?: string
}

export interface DeployAnswer {
  deployments?: DeployEntry[]
  message?: string | string[]
  details?: DeployEntry[]
}

export interface HistoryItem {
  deployment_uuid: string
  status?: string
  commit?: string | null
  created_at?: string
  /** 4.x: null until the deployment ends. */
  finished_at?: string | null
  /** 4.x: 0 for production deployments. */
  pull_request_id?: number | string
  /** 4.x: set on the rows of Docker-image previews only. */
  docker_registry_image_tag?: string | null
  /** 4.x: queued by a git provider's webhook, or by the API. */
  is_webhook?: boolean
  is_api?: boolean
  /** 4.x: the whole log, as a read by uuid gives it, whatever the token's abilities. */
  logs?: string | null
}

export interface DeploymentHistory {
  count?: number
  deployments: HistoryItem[]
}

export interface DeploymentDetail {
  /** 4.x names the id `deployment_uuid`; the contract names it `uuid`. */
  deployment_uuid?: string
  uuid?: string
  status?: string
  application_name?: string
  commit?: string | null
  commit_message?: string | null
  /** The deployment's page in Coolify's UI, relative to the instance. */
  deployment_url?: string | null
  created_at?: string
  finished_at?: string | null
  /** Moves with every log entry written (Coolify saves the row each time), to the second. */
  updated_at?: string
  /**
   * The host of the worker whose job took the row, written with `in_progress` and by the job alone
   * (ApplicationDeploymentJob.php 309-312): null while queued.
   */
  horizon_job_worker?: string | null
  /** 4.x: set on the rows of Docker-image previews only. */
  docker_registry_image_tag?: string | null
  /** Absent without the `read:sensitive` ability; a JSON array in a string (4.x) or plain text. */
  logs?: string | null
}

/** GET /applications/{uuid}/logs: the running container's last lines. */
export interface RuntimeLogs {
  logs?: string | null
}

/** POST /applications/{uuid}/rollback (4.3+). */
export interface RollbackImages {
  current?: string | null
  images?: Array<{ tag?: string; created_at?: string; is_current?: boolean }>
}

export interface RollbackAnswer {
  message?: string
  deployment_uuid?: string
}

/** A service's part as GET /services/{uuid} lists it: `name` is what its log route takes. */
export interface ServicePart {
  uuid?: string
  name?: string
  /** `state:health`, as for applications; refreshed by Coolify in the background. */
  status?: string
  /** When Coolify last refreshed `status` (ISO 8601, Coolify's clock). */
  last_online_at?: string | null
  /** Left out of the service's status by its owner. */
  exclude_from_status?: boolean
}

/** GET /services/{uuid}; `status` is Coolify's aggregate of its parts'. */
export interface ServiceDetail {
  uuid?: string
  name?: string
  status?: string
  /** In lists: the environment it belongs to. */
  environment_id?: number
  applications?: ServicePart[]
  databases?: ServicePart[]
}

/** GET /databases/{uuid}. */
export interface DatabaseDetail {
  uuid?: string
  name?: string
  status?: string
  last_online_at?: string | null
  /** In lists: the environment it belongs to. */
  environment_id?: number
}

/** A project as GET /projects lists it. */
export interface ProjectSummary {
  id?: number
  uuid?: string
  name?: string
}

/**
 * GET /projects/{uuid}: the project with its environments (Coolify loads them; its OpenAPI
 * document leaves them out).
 */
export interface ProjectDetail extends ProjectSummary {
  environments?: Array<{ id?: number; uuid?: string; name?: string }>
}

/** An answer with the time on Coolify's clock when it was sent (its `Date` header). */
/** GET /team: the team the token belongs to. */
export interface Team {
  id?: number
  name?: string
}

export interface Dated<T> {
  body: T
  /** Epoch ms, to the second; undefined when the answer carried no `Date`. */
  date?: number
  /** Bytes the answer's body took on the wire, compressed or not. */
  wireBytes?: number
}

/** GET /applications/{uuid}/destinations (4.3+): where a clone may go, the primary first. */
export interface Destination {
  uuid?: string
  name?: string
  server_uuid?: string
  is_primary?: boolean
}

/** A Coolify tag on a resource. */
export interface Tag {
  uuid?: string
  name?: string
}

/** A variable as GET /applications/{uuid}/envs lists it; `value` only with `read:sensitive`. */
export interface ListedEnvVariable {
  uuid?: string
  key?: string
  value?: string | null
  /** The value with shared-variable references resolved (`read:sensitive`). */
  real_value?: string | null
  is_preview?: boolean
  /** Locked: its value is shown to no token, root included. */
  is_shown_once?: boolean
  is_literal?: boolean
  is_multiline?: boolean
  is_runtime?: boolean
  is_buildtime?: boolean
}

/** The seed's POST /applications/private-deploy-key. */
export interface NewApplication {
  project_uuid: string
  server_uuid: string
  environment_name: string
  private_key_uuid: string
  git_repository: string
  git_branch: string
  build_pack: string
  ports_exposes: string
  name?: string
  description?: string
  domains?: string
  /** Required by Coolify when the server has several destinations. */
  destination_uuid?: string
}
