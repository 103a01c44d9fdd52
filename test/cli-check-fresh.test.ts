import { fork } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, onTestFinished } from 'vitest'
import { checkReporter } from '../src/cli/background-check.js'
import type { OutStream } from '../src/cli/io.js'
import { findTypeScript } from '../src/cli/type-check.js'
import { watchWithTsc } from '../src/cli/type-check-watch.js'
import type { CheckWorkerMessage } from '../src/cli/type-check-worker.js'
import { initProject } from './cli-kit.js'
import { MAJORS, useTypeScript } from './typescript-versions.js'

type Checked = Extract<CheckWorkerMessage, { kind: 'checked' }>

const WORKER = fileURLToPath(new URL('../dist/cli/type-check-worker.js', import.meta.url))

/** The first result of seam dev's real checker for `dir`: 5's worker process, or 7's tsc passes. */
async function firstResult(major: (typeof MAJORS)[number], dir: string): Promise<Checked> {
  const found = findTypeScript(dir)
  if (found === undefined) throw new Error('no TypeScript')
  return new Promise<Checked>((resolve, reject) => {
    const take = (message: CheckWorkerMessage) => (message.kind === 'checked' ? resolve(message) : reject(new Error(message.message)))
    if (major === 7) {
      const checker = watchWithTsc(found, dir, take)
      onTestFinished(() => checker.terminate())
      return
    }
    const worker = fork(WORKER, [JSON.stringify({ dir, typescript: found.path })], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] })
    onTestFinished(() => void worker.kill())
    worker.on('message', take)
    worker.on('error', reject)
  })
}

function output(): { stream: OutStream; text: () => string } {
  let text = ''
  const write = (chunk: string) => {
    text += chunk
    return true
  }
  const stream = { isTTY: false, write } as unknown as OutStream
  return { stream, text: () => text }
}

const PLAIN = { enabled: false, bold: String, dim: String, red: String, green: String, yellow: String, cyan: String }

describe.each(MAJORS)('seam dev with TypeScript %i drops a superseded check result', { timeout: 180_000 }, (major) => {
  it('prints a result while the files are as the check saw them, and nothing once one has changed since', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seam-check-fresh-'))
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await initProject(dir)
    await useTypeScript(dir, major)
    const example = path.join(dir, 'tools', 'example.ts')
    const clean = await readFile(example, 'utf8')
    await writeFile(example, clean.replace('execute({ name }) {', 'execute({ name }) {\n    const n: number = name'))
    const result = await firstResult(major, dir)
    expect(result.problems).toHaveLength(1)
    expect(Object.keys(result.seen)).toContain(example)

    const current = output()
    await checkReporter(dir, current.stream, PLAIN)(result)
    expect(current.text()).toMatch(/^1 type error in 1 file/)

    // The fix lands (and goes live) after the pass read the file, before its result is shown.
    await writeFile(example, clean)
    const stale = output()
    await checkReporter(dir, stale.stream, PLAIN)(result)
    expect(stale.text()).toBe('')
  })
})
