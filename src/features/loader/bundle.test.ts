import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { bundleFile } from './bundle.js'

describe('bundleFile', () => {
  it('leaves seam-runtime external even where a tsconfig paths entry maps it to local sources', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seam-bundle-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    // A folder whose tsconfig maps seam-runtime to its own sources, as this repository's does.
    await writeFile(join(dir, 'runtime.ts'), 'export const defineTool = (d: unknown) => ({ inlined: true, d })\n')
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { paths: { 'seam-runtime': ['./runtime.ts'], 'seam-runtime/*': ['./*.ts'] } } }))
    await writeFile(join(dir, 'tool.ts'), "import { defineTool } from 'seam-runtime'\nimport { definePlugin } from 'seam-runtime/plugin-runtime'\nexport default defineTool({ description: String(definePlugin) })\n")
    const { code } = await bundleFile(join(dir, 'tool.ts'))
    expect(code).toContain('require("seam-runtime")')
    expect(code).toContain('require("seam-runtime/plugin-runtime")')
    expect(code).not.toContain('inlined')
  })
})
