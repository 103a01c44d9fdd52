import { asksEveryCallByDefault } from '../runtime/approvals/approval-default.js'
import type { AgentCapabilities, ToolCapability } from '../seams/capabilities.js'
import type { Root } from '../runtime/root.js'
import type { Diagnostic } from '../features/diagnostic.js'
import type { ProviderStatus } from '../seams/types.js'
import { formatDiagnostic, formatProvider, formatPublish, ms, printable, printableLines } from './format.js'
import { line, type OutStream, type Style } from './io.js'

/**
 * One line per publish with the warnings it did not already have, a framed diagnostic per failed
 * reload, a warning per abandoned call, a line when a provider goes down or comes back, and once per
 * tool a warning when it asks every call by default (see `warnAsksEveryCall`).
 */
export function follow(root: Root, out: OutStream, style: Style, dir: string, warned = new Set<string>()): void {
  let shown = new Set(root.activeGeneration.diagnostics.map(diagnosticKey))
  root.on('generation', (event) => {
    line(out, formatPublish(event.generation, event.diff, event.durationMs, style))
    // A provider that stays down is reported once, not again with every later publish.
    for (const d of event.diagnostics) if (!shown.has(diagnosticKey(d))) line(out, `${style.yellow('warning:')} ${formatDiagnostic(d, style, dir)}`)
    shown = new Set(event.diagnostics.map(diagnosticKey))
    if (event.diff.tools.added.length + event.diff.tools.changed.length > 0) {
      void root.capabilities().then((capabilities) => warnAsksEveryCall(capabilities, out, style, warned), () => {})
    }
  })
  const keyOf = (status: ProviderStatus) => (status.state === 'connected' ? 'connected' : `${status.state}|${status.reason}`)
  const reported = new Map(root.providers().map((status) => [status.provider, keyOf(status)]))
  root.on('provider', (status) => {
    // Retries that fail the same way (and the attempts between them) say nothing new.
    if (status.state === 'connecting') return
    const key = keyOf(status)
    if (reported.get(status.provider) === key || (key === 'connected' && !reported.has(status.provider))) return
    reported.set(status.provider, key)
    const text = `provider ${formatProvider(status, style)}`
    line(out, status.state === 'connected' ? text : `${style.yellow('warning:')} ${text}`)
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
 * every call, and is denied wherever no one can answer. Said once per tool name, with the option
 * that sets its approval: `defineTool`'s, a mounted MCP server's (`McpToolService`), or a
 * `ToolService`'s schema.
 */
export function warnAsksEveryCall(capabilities: AgentCapabilities, out: OutStream, style: Style, warned: Set<string>): void {
  for (const tool of capabilities.tools) {
    if (warned.has(tool.name) || !asksEveryCallByDefault(tool)) continue
    warned.add(tool.name)
    line(out, `${style.yellow('warning:')} ${printable(tool.name)} asks for approval on every call ${approvalAdvice(tool)}`)
  }
}

function approvalAdvice(tool: ToolCapability): string {
  const denied = 'without a terminal it is denied.'
  if (tool.kind === 'feature') {
    return `(approval defaults to 'on-risk' and it has no risk(args)); ${denied} Set approval: 'never' for a safe tool, or add risk(args).`
  }
  if (tool.source.startsWith('mcp:')) {
    const server = printable(tool.source.slice('mcp:'.length))
    return (
      `(it comes from MCP server "${server}", whose tools' approval defaults to 'on-risk', and nothing tells its safe calls from risky ones); ${denied} ` +
      `Set McpToolService({ id: '${server}', approval: 'never' }) for a server you trust, or trustAnnotations: true to let the tools it marks read-only skip the question.`
    )
  }
  return `(its ToolSchema sets no approval, so it is 'on-risk', and a provider's tool has no risk(args)); ${denied} Set approval: 'never' in its ToolSchema for a safe tool.`
}

function diagnosticKey(d: Diagnostic): string {
  return `${d.code}|${d.source}|${d.file}|${d.line}|${d.message}`
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')
}
