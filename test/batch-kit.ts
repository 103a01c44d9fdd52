// The timeline and tools the executeBatch tests (test/batches-*.test.ts) share.
import { expect } from 'vitest'
import { z } from 'zod'
import { defineTool, memoryJournal, type PluginContext, type ToolCall, type ToolSpec } from 'seam-runtime'

/**
 * One ordered log of everything a batch does: `pre:A`, `start:A`, `end:A`, `post:A`, `result:A`
 * (live observers), `tool/call:A` and `tool/result:A` (journal appends), plus which bodies overlapped.
 */
export class Timeline {
  readonly log: string[] = []
  readonly spans = new Map<string, { start: number; end: number }>()
  readonly #running = new Set<string>()
  readonly #overlaps = new Map<string, Set<string>>()
  maxRunning = 0

  mark(label: string): void {
    this.log.push(label)
  }

  /** The ids logged under `kind`, in log order: `of('start')` → `['A', 'B']`. */
  of(kind: string): string[] {
    return this.log.filter((l) => l.startsWith(`${kind}:`)).map((l) => l.slice(kind.length + 1))
  }

  expectBefore(first: string, second: string): void {
    expect(this.log, `${first} before ${second}`).toContain(first)
    expect(this.log, `${first} before ${second}`).toContain(second)
    expect(this.log.indexOf(first), `${first} before ${second}`).toBeLessThan(this.log.indexOf(second))
  }

  /** The bodies that ran at some moment while `id`'s body ran. */
  overlapsOf(id: string): string[] {
    return [...(this.#overlaps.get(id) ?? [])].sort()
  }

  /** A body: logs its start and end, notes whoever runs alongside, waits `ms` unless aborted. */
  async body(id: string, ms: number, signal: AbortSignal): Promise<void> {
    this.begin(id)
    try {
      await abortableSleep(ms, signal)
    } finally {
      this.finish(id)
    }
  }

  begin(id: string): void {
    for (const other of this.#running) {
      this.#pair(id, other)
      this.#pair(other, id)
    }
    this.#running.add(id)
    this.maxRunning = Math.max(this.maxRunning, this.#running.size)
    this.spans.set(id, { start: performance.now(), end: Number.NaN })
    this.mark(`start:${id}`)
  }

  finish(id: string): void {
    this.#running.delete(id)
    this.spans.get(id)!.end = performance.now()
    this.mark(`end:${id}`)
  }

  /** Logs pre-execute, post-execute and live results from the plugin's hooks. */
  observe(ctx: PluginContext): void {
    ctx.hooks.preExecute((exec, next) => {
      this.mark(`pre:${exec.callId}`)
      return next()
    })
    ctx.hooks.postExecute((exec, _result, next) => {
      this.mark(`post:${exec.callId}`)
      return next()
    })
    ctx.hooks.result((exec) => this.mark(`result:${exec.callId}`))
  }

  /** A memory journal that logs each append as it is made (durable order). */
  journal() {
    return memoryJournal({
      failWith: (event) => {
        this.mark('callId' in event ? `${event.kind}:${event.callId}` : event.kind)
        return undefined
      },
    })
  }

  #pair(a: string, b: string): void {
    const set = this.#overlaps.get(a) ?? new Set<string>()
    this.#overlaps.set(a, set.add(b))
  }
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

export const workInput = z.object({ ms: z.number().int().min(0).default(0) })

/** A tool whose body works `ms` on the timeline; parallel only as `safe` says. */
export function work(t: Timeline, spec: Partial<ToolSpec<typeof workInput>> = {}) {
  return defineTool({
    description: 'Works for a while.',
    input: workInput,
    approval: 'never',
    ...spec,
    execute: async ({ ms }, { callId, signal }) => {
      await t.body(callId, ms, signal)
      return { done: callId }
    },
  })
}

export const safe = () => true

export function call(callId: string, name: string, args: Record<string, unknown> = {}): ToolCall {
  return { callId, name, arguments: JSON.stringify(args) }
}

export const summary = (outcomes: readonly { callId: string; status: string; code?: string }[]) =>
  outcomes.map((o) => (o.code ? `${o.callId} ${o.status} ${o.code}` : `${o.callId} ${o.status}`))
