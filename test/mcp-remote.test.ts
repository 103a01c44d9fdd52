import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  capabilitySeamToken,
  createRoot,
  definePlugin,
  defineTool,
  McpToolService,
  memoryJournal,
  type PluginContext,
  type Root,
  SeamIntegration,
  type ToolService,
} from 'seam-runtime'
import type { ChangeNotifyingService } from '../src/seams/types.js'
import { everythingTransport, filesystemTransport, fixtureTransport, waitFor } from '../src/mcp/fixtures/test-helpers.js'
import { beginTurn, expectPaired } from './kit.js'

/** Only some of a service's tools: both test servers have an `echo`, which the seam rejects as a clash. */
function only(service: McpToolService, names: string[]): ToolService & ChangeNotifyingService {
  return {
    id: service.id,
    description: service.description,
    schema: async (scope) => (await service.schema(scope)).filter((s) => names.includes(s.function.name)),
    execute: (scope, name, input, context) => service.execute(scope, name, input, context),
    onDidChange: (listener) => service.onDidChange(listener),
  }
}

/** Mounts remote MCP servers at the root through the Capability Seam, owned by the plugin scope. */
function mount(services: () => McpToolService[], extra?: (ctx: PluginContext) => void, filter?: Record<string, string[]>) {
  return definePlugin({
    name: 'host',
    async setup(ctx) {
      const seams = new SeamIntegration()
      for (const service of services()) {
        await service.connect()
        ctx.effect(() => service.dispose(), `mcp ${service.id}`)
        const names = filter?.[service.id]
        seams.registerToolService('global', names ? only(service, names) : service)
      }
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
      extra?.(ctx)
    },
  })
}

describe('remote MCP servers mounted at the root', () => {
  let root: Root
  let everything: McpToolService
  let files: string
  /** The everything server as a plain SDK client sees it: what "as sent" means. */
  let direct: Client
  const journal = memoryJournal()

  beforeAll(async () => {
    const transport = everythingTransport()
    direct = new Client({ name: 'direct', version: '1' })
    await direct.connect(new StdioClientTransport({ command: transport.command, args: [...(transport.args ?? [])], stderr: 'pipe' }))
    files = await realpath(await mkdtemp(path.join(tmpdir(), 'seam-mcp-files-')))
    await writeFile(path.join(files, 'notes.md'), '# Notes\nthe printer is on fire\n')
    root = await createRoot({
      plugin: mount(
        () => {
          everything = new McpToolService({ id: 'everything', transport: everythingTransport(), reconnect: { initialDelayMs: 50, maxDelayMs: 400 } })
          return [
            everything,
            new McpToolService({ id: 'fixture', transport: fixtureTransport() }),
            new McpToolService({ id: 'filesystem', transport: filesystemTransport(files) }),
          ]
        },
        (ctx) => ctx.addTool('local_note', defineTool({ description: 'A local feature tool.', input: z.object({}), approval: 'never', execute: () => 'local' })),
        { fixture: ['fail'], filesystem: ['read_text_file', 'list_directory'] },
      ),
      journal,
      approval: { request: async () => 'allowed-once' },
    })
  })
  afterAll(async () => {
    await direct?.close()
    await root?.close()
    await rm(files, { recursive: true, force: true })
  })

  it('projects remote tools next to Feature tools, with their source', async () => {
    const caps = await root.capabilities()
    const byName = new Map(caps.tools.map((t) => [t.name, t]))
    expect(byName.get('local_note')?.kind).toBe('feature')
    expect(byName.get('echo')).toMatchObject({ kind: 'seam', source: 'mcp:everything', annotations: { readOnlyHint: true } })
    expect(byName.get('fail')).toMatchObject({ source: 'mcp:fixture' })
  })

  it('calls a remote tool through the full pipeline and journal, its content arriving as sent', async () => {
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"hi"}' })
    expect(outcome).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'Echo: hi' }] })
    expect(outcome.value).toBeUndefined()
    await turn.end()
    await expectPaired(journal, turn.turnId)
    const result = (await journal.read(turn.turnId)).find((e) => e.kind === 'tool/result')
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'Echo: hi' }] })
  })

  it.each([
    ['get-sum', { a: 2, b: 3 }],
    ['get-tiny-image', {}],
    ['get-structured-content', { location: 'Chicago' }],
  ])('gives the model exactly what %s sent: its content blocks, and its structuredContent as the value', async (name, args) => {
    const sent = await direct.callTool({ name, arguments: args })
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name, arguments: JSON.stringify(args) })
    await turn.end()
    expect(outcome.status).toBe('completed')
    expect(outcome.content).toEqual(sent.content)
    expect(outcome.value).toEqual(sent.structuredContent)
    if (name === 'get-tiny-image') expect(outcome.content.map((block) => block.type)).toEqual(['text', 'image', 'text'])
  })

  it('reads a file through the filesystem server, and fails outside its root with the server message', async () => {
    const turn = await beginTurn(root)
    const read = await turn.tools.execute({ callId: 'c1', name: 'read_text_file', arguments: JSON.stringify({ path: path.join(files, 'notes.md') }) })
    expect(read.status).toBe('completed')
    expect(read.content).toEqual([{ type: 'text', text: '# Notes\nthe printer is on fire\n' }])
    const outside = await turn.tools.execute({ callId: 'c2', name: 'read_text_file', arguments: JSON.stringify({ path: '/etc/hostname' }) })
    expect(outside).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect((outside.content[0] as { text: string }).text).toMatch(/outside allowed directories|Access denied/i)
    await turn.end()
  })

  it('rejects invalid arguments against the remote schema before the server sees them', async () => {
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":42}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'INVALID_ARGS', details: { fields: ['/message'] } })
    await turn.end()
  })

  it('turns an isError result into TOOL_ERROR with the server message', async () => {
    const turn = await beginTurn(root)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'fail', arguments: '{}' })
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_ERROR' })
    expect((outcome.content[0] as { text: string }).text).toContain('boom: the fixture always fails')
    await turn.end()
  })

  it('cancels a long-running remote call when the turn is aborted', async () => {
    const controller = new AbortController()
    const turn = await beginTurn(root, { signal: controller.signal })
    const started = Date.now()
    setTimeout(() => controller.abort(new Error('stop')), 200)
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'trigger-long-running-operation', arguments: '{"duration":10,"steps":5}' })
    expect(outcome).toMatchObject({ status: 'cancelled', code: 'ABORTED' })
    expect(Date.now() - started).toBeLessThan(2_000)
    await turn.end()
  })

  it('drops a crashed server from new generations with a diagnostic, then brings it back', async () => {
    const before = root.generation
    process.kill(everything.pid!, 'SIGKILL')
    await waitFor('a generation without the crashed server', () => root.generation > before && root.activeGeneration.diagnostics.some((d) => d.source === 'seam:everything'))
    const down = await root.capabilities()
    expect(down.tools.some((t) => t.source === 'mcp:everything')).toBe(false)
    expect(down.tools.some((t) => t.name === 'fail')).toBe(true)
    await waitFor('reconnect', () => everything.status === 'connected', 5_000)
    await waitFor('a generation with echo again', () => root.activeGeneration.diagnostics.length === 0 && root.generation > before + 1, 5_000)
    const back = await root.capabilities()
    expect(back.tools.some((t) => t.name === 'echo')).toBe(true)
  })
})

describe('mounted-server options', () => {
  it('lets a prefixed filesystem server, a filtered one and local tools of the same names share one generation', async () => {
    const files = await realpath(await mkdtemp(path.join(tmpdir(), 'seam-mcp-prefix-')))
    await writeFile(path.join(files, 'a.txt'), 'alpha\n')
    const root = await createRoot({
      plugin: mount(
        () => [
          new McpToolService({ id: 'filesystem', transport: filesystemTransport(files), prefix: 'fs', exclude: ['write_*', 'edit_*', 'move_*', 'create_*'] }),
          new McpToolService({ id: 'everything', transport: everythingTransport(), include: ['echo', 'get-*'], exclude: ['get-env'] }),
        ],
        (ctx) => {
          ctx.addTool('read_text_file', defineTool({ description: 'A local tool with a server tool name.', input: z.object({}), approval: 'never', execute: () => 'local' }))
          ctx.addTool('write_file', defineTool({ description: 'Another.', input: z.object({}), approval: 'never', execute: () => 'local' }))
        },
      ),
      journal: memoryJournal(),
      approval: { request: async () => 'allowed-once' },
    })
    try {
      const names = (await root.capabilities()).tools.map((t) => t.name)
      expect(names).toEqual(expect.arrayContaining(['read_text_file', 'write_file', 'fs__read_text_file', 'fs__list_directory', 'echo', 'get-sum']))
      expect(names.some((n) => n.startsWith('fs__write') || n === 'get-env' || n === 'trigger-long-running-operation')).toBe(false)
      const turn = await beginTurn(root)
      const read = await turn.tools.execute({ callId: 'c1', name: 'fs__read_text_file', arguments: JSON.stringify({ path: path.join(files, 'a.txt') }) })
      expect(read).toMatchObject({ status: 'completed', content: [{ type: 'text', text: 'alpha\n' }] })
      expect(await turn.tools.execute({ callId: 'c2', name: 'read_text_file', arguments: '{}' })).toMatchObject({ value: 'local' })
      await turn.end()
    } finally {
      await root.close()
      await rm(files, { recursive: true, force: true })
    }
  })

  it('asks before a tool whose server claims it is read-only, unless the host trusts that server', async () => {
    const asked: string[] = []
    const root = await createRoot({
      plugin: mount(() => [
        new McpToolService({ id: 'untrusted', transport: everythingTransport(), include: ['echo'] }),
        new McpToolService({ id: 'trusted', transport: everythingTransport(), include: ['get-sum'], trustAnnotations: true }),
      ]),
      journal: memoryJournal(),
      approval: {
        request: async (request) => {
          asked.push(request.name)
          return 'allowed-once'
        },
      },
    })
    try {
      const turn = await beginTurn(root)
      await turn.tools.execute({ callId: 'c1', name: 'echo', arguments: '{"message":"x"}' })
      await turn.tools.execute({ callId: 'c2', name: 'get-sum', arguments: '{"a":1,"b":2}' })
      await turn.end()
      expect(asked).toEqual(['echo'])
    } finally {
      await root.close()
    }
  })
})

describe('remote MCP tool names', () => {
  it('reject a projection where a Feature tool has the same name as a remote tool', async () => {
    const plugin = mount(
      () => [new McpToolService({ id: 'everything', transport: everythingTransport() })],
      (ctx) => ctx.addTool('echo', defineTool({ description: 'Local echo.', input: z.object({}), approval: 'never', execute: () => 'x' })),
    )
    const error = await createRoot({ plugin }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'RELOAD_FAILED' })
    expect((error as Error).message).toMatch(/duplicate tool name "echo": provided by addTool\(root\) and by mcp:everything/)
  })
})
