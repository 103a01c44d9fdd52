/**
 * Issue 33: seam-runtime beside its peers, in one process, on the same `inc` tool (`{ id, n }`,
 * validated with the same zod schema wherever the peer validates), in interleaved rounds, judged
 * on CPU time. Three rows: one call (arguments as JSON text, as a model sends them), a batch of 8
 * concurrency-safe calls, and one agent step (a mock model asks for one call, gets its result, and
 * answers). Peers that install from the npm registry: `@openai/agents` (`invokeFunctionTool`; its
 * `run` for the agent step), `ai` (the parse and validate steps `generateText` runs per call;
 * `generateText` with a mock model for the agent step), `@mastra/core` (the tool's own `execute`,
 * which validates). Two floors written here: a zhin.js-style runtime (a map of tools, a policy
 * step, an array journal, no argument validation: the floor of a journal-and-no-validation design),
 * and `JSON.parse` + zod + `await` (the floor of validation). Each figure is µs of CPU per call,
 * batch or step (and, where Node can tell, the part of it V8's helper threads spent), and its ratio to
 * seam-runtime in the same rounds.
 * `npm run bench -- peers` (`--rounds N`, default 16)
 */
import { Agent, invokeFunctionTool, type Model, type ModelResponse, tool as openAiTool, RunContext, Runner, setTracingDisabled, Usage } from '@openai/agents'
import { createTool as mastraTool, noopObserve } from '@mastra/core/tools'
import { asSchema, generateText, type LanguageModel, tool as aiTool, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'
import { createRoot, definePlugin, defineTool, memoryJournal, type ModelClient, runAgent, type ToolCall } from '../src/index.js'
import {
  type BenchReport,
  type Contender,
  cpuMsPerOp,
  cpuVerdict,
  formatMs,
  formatRatio,
  interleave,
  isMain,
  helperCpuMsPerOp,
  type Measured,
  numberOption,
  pairedCpuRatio,
  printReport,
  type Sample,
  table,
  timeLoop,
} from './harness.js'

const CALLS_PER_ROUND = 2_000
const BATCHES_PER_ROUND = 250
const STEPS_PER_ROUND = 100
const BATCH = 8
const WARMUP = 3

// The targets, judged on CPU time against the same run's rounds.
const CALL_VS_ZHIN = 0.8
const CALL_VS_OPENAI = 0.5
const BATCH_VS_ZHIN = 0.7

const NAME = 'inc'
const DESCRIPTION = 'Add one to a counter.'
const incInput = z.object({ id: z.string(), n: z.number().int() })
type Inc = z.infer<typeof incInput>
const ARGUMENTS = '{"id":"a","n":1}'
const batchArguments = Array.from({ length: BATCH }, (_, n) => `{"id":"a${n}","n":${n}}`)

/** The body every side runs. */
async function inc(args: Inc): Promise<Inc> {
  return { id: args.id, n: args.n + 1 }
}

function expectInc(value: unknown): void {
  if ((value as Inc | undefined)?.n === undefined) throw new Error(`bench call failed: ${JSON.stringify(value)}`)
}

// ── seam-runtime ────────────────────────────────────────────────────────────────────────────────

const plugin = definePlugin({
  name: 'peers',
  setup(ctx) {
    ctx.addTool(NAME, defineTool({ description: DESCRIPTION, input: incInput, approval: 'never', isConcurrencySafe: () => true, execute: inc }))
  },
})

/** A fresh root and turn per round (untimed); `body` is the timed part. */
async function withSeamTurn(body: (turn: Awaited<ReturnType<Awaited<ReturnType<typeof createRoot>>['beginTurn']>>) => Promise<Sample>): Promise<Sample> {
  const root = await createRoot({ plugin, journal: memoryJournal(), repair: false })
  try {
    const turn = await root.beginTurn({ session: 'bench', principal: { subjectId: 'bench' } })
    const sample = await body(turn)
    await turn.end()
    return sample
  } finally {
    await root.close()
  }
}

const seamCall = () =>
  withSeamTurn((turn) =>
    timeLoop(CALLS_PER_ROUND, async (index) => {
      const outcome = await turn.tools.execute({ callId: `c${index}`, name: NAME, arguments: ARGUMENTS })
      if (outcome.status !== 'completed') throw new Error(`bench call failed: ${outcome.code}`)
    }),
  )

const seamBatch = () =>
  withSeamTurn((turn) => {
    const batches: ToolCall[][] = Array.from({ length: BATCHES_PER_ROUND }, (_, b) => batchArguments.map((args, n) => ({ callId: `b${b}-${n}`, name: NAME, arguments: args })))
    return timeLoop(BATCHES_PER_ROUND, async (index) => {
      const outcomes = await turn.tools.executeBatch(batches[index]!)
      if (outcomes.length !== BATCH || outcomes.some((o) => o.status !== 'completed')) throw new Error('bench batch failed')
    })
  })

/** Asks for one `inc` call (a new call id each step), then answers once it has the result. */
function seamModel(): ModelClient {
  let step = 0
  return {
    complete: async ({ messages }) => {
      const last = messages[messages.length - 1]
      if (last?.role === 'tool') return { text: 'done', toolCalls: [] }
      step += 1
      return { text: '', toolCalls: [{ callId: `s${step}`, name: NAME, arguments: ARGUMENTS }] }
    },
  }
}

const seamStep = () =>
  withSeamTurn((turn) => {
    const model = seamModel()
    return timeLoop(STEPS_PER_ROUND, async () => {
      const result = await runAgent({ turn, model, messages: [{ role: 'user', content: 'go' }], instructions: false }).result
      if (result.reason !== 'final' || result.text !== 'done') throw new Error(`bench step failed: ${result.reason}`)
    })
  })

// ── a zhin.js-style runtime: journal and policy, no argument validation ─────────────────────────

interface BareTool {
  readonly name: string
  readonly approval: 'never' | 'always'
  readonly permissions: readonly string[]
  readonly platforms: readonly string[]
  execute(input: Record<string, unknown>, context: object): Promise<unknown>
}

type BareOutcome = Readonly<{ status: 'completed'; output: unknown; durationMs: number }> | Readonly<{ status: 'denied'; policy: string; reason: string }>

/**
 * The shape of zhin.js's `TurnToolRuntime.execute`, written here as a floor: look the tool up, journal
 * `tool_call`, check the turn's signal, run the policy step (permissions, platforms, approval mode),
 * build the invocation context, await the body, journal `tool_result`, return a frozen outcome. The
 * journal is an array; the arguments are parsed and never validated; nothing but the outcome is frozen.
 */
class BareRuntime {
  readonly #tools: ReadonlyMap<string, BareTool>
  readonly #events: object[] = []
  #seq = 0
  readonly #turn = Object.freeze({ turnId: 't', session: 'bench', principal: Object.freeze({ subjectId: 'bench', roles: Object.freeze([] as string[]) }), platform: 'cli', signal: new AbortController().signal })

  constructor(tools: readonly BareTool[]) {
    this.#tools = new Map(tools.map((t) => [t.name, t]))
  }

  async execute(name: string, input: Readonly<Record<string, unknown>>, toolUseId: string): Promise<BareOutcome> {
    const tool = this.#tools.get(name)
    if (!tool) return this.#deny(name, toolUseId, 'capability', `Unknown tool: ${name}`)
    await this.#append({ type: 'tool_call', toolName: name, args: { ...input }, toolUseId })
    const decision = await this.#policy(tool)
    if (decision !== undefined) return this.#deny(name, toolUseId, 'permission', decision)
    const startedAt = Date.now()
    const output = await tool.execute(input as Record<string, unknown>, Object.freeze({ turnId: this.#turn.turnId, principal: this.#turn.principal, signal: this.#turn.signal }))
    const durationMs = Date.now() - startedAt
    await this.#append({ type: 'tool_result', toolName: name, output, durationMs, toolUseId })
    return Object.freeze({ status: 'completed', output, durationMs })
  }

  async #policy(tool: BareTool): Promise<string | undefined> {
    if (this.#turn.signal.aborted) return 'cancelled'
    if (tool.platforms.length > 0 && !tool.platforms.includes(this.#turn.platform)) return 'platform'
    for (const permission of tool.permissions) if (!this.#turn.principal.roles.includes(permission)) return `missing ${permission}`
    return tool.approval === 'never' ? undefined : 'approval required'
  }

  async #deny(toolName: string, toolUseId: string, policy: string, reason: string): Promise<BareOutcome> {
    await this.#append({ type: 'tool_denied', toolName, toolUseId, policy, reason })
    return Object.freeze({ status: 'denied', policy, reason })
  }

  async #append(event: object): Promise<void> {
    this.#events.push({ ...event, turnId: this.#turn.turnId, seq: ++this.#seq, at: Date.now() })
  }
}

const bareTool: BareTool = { name: NAME, approval: 'never', permissions: [], platforms: [], execute: (input) => inc(input as Inc) }

const bareCall = () => {
  const runtime = new BareRuntime([bareTool])
  return timeLoop(CALLS_PER_ROUND, async (index) => {
    const outcome = await runtime.execute(NAME, JSON.parse(ARGUMENTS), `c${index}`)
    if (outcome.status !== 'completed') throw new Error('bench call failed')
  })
}

const bareBatch = () => {
  const runtime = new BareRuntime([bareTool])
  return timeLoop(BATCHES_PER_ROUND, async (index) => {
    const outcomes = await Promise.all(batchArguments.map((args, n) => runtime.execute(NAME, JSON.parse(args), `b${index}-${n}`)))
    if (outcomes.some((o) => o.status !== 'completed')) throw new Error('bench batch failed')
  })
}

// ── the floor of validation: JSON.parse + zod + await ───────────────────────────────────────────

async function validated(text: string): Promise<Inc> {
  const parsed = incInput.safeParse(JSON.parse(text))
  if (!parsed.success) throw new Error('invalid')
  return inc(parsed.data)
}

const zodCall = () => timeLoop(CALLS_PER_ROUND, () => validated(ARGUMENTS).then(expectInc))
const zodBatch = () => timeLoop(BATCHES_PER_ROUND, () => Promise.all(batchArguments.map(validated)))

// ── @openai/agents ──────────────────────────────────────────────────────────────────────────────

// Nothing here is to be exported anywhere (the default exporter would send traces to OpenAI).
setTracingDisabled(true)
const openAiInc = openAiTool({ name: NAME, description: DESCRIPTION, parameters: incInput, execute: inc })

const openAiCall = () => {
  const runContext = new RunContext()
  return timeLoop(CALLS_PER_ROUND, () => invokeFunctionTool({ tool: openAiInc, runContext, input: ARGUMENTS }).then(expectInc))
}

const openAiBatch = () => {
  const runContext = new RunContext()
  return timeLoop(BATCHES_PER_ROUND, () => Promise.all(batchArguments.map((input) => invokeFunctionTool({ tool: openAiInc, runContext, input }).then(expectInc))))
}

/** A `Model` that asks for one `inc` call, then answers once the call's output is in its input. */
function openAiModel(): Model {
  let step = 0
  const reply = (output: ModelResponse['output']): ModelResponse => ({ usage: new Usage(), output })
  return {
    async getResponse(request) {
      const input = request.input
      const last = Array.isArray(input) ? input[input.length - 1] : undefined
      if (last !== undefined && last.type === 'function_call_result') {
        return reply([{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }])
      }
      step += 1
      return reply([{ type: 'function_call', callId: `s${step}`, name: NAME, arguments: ARGUMENTS, status: 'completed' }])
    },
    getStreamedResponse() {
      throw new Error('not streamed')
    },
  }
}

const openAiStep = () => {
  const agent = new Agent({ name: 'bench', instructions: 'Count.', model: openAiModel(), tools: [openAiInc] })
  const runner = new Runner({ tracingDisabled: true })
  return timeLoop(STEPS_PER_ROUND, async () => {
    const result = await runner.run(agent, 'go')
    if (result.finalOutput !== 'done') throw new Error(`bench step failed: ${String(result.finalOutput)}`)
  })
}

// ── ai (the AI SDK) ─────────────────────────────────────────────────────────────────────────────

const aiInc = aiTool({ description: DESCRIPTION, inputSchema: incInput, execute: inc })
const aiSchema = asSchema(incInput)

/** What `generateText` does per tool call: parse the text, validate against the tool's schema, execute. */
async function aiExecute(text: string, toolCallId: string): Promise<Inc> {
  const checked = await aiSchema.validate!(JSON.parse(text))
  if (!checked.success) throw checked.error
  return aiInc.execute!(checked.value, { toolCallId, messages: [] }) as Promise<Inc>
}

const aiCall = () => timeLoop(CALLS_PER_ROUND, (index) => aiExecute(ARGUMENTS, `c${index}`).then(expectInc))
const aiBatch = () => timeLoop(BATCHES_PER_ROUND, (index) => Promise.all(batchArguments.map((args, n) => aiExecute(args, `b${index}-${n}`))))

type Generated = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>
const usage: Generated['usage'] = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }

function aiModel(): LanguageModel {
  let step = 0
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      if (prompt[prompt.length - 1]?.role === 'tool') return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
      step += 1
      return { content: [{ type: 'tool-call', toolCallId: `s${step}`, toolName: NAME, input: ARGUMENTS }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] }
    },
  }) as LanguageModel
}

const aiStep = () => {
  const model = aiModel()
  return timeLoop(STEPS_PER_ROUND, async () => {
    const result = await generateText({ model, tools: { [NAME]: aiInc }, prompt: 'go', stopWhen: stepCountIs(2) })
    if (result.text !== 'done') throw new Error(`bench step failed: ${result.text}`)
  })
}

// ── @mastra/core ────────────────────────────────────────────────────────────────────────────────

const mastraInc = mastraTool({ id: NAME, description: DESCRIPTION, inputSchema: incInput, execute: inc })
/** The context Mastra's agent hands a tool, least of it: no observability. */
const mastraContext = { observe: noopObserve }

const mastraCall = () => timeLoop(CALLS_PER_ROUND, () => mastraInc.execute!(JSON.parse(ARGUMENTS), mastraContext).then(expectInc))
const mastraBatch = () => timeLoop(BATCHES_PER_ROUND, () => Promise.all(batchArguments.map((args) => mastraInc.execute!(JSON.parse(args), mastraContext).then(expectInc))))

// ── the report ──────────────────────────────────────────────────────────────────────────────────

export interface Row {
  readonly what: string
  readonly per: number
  readonly contenders: readonly Contender[]
}

export const rows: readonly Row[] = [
  {
    what: 'one call',
    per: 1,
    contenders: [
      { label: 'seam-runtime: turn.tools.execute, memory journal', round: seamCall },
      { label: 'zhin.js-style floor: array journal, no validation', round: bareCall },
      { label: '@openai/agents: invokeFunctionTool', round: openAiCall },
      { label: 'ai: JSON.parse + schema.validate + execute', round: aiCall },
      { label: '@mastra/core: tool.execute (validates)', round: mastraCall },
      { label: 'floor of validation: JSON.parse + zod + await', round: zodCall },
    ],
  },
  {
    what: `a batch of ${BATCH}`,
    per: BATCH,
    contenders: [
      { label: `seam-runtime: executeBatch of ${BATCH} safe calls`, round: seamBatch },
      { label: `zhin.js-style floor: Promise.all of ${BATCH}`, round: bareBatch },
      { label: `@openai/agents: Promise.all of ${BATCH} invokeFunctionTool`, round: openAiBatch },
      { label: `ai: Promise.all of ${BATCH}`, round: aiBatch },
      { label: `@mastra/core: Promise.all of ${BATCH}`, round: mastraBatch },
      { label: `floor of validation: Promise.all of ${BATCH}`, round: zodBatch },
    ],
  },
  {
    what: 'an agent step (one call, two model requests)',
    per: 1,
    contenders: [
      { label: 'seam-runtime: runAgent, scripted ModelClient', round: seamStep },
      { label: '@openai/agents: Runner.run, scripted Model', round: openAiStep },
      { label: 'ai: generateText, MockLanguageModelV3', round: aiStep },
    ],
  },
]

/** `--only=seam,zhin`: only the contenders whose label starts with one of these (seam-runtime always), and no verdicts. */
const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',')
const wanted = (contender: Contender, index: number) => index === 0 || only === undefined || only.some((prefix) => contender.label.startsWith(prefix))

/**
 * The part of a contender's CPU per op spent outside the main thread (Node 22.19 and later): V8's
 * helper threads, mostly the collector's parallel scavenges and concurrent marking of what the
 * contender keeps alive (a journal's events).
 */
function helperThreads(measured: Measured): string {
  const helpers = helperCpuMsPerOp(measured)
  return Number.isNaN(helpers) ? '' : formatMs(helpers)
}

/** Each row's contenders interleaved, then the four targets (the last: a batch against 8 of the same run's single calls). */
export async function run(): Promise<BenchReport> {
  const rounds = numberOption('rounds', 16)
  const lines = [`peers: the same inc tool, one process, ${rounds} interleaved rounds a row, CPU time per op (median), ratio to seam-runtime (median of paired rounds)`]
  const measuredRows: Measured[][] = []
  for (const row of rows) {
    const measured = await interleave(row.contenders.filter(wanted), { rounds, warmup: WARMUP, settle: true })
    measuredRows.push(measured)
    const seam = measured[0]!
    const body = measured.map((m) => [m.label, formatMs(cpuMsPerOp(m)), helperThreads(m), row.per > 1 ? formatMs(cpuMsPerOp(m) / row.per) : '', m === seam ? '1.00×' : formatRatio(pairedCpuRatio(m, seam))])
    lines.push('', ...table([row.what, 'CPU per op', 'of it, helper threads', 'per call', 'ratio to seam'], body))
  }
  if (only !== undefined) return { name: 'peers', lines, verdicts: [] }
  const [call, batch] = measuredRows as [Measured[], Measured[]]
  const [seamOne, zhinOne, openAiOne] = call as [Measured, Measured, Measured]
  const [seamEight, zhinEight] = batch as [Measured, Measured]
  const oneCall = cpuMsPerOp(seamOne)
  const eight = cpuMsPerOp(seamEight)
  lines.push('', `a batch of ${BATCH} costs ${formatRatio(eight / oneCall)} one call (target ≤ ${BATCH}×)`)
  return {
    name: 'peers',
    lines,
    verdicts: [
      cpuVerdict('a call vs the zhin.js-style floor', seamOne, zhinOne, CALL_VS_ZHIN),
      cpuVerdict('a call vs @openai/agents', seamOne, openAiOne, CALL_VS_OPENAI),
      cpuVerdict(`a batch of ${BATCH} vs the zhin.js-style Promise.all`, seamEight, zhinEight, BATCH_VS_ZHIN),
      {
        label: `a batch of ${BATCH} vs ${BATCH} calls`,
        ratio: eight / (oneCall * BATCH),
        max: 1,
        pass: eight <= oneCall * BATCH,
        measured: `${formatMs(eight)} CPU`,
        baseline: `${BATCH} × ${formatMs(oneCall)} CPU`,
        target: `≤ ${BATCH} × one call`,
      },
    ],
  }
}

if (isMain(import.meta.url)) printReport(await run())
