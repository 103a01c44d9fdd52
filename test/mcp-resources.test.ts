import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, type ClientOptions, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRoot, type Root } from '../src/index.js'
import { until } from '../src/mcp/fixtures/serve-plugin.js'
import { serveHttp } from '../src/mcp/server/serve.js'

const BIN = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))

const ERAS = {
  '2025-11-25': { era: 'legacy', options: {} },
  '2026-07-28': { era: 'modern', options: { versionNegotiation: { mode: { pin: '2026-07-28' } } } },
} as const satisfies Record<string, { era: string; options: ClientOptions }>

/** The first eight bytes of a PNG, then bytes that are not UTF-8. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00, 0x01])

const GUIDE = (version: string) => `---
uri: docs://guide
title: The guide
description: How we work.
---
# Guide

Version ${version}.
`

const PLUGIN = `
import { definePlugin } from 'seam-runtime'
export default definePlugin({
  name: 'notes',
  setup(ctx) {
    ctx.addResource('notes://{id}', { name: 'note', mimeType: 'text/plain', read: ({ id }) => 'note ' + id })
    ctx.addResource('notes://index', { description: 'Every note.', read: () => ({ text: '["a","b"]', mimeType: 'application/json' }) })
  },
})
`

const TRIAGE = `---
description: Triage a ticket.
arguments:
  - name: ticket
    description: The ticket id
    required: true
  - name: doc
resources:
  - ../resources/img/logo.png
  - '{{doc}}'
---
Triage ticket {{ticket}} by the guide.
`

/** A plugin folder with resource files, a binary, a template and a link that leaves the folder. */
async function resourcePlugin() {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'seam-resources-')))
  const outside = await realpath(await mkdtemp(path.join(tmpdir(), 'seam-outside-')))
  await writeFile(path.join(outside, 'secret.txt'), 'not yours')
  await mkdir(path.join(dir, 'agent', 'resources', 'img'), { recursive: true })
  await writeFile(path.join(dir, 'agent', 'resources', 'guide.md'), GUIDE('1'))
  await writeFile(path.join(dir, 'agent', 'resources', 'img', 'logo.png'), PNG)
  await symlink(path.join(outside, 'secret.txt'), path.join(dir, 'agent', 'resources', 'escape.txt'))
  await symlink(outside, path.join(dir, 'agent', 'resources', 'elsewhere'))
  await writeFile(path.join(dir, 'plugin.ts'), PLUGIN)
  await mkdir(path.join(dir, 'agent', 'skills'))
  await writeFile(path.join(dir, 'agent', 'skills', 'triage.md'), TRIAGE)
  return {
    dir,
    put: (rel: string, text: string) => writeFile(path.join(dir, rel), text),
    remove: async () => {
      await rm(dir, { recursive: true, force: true })
      await rm(outside, { recursive: true, force: true })
    },
  }
}

describe.each(Object.entries(ERAS))('resources served in the %s era', (revision, { era, options }) => {
  describe.each(['stdio', 'http'] as const)('over %s', (transport) => {
    let plugin: Awaited<ReturnType<typeof resourcePlugin>>
    let root: Root | undefined
    let http: { url: string; close(): Promise<void> } | undefined
    let client: Client

    beforeAll(async () => {
      plugin = await resourcePlugin()
      client = new Client({ name: `resources-${transport}`, version: '1.0.0' }, options)
      if (transport === 'stdio') {
        await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', plugin.dir], stderr: 'ignore' }))
      } else {
        root = await createRoot({ dir: plugin.dir, watch: true })
        http = await serveHttp(root, { port: 0 })
        await client.connect(new StreamableHTTPClientTransport(new URL(http.url)))
      }
    })
    afterAll(async () => {
      await client?.close()
      await http?.close()
      await root?.close()
      await plugin?.remove()
    })

    it(`speaks ${revision} and lists the files and addResource resources, not the link that leaves the folder`, async () => {
      expect(client.getProtocolEra()).toBe(era)
      const { resources } = await client.listResources()
      expect(resources.map((r) => r.uri).sort()).toEqual(['docs://guide', 'notes://index', 'resource://root/img/logo.png'])
      const guide = resources.find((r) => r.uri === 'docs://guide')!
      expect(guide).toMatchObject({ name: 'guide.md', title: 'The guide', description: 'How we work.', mimeType: 'text/markdown' })
      const { resourceTemplates } = await client.listResourceTemplates()
      expect(resourceTemplates).toEqual([{ uriTemplate: 'notes://{id}', name: 'note', mimeType: 'text/plain' }])
    })

    it('reads text without its front matter, a binary as a blob, and a template with its parameter', async () => {
      const guide = await client.readResource({ uri: 'docs://guide' })
      expect(guide.contents).toEqual([{ uri: 'docs://guide', mimeType: 'text/markdown', text: '# Guide\n\nVersion 1.\n' }])
      const logo = await client.readResource({ uri: 'resource://root/img/logo.png' })
      expect(logo.contents).toEqual([{ uri: 'resource://root/img/logo.png', mimeType: 'image/png', blob: PNG.toString('base64') }])
      const note = await client.readResource({ uri: 'notes://42' })
      expect(note.contents).toEqual([{ uri: 'notes://42', mimeType: 'text/plain', text: 'note 42' }])
      const index = await client.readResource({ uri: 'notes://index' })
      expect(index.contents).toEqual([{ uri: 'notes://index', mimeType: 'application/json', text: '["a","b"]' }])
    })

    it('refuses a URI nothing provides, a path outside the folder included, with -32602', async () => {
      for (const uri of ['resource://root/escape.txt', 'resource://root/elsewhere/secret.txt', 'resource://root/../../etc/passwd', 'docs://nothing']) {
        await expect(client.readResource({ uri })).rejects.toMatchObject({ code: -32602 })
      }
    })

    it('serves a skill as a prompt with arguments, substituted, and the image and resource it embeds', async () => {
      const { prompts } = await client.listPrompts()
      expect(prompts.find((p) => p.name === 'triage')?.arguments).toEqual([{ name: 'ticket', description: 'The ticket id', required: true }, { name: 'doc' }])
      const prompt = await client.getPrompt({ name: 'triage', arguments: { ticket: '42', doc: 'docs://guide' } })
      expect(prompt.messages).toEqual([
        { role: 'user', content: { type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' } },
        { role: 'user', content: { type: 'resource', resource: { uri: 'docs://guide', mimeType: 'text/markdown', text: expect.stringContaining('# Guide') } } },
        { role: 'user', content: { type: 'text', text: 'Triage ticket 42 by the guide.' } },
      ])
      await expect(client.getPrompt({ name: 'triage', arguments: { doc: 'docs://guide' } })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('ticket') })
    })

    it('tells a subscriber that a resource changed on reload, and the new content is read', async () => {
      const updated: string[] = []
      client.setNotificationHandler('notifications/resources/updated', (n) => {
        updated.push(n.params.uri)
      })
      const subscription = era === 'modern' ? await client.listen({ resourceSubscriptions: ['docs://guide'] }) : undefined
      if (era === 'legacy') await client.subscribeResource({ uri: 'docs://guide' })
      try {
        await plugin.put('agent/resources/guide.md', GUIDE('2'))
        await until('the resources/updated notification', () => updated.includes('docs://guide'), 15_000)
        const guide = await client.readResource({ uri: 'docs://guide' })
        expect((guide.contents[0] as { text: string }).text).toContain('Version 2.')
        if (era === 'legacy') await client.unsubscribeResource({ uri: 'docs://guide' })
      } finally {
        await subscription?.close()
      }
    })
  })
})
