/**
 * The whole applications row and its settings row, as 4.3.11's `GET /applications/{uuid}` shows
 * them (`ApplicationsController::application_by_uuid`: `with('settings')`, `removeSensitiveData`).
 * The fake models a few columns itself (AppRecord); every other one holds its default unless a test
 * sets it (FakeApp.columns), a clone copies it, or a PATCH that update_by_uuid takes changes it.
 */
import {
  APPLICATION_COLUMNS,
  APPLICATION_SETTINGS_COLUMNS
} from '../fixtures/coolify-4.3.11-columns.js'

/** Hidden from every read: `makeHidden` in removeSensitiveData, or `$hidden` never made visible. */
const NEVER_SHOWN = ['id', 'domain_dns_statuses']
const SETTINGS_NEVER_SHOWN = ['id', 'application_id', 'created_at', 'updated_at']
/** `Application::$hidden`, made visible to read:sensitive only; private_key_id hidden otherwise. */
const SENSITIVE = [
  'http_basic_auth_password',
  'manual_webhook_secret_github',
  'manual_webhook_secret_gitlab',
  'manual_webhook_secret_bitbucket',
  'manual_webhook_secret_gitea',
  'dockerfile',
  'docker_compose',
  'docker_compose_raw',
  'custom_labels',
  'private_key_id'
]

export function isApplicationColumn(field: string): boolean {
  return field in APPLICATION_COLUMNS
}

export function isSettingsColumn(field: string): boolean {
  return field in APPLICATION_SETTINGS_COLUMNS
}

/**
 * The row as a read shows it: the defaults, then `modelled` (the columns the fake keeps itself),
 * then `columns` (row keys, and `settings.<key>` for the settings row).
 */
export function rowView(
  modelled: Record<string, unknown>,
  settings: Record<string, unknown>,
  columns: Record<string, unknown>,
  canReadSensitive: boolean
): Record<string, unknown> {
  const row: Record<string, unknown> = { ...APPLICATION_COLUMNS, ...modelled }
  const settingsRow: Record<string, unknown> = { ...APPLICATION_SETTINGS_COLUMNS, ...settings }
  for (const [key, value] of Object.entries(columns)) {
    if (key.startsWith('settings.')) settingsRow[key.slice('settings.'.length)] = value
    else row[key] = value
  }
  for (const key of [...NEVER_SHOWN, ...(canReadSensitive ? [] : SENSITIVE)]) delete row[key]
  for (const key of SETTINGS_NEVER_SHOWN) delete settingsRow[key]
  return {
    ...row,
    // Added by the model: its appended accessor and the global scope's relation counts.
    server_status: false,
    additional_servers_count: columns.additional_servers_count ?? 0,
    additional_networks_count: columns.additional_networks_count ?? 0,
    settings: settingsRow
  }
}

/**
 * A PATCH field update_by_uuid stores without more ado, as the column it lands in: settings
 * through `applyApplicationSettings` (`use_build_server` is is_build_server_enabled), the rest
 * through `$application->fill()`. Laravel reads '' as null.
 */
export function storedColumn(field: string, value: unknown): [string, unknown] | undefined {
  const stored = value === '' ? null : value
  // Left as it is when null (`isset`, ApplicationsController.php 3058).
  if (field === 'use_build_server') {
    return stored === null ? undefined : ['settings.is_build_server_enabled', Boolean(stored)]
  }
  if (isSettingsColumn(field)) {
    const boolean = typeof APPLICATION_SETTINGS_COLUMNS[field] === 'boolean'
    return [`settings.${field}`, boolean ? [true, 1, '1'].includes(stored as never) : stored]
  }
  if (isApplicationColumn(field)) return [field, stored]
  return undefined
}
