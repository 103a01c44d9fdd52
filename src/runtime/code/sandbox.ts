/**
 * `createCodeSandbox()`: runs programs in QuickJS inside pooled worker threads and bridges their
 * sub-calls to a host. A run:
 *
 * 1. refuses a source over `sourceBytes` (`CODE_SOURCE_TOO_LARGE`), strips its types with esbuild
 *    as the body of an async function (`CODE_SYNTAX`);
 * 2. runs in a fresh QuickJS runtime of a pooled worker; each `tools.x(args)` reaches
 *    `host.callTool(index, name, args)` at once, in issue order, and the answer settles the
 *    program's promise as JSON (a failure rejects it with an Error carrying `code`);
 * 3. ends when the program's promise settles *and* every sub-call it issued has settled (their
 *    answers are not delivered: no program code runs after its return); a limit ends it at once;
 * 4. past `wallMs` (+ a grace for the worker to answer), the worker is terminated and replaced.
 */
import { transform } from 'esbuild'
import { SeamError } from '../../errors.js'
import { busyBase, type PoolWorker, WorkerPool } from './pool.js'
import {
  type CodeFailureCode,
  type CodeHost,
  type CodeLimits,
  type CodeRunCode,
  type CodeRunRequest,
  type CodeRunResult,
  type CodeSandbox,
  type CodeSandboxOptions,
  DEFAULT_CODE_LIMITS,
  type SubCallSettlement,
  type WorkerRunEnd,
} from './types.js'

/** How long a worker may take to answer a cancel before it is terminated. */
const CANCEL_GRACE_MS = 250
/** How often the watchdog looks, and how far past `cpuMs` one slice may run before its worker is terminated. */
const WATCHDOG_MS = 100
const WATCHDOG_GRACE_MS = 250
const PROGRAM_PREFIX = '(async () => {'

interface ActiveRun {
  id: number
  worker: PoolWorker
  host: CodeHost
  started: number
  /** Sub-calls the host has not answered yet. */
  pending: Set<Promise<void>>
  /** Aborts the sub-calls still running when the run ends without waiting for them. */
  controller: AbortController
  cpuMs: number
  settle(result: CodeRunResult): void
  ended: boolean
  timer: ReturnType<typeof setTimeout> | undefined
}

export function createCodeSandbox(options: CodeSandboxOptions = {}): CodeSandbox {
  const defaults: CodeLimits = { ...DEFAULT_CODE_LIMITS, ...options.limits }
  const active = new Map<number, ActiveRun>()
  let nextId = 1
  let closed: Promise<void> | undefined
  const pool = new WorkerPool(Math.max(1, options.poolSize ?? 2), {
    message(_worker, message) {
      if (message.type === 'calls') for (const [index, name, args] of message.calls) call(message.id, index, name, args)
      else if (message.type === 'done') ended(message.id, message.end)
    },
    exit(worker, reason) {
      for (const id of worker.runs) {
        const run = active.get(id)
        if (!run) continue
        const code: CodeFailureCode = reason === 'out of memory' ? 'CODE_MEMORY_LIMIT' : closed ? 'CLOSED' : 'CODE_TIMEOUT'
        finish(run, fail(code, reason === 'out of memory' ? 'the sandbox worker ran out of memory' : reason))
      }
    },
  })

  // QuickJS calls its interrupt handler every few thousand operations; a program whose every operation
  // is one long built-in (filling a huge array) can starve it. The watchdog ends such a slice from here.
  let watchdog: ReturnType<typeof setInterval> | undefined
  function watch(): void {
    if (active.size === 0) {
      clearInterval(watchdog)
      watchdog = undefined
      return
    }
    const now = Date.now()
    for (const run of active.values()) {
      const since = Atomics.load(run.worker.busy, 0)
      if (since === 0 || Atomics.load(run.worker.busy, 1) !== run.id) continue
      if (now - (busyBase + since) <= run.cpuMs + WATCHDOG_GRACE_MS) continue
      finish(run, fail('CODE_CPU_LIMIT', `the program ran for more than ${run.cpuMs} ms of CPU time in one stretch; its worker was terminated`))
      void run.worker.terminate('the sandbox worker was terminated: another run in it overran its CPU time')
    }
  }

  function call(id: number, index: number, name: string, args: string): void {
    const run = active.get(id)
    if (!run || run.ended) return
    const done = answer(run.host, index, name, args, run.controller.signal).then(({ json, end }) => {
      run.pending.delete(done)
      if (run.ended) return
      if (end) cancel(run, end.code, end.message)
      else reply(run, index, json)
    })
    run.pending.add(done)
  }

  // Answers ready by the end of one turn of the event loop go to their worker in one message per
  // run (a `Promise.all` of sub-calls is settled in one slice of the program, not one slice each).
  const replies = new Map<ActiveRun, [index: number, json: string][]>()
  let flushing = false
  function reply(run: ActiveRun, index: number, json: string): void {
    const answers = replies.get(run)
    if (answers === undefined) replies.set(run, [[index, json]])
    else answers.push([index, json])
    if (flushing) return
    flushing = true
    setImmediate(flush)
  }
  function flush(): void {
    flushing = false
    for (const [run, answers] of replies) if (!run.ended) run.worker.post({ type: 'settle', id: run.id, answers })
    replies.clear()
  }

  function ended(id: number, end: WorkerRunEnd): void {
    const run = active.get(id)
    if (!run) return
    run.worker.runs.delete(id)
    const result: CodeRunResult =
      end.outcome === 'completed'
        ? { ...end, value: end.value === undefined ? undefined : JSON.parse(end.value), durationMs: performance.now() - run.started }
        : end
    // Sub-calls still running when the program ended are awaited (within wallMs), never cut off.
    run.ended = true
    if ((end.outcome === 'failed' && end.code !== 'CODE_THREW') || run.pending.size === 0) {
      finish(run, result)
      return
    }
    void Promise.allSettled([...run.pending]).then(() => {
      if (result.outcome === 'completed') result.durationMs = performance.now() - run.started
      finish(run, result)
    })
  }

  function finish(run: ActiveRun, result: CodeRunResult): void {
    if (!active.delete(run.id)) return
    run.ended = true
    run.worker.runs.delete(run.id)
    if (run.timer) clearTimeout(run.timer)
    if (run.pending.size > 0) run.controller.abort(new SeamError('ABORTED', `the run ended: ${result.outcome === 'failed' ? result.code : 'completed'}`))
    run.settle(result)
  }

  /** Ends a run from outside (wall time, abort): the worker answers, or it is terminated. */
  function cancel(run: ActiveRun, code: CodeRunCode, message: string): void {
    if (!active.has(run.id)) return
    if (run.ended) {
      finish(run, fail(code, message))
      return
    }
    run.worker.post({ type: 'cancel', id: run.id, code, message })
    const grace = setTimeout(() => {
      if (!active.has(run.id)) return
      finish(run, fail(code, message))
      void run.worker.terminate('the sandbox worker was terminated: another run in it did not stop at its wall time')
    }, CANCEL_GRACE_MS)
    grace.unref?.()
  }

  async function run(request: CodeRunRequest, host: CodeHost): Promise<CodeRunResult> {
    if (closed) throw new SeamError('CLOSED', 'the code sandbox is closed')
    const limits: CodeLimits = { ...defaults, ...request.limits }
    if (Buffer.byteLength(request.source) > limits.sourceBytes) {
      return fail('CODE_SOURCE_TOO_LARGE', `the program is longer than ${limits.sourceBytes} bytes`)
    }
    if (request.signal?.aborted) return fail('ABORTED', 'the run was cancelled before it started')
    const started = performance.now()
    let code: string
    try {
      code = await strip(request.source)
    } catch (error) {
      return fail('CODE_SYNTAX', syntaxMessage(error))
    }
    if (closed) return fail('CLOSED', 'the code sandbox closed before the run started')
    // Checked again: the signal may have fired while esbuild stripped the program.
    if (request.signal?.aborted) return fail('ABORTED', 'the run was cancelled before it started')
    const worker = pool.pick()
    const id = nextId++
    return new Promise<CodeRunResult>((resolve) => {
      const entry: ActiveRun = { id, worker, host, started, pending: new Set(), controller: new AbortController(), cpuMs: limits.cpuMs, settle: resolve, ended: false, timer: undefined }
      active.set(id, entry)
      worker.runs.add(id)
      if (!watchdog) {
        watchdog = setInterval(watch, WATCHDOG_MS)
        watchdog.unref?.()
      }
      entry.timer = setTimeout(() => cancel(entry, 'CODE_TIMEOUT', `the run took more than ${limits.wallMs} ms`), limits.wallMs)
      const signal = request.signal
      if (signal) {
        const onAbort = () => cancel(entry, 'ABORTED', 'the run was cancelled')
        signal.addEventListener('abort', onAbort, { once: true })
        const settle = entry.settle
        entry.settle = (result) => {
          signal.removeEventListener('abort', onAbort)
          settle(result)
        }
      }
      worker.post({
        type: 'run',
        id,
        code,
        toolNames: request.toolNames,
        limits,
        replay: { now: [...(request.replay?.now ?? [])], random: [...(request.replay?.random ?? [])] },
      })
    })
  }

  return {
    run,
    close() {
      closed ??= (async () => {
        for (const run of [...active.values()]) finish(run, fail('CLOSED', 'the code sandbox closed during the run'))
        await pool.close()
      })()
      return closed
    },
  }
}

interface Answer {
  /** The settlement's JSON for the program. */
  json: string
  /** Set when the host ended the whole run with this sub-call. */
  end?: { code: string; message: string }
}

/** Asks the host for one sub-call and returns its settlement as JSON text; never rejects. */
async function answer(host: CodeHost, index: number, name: string, argsJson: string, signal: AbortSignal): Promise<Answer> {
  const failure = (code: string, message: string): Answer => ({ json: JSON.stringify({ ok: false, code, message }) })
  let settlement: SubCallSettlement
  try {
    settlement = await host.callTool(index, name, JSON.parse(argsJson), { signal })
  } catch (error) {
    return failure('TOOL_ERROR', error instanceof Error ? error.message : String(error))
  }
  if (!settlement?.ok) {
    const failed = settlement as { code?: unknown; message?: unknown; endRun?: unknown } | undefined
    const code = String(failed?.code ?? 'TOOL_ERROR')
    const message = String(failed?.message ?? 'the sub-call failed')
    return failed?.endRun === true ? { ...failure(code, message), end: { code, message } } : failure(code, message)
  }
  try {
    return { json: JSON.stringify({ ok: true, value: settlement.value }) }
  } catch (error) {
    return failure('INVALID_OUTPUT', `the result of ${name} is not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** Stripped programs by source, newest last: a run replayed after an approval strips nothing again. */
const stripped = new Map<string, string>()
const STRIPPED_KEPT = 64

/** The program as one JavaScript expression: an async arrow function, types stripped. */
async function strip(source: string): Promise<string> {
  const kept = stripped.get(source)
  if (kept !== undefined) {
    stripped.delete(source)
    stripped.set(source, kept)
    return kept
  }
  // The prefix shares line 1 with the source, so esbuild's line numbers in errors are the program's own.
  const { code } = await transform(`${PROGRAM_PREFIX}${source}\n})`, { loader: 'ts', target: 'es2022' })
  stripped.set(source, code)
  if (stripped.size > STRIPPED_KEPT) stripped.delete(stripped.keys().next().value!)
  return code
}

function syntaxMessage(error: unknown): string {
  const errors = (error as { errors?: { text: string; location?: { line: number; column: number } | null }[] }).errors
  const first = errors?.[0]
  if (!first) return error instanceof Error ? error.message : String(error)
  const at = first.location ? ` (line ${first.location.line}, column ${first.location.line === 1 ? first.location.column - PROGRAM_PREFIX.length : first.location.column})` : ''
  return `${first.text}${at}`
}

function fail(code: CodeRunCode, message: string): CodeRunResult {
  return { outcome: 'failed', code, message, logs: [], recorded: { now: [], random: [] }, subCalls: 0 }
}
