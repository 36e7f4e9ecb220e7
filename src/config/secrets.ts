import { host } from '../host.js'

/**
 * Values shorter than this are never masked: the runner would star out every "1" or "on" in the
 * log, and the pull request comment leaves out only what the log does.
 */
export const MIN_MASKED_LENGTH = 4

/** A plain number of at most six digits (a port, a count, a size): `3000`, `8080`, `0.5`. */
const PLAIN_NUMBER = /^\d{1,6}(\.\d+)?$/
/** One word of at most twelve letters, all of one case: `https`, `production`, `true`, `INFO`. */
const PLAIN_WORD = /^(?:[a-z]{1,12}|[A-Z]{1,12})$/

/**
 * Whether one of the application's own settings (`env`, its variables) is worth masking. A mask
 * stars out the value in every line printed after it, links included: `PORT=3000` would make the
 * preview's link `…:***`, `PROTOCOL=https` every link `***://…`. So values that give nothing away
 * stay readable: under four characters, a plain number, or one word of letters in one case.
 * Anything else (digits among letters, mixed case, symbols, a URL) is masked.
 */
export function worthMasking(value: string): boolean {
  return value.length >= MIN_MASKED_LENGTH && !PLAIN_NUMBER.test(value) && !PLAIN_WORD.test(value)
}

/**
 * Everything the step masked, for what the runner does not mask itself: the pull request comment,
 * the summary's escaped text, a line cut before the runner sees it.
 */
const masked = new Set<string>()

/**
 * Masks a value in the host's log from now on, and remembers it, so that what the runner does not
 * mask (`redactMasked`) can leave it out too.
 */
export function mask(value: string): void {
  if (!value) return
  masked.add(value)
  host().mask(value)
}

/**
 * Every form in which GitHub's runner hides a masked value: the value and each of its lines,
 * trimmed (`::add-mask::` adds them, actions/runner `ActionCommandManager.cs`), each as the
 * encoders registered in `src/Runner.Common/HostContext.cs` write it (`ValueEncoders.cs`): base64
 * from its first, second and third byte, quotes escaped for a command line and for an expression,
 * JSON-, URI- and XML-escaped, without its surrounding double quotes, and its PowerShell halves
 * around `&`. Beyond the runner's list: base64 forms also without their last, padded character,
 * which depends on what follows the value in a longer text, and URI forms as JavaScript and HTML
 * forms write them. Forms under `MIN_MASKED_LENGTH` are left out, as values are.
 */
export function maskedForms(value: string): string[] {
  const lines = value
    .split(/[\r\n]+/)
    .map(line => line.trim())
    .filter(Boolean)
  const forms = [value, ...lines].flatMap(one => [
    one,
    ...base64Forms(one),
    one.replaceAll('"', '\\"'),
    one.replaceAll("'", "''"),
    jsonEscaped(one),
    ...uriEscaped(one),
    xmlEscaped(one),
    one.length > 8 && one.startsWith('"') && one.endsWith('"') ? one.slice(1, -1) : '',
    ...powerShellHalves(one)
  ])
  return [...new Set(forms)].filter(form => form.length >= MIN_MASKED_LENGTH)
}

/**
 * `text` with every form of every masked value (and `escape` of each, as a report escapes it)
 * replaced by `***`: for what the runner never sees, or sees only after it was cut. The longest
 * form is taken first, so that no part of a longer one is left.
 */
export function redactMasked(text: string, escape?: (form: string) => string): string {
  const forms = [...masked].flatMap(maskedForms)
  const all = [...new Set(escape ? [...forms, ...forms.map(escape)] : forms)]
  if (all.length === 0) return text
  all.sort((a, b) => b.length - a.length)
  const pattern = new RegExp(
    all.map(form => form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
    'g'
  )
  return text.replace(pattern, '***')
}

/** Base64 of the value from its first, second and third byte; each also without what padding makes uncertain. */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8')
  return [0, 1, 2].flatMap(shift => {
    const encoded = (bytes.length > shift ? bytes.subarray(shift) : bytes).toString('base64')
    const certain = encoded.replace(/=+$/, '').slice(0, -1)
    return encoded.endsWith('=') && certain.length >= 8 ? [encoded, certain] : [encoded]
  })
}

/** As Newtonsoft.Json writes a string, without its quotes: it also escapes U+0085, U+2028, U+2029. */
function jsonEscaped(value: string): string {
  return JSON.stringify(value)
    .slice(1, -1)
    .replace(
      /[\u0085\u2028\u2029]/g,
      char => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`
    )
}

/**
 * As .NET's `Uri.EscapeDataString` writes it (only RFC 3986's unreserved characters stay), and
 * beyond the runner's list, as JavaScript's `encodeURIComponent` and a form's query write it.
 */
function uriEscaped(value: string): string[] {
  try {
    const component = encodeURIComponent(value)
    const strict = component.replace(
      /[!'()*]/g,
      char => `%${char.charCodeAt(0).toString(16).toUpperCase()}`
    )
    return [strict, component, new URLSearchParams({ v: value }).toString().slice(2)]
  } catch {
    return [] // a lone surrogate: .NET refuses it too
  }
}

/** As .NET's `SecurityElement.Escape`. */
function xmlEscaped(value: string): string {
  const names: Record<string, string> = {
    '&': 'amp',
    '<': 'lt',
    '>': 'gt',
    '"': 'quot',
    "'": 'apos'
  }
  return value.replace(/[&<>"']/g, char => `&${names[char]};`)
}

/**
 * PowerShell colours part of a failing command's text: the runner masks the part up to the last
 * `&` (or to the first `&+`) and the part after it (after `&+` and one more character), each when
 * it has six characters or more.
 */
function powerShellHalves(value: string): string[] {
  if (!value.includes('&')) return []
  const plus = value.indexOf('&+')
  const before = plus >= 0 ? value.slice(0, plus + 2) : value.slice(0, value.lastIndexOf('&') + 1)
  const after =
    plus >= 0
      ? value.length > plus + 3
        ? value.slice(plus + 3)
        : ''
      : value.slice(value.lastIndexOf('&') + 1)
  return [before, after].filter(half => half.length >= 6)
}

/**
 * A run of base64 piped to `base64 -d`, whatever quotes close it: `echo '…' | base64 -d`, and as
 * Coolify 4.3 quotes a command for `docker exec … bash -c '…'`, `echo '\''…'\'' | base64 -d`
 * (`bootstrap/helpers/docker.php`, `executeInDocker`).
 */
const BASE64_PAYLOAD = /[A-Za-z0-9+/]{16,}={0,2}(?=['"\\]*\s*\|\s*base64\s+(?:-d|-D|--decode)\b)/g

/**
 * Coolify's hidden entries carry the commands of its deployment job, some with every variable of
 * the application encoded in them (`echo '<base64>' | base64 -d | tee .env`, heredocs): their
 * payloads are replaced before such a line is printed.
 */
export function redactPayloads(text: string): string {
  return text
    .replace(BASE64_PAYLOAD, '<redacted>')
    .replace(/(<<-?\s*(['"]?)(\w+)\2[^\n]*\n)[\s\S]*?(\n\3\b)/g, '$1<redacted>$4')
}
