import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  capabilitySeamToken,
  createRoot,
  definePlugin,
  defineTool,
  McpToolService,
  memoryJournal,
  type Root,
  SeamIntegration,
  type ToolCallOutcome,
} from 'seam-runtime'
import { serveHttp } from '../src/mcp/server/serve.js'
import { beginTurn } from './kit.js'

/** A 1×1 PNG. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

/** Tools whose outcomes use every kind of content, and one with an output schema. */
const served = definePlugin({
  name: 'served',
  setup(ctx) {
    ctx.addTool('lookup', defineTool({
      description: 'Look a ticket up.',
      input: z.object({ id: z.number() }),
      output: z.object({ id: z.number(), title: z.string() }),
      approval: 'never',
      execute: ({ id }) => ({ id, title: 'Printer on fire' }),
    }))
    ctx.addTool('snapshot', defineTool({
      description: 'A picture and a note.',
      input: z.object({}),
      approval: 'never',
      execute: () => 'ok',
      render: () => [
        { type: 'text', text: 'Here is the printer:' },
        { type: 'image', data: PIXEL, mimeType: 'image/png', annotations: { audience: ['user'], priority: 0.5 } },
      ],
    }))
    ctx.addTool('attachments', defineTool({
      description: 'Audio, a link and an embedded file.',
      input: z.object({}),
      approval: 'never',
      execute: () => null,
      render: () => [
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'file:///tickets/7.md', name: '7.md', mimeType: 'text/markdown', size: 12 },
        { type: 'resource', resource: { uri: 'file:///tickets/8.md', mimeType: 'text/markdown', text: '# Ticket 8\n' } },
        { type: 'resource', resource: { uri: 'file:///tickets/8.bin', blob: 'AAE=' } },
      ],
    }))
  },
})

async function callOn(root: Root, name: string, args: object): Promise<ToolCallOutcome> {
  const turn = await beginTurn(root)
  try {
    return await turn.tools.execute({ callId: 'c1', name, arguments: JSON.stringify(args) })
  } finally {
    await turn.end()
  }
}

describe('a seam-runtime server mounted by another seam-runtime root', () => {
  let origin: Root
  let server: Awaited<ReturnType<typeof serveHttp>>
  let mounted: McpToolService
  let host: Root

  beforeAll(async () => {
    origin = await createRoot({ plugin: served, journal: memoryJournal() })
    server = await serveHttp(origin, { port: 0 })
    host = await createRoot({
      journal: memoryJournal(),
      plugin: definePlugin({
        name: 'host',
        async setup(ctx) {
          mounted = new McpToolService({ id: 'origin', transport: { url: server.url } })
          ctx.effect(() => mounted.dispose(), 'mcp origin')
          const seams = new SeamIntegration()
          seams.registerToolService('global', mounted)
          ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
          await mounted.connect()
        },
      }),
      approval: { request: async () => 'allowed-once' },
    })
  })
  afterAll(async () => {
    await host?.close()
    await server?.close()
    await origin?.close()
  })

  it.each([
    ['lookup', { id: 7 }],
    ['snapshot', {}],
    ['attachments', {}],
  ])('gives the model byte-identical content for %s', async (name, args) => {
    const local = await callOn(origin, name, args)
    const remote = await callOn(host, name, args)
    expect(local.status).toBe('completed')
    expect(remote.status).toBe('completed')
    expect(JSON.stringify(remote.content)).toBe(JSON.stringify(local.content))
  })

  it('advertises the output schema of a tool with `output` and carries its value as structuredContent', async () => {
    const lookup = (await mounted.schema('global')).find((schema) => schema.function.name === 'lookup')!
    expect(lookup.outputSchema).toMatchObject({ type: 'object', properties: { id: { type: 'number' }, title: { type: 'string' } } })
    const snapshot = (await mounted.schema('global')).find((schema) => schema.function.name === 'snapshot')!
    expect(snapshot.outputSchema).toBeUndefined()
    const remote = await callOn(host, 'lookup', { id: 7 })
    expect(remote.value).toEqual({ id: 7, title: 'Printer on fire' })
  })
})
