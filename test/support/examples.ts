/**
 * The workflows a reader copies: every ```yaml block of the README, the pages beside it and the
 * guides in docs/, and the project's own workflows. A block that is part of a workflow (a list of
 * steps, jobs without `on`) is wrapped into a whole one, so that it can be parsed and linted like a
 * file in .github/workflows; `lineOf` maps a line of the wrapped text back to the page.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { isMap, isSeq, parseDocument, type Document, type YAMLMap } from 'yaml'

export interface WorkflowExample {
  /** The page (or workflow file), relative to the project. */
  file: string
  /** The whole workflow: the block itself, or the block wrapped into one. */
  workflow: string
  /** The page's line number of a line of `workflow` (both count from 1). */
  lineOf(line: number): number
}

/** What a list of steps is wrapped in; the block's lines follow, indented to sit under `steps:`. */
const STEPS_HEADER = ['on: push', 'jobs:', '  example:', '    runs-on: ubuntu-latest', '    steps:']
const STEPS_INDENT = '      '

/** This action, as the examples and the project's own workflows name it in `uses:`. */
export function isThisAction(uses: unknown): boolean {
  return (
    typeof uses === 'string' &&
    /^((https:\/\/github\.com\/)?OWNER\/coolify-deploy-follow@\S+|\.\/?)$/.test(uses)
  )
}

/** Every workflow a reader meets in this project: its workflows, the README's and docs/'s examples. */
export function allWorkflows(project: string): WorkflowExample[] {
  const workflows = join(project, '.github/workflows')
  const files = readdirSync(workflows).filter(name => /\.ya?ml$/.test(name))
  const pages = documentationPages(project)
  return [
    ...files.map(name => {
      const file = relative(project, join(workflows, name))
      return { file, workflow: readFileSync(join(project, file), 'utf8'), lineOf: (n: number) => n }
    }),
    ...pages.flatMap(page => workflowExamples(readFileSync(join(project, page), 'utf8'), page))
  ]
}

/** The project's own pages beside the README: what they link to is checked too. */
const ROOT_PAGES = ['README.md', 'CONTRIBUTING.md', 'SECURITY.md', 'CHANGELOG.md']

/** The README, the pages beside it and every guide in docs/, relative to the project. */
export function documentationPages(project: string): string[] {
  return [
    ...ROOT_PAGES.filter(page => existsSync(join(project, page))),
    ...markdownUnder(join(project, 'docs'), project)
  ]
}

function markdownUnder(dir: string, project: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter(name => name.endsWith('.md'))
    .sort()
    .map(name => relative(project, join(dir, name)))
}

/** A ```yaml block of a page: its lines and the page's line number of its first line. */
export interface YamlBlock {
  file: string
  lines: string[]
  firstLine: number
}

/** Every ```yaml block of a Markdown page. */
export function yamlBlocks(markdown: string, file: string): YamlBlock[] {
  const blocks: YamlBlock[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```ya?ml\s*$/.exec(lines[i])
    if (!fence) continue
    const indent = fence[1].length
    const start = i + 1
    let end = start
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++
    blocks.push({
      file,
      lines: lines.slice(start, end).map(line => line.slice(indent)),
      firstLine: start + 1
    })
    i = end
  }
  return blocks
}

/**
 * A GitLab pipeline rather than a workflow: it includes files or components, or has a job with a
 * `script`. The GitLab guide's blocks are checked against the component instead.
 */
export function isGitLabPipeline(block: YamlBlock): boolean {
  const contents = parseDocument(block.lines.join('\n')).contents
  if (!isMap(contents)) return false
  if (contents.has('include') || contents.has('stages')) return true
  return contents.items.some(pair => isMap(pair.value) && pair.value.has('script'))
}

/** The ```yaml blocks of a Markdown page that are workflows or steps, each as a whole workflow. */
export function workflowExamples(markdown: string, file: string): WorkflowExample[] {
  return yamlBlocks(markdown, file)
    .filter(block => !isGitLabPipeline(block))
    .map(block => wrap(block.lines, file, block.firstLine))
}

/** `firstLine`: the page's line number of the block's first line. */
function wrap(block: string[], file: string, firstLine: number): WorkflowExample {
  const contents = parseDocument(block.join('\n')).contents
  let header: string[] = []
  let indent = ''
  if (isSeq(contents)) {
    header = STEPS_HEADER
    indent = STEPS_INDENT
  } else if (isMap(contents) && contents.has('jobs')) {
    if (!contents.has('on')) header = ['on: push']
  } else {
    throw new Error(`${file}:${firstLine}: a yaml block that is neither a workflow nor steps`)
  }
  const body = block.map(line => (line ? indent + line : line))
  return {
    file,
    workflow: [...header, ...body].join('\n') + '\n',
    lineOf: line => firstLine + line - 1 - header.length
  }
}

/** Each job's steps, in order: what the checks of workflows walk. */
export function stepsByJob(document: Document): YAMLMap[][] {
  const jobs = document.get('jobs')
  if (!isMap(jobs)) return []
  return jobs.items.map(job => {
    const steps = isMap(job.value) ? job.value.get('steps') : undefined
    return isSeq(steps) ? steps.items.filter(step => isMap(step)) : []
  })
}
