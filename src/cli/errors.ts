import { SeamError } from '../errors.js'
import type { Diagnostic } from '../features/diagnostic.js'
import { formatDiagnostic, printableLines } from './format.js'
import { type CliIo, line, styleFor } from './io.js'

/** Exit codes: 0 success, 1 a failed call or a runtime error, 2 a usage error. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const

/** An error the CLI reports itself, with what to do about it. */
class HintedError extends Error {
  readonly hint: string | undefined

  constructor(message: string, hint?: string) {
    super(message)
    this.hint = hint
  }
}

/** A mistake in how the command was invoked (bad flag value, missing token): exit 2. */
export class UsageError extends HintedError {
  override readonly name = 'UsageError'
}

/** A runtime problem the CLI found itself (no journal, no folder): exit 1, with a hint. */
export class CliError extends HintedError {
  override readonly name = 'CliError'
}

/**
 * Prints `seam: <message>` (and `hint: …`, and any diagnostics of a failed first generation) to
 * stderr and returns the exit code. The stack only with `--debug`.
 */
export function reportError(error: unknown, io: CliIo, options: { debug: boolean; dir?: string }): number {
  const style = styleFor(io.stderr, io.env)
  const message = error instanceof Error ? error.message : String(error)
  const diagnostics = diagnosticsOf(error)
  if (diagnostics.length > 0) {
    line(io.stderr, style.red('seam: the plugin could not build its first generation'))
    for (const d of diagnostics) line(io.stderr, formatDiagnostic(d, style, options.dir))
  } else {
    // A message may quote journal text or a tool's error: shown with control characters escaped.
    line(io.stderr, style.red(`seam: ${printableLines(message)}`))
  }
  const hint = error instanceof UsageError || error instanceof CliError || SeamError.is(error) ? error.hint : undefined
  if (hint) line(io.stderr, style.dim(`hint: ${hint}`))
  if (options.debug) {
    let cause: unknown = error
    for (let depth = 0; cause !== undefined && depth < 5; depth++) {
      line(io.stderr, style.dim(cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)))
      cause = cause instanceof Error ? cause.cause : undefined
      if (cause !== undefined) line(io.stderr, style.dim('caused by:'))
    }
  }
  return error instanceof UsageError ? EXIT.usage : EXIT.failed
}

/** A `RELOAD_FAILED` from `createRoot` carries the diagnostics of the first generation. */
function diagnosticsOf(error: unknown): Diagnostic[] {
  if (!SeamError.is(error)) return []
  const list = error.details?.diagnostics
  return Array.isArray(list) ? (list as Diagnostic[]) : []
}
