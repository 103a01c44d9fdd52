import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { initProject, start, watch } from './cli-kit.js'

// The first check loads TypeScript, @types/node and zod's types: seconds on a busy machine.
describe('seam dev type-checks in the background', { timeout: 180_000 }, () => {
  it('prints a type error with file:line and frame while the reload goes live, then clears it, and stops cleanly', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-dev-types-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await initProject(dir)
    const child = start(['dev', dir, '--no-mcp', '--debounce', '30'])
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    const out = watch(child)
    await out.until(/types {6}checking in the background \(TypeScript \d+\.\d+\.\d+\)/)
    await out.until(/^types ok \(2 files, [\d.]+ ms\)$/m, 0, 120_000)
    const example = path.join(dir, 'tools', 'example.ts')
    const clean = await readFile(example, 'utf8')
    // Valid JavaScript (zod compares lengths with '1' as with 1), a type error for TypeScript.
    const broken = clean.replace('z.string().min(1)', "z.string().min('1')")
    expect(broken).not.toBe(clean)
    let from = out.text.length
    await writeFile(example, broken)
    await out.until(/^generation 2 live: ~example \([\d.]+ ms\)$/m, from)
    const error = await out.until(/^1 type error in 1 file \(2 files, [\d.]+ ms\)\n(.*)\n((?: {2}.*\n)+)/m, from, 60_000)
    expect(error[1]).toMatch(/^tools\/example\.ts:7:42 TS2345 Argument of type 'string' is not assignable to parameter of type 'number'/)
    expect(error[2]).toContain("> 7 |   input: z.object({ name: z.string().min('1').describe('who to greet') }),")
    // The caret sits under column 42, the '1'.
    expect(error[2]).toMatch(/^ +\| {42}\^$/m)
    from = out.text.length
    await writeFile(example, clean)
    await out.until(/^generation 3 live: ~example/m, from)
    await out.until(/^types ok \(2 files, [\d.]+ ms\)$/m, from, 60_000)
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const stopping = performance.now()
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    expect(performance.now() - stopping).toBeLessThan(5_000)
    expect(out.text).toMatch(/stopped\n$/)
  })
})
