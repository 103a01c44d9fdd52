/**
 * The built-in `run_code` tool: the model writes one program that calls the turn's tools. Offered
 * per turn when Code Mode is on (`createRoot({ codeMode })`, `beginTurn({ codeMode })`), with the
 * turn's own catalog as TypeScript declarations in its description. A call of it:
 * 1. runs the program in the sandbox; each `tools.x(args)` is a nested call of this call through
 *    the whole pipeline (see `CodeBridge`);
 * 2. completes with `{ value, logs }`, or fails with the run's code (`CODE_THREW`, a limit's code);
 * 3. parks (`APPROVAL_PENDING`) when a sub-call's approval is deferred: one round listing the
 *    sub-call's tool, arguments and reason, keeping the program's sub-calls so far and the time and
 *    randomness it read; a resume runs the program again from the start (see `resumeCode`).
 */
import { randomBytes } from 'node:crypto'
import type { OutcomeCode } from '../../errors.js'
import { toolFingerprint } from '../../features/schema.js'
import type { ToolCallOutcome } from '../../seams/calls.js'
import type { ParkedCall } from '../../seams/coordination.js'
import type { JsonSchema, ToolExecutionResult, ToolService } from '../../seams/types.js'
import { withBuiltinTool } from '../generations/tool-binding.js'
import type { AgentCapabilities, ToolCapability } from '../../seams/capabilities.js'
import type { Generation } from '../generations/generation.js'
import { redactText } from '../base/redact.js'
import { SeamBodyContext } from '../pipeline/body-context.js'
import { pendingSettlement } from '../pipeline/park.js'
import { awaitSettled, lookupParked, runAfterDecision } from '../pipeline/resume.js'
import { CallState, type TurnContext } from '../pipeline/state.js'
import type { CodeResume } from '../pipeline/deferral.js'
import { settle } from '../pipeline/settle.js'
import type { JournalEvent } from '../../seams/journal.js'
import { CodeBridge } from './bridge.js'
import { declarationsFor } from './declarations.js'
import { CODE_MODE_RULES } from './rules.js'
import { createCodeSandbox } from './sandbox.js'
import { type CodeLimits, type CodeRecorded, type CodeSandbox, DEFAULT_CODE_LIMITS } from './types.js'

export const RUN_CODE = 'run_code'
export const RUN_CODE_SOURCE = 'builtin:run_code'

/** `createRoot({ codeMode })`: `true`, or the limits of every run (see `CodeLimits`). */
export type CodeModeOption = boolean | { readonly limits?: Partial<CodeLimits>; readonly poolSize?: number }

/** The sandbox's failure codes a `run_code` outcome carries as they are (`CLOSED` is the runtime's own failure). */
const RUN_CODES: ReadonlySet<string> = new Set(['CODE_SYNTAX', 'CODE_THREW', 'CODE_TIMEOUT', 'CODE_CPU_LIMIT', 'CODE_MEMORY_LIMIT', 'CODE_OUTPUT_LIMIT', 'CODE_SUBCALL_LIMIT', 'CODE_SOURCE_TOO_LARGE'])

/** How much longer than a run's wall time its call may take: the sandbox's own limit answers first. */
const DEADLINE_SLACK_MS = 2_000

const PARAMETERS: JsonSchema = Object.freeze({
  type: 'object',
  properties: Object.freeze({ code: Object.freeze({ type: 'string', description: 'The program: the body of an async function, TypeScript or JavaScript.' }) }),
  required: Object.freeze(['code']),
  additionalProperties: false,
}) as JsonSchema

/**
 * A root's Code Mode: whether turns get `run_code` by default, the limits of a run, and the sandbox
 * (its workers start on the first run). `close()` stops the workers.
 */
export class CodeMode {
  readonly enabled: boolean
  readonly limits: CodeLimits
  readonly #poolSize: number | undefined
  #sandbox: CodeSandbox | undefined
  /** The `run_code`-extended snapshot of each catalog a turn saw: turns of one view share it. */
  readonly #offered = new WeakMap<AgentCapabilities, AgentCapabilities>()

  constructor(option: CodeModeOption | undefined) {
    this.enabled = option !== undefined && option !== false
    const given = typeof option === 'object' ? option : {}
    this.limits = Object.freeze({ ...DEFAULT_CODE_LIMITS, ...given.limits })
    this.#poolSize = given.poolSize
  }

  get sandbox(): CodeSandbox {
    this.#sandbox ??= createCodeSandbox({ limits: this.limits, ...(this.#poolSize === undefined ? {} : { poolSize: this.#poolSize }) })
    return this.#sandbox
  }

  /** `capabilities` with `run_code` added (declaring its tools), when `on`; as they are otherwise. */
  offer(capabilities: AgentCapabilities, generation: Generation, on: boolean): AgentCapabilities {
    if (!on) return capabilities
    let offered = this.#offered.get(capabilities)
    if (offered === undefined) {
      const { capability, service } = this.#tool(capabilities)
      offered = withBuiltinTool(capabilities, generation, capability, service) ?? capabilities
      this.#offered.set(capabilities, offered)
    }
    return offered
  }

  #tool(capabilities: AgentCapabilities): { capability: ToolCapability; service: ToolService } {
    const tools = capabilities.tools
    const toolNames = tools.map((tool) => tool.name)
    const declarations = declarationsFor(
      tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.parameters, ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }) })),
    )
    const description = [
      "Run one program that calls this turn's tools, instead of calling them one by one: for work that takes several calls, loops over data, or combines results. It returns `{ value, logs }`.",
      '',
      CODE_MODE_RULES,
      '',
      '```ts',
      declarations,
      '```',
    ].join('\n')
    const capability: ToolCapability = Object.freeze({
      name: RUN_CODE,
      description,
      parameters: PARAMETERS,
      source: RUN_CODE_SOURCE,
      owner: capabilities.owner,
      kind: 'seam',
      // The program asks nothing itself: each of its calls goes through its own tool's approval.
      approval: 'never',
      permissions: Object.freeze([]),
      platforms: Object.freeze([]),
      scopes: Object.freeze([]),
      timeoutMs: this.limits.wallMs + DEADLINE_SLACK_MS,
      fingerprint: toolFingerprint(RUN_CODE, description, PARAMETERS),
    })
    const service: ToolService = {
      id: RUN_CODE_SOURCE,
      description: "The runtime's Code Mode.",
      schema: () => [],
      execute: (_scope, _tool, input, context) => {
        const outer = SeamBodyContext.callOf(context)
        if (outer === undefined || context === undefined) return Promise.resolve({ success: false, error: 'run_code runs only inside a turn runtime' })
        return this.#run(outer, (input as { code?: unknown } | null)?.code, context.signal, toolNames)
      },
    }
    return { capability, service }
  }

  async #run(outer: CallState, code: unknown, signal: AbortSignal, toolNames: string[]): Promise<ToolExecutionResult> {
    if (typeof code !== 'string') return { success: false, error: '`code` must be a string' }
    outer.parksNested = true
    const bridge = new CodeBridge(outer, signal)
    const recorded = outer.codeResume?.round.code?.recorded
    const result = await this.sandbox.run(
      { source: code, toolNames, limits: this.limits, signal, ...(recorded === undefined ? {} : { replay: { now: [...recorded.now], random: [...recorded.random] } }) },
      bridge,
    )
    if (bridge.diverged !== undefined) {
      settle(outer, { status: 'failed', code: 'CODE_DIVERGED', message: bridge.diverged.message, details: { subCall: bridge.diverged.index } })
      return { success: false, error: bridge.diverged.message }
    }
    if (bridge.waiting !== undefined) {
      await parkRun(outer, bridge, result.recorded)
      return { success: false, error: 'parked' }
    }
    if (result.outcome === 'completed') {
      return { success: true, output: result.value === undefined ? { logs: result.logs } : { value: result.value, logs: result.logs } }
    }
    if (result.code === 'ABORTED') {
      settle(outer, { status: 'cancelled', code: 'ABORTED', message: `The program was cancelled: ${result.message}` })
    } else {
      const code = RUN_CODES.has(result.code) ? (result.code as OutcomeCode) : 'TOOL_ERROR'
      settle(outer, { status: 'failed', code, message: `The program failed (${result.code}): ${result.message}`, details: { logs: result.logs } })
    }
    return { success: false, error: result.message }
  }

  close(): Promise<void> {
    return this.#sandbox?.close() ?? Promise.resolve()
  }
}

/**
 * Parks the run for its waiting sub-call: one round of the outer call listing the sub-call's tool,
 * arguments and reason, with three seqs of the turn kept, in this order: the sub-call's
 * `approval/decided`, its `tool/result`, and the run's own `tool/result` (a run parked again keeps
 * its first `resultSeq`).
 */
async function parkRun(outer: CallState, bridge: CodeBridge, recorded: CodeRecorded): Promise<void> {
  const { ctx } = outer
  const { turn } = ctx
  const waiting = bridge.waiting!
  const sub = waiting.state
  const deferral = sub.deferral!
  const capability = sub.capability!
  const resume = outer.codeResume
  const previous = resume?.round
  const fresh = resume?.fresh ?? ctx.nextSeq
  const coordination = turn.journal.coordination
  const askedAt = Date.now()
  const decidedSeq = fresh()
  const subResultSeq = fresh()
  const round: ParkedCall = {
    turnId: turn.turnId,
    callId: outer.call.callId,
    round: (previous?.round ?? 0) + 1,
    token: randomBytes(18).toString('base64url'),
    name: sub.call.name,
    arguments: JSON.stringify(sub.args ?? {}),
    summary: redactText(deferral.summary),
    reason: redactText(deferral.reason),
    answers: deferral.answers,
    session: turn.session,
    subjectId: turn.principal.subjectId,
    roles: turn.principal.roles,
    owner: turn.owner,
    ...(turn.origin === undefined ? {} : { origin: turn.origin }),
    generation: ctx.generation.number,
    source: capability.source,
    fingerprint: capability.fingerprint,
    decidedSeq,
    resultSeq: previous?.resultSeq ?? fresh(),
    askedAt,
    expiresAt: askedAt + ctx.limits.approvalTtlMs,
    host: coordination.host,
    code: {
      tool: outer.call.name,
      arguments: outer.raw ?? '{}',
      index: waiting.index,
      subCallId: sub.call.callId,
      subResultSeq,
      recorded: { now: [...recorded.now], random: [...recorded.random] },
      // JSON arrays have no holes: a place the program never reached reads as a call not yet run.
      calls: Array.from(bridge.calls, (call) => call ?? { name: '', arguments: '' }),
    },
  }
  try {
    await coordination.park(round)
  } catch (error) {
    settle(outer, { status: 'failed', code: 'JOURNAL_UNAVAILABLE', message: `The program's call to "${sub.call.name}" needs approval, and the journal could not record it: ${String(error)}` })
    return
  }
  outer.parked = round
  outer.resumeToken = round.token
  settle(outer, pendingSettlement(round))
}

/**
 * Resumes a parked Code Mode run (`TurnContext.resumeCode`), in whatever process holds `ctx`:
 * 1. the round's settle claim is taken (`void` when the waiting sub-call's tool changed, which asks
 *    its question again); only the winner goes on, every other resume waits for its result;
 * 2. the run's tool is looked up and its guards run again; then the program runs from the start
 *    with the round's sub-calls answered from it, the waiting one continued from its decision, and
 *    `Date.now()` / `Math.random()` handing back what they gave the first run;
 * 3. the run's `tool/result` is written at the seq its turn kept; everything else the replay writes
 *    takes `fresh` seqs.
 */
export async function resumeCode(ctx: TurnContext, round: ParkedCall, signal: AbortSignal, fresh: () => number): Promise<ToolCallOutcome> {
  const code = round.code!
  const coordination = ctx.turn.journal.coordination
  const tool = ctx.tools.get(round.name)?.capability
  const changed = tool === undefined || tool.fingerprint !== round.fingerprint || tool.source !== round.source
  const kind = changed ? 'void' : round.decision!.answer === 'rejected' ? 'reject' : 'resume'
  const claim = await coordination.settle(round.token, { kind, host: coordination.host, at: Date.now() })
  if (claim === undefined || !claim.won) return awaitSettled(ctx, claim?.call ?? round, signal)
  const kept = [round.resultSeq]
  const outerCtx: TurnContext = { ...ctx, nextSeq: () => kept.shift() ?? fresh() }
  const state = new CallState(outerCtx, { callId: round.callId, name: code.tool, arguments: code.arguments }, signal)
  state.journaled = true
  state.raw = code.arguments
  state.parked = round
  state.codeResume = { round, changed, fresh, journaled: await subCallsOf(ctx, round) }
  await lookupParked(state)
  return runAfterDecision(state)
}

/** The run's direct sub-calls in its turn's journal, by call id, with their `tool/result` (`null` while open). */
async function subCallsOf(ctx: TurnContext, round: ParkedCall): Promise<CodeResume['journaled']> {
  const prefix = `${round.callId}/`
  const subs = new Map<string, Extract<JournalEvent, { kind: 'tool/result' }> | null>()
  for (const event of await ctx.turn.journal.read(round.turnId)) {
    if (event.kind !== 'tool/call' && event.kind !== 'tool/result') continue
    if (!event.callId.startsWith(prefix) || event.callId.indexOf('/', prefix.length) !== -1) continue
    if (event.kind === 'tool/result') subs.set(event.callId, event)
    else if (!subs.has(event.callId)) subs.set(event.callId, null)
  }
  return subs
}
