import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'

/** The built `seam` (vitest's global setup brings dist/ up to date). */
export const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))

/** A zod tool file whose body is `body`. */
export const tool = (description: string, approval: string, body: string) => `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: ${JSON.stringify(description)},
  input: z.object({ text: z.string(), times: z.number().int().optional() }),
  approval: ${JSON.stringify(approval)},
  async execute({ text, times }) {
    ${body}
  },
})
`

/** A temporary plugin folder with `files` (the caller removes it). */
export async function pluginFolder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'seam-cli-'))
  for (const [name, text] of Object.entries(files)) await put(dir, name, text)
  return dir
}

/**
 * `seam init` into `dir`, then what `npm install` would bring: this package (its built types), zod
 * and @types/node, linked from this repository.
 */
export async function initProject(dir: string): Promise<void> {
  const init = await seam('init', dir)
  expect(init.code).toBe(0)
  const repo = fileURLToPath(new URL('..', import.meta.url))
  await mkdir(path.join(dir, 'node_modules', '@types'), { recursive: true })
  await symlink(repo, path.join(dir, 'node_modules', 'seam-runtime'))
  await symlink(path.join(repo, 'node_modules', 'zod'), path.join(dir, 'node_modules', 'zod'))
  await symlink(path.join(repo, 'node_modules', '@types', 'node'), path.join(dir, 'node_modules', '@types', 'node'))
}

export async function put(dir: string, name: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(dir, name)), { recursive: true })
  await writeFile(path.join(dir, name), text)
}

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

export function start(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
}

/** Runs `seam …` to completion, with stdin closed (no terminal). */
export function seam(...args: string[]): Promise<Run> {
  const child = start(args)
  child.stdin?.end()
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk) => (stdout += chunk))
  child.stderr?.on('data', (chunk) => (stderr += chunk))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** Collects a long-running child's stdout and waits for a pattern to appear after `from`. */
export function watch(child: ChildProcess) {
  let text = ''
  let waiter: (() => void) | undefined
  child.stdout?.on('data', (chunk) => {
    text += chunk
    waiter?.()
  })
  child.stderr?.on('data', (chunk) => {
    text += chunk
    waiter?.()
  })
  return {
    get text() {
      return text
    },
    until(pattern: RegExp, from = 0, ms = 30_000): Promise<RegExpMatchArray> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${ms} ms; output:\n${text}`)), ms)
        const check = () => {
          const match = text.slice(from).match(pattern)
          if (!match) return
          clearTimeout(timer)
          waiter = undefined
          resolve(match)
        }
        waiter = check
        check()
      })
    },
  }
}

export const noStack = (text: string) => expect(text).not.toMatch(/^\s+at /m)
