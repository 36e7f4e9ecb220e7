/** The review app's plan on its own: target, order of writes, refusals, and the read-back. */
import { describe, expect, it } from '@jest/globals'
import {
  planReviewApp,
  resolvedValue,
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

/**
 * A template as 4.3.11 shows it: every column at its default, but for what a test sets, and Git
 * LFS off (on by default, it refuses the template).
 */
function row(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...flattenApplication({ ...APPLICATION_COLUMNS, settings: APPLICATION_SETTINGS_COLUMNS }),
    'settings.is_git_lfs_enabled': false,
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
  commit: 'c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00',
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
      'update description,git_commit_sha,is_auto_deploy_enabled,is_git_submodules_enabled,manual_webhook_secret_bitbucket,manual_webhook_secret_gitea,manual_webhook_secret_github,manual_webhook_secret_gitlab',
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
        // The pull request's head commit, never `HEAD`: whatever the branch holds at build time.
        git_commit_sha: REQUEST.commit,
        manual_webhook_secret_github: '',
        manual_webhook_secret_gitlab: '',
        manual_webhook_secret_bitbucket: '',
        manual_webhook_secret_gitea: '',
        // On in every application Coolify makes.
        is_git_submodules_enabled: false
      }
    })
    expect(plan.writes.at(-1)).toEqual({
      kind: 'update',
      changes: { description: REQUEST.marker }
    })
    expect(plan.target).toMatchObject({
      domains: REQUEST.domain,
      branch: 'feature/x',
      commit: REQUEST.commit
    })
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

  // Guards: real_value is quoted for literal and multiline variables and escaped for others
  // (EnvironmentVariable.php 207-215): compared as written, a literal production secret behind a
  // preview reference, or within one, looked like a value of the review app's own.
  it('refuses a preview variable that hands over a value production holds, naming its key', () => {
    const template: TemplateFacts = {
      ...TEMPLATE,
      variables: [
        { key: 'STRIPE_KEY', value: 'sk_live_1', real_value: "'sk_live_1'", is_literal: true },
        { key: 'DB_PASSWORD', value: 'pa"ss', real_value: 'pa\\"ss' },
        { key: 'PORT', value: '3000', real_value: '3000' },
        { key: 'SITE', value: 'https://web.example.com', real_value: 'https://web.example.com' },
        { key: 'STRIPE_KEY', value: '{{environment.STRIPE}}', real_value: 'sk_live_1' },
        {
          key: 'DATABASE_URL',
          value: 'postgres://app:{{ environment.DB_PASSWORD }}@db/app',
          real_value: 'postgres://app:pa\\"ss@db/app'
        },
        { key: 'COPY', value: 'sk_live_1', real_value: "'sk_live_1'", is_literal: true },
        { key: 'WORKERS', value: '{{environment.WORKERS}}', real_value: '3000' },
        { key: 'UNSEEN', value: '{{team.UNSEEN}}' },
        // Its own: a reference to a value production does not hold, around text that repeats
        // one (the preview's own writing), and a port anyone may have.
        {
          key: 'OWN_DB',
          value: 'https://web.example.com/db?pw={{environment.PREVIEW_PW}}',
          real_value: 'https://web.example.com/db?pw=preview-pw'
        },
        { key: 'ALT_PORT', value: '3000', real_value: '3000' }
      ].map((v, index) => ({ ...v, is_preview: index >= 4 })),
      fields: row()
    }
    const plan = planReviewApp(template, { ...REQUEST, env: [] })
    expect(plan.refused).toEqual([
      expect.stringMatching(
        /^the template's preview variable STRIPE_KEY refers to a shared variable that resolves to the value of production's STRIPE_KEY: /
      ),
      expect.stringMatching(
        /^the template's preview variable DATABASE_URL refers to a shared variable that resolves to the value of production's DB_PASSWORD: /
      ),
      expect.stringMatching(
        /^the template's preview variable COPY holds the value of production's STRIPE_KEY: /
      ),
      expect.stringMatching(/^the template's preview variable WORKERS refers .* production's PORT/),
      expect.stringMatching(
        /^the template's preview variable UNSEEN refers to a shared variable that Coolify did not show resolved/
      )
    ])
    for (const reason of plan.refused!) {
      expect(reason).toContain('`env`')
      expect(reason).not.toMatch(/sk_live|pa"ss|pa\\/)
    }

    const own = planned(
      {
        ...template,
        variables: template.variables.slice(0, 4).concat(template.variables.slice(9))
      },
      { ...REQUEST, env: [] }
    )
    expect(own.target.variables).toEqual([
      { key: 'OWN_DB', value: 'https://web.example.com/db?pw={{environment.PREVIEW_PW}}' },
      { key: 'ALT_PORT', value: '3000' }
    ])
  })
})

describe('the value a deployment sees', () => {
  it('is real_value unquoted for literal and multiline variables, unescaped for others', () => {
    expect(resolvedValue({ real_value: "'a\\b'", is_literal: true })).toBe('a\\b')
    expect(resolvedValue({ real_value: "'x\ny'", is_multiline: true })).toBe('x\ny')
    expect(resolvedValue({ real_value: 'a\\\\b\\"c\\\'d\\te\\r' })).toBe('a\\b"c\'d\te\r')
    expect(resolvedValue({ real_value: '{"a":"b"}', is_literal: true })).toBe('{"a":"b"}')
    expect(resolvedValue({ value: 'x' })).toBeUndefined()
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

  // Guards: Coolify 4.3.11 fetches LFS objects in the clone whatever the setting says
  // (coollabsio/coolify#10360): a template with it on is refused, naming the setting.
  it('refuses a template with Git LFS on, naming the setting and what to do', () => {
    const reason = refusal({ fields: row({ 'settings.is_git_lfs_enabled': true }) })
    expect(reason).toContain('`settings.is_git_lfs_enabled`')
    expect(reason).toContain('turn "Git LFS" off')
    expect(reason).toContain('coollabsio/coolify#10360')
  })

  it('refuses a template whose Git settings Coolify does not show (before 4.2), naming the version', () => {
    const fields = Object.fromEntries(
      Object.entries(row()).filter(([key]) => !key.startsWith('settings.'))
    )
    const reason = refusal({ fields })
    expect(reason).toContain('`settings`')
    expect(reason).toContain('Coolify 4.2 or newer')
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
    // Coolify makes an application with Git LFS on, which a clone of the template has off.
    expect(first({ ...TEMPLATE, cloned: false, fields: row(carried) })).toEqual([
      ...disarm,
      'is_git_lfs_enabled'
    ])
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
    gitCommitSha: REQUEST.commit,
    webhookSecrets: [],
    persistentStorages: [{ name: 'clone-data', mount_path: '/data', host_path: null }],
    fileStorages: [],
    variables: [
      { key: 'API_URL', value: 'https://api.staging.example.com' },
      { key: 'PR_NUMBER', value: '7' }
    ]
  }

  it('finds nothing on a review app of its own', () => {
    expect(tracesOfProduction(TEMPLATE, clean, REQUEST)).toEqual([])
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
      },
      REQUEST
    )
    expect(traces).toEqual([
      'its domains still name www.example.com (a server without a proxy keeps the old domain)',
      'its compose domains still name web.example.com',
      'its labels still route web.example.com',
      'it mounts /srv/up',
      'it mounts /data/app.db',
      "its variable(s) SECRET hold production's values",
      'auto-deploy is still on',
      `it is pinned to commit abc1234, not the pull request's head commit ${REQUEST.commit}`,
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
    const traces = tracesOfProduction(TEMPLATE, app, REQUEST)
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
    const { commit } = REQUEST
    expect(tracesOfProduction(TEMPLATE, app, { commit })).toHaveLength(1)
    const env = [{ key: 'API_URL', value: 'https://api.example.com' }]
    expect(tracesOfProduction(TEMPLATE, app, { env, commit })).toEqual([])
  })

  // Guards: unpinned (`HEAD`), the review app builds whatever its branch holds when the build
  // starts, a push after the run was approved included.
  it('accepts the pull request’s head commit as its pin, and no other', () => {
    for (const pin of ['HEAD', null, 'f00dfeed0pinned']) {
      expect(tracesOfProduction(TEMPLATE, { ...clean, gitCommitSha: pin }, REQUEST)).toEqual([
        expect.stringContaining(`the pull request's head commit ${REQUEST.commit}`)
      ])
    }
  })
})
