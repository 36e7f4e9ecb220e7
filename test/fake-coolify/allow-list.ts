/**
 * The request fields Coolify 4.3.11 accepts, as its API controllers list them. Any other field
 * gets 422 "This field is not allowed.", whatever the OpenAPI spec says.
 */

/** PATCH /applications/{uuid} (the same list in every 4.3.x release). */
export const PATCH_ALLOWED: readonly string[] = [
  // Identity and source
  'name',
  'description',
  'domains',
  'noindex_domains',
  'redirect',
  'force_domain_override',
  'git_repository',
  'git_branch',
  'git_commit_sha',
  'docker_registry_image_name',
  'docker_registry_image_tag',
  'watch_paths',
  'preview_url_template',
  'instant_deploy',
  // Build
  'build_pack',
  'static_image',
  'is_static',
  'is_spa',
  'install_command',
  'build_command',
  'start_command',
  'base_directory',
  'publish_directory',
  'dockerfile_location',
  'dockerfile_target_build',
  'docker_compose_location',
  'docker_compose_custom_start_command',
  'docker_compose_custom_build_command',
  'docker_compose_domains',
  'use_build_server',
  'use_build_secrets',
  'custom_nginx_configuration',
  // Network and proxy
  'ports_exposes',
  'ports_mappings',
  'custom_network_aliases',
  'connect_to_docker_network',
  'custom_labels',
  'custom_docker_run_options',
  'is_container_label_escape_enabled',
  'is_http_basic_auth_enabled',
  'http_basic_auth_username',
  'http_basic_auth_password',
  // Switches
  'is_auto_deploy_enabled',
  'is_force_https_enabled',
  'is_preview_deployments_enabled',
  'is_preserve_repository_enabled',
  // Health check
  'health_check_enabled',
  'health_check_type',
  'health_check_command',
  'health_check_path',
  'health_check_port',
  'health_check_host',
  'health_check_method',
  'health_check_return_code',
  'health_check_scheme',
  'health_check_response_text',
  'health_check_interval',
  'health_check_timeout',
  'health_check_retries',
  'health_check_start_period',
  // Limits
  'limits_memory',
  'limits_memory_swap',
  'limits_memory_swappiness',
  'limits_memory_reservation',
  'limits_cpus',
  'limits_cpuset',
  'limits_cpu_shares',
  'max_restart_count',
  // Deployment commands and webhooks
  'post_deployment_command',
  'post_deployment_command_container',
  'pre_deployment_command',
  'pre_deployment_command_container',
  'manual_webhook_secret_github',
  'manual_webhook_secret_gitlab',
  'manual_webhook_secret_bitbucket',
  'manual_webhook_secret_gitea',
  // Application settings, stored beside the application
  'is_git_submodules_enabled',
  'is_git_lfs_enabled',
  'is_git_shallow_clone_enabled',
  'disable_build_cache',
  'inject_build_args_to_dockerfile',
  'include_source_commit_in_build',
  'is_env_sorting_enabled',
  'is_pr_deployments_public_enabled',
  'stop_grace_period',
  'docker_images_to_keep',
  'is_gzip_enabled',
  'is_stripprefix_enabled',
  'is_raw_compose_deployment_enabled',
  'is_log_drain_enabled',
  'is_gpu_enabled',
  'gpu_driver',
  'gpu_count',
  'gpu_device_ids',
  'gpu_options',
  'is_consistent_container_name_enabled',
  'custom_internal_name'
]

/** One item of PATCH /applications/{uuid}/envs/bulk `data`; other keys are dropped silently. */
export const ENV_FIELDS: readonly string[] = [
  'key',
  'value',
  'is_preview',
  'is_literal',
  'is_multiline',
  'is_shown_once',
  'is_runtime',
  'is_buildtime',
  'comment'
]

/** POST /applications/{uuid}/rollback. */
export const ROLLBACK_ALLOWED: readonly string[] = ['commit']
