import { describe, expect, it, onTestFinished } from 'vitest'
import { capabilitySeamToken, SeamIntegration } from '../../seams/integration.js'
import { CapabilityIngress } from './capability-ingress.js'
import { Generation } from './generation.js'
import { PluginInstance } from '../plugins/plugin-instance.js'
import { definePlugin } from '../plugins/plugin.js'
import { buildError, feature, generationOf, logger, schema, service, skills } from './fixtures/capability-ingress-kit.js'

describe('CapabilityIngress: duplicate names', () => {
  it('rejects a Feature and a Seam tool with the same visible name, naming the name and both sources', async () => {
    const error = await buildError((ctx, seams) => {
      ctx.addTool('lookup', feature())
      seams.registerToolService('global', service('tickets', [schema('lookup')]))
    })
    expect(error.code).toBe('DUPLICATE_CAPABILITY')
    expect(error.message).toBe('duplicate tool name "lookup": provided by addTool(root) and by seam:tickets')
    expect(error.details).toEqual({ name: 'lookup', sources: ['addTool(root)', 'seam:tickets'] })
  })

  it('rejects two Seam tools with the same name from two providers', async () => {
    const error = await buildError((_ctx, seams) => {
      seams.registerToolService('global', service('alpha', [schema('search')]))
      seams.registerToolService('global', service('beta', [schema(' search ', { source: 'remote:beta' })]))
    })
    expect(error.message).toBe('duplicate tool name "search": provided by seam:alpha and by remote:beta')
  })

  it('rejects two skills with the same name, naming both sources', async () => {
    const error = await buildError((ctx, seams) => {
      ctx.addSkill('triage', { description: 'Triage', instructions: '#' })
      seams.registerSkillService('global', skills('team', ['triage']))
    })
    expect(error).toMatchObject({ code: 'DUPLICATE_CAPABILITY', message: 'duplicate skill name "triage": provided by addSkill(root) and by seam:team' })
  })

  it('rejects two skill providers offering the same skill name', async () => {
    const error = await buildError((_ctx, seams) => {
      seams.registerSkillService('global', skills('one', ['triage']))
      seams.registerSkillService('global', skills('two', ['triage']))
    })
    expect(error.message).toBe('duplicate skill name "triage": provided by seam:one and by seam:two')
  })

  it('rejects a clash that only one owner sees', async () => {
    const error = await buildError(async (ctx, seams) => {
      await ctx.plugin(definePlugin({ name: 'maps' }))
      seams.registerToolService('global', service('a', [schema('tiles')]))
      seams.registerToolService('root/maps', service('b', [schema('tiles')]))
    })
    expect(error.message).toBe('duplicate tool name "tiles": provided by seam:a and by seam:b')
  })

  it('does not count a hidden tool as a clash', async () => {
    const { generation, ingress } = await generationOf((ctx, seams) => {
      ctx.addTool('lookup', feature({ hidden: true }))
      seams.registerToolService('global', service('a', [schema('lookup'), schema('search', { hidden: true })]))
      seams.registerToolService('global', service('b', [schema('search')]))
    })
    expect((await ingress.read(generation)).tools.map((t) => [t.name, t.source])).toEqual([
      ['lookup', 'seam:a'],
      ['search', 'seam:b'],
    ])
  })

  it('rejects read() with DUPLICATE_CAPABILITY for a generation whose projection clashes', async () => {
    const root = await PluginInstance.mount(
      definePlugin({
        name: 'root',
        setup(ctx) {
          const seams = new SeamIntegration()
          seams.registerToolService('global', service('a', [schema('x')]))
          seams.registerToolService('global', service('b', [schema('x')]))
          ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
        },
      }),
      { generation: 1, logger },
    )
    const generation = new Generation({ number: 1, root, tools: [], skills: [], diagnostics: [] })
    onTestFinished(() => generation.dispose())
    await expect(new CapabilityIngress().read(generation, 'root')).rejects.toMatchObject({
      code: 'DUPLICATE_CAPABILITY',
      message: 'duplicate tool name "x": provided by seam:a and by seam:b',
    })
  })
})
