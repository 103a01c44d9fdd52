// Helpers for the hot-reload scenarios: a temporary plugin folder, a watching root, its events.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { onTestFinished } from 'vitest'
import { createRoot, type GenerationEvent, type ReloadFailedEvent, type Root } from 'seam-runtime'
import { beginTurn } from './kit.js'

export type Event = ({ kind: 'generation' } & GenerationEvent) | ({ kind: 'failed' } & ReloadFailedEvent)

export async function plugin(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'seam-hmr-'))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(files)) await put(dir, name, text)
  return dir
}

export async function put(dir: string, name: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(dir, name)), { recursive: true })
  await writeFile(path.join(dir, name), text)
}

export async function watching(dir: string): Promise<{ root: Root; events: Event[]; next: () => Promise<Event> }> {
  const root = await createRoot({ dir, watch: true })
  onTestFinished(() => root.close())
  const events: Event[] = []
  let waiter: ((e: Event) => void) | undefined
  const push = (e: Event) => {
    events.push(e)
    waiter?.(e)
    waiter = undefined
  }
  root.on('generation', (e) => push({ kind: 'generation', ...e }))
  root.on('reload-failed', (e) => push({ kind: 'failed', ...e }))
  const next = () =>
    new Promise<Event>((resolve, reject) => {
      const seen = events.length
      const timer = setTimeout(() => {
        const kinds = events.map((e) => (e.kind === 'generation' ? `generation ${e.generation}` : 'failed'))
        reject(new Error(`no generation event within 5 s (${seen} before this wait: ${kinds.join(', ') || 'none'})`))
      }, 5_000)
      waiter = (e) => {
        clearTimeout(timer)
        resolve(e)
      }
    })
  return { root, events, next }
}

export const tool = (description: string, body: string, input = 'z.object({})') => `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: ${JSON.stringify(description)},
  input: ${input},
  approval: 'never',
  async execute(args, ctx) {
    ${body}
  },
})
`

/** Waits past the debounce to prove no second generation follows. */
export const quiet = () => new Promise((resolve) => setTimeout(resolve, 150))

export async function call(root: Root, name: string, args = '{}') {
  const turn = await beginTurn(root)
  try {
    return await turn.tools.execute({ callId: 'c1', name, arguments: args })
  } finally {
    await turn.end()
  }
}
