import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const FIXTURE = fileURLToPath(new URL('./fixtures/tool-types.ts', import.meta.url))
const CONFIG = fileURLToPath(new URL('../../tsconfig.json', import.meta.url))

/** The fixture compiled with the repository's compiler options; `text` replaces its contents. */
function diagnostics(text?: string): { line: number; code: number; message: string }[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(CONFIG, { noEmit: true }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (parsed === undefined) throw new Error(`cannot read ${CONFIG}`)
  const host = ts.createCompilerHost(parsed.options)
  if (text !== undefined) {
    const original = host.getSourceFile.bind(host)
    host.getSourceFile = (file, language, ...rest) =>
      file === FIXTURE ? ts.createSourceFile(file, text, language) : original(file, language, ...rest)
  }
  const program = ts.createProgram({ rootNames: [FIXTURE], options: parsed.options, host })
  return ts.getPreEmitDiagnostics(program).map((d) => ({
    line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0,
    code: d.code,
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }))
}

describe('defineTool types', { timeout: 60_000 }, () => {
  const source = readFileSync(FIXTURE, 'utf8')
  const lines = source.split('\n')
  // The line after each directive (1-based) is where the checker must report the mistake.
  const marked = lines.flatMap((text, i) => (text.trim().startsWith('// @ts-expect-error') ? [i + 2] : []))

  it('reports every marked mistake and nothing else (an unused @ts-expect-error fails)', () => {
    expect(marked.length).toBeGreaterThanOrEqual(5)
    expect(diagnostics()).toEqual([])
  })

  it('reports each mistake on the line it is marked at once the directives are gone', () => {
    const stripped = lines.map((text) => (text.trim().startsWith('// @ts-expect-error') ? '' : text)).join('\n')
    const found = diagnostics(stripped)
    expect([...new Set(found.map((d) => d.line))].sort((a, b) => a - b)).toEqual(marked)
    expect(found.find((d) => d.line === marked[0])?.message).toMatch(/Type 'number' is not assignable to type 'string'/)
  })
})
