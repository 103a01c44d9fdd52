import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/client'

/** One `tools/call` that declared the tasks extension: the task handle its answer was, if it was one. */
export interface TaskSlot {
  /** What the call sends as its `_meta` client capabilities (the extension declared); its identity marks the call. */
  readonly capabilities: Readonly<Record<string, unknown>>
  /** The server's `CreateTaskResult`, once the answer was one. */
  readonly created: Record<string, unknown> | undefined
}

interface Slot extends TaskSlot {
  created: Record<string, unknown> | undefined
  readonly ids: (string | number)[]
}

interface Watched {
  send(message: unknown, ...rest: unknown[]): Promise<void>
  onmessage?: (message: unknown, ...rest: unknown[]) => void
}

type Message = { id?: string | number; method?: unknown; params?: { _meta?: Record<string, unknown> }; result?: Record<string, unknown> }

/**
 * Catches the task handles a 2026-07-28 server answers `tools/call` with. The SDK's client refuses a
 * `resultType: 'task'` answer (`UnsupportedResultType`, the task id dropped), so the transport is
 * watched: an outgoing `tools/call` whose `_meta` capabilities are a slot's own object is that
 * slot's (a retry of its `input_required` rounds too), and an answer to it that is a task handle is
 * kept there for the caller to follow. Every other call keeps the SDK's path untouched.
 */
export class TaskHandles {
  readonly #slots = new WeakMap<object, Slot>()
  readonly #byId = new Map<string | number, Slot>()
  readonly #capabilities: Readonly<Record<string, unknown>>

  /** `capabilities`: what the client declares at connect, to which each call adds the extension. */
  constructor(capabilities: Readonly<Record<string, unknown>>, extension: string) {
    const extensions = (capabilities.extensions ?? {}) as Record<string, unknown>
    this.#capabilities = { ...capabilities, extensions: { ...extensions, [extension]: {} } }
  }

  /** A slot for one call: send `slot.capabilities` as the call's `_meta` client capabilities, `release` it when settled. */
  declare(): TaskSlot {
    const slot: Slot = { capabilities: { ...this.#capabilities }, created: undefined, ids: [] }
    this.#slots.set(slot.capabilities, slot)
    return slot
  }

  release(slot: TaskSlot): void {
    for (const id of (slot as Slot).ids) this.#byId.delete(id)
  }

  /** Call after `client.connect()`, which sets the transport's `onmessage`. */
  watch(transport: object): void {
    const watched = transport as Watched
    const send = watched.send
    watched.send = (message, ...rest) => {
      const { id, method, params } = message as Message
      const slot = method === 'tools/call' && id !== undefined ? this.#slots.get(params?._meta?.[CLIENT_CAPABILITIES_META_KEY] as object) : undefined
      if (slot !== undefined && id !== undefined) {
        slot.ids.push(id)
        this.#byId.set(id, slot)
      }
      return send.call(transport, message, ...rest)
    }
    const deliver = watched.onmessage
    if (deliver === undefined) return
    watched.onmessage = (message, ...rest) => {
      const { id, method, result } = message as Message
      const slot = method === undefined && id !== undefined ? this.#byId.get(id) : undefined
      if (slot !== undefined && result?.resultType === 'task' && typeof result.taskId === 'string' && result.taskId !== '') slot.created = result
      deliver.call(transport, message, ...rest)
    }
  }
}

/** How long a cancelled call that declared the tasks extension still waits for its answer. */
export const TASK_HANDLE_GRACE_MS = 500

/**
 * The signal a task-declaring `tools/call` is sent under: `signal`'s abort, held back up to
 * `TASK_HANDLE_GRACE_MS` unless `handled()` already holds. A server answers a task-capable call at
 * once with its task handle; a request aborted before that answer arrives would leave the task
 * running with no one holding its id to cancel it. Held back, the handle still arrives and the
 * task is cancelled with `tasks/cancel`; a plain call is cancelled that much later.
 */
export function heldAbort(signal: AbortSignal | undefined, handled: () => boolean): { signal: AbortSignal | undefined; dispose(): void } {
  if (signal === undefined || signal.aborted) return { signal, dispose: () => {} }
  const held = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const abort = () => {
    if (handled()) return held.abort(signal.reason)
    timer = setTimeout(() => held.abort(signal.reason), TASK_HANDLE_GRACE_MS)
  }
  signal.addEventListener('abort', abort, { once: true })
  return {
    signal: held.signal,
    dispose: () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', abort)
    },
  }
}
