import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { definePlugin } from '../runtime/plugins/plugin.js'
import type { Token } from './tokens.js'
import { createRoot } from '../index.js'
import { capabilitySeamToken, SeamIntegration, seamIntegrationToken } from './integration.js'
import type { SkillService, ToolExecutionResult, ToolService } from './types.js'

function toolService(id: string, name = `${id}_tool`) {
  const execute = vi.fn(async (): Promise<ToolExecutionResult> => ({ success: true, output: 'ran' }))
  const schema = vi.fn(() => [
    { type: 'function' as const, function: { name, description: `${name} tool`, parameters: { type: 'object' } }, approval: 'never' as const },
  ])
  const service: ToolService = { id, description: `${id} service`, schema, execute }
  return { service, execute, schema }
}

function skillService(id: string) {
  const catalog = vi.fn(async () => [{ name: `${id}_skill`, description: 'a skill' }])
  const describe = vi.fn(async () => '# instructions')
  const service: SkillService = { id, description: `${id} skills`, catalog, describe }
  return { service, catalog, describe }
}

describe('SeamIntegration', () => {
  it('registers tool and skill services per scope and returns idempotent disposers', () => {
    const seams = new SeamIntegration()
    const tools = toolService('search')
    const skills = skillService('research')
    const disposeTool = seams.registerToolService('global', tools.service)
    const disposeSkill = seams.registerSkillService('root/maps', skills.service)
    expect(seams.tools.getFor('root')).toEqual([tools.service])
    expect(seams.skills.getFor('root/maps')).toEqual([skills.service])
    expect(seams.skills.getFor('root')).toEqual([])
    disposeTool()
    disposeTool()
    disposeSkill()
    expect(seams.tools.size).toBe(0)
    expect(seams.skills.size).toBe(0)
  })

  it('keeps a newer registration when the disposer of an older one with the same id runs again', () => {
    const seams = new SeamIntegration()
    const first = toolService('search')
    const second = toolService('search')
    const disposeFirst = seams.registerToolService('global', first.service)
    disposeFirst()
    seams.registerToolService('global', second.service)
    disposeFirst()
    expect(seams.tools.getFor('root')).toEqual([second.service])
  })

  it('throws DUPLICATE_PROVIDER naming the id and scope when a tool service id repeats in one scope', () => {
    const seams = new SeamIntegration()
    seams.registerToolService('root', toolService('search').service)
    expect(() => seams.registerToolService('root', toolService('search').service)).toThrowError(
      expect.objectContaining({ code: 'DUPLICATE_PROVIDER', message: expect.stringMatching(/"search".*"root"/) }),
    )
  })

  it('rejects services that lack their methods', () => {
    const seams = new SeamIntegration()
    const noExecute = { id: 'x', description: 'x', schema: () => [] } as unknown as ToolService
    const noDescribe = { id: 'y', description: 'y', catalog: async () => [] } as unknown as SkillService
    expect(() => seams.registerToolService('global', noExecute)).toThrowError(expect.objectContaining({ code: 'INVALID_PLUGIN' }))
    expect(() => seams.registerSkillService('global', noDescribe)).toThrowError(expect.objectContaining({ code: 'INVALID_PLUGIN' }))
  })

  it('removes every registration on dispose and refuses later registrations with CLOSED', () => {
    const seams = new SeamIntegration()
    const dispose = seams.registerToolService('global', toolService('search').service)
    seams.registerSkillService('global', skillService('research').service)
    seams.dispose()
    seams.dispose()
    dispose()
    expect(seams.disposed).toBe(true)
    expect(seams.tools.size + seams.skills.size).toBe(0)
    expect(() => seams.registerToolService('global', toolService('late').service)).toThrowError(
      expect.objectContaining({ code: 'CLOSED' }),
    )
  })

  it('resolves the deprecated executeTool to a fail-closed migration error without calling any provider', async () => {
    const seams = new SeamIntegration()
    const search = toolService('search', 'acme_search')
    seams.registerToolService('global', search.service)
    const promise = seams.executeTool('acme_search', { query: 'x' })
    expect(promise).toBeInstanceOf(Promise)
    const result = await promise
    expect(result.success).toBe(false)
    expect(result).toMatchObject({ error: expect.stringContaining('executeTool("acme_search") is deprecated') })
    expect((result as { error: string }).error).toContain('turn.tools.execute')
    expect(search.execute).not.toHaveBeenCalled()
    expect(search.schema).not.toHaveBeenCalled()
  })

  it('resolves the deprecated invokeSkill to a fail-closed migration error without calling any provider', async () => {
    const seams = new SeamIntegration()
    const research = skillService('research')
    seams.registerSkillService('global', research.service)
    const result = await seams.invokeSkill('research_skill')
    expect(result.success).toBe(false)
    expect((result as { error: string }).error).toContain('invokeSkill("research_skill") is deprecated')
    expect((result as { error: string }).error).toContain('turn.capabilities.skills')
    expect(research.catalog).not.toHaveBeenCalled()
    expect(research.describe).not.toHaveBeenCalled()
  })

  it('fails closed from the deprecated entry points even after dispose, and never throws', async () => {
    const seams = new SeamIntegration()
    seams.dispose()
    await expect(seams.executeTool('anything')).resolves.toMatchObject({ success: false })
    await expect(seams.invokeSkill('anything')).resolves.toMatchObject({ success: false })
  })
})

describe('seam tokens', () => {
  it('keeps seamIntegrationToken as a plain symbol distinct from capabilitySeamToken', () => {
    expect(typeof seamIntegrationToken).toBe('symbol')
    expect(seamIntegrationToken.description).toBe('seam-integration')
    expect(capabilitySeamToken).not.toBe(seamIntegrationToken)
    expect(capabilitySeamToken.id).toBe('capability-seam')
  })

  it('projects no tools from a SeamIntegration provided under the deprecated seamIntegrationToken', async () => {
    const search = toolService('search', 'acme_search')
    const plugin = definePlugin({
      name: 'root',
      setup({ resources }) {
        const seams = new SeamIntegration()
        seams.registerToolService('global', search.service)
        // Source compatibility only: the symbol type-checks nowhere as a Token, and nothing reads it.
        resources.provide(seamIntegrationToken as unknown as Token<SeamIntegration>, seams, () => seams.dispose())
      },
    })
    const root = await createRoot({ plugin })
    onTestFinished(() => root.close())
    const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u', roles: [] } })
    onTestFinished(() => turn.end())
    expect(turn.capabilities.tools).toEqual([])
    expect(search.schema).not.toHaveBeenCalled()
    const outcome = await turn.tools.execute({ callId: 'c1', name: 'acme_search', arguments: '{}' })
    expect(outcome.code).toBe('UNKNOWN_TOOL')
    expect(search.execute).not.toHaveBeenCalled()
  })

  it('projects tools from a SeamIntegration provided under capabilitySeamToken', async () => {
    const search = toolService('search', 'acme_search')
    const plugin = definePlugin({
      name: 'root',
      setup({ resources }) {
        const seams = new SeamIntegration()
        seams.registerToolService('global', search.service)
        resources.provide(capabilitySeamToken, seams, () => seams.dispose())
      },
    })
    const root = await createRoot({ plugin })
    onTestFinished(() => root.close())
    const capabilities = await root.capabilities()
    expect(capabilities.tools.map((t) => t.name)).toEqual(['acme_search'])
  })
})
