/**
 * Every key of `GET /applications/{uuid}` (Coolify 4.3.11: the applications row, what the API adds
 * to it, and its `settings` row as `settings.<key>`), and what a review app may keep of it. Coolify's
 * clone copies the whole row and its settings, so a review app starts as production: it keeps only
 * what this table lets it keep. A key the table does not know, set to anything but a default, stops
 * the review app before any write — a newer Coolify must make the action refuse, never leak.
 */

/** What the review app does with one key of the template's. */
export type FieldRule =
  /** Coolify makes it new for the clone, or it is state rather than a setting. */
  | { kind: 'identity'; why: string }
  /**
   * A setting the review app keeps as the template has it: why it cannot reach production; `job`,
   * for one Coolify's deployment job reads, what the job does with it.
   */
  | { kind: 'copied'; why: string; job?: string }
  /** The plan sets it, or checks it and refuses the template when it cannot be made safe. */
  | { kind: 'set'; why: string }
  /**
   * Put back in the first write: to Coolify's default, or off. Through the PATCH field of the same
   * name unless `field` names another (update_by_uuid's own name for it).
   */
  | { kind: 'reset'; to: null | false; why: string; field?: string }
  /** The API cannot change it: a template whose value `refuses` names is refused. */
  | { kind: 'refused'; refuses: (value: unknown) => boolean; why: string }

const identity = (why: string) => ({ kind: 'identity', why }) as const
const copied = (why: string, job?: string) =>
  ({ kind: 'copied', why, ...(job ? { job } : {}) }) as const
const set = (why: string) => ({ kind: 'set', why }) as const
const reset = (to: null | false, why: string, field?: string) =>
  ({ kind: 'reset', to, why, ...(field ? { field } : {}) }) as const

function each(keys: string[], rule: FieldRule): Array<[string, FieldRule]> {
  return keys.map(key => [key, rule])
}

const BUILD = copied(
  'how its image is built from the pull request’s code',
  'the job builds the image with it in a helper container on the review app’s own server (the build server is reset), from the pull request’s branch'
)
const HEALTH = copied(
  'how Coolify checks its own container’s health',
  'the job writes it into the review app’s container as its health check and waits on it'
)
const LIMITS = copied(
  'limits of its own container',
  'the job sets it on the review app’s own container (docker run / compose deploy resources)'
)
const COMPOSE_ONLY = copied(
  'read only for compose applications, which are refused',
  'the job reads it only for compose applications (or beside `custom_internal_name`, which is reset); compose templates are refused'
)
const SOURCE = copied(
  'where its code comes from: the same repository, read with the same access',
  'the job clones the pull request’s branch of the same repository with it (generateGitImportCommands); submodules and LFS, which reach further with the same credentials, are reset'
)
const PROXY = copied(
  'how the proxy serves its own domain',
  'the job writes it into the Traefik/Caddy labels of the review app’s own domain (generateLabelsApplication)'
)
const STATE = identity('state Coolify keeps about the running application, not a setting')

export const REVIEW_FIELDS: ReadonlyMap<string, FieldRule> = new Map<string, FieldRule>([
  // Identity: made new by the clone, or kept by Coolify as state.
  ...each(
    ['id', 'uuid', 'created_at', 'updated_at', 'deleted_at'],
    identity('made new by Coolify for the clone')
  ),
  ...each(
    ['destination_id', 'destination_type'],
    identity('where the clone was put: `review-destination`, else the template’s primary one')
  ),
  ...each(
    [
      'status',
      'server_status',
      'last_online_at',
      'config_hash',
      'restart_count',
      'last_restart_at',
      'last_restart_type',
      'custom_healthcheck_found',
      'domain_dns_statuses',
      'additional_servers_count',
      'additional_networks_count'
    ],
    STATE
  ),
  [
    'environment_id',
    copied(
      'the clone stays in the template’s environment (the clone route has no other): its shared variables resolve there, so variables are compared by resolved value'
    )
  ],

  // Set by the plan, or checked by it.
  ...each(['name', 'description'], set('the review app’s name and marker')),
  ['fqdn', set('`review-domain`; none when not given, and the read-back checks no host is left')],
  ['noindex_domains', set('Coolify keeps it to a part of the domains, which the plan sets')],
  ['git_branch', set('the pull request’s branch, written last')],
  [
    'git_commit_sha',
    set(
      'the pull request’s head commit the event names, on every run: production’s pin would build production’s commit, `HEAD` whatever the branch holds when the build starts'
    )
  ],
  ...each(
    [
      'manual_webhook_secret_github',
      'manual_webhook_secret_gitlab',
      'manual_webhook_secret_bitbucket',
      'manual_webhook_secret_gitea'
    ],
    set('cleared: a push signed with production’s secret would deploy it')
  ),
  ['settings.is_auto_deploy_enabled', set('off: only this action deploys it')],
  [
    'custom_labels',
    set('made by Coolify from the review domain (readonly labels); the read-back checks no host')
  ],
  [
    'settings.is_container_label_readonly_enabled',
    {
      kind: 'refused',
      refuses: value => value === false,
      why: '"Readonly labels" is off, so its clone keeps production’s labels, which route production’s traffic: turn "Readonly labels" on in the template'
    }
  ],
  [
    'build_pack',
    {
      kind: 'refused',
      refuses: value => value === 'dockercompose' || value === 'dockerimage',
      why: 'docker compose or a Docker image: a compose file is read from the pull request’s branch when it deploys (it could mount the Docker socket or run privileged on production’s server), and an image has no branch to build; give review apps a Dockerfile, Nixpacks or static template'
    }
  ],
  ['docker_compose_domains', set('compose applications are refused; the read-back checks no host')],

  // Reset to Coolify's default before anything else, each because it reaches production.
  [
    'settings.custom_internal_name',
    reset(
      null,
      'the container is named after it, and the first deploy removes the running container of that name: production’s'
    )
  ],
  [
    'custom_docker_run_options',
    reset(null, 'options such as --privileged, --cap-add or --device on production’s server')
  ],
  [
    'docker_registry_image_name',
    reset(null, 'its build would be pushed to production’s image repository')
  ],
  [
    'docker_registry_image_tag',
    reset(null, 'its build would be tagged as production’s image, e.g. :production')
  ],
  [
    'custom_network_aliases',
    reset(null, 'production’s neighbours would reach it under production’s names')
  ],
  ['ports_mappings', reset(null, 'it would publish production’s host ports')],
  [
    'settings.connect_to_docker_network',
    reset(false, 'it would join the destination’s network under its service names')
  ],
  [
    'settings.is_preview_deployments_enabled',
    reset(false, 'Coolify would build previews of every pull request on it as well')
  ],
  ['settings.is_pr_deployments_public_enabled', reset(false, 'goes with previews, which are off')],
  [
    'settings.is_preserve_repository_enabled',
    reset(
      false,
      'the job copies the built repository onto the server (/data/coolify/applications/<uuid>) and writes README.md and .env into it through the shell: a symlink committed there writes as the server’s user, even when the build fails'
    )
  ],
  [
    'settings.is_git_lfs_enabled',
    reset(
      false,
      'the job runs git lfs pull with the same GitHub App token or deploy key: a .lfsconfig on the branch could fetch from any repository they reach (a template with it on is refused: the clone fetches LFS objects even with it off; an application created from the repository starts with it on)'
    )
  ],
  [
    'settings.is_build_server_enabled',
    reset(
      false,
      'the job builds on one of the team’s build servers, whatever `review-destination` says, with its Docker socket, registry credentials and host network',
      'use_build_server'
    )
  ],
  [
    'settings.is_git_submodules_enabled',
    reset(
      false,
      'the job clones submodules from the branch’s .gitmodules with the template’s GitHub App token or deploy key: a pull request could add any private repository they reach and ship it in the image'
    )
  ],
  [
    'is_http_basic_auth_enabled',
    reset(
      false,
      'Traefik’s basicauth forwards the Authorization header to the container: every reviewer who logs in would hand production’s password to pull request code'
    )
  ],

  // Copied: settings of its own container and build.
  ...each(
    ['repository_project_id', 'git_repository', 'source_id', 'source_type', 'private_key_id'],
    SOURCE
  ),
  ['git_full_url', copied('the repository’s address as shown; the job clones from git_repository')],
  [
    'watch_paths',
    copied('which pushed paths trigger a webhook deploy, which is off (auto-deploy and secrets)')
  ],
  ...each(
    [
      'static_image',
      'install_command',
      'build_command',
      'start_command',
      'base_directory',
      'publish_directory',
      'dockerfile',
      'dockerfile_location',
      'dockerfile_target_build',
      'custom_nginx_configuration',
      'settings.is_static',
      'settings.is_spa',
      'settings.is_git_shallow_clone_enabled',
      'settings.disable_build_cache',
      'settings.use_build_secrets',
      'settings.inject_build_args_to_dockerfile',
      'settings.include_source_commit_in_build',
      'settings.is_env_sorting_enabled'
    ],
    BUILD
  ),
  [
    'ports_exposes',
    copied(
      'ports inside its own container, reached through its own domain',
      'the job exposes them on the review app’s own container and routes its own domain to the first'
    )
  ],
  [
    'preview_url_template',
    copied('the address of Coolify’s own previews of it, which are turned off')
  ],
  ...each(
    [
      'redirect',
      'settings.is_force_https_enabled',
      'settings.is_gzip_enabled',
      'settings.is_stripprefix_enabled',
      'settings.is_container_label_escape_enabled'
    ],
    PROXY
  ),
  ...each(
    ['http_basic_auth_username', 'http_basic_auth_password'],
    copied(
      'Coolify refuses a null one, so the value stays in the row, unused',
      'the job writes it into the basicauth middleware of the proxy labels only while `is_http_basic_auth_enabled` is on, which is reset'
    )
  ),
  ...each(
    [
      'pre_deployment_command',
      'pre_deployment_command_container',
      'post_deployment_command',
      'post_deployment_command_container'
    ],
    copied(
      'commands run inside its own container, with its own variables',
      'the job runs it with docker exec in the review app’s own container, before or after the switch'
    )
  ),
  ...each(
    [
      'health_check_enabled',
      'health_check_type',
      'health_check_command',
      'health_check_path',
      'health_check_port',
      'health_check_host',
      'health_check_method',
      'health_check_return_code',
      'health_check_scheme',
      'health_check_interval',
      'health_check_timeout',
      'health_check_retries',
      'health_check_start_period'
    ],
    HEALTH
  ),
  [
    'health_check_response_text',
    copied('the text Coolify looks for in its own container’s health check answer')
  ],
  ...each(
    [
      'limits_memory',
      'limits_memory_swap',
      'limits_memory_swappiness',
      'limits_memory_reservation',
      'limits_cpus',
      'limits_cpuset',
      'limits_cpu_shares',
      'settings.is_gpu_enabled',
      'settings.gpu_driver',
      'settings.gpu_count',
      'settings.gpu_device_ids',
      'settings.gpu_options'
    ],
    LIMITS
  ),
  ...each(
    ['max_restart_count', 'settings.stop_grace_period', 'settings.docker_images_to_keep'],
    copied('how Coolify restarts, stops and prunes its own container and images')
  ),
  ...each(
    [
      'swarm_replicas',
      'swarm_placement_constraints',
      'settings.is_swarm_only_worker_nodes',
      'settings.is_log_drain_enabled',
      'settings.is_debug_enabled'
    ],
    copied(
      'how its own container runs and logs',
      'the job sets it on the review app’s own service or container (swarm placement, the log drain’s labels), or shows its own build’s commands in its log'
    )
  ),
  ['settings.is_include_timestamps', copied('how Coolify shows its own logs')],
  ...each(
    [
      'docker_compose_location',
      'docker_compose',
      'docker_compose_raw',
      'docker_compose_custom_start_command',
      'docker_compose_custom_build_command',
      'compose_parsing_version',
      'settings.is_raw_compose_deployment_enabled',
      'settings.is_consistent_container_name_enabled'
    ],
    COMPOSE_ONLY
  ),
  // The settings row's own keys, which Coolify hides in reads.
  ...each(
    ['settings.id', 'settings.application_id', 'settings.created_at', 'settings.updated_at'],
    identity('the settings row’s own, hidden in reads')
  )
])

/**
 * What Coolify turns on in every application it creates and the table turns off: an application
 * created from the repository (no clone) starts with these.
 */
export const NEW_APPLICATION_FIELDS: Readonly<Record<string, unknown>> = {
  'settings.is_git_submodules_enabled': true,
  'settings.is_git_lfs_enabled': true
}

/** Coolify's empty values: what an unknown key may hold and still be left alone. */
export function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '') return true
  if (Array.isArray(value)) return value.length === 0
  if (typeof value === 'object') return Object.keys(value as object).length === 0
  return false
}

/**
 * An application as `GET /applications/{uuid}` shows it, one level deep: the row's keys as they
 * are and its settings row as `settings.<key>`.
 */
export function flattenApplication(app: object): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(app)) {
    if (key === 'settings' && value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, setting] of Object.entries(value)) fields[`settings.${inner}`] = setting
    } else {
      fields[key] = value
    }
  }
  return fields
}

/**
 * The field of PATCH /applications/{uuid} that writes a key: the settings' keep their name, unless
 * the rule names update_by_uuid's own.
 */
export function patchField(key: string, rule?: FieldRule): string {
  if (rule?.kind === 'reset' && rule.field) return rule.field
  return key.startsWith('settings.') ? key.slice('settings.'.length) : key
}
