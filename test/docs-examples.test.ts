import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it, onTestFinished } from 'vitest'
import { DEFAULT_LIMITS } from '../src/runtime/pipeline/limits.js'

// The documentation's code blocks, checked against the built package (dist/, which the global setup
// builds). A fence preceded by `<!-- runnable -->` is run with `node` (`ts` blocks through tsx) in a
// temporary project whose node_modules link `seam-runtime` to this repository and `zod` to its copy;
// one preceded by `<!-- file: some/path.ts -->` is written to that path of the same project first,
// so a page's examples can build on each other (a tool file, then a host that loads it).

const repo = fileURLToPath(new URL('..', import.meta.url))
const tsx = path.join(repo, 'node_modules/tsx/dist/loader.mjs')
const run = promisify(execFile)

interface Block {
  readonly kind: 'run' | 'file'
  readonly lang: string
  readonly code: string
  readonly line: number
  /** The project path a `file` block is written to. */
  readonly target?: string
}

function pages(): string[] {
  const docs = readdirSync(path.join(repo, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`)
  return ['README.md', ...docs.sort(), 'bench/README.md'].filter((page) => existsSync(path.join(repo, page)))
}

/** The marked blocks of a Markdown page, in order. */
function blocksOf(text: string): Block[] {
  const lines = text.split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!-- (runnable|file: ([^ ]+)) -->$/.exec(lines[i]!.trim())
    if (!marker) continue
    const fence = /^```(\w+)/.exec(lines[i + 1] ?? '')
    if (!fence) throw new Error(`line ${i + 1}: a ${marker[1]} marker must be followed by a fenced code block`)
    const end = lines.findIndex((l, j) => j > i + 1 && l.startsWith('```'))
    if (end < 0) throw new Error(`line ${i + 2}: the code block never ends`)
    const code = `${lines.slice(i + 2, end).join('\n')}\n`
    blocks.push(marker[2] ? { kind: 'file', lang: fence[1]!, code, line: i + 2, target: marker[2] } : { kind: 'run', lang: fence[1]!, code, line: i + 2 })
    i = end
  }
  return blocks
}

async function project(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'seam-docs-'))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  await mkdir(path.join(dir, 'node_modules'))
  await symlink(repo, path.join(dir, 'node_modules/seam-runtime'), 'dir')
  await symlink(realpathSync(path.join(repo, 'node_modules/zod')), path.join(dir, 'node_modules/zod'), 'dir')
  // `npx seam` in an example runs the built CLI, as it does in a project that installed the package.
  await mkdir(path.join(dir, 'node_modules/.bin'))
  await symlink(path.join(repo, 'dist/cli/bin.js'), path.join(dir, 'node_modules/.bin/seam'))
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'docs-example', private: true, type: 'module' }))
  return dir
}

async function runBlock(dir: string, page: string, block: Block, index: number): Promise<void> {
  const ts = block.lang === 'ts' || block.lang === 'typescript'
  const file = path.join(dir, `example-${index}.${ts ? 'mts' : 'mjs'}`)
  await writeFile(file, block.code)
  const args = ts ? ['--import', tsx, file] : [file]
  try {
    await run(process.execPath, args, { cwd: dir, timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } })
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    throw new Error(`${page}:${block.line}: the example exited with ${String(e.code)}\n${e.stdout ?? ''}${e.stderr ?? String(error)}`)
  }
}

describe('the code blocks the documentation marks as runnable', () => {
  const marked = pages()
    .map((page) => ({ page, blocks: blocksOf(readFileSync(path.join(repo, page), 'utf8')) }))
    .filter(({ blocks }) => blocks.some((b) => b.kind === 'run'))

  it('exist: the README and the docs pages mark examples to run', () => {
    expect(marked.map((m) => m.page)).toContain('README.md')
    expect(marked.length).toBeGreaterThan(3)
  })

  it.each(marked)('run against the built package: $page', { timeout: 180_000 }, async ({ page, blocks }) => {
    const dir = await project()
    let index = 0
    for (const block of blocks) {
      if (block.kind === 'file') {
        const target = path.join(dir, block.target!)
        await mkdir(path.dirname(target), { recursive: true })
        await writeFile(target, block.code)
      } else {
        await runBlock(dir, page, block, index++)
      }
    }
  })
})

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const headings = [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!)
  return new Set(headings.map((h) => h.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replaceAll(' ', '-')))
}

describe('the documentation links', () => {
  const readme = readFileSync(path.join(repo, 'README.md'), 'utf8')

  it('link every docs page and bench/README.md from the README', () => {
    const linked = new Set([...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => path.normalize(m[1]!)))
    const wanted = [...pages().filter((p) => p.startsWith('docs/')), 'bench/README.md']
    expect(wanted.filter((page) => !linked.has(page))).toEqual([])
  })

  it('resolve: every relative link in the README and docs/ names a file of the repository', () => {
    const broken: string[] = []
    for (const page of pages()) {
      const text = readFileSync(path.join(repo, page), 'utf8')
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const file = target!.split('#')[0]!
        if (/^[a-z]+:/i.test(file)) continue
        const resolved = file === '' ? path.join(repo, page) : path.join(repo, path.dirname(page), file)
        if (!existsSync(resolved)) broken.push(`${page} → ${target}`)
        else if (target!.includes('#') && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(target!.split('#')[1]!)) {
          broken.push(`${page} → ${target} (no such heading)`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it('never send the reader outside the repository (no ../shared/)', () => {
    for (const page of pages()) expect(readFileSync(path.join(repo, page), 'utf8'), page).not.toMatch(/\.\.\/shared\//)
  })
})

describe('docs/pipeline.md', () => {
  const catalog = readFileSync(path.join(repo, 'src/errors.ts'), 'utf8')
  const pipeline = readFileSync(path.join(repo, 'docs/pipeline.md'), 'utf8')
  const rows = new Set([...pipeline.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]))

  it('has a table row for every outcome code of src/errors.ts', () => {
    const outcome = /export type OutcomeCode = Extract<\s*ErrorCode,([^>]*)>/.exec(catalog)
    const codes = [...(outcome?.[1] ?? '').matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]!)
    expect(codes.length).toBeGreaterThan(10)
    expect(codes.filter((code) => !rows.has(code))).toEqual([])
  })

  it('has a table row for every code of the catalog, outcome and fault alike', () => {
    const codes = [...catalog.matchAll(/^\s+([A-Z_]+): '\1',$/gm)].map((m) => m[1]!)
    expect(codes.length).toBeGreaterThan(30)
    expect(codes.filter((code) => !rows.has(code))).toEqual([])
  })
})

describe('docs/limits.md', () => {
  it('gives every call limit with the default the runtime applies', () => {
    const limits = readFileSync(path.join(repo, 'docs/limits.md'), 'utf8')
    const rows = new Map([...limits.matchAll(/^\| `(\w+)` \| `([\d_]+)`/gm)].map((m) => [m[1]!, Number(m[2]!.replaceAll('_', ''))]))
    const documented = Object.fromEntries(Object.keys(DEFAULT_LIMITS).map((key) => [key, rows.get(key)]))
    expect(documented).toEqual({ ...DEFAULT_LIMITS })
  })
})
