import type { Command } from 'commander'
import { asksEveryCall } from '../../runtime/approvals/approval-default.js'
import type { AgentCapabilities, ToolCapability } from '../../seams/capabilities.js'
import { EXIT } from '../errors.js'
import type { ProviderStatus } from '../../seams/types.js'
import { formatProvider, printable, schemaSummary, table } from '../format.js'
import { type CliContext, line, styleFor } from '../io.js'
import { loadRuntime, pluginDir } from '../workspace.js'

export function registerTools(program: Command, cli: CliContext): void {
  program
    .command('tools')
    .description('list the tools and skills a plugin folder provides (loads it once; no journal writes)')
    .argument('[dir]', 'the plugin folder', '.')
    .option('--json', 'print the catalog as JSON')
    .action(async (dir: string, flags: { json?: boolean }) => {
      cli.exitCode = await tools(cli, dir, flags.json === true)
    })
}

async function tools(cli: CliContext, dirArg: string, json: boolean): Promise<number> {
  const dir = pluginDir(cli.io.cwd, dirArg)
  // The default memory journal: listing must not touch the folder's durable journal.
  const { createRoot } = await loadRuntime()
  const root = await createRoot({ dir, repair: false })
  let capabilities: AgentCapabilities
  let providers: ProviderStatus[]
  try {
    capabilities = await root.capabilities()
    providers = root.providers()
  } finally {
    await root.close()
  }
  const out = cli.io.stdout
  if (json) {
    line(out, JSON.stringify({ ...catalogJson(capabilities), providers }, null, 2))
    return EXIT.ok
  }
  const style = styleFor(out, cli.io.env)
  line(out, style.dim(`generation ${capabilities.generation}: ${capabilities.tools.length} tools, ${capabilities.skills.length} skills`))
  if (capabilities.tools.length > 0) {
    // Names, sources and schemas may come from remote providers: shown with control characters escaped.
    const rows = capabilities.tools.map((t) => [style.bold(printable(t.name)), printable(t.source), approvalText(t), printable(schemaSummary(t.parameters))])
    for (const row of table([['TOOL', 'SOURCE', 'APPROVAL', 'ARGUMENTS'].map(style.dim), ...rows])) line(out, row)
  }
  if (capabilities.skills.length > 0) {
    line(out)
    const rows = capabilities.skills.map((s) => [style.bold(printable(s.name)), printable(s.source), printable(oneLine(s.description))])
    for (const row of table([['SKILL', 'SOURCE', 'DESCRIPTION'].map(style.dim), ...rows])) line(out, row)
  }
  // A provider that is down contributed no tools: said, so `0 tools` is never a mystery.
  const down = providers.filter((status) => status.state !== 'connected')
  if (down.length > 0) {
    line(out)
    for (const status of down) line(out, `${style.yellow('provider')} ${formatProvider(status, style)}`)
  }
  return EXIT.ok
}

function catalogJson(capabilities: AgentCapabilities) {
  return {
    generation: capabilities.generation,
    tools: capabilities.tools.map((t) => ({
      name: t.name,
      description: t.description,
      source: t.source,
      owner: t.owner,
      approval: t.approval,
      asksEveryCall: asksEveryCall(t),
      summary: schemaSummary(t.parameters),
      parameters: t.parameters,
      ...(t.permissions.length ? { permissions: t.permissions } : {}),
      ...(t.platforms.length ? { platforms: t.platforms } : {}),
      ...(t.scopes.length ? { scopes: t.scopes } : {}),
      ...(t.annotations ? { annotations: t.annotations } : {}),
      ...(t.timeoutMs !== undefined ? { timeoutMs: t.timeoutMs } : {}),
    })),
    skills: capabilities.skills.map((s) => ({ name: s.name, description: s.description, source: s.source, owner: s.owner, tools: s.tools, always: s.always })),
  }
}

/** `on-risk` alone reads as "asks when risky"; without risk information it asks every call, so say so. */
function approvalText(tool: ToolCapability): string {
  return tool.approval === 'on-risk' && asksEveryCall(tool) ? 'on-risk: asks every call' : tool.approval
}

function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}
