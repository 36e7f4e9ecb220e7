/**
 * The GitLab CI/CD component and the GitLab guide's pipelines: each parses as GitLab reads it,
 * uses only the inputs the component declares and gives the ones it requires, and sets only
 * COOLIFY_* variables the command-line tool reads, with flags it has; and the component's job run
 * as GitLab's runner runs it, its script in one shell, cancelled with SIGTERM to that shell alone.
 */
import { beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { isMap, isSeq, parseAllDocuments, parseDocument, type YAMLMap } from 'yaml'
import { COMPONENT_INPUTS, COMPONENT_VARIABLE, envName, FLAGS } from '../src/cli/options.js'
import {
  documentationPages,
  isGitLabPipeline,
  yamlBlocks,
  type YamlBlock
} from '../test/support/examples.js'
import { findNode, oldestNode } from '../test/support/node.js'
import { packCli } from '../test/support/package.js'
import { PROJECT } from '../test/support/runner.js'
import {
  actionRequests,
  APP,
  build,
  endless,
  expectNoSecrets,
  expectNoStackTrace,
  fakeCoolifyPerTest,
  requestLines,
  TOKEN
} from '../test/support/scenarios.js'

const COMPONENT = 'templates/deploy.yml'
const JOB = 'coolify-deploy'

interface Input {
  required: boolean
}

/** The component: its declared inputs and its job, read strictly (a duplicate key is an error). */
function component(): { inputs: Map<string, Input>; job: YAMLMap; text: string } {
  const text = readFileSync(join(PROJECT, COMPONENT), 'utf8')
  const [header, body, ...rest] = parseAllDocuments(text, { uniqueKeys: true }) as ReturnType<
    typeof parseDocument
  >[]
  expect(rest).toEqual([])
  for (const document of [header, body]) expect(document.errors).toEqual([])
  const declared = header.getIn(['spec', 'inputs'])
  if (!isMap(declared)) throw new Error(`${COMPONENT}: no spec: inputs`)
  const inputs = new Map<string, Input>()
  for (const pair of declared.items) {
    const spec = pair.value as YAMLMap
    inputs.set(String((pair.key as { value: unknown }).value), { required: !spec.has('default') })
  }
  const job = body.get(JOB)
  if (!isMap(job)) throw new Error(`${COMPONENT}: no job ${JOB}`)
  return { inputs, job, text: String(body) }
}

/** The environment variables the command line reads. */
const READ = new Set([...FLAGS.map(envName), 'COOLIFY_TOKEN', COMPONENT_VARIABLE])

/** The job's script, a line each. */
function scriptOf(job: YAMLMap): string[] {
  const script = job.get('script')
  if (!isSeq(script)) throw new Error(`${COMPONENT}: no script`)
  return script.items.map(item => String((item as { value: unknown }).value))
}

/** The flags the job's script gives, each with the input behind it. */
function givenFlags(job: YAMLMap): Map<string, string> {
  const text = scriptOf(job).join('\n')
  const values = [...text.matchAll(/--([\w-]+) "\$\[\[ inputs\.([\w-]+) \]\]"/g)]
  const switches = [
    ...text.matchAll(/if \$\[\[ inputs\.([\w-]+) \]\]; then set -- "\$@" --([\w-]+); fi/g)
  ]
  return new Map([
    ...values.map(m => [m[1], m[2]] as [string, string]),
    ...switches.map(m => [m[2], m[1]] as [string, string])
  ])
}

interface InputSpec {
  type?: string
  regex?: string
  default?: unknown
}

function coolifyVariables(job: YAMLMap): string[] {
  const variables = job.get('variables')
  if (!isMap(variables)) return []
  return variables.items
    .map(pair => String((pair.key as { value: unknown }).value))
    .filter(name => name.startsWith('COOLIFY_'))
}

describe('the GitLab component', () => {
  it('uses every input it declares and no other', () => {
    const { inputs, text } = component()
    const used = new Set([...text.matchAll(/\$\[\[\s*inputs\.([\w-]+)\s*\]\]/g)].map(m => m[1]))
    expect([...used].sort()).toEqual([...inputs.keys()].sort())
  })

  it('hands the command line its inputs as flags it has, never the token', () => {
    const { inputs, job } = component()
    // No job variables: a project or group variable of the same name would outrank them.
    expect(coolifyVariables(job)).toEqual([])
    expect(inputs.has('token')).toBe(false)
    const script = scriptOf(job)
    expect(script.find(line => line.startsWith('npm install '))).toContain(
      '"coolify-deploy-follow@$[[ inputs.version ]]"'
    )
    const command = script[script.length - 1]
    expect(command).toMatch(
      /^COOLIFY_COMPONENT=true "\$coolify_tool\/node_modules\/\.bin\/coolify-deploy-follow" /
    )
    const known = new Set(FLAGS.map(flag => flag.name))
    expect([...givenFlags(job).keys()].filter(flag => !known.has(flag))).toEqual([])
    // What the dotenv report and the artifacts name is what the command writes.
    expect(job.getIn(['artifacts', 'reports', 'dotenv'])).toBe('coolify.env')
    expect(script).toContain('set -- --json coolify-deployments.json --dotenv coolify.env')
    expect(command).toMatch(/ "\$@"$/)
    expect(job.getIn(['artifacts', 'when'])).toBe('always')
  })

  it('lets no input that reaches the shell out of its quotes', () => {
    const { job } = component()
    const header = parseDocument(readFileSync(join(PROJECT, COMPONENT), 'utf8').split(/^---$/m)[0])
    const specs = (header.toJS() as { spec: { inputs: Record<string, InputSpec> } }).spec.inputs
    const text = scriptOf(job).join('\n')
    for (const [name, spec] of Object.entries(specs)) {
      const use = `$[[ inputs.${name} ]]`
      const uses = text.split(use).length - 1
      if (uses === 0 || spec.type === 'boolean') continue
      // Inside double quotes, and held by GitLab's check of the value to what stays inert there.
      const quoted = text.split('"').filter((_, index) => index % 2 === 1)
      expect([name, quoted.filter(word => word.includes(use)).length]).toEqual([name, uses])
      expect([name, spec.regex]).toEqual([name, expect.any(String)])
      const regex = new RegExp(spec.regex!)
      for (const fine of [
        'web',
        'My shop/staging/api',
        "it's web",
        '$CI_COMMIT_SHA',
        '${CI_MERGE_REQUEST_IID}',
        'https://a.example.com/{pr}',
        ''
      ]) {
        expect([name, fine, regex.test(fine)]).toEqual([name, fine, true])
      }
      for (const bad of ['a"b', 'x`id`', '$(id)', 'a\\b', '${X:-$(id)}', '$1']) {
        expect([name, bad, regex.test(bad)]).toEqual([name, bad, false])
      }
    }
  })
})

describe('the command line’s words for the component', () => {
  it('name the input behind each flag the component gives', () => {
    const { job } = component()
    expect(new Map([...COMPONENT_INPUTS].sort())).toEqual(new Map([...givenFlags(job)].sort()))
    expect(scriptOf(job).at(-1)).toContain(`${COMPONENT_VARIABLE}=true `)
  })
})

describe("the GitLab guide's pipelines", () => {
  const blocks: YamlBlock[] = documentationPages(PROJECT).flatMap(page =>
    yamlBlocks(readFileSync(join(PROJECT, page), 'utf8'), page).filter(isGitLabPipeline)
  )

  it('are there', () => {
    expect(blocks.map(block => block.file)).toContain('docs/gitlab.md')
  })

  it('include the component both ways: from the repository, and as a component of a mirror', () => {
    const included = blocks.flatMap(block => {
      const includes = parseDocument(block.lines.join('\n')).get('include')
      return isSeq(includes) ? includes.items.filter(isMap).map(item => item.toJSON()) : []
    }) as Array<{ remote?: string; component?: string }>
    expect(included.map(item => item.remote).filter(Boolean)).toContainEqual(
      `https://raw.githubusercontent.com/OWNER/coolify-deploy-follow/v1/${COMPONENT}`
    )
    // GitLab's form: host, project path, the template's file name, and a version after the `@`.
    expect(included.map(item => item.component).filter(Boolean)).toEqual([
      '$CI_SERVER_FQDN/OWNER/coolify-deploy-follow/deploy@v1'
    ])
  })

  it.each(blocks.map(block => [`${block.file}:${block.firstLine}`, block] as const))(
    '%s includes the component with its declared inputs only',
    (_where, block) => {
      const { inputs } = component()
      const document = parseDocument(block.lines.join('\n'), { uniqueKeys: true })
      expect(document.errors).toEqual([])
      const includes = document.get('include')
      if (!isSeq(includes)) throw new Error('no include list')
      const ours = includes.items.filter(
        item =>
          isMap(item) &&
          /coolify-deploy-follow\/.*deploy(\.yml|@)/.test(
            String(item.get('remote') ?? item.get('component'))
          )
      ) as YAMLMap[]
      expect(ours).toHaveLength(1)
      const given = ours[0].get('inputs') as YAMLMap
      const names = given.items.map(pair => String((pair.key as { value: unknown }).value))
      expect(names.filter(name => !inputs.has(name))).toEqual([])
      const required = [...inputs].filter(([, input]) => input.required).map(([name]) => name)
      expect(required.filter(name => !names.includes(name))).toEqual([])
      // Jobs that extend the component's set only variables the command line reads.
      for (const pair of (document.contents as YAMLMap).items) {
        const job = pair.value
        if (!isMap(job)) continue
        const name = String((pair.key as { value: unknown }).value)
        if (name !== JOB && job.get('extends') !== JOB) continue
        expect(coolifyVariables(job).filter(variable => !READ.has(variable))).toEqual([])
        const stop = job.getIn(['environment', 'on_stop']) ?? name
        expect(document.has(stop)).toBe(true)
      }
    }
  )
})

describe('the component’s job, run as GitLab’s runner runs it', () => {
  const start = fakeCoolifyPerTest(() => ({
    abilities: ['deploy', 'read', 'read:sensitive', 'write'],
    apps: [{ ...APP, scenarios: [endless()] }]
  }))
  let tarball = ''
  beforeAll(() => {
    tarball = packCli()
  }, 120_000)

  /**
   * The job's variables and script with `inputs` put in as GitLab does (`$[[ inputs.NAME ]]`, the declared
   * defaults for the rest), each value first checked against its input's `regex` as GitLab checks
   * it; `version` installs the packed tarball instead of npm's.
   */
  function interpolated(inputs: Record<string, string>): {
    variables: Record<string, string>
    script: string[]
  } {
    const text = readFileSync(join(PROJECT, COMPONENT), 'utf8')
    const [header, body] = text.split(/^---$/m)
    const declared = parseDocument(header).toJS() as {
      spec: { inputs: Record<string, InputSpec> }
    }
    const given = { version: `file:${tarball}`, ...inputs }
    const value = (name: string): string => {
      const spec = declared.spec.inputs[name]
      if (!spec) throw new Error(`${COMPONENT}: no input ${name}`)
      const text = String(given[name as keyof typeof given] ?? spec.default)
      if (spec.regex && !new RegExp(spec.regex).test(text)) {
        throw new Error(`${name}: provided value does not match required RegEx pattern`)
      }
      return text
    }
    // GitLab puts the values into the parsed YAML's strings, not into its text.
    const put = (text: unknown): string =>
      String(text).replace(/\$\[\[\s*inputs\.([\w-]+)\s*\]\]/g, (_, name: string) => value(name))
    const job = parseDocument(body).get(JOB) as YAMLMap
    const variables = isMap(job.get('variables'))
      ? ((job.get('variables') as YAMLMap).toJSON() as Record<string, unknown>)
      : {}
    return {
      variables: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, put(v)])),
      script: scriptOf(job).map(put)
    }
  }

  /**
   * The job's shell script as GitLab Runner writes it (`shells/abstract.go` writeCommands: each
   * line echoed, then run; `shells/bash.go` Finish: all of them in `: | eval '…'` under errexit).
   */
  function runnerScript(lines: readonly string[]): string {
    const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`
    const body = lines.flatMap(line => [`echo ${quote(`$ ${line}`)}`, line]).join('\n')
    return [
      'if set -o | grep pipefail > /dev/null; then set -o pipefail; fi; set -o errexit',
      'set +o noclobber',
      `: | eval ${quote(body)}`,
      'exit 0',
      ''
    ].join('\n')
  }

  interface Job {
    code: number | null
    signal: NodeJS.Signals | null
    stdout: string
    stderr: string
    /** The job's folder, where the report files land. */
    folder: string
    /** What the job left in its temporary folder. */
    leftInTmp: string[]
  }

  /**
   * Runs the job as a shell runner does: its script in a shell of its own process group, with the
   * project's CI/CD variables in the environment; `cancel` says when to cancel it as the runner
   * does, SIGTERM to the whole group (`helpers/process/killer_unix.go`).
   */
  async function runJob(
    inputs: Record<string, string>,
    variables: Record<string, string>,
    cancel?: () => boolean
  ): Promise<Job> {
    const folder = mkdtempSync(join(tmpdir(), 'coolify-gitlab-job-'))
    const tmp = mkdtempSync(join(tmpdir(), 'coolify-gitlab-tmp-'))
    const { variables: jobVariables, script } = interpolated(inputs)
    writeFileSync(join(folder, 'script.sh'), runnerScript(script))
    const node = findNode(oldestNode())
    const shell = spawn('sh', [join(folder, 'script.sh')], {
      cwd: folder,
      env: {
        PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? '',
        TMPDIR: tmp,
        npm_config_offline: 'true',
        CI: 'true',
        GITLAB_CI: 'true',
        COOLIFY_TOKEN: TOKEN,
        COOLIFY_POLL_INTERVAL: '100ms',
        // GitLab ranks the project's CI/CD variables above a job's own `variables:`.
        ...jobVariables,
        ...variables
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    shell.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    // The end of the output, once whatever outlives the shell has closed it too.
    const closed = new Promise<[number | null, NodeJS.Signals | null]>(done =>
      shell.on('close', (code, signal) => done([code, signal]))
    )
    const group = (signal: NodeJS.Signals): void => {
      try {
        process.kill(-shell.pid!, signal)
      } catch {
        // The group is gone already.
      }
    }
    let killer = setTimeout(() => group('SIGKILL'), 60_000)
    const check = (): void => {
      if (shell.exitCode !== null || shell.signalCode !== null || !cancel) return
      if (!cancel()) return void setTimeout(check, 20)
      group('SIGTERM')
      clearTimeout(killer)
      killer = setTimeout(() => group('SIGKILL'), 20_000)
    }
    check()
    try {
      const [code, signal] = await closed
      return { code, signal, stdout, stderr, folder, leftInTmp: readdirSync(tmp) }
    } finally {
      clearTimeout(killer)
      group('SIGKILL')
    }
  }

  it('cancels the deployment when the runner sends SIGTERM to the job, and cleans up', async () => {
    const server = await start()
    const job = await runJob(
      { 'coolify-url': server.url, app: APP.uuid },
      {},
      () => server.deployments()[0]?.status === 'in_progress'
    )

    const [deployment] = server.deployments()
    expect(deployment.status).toBe('cancelled-by-user')
    expect(requestLines(actionRequests(server)).filter(line => line.endsWith('/cancel'))).toEqual([
      `POST /api/v1/deployments/${deployment.uuid}/cancel`
    ])
    expect(job.stdout).toMatch(
      /^The job was cancelled \(SIGTERM\): cancelling web \(\w+\) in Coolify$/m
    )
    expect(readFileSync(join(job.folder, 'coolify.env'), 'utf8')).toMatch(
      /^COOLIFY_STATUS=cancelled$/m
    )
    // The folder the tool was installed into is gone: a shell runner's /tmp outlives its jobs.
    expect(job.leftInTmp).toEqual([])
    expectNoStackTrace(job.stderr)
    expectNoSecrets(job.stdout + job.stderr, [TOKEN])
  }, 90_000)

  it('takes its inputs over project variables of the same names', async () => {
    const server = await start({ apps: [{ ...APP, scenarios: [build('finished')] }] })
    // The guide's example: the uuid in a project variable, given as `app`.
    const job = await runJob(
      { 'coolify-url': server.url, app: '$COOLIFY_APP_UUID' },
      {
        COOLIFY_APP_UUID: APP.uuid,
        COOLIFY_URL: 'http://127.0.0.1:9',
        COOLIFY_TIMEOUT: '1s',
        COOLIFY_PR: '9'
      }
    )

    expect(job.stderr).toBe('')
    expect([job.code, job.signal]).toEqual([0, null])
    expect(server.deployments().map(deployment => deployment.status)).toEqual(['finished'])
    expect(readFileSync(join(job.folder, 'coolify.env'), 'utf8')).toMatch(
      /^COOLIFY_STATUS=finished$/m
    )
    expect(job.leftInTmp).toEqual([])
  }, 90_000)

  it('hands an input with quotes and spaces over whole, as one value', async () => {
    const server = await start()
    const job = await runJob({ 'coolify-url': server.url, app: "it's web" }, { FORCE_COLOR: '0' })

    expect(job.code).toBe(2)
    expect(job.stderr).toMatch(
      /^error: Input `app`: no application, service or database named "it's web"/m
    )
    expect(server.deployments()).toEqual([])
    expect(job.leftInTmp).toEqual([])
  }, 90_000)

  it('refuses, as GitLab does by the regex, an input that would run a command', () => {
    expect(() => interpolated({ 'coolify-url': 'https://x', app: 'web"; touch pwned; "' })).toThrow(
      /^app: provided value does not match/
    )
    expect(() => interpolated({ 'coolify-url': '$(touch pwned)' })).toThrow(/^coolify-url: /)
  })
})
