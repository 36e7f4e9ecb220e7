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

/** A command line of the command-line tool on a page: where it is, and the words after the command. */
export interface CommandLine {
  file: string
  line: number
  args: string[]
}

/**
 * The tool run as a command, options following: `npx coolify-deploy-follow@1 --url …`,
 * `npx github:OWNER/coolify-deploy-follow#v1.2.0 …`, `"$tool/node_modules/.bin/coolify-deploy-follow" …`.
 * `uses: OWNER/coolify-deploy-follow@v1` and `npm install … coolify-deploy-follow@1` are no commands.
 */
const COMMAND = /(?:^|[\s"'`/:])coolify-deploy-follow(?:[@#][^\s"'`]*)?"?(?=[ \t]+-)/g

/** Every command line of the tool on a Markdown page: in code blocks, YAML scripts and inline code. */
export function commandLines(markdown: string, file: string): CommandLine[] {
  const lines = markdown.split('\n')
  const found: CommandLine[] = []
  lines.forEach((text, index) => {
    for (const match of text.matchAll(COMMAND)) {
      let rest = text.slice(match.index + match[0].length)
      // A line ending in a backslash goes on on the next one.
      for (let next = index + 1; /\\\s*$/.test(rest) && next < lines.length; next++) {
        rest = `${rest.replace(/\\\s*$/, '')} ${lines[next]}`
      }
      found.push({ file, line: index + 1, args: shellWords(rest) })
    }
  })
  return found
}

/** Options named in a page's inline code, `--app 'My shop/staging/api'`: each with its words. */
export function inlineOptions(markdown: string, file: string): CommandLine[] {
  const found: CommandLine[] = []
  markdown.split('\n').forEach((text, index) => {
    for (const [, span] of text.matchAll(/`(--[a-z][\w-]*[a-z](?: [^`]*)?)`/g)) {
      found.push({ file, line: index + 1, args: shellWords(span) })
    }
  })
  return found
}

/**
 * The words of a shell command as the shell splits them (quotes taken off), up to where the
 * command ends: an operator, a redirection, a comment, or the end of inline code.
 */
export function shellWords(text: string): string[] {
  const words: string[] = []
  let word: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1)
      if (end < 0) throw new Error(`an unclosed ${c} in: ${text}`)
      word = (word ?? '') + text.slice(i + 1, end)
      i = end
    } else if (c === '\\' && i + 1 < text.length) {
      word = (word ?? '') + text[++i]
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word)
      word = undefined
    } else if (/[`|;&<>]/.test(c) || (c === '#' && word === undefined)) {
      break
    } else {
      word = (word ?? '') + c
    }
  }
  if (word !== undefined) words.push(word)
  return words
}

/** The inputs a GitLab CI/CD component declares: the keys of `spec: inputs` in its header. */
export function componentInputs(template: string): Set<string> {
  const [header] = template.split(/^---$/m)
  const inputs = parseDocument(header).getIn(['spec', 'inputs'])
  if (!isMap(inputs)) throw new Error('the component declares no spec: inputs')
  return new Set(inputs.items.map(pair => String((pair.key as { value: unknown }).value)))
}

/** This project's component, included from the repository or as a catalog component. */
const OUR_COMPONENT = /coolify-deploy-follow\/(.+\/)?deploy(\.yml|@)/

/** The inputs each include of this project's component gives, in a GitLab pipeline's block. */
export function componentIncludes(block: YamlBlock): string[][] {
  const includes = parseDocument(block.lines.join('\n')).get('include')
  if (!isSeq(includes)) return []
  return includes.items
    .filter(
      item => isMap(item) && OUR_COMPONENT.test(String(item.get('remote') ?? item.get('component')))
    )
    .map(item => {
      const given = (item as YAMLMap).get('inputs')
      return isMap(given)
        ? given.items.map(pair => String((pair.key as { value: unknown }).value))
        : []
    })
}

/** Where a page gets the tool from: an npx or npm command's package, or the component's `version`. */
export interface PackageSpec {
  file: string
  line: number
  /** As npm reads it: `coolify-deploy-follow@1`, `github:OWNER/coolify-deploy-follow#v1`, … */
  spec: string
  /** The page's paragraph (or code block) around it, spaces folded. */
  paragraph: string
}

/**
 * Every way a page fetches or runs the tool: `npx [--yes] SPEC`, `npm install … SPEC`,
 * `node …dist/cli/index.js`, and a component include's `version: SPEC` (which the component
 * installs as `coolify-deploy-follow@SPEC`).
 */
export function packageSpecs(markdown: string, file: string): PackageSpec[] {
  const lines = markdown.split('\n')
  const found: PackageSpec[] = []
  const paragraphOf = (index: number): string => {
    let start = index
    let end = index
    while (start > 0 && lines[start - 1].trim() !== '' && !/^\s*```/.test(lines[start])) start--
    while (end < lines.length - 1 && lines[end + 1].trim() !== '' && !/^\s*```/.test(lines[end]))
      end++
    return lines
      .slice(start, end + 1)
      .join(' ')
      .replace(/\s+/g, ' ')
  }
  lines.forEach((text, index) => {
    const add = (spec: string): void => {
      found.push({ file, line: index + 1, spec, paragraph: paragraphOf(index) })
    }
    for (const [, spec] of text.matchAll(/\bnpx (?:--yes )?([^\s`'"]*coolify-deploy[^\s`'"]*)/g))
      add(spec)
    for (const [, words] of text.matchAll(/\bnpm (?:install|i) ([^`\n]*)/g)) {
      const spec = words.split(/\s+/).find(word => /coolify-deploy/.test(word))
      if (spec) add(spec.replace(/^["']|["']$/g, ''))
    }
    for (const [, path] of text.matchAll(/\bnode ([\w./-]*dist\/cli\/index\.js)/g)) add(path)
    const version = /^\s+version: (\S+)/.exec(text)?.[1]
    if (version && /coolify-deploy|^\d/.test(version))
      add(`coolify-deploy-follow@${version.replace(/^["']|["']$/g, '')}`)
  })
  return found
}
