/**
 * The GitLab CI/CD component and the GitLab guide's pipelines: each parses as GitLab reads it,
 * uses only the inputs the component declares and gives the ones it requires, and sets only
 * COOLIFY_* variables the command-line tool reads, with flags it has.
 */
import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isMap, isSeq, parseAllDocuments, parseDocument, type YAMLMap } from 'yaml'
import { envName, FLAGS } from '../src/cli/options.js'
import {
  documentationPages,
  isGitLabPipeline,
  yamlBlocks,
  type YamlBlock
} from '../test/support/examples.js'
import { PROJECT } from '../test/support/runner.js'

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
const READ = new Set([...FLAGS.map(envName), 'COOLIFY_TOKEN'])

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
    const script = job.get('script')
    if (!isSeq(script)) throw new Error('no script')
    const command = String((script.items[0] as { value: unknown }).value)
    expect(command).toMatch(/^npx --yes coolify-deploy-follow@\$\[\[ inputs\.version \]\] /)
    const flags = [...command.matchAll(/ --([\w-]+)/g)].map(m => m[1]).filter(f => f !== 'yes')
    expect(flags).toEqual(['json', 'dotenv'])
    // What the dotenv report and the artifacts name is what the command writes.
    expect(job.getIn(['artifacts', 'reports', 'dotenv'])).toBe('coolify.env')
    expect(command).toContain('--dotenv coolify.env')
    expect(command).toContain('--json coolify-deployments.json')
    expect(job.getIn(['artifacts', 'when'])).toBe('always')
  })
})

describe("the GitLab guide's pipelines", () => {
  const blocks: YamlBlock[] = documentationPages(PROJECT).flatMap(page =>
    yamlBlocks(readFileSync(join(PROJECT, page), 'utf8'), page).filter(isGitLabPipeline)
  )

  it('are there', () => {
    expect(blocks.map(block => block.file)).toContain('docs/gitlab.md')
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
