/**
 * The README and the guides in docs/ against action.yml: the inputs and outputs tables list exactly
 * what action.yml declares, and every workflow a reader may copy parses as GitHub parses it, gives
 * this action only inputs it declares, and reads only outputs of steps that exist.
 */
import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isMap, isScalar, parseDocument, visit, type Node } from 'yaml'
import {
  allWorkflows,
  isThisAction,
  stepsByJob,
  workflowExamples,
  type WorkflowExample
} from '../test/support/examples.js'
import { loadManifest, type Manifest } from '../test/support/manifest.js'
import { PROJECT } from '../test/support/runner.js'

const README = readFileSync(join(PROJECT, 'README.md'), 'utf8')
const manifest = loadManifest(join(PROJECT, 'action.yml'))

/** The rows of the first table under `## heading`, each as its cells. */
function table(markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n')
  const start = lines.indexOf(`## ${heading}`)
  if (start < 0) throw new Error(`no "## ${heading}" section`)
  const rows: string[][] = []
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('#')) break
    if (line.startsWith('|'))
      rows.push(
        line
          .slice(1, -1)
          .split(' | ')
          .map(cell => cell.trim())
      )
    else if (rows.length > 0) break
  }
  return rows.slice(2) // the header and its underline
}

/** An input's default as the README's table shows it. */
function shownDefault(input: { required: boolean; default?: string }): string {
  if (input.required) return '(required)'
  return input.default === undefined ? '' : `\`${input.default}\``
}

/**
 * What is wrong with one workflow: a step of this action given an undeclared input or lacking a
 * required one, and `steps.<id>.outputs.<name>` naming no earlier step of its job, or an output
 * this action does not declare.
 */
function problems(example: WorkflowExample, action: Manifest): string[] {
  const document = parseDocument(example.workflow, { uniqueKeys: true })
  if (document.errors.length > 0) return document.errors.map(error => error.message)
  const found: string[] = []
  if (!isMap(document.get('jobs'))) return ['no jobs']
  for (const steps of stepsByJob(document)) {
    const earlier = new Map<string, boolean>() // step id → whether it is this action
    for (const step of steps) {
      const ours = isThisAction(step.get('uses'))
      const given = step.get('with')
      const inputs = isMap(given) ? given.items.map(pair => String(scalarValue(pair.key))) : []
      if (ours) {
        for (const name of inputs) {
          if (!action.inputs.has(name)) found.push(`gives this action an undeclared input: ${name}`)
        }
        for (const [name, input] of action.inputs) {
          if (input.required && !inputs.includes(name)) found.push(`lacks the input ${name}`)
        }
      }
      for (const [id, output] of stepOutputsReadIn(step)) {
        if (!earlier.has(id)) found.push(`reads steps.${id}, which is no earlier step of its job`)
        else if (earlier.get(id) && !action.outputs.has(output)) {
          found.push(`reads an output this action does not declare: ${output}`)
        }
      }
      const id = step.get('id')
      if (typeof id === 'string') earlier.set(id, ours)
    }
  }
  return found
}

function scalarValue(node: unknown): unknown {
  return isScalar(node) ? node.value : node
}

/** `[step id, output]` of every `steps.<id>.outputs.<name>` in the strings of a step. */
function stepOutputsReadIn(step: Node): [string, string][] {
  const reads: [string, string][] = []
  visit(step, {
    Scalar(_, node) {
      if (typeof node.value !== 'string') return
      for (const match of node.value.matchAll(/\bsteps\.([\w-]+)\.outputs\.([\w-]+)/g)) {
        reads.push([match[1], match[2]])
      }
    }
  })
  return reads
}

describe('the README against action.yml', () => {
  it('lists every input in action.yml, in its order, with its default', () => {
    const rows = table(README, 'Inputs').map(([name, shown]) => [name, shown])
    const declared = [...manifest.inputs].map(([name, input]) => [
      `\`${name}\``,
      shownDefault(input)
    ])
    expect(rows).toEqual(declared)
  })

  it('lists every output in action.yml, in its order', () => {
    const rows = table(README, 'Outputs').map(([name]) => name)
    expect(rows).toEqual([...manifest.outputs.keys()].map(name => `\`${name}\``))
  })
})

describe('the workflows a reader copies', () => {
  const workflows = allWorkflows(PROJECT)

  it('are all found: the project’s workflows and every yaml block of the README', () => {
    const files = workflows.map(workflow => workflow.file)
    expect(files).toEqual(expect.arrayContaining(['.github/workflows/ci.yml', 'README.md']))
    const fences = README.match(/^\s*```ya?ml$/gm) ?? []
    expect(files.filter(file => file === 'README.md')).toHaveLength(fences.length)
    expect(fences.length).toBeGreaterThan(5)
  })

  it.each(workflows.map(example => [`${example.file}:${example.lineOf(1)}`, example] as const))(
    '%s parses and uses the action as declared',
    (_, example) => {
      expect(problems(example, manifest)).toEqual([])
    }
  )

  it('notice a misspelt input, a missing step and an undeclared output', () => {
    const [example] = workflowExamples(
      [
        'Text.',
        '```yaml',
        '- id: deploy',
        '  uses: OWNER/coolify-deploy-follow@v1',
        '  with:',
        '    coolify-url: https://coolify.example.com',
        '    token: ${{ secrets.COOLIFY_TOKEN }}',
        '    app_uuid: abc',
        '- run: echo "${{ steps.deploy.outputs.uri }} ${{ steps.build.outputs.tag }}"',
        '```'
      ].join('\n'),
      'page.md'
    )
    expect(example.lineOf(6)).toBe(3) // the `- id: deploy` line of the page
    expect(problems(example, manifest)).toEqual([
      'gives this action an undeclared input: app_uuid',
      'reads an output this action does not declare: uri',
      'reads steps.build, which is no earlier step of its job'
    ])
    const duplicate = { ...example, workflow: `${example.workflow}on: pull_request\n` }
    expect(problems(duplicate, manifest)).toEqual([expect.stringMatching(/unique/)])
  })
})
