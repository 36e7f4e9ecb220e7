/**
 * The runner's workflow commands, written as @actions/core 3 writes them, byte for byte: inputs,
 * log lines and annotations, masks, outputs and saved state, the step's failure. The action's own
 * module so that a run starts without loading @actions/core, whose HTTP client (for OIDC tokens,
 * never asked for here) pulls in undici and more at load; `job-summary.ts` does the same for the
 * job summary.
 */
import { appendFileSync, existsSync } from 'node:fs'
import { EOL } from 'node:os'

/** Where an annotation points; only `title` is shown without a file. */
export interface AnnotationProperties {
  title?: string
  file?: string
  startLine?: number
  endLine?: number
  startColumn?: number
  endColumn?: number
}

/** An input as the runner passes it: `INPUT_` and the name upper-cased, spaces as `_`; trimmed. */
export function getInput(name: string): string {
  return (process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] || '').trim()
}

export function info(message: string): void {
  process.stdout.write(message + EOL)
}

export function debug(message: string): void {
  issue('debug', {}, message)
}

export function notice(message: string, properties: AnnotationProperties = {}): void {
  issue('notice', annotation(properties), message)
}

export function warning(message: string, properties: AnnotationProperties = {}): void {
  issue('warning', annotation(properties), message)
}

export function error(message: string, properties: AnnotationProperties = {}): void {
  issue('error', annotation(properties), message)
}

/** The runner hides the value in every log line printed after this. */
export function setSecret(value: string): void {
  issue('add-mask', {}, value)
}

/** The step fails (the exit code the runner reads) with an error annotation saying why. */
export function setFailed(message: string): void {
  process.exitCode = 1
  error(message)
}

export function setOutput(name: string, value: string): void {
  if (process.env.GITHUB_OUTPUT) appendKeyValue('GITHUB_OUTPUT', name, value)
  else {
    // A runner without the file reads the older command, on a line of its own.
    process.stdout.write(EOL)
    issue('set-output', { name }, value)
  }
}

/** Kept for the post step, which reads it back with `getState`. */
export function saveState(name: string, value: string): void {
  if (process.env.GITHUB_STATE) appendKeyValue('GITHUB_STATE', name, value)
  else issue('save-state', { name }, value)
}

export function getState(name: string): string {
  return process.env[`STATE_${name}`] || ''
}

type Properties = Record<string, string | number | undefined>

/**
 * `::name key=value,…::message`. A property object with any key, even one without a value, gives
 * the space after the name: @actions/core writes it so, and the runner reads both.
 */
function issue(name: string, properties: Properties, message: string): void {
  let line = `::${name}`
  if (Object.keys(properties).length > 0) {
    const given = Object.entries(properties).filter(([, value]) => value)
    line += ` ${given.map(([key, value]) => `${key}=${escapeProperty(asText(value))}`).join(',')}`
  }
  process.stdout.write(`${line}::${escapeData(message)}${EOL}`)
}

/** A line number as JSON writes it, as @actions/core does. */
function asText(value: string | number | undefined): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** The runner's names for an annotation's properties, in @actions/core's order. */
function annotation(properties: AnnotationProperties): Properties {
  if (Object.keys(properties).length === 0) return {}
  return {
    title: properties.title,
    file: properties.file,
    line: properties.startLine,
    endLine: properties.endLine,
    col: properties.startColumn,
    endColumn: properties.endColumn
  }
}

/** A message: the runner would read `%`, CR and LF as escapes or as the command's end. */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
}

/** A property value: also `:`, which ends the properties, and `,`, which separates them. */
function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C')
}

/**
 * `name<<DELIMITER`, the value, `DELIMITER`, appended to the file the runner names in `variable`.
 * A name or value that contains the delimiter is refused, so that none can end the block early and
 * set something else; the delimiter is random, so that such a refusal never happens by chance.
 */
function appendKeyValue(variable: 'GITHUB_OUTPUT' | 'GITHUB_STATE', name: string, value: string) {
  const file = process.env[variable]!
  if (!existsSync(file)) {
    throw new Error(`${variable} names ${file}, which does not exist: the runner creates it.`)
  }
  const delimiter = `ghadelimiter_${randomUuid()}`
  if (name.includes(delimiter) || value.includes(delimiter)) {
    throw new Error(`${variable}: "${name}" contains the random delimiter ${delimiter}.`)
  }
  appendFileSync(file, `${name}<<${delimiter}${EOL}${value}${EOL}${delimiter}${EOL}`, 'utf8')
}

/**
 * A version 4 UUID, as @actions/core's delimiter has, drawn from `Math.random`, which Node seeds
 * from OpenSSL: the delimiter needs no more, since a value that contains it is refused whatever it
 * is. node:crypto's `randomUUID` would load node:crypto, 5–10 ms at the start, for the first state
 * saved.
 */
function randomUuid(): string {
  const hex = (digits: number): string =>
    Array.from({ length: digits }, () => Math.floor(Math.random() * 16).toString(16)).join('')
  const variant = '89ab'[Math.floor(Math.random() * 4)]
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(12)}`
}
