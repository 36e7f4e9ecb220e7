/** The review app's plan on its own: target, order of writes, refusals, and the read-back. */
import { describe, expect, it } from '@jest/globals'
import {
  planReviewApp,
  tracesOfProduction,
  type ReadBack,
  type ReviewRequest,
  type TemplateFacts,
  type Write
} from '../src/rollout/review-plan.js'

const TEMPLATE: TemplateFacts = {
  name: 'web',
  fqdn: 'https://web.example.com,https://www.example.com',
  buildPack: 'dockerfile',
  composeDomains: {},
  customLabels: 'traefik.http.routers.x.rule=Host(`web.example.com`)',
  readonlyLabels: true,
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
      'update description,git_commit_sha,is_auto_deploy_enabled,manual_webhook_secret_bitbucket,manual_webhook_secret_gitea,manual_webhook_secret_github,manual_webhook_secret_gitlab',
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
        manual_webhook_secret_gitea: ''
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

  it('refuses labels of its own that route by host', () => {
    expect(refusal({ readonlyLabels: false })).toContain('Readonly labels')
    expect(refusal({ readonlyLabels: false, customLabels: undefined })).toContain('hidden')
    const plan = planReviewApp(
      {
        ...TEMPLATE,
        readonlyLabels: false,
        customLabels: 'traefik.http.middlewares.gzip.compress=true'
      },
      REQUEST
    )
    expect(plan.refused).toBeUndefined()
  })

  it('rewrites the compose domain of one routed service, and refuses several', () => {
    const compose: Partial<TemplateFacts> = {
      fqdn: null,
      buildPack: 'dockercompose',
      composeDomains: { web: 'https://web.example.com', worker: '' }
    }
    const plan = planned({ ...TEMPLATE, ...compose })
    expect(plan.writes[1]).toEqual({
      kind: 'update',
      changes: { docker_compose_domains: [{ name: 'web', domain: REQUEST.domain }] }
    })
    expect(steps(plan.writes)).not.toContain('update domains')
    expect(plan.target.domains).toBeUndefined()
    const reason = refusal({
      ...compose,
      composeDomains: { web: 'https://web.example.com', api: 'https://api.example.com' }
    })
    expect(reason).toMatch(/2 services \(web, api\)/)
  })
})

describe('the read-back', () => {
  const clean: ReadBack = {
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

  it('leaves a value given with env alone', () => {
    const app = { ...clean, variables: [{ key: 'API_URL', value: 'https://api.example.com' }] }
    expect(tracesOfProduction(TEMPLATE, app)).toHaveLength(1)
    expect(
      tracesOfProduction(TEMPLATE, app, [{ key: 'API_URL', value: 'https://api.example.com' }])
    ).toEqual([])
  })
})
