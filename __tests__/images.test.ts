/**
 * The README's pictures (docs/images/) show what the action shows now: each image's page is made
 * again from the sources, as `npm run images` makes it, and its hash must be the one written beside
 * the image when it was rendered. A change to the wording of the log, the summary or the comment
 * fails here until the images are rendered again.
 */
import { describe, expect, it } from '@jest/globals'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { picturePages, sha256, type Picture } from '../scripts/pictures.js'
import { PROJECT } from '../test/support/runner.js'

const IMAGES = join(PROJECT, 'docs/images')
/** Small enough for the Marketplace page and the repository. */
const MAX_BYTES = 150 * 1024

describe('the pictures in docs/images', () => {
  let pages: Picture[]

  it('are made from one deploy of a pull request preview', async () => {
    pages = await picturePages()
    expect(pages.map(page => page.name)).toEqual(['log', 'summary', 'comment'])
  }, 90_000) // a whole deploy on a machine other suites keep busy

  it.each(['log', 'summary', 'comment'])('%s.png shows the wording of the sources', name => {
    const page = pages.find(candidate => candidate.name === name)!
    const png = join(IMAGES, `${name}.png`)
    expect(existsSync(png)).toBe(true)
    expect(statSync(png).size).toBeLessThan(MAX_BYTES)
    const rendered = readFileSync(join(IMAGES, `${name}.sha256`), 'utf8').trim()
    if (rendered !== sha256(page.html)) {
      throw new Error(
        `docs/images/${name}.png shows older wording than the sources make: run \`npm run images\` and commit docs/images/.`
      )
    }
  })
})
