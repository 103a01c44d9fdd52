/**
 * Issue 30: the Code Mode sandbox (src/runtime/code/). In one process, interleaved rounds, medians:
 * - cold start: a new sandbox's first run (a worker thread started, the QuickJS module loaded);
 * - a warm run with no sub-calls (target ≤ 2 ms wall at the median), against a direct function call;
 * - 1 and 100 sequential sub-calls and 10 parallel ones, the host calling the tool body directly,
 *   against calling the body directly;
 * - 100 sequential sub-calls whose host runs each through the pipeline (`turn.tools.execute`),
 *   against the same executes without a sandbox: the cost per sub-call at most 2× a direct execute
 *   (and, for scale, a bare message round trip to a worker thread: the floor of any such design);
 * - memory per concurrent run: RSS of the process (workers included) with 50 runs parked on a sub-call.
 * - `run_code` through the real pipeline (`turn.tools.execute` of `run_code` on a root with Code
 *   Mode, every sub-call a nested call journaled as its own pair): a warm run with no sub-calls,
 *   1 and 100 sequential sub-calls and 10 parallel ones, against direct executes of the same tool
 *   in the same rounds (per sub-call at most 2× a direct execute), and RSS per concurrent run with
 *   50 `run_code` calls parked on a sub-call whose body waits.
 * - the same programs through Vercel's `@ai-sdk/code-mode` when it can be loaded: it needs `ai`
 *   7.0.85 as a peer, this repository has `ai` 6, so it is not a dev dependency; install it aside
 *   (`npm install --prefix DIR @ai-sdk/code-mode@1.0.42 ai@7.0.85`) and set SEAM_BENCH_AI_SDK_CODE_MODE=DIR.
 * `npm run bench -- code`, or `node --import tsx bench/code.ts`.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { z } from 'zod'
import { createRoot, definePlugin, defineTool, memoryJournal } from '../src/index.js'
import { type CodeHost, type CodeRunResult, type CodeSandbox, createCodeSandbox } from '../src/runtime/code/index.js'
import {
  type BenchReport,
  budget,
  cpuMsPerOp,
  type Contender,
  formatBytes,
  formatMs,
  formatRatio,
  interleave,
  isMain,
  median,
  msPerOp,
  pairedRatio,
  printReport,
  table,
  timeLoop,
  type Verdict,
} from './harness.js'
import { ARGUMENTS_TEXT, DESCRIPTION, lookupBody, lookupInput, lookupPlugin, NAME } from './lookup-tool.js'

const ROUNDS = 10
const WARMUP = 2
const WARM_BUDGET_MS = 2
const SUBCALL_MAX = 2
const CONCURRENT = 50
const COLD_STARTS = 5
const POOL = 2
/** Work on each side of a round trip before it sends (about a program's slice, or a pipeline call): the other thread has gone to sleep. */
const WORK_US = 50

const ARGS = { id: 'T-1', limit: 3 }
const NEVER = new AbortController().signal
const PROGRAMS = {
  none: 'return 1',
  one: `return (await tools.${NAME}({ id: 'T-1', limit: 3 })).title`,
  hundred: `let n = 0\nfor (let i = 0; i < 100; i++) n += (await tools.${NAME}({ id: 'T-1', limit: 3 })).title.length\nreturn n`,
  parallel: `const all = await Promise.all(Array.from({ length: 10 }, () => tools.${NAME}({ id: 'T-1', limit: 3 })))\nreturn all.length`,
} as const
type Program = keyof typeof PROGRAMS
/** Sub-calls each program makes, and how many runs one timed round makes of it. */
const SHAPE: Record<Program, { calls: number; runs: number }> = {
  none: { calls: 0, runs: 20 },
  one: { calls: 1, runs: 20 },
  hundred: { calls: 100, runs: 2 },
  parallel: { calls: 10, runs: 10 },
}

const directHost: CodeHost = { callTool: async (_index, _name, args) => ({ ok: true, value: await lookupBody(args as { id: string }) }) }

function expectCompleted(result: CodeRunResult): void {
  if (result.outcome !== 'completed') throw new Error(`bench run failed: ${result.code} ${result.message}`)
}

let fresh = 0

/** `fresh`: a source never run before each time (a comment makes it new), so esbuild strips it again. */
function seamContender(sandbox: CodeSandbox, program: Program, host: () => Promise<{ host: CodeHost; done: () => Promise<void> }>, label: string, newSource = false): Contender {
  return {
    label,
    async round() {
      const { host: h, done } = await host()
      const sample = await timeLoop(SHAPE[program].runs, async () => {
        const source = newSource ? `${PROGRAMS[program]}\n// ${fresh++}` : PROGRAMS[program]
        expectCompleted(await sandbox.run({ source, toolNames: [NAME] }, h))
      })
      await done()
      return sample
    },
  }
}

/** A host that runs every sub-call through a fresh turn's pipeline, as `run_code` will. */
async function pipelineHost(): Promise<{ host: CodeHost; done: () => Promise<void> }> {
  const root = await createRoot({ plugin: lookupPlugin, journal: memoryJournal(), repair: false })
  const turn = await root.beginTurn({ session: 'bench', principal: { subjectId: 'bench' } })
  let n = 0
  const host: CodeHost = {
    async callTool(_index, name, args) {
      const outcome = await turn.tools.execute({ callId: `c${n++}`, name, arguments: JSON.stringify(args) })
      return outcome.status === 'completed' ? { ok: true, value: outcome.value } : { ok: false, code: outcome.code ?? 'TOOL_ERROR', message: 'failed' }
    },
  }
  return {
    host,
    done: async () => {
      await turn.end()
      await root.close()
    },
  }
}

function directExecutes(calls: number, runs: number, label: string): Contender {
  return {
    label,
    async round() {
      const { host, done } = await pipelineHost()
      const sample = await timeLoop(runs, async () => {
        for (let i = 0; i < calls; i++) await host.callTool(i, NAME, ARGS, { signal: NEVER })
      })
      await done()
      return sample
    },
  }
}

function directCalls(program: Program, label: string): Contender {
  const { calls, runs } = SHAPE[program]
  return {
    label,
    round: () =>
      timeLoop(runs, async () => {
        if (program === 'parallel') await Promise.all(Array.from({ length: calls }, () => lookupBody(ARGS)))
        else for (let i = 0; i < calls; i++) await lookupBody(ARGS)
      }),
  }
}

/**
 * The floor of any sandbox in a worker thread: one message there and one back, per sub-call. With
 * `workUs`, each side first works that long (busy), as a program's slice and the pipeline's call
 * do, so each message finds the other thread gone to sleep and has to wake it (the echo worker must
 * be `echoWorker(workUs)`); the time worked is left out of the figure.
 */
function roundTrips(worker: Worker, label: string, workUs = 0): Contender {
  const { calls, runs } = SHAPE.hundred
  const trip = () =>
    new Promise<void>((resolve) => {
      worker.once('message', () => resolve())
      busyFor(workUs)
      worker.postMessage({ type: 'calls', id: 1, calls: [[0, NAME, ARGUMENTS_TEXT]] })
    })
  return {
    label,
    round: () =>
      timeLoop(runs, async () => {
        for (let i = 0; i < calls; i++) await trip()
      }),
  }
}

function busyFor(us: number): void {
  const end = performance.now() + us / 1000
  while (performance.now() < end);
}

/** A worker that answers each message with itself, after working `workUs` (busy). */
function echoWorker(workUs: number): Worker {
  const source = `const { parentPort } = require('node:worker_threads')
    parentPort.on('message', (m) => { const end = performance.now() + ${workUs} / 1000; while (performance.now() < end); parentPort.postMessage(m) })`
  return new Worker(source, { eval: true })
}

/** `lookup_ticket`, and `hold`, whose body waits until the bench lets it go (memory per parked run). */
function codePlugin(held: (() => void)[]) {
  return definePlugin({
    name: 'bench-code',
    setup(ctx) {
      ctx.addTool(NAME, defineTool({ description: DESCRIPTION, input: lookupInput, approval: 'never', execute: lookupBody }))
      ctx.addTool(
        'hold',
        defineTool({ description: 'Waits for the bench.', input: z.object({}), approval: 'never', execute: () => new Promise<{ title: string }>((resolve) => held.push(() => resolve({ title: 'x' }))) }),
      )
    },
  })
}

type CodeRoot = Awaited<ReturnType<typeof createRoot>>

/** `run_code` through `turn.tools.execute`: one turn per round, `runs` runs of `program` in it. */
function runCodeContender(root: CodeRoot, program: Program, label: string): Contender {
  const code = JSON.stringify({ code: PROGRAMS[program] })
  let n = 0
  return {
    label,
    async round() {
      const turn = await root.beginTurn({ session: 'bench', principal: { subjectId: 'bench' } })
      const sample = await timeLoop(SHAPE[program].runs, async () => {
        const outcome = await turn.tools.execute({ callId: `rc${n++}`, name: 'run_code', arguments: code })
        if (outcome.status !== 'completed') throw new Error(`bench run_code ${outcome.status}: ${outcome.code} ${JSON.stringify(outcome.content)}`)
      })
      await turn.end()
      return sample
    },
  }
}

/** `calls` direct executes of the tool per run (in parallel for `parallel`), `runs` runs in one turn per round. */
function directExecuteContender(root: CodeRoot, program: Program, label: string): Contender {
  const { calls, runs } = SHAPE[program]
  let n = 0
  return {
    label,
    async round() {
      const turn = await root.beginTurn({ session: 'bench', principal: { subjectId: 'bench' } })
      const one = async () => {
        const outcome = await turn.tools.execute({ callId: `de${n++}`, name: NAME, arguments: ARGUMENTS_TEXT })
        if (outcome.status !== 'completed') throw new Error(`bench execute ${outcome.status}`)
      }
      const sample = await timeLoop(runs, async () => {
        if (program === 'parallel') await Promise.all(Array.from({ length: calls }, one))
        else for (let i = 0; i < calls; i++) await one()
      })
      await turn.end()
      return sample
    },
  }
}

/** RSS growth per `run_code` call with CONCURRENT of them each parked on a `hold` sub-call. */
async function runCodeMemory(root: CodeRoot, held: (() => void)[]): Promise<number> {
  const turn = await root.beginTurn({ session: 'bench-memory', principal: { subjectId: 'bench' } })
  const code = JSON.stringify({ code: 'const big = Array.from({ length: 1000 }, (_, i) => ({ i }))\nreturn (await tools.hold({})).title + big.length' })
  const before = process.memoryUsage().rss
  const runs = Array.from({ length: CONCURRENT }, (_, i) => turn.tools.execute({ callId: `mem${i}`, name: 'run_code', arguments: code }))
  while (held.length < CONCURRENT) await new Promise((resolve) => setTimeout(resolve, 5))
  const during = process.memoryUsage().rss
  for (const release of held.splice(0)) release()
  for (const outcome of await Promise.all(runs)) if (outcome.status !== 'completed') throw new Error(`bench run_code ${outcome.status}`)
  await turn.end()
  return (during - before) / CONCURRENT
}

interface Peer {
  version: string
  run(js: string): Promise<unknown>
}

/** `@ai-sdk/code-mode` from SEAM_BENCH_AI_SDK_CODE_MODE, or why it is not measured. */
async function loadPeer(): Promise<Peer | string> {
  const dir = process.env.SEAM_BENCH_AI_SDK_CODE_MODE
  if (!dir) return '@ai-sdk/code-mode not measured: it needs ai 7.0.85 as a peer (this repository has ai 6); install it aside and set SEAM_BENCH_AI_SDK_CODE_MODE (bench/README.md)'
  try {
    const base = join(dir, 'node_modules')
    const version = (JSON.parse(readFileSync(join(base, '@ai-sdk/code-mode/package.json'), 'utf8')) as { version: string }).version
    const mode = (await import(pathToFileURL(join(base, '@ai-sdk/code-mode/dist/index.js')).href)) as {
      experimental_runCodeMode(input: { js: string; tools: Record<string, unknown> }): Promise<unknown>
    }
    const ai = (await import(pathToFileURL(join(base, 'ai/dist/index.js')).href)) as { tool(t: unknown): unknown; jsonSchema(s: unknown): unknown }
    const tools = { [NAME]: ai.tool({ description: 'Look up a ticket.', inputSchema: ai.jsonSchema({ type: 'object' }), execute: lookupBody }) }
    return { version, run: (js) => mode.experimental_runCodeMode({ js, tools }) }
  } catch (error) {
    return `@ai-sdk/code-mode could not be loaded from ${dir}: ${error instanceof Error ? error.message : String(error)}`
  }
}

function peerContender(peer: Peer, program: Program): Contender {
  // The peer is one to two orders slower per run: fewer runs a round keep the bench short.
  const runs = Math.max(1, Math.ceil(SHAPE[program].runs / 5))
  return { label: `@ai-sdk/code-mode ${peer.version}: ${program}`, round: () => timeLoop(runs, () => peer.run(PROGRAMS[program])) }
}

async function coldStarts(): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < COLD_STARTS; i++) {
    const started = performance.now()
    const sandbox = createCodeSandbox({ poolSize: 1 })
    expectCompleted(await sandbox.run({ source: PROGRAMS.none, toolNames: [] }, directHost))
    times.push(performance.now() - started)
    await sandbox.close()
  }
  return times
}

/** RSS growth per run with CONCURRENT runs each parked on a sub-call the host has not answered. */
async function memoryPerRun(sandbox: CodeSandbox): Promise<number> {
  const release: (() => void)[] = []
  let issued = 0
  let allIssued: () => void = () => {}
  const issuedAll = new Promise<void>((resolve) => {
    allIssued = resolve
  })
  const host: CodeHost = {
    callTool: () =>
      new Promise((resolve) => {
        release.push(() => resolve({ ok: true, value: { title: 'x' } }))
        if (++issued === CONCURRENT) allIssued()
      }),
  }
  const before = process.memoryUsage().rss
  const runs = Array.from({ length: CONCURRENT }, () =>
    sandbox.run({ source: `const big = Array.from({ length: 1000 }, (_, i) => ({ i }))\nreturn (await tools.${NAME}({})).title + big.length`, toolNames: [NAME] }, host),
  )
  await issuedAll
  const during = process.memoryUsage().rss
  for (const r of release) r()
  for (const result of await Promise.all(runs)) expectCompleted(result)
  return (during - before) / CONCURRENT
}

export async function run(): Promise<BenchReport> {
  const cold = await coldStarts()
  const sandbox = createCodeSandbox({ poolSize: POOL })
  const held: (() => void)[] = []
  const codeRoot = await createRoot({ plugin: codePlugin(held), journal: memoryJournal(), repair: false, codeMode: { poolSize: POOL } })
  const peer = await loadPeer()
  try {
    const direct = async () => ({ host: directHost, done: async () => {} })
    const programs: Program[] = ['none', 'one', 'hundred', 'parallel']
    const contenders: Contender[] = []
    for (const program of programs) {
      contenders.push(directCalls(program, `direct function calls: ${program}`))
      contenders.push(seamContender(sandbox, program, direct, `seam sandbox: ${program}`))
      if (typeof peer !== 'string') contenders.push(peerContender(peer, program))
    }
    contenders.push(seamContender(sandbox, 'none', direct, 'seam sandbox: none, a new source each run', true))
    const echo = echoWorker(0)
    const sleepy = echoWorker(WORK_US)
    const viaPipeline: Contender[] = [
      roundTrips(echo, '100 bare worker round trips'),
      roundTrips(sleepy, '100 worker round trips after work', WORK_US),
      seamContender(sandbox, 'hundred', pipelineHost, 'seam sandbox, 100 sub-calls through execute'),
      directExecutes(100, SHAPE.hundred.runs, '100 direct executes'),
    ]
    for (const program of programs) {
      viaPipeline.push(runCodeContender(codeRoot, program, `run_code: ${program}`))
      if (program !== 'none') viaPipeline.push(directExecuteContender(codeRoot, program, `direct executes: ${program}`))
    }
    const measured = await interleave([...contenders, ...viaPipeline], { rounds: ROUNDS, warmup: WARMUP })
    const byLabel = new Map(measured.map((m) => [m.label, m]))
    const get = (label: string) => byLabel.get(label)!
    const memory = await memoryPerRun(sandbox)
    const runCodeRss = await runCodeMemory(codeRoot, held)
    await echo.terminate()
    await sleepy.terminate()

    const rows: string[][] = []
    for (const program of programs) {
      const seam = get(`seam sandbox: ${program}`)
      const base = get(`direct function calls: ${program}`)
      const peerRow = typeof peer === 'string' ? undefined : get(`@ai-sdk/code-mode ${peer.version}: ${program}`)
      rows.push([
        `${program} (${SHAPE[program].calls} sub-calls)`,
        formatMs(msPerOp(base)),
        formatMs(msPerOp(seam)),
        peerRow ? formatMs(msPerOp(peerRow)) : '—',
        peerRow ? formatRatio(msPerOp(peerRow) / msPerOp(seam)) : '—',
      ])
    }
    const warm = get('seam sandbox: none')
    rows.push(['none, a new source each run (esbuild strips it)', '', formatMs(msPerOp(get('seam sandbox: none, a new source each run'))), '', ''])
    // (the run with 100 sub-calls − a warm run with none) / 100: what one sub-call adds.
    const perSubCall = (runLabel: string, executes: string, calls: number) => {
      const sub = (msPerOp(get(runLabel)) - msPerOp(warm)) / calls
      const exec = msPerOp(get(executes)) / calls
      return { sub, exec, ratio: sub / exec }
    }
    const hundred = perSubCall('seam sandbox, 100 sub-calls through execute', '100 direct executes', 100)
    const directSub = (msPerOp(get('seam sandbox: hundred')) - msPerOp(warm)) / 100
    const trip = msPerOp(get('100 bare worker round trips')) / 100
    const wakingTrip = msPerOp(get('100 worker round trips after work')) / 100 - (2 * WORK_US) / 1000
    // CPU of the whole process (both threads), less the time each side worked on purpose.
    const tripCpu = cpuMsPerOp(get('100 bare worker round trips')) / 100
    const wakingTripCpu = cpuMsPerOp(get('100 worker round trips after work')) / 100 - (2 * WORK_US) / 1000
    const subCpu = (cpuMsPerOp(get('seam sandbox, 100 sub-calls through execute')) - cpuMsPerOp(warm)) / 100
    const execCpu = cpuMsPerOp(get('100 direct executes')) / 100
    // run_code through the pipeline: (a run with N sub-calls − a run with none) / N, against one direct execute.
    const runCodeWarm = msPerOp(get('run_code: none'))
    const viaRunCode = (program: Exclude<Program, 'none'>) => {
      const { calls } = SHAPE[program]
      const run = msPerOp(get(`run_code: ${program}`))
      const sub = (run - runCodeWarm) / calls
      const exec = msPerOp(get(`direct executes: ${program}`)) / calls
      return { run, sub, exec, ratio: sub / exec }
    }
    const rc = { one: viaRunCode('one'), hundred: viaRunCode('hundred'), parallel: viaRunCode('parallel') }
    const verdicts: Verdict[] = [
      budget('run_code warm run, no sub-calls, through execute (median wall)', runCodeWarm, WARM_BUDGET_MS, formatMs),
      {
        label: 'run_code: per sub-call, 100 sequential, vs a direct execute',
        ratio: rc.hundred.ratio,
        max: SUBCALL_MAX,
        pass: rc.hundred.ratio <= SUBCALL_MAX,
        measured: `${formatMs(rc.hundred.sub)} per sub-call`,
        baseline: `execute: ${formatMs(rc.hundred.exec)}`,
        target: `≤ ${SUBCALL_MAX}×`,
      },
      budget('warm run, no sub-calls, source seen before (median wall)', msPerOp(warm), WARM_BUDGET_MS, formatMs, `direct call: ${formatMs(msPerOp(get('direct function calls: none')))}`),
      {
        label: 'sandbox host calling execute: per sub-call, 100 sequential, vs a direct execute',
        ratio: hundred.ratio,
        max: SUBCALL_MAX,
        pass: hundred.ratio <= SUBCALL_MAX,
        measured: `${formatMs(hundred.sub)} per sub-call`,
        baseline: `execute: ${formatMs(hundred.exec)}`,
        target: `≤ ${SUBCALL_MAX}×`,
      },
    ]
    const peerLine = typeof peer === 'string' ? peer : `peer: @ai-sdk/code-mode ${peer.version} (QuickJS in worker threads, experimental_runCodeMode, direct tool bodies)`
    return {
      name: 'code',
      lines: [
        `code: the Code Mode sandbox (QuickJS sync build in ${POOL} pooled workers); ${ROUNDS} interleaved rounds, medians per run`,
        `cold start (new sandbox, first run, ${COLD_STARTS} times): median ${formatMs(median(cold))} (${cold.map((t) => formatMs(t)).join(', ')})`,
        peerLine,
        ...table(['program, tool body called directly', 'direct calls', 'seam sandbox', 'ai-sdk', 'ai-sdk / seam'], rows),
        '',
        ...table(
          ['through the pipeline', 'per sub-call', 'direct execute', 'ratio', 'CPU, both threads'],
          [
            ['100 sequential sub-calls, per sub-call', formatMs(hundred.sub), formatMs(hundred.exec), formatRatio(hundred.ratio), `${formatMs(subCpu)} / ${formatMs(execCpu)}`],
            ['  the same, tool body called directly', formatMs(directSub), '', '', ''],
            ['  a bare worker message round trip', formatMs(trip), '', '', formatMs(tripCpu)],
            [`  the same, each side working ${WORK_US} µs first (the time worked left out)`, formatMs(wakingTrip), '', '', formatMs(wakingTripCpu)],
          ],
        ),
        `sandbox run vs direct, 100 through execute: ${formatRatio(pairedRatio(get('seam sandbox, 100 sub-calls through execute'), get('100 direct executes')))} per run`,
        '',
        ...table(
          ['run_code through turn.tools.execute', 'per run', 'per sub-call', 'direct execute', 'ratio'],
          [
            ['warm run, no sub-calls', formatMs(runCodeWarm), '', '', ''],
            ...(['one', 'hundred', 'parallel'] as const).map((program) => [
              `${SHAPE[program].calls} ${program === 'parallel' ? 'parallel' : 'sequential'} sub-call${SHAPE[program].calls === 1 ? '' : 's'}`,
              formatMs(rc[program].run),
              formatMs(rc[program].sub),
              formatMs(rc[program].exec),
              formatRatio(rc[program].ratio),
            ]),
          ],
        ),
        `memory per concurrent run_code call (${CONCURRENT} parked on a sub-call whose body waits, process RSS with workers): ${formatBytes(runCodeRss)}`,
        `memory per concurrent run (${CONCURRENT} runs parked on a sub-call, process RSS with workers): ${formatBytes(memory)}`,
      ],
      verdicts,
    }
  } finally {
    await sandbox.close()
    await codeRoot.close()
  }
}

if (isMain(import.meta.url)) {
  printReport(await run())
  process.exit(0)
}

