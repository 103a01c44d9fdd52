import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, SeamError } from 'seam-runtime'
import type { Diagnostic } from '../src/features/diagnostic.js'
import { beginTurn } from './kit.js'

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'seam-diag-')))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true })
    await writeFile(join(dir, path), text)
  }
  return dir
}

describe('plugin folder diagnostics', () => {
  it('reports a plugin.ts whose setup throws by the plugin name, with file, line and a code frame', async () => {
    const dir = await folder({
      'plugin.ts': `import { definePlugin } from 'seam-runtime/plugin-runtime'

export default definePlugin({
  name: 'support',
  setup() {
    const config: { port?: number } = {}
    if (!config.port) throw new Error('config.port is missing')
  },
})
`,
    })
    const error = await createRoot({ dir }).catch((e: unknown) => e)
    expect(SeamError.is(error, 'RELOAD_FAILED')).toBe(true)
    const [diagnostic] = ((error as SeamError).details?.diagnostics ?? []) as Diagnostic[]
    expect(diagnostic).toMatchObject({
      code: 'SETUP_FAILED',
      message: 'plugin "support" failed to set up: config.port is missing',
      file: join(dir, 'plugin.ts'),
      line: 7,
      column: 29,
    })
    expect(diagnostic?.frame).toContain("> 7 |     if (!config.port) throw new Error('config.port is missing')")
  })

  it("labels ctx.log lines of a plugin's setup and of its tools with the plugin's name", async () => {
    const dir = await folder({
      'plugin.ts': `import { definePlugin } from 'seam-runtime/plugin-runtime'
export default definePlugin({ name: 'support', setup(ctx) { ctx.log.info('set up') } })
`,
      'tools/ping.ts': `import { defineTool } from 'seam-runtime'
export default defineTool({ description: 'Ping.', input: {}, approval: 'never', execute(_args, ctx) { ctx.log.info('pinged'); return 'pong' } })
`,
    })
    const lines: string[] = []
    const root = await createRoot({ dir, log: (level, scope, message) => lines.push(`${level} [${scope}] ${message}`) })
    onTestFinished(() => root.close())
    const turn = await beginTurn(root)
    await turn.tools.execute({ callId: 'c1', name: 'ping', arguments: '{}' })
    await turn.end()
    expect(lines).toContain('info [support] set up')
    expect(lines).toContain('info [support] pinged')
  })
})
