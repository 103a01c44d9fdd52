/**
 * Reading a streamed Chat Completions answer (`stream: true`): server-sent events of
 * `chat.completion.chunk`s, each with a `delta` of text or of tool calls (a call's id and name come
 * in its first chunk, its arguments in pieces after), until `data: [DONE]`.
 */

/** A piece of an answer as it arrives. */
export type ModelDelta =
  | { readonly type: 'text'; readonly text: string }
  /** A piece of the `index`th tool call: its id and name once, its arguments in pieces. */
  | { readonly type: 'tool-call'; readonly index: number; readonly callId?: string; readonly name?: string; readonly arguments: string }

/** The assistant message the chunks add up to, in the shape of a non-streamed one. */
export interface StreamedMessage {
  content: string
  tool_calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[]
}

interface ChunkDelta {
  content?: unknown
  tool_calls?: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } }[]
}

/** Thrown for an event the server sent that is not a chunk (its `error`, or broken JSON). */
export class StreamProblem extends Error {}

/**
 * Reads the events of `body` to the end, telling `onDelta` each piece as it is decoded, and
 * returns the whole message. The signal's abort ends the read (the fetch's body errors with it).
 */
export async function readChatStream(body: ReadableStream<Uint8Array>, onDelta: ((delta: ModelDelta) => void) | undefined): Promise<StreamedMessage> {
  const message: StreamedMessage = { content: '', tool_calls: [] }
  const decoder = new TextDecoder()
  let buffer = ''
  let data: string[] = []
  let done = false
  const dispatch = () => {
    if (data.length === 0) return
    const payload = data.join('\n')
    data = []
    if (payload.trim() === '[DONE]') {
      done = true
      return
    }
    let chunk: { choices?: { delta?: ChunkDelta }[]; error?: { message?: unknown } | string }
    try {
      chunk = JSON.parse(payload)
    } catch {
      throw new StreamProblem(`an event that is not JSON: ${payload.slice(0, 200)}`)
    }
    if (chunk.error !== undefined) {
      const why = typeof chunk.error === 'string' ? chunk.error : String(chunk.error?.message ?? JSON.stringify(chunk.error))
      throw new StreamProblem(why)
    }
    const delta = chunk.choices?.[0]?.delta
    if (delta) apply(message, delta, onDelta)
  }
  const reader = body.getReader()
  try {
    while (!done) {
      const { value, done: ended } = await reader.read()
      buffer += ended ? decoder.decode() : decoder.decode(value, { stream: true })
      // Events end with a blank line; a line may end in \n, \r\n or \r (the SSE rules).
      let newline = buffer.search(/\r\n|\r|\n/)
      while (newline !== -1 && !done) {
        // A lone \r at the very end may be the first half of \r\n: wait for more.
        if (buffer[newline] === '\r' && newline === buffer.length - 1 && !ended) break
        const lineText = buffer.slice(0, newline)
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1))
        if (lineText === '') dispatch()
        else if (lineText.startsWith('data:')) data.push(lineText.slice(lineText[5] === ' ' ? 6 : 5))
        // `event:`, `id:`, `retry:` and `:` comments (keep-alives) carry nothing for a chat answer.
        newline = buffer.search(/\r\n|\r|\n/)
      }
      if (ended) {
        if (buffer.startsWith('data:')) data.push(buffer.slice(buffer[5] === ' ' ? 6 : 5))
        dispatch()
        break
      }
    }
  } finally {
    // The rest (after [DONE]) is not read: release the connection.
    await reader.cancel().catch(() => {})
  }
  return message
}

function apply(message: StreamedMessage, delta: ChunkDelta, onDelta: ((delta: ModelDelta) => void) | undefined): void {
  if (typeof delta.content === 'string' && delta.content !== '') {
    message.content += delta.content
    onDelta?.({ type: 'text', text: delta.content })
  }
  for (const piece of delta.tool_calls ?? []) {
    const index = typeof piece.index === 'number' ? piece.index : message.tool_calls.length
    let call = message.tool_calls[index]
    if (call === undefined) {
      call = { id: '', type: 'function', function: { name: '', arguments: '' } }
      message.tool_calls[index] = call
    }
    const id = typeof piece.id === 'string' && piece.id !== '' ? piece.id : undefined
    const name = typeof piece.function?.name === 'string' && piece.function.name !== '' ? piece.function.name : undefined
    const args = typeof piece.function?.arguments === 'string' ? piece.function.arguments : ''
    if (id !== undefined) call.id = id
    if (name !== undefined) call.function.name += name
    call.function.arguments += args
    onDelta?.({ type: 'tool-call', index, ...(id === undefined ? {} : { callId: id }), ...(name === undefined ? {} : { name }), arguments: args })
  }
}
