import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { formatDiagnostic, formatProvider, formatPublish, printable, schemaSummary } from './format.js'
import { eventRow } from './commands/journal.js'
import { styleFor } from './io.js'

describe('dev output formatting', () => {
  const style = styleFor(new PassThrough(), {})

  it('writes a publish line with added, changed and removed tools and skills', () => {
    const diff = { tools: { added: ['search_files'], changed: ['read_file'], removed: ['old_tool'] }, skills: { added: ['triage'], changed: [], removed: [] } }
    expect(formatPublish(4, diff, 18.4, style)).toBe('generation 4 live: +search_files ~read_file -old_tool +skill:triage (18 ms)')
    const none = { tools: { added: [], changed: [], removed: [] }, skills: { added: [], changed: [], removed: [] } }
    expect(formatPublish(5, none, 2.04, style)).toBe('generation 5 live: no changes (2 ms)')
  })

  it('escapes what a remote provider chose: a diagnostic, a provider id and reason, a tool name in a publish line', () => {
    const evil = 'x\x1b]0;pwned\x07\x1b[2J'
    const escaped = 'x\\u001b]0;pwned\\u0007\\u001b[2J'
    // Without a file, the code leads and the message (which names the provider) says the rest.
    expect(formatDiagnostic({ code: 'INVALID_TOOL', source: `seam:${evil}`, message: `bad ${evil}` }, style)).toBe(`INVALID_TOOL bad ${escaped}`)
    expect(formatProvider({ provider: evil, state: 'down', reason: evil, retryAt: 2_000 }, style, 0)).toBe(`${escaped}  down  retrying in 2 s: ${escaped}`)
    const diff = { tools: { added: [evil], changed: [], removed: [] }, skills: { added: [], changed: [], removed: [] } }
    expect(formatPublish(2, diff, 1, style)).toBe(`generation 2 live: +${escaped} (1 ms)`)
  })

  it('summarises an input schema on one line', () => {
    const schema = {
      type: 'object',
      properties: { path: { type: 'string' }, offset: { type: 'integer' }, mode: { enum: ['a', 'b'] }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['path'],
    }
    expect(schemaSummary(schema)).toBe('path: string, offset?: integer, mode?: "a" | "b", tags?: string[]')
    expect(schemaSummary({ type: 'object', properties: {} })).toBe('(no arguments)')
  })

  it('names a diagnostic by its file relative to the plugin folder, says the location once, and indents the frame', () => {
    const diagnostic = {
      code: 'LOAD_FAILED' as const,
      message: 'tools/broken.ts:3:25: Unexpected "*"',
      file: '/plugin/tools/broken.ts',
      line: 3,
      column: 25,
      frame: '> 3 |   execute() { return 1 +* 2 },\n    |                         ^',
    }
    expect(formatDiagnostic(diagnostic, style, '/plugin')).toBe(
      'tools/broken.ts:3:25 Unexpected "*"\n  > 3 |   execute() { return 1 +* 2 },\n      |                         ^',
    )
  })

  it('names the file once when a message without a line starts with it, and lets a message without a file name itself', () => {
    const badExport = { code: 'INVALID_TOOL' as const, message: "tools/bad.ts: the default export must be defineTool({...}) from 'seam-runtime'; got a number", file: '/plugin/tools/bad.ts' }
    expect(formatDiagnostic(badExport, style, '/plugin')).toBe("tools/bad.ts the default export must be defineTool({...}) from 'seam-runtime'; got a number")
    const setup = { code: 'SETUP_FAILED' as const, message: 'plugin "support" failed to set up: no config', source: 'root' }
    expect(formatDiagnostic(setup, style, '/plugin')).toBe('SETUP_FAILED plugin "support" failed to set up: no config')
  })

  it('colours only a terminal, and never with NO_COLOR', () => {
    const tty = Object.assign(new PassThrough(), { isTTY: true })
    expect(styleFor(tty, {}).red('x')).toBe('\x1b[31mx\x1b[39m')
    expect(styleFor(tty, { NO_COLOR: '1' }).red('x')).toBe('x')
    expect(styleFor(new PassThrough(), {}).red('x')).toBe('x')
  })

  it('shows control characters from the journal as escapes, so a client cannot drive the terminal', () => {
    expect(printable('mcp-1.\u001b[2J\u001b[31mPWNED\u001b[0m')).toBe('mcp-1.\\u001b[2J\\u001b[31mPWNED\\u001b[0m')
    expect(printable('plain ünïcode · ok')).toBe('plain ünïcode · ok')
    const row = eventRow(
      { kind: 'tool/call', turnId: 't1', seq: 2, at: Date.now(), callId: 'c\u001b]0;title\u0007', name: 'nope\u001b[31mRED', arguments: '{}', generation: 1 },
      styleFor(new PassThrough(), {}),
    )
    expect([...row.join(' ')].some((c) => c.charCodeAt(0) < 0x20)).toBe(false)
    expect(row.join(' ')).toContain('nope\\u001b[31mRED')
  })
})
