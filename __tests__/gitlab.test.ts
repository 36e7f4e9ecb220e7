/**
 * The GitLab CI/CD component and the GitLab guide's pipelines: each parses as GitLab reads it,
 * uses only the inputs the component declares and gives the ones it requires, and sets only
 * COOLIFY_* variables the command-line tool reads, with flags it has; and the component's job run
 * as GitLab's runner runs it, its script in one shell, cancelled with SIGTERM to that shell alone.
 */
import { beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
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

  it('hands the command line only variables and flags it reads, never the token', () => {
    const { inputs, job } = component()
    const variables = coolifyVariables(job)
    expect(variables.filter(name => !READ.has(name))).toEqual([])
    expect(variables).not.toContain('COOLIFY_TOKEN')
    expect(inputs.has('token')).toBe(false)
    const script = scriptOf(job)
    expect(script.find(line => line.startsWith('npm install '))).toContain(
      '"coolify-deploy-follow@$[[ inputs.version ]]"'
    )
    // The tool takes the shell's place: a cancelled job's SIGTERM reaches it (see below).
    const command = script[script.length - 1]
    expect(command).toMatch(/^exec "[^"]+\/node_modules\/\.bin\/coolify-deploy-follow" /)
    const flags = [...command.matchAll(/ --([\w-]+)/g)].map(m => m[1])
    expect(flags).toEqual(['json', 'dotenv'])
    // What the dotenv report and the artifacts name is what the command writes.
    expect(job.getIn(['artifacts', 'reports', 'dotenv'])).toBe('coolify.env')
    expect(command).toContain('--dotenv coolify.env')
    expect(command).toContain('--json coolify-deployments.json')
    expect(job.getIn(['artifacts', 'when'])).toBe('always')
  })
})

describe('the command line’s words for the component', () => {
  it('name the input behind each variable the component sets', () => {
    const { job } = component()
    const variables = (job.get('variables') as YAMLMap).toJSON() as Record<string, string>
    const named = new Map<string, string>()
    for (const [variable, value] of Object.entries(variables)) {
      const input = /^\$\[\[ inputs\.([\w-]+) \]\]$/.exec(String(value))?.[1]
      const flag = FLAGS.find(flag => envName(flag) === variable)
      if (input && flag) named.set(flag.name, input)
    }
    expect(new Map([...COMPONENT_INPUTS].sort())).toEqual(new Map([...named].sort()))
    expect(variables[COMPONENT_VARIABLE]).toBe('true')
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

describe('the component’s job, run as GitLab runs it', () => {
  const start = fakeCoolifyPerTest(() => ({
    abilities: ['deploy', 'read', 'read:sensitive', 'write'],
    apps: [{ ...APP, scenarios: [endless()] }]
  }))
  let tarball = ''
  beforeAll(() => {
    tarball = packCli()
  }, 120_000)

  /**
   * The job's variables and script with `inputs` put in as GitLab does (`$[[ inputs.NAME ]]`, the
   * declared defaults for the rest); `version` installs the packed tarball instead of npm's.
   */
  function interpolated(inputs: Record<string, string>): {
    variables: Record<string, string>
    script: string[]
  } {
    const text = readFileSync(join(PROJECT, COMPONENT), 'utf8')
    const [header, body] = text.split(/^---$/m)
    const declared = parseDocument(header).toJS() as {
      spec: { inputs: Record<string, { default?: unknown }> }
    }
    const given = { version: `file:${tarball}`, ...inputs }
    const value = (name: string): string => {
      const spec = declared.spec.inputs[name]
      if (!spec) throw new Error(`${COMPONENT}: no input ${name}`)
      return String(given[name as keyof typeof given] ?? spec.default)
    }
    // GitLab puts the values into the parsed YAML's strings, not into its text.
    const put = (text: unknown): string =>
      String(text).replace(/\$\[\[\s*inputs\.([\w-]+)\s*\]\]/g, (_, name: string) => value(name))
    const job = parseDocument(body).get(JOB) as YAMLMap
    const variables = (job.get('variables') as YAMLMap).toJSON() as Record<string, unknown>
    return {
      variables: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, put(v)])),
      script: scriptOf(job).map(put)
    }
  }

  it('cancels the deployment when the runner sends SIGTERM to the job’s shell alone', async () => {
    const server = await start()
    const { variables, script } = interpolated({ 'coolify-url': server.url, app: APP.uuid })
    const node = findNode(oldestNode())
    // The job's shell: its script, one line after another, stopping at the first that fails.
    const shell = spawn('sh', ['-e', '-c', script.join('\n')], {
      cwd: mkdtempSync(join(tmpdir(), 'coolify-gitlab-job-')),
      env: {
        PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? '',
        npm_config_offline: 'true',
        CI: 'true',
        GITLAB_CI: 'true',
        COOLIFY_TOKEN: TOKEN,
        COOLIFY_POLL_INTERVAL: '100ms',
        ...variables
      },
      // Its own process group, so that whatever it leaves behind can be ended after the test.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    shell.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    // Its exit, not the end of its output: whatever it leaves running may hold the pipes open.
    const exited = new Promise<[number | null, NodeJS.Signals | null]>(done =>
      shell.on('exit', (code, signal) => done([code, signal]))
    )
    let killer = setTimeout(() => shell.kill('SIGKILL'), 60_000)
    const building = (): boolean => server.deployments()[0]?.status === 'in_progress'
    const check = (): void => {
      if (shell.exitCode !== null || shell.signalCode !== null) return
      if (!building()) return void setTimeout(check, 20)
      // A runner cancelling the job signals its direct child, not the process group; the tool
      // has its grace time to cancel, not more.
      shell.kill('SIGTERM')
      clearTimeout(killer)
      killer = setTimeout(() => shell.kill('SIGKILL'), 20_000)
    }
    check()
    try {
      const [code, signal] = await exited

      const [deployment] = server.deployments()
      expect(deployment.status).toBe('cancelled-by-user')
      expect(requestLines(actionRequests(server)).filter(line => line.endsWith('/cancel'))).toEqual(
        [`POST /api/v1/deployments/${deployment.uuid}/cancel`]
      )
      expect(stdout).toMatch(
        /^The job was cancelled \(SIGTERM\): cancelling web \(\w+\) in Coolify$/m
      )
      expect([code, signal]).toEqual([1, null])
      expectNoStackTrace(stderr)
      expectNoSecrets(stdout + stderr, [TOKEN])
    } finally {
      clearTimeout(killer)
      try {
        process.kill(-shell.pid!, 'SIGKILL')
      } catch {
        // The group is gone already.
      }
    }
  }, 90_000)
})
