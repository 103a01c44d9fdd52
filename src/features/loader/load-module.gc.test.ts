import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it, onTestFinished } from 'vitest'

const repo = resolve(import.meta.dirname, '../../..')
const url = (path: string) => pathToFileURL(join(repo, 'src', path)).href

// Each instance builds ~150 KB of rows, so a leaked instance shows up far above the threshold.
const TOOL = `import { defineTool } from 'seam-runtime'
const rows = Array.from({ length: 2000 }, (_, i) => ({ id: 'row-' + i, value: i }))
export default defineTool({ description: 'Big.', input: {}, execute: () => rows.length })
`

const MEASURE = `
const { loadToolFile } = await import(${JSON.stringify(url('features/loader/tool-file.ts'))})
const { sourceMapCount } = await import(${JSON.stringify(url('features/loader/source-maps.ts'))})
const seam = await import(${JSON.stringify(url('features/define-tool.ts'))})
const file = process.argv[2]
const settle = async () => {
  for (let i = 0; i < 4; i++) {
    globalThis.gc()
    await new Promise((done) => setTimeout(done, 10))
  }
}
const loadAndDrop = async (times) => {
  for (let i = 0; i < times; i++) {
    const tool = await loadToolFile(file, { modules: { 'seam-runtime': seam } })
    if (tool.definition.execute({}, {}) !== 2000) throw new Error('wrong tool')
  }
}
await loadAndDrop(20)
await settle()
const before = process.memoryUsage().heapUsed
await loadAndDrop(200)
await settle()
const after = process.memoryUsage().heapUsed
console.log(JSON.stringify({ perLoad: (after - before) / 200, maps: sourceMapCount() }))
`

describe('loadToolFile memory', () => {
  it('retains almost nothing of 200 loads of one file once they are dropped', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'seam-gc-')))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await mkdir(join(dir, 'tools'))
    await writeFile(join(dir, 'tools/big.ts'), TOOL)
    await writeFile(join(dir, 'measure.mjs'), MEASURE)
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', join(dir, 'measure.mjs'), join(dir, 'tools/big.ts')],
      { cwd: repo },
    )
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { perLoad: number; maps: number }
    console.info(`retained per load: ${Math.round(result.perLoad)} bytes; source maps held: ${result.maps}`)
    expect(result.perLoad).toBeLessThan(20_000)
    expect(result.maps).toBe(0)
  })
})

// Every version different and about 60 KB of code: what a hot-reloaded tool with a big helper bundles to.
const EDITED = `
const { writeFileSync } = await import('node:fs')
const { loadToolFile } = await import(${JSON.stringify(url('features/loader/tool-file.ts'))})
const seam = await import(${JSON.stringify(url('features/define-tool.ts'))})
const file = process.argv[2]
const version = (n) => [
  "import { defineTool } from 'seam-runtime'",
  ...Array.from({ length: 1500 }, (_, i) => 'export function helper' + i + '(x: number) { return x * ' + i + ' + ' + n + ' }'),
  "export default defineTool({ description: 'Edit " + n + ".', input: {}, execute: () => helper1(" + n + ") })",
].join('\\n')
const settle = async () => {
  for (let i = 0; i < 4; i++) {
    globalThis.gc()
    await new Promise((done) => setTimeout(done, 10))
  }
}
let n = 0
const loadAndDrop = async (times) => {
  for (let i = 0; i < times; i++, n++) {
    writeFileSync(file, version(n))
    const tool = await loadToolFile(file, { modules: { 'seam-runtime': seam } })
    if (tool.definition.execute({}, {}) !== 2 * n) throw new Error('wrong tool')
  }
}
await loadAndDrop(10)
await settle()
const before = process.memoryUsage().heapUsed
await loadAndDrop(60)
await settle()
console.log(JSON.stringify({ perLoad: (process.memoryUsage().heapUsed - before) / 60 }))
`

describe('loadToolFile memory across edits', () => {
  it('retains almost nothing of 60 edited versions of a large file once they are dropped (no compilation cache entry per version)', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'seam-gc-')))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await mkdir(join(dir, 'tools'))
    await writeFile(join(dir, 'measure.mjs'), EDITED)
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', join(dir, 'measure.mjs'), join(dir, 'tools/big.ts')], {
      cwd: repo,
    })
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { perLoad: number }
    console.info(`retained per edited load: ${Math.round(result.perLoad)} bytes`)
    expect(result.perLoad).toBeLessThan(20_000)
  })
})
