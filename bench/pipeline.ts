/**
 * Issue 3: calls per second through the whole pipeline (`turn.tools.execute`, memory journal, no
 * hooks) for a zod tool and a seam tool, each against a hand-rolled baseline doing only what any
 * tool call must: `JSON.parse`, a precompiled validator of the same schema, one async call.
 * Targets: the pipeline at most 4× the baseline's time per call, and at most 1.5× the CPU time per
 * call of the floor sketch, which does only what the guarantees cannot do without (two journal
 * events kept, frozen arguments, rendered and frozen content, a frozen outcome) with none of the
 * pipeline's checks (both alternate on a shared machine, where wall time includes waiting for a
 * core). Each timed round starts after a pause in which the collector finishes what earlier rounds
 * left it (see `interleave`'s `settle`): without it, a round's CPU time held another contender's
 * collections, and one run's ratio ranged over 0.6–2.9× from round to round. Two diagnostic rows,
 * measured in a process of their own (see `diagnostics`): the zod tool against a journal that keeps
 * nothing (the pipeline's own cost without the memory journal's), and the floor sketch handing its
 * events to the memory journal (that store's share).
 * `node --import tsx bench/pipeline.ts` (`--floor`: the floor sketch alone, see `floorAlone`;
 * `--pipeline [--rounds N]`: the zod tool's rounds alone, see `pipelineAlone`; `--diagnostics`: the
 * diagnostic rounds alone, printed as JSON)
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Ajv } from 'ajv'
import { capabilitySeamToken, createRoot, definePlugin, defineTool, type JournalEvent, type JournalStore, memoryJournal, SeamIntegration, type ToolService } from '../src/index.js'
import { APPENDED } from '../src/runtime/journal/events.js'
import {
  type BenchReport,
  type Contender,
  cpuMsPerOp,
  cpuVerdict,
  formatMs,
  formatRate,
  formatRatio,
  interleave,
  isMain,
  type Measured,
  msPerOp,
  pairedCpuRatio,
  pairedRatio,
  printReport,
  type Sample,
  table,
  timeLoop,
  verdict,
} from './harness.js'
import { ARGUMENTS_TEXT as ARGUMENTS, DESCRIPTION, lookupBody, lookupInput as zodInput, NAME } from './lookup-tool.js'

export const CALLS_PER_ROUND = 4_000
const ROUNDS = 24
const WARMUP = 3
const TARGET = 4
/** Issue 14: the whole pipeline at most 1.5× the floor sketch (what the guarantees alone cost). */
const FLOOR_TARGET = 1.5

const jsonInput = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { id: { type: 'string' }, limit: { type: 'integer', maximum: 10 } },
  required: ['id'],
}

const service: ToolService = {
  id: 'tickets',
  description: 'Tickets over a seam.',
  schema: () => [{ type: 'function', function: { name: 'fetch_ticket', description: 'Fetch a ticket.', parameters: jsonInput }, approval: 'never' }],
  execute: async (_scope, _name, input) => ({ success: true, output: await lookupBody(input as { id: string }) }),
}

const plugin = definePlugin({
  name: 'bench',
  setup(ctx) {
    ctx.addTool(NAME, defineTool({ description: DESCRIPTION, input: zodInput, approval: 'never', execute: lookupBody }))
    const seams = new SeamIntegration()
    seams.registerToolService('global', service)
    ctx.resources.provide(capabilitySeamToken, seams, () => seams.dispose())
  },
})

/**
 * Accepts every event and keeps none, answering at once as the memory journal does (the settled
 * `APPENDED`, which the pipeline does not wait for): isolates the pipeline's own cost from the journal's.
 */
function discardingJournal(): JournalStore {
  return {
    kind: 'discard',
    location: 'nowhere',
    append: () => APPENDED,
    read: () => Promise.resolve([]),
    tail: () => Promise.resolve([]),
    repair: () => Promise.resolve({ results: 0, turns: 0 }),
    // Nothing here parks or claims: the memory store's claims stand in.
    coordination: memoryJournal().coordination,
    turns: () => Promise.resolve({ turns: [] }),
    close: () => Promise.resolve(),
  }
}

/** How a round runs its calls: `timeLoop` here; `bench/instructions.ts` counts instructions instead. */
export type Loop = (ops: number, op: (index: number) => unknown) => Promise<Sample>

/** One round through the pipeline: a fresh root and turn (untimed), then `CALLS_PER_ROUND` calls. */
export function pipelineRound(name: string, journal: () => JournalStore = memoryJournal, loop: Loop = timeLoop): () => Promise<Sample> {
  return async () => {
    const root = await createRoot({ plugin, journal: journal(), repair: false })
    try {
      const turn = await root.beginTurn({ session: 'bench', principal: { subjectId: 'bench' } })
      const sample = await loop(CALLS_PER_ROUND, async (index) => {
        const outcome = await turn.tools.execute({ callId: `c${index}`, name, arguments: ARGUMENTS })
        if (outcome.status !== 'completed') throw new Error(`bench call failed: ${outcome.code} ${JSON.stringify(outcome.content)}`)
      })
      await turn.end()
      return sample
    } finally {
      await root.close()
    }
  }
}

/**
 * The floor: what any call that keeps the pipeline's guarantees must do, with no checks, no
 * stages, no deadline and no generation: append `tool/call` (kept, frozen), parse and validate
 * the arguments and deep-freeze them, await the body, deep-freeze the value, render it as frozen
 * text content, build a frozen outcome, append `tool/result`. The events are kept in an array, or
 * given to `journal` (a diagnostic: the floor with the pipeline's own store, to tell the journal's
 * share of the gap from the pipeline's).
 */
export function floorRound(journal?: () => JournalStore, loop: Loop = timeLoop): () => Promise<Sample> {
  const appended = Promise.resolve()
  return () => {
    const events: object[] = []
    const store = journal?.()
    const keep = (event: object): Promise<void> => {
      if (store) return store.append(event as JournalEvent)
      events.push(event)
      return appended
    }
    let seq = 0
    return loop(CALLS_PER_ROUND, async (index) => {
      const callId = `c${index}`
      const started = performance.now()
      await keep(Object.freeze({ kind: 'tool/call', turnId: 't', seq: ++seq, at: Date.now(), callId, name: NAME, arguments: ARGUMENTS, generation: 1 }))
      const parsed = zodInput.safeParse(JSON.parse(ARGUMENTS))
      if (!parsed.success) throw new Error('invalid')
      const value = deepFreeze(await lookupBody(deepFreeze(parsed.data)))
      const content = Object.freeze([Object.freeze({ type: 'text' as const, text: JSON.stringify(value) })])
      const outcome = Object.freeze({ callId, name: NAME, generation: 1, status: 'completed' as const, value, content, durationMs: performance.now() - started })
      await keep(Object.freeze({ kind: 'tool/result', turnId: 't', seq: ++seq, at: Date.now(), callId, status: outcome.status, content, durationMs: outcome.durationMs }))
    })
  }
}

/** Plain JSON only (what the sketch freezes): `for…in` allocates no key array. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key in value) deepFreeze(value[key])
  }
  return value
}

const validateJson = new Ajv().compile(jsonInput)

function baselineRound(kind: 'zod' | 'ajv'): () => Promise<Sample> {
  const call =
    kind === 'zod'
      ? async () => {
          const parsed = zodInput.safeParse(JSON.parse(ARGUMENTS))
          if (!parsed.success) throw new Error('invalid')
          return lookupBody(parsed.data)
        }
      : async () => {
          const args: unknown = JSON.parse(ARGUMENTS)
          if (!validateJson(args)) throw new Error('invalid')
          return service.execute('global', 'fetch_ticket', args)
        }
  return () => timeLoop(CALLS_PER_ROUND, call)
}

export async function run(): Promise<BenchReport> {
  const contenders: Contender[] = [
    { label: 'baseline: JSON.parse + zod safeParse + await', round: baselineRound('zod') },
    { label: 'pipeline: zod tool', round: pipelineRound(NAME) },
    { label: 'baseline: JSON.parse + Ajv + await', round: baselineRound('ajv') },
    { label: 'pipeline: seam tool (Ajv)', round: pipelineRound('fetch_ticket') },
    { label: 'floor sketch, no checks (zod)', round: floorRound() },
  ]
  const measured = await interleave(contenders, { rounds: ROUNDS, warmup: WARMUP, settle: true })
  const [zodBase, zodPipe, ajvBase, seamPipe, floor] = measured as [Measured, Measured, Measured, Measured, Measured]
  const [ownBase, ownFloor, zodBare, floorJournal] = await diagnostics()
  const rows = [
    row(zodBase, zodBase, floor),
    row(zodPipe, zodBase, floor),
    row(ajvBase, ajvBase, floor),
    row(seamPipe, ajvBase, floor),
    row(floor, zodBase, floor),
    row(zodBare, ownBase, ownFloor),
    row(floorJournal, ownBase, ownFloor),
  ]
  return {
    name: 'pipeline',
    lines: [
      `pipeline: sequential execute(), memory journal, no hooks; ${ROUNDS} interleaved rounds of ${CALLS_PER_ROUND.toLocaleString('en-US')} calls, medians`,
      ...table(['', 'calls/s', 'per call', 'CPU per call', 'ratio', 'CPU vs floor'], rows),
      '  (diagnostic rows: a process of their own, each against that process\'s own baseline and floor sketch)',
    ],
    verdicts: [
      verdict('zod tool vs its baseline', zodPipe, zodBase, TARGET),
      verdict('seam tool vs its baseline', seamPipe, ajvBase, TARGET),
      // CPU time: the floor sketch and the pipeline alternate, and the wait for a core on a shared machine is neither's.
      cpuVerdict('zod tool vs the floor sketch', zodPipe, floor, FLOOR_TARGET),
    ],
  }
}

function row(m: Measured, base: Measured, floor: Measured): string[] {
  const perCall = msPerOp(m)
  return [m.label, formatRate(1000 / perCall), formatMs(perCall), formatMs(cpuMsPerOp(m)), m === base ? '1.00×' : formatRatio(pairedRatio(m, base)), m === floor ? '1.00×' : formatRatio(pairedCpuRatio(m, floor))]
}

/** The diagnostic contenders, each judged against this process's zod baseline and floor sketch. */
function diagnosticContenders(): Contender[] {
  return [
    { label: 'baseline: JSON.parse + zod safeParse + await', round: baselineRound('zod') },
    { label: 'floor sketch, no checks (zod)', round: floorRound() },
    { label: 'diagnostic: zod tool, discarding journal', round: pipelineRound(NAME, discardingJournal) },
    { label: 'diagnostic: floor sketch, memory journal', round: floorRound(memoryJournal) },
  ]
}

/**
 * The diagnostic rounds, in a child process: a floor sketch handing its events to the memory journal
 * shows that journal event shapes no host makes, and the pipeline rounds of the same process then
 * pay for property reads gone megamorphic (30 % more instructions per call, counted with callgrind);
 * the discarding journal is a second journal class at the pipeline's append. The verdict rows are
 * kept apart from both.
 */
async function diagnostics(): Promise<[Measured, Measured, Measured, Measured]> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--diagnostics'], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
  })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  if (code !== 0) throw new Error(`the diagnostic rounds (bench/pipeline.ts --diagnostics) exited with ${String(code)}`)
  const measured = JSON.parse(out) as Measured[]
  if (measured.length !== 4) throw new Error(`the diagnostic rounds gave ${measured.length} contenders, not 4`)
  return measured as [Measured, Measured, Measured, Measured]
}

/**
 * The floor sketch against its baseline with nothing else in the process (no pipeline rounds
 * sharing the heap, the body function or the JIT's type feedback): `node --import tsx bench/pipeline.ts --floor`.
 */
/**
 * The zod tool's pipeline rounds alone in the process (`--pipeline`, `--rounds N`, 120 by default,
 * after 10 warm-up rounds): its CPU time per call, the median over the rounds. With no other
 * contender's rounds between its own, runs of two versions of the code, alternated, tell them apart
 * by a few per cent, where the ratio to the floor sketch moves by ten from run to run.
 */
async function pipelineAlone(): Promise<BenchReport> {
  const at = process.argv.indexOf('--rounds')
  const rounds = at === -1 ? 120 : Number(process.argv[at + 1])
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error(`--rounds takes a positive integer, got ${process.argv[at + 1]}`)
  const [zod] = (await interleave([{ label: 'pipeline: zod tool', round: pipelineRound(NAME) }], { rounds, warmup: 10 })) as [Measured]
  return {
    name: 'pipeline-alone',
    lines: [
      `pipeline rounds alone in the process: ${rounds} rounds of ${CALLS_PER_ROUND.toLocaleString('en-US')} calls, medians`,
      ...table(['', 'per call', 'CPU per call'], [[zod.label, formatMs(msPerOp(zod)), formatMs(cpuMsPerOp(zod))]]),
    ],
    verdicts: [],
  }
}

async function floorAlone(): Promise<BenchReport> {
  const [base, floor] = (await interleave(
    [
      { label: 'baseline: JSON.parse + zod safeParse + await', round: baselineRound('zod') },
      { label: 'floor sketch, no checks (zod)', round: floorRound() },
    ],
    { rounds: ROUNDS, warmup: WARMUP },
  )) as [Measured, Measured]
  const row = (m: Measured) => [m.label, formatRate(1000 / msPerOp(m)), formatMs(msPerOp(m)), m === base ? '1.00×' : formatRatio(pairedRatio(m, base))]
  return { name: 'pipeline-floor', lines: ['pipeline floor, alone in the process', ...table(['', 'calls/s', 'per call', 'ratio'], [row(base), row(floor)])], verdicts: [] }
}

if (isMain(import.meta.url)) {
  if (process.argv.includes('--pipeline')) printReport(await pipelineAlone())
  else if (process.argv.includes('--diagnostics')) process.stdout.write(JSON.stringify(await interleave(diagnosticContenders(), { rounds: ROUNDS, warmup: WARMUP, settle: true })))
  else printReport(await (process.argv.includes('--floor') ? floorAlone() : run()))
}
