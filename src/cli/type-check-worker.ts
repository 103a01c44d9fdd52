import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type * as TS from 'typescript'
import { messageOf } from '../errors.js'
import { checkSetup, loadTypeScript, pluginSources, problemsOf, type TypeProblem } from './type-check.js'

/** What `seam dev` hands the worker. */
export interface CheckWorkerInput {
  readonly dir: string
  /** The resolved TypeScript entry (see `findTypeScript`). */
  readonly typescript: string
}

/** Worker → `seam dev`: the errors after each (incremental) check, or why checking stopped. */
export type CheckWorkerMessage =
  | { readonly kind: 'checked'; readonly problems: TypeProblem[]; readonly files: number; readonly durationMs: number }
  | { readonly kind: 'failed'; readonly message: string }

/** `seam dev` → worker: the folder (without a tsconfig.json) gained or lost a tool file. */
export type CheckWorkerCommand = { readonly kind: 'sources-changed' }

// Codes of TypeScript's own watch status messages: the first build, and a rebuild after a change.
const STARTING = new Set([6031, 6032])

/**
 * Type-checks a plugin folder in TypeScript's watch mode, off the main thread: the watch program
 * follows the files itself, and its builder re-checks only what a change can affect.
 */
async function run(port: NonNullable<typeof parentPort>, input: CheckWorkerInput): Promise<void> {
  const ts = loadTypeScript(input.typescript)
  const { dir } = input
  const setup = await checkSetup(ts, dir)
  const post = (message: CheckWorkerMessage) => port.postMessage(message)
  let started = performance.now()
  // Problems TypeScript reports outside a program (a tsconfig.json edited into something invalid).
  let reported: TS.Diagnostic[] = []
  const onDiagnostic = (d: TS.Diagnostic) => reported.push(d)
  const onStatus = (d: TS.Diagnostic) => {
    if (STARTING.has(d.code)) started = performance.now()
  }
  const afterProgramCreate = (builder: TS.SemanticDiagnosticsBuilderProgram) => {
    const diagnostics = [
      ...reported,
      ...builder.getConfigFileParsingDiagnostics(),
      ...builder.getOptionsDiagnostics(),
      ...builder.getGlobalDiagnostics(),
      ...builder.getSyntacticDiagnostics(),
      ...builder.getSemanticDiagnostics(),
    ]
    reported = []
    const files = builder.getProgram().getRootFileNames().length
    post({ kind: 'checked', problems: problemsOf(ts, diagnostics, dir), files, durationMs: performance.now() - started })
  }
  const create = ts.createSemanticDiagnosticsBuilderProgram
  if (setup.configFile !== undefined) {
    // The watch program follows the tsconfig's include patterns itself.
    const host = ts.createWatchCompilerHost(setup.configFile, { noEmit: true }, ts.sys, create, onDiagnostic, onStatus)
    host.afterProgramCreate = afterProgramCreate
    ts.createWatchProgram(host)
    return
  }
  const host = ts.createWatchCompilerHost(setup.rootNames, setup.options, ts.sys, create, onDiagnostic, onStatus)
  host.afterProgramCreate = afterProgramCreate
  const watch = ts.createWatchProgram(host)
  port.on('message', (command: CheckWorkerCommand) => {
    if (command.kind !== 'sources-changed') return
    pluginSources(dir).then(
      (files) => watch.updateRootFileNames(files),
      (error: unknown) => post({ kind: 'failed', message: messageOf(error) }),
    )
  })
}

if (parentPort) {
  const port = parentPort
  // On Linux the nice value is per thread, so this makes only the checker yield to reloads (and
  // to esbuild) when the cores are busy; elsewhere it would lower all of `seam dev`.
  if (process.platform === 'linux') {
    try {
      setPriority(0, 19)
    } catch {
      // Not allowed here: the check runs at normal priority.
    }
  }
  run(port, workerData as CheckWorkerInput).catch((error: unknown) => port.postMessage({ kind: 'failed', message: messageOf(error) } satisfies CheckWorkerMessage))
}
