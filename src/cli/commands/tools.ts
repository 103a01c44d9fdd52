import type { Command } from 'commander'
import { performance } from 'node:perf_hooks'
import { asksEveryCall } from '../../runtime/approvals/approval-default.js'
import type { AgentCapabilities } from '../../seams/capabilities.js'
import { findDev, isLocal, type Local, noteWhich } from '../dev-link.js'
import { EXIT } from '../errors.js'
import type { ProviderStatus } from '../../seams/types.js'
import { formatProvider, ms, printable, schemaSummary, table } from '../format.js'
import { type CliContext, line, styleFor } from '../io.js'
import { loadRuntime, pluginDir } from '../workspace.js'

export function registerTools(program: Command, cli: CliContext): void {
  program
    .command('tools')
    .description('list the tools, skills and resources a plugin folder provides (its running `seam dev`\'s generation, else loading it once; no journal writes)')
    .argument('[dir]', 'the plugin folder', '.')
    .option('--json', 'print the catalog as JSON')
    .option('--local', 'load the folder here even when a `seam dev` of it is running')
    .action(async (dir: string, flags: ToolsFlags) => {
      cli.exitCode = await tools(cli, dir, flags)
    })
}

interface ToolsFlags {
  json?: boolean
  local?: boolean
}

async function tools(cli: CliContext, dirArg: string, flags: ToolsFlags): Promise<number> {
  const dir = pluginDir(cli.io.cwd, dirArg)
  const found = await findDev(dir, flags.local === true)
  if (!isLocal(found)) noteWhich(cli.io.stderr, cli.io.env, found, 'tools')
  const { catalog, providers } = isLocal(found) ? await listLocally(cli, dir, found) : fromDev(await found.get<Listed>('/api/cli/tools'))
  const out = cli.io.stdout
  if (flags.json) {
    line(out, JSON.stringify({ ...catalog, providers }, null, 2))
    return EXIT.ok
  }
  const style = styleFor(out, cli.io.env)
  // A `seam dev` of an older version answers without resources.
  const resources = catalog.resources ?? []
  line(out, style.dim(`generation ${catalog.generation}: ${catalog.tools.length} tools, ${catalog.skills.length} skills, ${resources.length} resources`))
  if (catalog.tools.length > 0) {
    // Names, sources and schemas may come from remote providers: shown with control characters escaped.
    const rows = catalog.tools.map((t) => [style.bold(printable(t.name)), printable(t.source), approvalText(t), printable(t.summary)])
    for (const row of table([['TOOL', 'SOURCE', 'APPROVAL', 'ARGUMENTS'].map(style.dim), ...rows])) line(out, row)
  }
  if (catalog.skills.length > 0) {
    line(out)
    const rows = catalog.skills.map((s) => [style.bold(printable(s.name)), printable(s.source), printable(oneLine(s.description))])
    for (const row of table([['SKILL', 'SOURCE', 'DESCRIPTION'].map(style.dim), ...rows])) line(out, row)
  }
  if (resources.length > 0) {
    line(out)
    const rows = resources.map((r) => [style.bold(printable(r.uri)), printable(r.source), printable(r.mimeType ?? ''), printable(oneLine(r.title ?? r.description ?? (r.template ? 'template' : '')))])
    for (const row of table([['RESOURCE', 'SOURCE', 'TYPE', 'DESCRIPTION'].map(style.dim), ...rows])) line(out, row)
  }
  // A provider that is down contributed no tools: said, so `0 tools` is never a mystery.
  const down = providers.filter((status) => status.state !== 'connected')
  if (down.length > 0) {
    line(out)
    for (const status of down) line(out, `${style.yellow('provider')} ${formatProvider(status, style)}`)
  }
  return EXIT.ok
}

type Catalog = ReturnType<typeof catalogJson>
/** What `/api/cli/tools` answers: the catalog as `--json` prints it, with the providers. */
type Listed = Catalog & { providers: ProviderStatus[] }

function fromDev({ providers, ...catalog }: Listed): { catalog: Catalog; providers: ProviderStatus[] } {
  return { catalog, providers }
}

/** Loads the folder once (the default memory journal: listing must not touch the durable one). */
async function listLocally(cli: CliContext, dir: string, local: Local): Promise<{ catalog: Catalog; providers: ProviderStatus[] }> {
  const started = performance.now()
  const { createRoot } = await loadRuntime()
  const root = await createRoot({ dir, repair: false })
  try {
    const listed = { catalog: catalogJson(await root.capabilities()), providers: root.providers() }
    noteWhich(cli.io.stderr, cli.io.env, local, `loaded the folder (${ms(performance.now() - started)})`)
    return listed
  } finally {
    await root.close()
  }
}

/** The catalog as `seam tools --json` prints it (and `seam dev` answers `/api/cli/tools`). */
export function catalogJson(capabilities: AgentCapabilities) {
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
    resources: capabilities.resources.map((r) => ({
      uri: r.uri,
      template: r.template,
      name: r.name,
      source: r.source,
      owner: r.owner,
      ...(r.title !== undefined ? { title: r.title } : {}),
      ...(r.description !== undefined ? { description: r.description } : {}),
      ...(r.mimeType !== undefined ? { mimeType: r.mimeType } : {}),
      ...(r.size !== undefined ? { size: r.size } : {}),
    })),
  }
}

/** `on-risk` alone reads as "asks when risky"; without risk information it asks every call, so say so. */
function approvalText(tool: Catalog['tools'][number]): string {
  return tool.approval === 'on-risk' && tool.asksEveryCall ? 'on-risk: asks every call' : tool.approval
}

function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}
