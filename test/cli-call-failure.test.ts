import { rm } from 'node:fs/promises'
import { describe, expect, it, onTestFinished } from 'vitest'
import { pluginFolder, seam } from './cli-kit.js'

const BOOM = `import { defineTool } from 'seam-runtime'
import { z } from 'zod'

function explode(): never {
  throw new Error('kaboom')
}

export default defineTool({
  description: 'Explodes.',
  input: z.object({}),
  approval: 'never',
  execute() {
    explode()
  },
})
`

describe('seam call of a tool whose body throws', { timeout: 60_000 }, () => {
  it('says where it was thrown, the stack with --debug, and seam journal says where too', async () => {
    const dir = await pluginFolder({ 'tools/boom.ts': BOOM })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const plain = await seam('call', 'boom', '{}', '--dir', dir)
    expect(plain.code).toBe(1)
    expect(plain.stdout).toMatch(/^failed TOOL_ERROR boom .*\nThe tool "boom" failed: kaboom\nat tools\/boom\.ts:5:9\n$/)

    const debug = await seam('--debug', 'call', 'boom', '{}', '--dir', dir)
    expect(debug.stdout).toContain('at tools/boom.ts:5:9\nError: kaboom\n')
    // The stack names the tool file's own lines (source-mapped), the throw and its caller.
    expect(debug.stdout).toMatch(/^ {4}at explode \(.*tools\/boom\.ts:5:9\)$/m)
    expect(debug.stdout).toMatch(/^ {4}at .*execute \(.*tools\/boom\.ts:13:5\)$/m)
    expect(plain.stdout).not.toContain('Error: kaboom')

    const journal = await seam('journal', dir, '--tail', '2')
    expect(journal.stdout).toMatch(/tool\/result .*failed TOOL_ERROR .*The tool "boom" failed: kaboom at tools\/boom\.ts:5:9$/m)
    const json = await seam('journal', dir, '--tail', '2', '--json')
    const result = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((e) => e.kind === 'tool/result')
    expect(result.location).toMatchObject({ file: expect.stringMatching(/tools\/boom\.ts$/), line: 5, column: 9 })
  })
})
