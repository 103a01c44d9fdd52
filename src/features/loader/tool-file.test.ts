import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { SeamError } from '../../errors.js'
import * as seam from '../define-tool.js'
import { loadToolFile } from './tool-file.js'

const modules = { 'seam-runtime': seam, zod: await import('zod') }

async function pluginFolder(files: Record<string, string>): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'seam-tool-')))
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

const LOOKUP = `import { defineTool } from 'seam-runtime'
import { z } from 'zod'

export default defineTool({
  description: 'Read one ticket by id.',
  input: z.object({ id: z.string() }),
  async execute({ id }) {
    return { title: \`Ticket \${id}\` }
  },
})
`

describe('loadToolFile', () => {
  it('loads a zod tool that imports seam-runtime, with the host brand, and runs its body', async () => {
    const dir = await pluginFolder({ 'tools/lookup_ticket.ts': LOOKUP })
    const tool = await loadToolFile(join(dir, 'tools/lookup_ticket.ts'), { modules })
    expect(tool.name).toBe('lookup_ticket')
    expect(tool.definition.$seam).toBe(seam.TOOL_BRAND)
    expect(seam.isZodSchema(tool.definition.input)).toBe(true)
    expect(await tool.definition.execute({ id: 'T-1' }, {} as never)).toEqual({ title: 'Ticket T-1' })
    expect(tool.dependencies).toEqual([join(dir, 'tools/lookup_ticket.ts')])
    expect(tool.hash).toMatch(/^[0-9a-f]{16}$/)
  })

  it('lists a local helper it imports among its dependencies', async () => {
    const dir = await pluginFolder({
      'tools/shout.ts': `import { defineTool } from 'seam-runtime'
import { upper } from './lib/text'
export default defineTool({ description: 'Shout.', input: {}, execute: () => upper('hi') })
`,
      'tools/lib/text.ts': 'export const upper = (s: string): string => s.toUpperCase()\n',
    })
    const tool = await loadToolFile(join(dir, 'tools/shout.ts'), { modules })
    expect(tool.dependencies).toEqual([join(dir, 'tools/lib/text.ts'), join(dir, 'tools/shout.ts')])
    expect(await tool.definition.execute({}, {} as never)).toBe('HI')
  })

  it('hands the host its own seam-runtime even when the folder has another copy, and resolves other packages from the folder', async () => {
    const dir = await pluginFolder({
      'node_modules/seam-runtime/package.json': '{ "name": "seam-runtime", "main": "index.js" }',
      'node_modules/seam-runtime/index.js': 'exports.defineTool = (spec) => ({ ...spec, $seam: "stale copy" })\n',
      'node_modules/pad/package.json': '{ "name": "pad", "main": "index.js" }',
      'node_modules/pad/index.js': "module.exports = (s) => '[' + s + ']'\n",
      'tools/pad_it.ts': `import { defineTool } from 'seam-runtime'
import pad from 'pad'
export default defineTool({ description: 'Pad.', input: {}, execute: () => pad('x') })
`,
    })
    const tool = await loadToolFile(join(dir, 'tools/pad_it.ts'), { modules })
    expect(tool.definition.$seam).toBe(seam.TOOL_BRAND)
    expect(await tool.definition.execute({}, {} as never)).toBe('[x]')
  })

  it('gives every load its own module instance', async () => {
    const dir = await pluginFolder({
      'tools/count.ts': `import { defineTool } from 'seam-runtime'
let calls = 0
export default defineTool({ description: 'Count.', input: {}, execute: () => ++calls })
`,
    })
    const first = await loadToolFile(join(dir, 'tools/count.ts'), { modules })
    const second = await loadToolFile(join(dir, 'tools/count.ts'), { modules })
    await first.definition.execute({}, {} as never)
    expect(await first.definition.execute({}, {} as never)).toBe(2)
    expect(await second.definition.execute({}, {} as never)).toBe(1)
    expect(second.hash).toBe(first.hash)
  })

  it('answers the previous load itself, without evaluating the file, while the file bundles the same; a helper edit loads afresh', async () => {
    const dir = await pluginFolder({
      'tools/count.ts': `import { defineTool } from 'seam-runtime'
import { step } from './step.js'
let calls = 0
export default defineTool({ description: 'Count.', input: {}, execute: () => (calls += step) })
`,
      'tools/step.ts': 'export const step = 1\n',
    })
    const file = join(dir, 'tools/count.ts')
    const first = await loadToolFile(file, { modules })
    await first.definition.execute({}, {} as never)
    // Saved again without an edit: the same load, with its module state.
    await writeFile(file, await readFile(file, 'utf8'))
    const again = await loadToolFile(file, { modules }, first)
    expect(again).toBe(first)
    expect(await again.definition.execute({}, {} as never)).toBe(2)
    // The helper changed: the bundle differs, so the file is evaluated again.
    await writeFile(join(dir, 'tools/step.ts'), 'export const step = 10\n')
    const changed = await loadToolFile(file, { modules }, first)
    expect(changed).not.toBe(first)
    expect(changed.hash).not.toBe(first.hash)
    expect(await changed.definition.execute({}, {} as never)).toBe(10)
  })

  it('rejects a default export that is not defineTool({...}), naming the file', async () => {
    const dir = await pluginFolder({
      'tools/plain.ts': `export default { description: 'Plain.', input: {}, execute: () => 1 }\n`,
      'tools/fn.ts': 'export default function run() { return 1 }\n',
      'tools/none.ts': 'export const x = 1\n',
    })
    const plain = await failure(loadToolFile(join(dir, 'tools/plain.ts'), { modules, relativeTo: dir }))
    expect(plain.code).toBe('INVALID_TOOL')
    expect(plain.message).toBe(
      "tools/plain.ts: the default export must be defineTool({...}) from 'seam-runtime'; got an object with description, input, execute",
    )
    expect(plain.details).toMatchObject({ file: join(dir, 'tools/plain.ts') })
    const fn = await failure(loadToolFile(join(dir, 'tools/fn.ts'), { modules, relativeTo: dir }))
    expect(fn.message).toMatch(/^tools\/fn\.ts: .*got a function$/)
    const none = await failure(loadToolFile(join(dir, 'tools/none.ts'), { modules, relativeTo: dir }))
    expect(none.message).toMatch(/got no default export$/)
  })

  it('rejects a file name that is not a tool name before loading it', async () => {
    const dir = await pluginFolder({ 'tools/LookUp.ts': 'throw new Error("never evaluated")\n' })
    const error = await failure(loadToolFile(join(dir, 'tools/LookUp.ts'), { modules, relativeTo: dir }))
    expect(error.code).toBe('INVALID_TOOL')
    expect(error.message).toContain('tools/LookUp.ts: a tool file name must match')
    expect(error.message).toContain('got "LookUp"')
  })

  it('keeps the INVALID_TOOL code of a defineTool that throws while loading, located at the call', async () => {
    const dir = await pluginFolder({
      'tools/empty.ts': `import { defineTool } from 'seam-runtime'

export default defineTool({ description: '', input: {}, execute: () => 1 })
`,
    })
    const error = await failure(loadToolFile(join(dir, 'tools/empty.ts'), { modules, relativeTo: dir }))
    expect(error.code).toBe('INVALID_TOOL')
    expect(error.message).toMatch(/^tools\/empty\.ts:3:\d+: defineTool: `description` must be a non-empty string$/)
    expect(error.details).toMatchObject({ file: join(dir, 'tools/empty.ts'), line: 3 })
  })
})
