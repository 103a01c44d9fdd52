import { performance } from 'node:perf_hooks'
import type * as TS from 'typescript'
import { messageOf } from '../errors.js'
import { checkSetup, loadTypeScript, pluginSources, problemsOf, type TypeProblem } from './type-check.js'

/** What `seam dev` hands the checker process (as its one argument, JSON). */
export interface CheckWorkerInput {
  readonly dir: string
  /** The resolved TypeScript entry (see `findTypeScript`). */
  readonly typescript: string
}

/** Checker → `seam dev`: the errors after each (incremental) check, or why checking stopped. */
export type CheckWorkerMessage =
  | { readonly kind: 'checked'; readonly problems: TypeProblem[]; readonly files: number; readonly durationMs: number }
  | { readonly kind: 'failed'; readonly message: string }

/** `seam dev` → checker: the folder (without a tsconfig.json) gained or lost a tool file. */
export type CheckWorkerCommand = { readonly kind: 'sources-changed' }

// Codes of TypeScript's own watch status messages: the first build, and a rebuild after a change.
const STARTING = new Set([6031, 6032])

interface Port {
  postMessage(message: CheckWorkerMessage): void
  on(event: 'message', listener: (command: CheckWorkerCommand) => void): void
}

/**
 * Type-checks a plugin folder in TypeScript's watch mode, in a process of its own: the watch program
 * follows the files itself, and its builder re-checks only what a change can affect.
 */
async function run(port: Port, input: CheckWorkerInput): Promise<void> {
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

if (process.send !== undefined) {
  const send = process.send.bind(process)
  const port: Port = {
    postMessage: (message) => void send(message),
    on: (event, listener) => void process.on(event, listener),
  }
  // `seam dev` gone (its channel closed): nothing is left to report to.
  process.on('disconnect', () => process.exit(0))
  run(port, JSON.parse(process.argv[2] ?? '{}') as CheckWorkerInput).catch((error: unknown) => port.postMessage({ kind: 'failed', message: messageOf(error) }))
}
