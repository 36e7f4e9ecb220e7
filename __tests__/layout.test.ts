import { describe, expect, it } from '@jest/globals'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

const SRC = resolve('src')

/**
 * The layers of src/, lowest first: a file imports from its own layer or below, never above, so
 * data flows one way (inputs → client → model → reads → rollouts → review app → run → hosts).
 * A file or folder not named here fails the test until it is given its place.
 */
const LAYERS: ReadonlyArray<readonly string[]> = [
  ['config/', 'coolify/', 'errors.ts', 'host.ts', 'time/', 'transport/'],
  ['model/', 'state.ts'],
  ['follow/', 'health/'],
  ['rollout/'],
  ['review-app/'],
  ['jobs/', 'report/'],
  ['action/', 'cli/']
]

/** Reporters read the model, never the machinery that produced it. */
const REPORTERS = 'report/'
const REPORTERS_READ = new Set([0, 1])

function layerOf(file: string): number {
  const layer = LAYERS.findIndex(names =>
    names.some(name => (name.endsWith('/') ? file.startsWith(name) : file === name))
  )
  if (layer < 0) throw new Error(`${file} has no layer: give it one in LAYERS`)
  return layer
}

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : []
  })
}

/** Each file's relative imports, type-only ones included, as paths under src/. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  return new Map(
    files.map(file => {
      const text = readFileSync(join(SRC, file), 'utf8')
      const imports = ts
        .preProcessFile(text, true, true)
        .importedFiles.map(imported => imported.fileName)
        .filter(name => name.startsWith('.'))
        .map(name => relative(SRC, resolve(SRC, dirname(file), name.replace(/\.js$/, '.ts'))))
      return [file, imports]
    })
  )
}

/** The circles of files that import each other, each as the files in it (Tarjan's algorithm). */
function cyclesIn(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const cycles: string[][] = []
  const visit = (file: string): void => {
    index.set(file, index.size)
    low.set(file, index.get(file)!)
    stack.push(file)
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (stack.includes(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const cycle: string[] = []
    let member: string
    do {
      member = stack.pop()!
      cycle.push(member)
    } while (member !== file)
    if (cycle.length > 1 || graph.get(file)?.includes(file)) cycles.push(cycle.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return cycles
}

/** Imports that run from a lower layer up to a higher one, as `from → to`. */
function importsUpward(graph: ReadonlyMap<string, readonly string[]>): string[] {
  return [...graph].flatMap(([file, imports]) =>
    imports.filter(target => layerOf(target) > layerOf(file)).map(target => `${file} → ${target}`)
  )
}

describe('the import graph of src/', () => {
  const graph = importGraph(sourceFiles())

  it('finds circles and upward imports when there are some', () => {
    const made = new Map([
      ['model/a.ts', ['model/b.ts']],
      ['model/b.ts', ['follow/c.ts']],
      ['follow/c.ts', ['model/a.ts']],
      ['rollout/d.ts', []]
    ])
    expect(cyclesIn(made)).toEqual([['follow/c.ts', 'model/a.ts', 'model/b.ts']])
    expect(importsUpward(made)).toEqual(['model/b.ts → follow/c.ts'])
    expect(() => layerOf('somewhere/new.ts')).toThrow('somewhere/new.ts has no layer')
  })

  it('reads every file and its imports', () => {
    expect(graph.get('jobs/run.ts')).toContain('config/inputs.ts')
    for (const imports of graph.values()) {
      for (const target of imports) expect(graph.has(target)).toBe(true)
    }
  })

  it('has no circle of files importing each other', () => {
    expect(cyclesIn(graph)).toEqual([])
  })

  it('has no import running back up the layers', () => {
    expect(importsUpward(graph)).toEqual([])
  })

  it('lets reporters read only the model and what lies under it', () => {
    const reaching = [...graph]
      .filter(([file]) => file.startsWith(REPORTERS))
      .flatMap(([file, imports]) =>
        imports
          .filter(target => !target.startsWith(REPORTERS) && !REPORTERS_READ.has(layerOf(target)))
          .map(target => `${file} → ${target}`)
      )
    expect(reaching).toEqual([])
  })
})

describe("CONTRIBUTING.md's layout table", () => {
  const rows = new Map(
    readFileSync('CONTRIBUTING.md', 'utf8')
      .split('\n')
      .filter(line => line.startsWith('| `src/'))
      .map(line => [/^\| `src\/([^`]+)`/.exec(line)![1], line] as const)
  )
  const table = [...rows.keys()]

  it('names every folder and every file at the top of src/, and nothing that is not there', () => {
    const top = readdirSync(SRC, { withFileTypes: true }).map(entry =>
      entry.isDirectory() ? `${entry.name}/` : entry.name
    )
    expect([...table].sort()).toEqual(top.sort())
  })

  it("names each file of the core's folders in its folder's row, and none that is not there", () => {
    const unnamed = [
      'transport/',
      'config/',
      'time/',
      'jobs/',
      'coolify/',
      'model/',
      'follow/',
      'health/',
      'rollout/',
      'review-app/',
      'report/'
    ].flatMap(folder =>
      readdirSync(join(SRC, folder))
        .filter(name => !rows.get(folder)?.includes(`\`${name}\``))
        .map(name => `${folder}${name}`)
    )
    expect(unnamed).toEqual([])
    const missing = [...rows].flatMap(([folder, row]) =>
      [...row.matchAll(/`([a-z-]+\.ts)`/g)]
        .map(([, name]) => `${folder}${name}`)
        .filter(file => folder.endsWith('/') && !existsSync(join(SRC, file)))
    )
    expect(missing).toEqual([])
  })
})
