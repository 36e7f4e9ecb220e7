/**
 * `npm run images`: renders the README's pictures (see pictures.ts) to docs/images/NAME.png with
 * headless Chromium (Debian's `chromium` package; CHROMIUM names another binary), and writes the
 * hash of each page beside its image, which the tests compare with the page the sources make now.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { picturePages, sha256 } from './pictures.js'
import { PROJECT } from '../test/support/runner.js'

const WIDTH = 900
const CHROMIUM = process.env.CHROMIUM ?? 'chromium'
const images = join(PROJECT, 'docs/images')
const work = mkdtempSync(join(tmpdir(), 'coolify-images-'))

/** Chromium on its own, fresh profile, nothing fetched: only the page is rendered. */
function chromium(...args: string[]): string {
  return execFileSync(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--hide-scrollbars',
      `--user-data-dir=${join(work, 'profile')}`,
      ...args
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }
  )
}

/** The page's height at this width: a first load writes it into the title, read from the DOM. */
function heightOf(html: string): number {
  const measure = join(work, 'measure.html')
  const script =
    '<script>document.title = `height:${Math.ceil(document.body.getBoundingClientRect().bottom)}`</script>'
  writeFileSync(measure, html.replace('</body>', `${script}</body>`))
  const dom = chromium(`--window-size=${WIDTH},600`, '--dump-dom', pathToFileURL(measure).href)
  const height = /height:(\d+)/.exec(dom)?.[1]
  if (!height) throw new Error("Chromium did not report the page's height.")
  return Number(height)
}

mkdirSync(images, { recursive: true })
try {
  for (const picture of await picturePages()) {
    const html = join(work, `${picture.name}.html`)
    writeFileSync(html, picture.html)
    const png = join(images, `${picture.name}.png`)
    chromium(
      `--window-size=${WIDTH},${heightOf(picture.html)}`,
      `--screenshot=${png}`,
      pathToFileURL(html).href
    )
    writeFileSync(join(images, `${picture.name}.sha256`), `${sha256(picture.html)}\n`)
    console.log(`docs/images/${picture.name}.png: ${Math.round(statSync(png).size / 1024)} KB`)
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
