import { appendFile } from 'node:fs'
import { EOL } from 'node:os'

/** A cell of `addTable`: text, or a header cell, with the spans GitHub's renderer reads. */
export type SummaryCell =
  string | { data: string; header?: boolean; colspan?: string; rowspan?: string }

/**
 * The job summary as `@actions/core`'s `summary` writes it, byte for byte (the tests compare the
 * two), for the calls the action makes. Ours because `@actions/core` brings its HTTP client, and
 * with it all of undici's index, into the step for a file append.
 */
export class JobSummary {
  #buffer = ''

  addRaw(text: string, addEOL = false): this {
    this.#buffer += text
    return addEOL ? this.addEOL() : this
  }

  addEOL(): this {
    return this.addRaw(EOL)
  }

  addHeading(text: string, level: number): this {
    const tag = level >= 1 && level <= 6 && Number.isInteger(level) ? `h${level}` : 'h1'
    return this.addRaw(wrap(tag, text)).addEOL()
  }

  addTable(rows: SummaryCell[][]): this {
    const body = rows
      .map(row => {
        const cells = row.map(cell => {
          if (typeof cell === 'string') return wrap('td', cell)
          const { header, data, colspan, rowspan } = cell
          return wrap(header ? 'th' : 'td', data, {
            ...(colspan && { colspan }),
            ...(rowspan && { rowspan })
          })
        })
        return wrap('tr', cells.join(''))
      })
      .join('')
    return this.addRaw(wrap('table', body)).addEOL()
  }

  addDetails(label: string, content: string): this {
    return this.addRaw(wrap('details', wrap('summary', label) + content)).addEOL()
  }

  stringify(): string {
    return this.#buffer
  }

  emptyBuffer(): this {
    this.#buffer = ''
    return this
  }

  /** Appends what was added to the step's summary file, and empties the buffer. */
  async write(file = process.env.GITHUB_STEP_SUMMARY): Promise<this> {
    if (!file) {
      throw new Error('GITHUB_STEP_SUMMARY is not set: this runner does not take job summaries')
    }
    // node:fs's own call: node:fs/promises would take 2–3 ms to load, for this alone.
    const text = this.#buffer
    await new Promise<void>((resolve, reject) =>
      appendFile(file, text, 'utf8', error => (error ? reject(error) : resolve()))
    )
    return this.emptyBuffer()
  }
}

/** An element; with no content, only its opening tag, as `@actions/core` writes it. */
function wrap(tag: string, content: string, attrs: Record<string, string> = {}): string {
  const attributes = Object.entries(attrs)
    .map(([key, value]) => ` ${key}="${value}"`)
    .join('')
  return content ? `<${tag}${attributes}>${content}</${tag}>` : `<${tag}${attributes}>`
}
