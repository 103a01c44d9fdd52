/**
 * Issue 14: what a publish costs as a plugin grows. A plugin whose `setup` adds N zod tools (N =
 * 1,000 and 10,000), published by `root.reload()` (setup runs again):
 * - full publish: every tool definition is new (new zod schemas), against the same run's
 *   `z.toJSONSchema` of those N schemas alone (what telling a model about N zod tools costs at least);
 * - one-tool edit: one definition is new, the other N − 1 are the objects the last generation
 *   had (as the folder source keeps them for unchanged tool files), against the full publish;
 * - seam tools: a provider offering N JSON Schema tools, projected again after it reports a change
 *   (`reload({ setup: false })`), same schema objects, against the full publish at that size.
 * Target: a one-tool edit at 10,000 tools publishes in ≤ 30 ms of CPU time (on a shared machine the
 * wall time includes waiting for a core; both are printed). `node --import tsx bench/projection.ts`
 */
import { z } from 'zod'
import { capabilitySeamToken, createRoot, definePlugin, defineTool, type Root, SeamIntegration, type ToolDefinition, type ToolSchema } from '../src/index.js'
import { type BenchReport, budget, type Contender, cpuMsPerOp, formatMs, formatRatio, interleave, isMain, type Measured, msPerOp, pairedRatio, printReport, type Sample, table, timed } from './harness.js'

const SIZES = [1_000, 10_000] as const
const ROUNDS = 5
const WARMUP = 1
const EDIT_BUDGET_MS = 30

let edition = 0

function tool(n: number): ToolDefinition {
  edition += 1
  return defineTool({
    description: `Tool number ${n} (edition ${edition}).`,
    input: z.object({ id: z.string(), limit: z.number().int().max(100).optional(), tags: z.array(z.string()).optional() }),
    approval: 'never',
    execute: async ({ id }) => ({ id, n }),
  }) as ToolDefinition
}

interface Catalog {
  readonly definitions: ToolDefinition[]
  readonly plugin: ReturnType<typeof definePlugin>
}

function zodCatalog(size: number): Catalog {
  const definitions = Array.from({ length: size }, (_, n) => tool(n))
  const plugin = definePlugin({
    name: 'bench',
    setup(ctx) {
      for (let n = 0; n < definitions.length; n += 1) ctx.addTool(`tool_${n}`, definitions[n]!)
    },
  })
  return { definitions, plugin }
}

function seamCatalog(size: number): ReturnType<typeof definePlugin> {
  const schemas: ToolSchema[] = Array.from({ length: size }, (_, n) => ({
    type: 'function',
    function: {
      name: `remote_${n}`,
      description: `Remote tool number ${n}.`,
      parameters: { type: 'object', properties: { id: { type: 'string' }, limit: { type: 'integer', maximum: 100 } }, required: ['id'] },
    },
    approval: 'never',
  }))
  return definePlugin({
    name: 'bench',
    setup(ctx) {
      const seams = new SeamIntegration()
      seams.registerToolService('global', { id: 'remote', description: 'Remote tools.', schema: () => schemas, execute: async () => ({ success: true, output: 'ok' }) })
      ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
    },
  })
}

function timedReload(root: Root, options: { setup?: boolean } = {}): Promise<Sample> {
  return timed(1, async () => {
    const result = await root.reload(options)
    if (!result.ok) throw result.error
  })
}

export async function run(): Promise<BenchReport> {
  const roots: Root[] = []
  try {
    const contenders: Contender[] = []
    for (const size of SIZES) {
      const catalog = zodCatalog(size)
      const root = await createRoot({ plugin: catalog.plugin, repair: false })
      roots.push(root)
      const seamRoot = await createRoot({ plugin: seamCatalog(size), repair: false })
      roots.push(seamRoot)
      const label = size.toLocaleString('en-US')
      contenders.push(
        {
          label: `z.toJSONSchema of ${label} new schemas`,
          round: () => {
            const fresh = Array.from({ length: size }, (_, n) => tool(n).input as z.ZodType)
            return timed(1, async () => {
              for (const schema of fresh) z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io: 'input' })
            })
          },
        },
        {
          label: `full publish, ${label} new zod tools`,
          round: () => {
            for (let n = 0; n < size; n += 1) catalog.definitions[n] = tool(n)
            return timedReload(root)
          },
        },
        {
          label: `one-tool edit, ${label} zod tools`,
          round: () => {
            const n = Math.floor(Math.random() * size)
            catalog.definitions[n] = tool(n)
            return timedReload(root)
          },
        },
        { label: `seam provider changed, ${label} JSON Schema tools`, round: () => timedReload(seamRoot, { setup: false }) },
      )
    }
    const measured = await interleave(contenders, { rounds: ROUNDS, warmup: WARMUP })
    const rows: string[][] = []
    const verdicts = []
    for (let index = 0; index < measured.length; index += 4) {
      const [schemas, full, edit, seam] = measured.slice(index, index + 4) as [Measured, Measured, Measured, Measured]
      const row = (m: Measured, base: Measured | undefined, full: Measured | undefined) => [
        m.label,
        formatMs(msPerOp(m)),
        formatMs(cpuMsPerOp(m)),
        base ? formatRatio(pairedRatio(m, base)) : '1.00×',
        full ? formatRatio(pairedRatio(m, full)) : '',
      ]
      rows.push(row(schemas, undefined, undefined), row(full, schemas, undefined), row(edit, schemas, full), row(seam, schemas, full))
      const size = SIZES[index / 4]!.toLocaleString('en-US')
      const cpu = (ms: number) => `${formatMs(ms)} CPU`
      verdicts.push(budget(`one-tool edit publishes, ${size} tools`, cpuMsPerOp(edit), EDIT_BUDGET_MS, cpu, `full publish: ${cpu(cpuMsPerOp(full))}`))
    }
    return {
      name: 'projection',
      lines: [`projection: root.reload() of a plugin with N tools; ${ROUNDS} interleaved rounds, medians`, ...table(['', 'publish', 'CPU', 'vs toJSONSchema', 'vs full publish'], rows)],
      verdicts,
    }
  } finally {
    await Promise.all(roots.map((root) => root.close()))
  }
}

if (isMain(import.meta.url)) printReport(await run())
