import type { Root } from '../runtime/root.js'
import { formatDiagnostic, formatPublish, ms, printable, printableLines } from './format.js'
import { line, type OutStream, type Style } from './io.js'

/** One line per publish, a framed diagnostic per failed reload, a warning per abandoned call. */
export function follow(root: Root, out: OutStream, style: Style, dir: string): void {
  root.on('generation', (event) => {
    line(out, formatPublish(event.generation, event.diff, event.durationMs, style))
    for (const d of event.diagnostics) line(out, `${style.yellow('warning:')} ${formatDiagnostic(d, style, dir)}`)
  })
  root.on('reload-failed', (event) => {
    line(out, style.red(`reload failed ${style.dim(`(${ms(event.durationMs)})`)}`))
    if (event.diagnostics.length === 0) line(out, `  ${style.red(printableLines(event.error.message))}`)
    for (const d of event.diagnostics) line(out, indent(formatDiagnostic(d, style, dir)))
    line(out, `generation ${root.generation} keeps serving`)
  })
  root.on('abandoned', (call) => {
    line(out, `${style.yellow('warning:')} call ${printable(call.callId)} to ${printable(call.name)} (generation ${call.generation}) did not stop after its deadline; abandoned, it keeps generation ${call.generation} until it settles`)
  })
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')
}
