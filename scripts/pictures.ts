/**
 * The README's pictures, as HTML pages made from what the action really shows: the bundled action
 * deploys the demo's application as a pull request preview, against the fake Coolify and the fake
 * GitHub, the way GitHub's runner runs it. Its job log, job summary and pull request comment
 * become pages styled like GitHub's. What differs from run to run (the fake's address, the
 * deployment's uuid, the comment's time) is replaced by fixed values, so that the same sources
 * always make the same pages: `npm run images` screenshots them, and a test compares their hashes
 * with the ones kept beside the images.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startFakeCoolify } from '../test/fake-coolify/index.js'
import { startFakeGitHub } from '../test/fake-github/index.js'
import { createGitHubView, runAction } from '../test/support/runner.js'
import { DEMO_APP, DEMO_APP_UUID, DEMO_TOKEN } from './demo-app.js'

export interface Picture {
  /** docs/images/NAME.png, and NAME.sha256 beside it: the hash of `html`. */
  name: 'log' | 'summary' | 'comment'
  html: string
}

/** What stands in the pictures for what changes from run to run. */
const COOLIFY_URL = 'https://coolify.example.com'
const DEPLOYMENT_UUID = 'mg8cc4wkk0s8gw4ocwo40ssk'
const COMMENT_TIME = '2026-06-01T12:00:00Z'
const PR = 7
/** How far Coolify's clock moves with each request the action makes. */
const STEP_MS = 400
const WORKFLOW = 'Preview'

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** Runs the action once and makes the three pages. Throws when the run went otherwise than planned. */
export async function picturePages(): Promise<Picture[]> {
  // Coolify's time moves on by a fixed step with every request, not with the real clock: each read
  // sees the same moment of the build however busy the machine is, so every run prints the same.
  // It starts on a whole second: Coolify keeps whole seconds, and `duration` comes from them.
  const booted = Math.floor(Date.now() / 1000) * 1000
  let requests: readonly unknown[] = []
  const fake = await startFakeCoolify({
    token: DEMO_TOKEN,
    apps: [{ ...DEMO_APP, previews: [PR] }],
    clock: () => booted + requests.length * STEP_MS
  })
  requests = fake.requests
  const github = await startFakeGitHub()
  const workspace = mkdtempSync(join(tmpdir(), 'coolify-pictures-'))
  try {
    const event = join(workspace, 'event.json')
    const head = 'abc1234abc1234abc1234abc1234abc1234abc12'
    writeFileSync(
      event,
      JSON.stringify({ number: PR, pull_request: { number: PR, head: { sha: head } } })
    )
    const result = await runAction({
      inputs: {
        'coolify-url': fake.url,
        token: DEMO_TOKEN,
        'app-uuid': DEMO_APP_UUID,
        pr: String(PR),
        'github-token': 'ghs_pictures-token',
        'poll-interval': '250ms'
      },
      env: {
        GITHUB_API_URL: github.url,
        GITHUB_EVENT_PATH: event,
        GITHUB_EVENT_NAME: 'pull_request',
        GITHUB_WORKFLOW: WORKFLOW
      }
    })
    const [comment] = github.comments(PR)
    if (result.code !== 0 || !comment) {
      throw new Error(`The preview's deploy went wrong (exit ${result.code}): ${result.stderr}`)
    }
    const fixed = (text: string): string =>
      text
        .replaceAll(fake.url, COOLIFY_URL)
        .replaceAll(new URL(fake.url).host, new URL(COOLIFY_URL).host)
        .replaceAll(result.outputs['deployment-uuid'], DEPLOYMENT_UUID)
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, COMMENT_TIME)
    return [
      { name: 'log', html: page('Deploy on Coolify', logHtml(fixed(result.stdout)), 'log') },
      {
        name: 'summary',
        html: page('Deploy summary', markdownHtml(fixed(result.summary)), 'summary')
      },
      {
        name: 'comment',
        html: page('github-actions bot commented', markdownHtml(fixed(comment.body)), 'comment')
      }
    ]
  } finally {
    rmSync(workspace, { recursive: true, force: true })
    await github.close()
    await fake.close()
  }
}

/** The step's log as GitHub's log view shows it: numbered lines, groups open, colors kept. */
function logHtml(stdout: string): string {
  let text = ''
  createGitHubView(chunk => (text += chunk))(stdout)
  const lines = text.replace(/\n$/, '').split('\n')
  const rows = lines.map((line, index) => {
    const group = line.startsWith('\u001b[1m▼ ')
    const html = ansiHtml(group ? line.replace('▼', '▾') : line)
    return `<div class="line${group ? ' group' : ''}"><span class="n">${index + 1}</span>${html}</div>`
  })
  return `<div class="log">${rows.join('\n')}</div>`
}

const ANSI_CLASSES: Record<string, string> = {
  '1': 'bold',
  '31': 'red',
  '33': 'yellow',
  '36': 'cyan'
}

/** ANSI colors as spans; the rest escaped. */
function ansiHtml(line: string): string {
  let open = false
  // eslint-disable-next-line no-control-regex -- ANSI color codes start with ESC
  const html = line.split(/\u001b\[([0-9;]*)m/).map((part, index) => {
    if (index % 2 === 0) return escape(part)
    const close = open ? '</span>' : ''
    open = part in ANSI_CLASSES
    return close + (open ? `<span class="${ANSI_CLASSES[part]}">` : '')
  })
  return html.join('') + (open ? '</span>' : '')
}

/**
 * Markdown as GitHub renders what the action writes: HTML passed through, `#` headings, fenced
 * code blocks, and paragraphs between blank lines. Enough for the summary and the comment.
 */
function markdownHtml(markdown: string): string {
  const out: string[] = []
  let fence: string | undefined
  let code: string[] = []
  for (const line of markdown.split('\n')) {
    if (fence !== undefined) {
      if (line.trim() === fence) {
        out.push(`<pre><code>${escape(code.join('\n'))}</code></pre>`)
        fence = undefined
      } else code.push(line)
      continue
    }
    const open = /^\s*(`{3,}|~{3,})/.exec(line)
    const heading = /^(#{1,6}) (.*)$/.exec(line)
    if (open) [fence, code] = [open[1], []]
    else if (heading) out.push(`<h${heading[1].length}>${heading[2]}</h${heading[1].length}>`)
    else if (line.trim() && !line.trimStart().startsWith('<')) out.push(`<p>${line}</p>`)
    else out.push(line)
  }
  return out.join('\n')
}

function escape(text: string): string {
  return text.replace(/[&<>"]/g, char => `&#${char.charCodeAt(0)};`)
}

/** A light GitHub-like page around the content: system font, GitHub's colors and borders. */
function page(title: string, content: string, kind: Picture['name']): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${kind}</title><style>
body { margin: 0; padding: 16px; background: #f6f8fa; color: #1f2328;
  font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.box { background: #fff; border: 1px solid #d1d9e0; border-radius: 6px; overflow: hidden; }
.box > header { padding: 8px 16px; background: #f6f8fa; border-bottom: 1px solid #d1d9e0; font-weight: 600; }
.box > main { padding: 8px 16px 16px; }
.box.log > header { background: #fff; }
.box.log > main { padding: 8px 0; }
a { color: #0969da; text-decoration: none; }
h3 { font-size: 1.25em; margin: 16px 0 12px; }
table { border-collapse: collapse; margin: 12px 0; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; text-align: left; }
th { font-weight: 600; }
tr:nth-child(2n) { background: #f6f8fa; }
code, pre, .log { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace; font-size: 12px; }
code { background: #eff1f3; padding: .2em .4em; border-radius: 6px; }
pre { background: #f6f8fa; padding: 16px; border-radius: 6px; }
details > summary { cursor: pointer; margin: 8px 0; }
.line { white-space: pre-wrap; padding: 0 16px 0 0; line-height: 20px; }
.line .n { display: inline-block; width: 40px; padding-right: 16px; text-align: right; color: #6e7781; }
.group { font-weight: 600; }
.bold { font-weight: 600; } .red { color: #cf222e; } .yellow { color: #9a6700; } .cyan { color: #1b7c83; }
</style></head>
<body><div class="box ${kind}"><header>${title}</header><main>
${content}
</main></div></body></html>
`
}
