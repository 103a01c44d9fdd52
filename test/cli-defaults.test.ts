import { createServer } from 'node:net'
import { rm } from 'node:fs/promises'
import { describe, expect, it, onTestFinished } from 'vitest'
import { pluginFolder, seam, start, watch } from './cli-kit.js'

// No `approval` and no `risk`: the default 'on-risk' asks on every call.
const UNDECLARED = `import { defineTool } from 'seam-runtime'
export default defineTool({ description: 'Touch something.', input: {}, execute: () => 'touched' })
`
const SAFE = `import { defineTool } from 'seam-runtime'
export default defineTool({ description: 'Read something.', input: {}, approval: 'never', execute: () => 'read' })
`

describe('the on-risk default, made visible', { timeout: 60_000 }, () => {
  it('seam tools says a tool with no approval and no risk asks every call, in the table and in JSON', async () => {
    const dir = await pluginFolder({ 'tools/touch.ts': UNDECLARED, 'tools/look.ts': SAFE })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const [table, json] = await Promise.all([seam('tools', dir), seam('tools', dir, '--json')])
    expect(table.stdout).toMatch(/^touch\s+tools\/touch\.ts\s+on-risk: asks every call\s/m)
    expect(table.stdout).toMatch(/^look\s+tools\/look\.ts\s+never\s/m)
    const catalog = JSON.parse(json.stdout) as { tools: { name: string; asksEveryCall: boolean }[] }
    expect(catalog.tools.map((t) => [t.name, t.asksEveryCall])).toEqual([
      ['look', false],
      ['touch', true],
    ])
  })
})

describe('seam dev on a taken port', { timeout: 60_000 }, () => {
  it('keeps running without MCP, says how to pick another port, warns once per asking tool and says it is watching once', async () => {
    const dir = await pluginFolder({ 'tools/touch.ts': UNDECLARED })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    onTestFinished(() => new Promise<void>((resolve) => taken.close(() => resolve())))
    const port = (taken.address() as { port: number }).port
    const child = start(['dev', dir, '--port', String(port), '--no-check'])
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    const out = watch(child)
    await out.until(/watching for changes/)
    expect(out.text).toContain(`mcp        not serving: port ${port} is in use; pick another with --port <n> (--port 0 takes any free port), or run without MCP with --no-mcp`)
    expect(out.text.match(/warning: touch asks for approval on every call/g)).toHaveLength(1)
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    expect(out.text.match(/watching for changes/g)).toHaveLength(1)
  })
})
