import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { z } from 'zod'
import { defineTool, type SkillSpec, type ToolContext, type ToolDefinition } from './define-tool.js'
import { definePlugin } from '../runtime/plugins/plugin.js'
import { createRoot } from '../index.js'
import { BuiltinToolService, SkillRegistryAsService, ToolRegistryAsService } from './service-adapters.js'
import { capabilitySeamToken, SeamIntegration } from '../seams/integration.js'
import type { QuestionPort, ToolInvocationContext, ToolService } from '../seams/types.js'

function invocation(overrides: Partial<ToolInvocationContext> = {}): ToolInvocationContext {
  return {
    callId: 'call-1',
    turnId: 'turn-1',
    session: 's',
    principal: { subjectId: 'u', roles: [] },
    generation: 1,
    owner: 'root',
    signal: new AbortController().signal,
    ...overrides,
  }
}

/** A root whose plugin registers `service` globally under `capabilitySeamToken`; closed after the test. */
async function rootServing(register: (seams: SeamIntegration) => void) {
  const plugin = definePlugin({
    name: 'root',
    setup({ resources }) {
      const seams = new SeamIntegration()
      register(seams)
      resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    },
  })
  const root = await createRoot({ plugin })
  onTestFinished(() => root.close())
  return root
}

describe('BuiltinToolService', () => {
  it('declares ask_user as a read-only tool that needs no approval', () => {
    const [schema] = new BuiltinToolService().schema()
    expect(schema).toMatchObject({ function: { name: 'ask_user', parameters: { required: ['question'] } }, approval: 'never' })
    expect(schema?.annotations?.readOnlyHint).toBe(true)
  })

  it('fails ask_user with a clear error when the turn has no question port', async () => {
    const result = await new BuiltinToolService().execute('root', 'ask_user', { question: 'Which branch?' }, invocation())
    expect(result).toEqual({ success: false, error: 'ask_user needs an interactive turn: this turn has no question port' })
  })

  it('fails ask_user without any invocation context instead of throwing', async () => {
    const result = await new BuiltinToolService().execute('root', 'ask_user', { question: 'Which branch?' })
    expect(result.success).toBe(false)
  })

  it('asks through the question port with a request id unique per call that contains the call id', async () => {
    const ask = vi.fn<NonNullable<QuestionPort['ask']>>(async () => 'main')
    const service = new BuiltinToolService()
    const first = await service.execute('root', 'ask_user', { question: 'Which branch?', choices: ['main', 'dev'] }, invocation({ callId: 'c1', question: { ask } }))
    const second = await service.execute('root', 'ask_user', { question: 'Which branch?' }, invocation({ callId: 'c2', question: { ask } }))
    expect(first).toMatchObject({ success: true, output: { answer: 'main' } })
    expect(second).toMatchObject({ success: true, output: { answer: 'main' } })
    expect(ask).toHaveBeenCalledTimes(2)
    const [a, b] = ask.mock.calls.map(([request]) => request)
    expect(a).toMatchObject({ question: 'Which branch?', choices: ['main', 'dev'] })
    expect(a?.signal).toBeInstanceOf(AbortSignal)
    expect(a?.requestId).toContain('c1')
    expect(b?.requestId).toContain('c2')
    expect(a?.requestId).not.toBe(b?.requestId)
    expect(first).toMatchObject({ metadata: { requestId: a?.requestId } })
  })

  it('gives two calls with the same call id two different request ids', async () => {
    const ask = vi.fn<NonNullable<QuestionPort['ask']>>(async () => 'yes')
    const service = new BuiltinToolService()
    await service.execute('root', 'ask_user', { question: 'Sure?' }, invocation({ callId: 'same', question: { ask } }))
    await service.execute('root', 'ask_user', { question: 'Sure?' }, invocation({ callId: 'same', question: { ask } }))
    const ids = ask.mock.calls.map(([request]) => request.requestId)
    expect(ids[0]).not.toBe(ids[1])
    expect(ids.every((id) => id.includes('same'))).toBe(true)
  })

  it('reports a failing question port as a failed result', async () => {
    const question: QuestionPort = { ask: async () => Promise.reject(new Error('chat closed')) }
    const result = await new BuiltinToolService().execute('root', 'ask_user', { question: 'Q?' }, invocation({ question }))
    expect(result).toMatchObject({ success: false, error: 'the question could not be asked: chat closed' })
  })

  it('answers an unknown tool name with a failed result', async () => {
    const result = await new BuiltinToolService().execute('root', 'delete_everything', {}, invocation())
    expect(result).toEqual({ success: false, error: 'Unknown tool: delete_everything' })
  })

  it('runs ask_user through a turn, reaching the turn question port', async () => {
    const root = await rootServing((seams) => seams.registerToolService('global', new BuiltinToolService()))
    const ask = vi.fn<NonNullable<QuestionPort['ask']>>(async () => 'Friday')
    const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u', roles: [] }, ports: { question: { ask } } })
    onTestFinished(() => turn.end())
    const outcome = await turn.tools.execute({ callId: 'q-7', name: 'ask_user', arguments: '{"question":"When?"}' })
    expect(outcome.status).toBe('completed')
    expect(outcome.value).toEqual({ answer: 'Friday' })
    expect(ask.mock.calls[0]?.[0].requestId).toContain('q-7')
  })
})

describe('ToolRegistryAsService', () => {
  const seen: ToolContext[] = []
  const lookup = defineTool({
    description: 'Read one ticket by id.',
    input: z.object({ id: z.string() }),
    approval: 'never',
    permissions: ['tickets:read'],
    annotations: { readOnlyHint: true },
    execute: ({ id }, ctx) => {
      seen.push(ctx)
      return { id, title: `Ticket ${id}` }
    },
  })
  const failing = defineTool({
    description: 'Always fails.',
    input: z.object({}),
    approval: 'never',
    execute: () => {
      throw new Error('backend down')
    },
  })
  const registry = new Map<string, ToolDefinition>([
    ['lookup_ticket', lookup as ToolDefinition],
    ['broken', failing as ToolDefinition],
  ])

  it('describes each definition as a ToolSchema with its JSON Schema parameters and policy', () => {
    const service = new ToolRegistryAsService('tickets', registry)
    const schemas = service.schema()
    expect(schemas.map((s) => s.function.name)).toEqual(['lookup_ticket', 'broken'])
    expect(schemas[0]).toMatchObject({
      type: 'function',
      function: {
        description: 'Read one ticket by id.',
        parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      },
      approval: 'never',
      permissions: ['tickets:read'],
      annotations: { readOnlyHint: true },
    })
    expect(service.id).toBe('tickets')
    expect(service.description).toBe('tool registry tickets')
  })

  it('validates a JSON Schema input itself, patterns included (the runtime drops them from remote schemas)', async () => {
    const readName = defineTool({
      description: 'Read a file by short name.',
      input: { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z]+$' } }, required: ['name'] },
      approval: 'never',
      execute: (args) => `would read ${(args as { name: string }).name}`,
    })
    const service = new ToolRegistryAsService('files', new Map([['read_name', readName as ToolDefinition]]))
    const context = { callId: 'c1', turnId: 't1', session: 's', principal: { subjectId: 'u', roles: [] }, generation: 1, owner: 'root', question: undefined, signal: new AbortController().signal } as never
    expect(await service.execute('root', 'read_name', { name: '../../etc/passwd' }, context)).toMatchObject({ success: false, error: expect.stringContaining('invalid arguments') })
    expect(await service.execute('root', 'read_name', { name: 'notes' }, context)).toMatchObject({ success: true, output: 'would read notes' })
  })

  it('passes the real call id, generation and owner to the tool body', async () => {
    seen.length = 0
    const service = new ToolRegistryAsService('tickets', registry)
    const result = await service.execute('root/maps', 'lookup_ticket', { id: 'T-1' }, invocation({ callId: 'call-99', generation: 4, owner: 'root/maps' }))
    expect(result).toEqual({ success: true, output: { id: 'T-1', title: 'Ticket T-1' } })
    expect(seen[0]).toMatchObject({ callId: 'call-99', generation: 4, owner: 'root/maps' })
  })

  it('validates zod input and reports invalid arguments as a failed result', async () => {
    const service = new ToolRegistryAsService('tickets', registry)
    const result = await service.execute('root', 'lookup_ticket', { id: 7 }, invocation())
    expect(result).toMatchObject({ success: false, error: expect.stringContaining('invalid arguments') })
  })

  it('fails closed on an unknown tool, a missing context and a throwing body', async () => {
    const service = new ToolRegistryAsService('tickets', registry)
    await expect(service.execute('root', 'nope', {}, invocation())).resolves.toEqual({ success: false, error: 'Unknown tool: nope' })
    await expect(service.execute('root', 'lookup_ticket', { id: 'T-1' })).resolves.toEqual({ success: false, error: 'Turn context required' })
    await expect(service.execute('root', 'broken', {}, invocation())).resolves.toEqual({ success: false, error: 'backend down' })
  })

  it('passes the pipeline call id through a turn to the bridged tool', async () => {
    seen.length = 0
    const service: ToolService = new ToolRegistryAsService('tickets', new Map([['lookup_ticket', lookup as ToolDefinition]]))
    const root = await createRoot({
      plugin: definePlugin({
        name: 'root',
        setup({ resources }) {
          const seams = new SeamIntegration()
          seams.registerToolService('global', service)
          resources.provide(capabilitySeamToken, seams, () => seams.dispose())
        },
      }),
      permissions: { check: () => true },
    })
    onTestFinished(() => root.close())
    const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u', roles: [] } })
    onTestFinished(() => turn.end())
    const tool = turn.capabilities.tools.find((t) => t.name === 'lookup_ticket')
    expect(tool).toMatchObject({ kind: 'seam', source: 'seam:tickets', parameters: { required: ['id'] } })
    const outcome = await turn.tools.execute({ callId: 'model-call-5', name: 'lookup_ticket', arguments: '{"id":"T-5"}' })
    expect(outcome.value).toEqual({ id: 'T-5', title: 'Ticket T-5' })
    expect(seen.map((ctx) => ctx.callId)).toEqual(['model-call-5'])
    expect(seen[0]?.turn.turnId).toBe(turn.turnId)
  })
})

describe('SkillRegistryAsService', () => {
  const skills = new Map<string, SkillSpec>([
    ['triage', { description: 'Triage a ticket', instructions: '# Triage\nRead, then label.' }],
    ['release', { description: 'Cut a release', instructions: '# Release' }],
  ])

  it('lists its skills in catalog() and reads instructions in describe()', async () => {
    const service = new SkillRegistryAsService('team', skills)
    await expect(service.catalog()).resolves.toEqual([
      { name: 'triage', description: 'Triage a ticket' },
      { name: 'release', description: 'Cut a release' },
    ])
    await expect(service.describe('root', 'triage')).resolves.toBe('# Triage\nRead, then label.')
    expect(service.description).toBe('skill registry team')
  })

  it('rejects describe() for a skill it does not hold', async () => {
    await expect(new SkillRegistryAsService('team', skills).describe('root', 'nope')).rejects.toThrow('Skill not found: nope')
  })

  it('projects its skills into a turn with their instructions and a seam source', async () => {
    const root = await rootServing((seams) => seams.registerSkillService('global', new SkillRegistryAsService('team', skills)))
    const capabilities = await root.capabilities()
    expect(capabilities.skills).toEqual([
      expect.objectContaining({ name: 'triage', instructions: '# Triage\nRead, then label.', source: 'seam:team' }),
      expect.objectContaining({ name: 'release', instructions: '# Release', source: 'seam:team' }),
    ])
  })
})
