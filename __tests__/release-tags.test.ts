import { describe, expect, it } from '@jest/globals'
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const SCRIPT = fileURLToPath(new URL('../scripts/release-tags.mjs', import.meta.url))

// Git variables of the caller (a hook's GIT_DIR, say) would point git at another repository, and
// its configuration could sign or hook the commits.
const ENV: NodeJS.ProcessEnv = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith('GIT_') && !/^(TAG|MAJOR)_TOKEN/.test(name)
    )
  ),
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Release',
  GIT_AUTHOR_EMAIL: 'release@example.com',
  GIT_COMMITTER_NAME: 'Release',
  GIT_COMMITTER_EMAIL: 'release@example.com'
}

function git(dir: string, ...args: string[]): string {
  const result = spawnSync('git', args, { cwd: dir, env: ENV, encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`)
  return result.stdout.trim()
}

/** A clone with a bare repository as its origin, as the release job's checkout is. */
class Repo {
  readonly dir: string
  readonly origin: string
  private count = 0

  constructor() {
    const root = mkdtempSync(join(tmpdir(), 'release-tags-'))
    this.origin = join(root, 'origin.git')
    this.dir = join(root, 'work')
    git(root, 'init', '-q', '--bare', this.origin)
    git(root, 'init', '-q', '-b', 'main', this.dir)
    git(this.dir, 'remote', 'add', 'origin', this.origin)
  }

  /** Commits on main, pushes it, and returns the commit. */
  commit(): string {
    writeFileSync(join(this.dir, 'file.txt'), `${++this.count}\n`)
    git(this.dir, 'add', 'file.txt')
    git(this.dir, 'commit', '-q', '-m', `Commit ${this.count}`)
    git(this.dir, 'push', '-q', 'origin', 'main')
    return git(this.dir, 'rev-parse', 'HEAD')
  }

  /** Tags a commit on origin only, as a release or a hand-pushed tag would. */
  tag(name: string, commit: string, annotated = false): void {
    if (annotated) {
      git(this.dir, 'tag', '-a', '-m', name, name, commit)
      git(this.dir, 'push', '-q', 'origin', `refs/tags/${name}`)
      git(this.dir, 'tag', '-d', name)
    } else {
      git(this.dir, 'push', '-q', 'origin', `${commit}:refs/tags/${name}`)
    }
  }

  /** Origin's tags, each with the commit it names. */
  remoteTags(): Record<string, string> {
    const tags: Record<string, string> = {}
    const format = '%(refname:strip=2) %(objectname) %(*objectname)'
    for (const line of git(this.origin, 'for-each-ref', `--format=${format}`, 'refs/tags')
      .split('\n')
      .filter(Boolean)) {
      const [name, object, peeled] = line.split(' ')
      tags[name] = peeled || object
    }
    return tags
  }

  /** Runs the script in the clone, as the release workflow does. */
  release(
    args: string[],
    env: NodeJS.ProcessEnv = {}
  ): { code: number | null; out: string[]; err: string } {
    const result = spawnSync(process.execPath, [SCRIPT, ...args], {
      cwd: this.dir,
      env: { ...ENV, ...env },
      encoding: 'utf8'
    })
    return {
      code: result.status,
      out: result.stdout.split('\n').filter(Boolean),
      err: result.stderr
    }
  }
}

describe('release-tags.mjs tag', () => {
  it('pushes the version tag on HEAD, and in a dry run only prints the push', () => {
    const repo = new Repo()
    const head = repo.commit()
    expect(repo.release(['tag', '1.0.0', '--dry-run'])).toEqual({
      code: 0,
      out: [`+ git push origin ${head}:refs/tags/v1.0.0`],
      err: ''
    })
    expect(repo.remoteTags()).toEqual({})
  })

  it.each([
    ['lightweight', false],
    ['annotated', true]
  ])('reuses a tag already on HEAD (%s)', (_kind, annotated) => {
    const repo = new Repo()
    const head = repo.commit()
    repo.tag('v1.0.0', head, annotated)
    expect(repo.release(['tag', 'v1.0.0', '--dry-run'])).toEqual({
      code: 0,
      out: [`::notice::v1.0.0 already tags ${head}: the release uses it.`],
      err: ''
    })
  })

  it('refuses a tag that names another commit, and pushes nothing', () => {
    const repo = new Repo()
    const old = repo.commit()
    repo.tag('v1.1.0', old)
    const head = repo.commit()
    expect(repo.release(['tag', '1.1.0', '--dry-run'])).toEqual({
      code: 1,
      out: [
        `::error::v1.1.0 already tags ${old}, not ${head}: run the Release workflow from the tag ` +
          'v1.1.0 (Use workflow from → Tags), or release a new version.'
      ],
      err: ''
    })
  })

  it.each([['1.2'], ['v1.2.3-rc.1'], ['']])('refuses the version "%s"', version => {
    const repo = new Repo()
    repo.commit()
    expect(repo.release(['tag', version, '--dry-run'])).toEqual({
      code: 1,
      out: [`::error::Give the version as 1.2.3 or v1.2.3, not "${version}".`],
      err: ''
    })
  })
})

describe('release-tags.mjs major', () => {
  const moves = (head: string) => [`+ git push --force origin ${head}:refs/tags/v1`]

  it('moves the major tag for the first release of the major', () => {
    const repo = new Repo()
    const head = repo.commit()
    expect(repo.release(['major', '1.0.0', '--dry-run'])).toEqual({
      code: 0,
      out: moves(head),
      err: ''
    })
  })

  it('orders versions as numbers: 1.10.0 is newer than 1.9.0', () => {
    const repo = new Repo()
    const old = repo.commit()
    repo.tag('v1.9.0', old)
    repo.tag('v1', old)
    const head = repo.commit()
    repo.tag('v1.10.0', head)
    expect(repo.release(['major', '1.10.0', '--dry-run']).out).toEqual(moves(head))
  })

  it('leaves the major tag on a newer release: a fix to an older 1.x does not take it back', () => {
    const repo = new Repo()
    const newer = repo.commit()
    repo.tag('v1.3.0', newer)
    repo.tag('v1', newer)
    repo.commit()
    expect(repo.release(['major', '1.2.1', '--dry-run'])).toEqual({
      code: 0,
      out: ['::notice::v1 stays on v1.3.0, which is newer than v1.2.1.'],
      err: ''
    })
  })

  it('counts neither other majors nor pre-releases', () => {
    const repo = new Repo()
    const old = repo.commit()
    repo.tag('v2.0.0', old)
    repo.tag('v1.6.0-rc.1', old)
    repo.tag('v10.0.0', old)
    const head = repo.commit()
    expect(repo.release(['major', '1.5.0', '--dry-run']).out).toEqual(moves(head))
  })

  it('leaves a major tag that already names HEAD', () => {
    const repo = new Repo()
    const head = repo.commit()
    repo.tag('v1.2.0', head)
    repo.tag('v1', head, true)
    expect(repo.release(['major', '1.2.0', '--dry-run']).out).toEqual([
      `::notice::v1 already points to v1.2.0 (${head}).`
    ])
  })

  it('refuses to move it to HEAD when the version tags another commit', () => {
    const repo = new Repo()
    const old = repo.commit()
    repo.tag('v1.2.0', old)
    const head = repo.commit()
    expect(repo.release(['major', '1.2.0', '--dry-run'])).toEqual({
      code: 1,
      out: [`::error::v1.2.0 tags ${old}, not ${head}: v1 stays where it is.`],
      err: ''
    })
  })
})

describe('release-tags.mjs, the release as the workflow runs it', () => {
  const tokens = { TAG_TOKEN: 'tag-secret', MAJOR_TOKEN: 'major-secret' }

  it('tags the version, then moves the major tag, and a second run changes nothing', () => {
    const repo = new Repo()
    const old = repo.commit()
    repo.tag('v1.0.0', old)
    repo.tag('v1', old)
    const head = repo.commit()

    const dry = [
      repo.release(['tag', '1.1.0', '--dry-run']),
      repo.release(['major', '1.1.0', '--dry-run'])
    ]
    expect(dry.flatMap(result => result.out)).toEqual([
      `+ git push origin ${head}:refs/tags/v1.1.0`,
      `+ git push --force origin ${head}:refs/tags/v1`
    ])
    expect(repo.remoteTags()).toEqual({ v1: old, 'v1.0.0': old })

    const tagged = repo.release(['tag', '1.1.0'], tokens)
    const moved = repo.release(['major', '1.1.0'], tokens)
    expect([tagged.code, moved.code]).toEqual([0, 0])
    expect([...tagged.out, ...moved.out]).toEqual([
      `+ git push origin ${head}:refs/tags/v1.1.0`,
      `+ git push --force origin ${head}:refs/tags/v1`,
      `v1 now points to v1.1.0 (${head}).`
    ])
    expect(repo.remoteTags()).toEqual({ v1: head, 'v1.0.0': old, 'v1.1.0': head })
    expect(`${tagged.err}${moved.err}`).not.toMatch(/secret/)

    expect([
      ...repo.release(['tag', '1.1.0']).out,
      ...repo.release(['major', '1.1.0']).out
    ]).toEqual([
      `::notice::v1.1.0 already tags ${head}: the release uses it.`,
      `::notice::v1 already points to v1.1.0 (${head}).`
    ])
  })

  it('says what the token needs, and how to move the tag by hand, when the move is refused', () => {
    const repo = new Repo()
    const old = repo.commit()
    repo.tag('v1.0.0', old)
    repo.tag('v1', old)
    const head = repo.commit()
    // What GitHub answers a token without the workflows permission.
    const hook = join(repo.origin, 'hooks', 'pre-receive')
    writeFileSync(
      hook,
      [
        '#!/bin/sh',
        'while read -r old new ref; do',
        '  if [ "$ref" = refs/tags/v1 ]; then',
        '    echo "refusing to allow a GitHub App to create or update workflow without workflows permission" >&2',
        '    exit 1',
        '  fi',
        'done',
        ''
      ].join('\n')
    )
    chmodSync(hook, 0o755)

    expect(repo.release(['tag', '1.1.0'], tokens).code).toBe(0)
    const moved = repo.release(['major', '1.1.0'], { ...tokens, MAJOR_TOKEN_NAME: 'GITHUB_TOKEN' })
    expect(moved.code).toBe(1)
    expect(moved.err).toMatch(/refusing to allow a GitHub App/)
    expect(moved.out).toEqual([
      `+ git push --force origin ${head}:refs/tags/v1`,
      '::error::v1.1.0 is released, but v1 was not moved to it: the push with GITHUB_TOKEN was ' +
        'refused. Moving v1 needs a token with contents: write and, when the workflow files ' +
        'changed since the commit v1 points to, the workflows permission: a fine-grained ' +
        'personal access token (Contents and Workflows: read and write) or a GitHub App token, ' +
        'in the RELEASE_TOKEN secret. Then run the workflow again, or move v1 by hand: ' +
        `git fetch origin tag v1.1.0 && git push --force origin ${head}:refs/tags/v1`
    ])
    expect(repo.remoteTags()).toEqual({ v1: old, 'v1.0.0': old, 'v1.1.0': head })
  })
})
