// Test support for the workspace plugin (not a tool: files in tools/lib are helpers). Loads plugin.ts
// and the tool files through the real feature loader (esbuild bundle + vm), as `seam dev` does.
import { cp, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as seam from 'seam-runtime'
import * as pluginRuntime from 'seam-runtime/plugin-runtime'
import { onTestFinished } from 'vitest'
import * as zod from 'zod'
import { loadPluginFile, loadToolFile } from '../../src/features/loader/index.js'

const REPO = fileURLToPath(new URL('../..', import.meta.url))
export const TOOL_NAMES = ['read_file', 'list_files', 'search_files', 'write_file', 'run_command'] as const
export type ToolName = (typeof TOOL_NAMES)[number]

const modules = { 'seam-runtime': seam, 'seam-runtime/plugin-runtime': pluginRuntime, zod }

let loaded: Promise<{ plugin: seam.PluginDefinition; tools: Map<ToolName, seam.ToolDefinition> }> | undefined

/** plugin.ts and the tool files, each bundled and evaluated once per test file. */
export function loadWorkspacePlugin() {
  loaded ??= (async () => {
    const plugin = (await loadPluginFile(join(REPO, 'plugin.ts'), { modules })).definition
    const tools = new Map<ToolName, seam.ToolDefinition>()
    for (const name of TOOL_NAMES) tools.set(name, (await loadToolFile(join(REPO, 'tools', `${name}.ts`), { modules })).definition)
    return { plugin, tools }
  })()
  return loaded
}

/** Copies the plugin (plugin.ts, tool files and helpers, skills; no tests) into `dir`, as a user's folder. */
export async function copyPlugin(dir: string): Promise<void> {
  const source = (path: string) => !/\.test\.ts$/.test(path) && basename(path) !== 'testing.ts'
  await cp(join(REPO, 'plugin.ts'), join(dir, 'plugin.ts'))
  await cp(join(REPO, 'tools'), join(dir, 'tools'), { recursive: true, filter: source })
  await cp(join(REPO, 'agent', 'skills'), join(dir, 'agent', 'skills'), { recursive: true })
}

/** A fresh temp folder holding `workspace/` and a sibling `outside/` (real paths); removed after the test. */
export async function tempFolders(): Promise<{ base: string; workspace: string; outside: string }> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'seam-ws-')))
  onTestFinished(() => rm(base, { recursive: true, force: true }))
  const workspace = join(base, 'workspace')
  const outside = join(base, 'outside')
  await mkdir(workspace)
  await mkdir(outside)
  return { base, workspace, outside }
}

export interface WorkspaceRootOptions {
  readonly approval?: seam.ApprovalPort
  /** Mount the plugin as this child of the root (tools become `<mount>__read_file`). */
  readonly mount?: string
  /** Also runs in the root plugin's setup (after the workspace plugin's). */
  readonly setup?: (ctx: seam.PluginContext) => void | Promise<void>
}

/**
 * A root whose plugin is the repository's own, with `SEAM_WORKSPACE` pointing at a temp workspace,
 * and one open turn. `call` runs one tool call through the whole pipeline.
 */
export async function workspaceRoot(options: WorkspaceRootOptions = {}) {
  const folders = await tempFolders()
  const { plugin, tools } = await loadWorkspacePlugin()
  const workspace: seam.PluginDefinition = {
    ...plugin,
    async setup(ctx) {
      await plugin.setup?.(ctx)
      for (const [name, tool] of tools) ctx.addTool(name, tool)
    },
  }
  const previous = process.env.SEAM_WORKSPACE
  process.env.SEAM_WORKSPACE = folders.workspace
  onTestFinished(() => {
    if (previous === undefined) delete process.env.SEAM_WORKSPACE
    else process.env.SEAM_WORKSPACE = previous
  })
  const rootPlugin = seam.definePlugin({
    name: 'root',
    plugins: options.mount ? [{ ...workspace, name: options.mount }] : [],
    async setup(ctx) {
      if (!options.mount) await workspace.setup?.(ctx)
      await options.setup?.(ctx)
    },
  })
  const journal = seam.memoryJournal()
  const root = await seam.createRoot({ plugin: rootPlugin, journal, approval: options.approval })
  onTestFinished(() => root.close())
  const controller = new AbortController()
  const turn = await root.beginTurn({ session: 's1', principal: { subjectId: 'u1', roles: [] }, signal: controller.signal })
  let seq = 0
  const call = (name: string, args: Record<string, unknown>) =>
    turn.tools.execute({ callId: `c${++seq}`, name, arguments: JSON.stringify(args) })
  return { ...folders, root, turn, journal, call, abort: () => controller.abort(), tools }
}

/** An approval port that records each request and answers `answer`. */
export function recordingApproval(answer: seam.ApprovalAnswer = 'allowed-once') {
  const requests: seam.ApprovalRequest[] = []
  const port: seam.ApprovalPort = {
    async request(request) {
      requests.push(request)
      return answer
    },
  }
  return { port, requests }
}

/** The text of an outcome's content blocks. */
export function textOf(outcome: seam.ToolCallOutcome): string {
  return outcome.content.map((block) => ('text' in block ? String(block.text) : '')).join('\n')
}
