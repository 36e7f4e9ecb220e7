/**
 * A job summary as plain text lines, for a terminal: what GitHub's Summary page would show. The
 * summary is what @actions/core's `summary` writes: HTML elements (headings, tables, details,
 * lists, links) with Markdown fenced code blocks between them.
 */

type Node = string | Element

interface Element {
  tag: string
  href?: string
  alt?: string
  children: Node[]
}

const VOID = new Set(['br', 'hr', 'img', 'input', 'meta', 'link', 'wbr'])
const BLOCK = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'details', 'ul', 'ol', 'pre'])
const BLOCK_WRAPPERS = new Set(['p', 'div', 'blockquote', 'section'])

/** Fenced code blocks stand in the HTML as their number between private-use marks, so no tag is seen in them. */
const CODE_MARK = /\uE000(\d+)\uE000/

export function summaryToText(summary: string): string[] {
  const code: string[][] = []
  const html = withoutFencedCode(summary, lines => `\uE000${code.push(lines) - 1}\uE000`)
  return trimBlankLines(render(parse(html), code))
}

/** Replaces each fenced code block (``` or longer, any info string) by `mark(its lines)`. */
function withoutFencedCode(text: string, mark: (lines: string[]) => string): string {
  const out: string[] = []
  let fence: string | undefined
  let block: string[] = []
  for (const line of text.split('\n')) {
    if (fence === undefined) {
      const open = /^\s*(`{3,}|~{3,})/.exec(line)
      if (open) [fence, block] = [open[1], []]
      else out.push(line)
    } else if (line.trim() === fence) {
      out.push(mark(block))
      fence = undefined
    } else {
      block.push(line)
    }
  }
  if (fence !== undefined) out.push(mark(block))
  return out.join('\n')
}

/** A forgiving HTML parser: unknown or unbalanced closing tags are dropped, open ones closed. */
function parse(html: string): Node[] {
  const root: Element = { tag: '', children: [] }
  const stack: Element[] = [root]
  for (const token of html.split(/(<\/?[a-zA-Z][^>]*>)/)) {
    const tag = /^<(\/?)([a-zA-Z0-9]+)([^>]*)>$/.exec(token)
    if (!tag) {
      if (token) stack[stack.length - 1].children.push(decodeEntities(token))
      continue
    }
    const [, closing, rawName, attributes] = tag
    const name = rawName.toLowerCase()
    if (closing) {
      const open = stack.findLastIndex(element => element.tag === name)
      if (open > 0) stack.length = open
      continue
    }
    const element: Element = {
      tag: name,
      href: attribute(attributes, 'href'),
      alt: attribute(attributes, 'alt'),
      children: []
    }
    stack[stack.length - 1].children.push(element)
    if (!VOID.has(name) && !attributes.trimEnd().endsWith('/')) stack.push(element)
  }
  return root.children
}

function attribute(attributes: string, name: string): string | undefined {
  const match = new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'i').exec(attributes)
  return match ? decodeEntities(match[1] ?? match[2]) : undefined
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' '
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, body: string) => {
    if (body[0] !== '#') return NAMED_ENTITIES[body.toLowerCase()] ?? entity
    const hex = body[1] === 'x' || body[1] === 'X'
    return String.fromCodePoint(parseInt(body.slice(hex ? 2 : 1), hex ? 16 : 10))
  })
}

/** Block elements become their own lines, with a blank line between blocks. */
function render(nodes: readonly Node[], code: readonly string[][]): string[] {
  const lines: string[] = []
  let inline = ''
  const addBlock = (block: string[]): void => {
    if (block.length === 0) return
    if (lines.length > 0 && lines[lines.length - 1] !== '') lines.push('')
    lines.push(...block)
  }
  const flush = (): void => {
    addBlock(textLines(inline))
    inline = ''
  }
  for (const node of nodes) {
    if (typeof node === 'string') {
      for (const [index, part] of node.split(CODE_MARK).entries()) {
        if (index % 2 === 0) inline += part
        else {
          flush()
          addBlock(code[Number(part)].map(line => `    ${line}`))
        }
      }
    } else if (BLOCK.has(node.tag) || BLOCK_WRAPPERS.has(node.tag) || node.tag === 'hr') {
      flush()
      addBlock(block(node, code))
    } else {
      inline += inlineText([node])
    }
  }
  flush()
  return lines
}

function block(element: Element, code: readonly string[][]): string[] {
  switch (element.tag) {
    case 'table':
      return table(element)
    case 'details': {
      const [label] = element.children.filter(isElement).filter(child => child.tag === 'summary')
      const body = element.children.filter(child => child !== label)
      const title = label ? inlineText(label.children).trim() : 'Details'
      return [`▸ ${title}`, ...render(body, code).map(line => (line ? `  ${line}` : line))]
    }
    case 'ul':
    case 'ol':
      return elements(element, 'li').map(
        (item, index) => `${element.tag === 'ol' ? `${index + 1}.` : '-'} ${oneLine(item.children)}`
      )
    case 'pre':
      return inlineText(element.children)
        .split('\n')
        .map(line => `    ${line}`)
    case 'hr':
      return ['─'.repeat(40)]
    case 'blockquote':
      return render(element.children, code).map(line => `> ${line}`)
    case 'p':
    case 'div':
    case 'section':
      return render(element.children, code)
    default: {
      const heading = oneLine(element.children)
      return [heading, '─'.repeat(Math.max(3, [...heading].length))]
    }
  }
}

/**
 * A table as one record per row, `Header  value` on each line, headers aligned: readable at any
 * width. A cell's further lines (a `<br>`, a link's address) line up under its value.
 */
function table(element: Element): string[] {
  const rows = descendants(element, 'tr').map(row =>
    row.children.filter(isElement).filter(cell => cell.tag === 'th' || cell.tag === 'td')
  )
  const hasHeader = rows.length > 1 && rows[0].every(cell => cell.tag === 'th')
  const headers = hasHeader ? rows[0].map(cell => oneLine(cell.children)) : []
  const body = hasHeader ? rows.slice(1) : rows
  const width = Math.max(0, ...headers.map(header => [...header].length)) + 2
  const records = body.map(row =>
    row.flatMap((cell, index) => {
      const [first = '', ...more] = textLines(inlineText(cell.children, { linkOnNewLine: true }))
      const header = headers[index] ?? ''
      if (!header) return [first, ...more]
      return [`${header.padEnd(width)}${first}`, ...more.map(line => `${' '.repeat(width)}${line}`)]
    })
  )
  return records.flatMap((record, index) => (index === 0 ? record : ['', ...record]))
}

/**
 * The text of inline content: `<br>` breaks the line, a link shows its text and its address
 * (after it, or on the next line with `linkOnNewLine`) unless they are the same, an image its alt.
 */
function inlineText(nodes: readonly Node[], options: { linkOnNewLine?: boolean } = {}): string {
  return nodes
    .map(node => {
      if (typeof node === 'string') return node.replace(/[ \t\r\n]+/g, ' ')
      if (node.tag === 'br') return '\n'
      if (node.tag === 'img') return node.alt ? `[${node.alt}]` : ''
      const text = inlineText(node.children, options)
      if (node.tag !== 'a' || !node.href || node.href === text.trim()) return text
      return options.linkOnNewLine ? `${text}\n${node.href}` : `${text} <${node.href}>`
    })
    .join('')
}

function oneLine(nodes: readonly Node[]): string {
  return textLines(inlineText(nodes)).join(' ')
}

/** Lines of text, each trimmed, without empty ones. */
function textLines(text: string): string[] {
  return text
    .split('\n')
    .map(line => line.trim())
    .filter(Boolean)
}

function trimBlankLines(lines: string[]): string[] {
  while (lines[0] === '') lines.shift()
  while (lines[lines.length - 1] === '') lines.pop()
  return lines
}

function isElement(node: Node): node is Element {
  return typeof node !== 'string'
}

function elements(element: Element, tag: string): Element[] {
  return element.children.filter(isElement).filter(child => child.tag === tag)
}

/** Elements named `tag` anywhere below, not inside another of the same name (nested tables). */
function descendants(element: Element, tag: string): Element[] {
  return element.children
    .filter(isElement)
    .flatMap(child => (child.tag === tag ? [child] : descendants(child, tag)))
}
