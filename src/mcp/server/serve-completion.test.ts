import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, type Root } from '../../index.js'
import { type ServePlugin, servePlugin } from '../fixtures/serve-plugin.js'
import { serveHttp } from './serve.js'

/** A prompt whose `tone` declares values and whose `topic` declares none. */
const SKILL = `---
description: Write in a tone.
arguments:
  - name: tone
    values: [Dry, dramatic, warm, formal]
  - name: topic
---
Write about {{topic}} in a {{tone}} tone.
`

/** Templates whose completers answer 150 values, throw quoting what was typed, or never answer; and one without a completer. */
const PLUGIN = `
import { definePlugin } from 'seam-runtime'
const COLORS = Array.from({ length: 150 }, (_, i) => 'c' + String(i).padStart(3, '0'))
export default definePlugin({
  name: 'paint',
  setup(ctx) {
    ctx.addResource('paint://{color}/{shade}', {
      read: ({ color, shade }) => color + '/' + shade,
      complete: {
        color: (value) => COLORS.filter((c) => c.startsWith(value)),
        shade: async (value) => { throw new Error('the shade index is down for ' + value) },
      },
    })
    ctx.addResource('slow://{id}', { read: ({ id }) => id, complete: { id: () => new Promise(() => {}) } })
    ctx.addResource('plain://{id}', { read: ({ id }) => id })
  },
})
`

async function connect(url: string, modern = false) {
  const client = new Client({ name: 'completion', version: '1.0.0' }, modern ? { versionNegotiation: { mode: { pin: '2026-07-28' as const } } } : {})
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  onTestFinished(() => client.close())
  return client
}

describe('completion/complete for served prompts and resource templates', () => {
  let plugin: ServePlugin
  let root: Root
  let server: { url: string; close(): Promise<void> }
  const logged: string[] = []

  beforeAll(async () => {
    plugin = await servePlugin()
    await plugin.put('agent/skills/write.md', SKILL)
    await plugin.put('plugin.ts', PLUGIN)
    root = await createRoot({ dir: plugin.dir })
    server = await serveHttp(root, { port: 0, log: (line) => logged.push(line) })
  })
  afterAll(async () => {
    await server.close()
    await root.close()
    await plugin.remove()
  })

  const prompt = (client: Client, name: string, value: string) => client.complete({ ref: { type: 'ref/prompt', name: 'write' }, argument: { name, value } })
  const template = (client: Client, uri: string, name: string, value: string) => client.complete({ ref: { type: 'ref/resource', uri }, argument: { name, value } })

  it('offers the declared values of a prompt argument that start with what was typed, ignoring case', async () => {
    const client = await connect(server.url)
    expect((await prompt(client, 'tone', 'd')).completion).toEqual({ values: ['Dry', 'dramatic'], total: 2, hasMore: false })
    expect((await prompt(client, 'tone', 'DR')).completion).toEqual({ values: ['Dry', 'dramatic'], total: 2, hasMore: false })
    expect((await prompt(client, 'tone', '')).completion).toEqual({ values: ['Dry', 'dramatic', 'warm', 'formal'], total: 4, hasMore: false })
    expect((await prompt(client, 'tone', 'x')).completion).toEqual({ values: [], hasMore: false })
  })

  it('answers a 2026-07-28 client the same way, prompt and template', async () => {
    const client = await connect(server.url, true)
    expect((await prompt(client, 'tone', 'w')).completion).toEqual({ values: ['warm'], total: 1, hasMore: false })
    expect((await template(client, 'paint://{color}/{shade}', 'color', 'c149')).completion).toEqual({ values: ['c149'], total: 1, hasMore: false })
  })

  it('offers nothing for an argument without values or an unknown argument, and refuses an unknown prompt', async () => {
    const client = await connect(server.url)
    expect((await prompt(client, 'topic', '')).completion).toEqual({ values: [], hasMore: false })
    expect((await prompt(client, 'nope', 'd')).completion).toEqual({ values: [], hasMore: false })
    await expect(client.complete({ ref: { type: 'ref/prompt', name: 'missing' }, argument: { name: 'tone', value: '' } })).rejects.toMatchObject({ code: -32602 })
  })

  it('never lists the declared values with the prompt', async () => {
    const client = await connect(server.url)
    const { prompts } = await client.listPrompts()
    expect(prompts.find((p) => p.name === 'write')?.arguments).toEqual([{ name: 'tone' }, { name: 'topic' }])
  })

  it('offers what a template\'s completer returns, at most 100, with the total and hasMore', async () => {
    const client = await connect(server.url)
    const all = (await template(client, 'paint://{color}/{shade}', 'color', 'c')).completion
    expect(all.values).toHaveLength(100)
    expect(all.values.slice(0, 2)).toEqual(['c000', 'c001'])
    expect(all).toMatchObject({ total: 150, hasMore: true })
    expect((await template(client, 'paint://{color}/{shade}', 'color', 'c14')).completion).toEqual({ values: Array.from({ length: 10 }, (_, i) => `c14${i}`), total: 10, hasMore: false })
  })

  it('offers nothing for a parameter or template without a completer, and refuses a URI that is no served template', async () => {
    const client = await connect(server.url)
    expect((await template(client, 'plain://{id}', 'id', 'a')).completion).toEqual({ values: [], hasMore: false })
    expect((await template(client, 'paint://{color}/{shade}', 'nope', 'a')).completion).toEqual({ values: [], hasMore: false })
    await expect(template(client, 'other://{id}', 'id', 'a')).rejects.toMatchObject({ code: -32602 })
  })

  it('offers nothing when the completer throws, and logs the failure without what was typed', async () => {
    const client = await connect(server.url)
    expect((await template(client, 'paint://{color}/{shade}', 'shade', 'typed-by-the-person')).completion).toEqual({ values: [], hasMore: false })
    const line = logged.find((l) => l.includes('{shade}'))
    expect(line).toContain('completion of {shade} on paint://{color}/{shade} failed: the shade index is down for')
    expect(logged.join('\n')).not.toContain('typed-by-the-person')
  })

  it('offers nothing once a completer has not answered in 2 s, and says so in the log', async () => {
    const client = await connect(server.url)
    const started = performance.now()
    expect((await template(client, 'slow://{id}', 'id', 'a')).completion).toEqual({ values: [], hasMore: false })
    const took = performance.now() - started
    expect(took).toBeGreaterThanOrEqual(1900)
    expect(took).toBeLessThan(4000)
    expect(logged).toContain('completion of {id} on slow://{id} took longer than 2000 ms: answered with no values')
  })
})
