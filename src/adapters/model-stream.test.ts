import { describe, expect, it, onTestFinished } from 'vitest'
import { beginTurn, rootWith } from '../../test/kit.js'
import { type AgentEvent, runAgent } from './agent.js'
import { callPiece, chunk, type StreamedReply, sseServer } from './fixtures/sse-server.js'
import { adapterTools } from './fixtures/tools.js'
import { openAiChatModel } from './model-client.js'

async function serve(replies: StreamedReply[]) {
  const server = await sseServer(replies)
  onTestFinished(() => server.close())
  return server
}

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

describe('openAiChatModel streams', () => {
  it('reports text and tool-call argument pieces as runAgent events as they arrive, and runs the assembled calls', async () => {
    const { root } = await rootWith(adapterTools())
    // The first piece of text is on the client before the server sends the rest.
    const firstSeen = gate()
    const server = await serve([
      async (send) => {
        send(chunk({ role: 'assistant', content: '' }))
        send(chunk({ content: 'Looking ' }))
        await firstSeen.opened
        // One event cut mid-line across two writes, and two calls whose arguments come in pieces, interleaved.
        const cut = chunk({ content: 'it up.' })
        send(cut.slice(0, 20))
        send(cut.slice(20))
        send(chunk(callPiece(0, '', { id: 'call_a', name: 'lookup' })))
        send(chunk(callPiece(0, '{"id":')))
        send(chunk(callPiece(1, '{"id"', { id: 'call_b', name: 'lookup' })))
        send(chunk(callPiece(0, '"A"}')))
        send(`${chunk(callPiece(1, ':"B"}')).replaceAll('\n', '\r\n')}: keep-alive\n\n`)
        send(chunk({}, 'tool_calls'))
      },
      (send) => {
        send(chunk({ content: 'A and B ' }))
        send(chunk({ content: 'are open.' }, 'stop'))
      },
    ])
    const turn = await beginTurn(root)
    const model = openAiChatModel({ baseUrl: server.baseUrl, apiKey: 'k', model: 'scripted' })
    const run = runAgent({ turn, model, messages: [{ role: 'user', content: 'A and B?' }] })
    const seen: string[] = []
    for await (const event of run as AsyncIterable<AgentEvent>) {
      if (event.type === 'text-delta') {
        seen.push(`text ${event.step} ${JSON.stringify(event.text)}`)
        if (event.text === 'Looking ') firstSeen.open()
      } else if (event.type === 'tool-call-delta') {
        seen.push(`call ${event.index}${event.callId ? ` ${event.callId} ${event.name}` : ''} ${JSON.stringify(event.arguments)}`)
      } else if (event.type === 'assistant') seen.push(`assistant ${event.step}: ${event.text} [${event.toolCalls.map((c) => `${c.callId} ${String(c.arguments)}`).join(', ')}]`)
      else if (event.type === 'tool-settled') seen.push(`settled ${event.outcome.callId} ${event.outcome.status}`)
    }
    await turn.end()
    expect(seen).toEqual([
      'text 1 "Looking "',
      'text 1 "it up."',
      'call 0 call_a lookup ""',
      'call 0 "{\\"id\\":"',
      'call 1 call_b lookup "{\\"id\\""',
      'call 0 "\\"A\\"}"',
      'call 1 ":\\"B\\"}"',
      'assistant 1: Looking it up. [call_a {"id":"A"}, call_b {"id":"B"}]',
      'settled call_a completed',
      'settled call_b completed',
      'text 2 "A and B "',
      'text 2 "are open."',
      'assistant 2: A and B are open. []',
    ])
    expect(await run.result).toMatchObject({ reason: 'final', text: 'A and B are open.' })
    expect(server.requests[0]).toMatchObject({ stream: true, model: 'scripted' })
    // The second request carries the assembled calls and their results.
    expect(server.requests[1]!.messages).toContainEqual({
      role: 'assistant',
      content: 'Looking it up.',
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"id":"A"}' } },
        { id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '{"id":"B"}' } },
      ],
    })
  })

  it('reports an error event in the stream as PROVIDER_UNAVAILABLE', async () => {
    const server = await serve([(send) => send(`${chunk({ content: 'Hel' })}data: {"error":{"message":"the model crashed"}}\n\n`)])
    const model = openAiChatModel({ baseUrl: server.baseUrl, model: 'scripted' })
    const deltas: string[] = []
    await expect(model.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: new AbortController().signal, onDelta: (d) => deltas.push(d.type) })).rejects.toMatchObject({
      code: 'PROVIDER_UNAVAILABLE',
      message: expect.stringContaining('the model crashed'),
    })
    expect(deltas).toEqual(['text'])
  })

  it('stops reading when the signal aborts mid-stream', async () => {
    const never = gate()
    onTestFinished(() => never.open())
    const server = await serve([
      async (send) => {
        send(chunk({ content: 'Thinking' }))
        await never.opened
      },
    ])
    const model = openAiChatModel({ baseUrl: server.baseUrl, model: 'scripted' })
    const controller = new AbortController()
    const reply = model.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: controller.signal, onDelta: () => controller.abort() })
    await expect(reply).rejects.toThrow(/abort/i)
  })

  it('asks for no stream with stream: false', async () => {
    const server = await serve([(send) => send(chunk({ content: 'ok' }))])
    const model = openAiChatModel({ baseUrl: server.baseUrl, model: 'scripted', stream: false })
    // The server streams regardless: the client still reads it.
    expect(await model.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: new AbortController().signal })).toEqual({ text: 'ok', toolCalls: [] })
    expect(server.requests[0]).not.toHaveProperty('stream')
  })
})
