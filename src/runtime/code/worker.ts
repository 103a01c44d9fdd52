/**
 * A sandbox worker thread: one QuickJS WebAssembly module (the sync build), one QuickJS runtime and
 * context per run, many runs at a time. A program never blocks the thread while it waits: each
 * sub-call and timer is a QuickJS promise this thread settles when the pool's answer arrives, and
 * then runs the program's pending jobs. The interrupt handler enforces the CPU budget (time spent
 * executing the program, summed over slices) and stops a run the worker has decided to end.
 *
 * Loaded from a data: URL in source checkouts, so it imports nothing relative: the QuickJS packages
 * come through `createRequire(workerData.base)` and the prelude through `workerData.prelude`.
 */
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core'
import type { CodeFailureCode, CodeLimits, CodeRunCode, CodeLogEntry, CodeLogLevel, CodeRecorded, FromWorker, ToWorker, WorkerRunEnd } from './types.js'

type Core = typeof import('quickjs-emscripten-core')
const data = workerData as { base: string; prelude: string; busy: Int32Array; busyBase: number }
const load = createRequire(data.base)
const core = load('quickjs-emscripten-core') as Core
const variant = load('@jitl/quickjs-wasmfile-release-sync') as { default: Parameters<Core['newQuickJSWASMModuleFromVariant']>[0] }
type Module = Awaited<ReturnType<Core['newQuickJSWASMModuleFromVariant']>>
/**
 * The module new runs start in. QuickJS can fail to free a runtime whose program allocated enough
 * inside a promise job to trigger its garbage collector (quickjs-emscripten issue 269: `JS_FreeRuntime`
 * aborts on `list_empty(&rt->gc_obj_list)`); an aborted module stays usable for the runs already in
 * it but is never given another: the next run starts in a fresh module, the old one is dropped
 * with its last run.
 */
let current: Module = await core.newQuickJSWASMModuleFromVariant(variant.default)
let replacing: Promise<Module> | undefined
const port = parentPort!

// QuickJS's own stack bound, well inside the WebAssembly stack, so deep recursion is a RangeError.
const STACK_BYTES = 512 * 1024
const LEVELS = new Set<CodeLogLevel>(['log', 'info', 'warn', 'error'])

interface Run {
  id: number
  limits: CodeLimits
  runtime: QuickJSRuntime
  context: QuickJSContext
  deadline: number
  deferreds: Map<number, QuickJSDeferredPromise>
  sleeps: Map<ReturnType<typeof setTimeout>, QuickJSDeferredPromise>
  logs: CodeLogEntry[]
  logBytes: number
  replay: CodeRecorded
  recorded: CodeRecorded
  subCalls: number
  /** Sub-calls issued in the current slice, posted in one message when it ends. */
  outbox: [index: number, name: string, args: string][]
  cpuMs: number
  /** performance.now() when the current slice began, 0 outside one. */
  sliceStart: number
  /** Set once the run must stop: the interrupt handler then stops the program at its next check. */
  kill: { code: CodeRunCode; message: string } | undefined
  end: WorkerRunEnd | undefined
}

const runs = new Map<number, Run>()
/** Runs cancelled while they waited for a fresh module. */
const cancelled = new Map<number, { code: CodeRunCode; message: string }>()

function post(message: FromWorker): void {
  port.postMessage(message)
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'run') {
    if (replacing) void replacing.then(() => start(message))
    else start(message)
  }
  else if (message.type === 'settle') settle(message.id, message.answers)
  else if (message.type === 'cancel') {
    const run = runs.get(message.id)
    if (run) {
      run.kill ??= { code: message.code, message: message.message }
      finish(run)
    } else if (replacing) cancelled.set(message.id, { code: message.code, message: message.message })
  }
})
post({ type: 'ready' })

function start(message: Extract<ToWorker, { type: 'run' }>): void {
  const cancel = cancelled.get(message.id)
  if (cancel) {
    cancelled.delete(message.id)
    post({ type: 'done', id: message.id, end: { outcome: 'failed', ...cancel, logs: [], recorded: { now: [], random: [] }, subCalls: 0 } })
    return
  }
  const module = current
  const runtime = module.newRuntime()
  runtime.setMemoryLimit(message.limits.memoryBytes)
  runtime.setMaxStackSize(STACK_BYTES)
  const context = runtime.newContext()
  const run: Run = {
    id: message.id,
    limits: message.limits,
    runtime,
    context,
    deadline: Date.now() + message.limits.wallMs,
    deferreds: new Map(),
    sleeps: new Map(),
    logs: [],
    logBytes: 0,
    replay: message.replay,
    recorded: { now: [], random: [] },
    subCalls: 0,
    outbox: [],
    cpuMs: 0,
    sliceStart: 0,
    kill: undefined,
    end: undefined,
  }
  runs.set(run.id, run)
  runtime.setInterruptHandler(() => {
    if (run.kill) return true
    if (run.sliceStart > 0 && run.cpuMs + (performance.now() - run.sliceStart) > run.limits.cpuMs) {
      run.kill = { code: 'CODE_CPU_LIMIT', message: `the program ran for more than ${run.limits.cpuMs} ms of CPU time` }
      return true
    }
    if (Date.now() > run.deadline) {
      run.kill = { code: 'CODE_TIMEOUT', message: `the run took more than ${run.limits.wallMs} ms` }
      return true
    }
    return false
  })
  slice(run, () => {
    const setup = context.evalCode(data.prelude, 'seam-prelude.js')
    const setupFn = context.unwrapResult(setup)
    const host = hostObject(run)
    const names = context.newString(JSON.stringify(message.toolNames))
    const bytes = context.newNumber(run.limits.outputBytes)
    const startFn = context.unwrapResult(context.callFunction(setupFn, context.undefined, host, names, bytes))
    for (const handle of [setupFn, host, names, bytes]) handle.dispose()
    const compiled = context.evalCode(message.code, 'program.js')
    if (compiled.error) {
      const error = context.dump(compiled.error) as { name?: string; message?: string }
      compiled.error.dispose()
      startFn.dispose()
      run.end = failed(run, error?.name === 'SyntaxError' ? 'CODE_SYNTAX' : 'CODE_THREW', describeDumped(error))
      return
    }
    const result = context.callFunction(startFn, context.undefined, compiled.value)
    compiled.value.dispose()
    startFn.dispose()
    if (result.error) run.end = thrown(run, context.dump(result.error))
    result.dispose()
  })
}

/** Runs one synchronous stretch of the program, then its pending jobs; ends the run when it is over. */
function slice(run: Run, step: () => void): void {
  run.sliceStart = performance.now()
  // The pool's watchdog reads this: a slice QuickJS's interrupt handler cannot stop (one long built-in) ends the worker.
  Atomics.store(data.busy, 1, run.id)
  Atomics.store(data.busy, 0, Date.now() - data.busyBase)
  try {
    step()
    if (!run.end && !run.kill) {
      const jobs = run.runtime.executePendingJobs()
      if (jobs.error) {
        run.end = thrown(run, run.context.dump(jobs.error))
        jobs.error.dispose()
      }
    }
  } catch (error) {
    run.end ??= thrown(run, error)
  } finally {
    Atomics.store(data.busy, 0, 0)
    run.cpuMs += performance.now() - run.sliceStart
    run.sliceStart = 0
  }
  // Before a `done`: the host runs (and awaits) every sub-call the program issued before it ended.
  if (run.outbox.length > 0) {
    post({ type: 'calls', id: run.id, calls: run.outbox })
    run.outbox = []
  }
  if (run.end || run.kill) finish(run)
}

/** Settles the sub-calls answered, in the order given, then runs the program's jobs once. */
function settle(id: number, answers: [index: number, json: string][]): void {
  const run = runs.get(id)
  if (!run || !answers.some(([index]) => run.deferreds.has(index))) return
  slice(run, () => {
    for (const [index, json] of answers) {
      const deferred = run.deferreds.get(index)
      if (!deferred) continue
      // Out of the map only once settled here: a slice that stops half-way leaves the rest to `finish`.
      run.deferreds.delete(index)
      try {
        const text = run.context.newString(json)
        deferred.resolve(text)
        text.dispose()
      } finally {
        deferred.dispose()
      }
    }
  })
}

/** Ends a run once: reports it, then frees its QuickJS runtime. */
function finish(run: Run): void {
  if (!runs.has(run.id)) return
  runs.delete(run.id)
  const end = run.kill ? failed(run, run.kill.code, run.kill.message) : (run.end ?? failed(run, 'CODE_THREW', 'the run ended without a value'))
  for (const [timer, deferred] of run.sleeps) {
    clearTimeout(timer)
    deferred.dispose()
  }
  for (const deferred of run.deferreds.values()) deferred.dispose()
  post({ type: 'done', id: run.id, end })
  try {
    run.context.dispose()
    run.runtime.dispose()
  } catch (error) {
    retire(error)
  }
}

/** A runtime that could not be freed has aborted its module: new runs get a fresh one. */
function retire(error: unknown): void {
  if (replacing) return
  console.error(`seam code sandbox: QuickJS could not free a runtime (${String(error).slice(0, 160)}); later runs use a fresh module`)
  replacing = core.newQuickJSWASMModuleFromVariant(variant.default).then(
    (module) => {
      current = module
      replacing = undefined
      return module
    },
    (failure) => {
      // Without a module this worker can run nothing: leave, and the pool fails its runs and starts another.
      console.error(`seam code sandbox: no fresh QuickJS module (${String(failure)}); the worker exits`)
      process.exit(1)
    },
  )
}

function failed(run: Run, code: CodeRunCode, message: string): WorkerRunEnd {
  return { outcome: 'failed', code, message, logs: run.logs, recorded: run.recorded, subCalls: run.subCalls }
}

/** The end of a run whose program threw: out-of-memory has its own code. */
function thrown(run: Run, dumped: unknown): WorkerRunEnd {
  const message = describeDumped(dumped)
  if (/^InternalError: out of memory/.test(message)) return failed(run, 'CODE_MEMORY_LIMIT', `the program needed more than ${run.limits.memoryBytes} bytes of memory`)
  return failed(run, 'CODE_THREW', message)
}

function describeDumped(dumped: unknown): string {
  if (dumped && typeof dumped === 'object') {
    const { name, message } = dumped as { name?: unknown; message?: unknown }
    if (typeof message === 'string') return `${typeof name === 'string' ? name : 'Error'}: ${message}`
  }
  if (dumped instanceof Error) return dumped.message
  return String(dumped)
}

function hostObject(run: Run): QuickJSHandle {
  const { context } = run
  const host = context.newObject()
  const define = (name: string, fn: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
    const handle = context.newFunction(name, fn)
    context.setProp(host, name, handle)
    handle.dispose()
  }
  define('call', (nameHandle, argsHandle) => {
    const name = context.getString(nameHandle!)
    const args = context.getString(argsHandle!)
    if (run.subCalls >= run.limits.subCalls) {
      return stop(run, 'CODE_SUBCALL_LIMIT', `the program issued more than ${run.limits.subCalls} sub-calls`)
    }
    if (Buffer.byteLength(args) > run.limits.outputBytes) {
      return stop(run, 'CODE_OUTPUT_LIMIT', `the arguments of ${name} exceed ${run.limits.outputBytes} bytes`)
    }
    const index = run.subCalls++
    const deferred = context.newPromise()
    run.deferreds.set(index, deferred)
    run.outbox.push([index, name, args])
    return deferred.handle
  })
  define('log', (levelHandle, textHandle) => {
    const level = context.getString(levelHandle!) as CodeLogLevel
    const text = context.getString(textHandle!)
    run.logBytes += Buffer.byteLength(text) + 1
    if (run.logBytes > run.limits.logBytes) {
      stop(run, 'CODE_OUTPUT_LIMIT', `the program's console output exceeds ${run.limits.logBytes} bytes`)
      return context.false
    }
    run.logs.push({ level: LEVELS.has(level) ? level : 'log', text })
    return context.true
  })
  define('now', () => context.newNumber(next(run, 'now', Date.now)))
  define('random', () => context.newNumber(next(run, 'random', Math.random)))
  define('sleep', (msHandle) => {
    const ms = Math.min(context.getNumber(msHandle!), Math.max(0, run.deadline - Date.now()))
    const deferred = context.newPromise()
    const timer = setTimeout(() => {
      run.sleeps.delete(timer)
      if (runs.has(run.id)) slice(run, () => deferred.resolve())
      deferred.dispose()
    }, ms)
    run.sleeps.set(timer, deferred)
    return deferred.handle
  })
  define('done', (kindHandle, textHandle) => {
    const kind = context.getString(kindHandle!)
    const text = context.getString(textHandle!)
    if (kind === 'value' || kind === 'too-large') {
      if (kind === 'too-large' || Buffer.byteLength(text) - 1 > run.limits.outputBytes) {
        run.end = failed(run, 'CODE_OUTPUT_LIMIT', `the value returned exceeds ${run.limits.outputBytes} bytes`)
      } else {
        run.end = { outcome: 'completed', ...(text === '' ? {} : { value: text.slice(1) }), logs: run.logs, recorded: run.recorded, subCalls: run.subCalls }
      }
    } else {
      run.end = thrown(run, text)
    }
    return undefined
  })
  define('fail', (codeHandle, messageHandle) => {
    const code = context.getString(codeHandle!) as CodeFailureCode
    return stop(run, code === 'CODE_OUTPUT_LIMIT' ? code : 'CODE_THREW', context.getString(messageHandle!))
  })
  return host
}

/**
 * Marks the run to end; the interrupt handler stops the program at its next check. Host functions
 * never throw into QuickJS (a host error turned into a QuickJS exception leaks objects, and the
 * runtime then cannot be freed): they return `undefined` and the prelude throws.
 */
function stop(run: Run, code: CodeFailureCode, message: string): undefined {
  run.kill ??= { code, message }
  return undefined
}

/** The next clock or random value: the recorded one while the replay has some, then a fresh one. */
function next(run: Run, kind: 'now' | 'random', fresh: () => number): number {
  const at = run.recorded[kind].length
  const replayed = run.replay[kind]
  const value = at < replayed.length ? replayed[at]! : fresh()
  run.recorded[kind].push(value)
  return value
}
