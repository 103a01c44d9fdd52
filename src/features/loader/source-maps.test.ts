import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { SeamError } from '../../errors.js'
import * as seam from '../define-tool.js'
import { locateError, mapStack, sourceMapCount } from './source-maps.js'
import { loadToolFile } from './tool-file.js'

const modules = { 'seam-runtime': seam }

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'seam-maps-')))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true })
    await writeFile(join(dir, path), text)
  }
  return dir
}

const FILES = {
  'tools/explode.ts': `import { defineTool } from 'seam-runtime'
import { check } from './lib/check'

interface Args { id: string }

export default defineTool({
  description: 'Explodes.',
  input: {},
  execute(args: Args) {
    if (args.id === 'here') throw new Error('exploded here')
    return check(args.id)
  },
})
`,
  'tools/lib/check.ts': `export function check(id: string): string {
  const parts: string[] = id.split('-')
  if (parts.length < 2) {
    throw new TypeError(\`bad id \${id}\`)
  }
  return parts[0]!
}
`,
}

async function thrown(run: () => unknown): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

describe('locateError', () => {
  it("maps a throw inside a tool's execute to the original .ts file and line", async () => {
    const dir = await folder(FILES)
    const tool = await loadToolFile(join(dir, 'tools/explode.ts'), { modules })
    const error = await thrown(() => tool.definition.execute({ id: 'here' }, {} as never))
    expect(locateError(error)).toEqual({ file: join(dir, 'tools/explode.ts'), line: 10, column: 35 })
  })

  it('maps the first bundle frame, here inside a helper the tool imports', async () => {
    const dir = await folder(FILES)
    const tool = await loadToolFile(join(dir, 'tools/explode.ts'), { modules })
    const error = await thrown(() => tool.definition.execute({ id: 'nodash' }, {} as never))
    expect(locateError(error)).toEqual({ file: join(dir, 'tools/lib/check.ts'), line: 4, column: 11 })
    expect(locateError(new SeamError('TOOL_ERROR', 'wrapped', { cause: error }))?.line).toBe(4)
  })

  it('rewrites bundle frames in the stack text and leaves the others alone', async () => {
    const dir = await folder(FILES)
    const tool = await loadToolFile(join(dir, 'tools/explode.ts'), { modules })
    const error = await thrown(() => tool.definition.execute({ id: 'nodash' }, {} as never))
    const stack = mapStack(error) ?? ''
    expect(stack).toContain(`${join(dir, 'tools/lib/check.ts')}:4:11`)
    expect(stack).toContain(`${join(dir, 'tools/explode.ts')}:11:12`)
    expect(stack).not.toContain('?seam=')
    expect(stack).toContain('source-maps.test.ts')
  })

  it('stops mapping a module once it is released', async () => {
    const dir = await folder(FILES)
    const before = sourceMapCount()
    const tool = await loadToolFile(join(dir, 'tools/explode.ts'), { modules })
    expect(sourceMapCount()).toBe(before + 1)
    const error = await thrown(() => tool.definition.execute({ id: 'here' }, {} as never))
    tool.release()
    tool.release()
    expect(sourceMapCount()).toBe(before)
    expect(locateError(error)).toBeUndefined()
  })

  it('answers with the location a load error already carries, and nothing for foreign errors', () => {
    const located = new SeamError('LOAD_FAILED', 'x', { details: { file: '/p/tools/a.ts', line: 3, column: 7 } })
    expect(locateError(located)).toEqual({ file: '/p/tools/a.ts', line: 3, column: 7 })
    expect(locateError(new Error('elsewhere'))).toBeUndefined()
    expect(locateError('a string')).toBeUndefined()
    expect(mapStack(undefined)).toBeUndefined()
  })
})
