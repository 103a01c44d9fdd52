import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it, onTestFinished } from 'vitest'
import { SeamError } from '../../errors.js'
import * as seam from '../define-tool.js'
import { loadModule } from './load-module.js'
import { sourceMapCount } from './source-maps.js'

const modules = { 'seam-runtime': seam }

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'seam-load-')))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true })
    await writeFile(join(dir, path), text)
  }
  return dir
}

async function failure(promise: Promise<unknown>): Promise<SeamError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(error instanceof SeamError)) throw new Error(`expected a SeamError, got ${String(error)}`)
  return error
}

describe('loadModule', () => {
  it('reports a syntax error as LOAD_FAILED at its line and column, with a code frame', async () => {
    const dir = await folder({
      'tools/broken.ts': `import { defineTool } from 'seam-runtime'

export default defineTool({
  description: 'Broken.' input: {},
})
`,
    })
    const error = await failure(loadModule(join(dir, 'tools/broken.ts'), { modules, relativeTo: dir }))
    expect(error.code).toBe('LOAD_FAILED')
    expect(error.message).toBe('tools/broken.ts:4:26: Expected "}" but found "input"')
    expect(error.details).toMatchObject({ file: join(dir, 'tools/broken.ts'), line: 4, column: 26 })
    expect(error.details?.frame).toBe(
      [
        "  2 |",
        '  3 | export default defineTool({',
        "> 4 |   description: 'Broken.' input: {},",
        '    |                          ^',
        '  5 | })',
        '  6 |',
      ].join('\n'),
    )
  })

  it('counts columns in characters, not bytes, after non-ASCII text', async () => {
    const dir = await folder({ 'x.ts': "const s = 'héllo'; const t = ;\n" })
    const error = await failure(loadModule(join(dir, 'x.ts'), { modules }))
    expect(error.details).toMatchObject({ line: 1, column: 30 })
  })

  it('locates an error in a helper at the helper line', async () => {
    const dir = await folder({
      'tools/uses.ts': "import { x } from './lib/bad'\nexport default x\n",
      'tools/lib/bad.ts': 'export const x = 1\nexport const y = )\n',
    })
    const error = await failure(loadModule(join(dir, 'tools/uses.ts'), { modules, relativeTo: dir }))
    expect(error.message).toMatch(/^tools\/lib\/bad\.ts:2:18: /)
  })

  it('rejects top-level await with a message that says tool files cannot use it', async () => {
    const dir = await folder({
      'tools/waits.ts': "const config = await Promise.resolve({})\nexport default config\n",
    })
    const error = await failure(loadModule(join(dir, 'tools/waits.ts'), { modules, relativeTo: dir }))
    expect(error.code).toBe('LOAD_FAILED')
    expect(error.message).toMatch(/^tools\/waits\.ts:1:16: top-level await is not supported in tool and plugin files/)
    expect(error.details?.frame).toContain('> 1 | const config = await')
  })

  it('maps an error thrown while evaluating to the original line, with a frame', async () => {
    const dir = await folder({
      'tools/throws.ts': `type Config = { port: number }
const config: Config = { port: 1 }

if (config.port < 1024) throw new RangeError('port too low')
export default config
`,
    })
    const before = sourceMapCount()
    const error = await failure(loadModule(join(dir, 'tools/throws.ts'), { modules, relativeTo: dir }))
    expect(error.code).toBe('LOAD_FAILED')
    expect(error.message).toBe('tools/throws.ts:4:31: threw while loading: port too low')
    expect(error.details?.frame).toContain("> 4 | if (config.port < 1024) throw new RangeError('port too low')")
    expect(error.cause).toBeInstanceOf(RangeError)
    expect(sourceMapCount()).toBe(before)
  })

  it('reports a missing file as LOAD_FAILED naming it', async () => {
    const dir = await folder({})
    const error = await failure(loadModule(join(dir, 'tools/gone.ts'), { modules, relativeTo: dir }))
    expect(error.code).toBe('LOAD_FAILED')
    expect(error.message).toContain('gone.ts')
  })

  it('exports what a CommonJS file assigns to module.exports', async () => {
    const dir = await folder({ 'plain.js': 'module.exports = { answer: 42, file: __filename }\n' })
    const loaded = await loadModule(join(dir, 'plain.js'), { modules })
    expect(loaded.exports).toEqual({ answer: 42, file: join(dir, 'plain.js') })
  })

  it("gives each bundled file its own import.meta: the tool's url, dirname and filename, and a helper's own", async () => {
    const dir = await folder({
      'tools/where.ts': `import { here as helper } from './lib/here'
export default { url: import.meta.url, dirname: import.meta.dirname, filename: import.meta.filename, helper }
`,
      'tools/lib/here.ts': 'export const here: string = import.meta.url\n',
    })
    const loaded = await loadModule(join(dir, 'tools/where.ts'), { modules })
    expect((loaded.exports as { default: unknown }).default).toEqual({
      url: pathToFileURL(join(dir, 'tools/where.ts')).href,
      dirname: join(dir, 'tools'),
      filename: join(dir, 'tools/where.ts'),
      helper: pathToFileURL(join(dir, 'tools/lib/here.ts')).href,
    })
  })

  it('reads a data file next to the tool through new URL(path, import.meta.url)', async () => {
    const dir = await folder({
      'tools/data.ts': `import { readFileSync } from 'node:fs'
export default JSON.parse(readFileSync(new URL('./data.json', import.meta.url), 'utf8'))
`,
      'tools/data.json': '{ "rows": 3 }',
    })
    const loaded = await loadModule(join(dir, 'tools/data.ts'), { modules })
    expect((loaded.exports as { default: unknown }).default).toEqual({ rows: 3 })
  })

  it('maps an error thrown in a file that uses import.meta to its original TypeScript line', async () => {
    const dir = await folder({
      'tools/meta-throws.ts': `type Where = { url: string }
const where: Where = { url: import.meta.url }

if (where.url.endsWith('.ts')) throw new Error('found ' + where.url.length)
export default where
`,
    })
    const error = await failure(loadModule(join(dir, 'tools/meta-throws.ts'), { modules, relativeTo: dir }))
    expect(error.message).toMatch(/^tools\/meta-throws\.ts:4:38: threw while loading: found \d+$/)
    expect(error.details?.frame).toContain("> 4 | if (where.url.endsWith('.ts')) throw new Error")
  })

  it('changes its hash when the bundled code changes', async () => {
    const dir = await folder({ 'a.ts': 'export default 1\n' })
    const first = await loadModule(join(dir, 'a.ts'), { modules })
    await writeFile(join(dir, 'a.ts'), 'export default 2\n')
    const second = await loadModule(join(dir, 'a.ts'), { modules })
    expect(second.hash).not.toBe(first.hash)
    expect((second.exports as { default: number }).default).toBe(2)
  })
})
