/**
 * The sandbox's contract: what a run is asked, what it may call, what it settles as. Values cross
 * the sandbox boundary as JSON text only, in both directions.
 */

/** The bounds of one run; each one overrun settles the run with its own code. */
export interface CodeLimits {
  /** QuickJS heap of the run, in bytes (`CODE_MEMORY_LIMIT`). */
  memoryBytes: number
  /** Time the program itself executes, summed over its slices, in ms (`CODE_CPU_LIMIT`). */
  cpuMs: number
  /** Wall time of the whole run, sub-calls and timers included, in ms (`CODE_TIMEOUT`). */
  wallMs: number
  /** UTF-8 bytes of the program's value, and of each sub-call's arguments (`CODE_OUTPUT_LIMIT`). */
  outputBytes: number
  /** UTF-8 bytes of all console output of the run together (`CODE_OUTPUT_LIMIT`). */
  logBytes: number
  /** Sub-calls the program may issue (`CODE_SUBCALL_LIMIT` on the one past it). */
  subCalls: number
  /** UTF-8 bytes of the source (`CODE_SOURCE_TOO_LARGE`). */
  sourceBytes: number
}

export const DEFAULT_CODE_LIMITS: Readonly<CodeLimits> = Object.freeze({
  memoryBytes: 64 * 1024 * 1024,
  cpuMs: 5_000,
  wallMs: 60_000,
  outputBytes: 1024 * 1024,
  logBytes: 64 * 1024,
  subCalls: 2_000,
  sourceBytes: 256 * 1024,
})

/** Values the program read from the clock and the random generator, in the order it read them. */
export interface CodeRecorded {
  now: number[]
  random: number[]
}

export interface CodeRunRequest {
  /** The program: the body of an async function, TypeScript or JavaScript. */
  source: string
  /** The names the program sees as `tools.<name>` (all of them also through `tools.call(name, args)`). */
  toolNames: string[]
  limits?: Partial<CodeLimits>
  /** Values an earlier run of the same program recorded: handed out first, in order, then fresh ones. */
  replay?: CodeRecorded
  /** Cancels the run: it settles `ABORTED` (sub-calls already issued are not awaited). */
  signal?: AbortSignal
}

/**
 * How a sub-call settled, as the host reports it. `value` must be JSON. A failure rejects the
 * program's promise with an Error carrying `code` and `message`; with `endRun: true` it ends the whole
 * run instead, settling it with that `code` (a program that diverged from its log, a call parked
 * for approval): the program cannot catch it, and outstanding sub-calls are not awaited.
 */
export type SubCallSettlement = { ok: true; value: unknown } | { ok: false; code: string; message: string; endRun?: boolean }

export interface CodeHost {
  /**
   * One sub-call of the program, in the order the program issues them; `index` is its 0-based
   * sequence number. A throw or a value that is not JSON settles it as a failure. `signal` aborts
   * when the run ends without waiting for this sub-call (a limit, its wall time, `endRun`, close).
   */
  callTool(index: number, name: string, args: unknown, options: { signal: AbortSignal }): Promise<SubCallSettlement>
}

export type CodeLogLevel = 'log' | 'info' | 'warn' | 'error'

export interface CodeLogEntry {
  level: CodeLogLevel
  text: string
}

/** The stable codes a failed run settles with (src/errors.ts has one line each). */
export type CodeFailureCode =
  | 'CODE_SYNTAX'
  | 'CODE_THREW'
  | 'CODE_TIMEOUT'
  | 'CODE_CPU_LIMIT'
  | 'CODE_MEMORY_LIMIT'
  | 'CODE_OUTPUT_LIMIT'
  | 'CODE_SUBCALL_LIMIT'
  | 'CODE_SOURCE_TOO_LARGE'
  | 'ABORTED'
  | 'CLOSED'

/** A failed run's code: the sandbox's own, or one a host ended the run with (`endRun`). */
export type CodeRunCode = CodeFailureCode | (string & {})

export type CodeRunResult =
  | {
      outcome: 'completed'
      /** What the program returned, copied as JSON (`undefined` when it returned nothing). */
      value: unknown
      logs: CodeLogEntry[]
      recorded: CodeRecorded
      subCalls: number
      durationMs: number
    }
  | {
      outcome: 'failed'
      code: CodeRunCode
      message: string
      logs: CodeLogEntry[]
      recorded: CodeRecorded
      subCalls: number
    }

export interface CodeSandboxOptions {
  /** Worker threads kept; runs share them (each run has its own QuickJS runtime). Default 2. */
  poolSize?: number
  /** Defaults for every run; a request's own `limits` override them. */
  limits?: Partial<CodeLimits>
}

export interface CodeSandbox {
  run(request: CodeRunRequest, host: CodeHost): Promise<CodeRunResult>
  /** Terminates the workers; runs still going settle `CLOSED`. Idempotent. */
  close(): Promise<void>
}

// ── Messages between the pool and a worker ──────────────────────────────────────────────────

/** Pool → worker. */
export type ToWorker =
  | { type: 'run'; id: number; code: string; toolNames: string[]; limits: CodeLimits; replay: CodeRecorded }
  /** Answers of the run's sub-calls, `[index, json]` each, `json` the JSON of a SubCallSettlement: one slice settles them all. */
  | { type: 'settle'; id: number; answers: [index: number, json: string][] }
  | { type: 'cancel'; id: number; code: CodeRunCode; message: string }

/** What a worker reports when a run ends; `value` is JSON text (absent: the program returned nothing). */
export type WorkerRunEnd =
  | { outcome: 'completed'; value?: string; logs: CodeLogEntry[]; recorded: CodeRecorded; subCalls: number }
  | {
      outcome: 'failed'
      code: CodeRunCode
      message: string
      logs: CodeLogEntry[]
      recorded: CodeRecorded
      subCalls: number
    }

/** Worker → pool. */
export type FromWorker =
  | { type: 'ready' }
  /** The sub-calls one slice of the run issued, in issue order. */
  | { type: 'calls'; id: number; calls: [index: number, name: string, args: string][] }
  | { type: 'done'; id: number; end: WorkerRunEnd }
