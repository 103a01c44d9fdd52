import { asksEveryCallByDefault } from '../runtime/approval-default.js'
import type { AgentCapabilities } from '../runtime/capability-ingress.js'
import type { Root } from '../runtime/root.js'
import { formatDiagnostic, formatPublish, ms, printable, printableLines } from './format.js'
import { line, type OutStream, type Style } from './io.js'

/**
 * One line per publish, a framed diagnostic per failed reload, a warning per abandoned call, and
 * once per tool a warning when it asks every call by default (see `warnAsksEveryCall`).
 */
export function follow(root: Root, out: OutStream, style: Style, dir: string, warned = new Set<string>()): void {
  root.on('generation', (event) => {
    line(out, formatPublish(event.generation, event.diff, event.durationMs, style))
    for (const d of event.diagnostics) line(out, `${style.yellow('warning:')} ${formatDiagnostic(d, style, dir)}`)
    if (event.diff.tools.added.length + event.diff.tools.changed.length > 0) {
      void root.capabilities().then((capabilities) => warnAsksEveryCall(capabilities, out, style, warned), () => {})
    }
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

/**
 * A tool that sets no `approval` is `on-risk`; with no `risk(args)` (and no `readOnlyHint`) it asks
 * every call, and is denied wherever no one can answer. Said once per tool name.
 */
export function warnAsksEveryCall(capabilities: AgentCapabilities, out: OutStream, style: Style, warned: Set<string>): void {
  for (const tool of capabilities.tools) {
    if (warned.has(tool.name) || !asksEveryCallByDefault(tool)) continue
    warned.add(tool.name)
    line(
      out,
      `${style.yellow('warning:')} ${printable(tool.name)} asks for approval on every call (approval defaults to 'on-risk' and it has no risk(args)); without a terminal it is denied. Set approval: 'never' for a safe tool, or add risk(args).`,
    )
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')
}
