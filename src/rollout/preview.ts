/** Pull request previews on Coolify's side: their address, and removing one. */
import type { CoolifyClient } from '../coolify/client.js'
import { CoolifyError } from '../coolify/errors.js'
import type { ApplicationSummary } from '../coolify/types.js'

const DEFAULT_TEMPLATE = '{{pr_id}}.{{domain}}'

/**
 * The address Coolify gives an application's preview of pull request `pr`: the template's host
 * in place of the host of the application's first domain, whose scheme, port and path stay.
 * Undefined without a domain, and when the template holds `{{random}}`, a value Coolify draws
 * when it creates the preview and does not tell.
 */
export function previewUrl(app: ApplicationSummary, pr: number): string | undefined {
  const first = app.fqdn?.split(',')[0]?.trim()
  if (!first) return undefined
  const template = app.preview_url_template?.trim() || DEFAULT_TEMPLATE
  if (template.includes('{{random}}')) return undefined
  let url: URL
  try {
    url = new URL(first)
  } catch {
    return undefined
  }
  const host = template.replaceAll('{{domain}}', url.hostname).replaceAll('{{pr_id}}', String(pr))
  const port = url.port ? `:${url.port}` : ''
  const path = url.pathname === '/' ? '' : url.pathname
  return `${url.protocol}//${host}${port}${path}`
}

const NO_PREVIEW = /^Pull request \d+ not found for this resource/i

/**
 * Coolify's answer for a git application without a preview of the pull request, turned into what
 * to do about it; other messages are returned as they are.
 */
export function explainDeployMessage(message: string): string {
  if (!NO_PREVIEW.test(message)) return message
  return (
    `${message} Coolify creates a git application's preview itself, when its GitHub App or ` +
    'webhook reports the pull request: turn on Preview Deployments in the application’s ' +
    'settings (with a GitHub App as its source), open or push to the pull request, then deploy ' +
    'with `pr`. Docker-image applications get one from `pr` with `image-tag`.'
  )
}

/**
 * Removes the preview of pull request `pr`. True when Coolify removed it, false when it was already
 * gone; anything else throws.
 */
export async function deletePreview(
  client: CoolifyClient,
  appUuid: string,
  pr: number,
  signal: AbortSignal
): Promise<boolean> {
  try {
    await client.deletePreview(appUuid, pr, signal)
    return true
  } catch (error) {
    const gone =
      error instanceof CoolifyError &&
      error.status === 404 &&
      /preview not found/i.test(error.details.serverMessage ?? '')
    if (gone) return false
    throw error
  }
}
