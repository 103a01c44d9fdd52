import type { SkillSpec, ToolDefinition, ToolLogger } from './define-tool.js'
import type { ResourceSpec } from './resource.js'
import type { Resources, Token } from '../seams/tokens.js'
import type { ExecuteWrapper, Guard, PostExecuteHook, PreExecuteHook, ResultObserver } from '../seams/calls.js'

/** Removes what it was returned for. Idempotent. */
export type Disposer = () => void

export interface PluginHooks {
  preExecute(hook: PreExecuteHook): Disposer
  execute(wrapper: ExecuteWrapper): Disposer
  postExecute(hook: PostExecuteHook): Disposer
  result(observer: ResultObserver): Disposer
}

/** What a plugin's `setup` receives. Everything registered here is disposed with the plugin's scope. */
export interface PluginContext {
  readonly name: string
  /** The owner id: the path of plugin names, `root` or `root/maps`. */
  readonly owner: string
  /** The number of the generation being built. */
  readonly generation: number
  /** The plugin's folder, when it has one. */
  readonly dir: string | undefined
  readonly resources: Resources
  /** The nearest provided resource; throws `MISSING_RESOURCE` when nothing provides it. */
  use<T>(token: Token<T>): T
  /** Registers a tool under `name` (qualified `<child>__<name>` in child plugins). */
  addTool(name: string, tool: ToolDefinition): Disposer
  addSkill(name: string, skill: SkillSpec): Disposer
  /**
   * Registers a resource under `uri`, read by `spec.read` on every read; a URI with `{name}`
   * parameters (an RFC 6570 level-1 template, `notes://{id}`) is a template whose `read` gets them.
   */
  addResource(uri: string, spec: ResourceSpec): Disposer
  /** Mounts a child plugin; its owner id is `<this owner>/<child name>`. */
  plugin(child: PluginDefinition): Promise<void>
  /** Registers a disposer; disposers run once each, in reverse order. */
  effect(dispose: () => unknown, label: string): Disposer
  readonly hooks: PluginHooks
  readonly guards: { add(guard: Guard): Disposer }
  readonly log: ToolLogger
}

export interface PluginDefinition {
  readonly name: string
  /** A folder with `tools/` and `agent/skills/`; relative paths resolve against the parent's folder. */
  readonly dir?: string
  /** Child plugins mounted before `setup` runs. */
  readonly plugins?: readonly PluginDefinition[]
  setup?(ctx: PluginContext): undefined | Disposer | Promise<undefined | Disposer> | void | Promise<void>
}

export const PLUGIN_BRAND = 'seam-runtime/plugin@1'
