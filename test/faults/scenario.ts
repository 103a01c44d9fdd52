import { z } from 'zod'
import { createRoot, definePlugin, defineTool, type JournalEvent, memoryJournal, type ToolCall, type ToolCallOutcome } from '../../src/index.js'
import { tappedJournal } from '../kit.js'
import { act, type Behaviour, drawFaults, type Faults, nonsense } from './behaviours.js'
import { Random } from './random.js'

export interface ScenarioReport {
  readonly problems: string[]
  /** Settled, but only after `HUNG_MS`: a fault unless the event loop was starved meanwhile. */
  readonly late?: { readonly ms: number; readonly problem: string }
}

/** Codes that say the body never started. */
const NOT_DISPATCHED = new Set(['UNKNOWN_TOOL', 'GENERATION_RETIRED', 'INVALID_ARGS', 'DENIED', 'APPROVAL_UNAVAILABLE', 'APPROVAL_TIMEOUT', 'ABORTED_BEFORE_DISPATCH', 'JOURNAL_UNAVAILABLE'])
/** How long a scenario may take before it counts as hung (every deadline in it is far shorter). */
const HUNG_MS = 3_000
/** How long a scenario past `HUNG_MS` is still waited on, to tell a late settle from none. */
const LATE_MS = 20_000

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const never = <T>() => new Promise<T>(() => {})

/**
 * One seeded scenario: a root whose hooks, guards, wrappers, ports, permission host and journal
 * misbehave as drawn from `seed`, a turn running one to four calls (one batch or one by one), a
 * caller abort and a `root.close()` at random moments. Returns what broke a promise (empty: none),
 * and, for a scenario that settled past `HUNG_MS` but within `LATE_MS` more, how late and where.
 */
export async function runScenario(seed: number): Promise<ScenarioReport> {
  const random = new Random(seed)
  const faults = drawFaults(random)
  const problems: string[] = []
  const order: string[] = []
  const inner = memoryJournal()
  let journalFaulted = false
  const journal = tappedJournal(inner, async (event: JournalEvent) => {
    if (faults.journal && event.kind === faults.journal.kind) {
      journalFaulted = true
      if (faults.journal.behaviour === 'fail') throw new Error('injected journal failure')
      if (faults.journal.behaviour === 'stall') await never()
      await delay(faults.ms)
    }
    if (event.kind === 'tool/call') order.push(`call:${event.callId}`)
    else if ('callId' in event) order.push(`${event.kind.slice(event.kind.indexOf('/') + 1)}:${event.callId}`)
  })
  const limits = {
    timeoutMs: random.int(5, 30),
    graceMs: random.int(5, 15),
    approvalTimeoutMs: random.int(10, 40),
    policyTimeoutMs: random.int(10, 30),
    journalTimeoutMs: random.int(10, 30),
    maxParallel: random.int(1, 4),
  }
  const root = await createRoot({
    journal,
    defaults: limits,
    permissions: faults.permission ? { check: () => act(faults.permission!, () => true, nonsense.permission, faults.ms) as boolean | Promise<boolean> } : undefined,
    plugin: definePlugin({ name: 'root', setup: (ctx) => setup(ctx, faults, random, order) }),
  })
  const controller = new AbortController()
  const calls = drawCalls(random)
  const signalOnTurn = random.chance(0.5)
  const turn = await root.beginTurn({
    session: 's',
    principal: { subjectId: 'u', roles: [] },
    signal: signalOnTurn ? controller.signal : undefined,
    ports: faults.approval ? { approval: { request: async (req) => act(faults.approval!, () => 'allowed-once' as const, nonsense.approval, faults.ms, req.signal) } } : {},
  })
  if (random.chance(0.4)) setTimeout(() => controller.abort(), random.int(0, 25))
  let closing: Promise<void> | undefined
  if (random.chance(0.3)) setTimeout(() => (closing = root.close()), random.int(0, 30))
  const signal = signalOnTurn ? undefined : controller.signal
  const batch = random.chance(0.5)
  const work = (async (): Promise<ToolCallOutcome[]> => {
    if (batch) return turn.tools.executeBatch(calls, { signal })
    const outcomes: ToolCallOutcome[] = []
    for (const call of calls) {
      // A close that ended the turn refuses the calls after it (`TURN_ENDED`), journaling nothing.
      if (turn.ended) break
      outcomes.push(await turn.tools.execute(call, { signal }))
    }
    return outcomes
  })()
  const began = performance.now()
  let late: ScenarioReport['late']
  const outcomes = await Promise.race([work, delay(HUNG_MS).then(() => undefined)])
  if (outcomes === undefined) {
    // Late or never: wait on, then say where each call stood (a loaded machine delays timers).
    const settledAt = await Promise.race([work.then(() => performance.now() - began), delay(LATE_MS).then(() => undefined)])
    const stages = calls.map((c) => `${c.callId}[${order.filter((o) => o.endsWith(`:${c.callId}`)).map((o) => o.split(':')[0]).join('>')}]`)
    const what = `the ${batch ? 'batch' : 'calls'}`
    if (settledAt === undefined) problems.push(`${what} never settled (waited ${HUNG_MS + LATE_MS} ms): ${stages.join(' ')}`)
    else late = { ms: settledAt, problem: `seed ${seed}: ${what} settled late (${Math.round(settledAt)} ms): ${stages.join(' ')} (${describe(faults)})` }
  } else {
    const ids = outcomes.map((o) => o.callId)
    if (ids.join() !== calls.slice(0, ids.length).map((c) => c.callId).join()) problems.push(`outcomes out of model order: ${ids.join()}`)
    for (const outcome of outcomes) {
      if (!Object.isFrozen(outcome)) problems.push(`${outcome.callId}: outcome not frozen`)
      const ran = order.includes(`body:${outcome.callId}`)
      if (ran && outcome.code !== undefined && NOT_DISPATCHED.has(outcome.code)) problems.push(`${outcome.callId}: ${outcome.code} but its body ran`)
      if (ran && order.indexOf(`call:${outcome.callId}`) > order.indexOf(`body:${outcome.callId}`)) problems.push(`${outcome.callId}: body before its durable tool/call`)
    }
  }
  const closed = await Promise.race([
    (async () => {
      await turn.end()
      await (closing ?? root.close())
      return true
    })(),
    delay(HUNG_MS).then(() => false),
  ])
  if (!closed) problems.push('root.close() never resolved')
  const events = await inner.read(turn.turnId)
  const count = (kind: string) => {
    const seen = new Map<string, number>()
    for (const e of events) if (e.kind === kind) seen.set((e as { callId: string }).callId, (seen.get((e as { callId: string }).callId) ?? 0) + 1)
    return seen
  }
  const journaledCalls = count('tool/call')
  const results = count('tool/result')
  for (const [id, n] of results) {
    if (n > 1) problems.push(`${id}: ${n} tool/results`)
    if (!journaledCalls.has(id)) problems.push(`${id}: tool/result without tool/call`)
  }
  if (!journalFaulted) {
    for (const id of journaledCalls.keys()) {
      const outcome = outcomes?.find((o) => o.callId === id)
      if (!results.has(id)) problems.push(`${id}: tool/call without tool/result (outcome ${outcome?.status} ${outcome?.code}${closing ? ', closed meanwhile' : ''})`)
    }
  }
  return { problems: problems.map((p) => `seed ${seed}: ${p} (${describe(faults)})`), ...(late ? { late } : {}) }
}

function setup(ctx: Parameters<NonNullable<Parameters<typeof definePlugin>[0]['setup']>>[0], faults: Faults, random: Random, order: string[]): void {
  const { ms } = faults
  const safe = random.chance(0.6)
  const body = (args: { n: number }, tool: { callId: string; signal: AbortSignal }) => {
    order.push(`body:${tool.callId}`)
    return act(faults.body, () => ({ n: args.n }), { big: 1n }, ms, tool.signal)
  }
  const input = z.object({ n: z.number() })
  ctx.addTool('work', defineTool({ description: 'Work.', input, approval: 'never', isConcurrencySafe: () => safe, execute: (args, tool) => body(args, tool) }))
  ctx.addTool(
    'risky',
    defineTool({
      description: 'Risky.',
      input,
      risk: faults.risk ? () => act(faults.risk!, () => 'it is risky', nonsense.risk, ms) as string | Promise<string | undefined> : undefined,
      execute: (args, tool) => body(args, tool),
    }),
  )
  if (faults.permission) ctx.addTool('admin', defineTool({ description: 'Admin.', input, approval: 'never', permissions: ['admin'], execute: (args, tool) => body(args, tool) }))
  const misbehave = <T>(behaviour: Behaviour | undefined, answer: () => T | Promise<T>, odd: unknown, signal: AbortSignal) =>
    behaviour === undefined ? answer() : act(behaviour, answer, odd, ms, signal)
  // Each piece of host code marks its call as it begins, so a hung scenario says where it stood.
  const step = <T>(stage: string, exec: { callId: string; signal: AbortSignal }, behaviour: Behaviour | undefined, answer: () => T | Promise<T>, odd: unknown) => {
    order.push(`${stage}:${exec.callId}`)
    return misbehave(behaviour, answer, odd, exec.signal)
  }
  if (faults.pre) ctx.hooks.preExecute((exec, next) => step('pre', exec, faults.pre, next, nonsense.pre))
  if (faults.guard) ctx.guards.add((exec) => step('guard', exec, faults.guard, () => undefined, nonsense.guard))
  if (faults.wrapper) {
    ctx.hooks.execute((exec, next) => {
      order.push(`wrap:${exec.callId}`)
      return faults.wrapperAfterNext ? next().then((result) => misbehave(faults.wrapper, () => result, nonsense.wrapper, exec.signal)) : misbehave(faults.wrapper, () => next(), nonsense.wrapper, exec.signal)
    })
  }
  if (faults.post) ctx.hooks.postExecute((exec, _result, next) => step('post', exec, faults.post, next, nonsense.post))
  if (faults.observerThrows) {
    ctx.hooks.result(() => {
      throw new Error('injected observer failure')
    })
  }
}

function drawCalls(random: Random): ToolCall[] {
  const calls: ToolCall[] = []
  const count = random.int(1, 4)
  for (let i = 0; i < count; i++) {
    const name = random.pick(['work', 'work', 'risky', 'admin', 'missing'])
    const args = random.pick<ToolCall['arguments']>(['{"n":1}', '{"n":2}', '{"n":', '{"n":"x"}', '', { n: 3 }])
    calls.push({ callId: `c${i}`, name, arguments: args })
  }
  return calls
}

function describe(faults: Faults): string {
  return Object.entries(faults)
    .filter(([, value]) => value !== undefined && value !== false)
    .map(([key, value]) => `${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(' ')
}
