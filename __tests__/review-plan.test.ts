/** The review app's plan on its own: target, order of writes, refusals, and the read-back. */
import { describe, expect, it } from '@jest/globals'
import {
  planReviewApp,
  tracesOfProduction,
  type ReadBack,
  type ReviewRequest,
  type TemplateFacts,
  type Write
} from '../src/review-app/plan.js'
import { flattenApplication } from '../src/review-app/fields.js'
import {
  APPLICATION_COLUMNS,
  APPLICATION_SETTINGS_COLUMNS
} from '../test/fixtures/coolify-4.3.11-columns.js'

/** A template as 4.3.11 shows it: every column at its default, but for what a test sets. */
function row(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...flattenApplication({ ...APPLICATION_COLUMNS, settings: APPLICATION_SETTINGS_COLUMNS }),
    name: 'web',
    fqdn: 'https://web.example.com,https://www.example.com',
    build_pack: 'dockerfile',
    ...fields
  }
}

const TEMPLATE: TemplateFacts = {
  name: 'web',
  fields: row(),
  cloned: true,
  fqdn: 'https://web.example.com,https://www.example.com',
  buildPack: 'dockerfile',
  composeDomains: {},
  customLabels: 'traefik.http.routers.x.rule=Host(`web.example.com`)',
  persistentStorages: [{ name: 'tpl-data', mount_path: '/data', host_path: null }],
  fileStorages: [],
  variables: [
    { key: 'API_URL', value: 'https://api.example.com', is_preview: false },
    { key: 'SECRET', value: 'sk_live', is_preview: false },
    { key: 'LOCKED', is_preview: false, is_shown_once: true },
    { key: 'API_URL', value: 'https://api.staging.example.com', is_preview: true },
    {
      key: 'TEMPLATE',
      value: 'a$b\nc',
      is_preview: true,
      is_literal: true,
      is_multiline: true,
      is_runtime: true,
      is_buildtime: false
    },
    { key: 'SECRET', value: 'sk_live', is_preview: true },
    { key: 'LOCKED', value: 'seen', is_preview: true },
    { key: 'ONCE', is_preview: true, is_shown_once: true }
  ]
}

const REQUEST: ReviewRequest = {
  branch: 'feature/x',
  domain: 'https://pr-7.preview.example.com',
  env: [{ key: 'PR_NUMBER', value: '7' }],
  pending: 'Review app … (being set up)',
  marker: 'Review app …'
}

function planned(template: TemplateFacts = TEMPLATE, request: ReviewRequest = REQUEST) {
  const plan = planReviewApp(template, request)
  if (plan.refused) throw new Error(`refused: ${plan.refused.join('; ')}`)
  return plan
}

function refusal(template: Partial<TemplateFacts>, request: Partial<ReviewRequest> = {}): string {
  const plan = planReviewApp({ ...TEMPLATE, ...template }, { ...REQUEST, ...request })
  expect(plan.refused).toHaveLength(1)
  return plan.refused![0]
}

/** The writes as short names, in order. */
function steps(writes: Write[]): string[] {
  return writes.map(write =>
    write.kind === 'update' ? `update ${Object.keys(write.changes).sort().join(',')}` : write.kind
  )
}

describe('the order of writes', () => {
  it('disarms first, branch last, read back before it is marked ready', () => {
    const plan = planned()
    expect(steps(plan.writes)).toEqual([
      'update description,git_commit_sha,is_auto_deploy_enabled,is_git_lfs_enabled,is_git_submodules_enabled,manual_webhook_secret_bitbucket,manual_webhook_secret_gitea,manual_webhook_secret_github,manual_webhook_secret_gitlab',
      'update domains',
      'delete-scheduled-tasks',
      'remove-tags',
      'delete-variables',
      'set-variables',
      'update git_branch',
      'verify',
      'update description'
    ])
    expect(plan.writes[0]).toEqual({
      kind: 'update',
      changes: {
        description: REQUEST.pending,
        is_auto_deploy_enabled: false,
        git_commit_sha: 'HEAD',
        manual_webhook_secret_github: '',
        manual_webhook_secret_gitlab: '',
        manual_webhook_secret_bitbucket: '',
        manual_webhook_secret_gitea: '',
        // On in every application Coolify makes.
        is_git_submodules_enabled: false,
        is_git_lfs_enabled: false
      }
    })
    expect(plan.writes.at(-1)).toEqual({
      kind: 'update',
      changes: { description: REQUEST.marker }
    })
    expect(plan.target).toMatchObject({ domains: REQUEST.domain, branch: 'feature/x' })
  })

  it('sets no variables when there are none to set', () => {
    const plan = planned({ ...TEMPLATE, variables: [] }, { ...REQUEST, env: undefined })
    expect(steps(plan.writes)).not.toContain('set-variables')
    expect(steps(plan.writes)).toContain('delete-variables')
  })
})

describe('variables', () => {
  it('copies preview values of their own with their flags, then env; never production’s', () => {
    const plan = planned()
    expect(plan.target.variables).toEqual([
      { key: 'API_URL', value: 'https://api.staging.example.com' },
      {
        key: 'TEMPLATE',
        value: 'a$b\nc',
        is_literal: true,
        is_multiline: true,
        is_runtime: true,
        is_buildtime: false
      },
      { key: 'PR_NUMBER', value: '7' }
    ])
    expect(plan.writes).toContainEqual({ kind: 'set-variables', variables: plan.target.variables })
    expect(plan.secrets).toEqual(['https://api.staging.example.com', 'a$b\nc'])
  })

  it('names what it leaves out, keys only, and how to give the review app its own', () => {
    const warnings = planned().warnings
    expect(warnings).toHaveLength(3)
    const [twins, unverifiable, locked] = warnings
    expect(twins).toMatch(/SECRET/)
    expect(twins).toMatch(/production's/)
    expect(twins).toContain('`env`')
    expect(unverifiable).toMatch(/LOCKED/)
    expect(locked).toMatch(/ONCE.*locked/)
    expect(locked).toContain('`env`')
    for (const warning of warnings) {
      expect(warning).not.toContain('sk_live')
      expect(warning).not.toContain('seen')
    }
  })

  it('lets env supply what cannot be copied, without a warning', () => {
    const env = [
      { key: 'SECRET', value: 'sk_test' },
      { key: 'LOCKED', value: 'x' },
      { key: 'ONCE', value: 'y' }
    ]
    const plan = planned(TEMPLATE, { ...REQUEST, env })
    expect(plan.warnings).toEqual([])
    expect(plan.target.variables.map(v => v.key)).toEqual([
      'API_URL',
      'TEMPLATE',
      'SECRET',
      'LOCKED',
      'ONCE'
    ])
  })

  it('leaves out a shared variable that resolves to production’s value, or that Coolify did not resolve', () => {
    const template: TemplateFacts = {
      ...TEMPLATE,
      variables: [
        { key: 'STRIPE_KEY', value: '{{environment.STRIPE_KEY}}', real_value: 'sk_live_1' },
        { key: 'STRIPE_KEY', value: '{{ environment.STRIPE_KEY }}', is_preview: true },
        { key: 'PAYMENTS', value: '{{environment.STRIPE_KEY}}', is_preview: true },
        { key: 'PAYMENTS_2', value: 'x{{team.KEY}}', real_value: 'sk_live_1', is_preview: true },
        { key: 'PREVIEW_DB', value: '{{team.PREVIEW_DB}}', real_value: 'pg://p', is_preview: true }
      ].map(v => ({ ...v, real_value: v.real_value ?? undefined })),
      fields: row()
    }
    const plan = planned(template, { ...REQUEST, env: [] })
    expect(plan.target.variables).toEqual([{ key: 'PREVIEW_DB', value: '{{team.PREVIEW_DB}}' }])
    expect(plan.warnings).toEqual([
      expect.stringMatching(
        /^Not copied to the review app: STRIPE_KEY, PAYMENTS, PAYMENTS_2 — a shared variable/
      )
    ])
    expect(plan.warnings[0]).not.toContain('sk_live')
  })
})

describe('refusals, before any write', () => {
  it('names every bind mount and file mount', () => {
    const reason = refusal({
      persistentStorages: [
        { name: 'data', mount_path: '/data', host_path: null },
        { name: 'up', mount_path: '/uploads', host_path: '/srv/uploads' }
      ],
      fileStorages: [{ fs_path: '/data/coolify/app.db', mount_path: '/app/app.db' }]
    })
    expect(reason).toContain('/srv/uploads')
    expect(reason).toContain('/data/coolify/app.db')
    expect(reason).not.toContain('/data (')
  })

  it('needs review-domain when the template has one', () => {
    expect(refusal({}, { domain: undefined })).toContain('`review-domain`')
    expect(
      planReviewApp({ ...TEMPLATE, fqdn: '' }, { ...REQUEST, domain: undefined }).refused
    ).toBeUndefined()
  })

  it('refuses "Readonly labels" off: the clone would keep labels that route production', () => {
    const reason = refusal({
      fields: row({ 'settings.is_container_label_readonly_enabled': false })
    })
    expect(reason).toContain('settings.is_container_label_readonly_enabled')
    expect(reason).toContain('turn "Readonly labels" on')
  })

  it('refuses compose and Docker-image templates, saying why', () => {
    const compose = refusal({ fields: row({ build_pack: 'dockercompose' }) })
    expect(compose).toContain('`build_pack`')
    expect(compose).toContain('read from the pull request’s branch')
    expect(refusal({ fields: row({ build_pack: 'dockerimage' }) })).toContain('`build_pack`')
    expect(
      planReviewApp({ ...TEMPLATE, fields: row({ build_pack: 'nixpacks' }) }, REQUEST).refused
    ).toBeUndefined()
  })

  it('refuses a key it does not know that holds a value, naming it; an empty one is left alone', () => {
    const reason = refusal({
      fields: row({ future_sidecar: 'redis:7', 'settings.is_future': true })
    })
    expect(reason).toContain('`future_sidecar`, `settings.is_future`')
    expect(reason).not.toContain('redis:7')
    for (const empty of [null, false, '', [], {}]) {
      const fields = row({ future_sidecar: empty })
      expect(planReviewApp({ ...TEMPLATE, fields }, REQUEST).refused).toBeUndefined()
    }
  })
})

describe('what reaches production is reset in the first write', () => {
  const carried = {
    'settings.custom_internal_name': 'web-production',
    custom_docker_run_options: '--privileged --cap-add=SYS_ADMIN',
    docker_registry_image_name: 'registry.example.com/acme/web',
    docker_registry_image_tag: 'production',
    custom_network_aliases: 'web,api',
    ports_mappings: '8080:3000',
    'settings.connect_to_docker_network': true,
    'settings.is_preview_deployments_enabled': true,
    'settings.is_pr_deployments_public_enabled': true
  }

  it('puts each back to Coolify’s default, with the disarming and before the domain', () => {
    const plan = planned({ ...TEMPLATE, fields: row(carried) })
    expect(plan.writes[0]).toEqual({
      kind: 'update',
      changes: expect.objectContaining({
        custom_internal_name: null,
        custom_docker_run_options: null,
        docker_registry_image_name: null,
        docker_registry_image_tag: null,
        custom_network_aliases: null,
        ports_mappings: null,
        connect_to_docker_network: false,
        is_preview_deployments_enabled: false,
        is_pr_deployments_public_enabled: false,
        is_auto_deploy_enabled: false
      })
    })
  })

  it('sends only what the template set, and nothing to an application made from scratch', () => {
    const first = (template: TemplateFacts): string[] =>
      Object.keys((planned(template).writes[0] as { changes: object }).changes)
    const disarm = first(TEMPLATE)
    expect(disarm).not.toContain('custom_internal_name')
    expect(first({ ...TEMPLATE, fields: row({ ports_mappings: '80:80' }) }).sort()).toEqual(
      [...disarm, 'ports_mappings'].sort()
    )
    expect(first({ ...TEMPLATE, cloned: false, fields: row(carried) })).toEqual(disarm)
  })
})

describe('the read-back', () => {
  const clean: ReadBack = {
    fields: row({
      fqdn: REQUEST.domain,
      'settings.is_auto_deploy_enabled': false,
      'settings.is_git_submodules_enabled': false,
      'settings.is_git_lfs_enabled': false
    }),
    fqdn: REQUEST.domain,
    composeDomains: {},
    customLabels: 'traefik.http.routers.y.rule=Host(`pr-7.preview.example.com`)',
    autoDeploy: false,
    gitCommitSha: 'HEAD',
    webhookSecrets: [],
    persistentStorages: [{ name: 'clone-data', mount_path: '/data', host_path: null }],
    fileStorages: [],
    variables: [
      { key: 'API_URL', value: 'https://api.staging.example.com' },
      { key: 'PR_NUMBER', value: '7' }
    ]
  }

  it('finds nothing on a review app of its own', () => {
    expect(tracesOfProduction(TEMPLATE, clean, REQUEST.env)).toEqual([])
  })

  it('names every trace of production', () => {
    const traces = tracesOfProduction(
      {
        ...TEMPLATE,
        persistentStorages: [{ name: 'up', mount_path: '/up', host_path: '/srv/up' }],
        fileStorages: [{ fs_path: '/data/app.db', mount_path: '/app.db' }]
      },
      {
        ...clean,
        // A server without a proxy dropped the new domain.
        fqdn: 'https://WWW.example.com',
        composeDomains: { web: 'https://web.example.com' },
        customLabels: 'x.rule=Host(`web.example.com`)',
        autoDeploy: true,
        gitCommitSha: 'abc1234',
        webhookSecrets: ['manual_webhook_secret_github'],
        persistentStorages: [{ name: 'up', mount_path: '/up', host_path: '/srv/up' }],
        fileStorages: [{ fs_path: '/data/app.db', mount_path: '/app.db' }],
        variables: [...clean.variables, { key: 'SECRET', value: 'sk_live' }]
      }
    )
    expect(traces).toEqual([
      'its domains still name www.example.com (a server without a proxy keeps the old domain)',
      'its compose domains still name web.example.com',
      'its labels still route web.example.com',
      'it mounts /srv/up',
      'it mounts /data/app.db',
      "its variable(s) SECRET hold production's values",
      'auto-deploy is still on',
      'it is still pinned to commit abc1234',
      'it keeps manual_webhook_secret_github'
    ])
    for (const trace of traces) expect(trace).not.toContain('sk_live')
  })

  it('names every key the table does not let it keep, without values', () => {
    const app: ReadBack = {
      ...clean,
      fields: {
        ...clean.fields,
        'settings.custom_internal_name': 'web-production',
        'settings.is_preview_deployments_enabled': true,
        build_pack: 'dockercompose',
        future_sidecar: 'redis:7'
      }
    }
    const traces = tracesOfProduction(TEMPLATE, app, REQUEST.env)
    expect(traces).toHaveLength(4)
    expect(traces).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^its `settings.custom_internal_name` is still set \(the container/),
        expect.stringMatching(/^its `settings.is_preview_deployments_enabled` is still set/),
        expect.stringMatching(/^its `build_pack`: docker compose/),
        'it sets `future_sidecar`, which this action does not know'
      ])
    )
    for (const trace of traces) expect(trace).not.toMatch(/web-production|redis/)
  })

  it('leaves a value given with env alone', () => {
    const app = { ...clean, variables: [{ key: 'API_URL', value: 'https://api.example.com' }] }
    expect(tracesOfProduction(TEMPLATE, app)).toHaveLength(1)
    expect(
      tracesOfProduction(TEMPLATE, app, [{ key: 'API_URL', value: 'https://api.example.com' }])
    ).toEqual([])
  })
})
