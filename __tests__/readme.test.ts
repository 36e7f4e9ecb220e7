/**
 * The README and the guides in docs/ against action.yml: the inputs and outputs tables (the
 * README's one-line ones and docs/inputs.md's full ones) list exactly what action.yml declares, and
 * every workflow a reader may copy parses as GitHub parses it, gives this action only inputs it
 * declares and values it takes, reads only outputs that exist (`steps.x.outputs.y`,
 * `steps.x.outputs['y']`, a job's `outputs:`, `needs.<job>.outputs`), and runs a `delete-preview`
 * when a pull request closes. Every way a page fetches the tool works today or says what it waits
 * for; every option a page names in its text is the command line's. Every command line of the tool parses with its own option parser, and every GitLab
 * pipeline gives the component only the inputs of its `spec: inputs`. The token's table names, for
 * every route a feature calls, the ability Coolify 4.3.11's routes/api.php asks for it (a fixture the
 * fake's routes are held to as well), and the pages say from which Coolify a member's token is refused. Every link between the pages
 * leads to a file that exists and a heading it has, and the README stays a front page: at most
 * 20 KB.
 */
import { describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, normalize } from 'node:path'
import { isMap, isScalar, isSeq, parseDocument, visit, type Node } from 'yaml'
import { parseInvocation } from '../src/cli/options.js'
import { readConfig, REFUSED_WITHOUT_TRIGGER } from '../src/config/inputs.js'
import { worthMasking } from '../src/config/secrets.js'
import {
  allWorkflows,
  commandLines,
  componentIncludes,
  componentInputs,
  documentationPages,
  inlineOptions,
  isGitLabPipeline,
  isThisAction,
  packageSpecs,
  stepsByJob,
  workflowExamples,
  yamlBlocks,
  type WorkflowExample
} from '../test/support/examples.js'
import { memberAbilities, teamMembership } from '../test/fake-coolify/guards.js'
import { routes } from '../test/fake-coolify/routes.js'
import {
  COOLIFY_COMMIT,
  MEMBER_REFUSALS,
  ROUTE_ABILITIES,
  routeAbility
} from '../test/support/coolify-abilities.js'
import { loadManifest, type Manifest } from '../test/support/manifest.js'
import { PROJECT } from '../test/support/runner.js'

const README = readFileSync(join(PROJECT, 'README.md'), 'utf8')
/** The full inputs and outputs, which the README's one-line tables link to. */
const INPUTS_PAGE = readFileSync(join(PROJECT, 'docs/inputs.md'), 'utf8')
/** What the Marketplace page and a newcomer read first: a quarter of what it once was. */
const README_MAX_BYTES = 20 * 1024
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
  const runsOnClose = closesPullRequests(document.get('on'))
  const jobs = document.get('jobs')
  const jobEnvironments = isMap(jobs)
    ? jobs.items.map(job => (isMap(job.value) ? job.value.get('environment') : undefined))
    : []
  for (const [index, steps] of stepsByJob(document).entries()) {
    const earlier = new Map<string, boolean>() // step id → whether it is this action
    for (const step of steps) {
      const uses = step.get('uses')
      const ours = isThisAction(uses)
      const given = step.get('with')
      const inputs = isMap(given) ? given.items.map(pair => String(scalarValue(pair.key))) : []
      if (!ours && typeof uses === 'string' && /coolify/i.test(uses)) {
        found.push(`uses ${uses}, which is not this action as the docs name it`)
      }
      if (ours && jobEnvironments[index] !== undefined && inputs.includes('environment')) {
        // docs/inputs.md: the job's environment and the input would record two GitHub deployments.
        found.push('sets both the job’s environment and the environment input')
      }
      if (ours) {
        for (const name of inputs) {
          if (!action.inputs.has(name)) found.push(`gives this action an undeclared input: ${name}`)
        }
        for (const [name, input] of action.inputs) {
          if (input.required && !inputs.includes(name)) found.push(`lacks the input ${name}`)
        }
        const refused = refusedValues(given, action)
        if (refused) found.push(`gives a value the action refuses: ${refused}`)
        const remove = isMap(given) ? given.get('delete-preview') : undefined
        if (remove !== undefined && String(remove) !== 'false' && !runsOnClose) {
          found.push('sets delete-preview, but never runs when a pull request closes')
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
  return [...found, ...jobOutputProblems(document, action)]
}

/**
 * A job's `outputs:` read from steps of that job (this action's outputs it declares), and
 * `needs.<job>.outputs.<name>` of a job the reading job needs, and an output that job declares.
 */
function jobOutputProblems(document: ReturnType<typeof parseDocument>, action: Manifest): string[] {
  const jobs = document.get('jobs')
  if (!isMap(jobs)) return []
  const found: string[] = []
  const declared = new Map<string, Set<string>>()
  const steps = stepsByJob(document)
  jobs.items.forEach((job, index) => {
    const name = String(scalarValue(job.key))
    const outputs = isMap(job.value) ? job.value.get('outputs') : undefined
    declared.set(
      name,
      new Set(isMap(outputs) ? outputs.items.map(pair => String(scalarValue(pair.key))) : [])
    )
    if (!isMap(outputs)) return
    const ids = new Map(
      steps[index].map(step => [String(step.get('id')), isThisAction(step.get('uses'))])
    )
    for (const [id, output] of stepOutputsReadIn(outputs)) {
      if (!ids.has(id)) found.push(`job ${name}'s outputs read steps.${id}, no step of it`)
      else if (ids.get(id) && !action.outputs.has(output)) {
        found.push(`reads an output this action does not declare: ${output}`)
      }
    }
  })
  for (const job of jobs.items) {
    if (!isMap(job.value)) continue
    const needs = job.value.get('needs')
    const needed = isSeq(needs)
      ? needs.items.map(item => String(scalarValue(item)))
      : [String(needs)]
    for (const [other, output] of stepOutputsReadIn(job.value, 'needs')) {
      if (!needed.includes(other)) found.push(`reads needs.${other}, a job it does not need`)
      else if (!declared.get(other)?.has(output)) {
        found.push(`reads needs.${other}.outputs.${output}, which that job does not declare`)
      }
    }
  }
  return found
}

/**
 * What a value stands for where a whole input is an expression (`${{ secrets.TOKEN }}`): one the
 * action takes. Other inputs given by an expression fall back to their default; an expression
 * inside a longer value (`KEY=${{ secrets.X }}`) reads as `x`.
 */
const EXPRESSION_STANDS_FOR: Record<string, string> = {
  'coolify-url': 'https://coolify.example.com',
  token: 'token',
  app: 'web',
  'app-uuid': 'web',
  tag: 'web',
  pr: '12',
  commit: 'a'.repeat(40)
}

/** What the action says of a step's `with:` values, as it reads them; undefined when it takes them. */
function refusedValues(given: unknown, action: Manifest): string | undefined {
  const values = new Map<string, string>()
  if (isMap(given)) {
    for (const pair of given.items) {
      values.set(String(scalarValue(pair.key)), String(scalarValue(pair.value) ?? ''))
    }
  }
  const read = (name: string): string => {
    const value = values.get(name)
    if (value === undefined) return action.inputs.get(name)?.default ?? ''
    if (/^\$\{\{[^}]*\}\}$/.test(value.trim())) {
      return EXPRESSION_STANDS_FOR[name] ?? action.inputs.get(name)?.default ?? ''
    }
    return value.replace(/\$\{\{[^}]*\}\}/g, 'x')
  }
  try {
    readConfig(read, () => {})
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/**
 * Whether a workflow's `on` runs it when a pull request closes: `pull_request` with `closed` among
 * its `types` (without `types`, GitHub runs it on opened, synchronize and reopened only).
 */
function closesPullRequests(on: unknown): boolean {
  if (!isMap(on)) return false
  return ['pull_request', 'pull_request_target'].some(event => {
    const types = on.getIn([event, 'types'])
    return isSeq(types) && types.items.some(type => scalarValue(type) === 'closed')
  })
}

function scalarValue(node: unknown): unknown {
  return isScalar(node) ? node.value : node
}

/**
 * `<context>.<id>.outputs.<name>` and `<context>.<id>.outputs['<name>']` in an expression: the id,
 * then the name in group 2 or 3.
 */
const OUTPUT_READ = (context: 'steps' | 'needs'): RegExp =>
  new RegExp(`\\b${context}\\.([\\w-]+)\\.outputs(?:\\.([\\w-]+)|\\[['"]([^'"]+)['"]\\])`, 'g')

/** `[id, output]` of every `steps.<id>.outputs.<name>` (or `needs.…`) in the strings of a node. */
function stepOutputsReadIn(step: Node, context: 'steps' | 'needs' = 'steps'): [string, string][] {
  const reads: [string, string][] = []
  visit(step, {
    Scalar(_, node) {
      if (typeof node.value !== 'string') return
      for (const match of node.value.matchAll(OUTPUT_READ(context))) {
        reads.push([match[1], match[2] ?? match[3]])
      }
    }
  })
  return reads
}

describe.each([
  ['README.md', README],
  ['docs/inputs.md', INPUTS_PAGE]
])('the tables of %s against action.yml', (_, page) => {
  it('list every input in action.yml, in its order, with its default', () => {
    const rows = table(page, 'Inputs').map(([name, shown]) => [name, shown])
    const declared = [...manifest.inputs].map(([name, input]) => [
      `\`${name}\``,
      shownDefault(input)
    ])
    expect(rows).toEqual(declared)
  })

  it('list every output in action.yml, in its order', () => {
    const rows = table(page, 'Outputs').map(([name]) => name)
    expect(rows).toEqual([...manifest.outputs.keys()].map(name => `\`${name}\``))
  })
})

describe('the README', () => {
  it('names the two commands to run in a clone: the demo and the tests', () => {
    expect(README).toContain('`npm ci && npm run demo`')
    expect(README).toContain('`npm ci && npm test`')
  })

  it(`is at most ${README_MAX_BYTES} bytes`, () => {
    expect(statSync(join(PROJECT, 'README.md')).size).toBeLessThanOrEqual(README_MAX_BYTES)
  })
})

describe('the links between the pages', () => {
  const pages = documentationPages(PROJECT)

  it('are looked for in every page, the new guides and CONTRIBUTING.md included', () => {
    expect(pages).toEqual(
      expect.arrayContaining([
        'README.md',
        'CONTRIBUTING.md',
        'docs/README.md',
        'docs/inputs.md',
        'docs/examples.md',
        'docs/cost.md',
        'docs/when-things-go-wrong.md'
      ])
    )
  })

  it.each(pages)('of %s lead to files that exist and headings they have', page => {
    expect(brokenLinks(page, readFileSync(join(PROJECT, page), 'utf8'))).toEqual([])
  })

  it('notice a missing file, a missing heading and a missing anchor of the same page', () => {
    const page = [
      '# A page',
      '## Inputs and `outputs`',
      'See [inputs](#inputs-and-outputs), [gone](#gone), [the guide](docs/inputs.md#the-token),',
      '[no such guide](docs/nowhere.md), [no such heading](docs/inputs.md#nowhere) and',
      '![a picture](docs/images/none.png). [Coolify](https://coolify.io) is not checked.',
      '```sh',
      'echo "[not a link](nowhere.md)"',
      '```'
    ].join('\n')
    expect(brokenLinks('README.md', page)).toEqual([
      '#gone: no such heading',
      'docs/nowhere.md: no such file',
      'docs/inputs.md#nowhere: no such heading',
      'docs/images/none.png: no such file'
    ])
  })
})

/** The links of a page (relative to the project) that lead nowhere, each with why. */
function brokenLinks(page: string, markdown: string): string[] {
  const broken: string[] = []
  const text = markdown.replace(/^(\s*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\2\s*$/gm, '')
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target)) continue // another site, or mailto:
    const [path, anchor] = target.split('#')
    const file = path ? normalize(join(dirname(page), path)) : page
    if (!existsSync(join(PROJECT, file))) {
      broken.push(`${target}: no such file`)
    } else if (anchor !== undefined && file.endsWith('.md')) {
      const headings = anchorsOf(path ? readFileSync(join(PROJECT, file), 'utf8') : markdown)
      if (!headings.has(anchor)) broken.push(`${target}: no such heading`)
    }
  }
  return broken
}

/**
 * The anchors GitHub gives a page: each heading's text, lower-cased, without punctuation, spaces
 * as hyphens (a repeated one numbered), and every `<a id="…">`.
 */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const text = markdown.replace(/^(\s*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\2\s*$/gm, '')
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    let anchor = slug
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`
    anchors.add(anchor)
  }
  for (const [, id] of text.matchAll(/<a id="([^"]+)"/g)) anchors.add(id)
  return anchors
}

describe('the workflows a reader copies', () => {
  const workflows = allWorkflows(PROJECT)

  it('are all found: the project’s workflows and every yaml block of the README and its examples', () => {
    const files = workflows.map(workflow => workflow.file)
    expect(files).toEqual(
      expect.arrayContaining(['.github/workflows/ci.yml', 'README.md', 'docs/examples.md'])
    )
    for (const page of ['README.md', 'docs/examples.md']) {
      const fences = readFileSync(join(PROJECT, page), 'utf8').match(/^\s*```ya?ml$/gm) ?? []
      expect(files.filter(file => file === page)).toHaveLength(fences.length)
      expect(fences.length).toBeGreaterThanOrEqual(4)
    }
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
      expect.stringMatching(/^gives a value the action refuses: Give `app` .*all are empty\.$/),
      'reads an output this action does not declare: uri',
      'reads steps.build, which is no earlier step of its job'
    ])
    const misspelt = {
      ...example,
      workflow: example.workflow.replace('coolify-deploy-follow@v1', 'coolify-deploy-folow@v1')
    }
    expect(problems(misspelt, manifest)).toContain(
      'uses OWNER/coolify-deploy-folow@v1, which is not this action as the docs name it'
    )
    const twice = {
      ...example,
      workflow: example.workflow
        .replace(
          '    runs-on: ubuntu-latest',
          '    runs-on: ubuntu-latest\n    environment: production'
        )
        .replace('    app_uuid: abc', '    app-uuid: abc\n          environment: production')
    }
    expect(problems(twice, manifest)).toContain(
      'sets both the job’s environment and the environment input'
    )
    const duplicate = { ...example, workflow: `${example.workflow}on: pull_request\n` }
    expect(problems(duplicate, manifest)).toEqual([expect.stringMatching(/unique/)])
  })

  it('notice a value the action refuses', () => {
    const step = (timeout: string): WorkflowExample =>
      workflowExamples(
        [
          '```yaml',
          '- uses: OWNER/coolify-deploy-follow@v1',
          '  with:',
          '    coolify-url: ${{ vars.COOLIFY_URL }}',
          '    token: ${{ secrets.COOLIFY_TOKEN }}',
          '    app: web',
          `    timeout: ${timeout}`,
          '```'
        ].join('\n'),
        'page.md'
      )[0]
    expect(problems(step('15m'), manifest)).toEqual([])
    expect(problems(step('forever'), manifest)).toEqual([
      expect.stringMatching(/^gives a value the action refuses: Input `timeout`: "forever"/)
    ])
  })

  it("notice an output read as steps.x.outputs['y'] and through needs", () => {
    const [example] = workflowExamples(
      [
        '```yaml',
        'jobs:',
        '  deploy:',
        '    runs-on: ubuntu-latest',
        '    outputs:',
        '      url: ${{ steps.deploy.outputs.url }}',
        '      link: ${{ steps.deploy.outputs.link }}',
        '      sha: ${{ steps.build.outputs.sha }}',
        '    steps:',
        '      - id: deploy',
        '        uses: OWNER/coolify-deploy-follow@v1',
        '        with:',
        '          coolify-url: https://coolify.example.com',
        '          token: ${{ secrets.COOLIFY_TOKEN }}',
        '          app: web',
        "      - run: echo \"${{ steps.deploy.outputs['urls'] }} ${{ steps['deploy'].outputs.url }}\"",
        '  check:',
        '    needs: deploy',
        '    runs-on: ubuntu-latest',
        '    steps:',
        '      - run: curl "${{ needs.deploy.outputs.url }}${{ needs.deploy.outputs[\'uri\'] }}"',
        '      - run: echo "${{ needs.build.outputs.sha }}"',
        '```'
      ].join('\n'),
      'page.md'
    )
    expect(problems(example, manifest)).toEqual([
      'reads an output this action does not declare: urls',
      'reads an output this action does not declare: link',
      "job deploy's outputs read steps.build, no step of it",
      'reads needs.deploy.outputs.uri, which that job does not declare',
      'reads needs.build, a job it does not need'
    ])
  })

  it('notice a delete-preview that never runs: no pull_request closed in `on`', () => {
    const step = [
      '- uses: OWNER/coolify-deploy-follow@v1',
      '  with:',
      '    coolify-url: https://coolify.example.com',
      '    token: ${{ secrets.COOLIFY_TOKEN }}',
      '    app: web',
      '    pr: ${{ github.event.number }}',
      "    delete-preview: ${{ github.event.action == 'closed' }}"
    ]
    const page = (on: string[]): string =>
      [
        '```yaml',
        ...on,
        'jobs:',
        '  preview:',
        '    runs-on: ubuntu-latest',
        '    steps:',
        ...step.map(line => `      ${line}`),
        '```'
      ].join('\n')
    const never = 'sets delete-preview, but never runs when a pull request closes'
    const [steps] = workflowExamples(['```yaml', ...step, '```'].join('\n'), 'page.md')
    expect(problems(steps, manifest)).toEqual([never])
    for (const on of [['on: pull_request'], ['on:', '  pull_request:', '    types: [opened]']]) {
      expect(problems(workflowExamples(page(on), 'page.md')[0], manifest)).toEqual([never])
    }
    const closed = ['on:', '  pull_request:', '    types: [opened, closed]']
    expect(problems(workflowExamples(page(closed), 'page.md')[0], manifest)).toEqual([])
  })
})

/** The README and the guides in docs/: what a reader of the action copies. */
const GUIDES = documentationPages(PROJECT).filter(
  page => page === 'README.md' || page.startsWith('docs/')
)

/** What is wrong with a command line of the tool: what its own option parser says, if anything. */
function commandProblem(args: string[]): string | undefined {
  try {
    parseInvocation(args, {})
    return undefined
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    // The flags parsed; only a file an example names (a CA, a token file) is not on this machine.
    if (/^--[\w-]+: cannot read /.test(message)) return undefined
    return message
  }
}

describe('the command lines a reader copies', () => {
  const commands = GUIDES.flatMap(page =>
    commandLines(readFileSync(join(PROJECT, page), 'utf8'), page)
  )

  it('are found in the README and the command line’s guide, in code blocks and inline code', () => {
    const where = commands.map(command => command.file)
    expect(where).toContain('README.md')
    expect(where.filter(file => file === 'docs/cli.md').length).toBeGreaterThanOrEqual(4)
    expect(commands).toContainEqual(
      expect.objectContaining({
        file: 'docs/cli.md',
        args: ['--url', 'https://coolify.example.com', '--app', 'web']
      })
    )
  })

  it.each(commands.map(command => [`${command.file}:${command.line}`, command] as const))(
    '%s parses with the command line’s own options',
    (_, command) => {
      expect(commandProblem(command.args)).toBeUndefined()
    }
  )

  it('notice a misspelt flag, a flag without its value and a stray word', () => {
    const page = [
      'Run `npx coolify-deploy-follow@1 --url https://coolify.example.com --ap web`, or:',
      '```sh',
      "COOLIFY_TOKEN=x npx --yes coolify-deploy-follow@1 --app 'My shop/api' \\",
      '  --timeout # a comment',
      'exec "$tool/node_modules/.bin/coolify-deploy-follow" --app web now',
      'npm install coolify-deploy-follow@1',
      '```',
      '- uses: OWNER/coolify-deploy-follow@v1'
    ].join('\n')
    const found = commandLines(page, 'page.md')
    expect(found.map(command => [command.line, command.args])).toEqual([
      [1, ['--url', 'https://coolify.example.com', '--ap', 'web']],
      [3, ['--app', 'My shop/api', '--timeout']],
      [5, ['--app', 'web', 'now']]
    ])
    expect(found.map(command => commandProblem(command.args))).toEqual([
      '--ap: no such option (--help lists them).',
      '--timeout: needs a value.',
      'An argument without an option (not shown): every value follows its option, quoted when it holds spaces (--help lists them).'
    ])
  })
})

/**
 * The tool is not on npm yet (`npm view coolify-deploy-follow` answers E404): a page that names an
 * npm version of it says so in the same paragraph. Set this once a release is published.
 */
const ON_NPM = false

/** Why a page's way of getting the tool does not work today, or undefined when it does. */
function specProblem({ spec, paragraph }: { spec: string; paragraph: string }): string | undefined {
  const pkg = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as {
    name: string
    bin: Record<string, string>
    files: string[]
    scripts: Record<string, string>
  }
  const bin = pkg.bin[pkg.name]
  const tracked = (path: string): boolean =>
    execFileSync('git', ['-C', PROJECT, 'ls-files', '--', path], { encoding: 'utf8' }).trim() !== ''
  const fromGit = /^(?:coolify-deploy-follow@)?github:OWNER\/coolify-deploy-follow#[\w.-]+$/
  if (fromGit.test(spec)) {
    // npm runs what is committed: nothing may need building, and the file `bin` names is there.
    if (pkg.scripts.prepare || pkg.scripts.prepack) return `${spec}: a git install would build`
    if (!tracked(bin) || !pkg.files.some(entry => bin.startsWith(entry)))
      return `${spec}: ${bin} is not committed and packed`
    return undefined
  }
  if (/^(?:\.\/)?dist\/cli\/index\.js$/.test(spec))
    return spec.endsWith(bin) && tracked(bin) ? undefined : `${spec}: not the committed tool`
  if (/^coolify-deploy-follow@\d[\w.-]*$/.test(spec)) {
    if (ON_NPM) return undefined
    return /not (?:on npm|published) yet/i.test(paragraph) && /E404/.test(paragraph)
      ? undefined
      : `${spec}: not on npm yet, and the paragraph does not say so`
  }
  return `${spec}: not a form this repository supports`
}

describe('the ways the pages fetch the tool', () => {
  const specs = GUIDES.flatMap(page =>
    packageSpecs(readFileSync(join(PROJECT, page), 'utf8'), page)
  )

  it('are found: npx, npm install, node, and the component’s version', () => {
    const kinds = specs.map(({ file, spec }) => `${file} ${spec.split(/[@#]/)[0]}`)
    expect(kinds).toEqual(
      expect.arrayContaining([
        'docs/cli.md github:OWNER/coolify-deploy-follow',
        'docs/cli.md coolify-deploy-follow',
        'docs/cli.md dist/cli/index.js',
        'README.md github:OWNER/coolify-deploy-follow',
        'docs/gitlab.md coolify-deploy-follow'
      ])
    )
  })

  it('each work today, or say in their paragraph what they wait for', () => {
    expect(
      specs.map(spec => [`${spec.file}:${spec.line}`, specProblem(spec)]).filter(([, p]) => p)
    ).toEqual([])
  })

  it('notice an npm version where nothing says it is not there yet, and a misspelt repository', () => {
    const page = [
      'Run it:',
      '',
      '```sh',
      'npx --yes coolify-deploy-follow@1 --url https://coolify.example.com --app web',
      'npx --yes github:OWNER/coolify-deploy-folow#v1 --url https://coolify.example.com --app web',
      '```',
      '',
      'Not on npm yet (`E404`): `npm install coolify-deploy-follow@1` waits for it.'
    ].join('\n')
    expect(packageSpecs(page, 'page.md').map(specProblem)).toEqual([
      'coolify-deploy-follow@1: not on npm yet, and the paragraph does not say so',
      'github:OWNER/coolify-deploy-folow#v1: not a form this repository supports',
      undefined
    ])
  })

  it('the component’s default version is an npm one, which docs/gitlab.md says is not there yet', () => {
    const template = readFileSync(join(PROJECT, 'templates/deploy.yml'), 'utf8')
    const version = /\n {4}version:\n(?: {6}.*\n)*? {6}default: '([^']*)'/.exec(template)?.[1]
    const gitlab = readFileSync(join(PROJECT, 'docs/gitlab.md'), 'utf8').replace(/\s+/g, ' ')
    const paragraph = gitlab.split(/(?<=\.) (?=`OWNER` stands)/)[1] ?? gitlab
    expect(specProblem({ spec: `coolify-deploy-follow@${version}`, paragraph })).toBeUndefined()
  })

  it('a git install of the repository runs the committed tool', () => {
    // What `npx github:…` and the component's `version: github:…` do, from this clone's commit.
    const prefix = mkdtempSync(join(tmpdir(), 'git-install-'))
    try {
      const head = execFileSync('git', ['-C', PROJECT, 'rev-parse', 'HEAD'], { encoding: 'utf8' })
      execFileSync(
        'npm',
        [
          'install',
          '--prefix',
          prefix,
          '--no-audit',
          '--no-fund',
          '--loglevel=error',
          `coolify-deploy-follow@git+file://${PROJECT}#${head.trim()}`
        ],
        { encoding: 'utf8', stdio: 'pipe' }
      )
      const help = execFileSync(
        join(prefix, 'node_modules/.bin/coolify-deploy-follow'),
        ['--help'],
        {
          encoding: 'utf8'
        }
      )
      expect(help).toMatch(/^Usage: coolify-deploy-follow --url URL --app NAME/)
    } finally {
      rmSync(prefix, { recursive: true, force: true })
    }
  }, 120_000)
})

/** Options of other commands the pages name in their text: Docker's (docs/review-apps.md). */
const OTHER_COMMANDS_OPTIONS = new Set(['--cap-add', '--device', '--privileged', '--network'])

describe('the options the pages name in their text', () => {
  const options = GUIDES.flatMap(page =>
    inlineOptions(readFileSync(join(PROJECT, page), 'utf8'), page)
  ).filter(option => !OTHER_COMMANDS_OPTIONS.has(option.args[0]))

  it('are found, in the command line’s guide and the other pages', () => {
    expect(options.map(option => option.args[0])).toEqual(
      expect.arrayContaining(['--no-wait', '--token-file', '--header', '--verbose'])
    )
    expect(new Set(options.map(option => option.file))).toEqual(
      new Set(['docs/cli.md', 'docs/gitlab.md', 'docs/inputs.md'])
    )
  })

  it.each(
    options.map(option => [`${option.file}:${option.line} ${option.args[0]}`, option] as const)
  )('%s is an option of the command line', (_, option) => {
    // Named alone, an option that takes a value is still one.
    const problem = commandProblem(option.args)
    expect(problem?.endsWith('needs a value.') ? undefined : problem).toBeUndefined()
  })

  it('notice an option the command line does not have', () => {
    const [option] = inlineOptions('Turn it off with `--no-follow`.', 'page.md')
    expect(commandProblem(option.args)).toBe('--no-follow: no such option (--help lists them).')
  })
})

describe('the GitLab pipelines a reader copies', () => {
  const template = (): Set<string> =>
    componentInputs(readFileSync(join(PROJECT, 'templates/deploy.yml'), 'utf8'))
  const blocks = GUIDES.flatMap(page =>
    yamlBlocks(readFileSync(join(PROJECT, page), 'utf8'), page).filter(isGitLabPipeline)
  )

  it('are found, each including the component', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2)
    for (const block of blocks) expect(componentIncludes(block)).toHaveLength(1)
  })

  it.each(blocks.map(block => [`${block.file}:${block.firstLine}`, block] as const))(
    '%s gives the component only inputs its spec declares',
    (_, block) => {
      const declared = template()
      for (const given of componentIncludes(block)) {
        expect(given.filter(name => !declared.has(name))).toEqual([])
      }
    }
  )

  it('notice an input the component does not declare', () => {
    const [block] = yamlBlocks(
      [
        '```yaml',
        'include:',
        '  - component: $CI_SERVER_FQDN/OWNER/coolify-deploy-follow/deploy@v1',
        '    inputs:',
        '      coolify-url: https://coolify.example.com',
        '      app-name: web',
        '```'
      ].join('\n'),
      'page.md'
    )
    expect(componentIncludes(block)).toEqual([['coolify-url', 'app-name']])
    expect(componentIncludes(block)[0].filter(name => !template().has(name))).toEqual(['app-name'])
  })
})

describe('the token’s abilities in docs/inputs.md', () => {
  const rows = table(INPUTS_PAGE, 'The token')

  /**
   * The abilities a row names, and each route it names with the ability Coolify 4.3.11's
   * routes/api.php asks for it (not the fake's table: that is checked against the same source).
   */
  function check(row: string[]): { listed: string[]; asked: string[] } {
    const [, abilities, why] = row
    const listed = [...abilities.matchAll(/`([\w:]+)`/g)].map(match => match[1])
    const asked = [...why.matchAll(/`(GET|POST|PATCH|PUT|DELETE) (\/[^`\s]*)`/g)].map(
      ([, method, path]) => {
        const found = routeAbility(method, path.replace(/\{\w+\}/g, 'x'))
        return `${method} ${path}: ${found?.ability ?? 'no such route'}`
      }
    )
    return { listed, asked }
  }

  it('has a row for every input that changes applications, and for previews and review apps', () => {
    const named = rows.map(([what]) => what).join(' ')
    for (const input of ['git-branch', 'domains', 'env', 'image-tag', 'commit']) {
      expect(named).toContain(`\`${input}\``)
    }
    for (const input of ['rollback-on-failure', 'delete-preview', 'review-app', 'trigger: false']) {
      expect(named).toContain(`\`${input}\``)
    }
  })

  it.each(rows.map(row => [row[0], row] as const))(
    '%s: names the ability Coolify asks for each route it calls',
    (_, row) => {
      const { listed, asked } = check(row)
      expect(asked.filter(route => route.endsWith('no such route'))).toEqual([])
      for (const route of asked) expect(listed).toContain(route.split(': ')[1])
    }
  )

  it('notice a row whose route needs an ability it does not name', () => {
    const row = ['`delete-preview`', '`deploy`', '`DELETE /applications/{uuid}/previews/{pr}`']
    const { listed, asked } = check(row)
    expect(asked).toEqual(['DELETE /applications/{uuid}/previews/{pr}: write'])
    expect(listed).not.toContain('write')
    // The rollback is `deploy` in routes/api.php 269, though it changes the application.
    expect(check(['', '`write`', '`POST /applications/{uuid}/rollback`']).asked).toEqual([
      'POST /applications/{uuid}/rollback: deploy'
    ])
  })

  it('notice a route Coolify does not have', () => {
    expect(check(['', '`read`', '`GET /applications/{uuid}/history`']).asked).toEqual([
      'GET /applications/{uuid}/history: no such route'
    ])
  })
})

describe('the table of routes/api.php the docs are checked against', () => {
  /** Each fake route whose ability is not the one routes/api.php gives it. */
  function differ(fake: Array<{ method: string; pattern: RegExp; ability?: string }>): string[] {
    return fake.flatMap(route => {
      // The fake's patterns: a segment is `([^/]+)`; a sample path stands in for it.
      const path = route.pattern.source
        .replace(/^\^|\$$/g, '')
        .replaceAll('([^/]+)', 'x')
        .replaceAll('\\/', '/')
      const coolify = routeAbility(route.method, path)
      return coolify?.ability === route.ability
        ? []
        : [`${route.method} ${path}: fake ${route.ability}, Coolify ${coolify?.ability}`]
    })
  }

  it('gives the fake Coolify’s routes the abilities Coolify asks for them', () => {
    expect(differ([...routes('4x', '4.3'), ...routes('4x', '4.2')])).toEqual([])
  })

  it('notice a fake route whose ability differs', () => {
    const planted = {
      method: 'POST',
      pattern: /^\/applications\/([^/]+)\/rollback$/,
      ability: 'write'
    }
    expect(differ([planted])).toEqual(['POST /applications/x/rollback: fake write, Coolify deploy'])
    expect(routeAbility('PATCH', '/applications/x/envs/bulk')).toEqual({
      line: 243,
      route: '/applications/{uuid}/envs/bulk',
      ability: 'write'
    })
  })

  // The mirror of Coolify's repository is there on the project's machines, not in every clone.
  const mirror = process.env.COOLIFY_MIRROR ?? '/work/.mirror/coollabsio+coolify/repo'
  const source = existsSync(mirror)
    ? execFileSync('git', ['-C', mirror, 'show', `${COOLIFY_COMMIT}:routes/api.php`], {
        encoding: 'utf8'
      }).split('\n')
    : undefined
  ;(source ? it : it.skip)('cites for each row the line of routes/api.php that says it', () => {
    const wrong = ROUTE_ABILITIES.filter(([line, method, path, ability]) => {
      const text = source![line - 1] ?? ''
      return !(
        text.includes(`Route::${method.toLowerCase()}('${path}'`) &&
        text.includes(`'api.ability:${ability}'`)
      )
    })
    expect(wrong).toEqual([])
  })
})

describe('what the pages say of a team member’s token', () => {
  /** The Coolify version each of a member's abilities is first refused from, as a page's rows say it. */
  function refusedSince(markdown: string): Record<string, string> {
    const since: Record<string, string> = {}
    for (const [feature, oldest] of table(markdown, 'Coolify')) {
      if (!/team member's token refused/.test(feature)) continue
      const version = /^(\d+\.\d+\.\d+)/.exec(oldest)?.[1] ?? 'none'
      for (const [, ability] of feature.matchAll(/`([\w:]+)`/g)) since[ability] ??= version
    }
    return since
  }

  /** The first version the fixture gives for each ability. */
  const expected: Record<string, string> = {}
  for (const { since, abilities } of MEMBER_REFUSALS) {
    for (const ability of abilities) expected[ability] ??= since
  }

  it('docs/versions.md: from which Coolify each ability of a member’s token is refused', () => {
    const versions = readFileSync(join(PROJECT, 'docs/versions.md'), 'utf8')
    expect(refusedSince(versions)).toEqual(expected)
  })

  it('notice a row that puts the refusal of `write` at 4.2.0 (4.1.2 already refuses it)', () => {
    const old = [
      '## Coolify',
      '',
      '| feature | oldest Coolify | on an older one |',
      '| --- | --- | --- |',
      "| a team member's token refused for `deploy`, `write` or `read:sensitive` | 4.2.0 | |"
    ].join('\n')
    expect(refusedSince(old)).not.toEqual(expected)
  })

  it('docs/inputs.md: names the first version of each refusal with its message', () => {
    const paragraph =
      /\*\*As an admin or owner of the team\.\*\*([^]*?)\n\n/.exec(INPUTS_PAGE)?.[1] ?? ''
    const flat = paragraph.replace(/\s+/g, ' ')
    // The first version named is the first that refuses anything.
    expect(/\d+\.\d+(\.\d+)?/.exec(flat)?.[0]).toBe(MEMBER_REFUSALS[0].since)
    for (const { message } of MEMBER_REFUSALS) expect(flat).toContain(message.split(' (…)')[0])
  })

  it('the fake Coolify refuses a member’s token as the fixture says, for 4.2 and 4.3', () => {
    const answer = (version: '4.2' | '4.3', ability: string): string | undefined => {
      const reply =
        teamMembership('4x', { role: 'member', version }, [ability]) ??
        memberAbilities('4x', 'member', [ability])
      return reply && (JSON.parse(reply.body) as { message: string }).message
    }
    const refused = (version: string) =>
      MEMBER_REFUSALS.filter(
        ({ since }) => since.localeCompare(version, 'en', { numeric: true }) <= 0
      )
    for (const version of ['4.2', '4.3'] as const) {
      const rows = refused(`${version}.0`)
      for (const ability of ['root', 'write', 'write:sensitive', 'deploy', 'read:sensitive']) {
        // The newest row that names the ability is what that version answers.
        const row = rows.filter(({ abilities }) => abilities.includes(ability)).at(-1)
        expect([version, ability, answer(version, ability)?.split(' (')[0]]).toEqual([
          version,
          ability,
          row?.message.split(' (')[0]
        ])
      }
    }
  })
})

describe('what the guides say the code does', () => {
  it('lists every input `trigger: false` refuses, and no other', () => {
    const examples = readFileSync(join(PROJECT, 'docs/examples.md'), 'utf8')
    const listed = /Inputs that\s+would change or start something \(([^)]*)\) are refused/.exec(
      examples
    )?.[1]
    expect(listed).toBeDefined()
    const names = [...(listed ?? '').matchAll(/`([\w-]+)`/g)].map(match => match[1])
    expect(names.sort()).toEqual([...REFUSED_WITHOUT_TRIGGER].sort())
  })
})

describe('what the pages say of versions, masks and the error line', () => {
  const pages = ['README.md', 'CHANGELOG.md', 'SECURITY.md', ...GUIDES].map(page => ({
    page,
    text: readFileSync(join(PROJECT, page), 'utf8')
  }))

  it('name the Node version package.json’s engines asks for', () => {
    const engines = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')).engines.node
    const minimum = /^>=(\d+\.\d+\.\d+)$/.exec(engines)?.[1]
    expect(minimum).toBeDefined()
    const named = pages.flatMap(({ page, text }) =>
      [...text.replace(/\s+/g, ' ').matchAll(/Node (\d+(?:\.\d+)*) or newer/g)].map(
        match => `${page}: ${match[1]}`
      )
    )
    // The GitLab component's inputs describe its image too.
    const template = readFileSync(join(PROJECT, 'templates/deploy.yml'), 'utf8')
    named.push(
      ...[...template.matchAll(/Node (\d+(?:\.\d+)*) or newer/g)].map(
        match => `templates/deploy.yml: ${match[1]}`
      )
    )
    expect(named.length).toBeGreaterThan(0)
    expect(named.filter(entry => !entry.endsWith(`: ${minimum}`))).toEqual([])
  })

  it('say which env values SECURITY.md leaves unmasked, as the code decides', () => {
    const security = pages.find(({ page }) => page === 'SECURITY.md')!.text.replace(/\s+/g, ' ')
    const paragraph = /\*\*`env` values\*\*[^-]*/.exec(security)?.[0] ?? ''
    expect(paragraph).toMatch(/under four characters/)
    expect(paragraph).toMatch(/up to six digits/)
    expect(paragraph).toMatch(/up to twelve letters all in one case/)
    expect([worthMasking('abc'), worthMasking('999999'), worthMasking('abcdefghijkl')]).toEqual([
      false,
      false,
      false
    ])
    expect([worthMasking('1234567'), worthMasking('abcdefghijklm'), worthMasking('Abcd')]).toEqual([
      true,
      true,
      true
    ])
  })

  it('give the command line’s flag for `headers` and how its early errors start', () => {
    const cli = readFileSync(join(PROJECT, 'docs/cli.md'), 'utf8').replace(/\s+/g, ' ')
    expect(cli).toContain('`--header` for `headers`')
    expect(cli).toContain('start with `coolify-deploy-follow:`')
  })
})
