import { performance } from 'node:perf_hooks'
import type * as TS from 'typescript'
import { messageOf } from '../errors.js'
import { contentHash, type FileState, ownFiles } from './file-state.js'
import { checkSetup, loadTypeScript, pluginSources, problemsOf } from './type-check.js'
import type { TypeProblem } from './format.js'

/** What `seam dev` hands the checker process (as its one argument, JSON). */
export interface CheckWorkerInput {
  readonly dir: string
  /** The resolved TypeScript entry (see `findTypeScript`). */
  readonly typescript: string
}

/** Checker → `seam dev`: the errors after each (incremental) check, or why checking stopped. */
export type CheckWorkerMessage =
  | {
      readonly kind: 'checked'
      readonly problems: TypeProblem[]
      readonly files: number
      readonly durationMs: number
      /** The project's files as this pass read them: `seam dev` drops the result once one has changed. */
      readonly seen: FileState
    }
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
  // Without a tsconfig.json the root files are seam's: one gone (renamed, deleted) is not the
  // project's error but a list to make again, and the pass that reports it is dropped.
  let rediscover: (() => void) | undefined
  const afterProgramCreate = (builder: TS.SemanticDiagnosticsBuilderProgram) => {
    const program = builder.getProgram()
    if (rediscover !== undefined && program.getRootFileNames().some((file) => program.getSourceFile(file) === undefined)) {
      reported = []
      return rediscover()
    }
    const seen: Record<string, string> = {}
    for (const file of program.getSourceFiles()) seen[file.fileName] = contentHash(file.text)
    for (const file of Object.keys(seen)) if (ownFiles(dir, [file]).length === 0) delete seen[file]
    const diagnostics = [
      ...reported,
      ...builder.getConfigFileParsingDiagnostics(),
      ...builder.getOptionsDiagnostics(),
      ...builder.getGlobalDiagnostics(),
      ...builder.getSyntacticDiagnostics(),
      ...builder.getSemanticDiagnostics(),
    ]
    reported = []
    const files = program.getRootFileNames().length
    post({ kind: 'checked', problems: problemsOf(ts, diagnostics, dir), files, durationMs: performance.now() - started, seen })
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
  const update = () =>
    pluginSources(dir).then(
      (files) => watch.updateRootFileNames(files),
      (error: unknown) => post({ kind: 'failed', message: messageOf(error) }),
    )
  rediscover = () => void update()
  const watch = ts.createWatchProgram(host)
  port.on('message', (command: CheckWorkerCommand) => {
    if (command.kind === 'sources-changed') void update()
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
