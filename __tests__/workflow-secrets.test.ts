/**
 * A workflow on `pull_request` runs the pull request's own copy of its file: anyone who can push a
 * branch can edit it to print every secret it names. So no workflow a reader copies — a ```yaml
 * block of the README, of docs/ or of templates/, or a workflow of the project — runs on
 * `pull_request` with a secret besides GITHUB_TOKEN (whose abilities the workflow's `permissions`
 * bound, read-only for a fork). Review apps and previews run on `pull_request_target` instead.
 */
import { describe, expect, it } from '@jest/globals'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isMap, isScalar, isSeq, parseDocument } from 'yaml'
import { documentationPages, yamlBlocks, type YamlBlock } from '../test/support/examples.js'

import { PROJECT } from '../test/support/runner.js'

/** Every YAML a reader may copy: the pages' blocks, the templates, the project's workflows. */
function everyYaml(): YamlBlock[] {
  const pages = documentationPages(PROJECT).flatMap(page =>
    yamlBlocks(readFileSync(join(PROJECT, page), 'utf8'), page)
  )
  const files = ['templates', '.github/workflows'].flatMap(dir =>
    existsSync(join(PROJECT, dir))
      ? readdirSync(join(PROJECT, dir))
          .filter(name => /\.ya?ml$/.test(name))
          .map(name => {
            const file = `${dir}/${name}`
            return {
              file,
              lines: readFileSync(join(PROJECT, file), 'utf8').split('\n'),
              firstLine: 1
            }
          })
      : []
  )
  return [...pages, ...files]
}

/** The events a workflow's `on` names. */
function events(text: string): string[] {
  const contents = parseDocument(text).contents
  if (!isMap(contents)) return []
  const on: unknown = contents.get('on', true)
  if (isScalar(on)) return [String(on.value)]
  if (isSeq(on)) return on.items.map(item => String(isScalar(item) ? item.value : item))
  if (isMap(on)) return on.items.map(pair => String(isScalar(pair.key) ? pair.key.value : pair.key))
  return []
}

/** The secrets a workflow names, GITHUB_TOKEN aside. */
function secretsNamed(text: string): string[] {
  const named = [
    ...text.matchAll(/secrets\s*(?:\.\s*([A-Za-z_][\w-]*)|\[\s*['"]([^'"]+)['"]\s*\])/g)
  ]
  return [...new Set(named.map(match => match[1] ?? match[2]))].filter(
    name => name !== 'GITHUB_TOKEN'
  )
}

/** Where a `pull_request` workflow hands a secret to the pull request's code: page:line and names. */
function secretsUnderPullRequest(blocks: YamlBlock[]): string[] {
  return blocks.flatMap(block => {
    const text = block.lines.join('\n')
    if (!events(text).includes('pull_request')) return []
    const secrets = secretsNamed(text)
    return secrets.length > 0 ? [`${block.file}:${block.firstLine}: ${secrets.join(', ')}`] : []
  })
}

describe('documented workflows', () => {
  it('give no secret but GITHUB_TOKEN to a workflow on pull_request', () => {
    const blocks = everyYaml()
    expect(blocks.length).toBeGreaterThan(10)
    expect(secretsUnderPullRequest(blocks)).toEqual([])
  })

  it('are caught when they do', () => {
    const block = (lines: string[]): YamlBlock => ({ file: 'x.md', lines, firstLine: 3 })
    const leaky = block([
      'on: pull_request',
      'jobs:',
      '  a:',
      '    runs-on: ubuntu-latest',
      '    steps:',
      '      - run: echo ${{ secrets.COOLIFY_TOKEN }} ${{ secrets.GITHUB_TOKEN }}'
    ])
    const listed = block(['on: [push, pull_request]', 'env: { T: "${{ secrets[\'DEPLOY\'] }}" }'])
    const keyed = block(['on:', '  pull_request:', '    types: [closed]', 'x: ${{ secrets.K }}'])
    const target = block(['on: pull_request_target', 'x: ${{ secrets.COOLIFY_TOKEN }}'])
    const onlyGithub = block(['on: pull_request', 'x: ${{ secrets.GITHUB_TOKEN }}'])
    expect(secretsUnderPullRequest([leaky, listed, keyed, target, onlyGithub])).toEqual([
      'x.md:3: COOLIFY_TOKEN',
      'x.md:3: DEPLOY',
      'x.md:3: K'
    ])
  })
})
