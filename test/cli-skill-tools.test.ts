import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { pluginFolder, start, tool, watch } from './cli-kit.js'

const skill = (tools: string) => `---
description: Triage a ticket.
tools: ${tools}
---
# Triage
`

describe('seam dev and a skill whose tools: names a tool that does not exist', { timeout: 60_000 }, () => {
  it('warns with the file, line, column and frame of the entry, and again for a reload that still has it', async () => {
    const dir = await pluginFolder({ 'tools/echo.ts': tool('Echo.', 'never', 'return text'), 'agent/skills/triage.md': skill('[echo, lookup_ticket]') })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const child = start(['dev', dir, '--no-mcp', '--no-check', '--debounce', '30'])
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    const out = watch(child)
    const warning = await out.until(/^warning: (.*)\n((?: {2}.*\n)+)/m)
    expect(warning[1]).toBe('agent/skills/triage.md:3:15 skill "triage" lists tool "lookup_ticket" in `tools:`, and there is no such tool')
    expect(warning[2]).toContain('> 3 | tools: [echo, lookup_ticket]')
    await out.until(/watching for changes/)
    expect(out.text).not.toMatch(/tool "echo"/)

    // Named as a block list on another line: the warning follows it.
    let from = out.text.length
    await writeFile(path.join(dir, 'agent', 'skills', 'triage.md'), skill('\n  - echo\n  - lookup'))
    await out.until(/^generation 2 live/m, from)
    const moved = await out.until(/^warning: (.*)$/m, from)
    expect(moved[1]).toBe('agent/skills/triage.md:5:5 skill "triage" lists tool "lookup" in `tools:`, and there is no such tool')

    // Fixed: the next generation goes live without a warning.
    from = out.text.length
    await writeFile(path.join(dir, 'agent', 'skills', 'triage.md'), skill('[echo]'))
    await out.until(/^generation 3 live/m, from)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(out.text.slice(from)).not.toContain('warning:')
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
  })
})
