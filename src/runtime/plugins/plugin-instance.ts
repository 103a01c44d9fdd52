import { readFileSync } from 'node:fs'
import path from 'node:path'
import { SeamError, messageOf } from '../../errors.js'
import type { SkillSpec, ToolDefinition } from '../../features/define-tool.js'
import { codeFrame, locateError } from '../../features/loader/index.js'
import { defineSkill, isToolDefinition } from '../../features/define-tool.js'
import { defineResource, type ResourceDefinition, type ResourceSpec } from '../../features/resource.js'
import type { Logger } from '../base/logger.js'
import type { Disposer, PluginContext, PluginDefinition, PluginHooks } from '../../features/plugin-types.js'
import { assertPluginName } from './plugin.js'
import type { ExecuteWrapper, Guard, PostExecuteHook, PreExecuteHook, ResultObserver } from '../../seams/calls.js'
import { ResourceTable } from './resources.js'
import { DisposableScope } from './scope.js'

const TOOL_NAME = /^[a-z0-9][a-z0-9_-]*$/

/**
 * Loads the `plugin.ts` of a declared plugin folder, if it has one (the folder source does, with
 * the tool loader); `file` is its absolute path.
 */
export type FolderPluginLoader = (dir: string) => Promise<{ readonly file: string; readonly definition: PluginDefinition } | undefined>

interface MountOptions {
  readonly generation: number
  readonly baseDir?: string
  readonly logger: Logger
  readonly folderPlugin?: FolderPluginLoader
}

/** Hook lists of one plugin, in registration order. */
export interface HookLists {
  readonly preExecute: PreExecuteHook[]
  readonly execute: ExecuteWrapper[]
  readonly postExecute: PostExecuteHook[]
  readonly result: ResultObserver[]
  readonly guards: Guard[]
}

/**
 * One mounted plugin: its scope, resources, programmatic features and hooks. Generations that
 * share an unchanged plugin tree retain it; the scope is disposed when the last one releases it.
 */
export class PluginInstance {
  readonly name: string
  readonly owner: string
  /**
   * How messages and log lines name the plugin: its own name, below the root its path of names
   * (`support/maps`). The owner id (`root/maps`) names the root `root` whatever it is called.
   */
  readonly label: string
  /** The plugin's logger (`ctx.log` in setup), labelled with `label`; tool bodies log under it too. */
  log: Logger | undefined
  readonly dir: string | undefined
  readonly definition: PluginDefinition
  readonly parent: PluginInstance | undefined
  readonly scope = new DisposableScope()
  readonly resources: ResourceTable
  readonly children: PluginInstance[] = []
  readonly tools = new Map<string, ToolDefinition>()
  readonly skills = new Map<string, SkillSpec>()
  /** `addResource` registrations by URI (or URI template); not `resources`, the plugin's resource table. */
  readonly published = new Map<string, ResourceDefinition>()
  readonly hooks: HookLists = { preExecute: [], execute: [], postExecute: [], result: [], guards: [] }
  #refs = 0
  #prefix: string | undefined
  #toolsInScope = false

  private constructor(definition: PluginDefinition, parent: PluginInstance | undefined, baseDir: string | undefined) {
    this.definition = definition
    this.name = definition.name
    this.parent = parent
    this.owner = parent ? `${parent.owner}/${definition.name}` : 'root'
    this.label = parent ? `${parent.label}/${definition.name}` : definition.name
    const dir = definition.dir ?? (parent ? undefined : baseDir)
    this.dir = dir === undefined ? undefined : path.resolve(parent?.dir ?? baseDir ?? process.cwd(), dir)
    this.resources = new ResourceTable(this.owner, parent?.resources, (d, label) => this.scope.add(d, label))
  }

  /**
   * Mounts `definition` and its children, running each setup. A child declared with a `dir` is
   * that folder, as a root folder is: the folder's `plugin.ts` (when it has one) is its setup and
   * children, under the declared name; a declaration that brings `setup` or `plugins` of its own
   * as well is refused. On failure everything this call created is disposed and a `SETUP_FAILED`
   * error names the plugin.
   */
  static async mount(definition: PluginDefinition, options: MountOptions & { parent?: PluginInstance }): Promise<PluginInstance> {
    assertPluginName(definition.name)
    const instance = new PluginInstance(definition, options.parent, options.baseDir)
    try {
      const own = await instance.#folderPlugin(options)
      for (const child of own.plugins ?? []) await instance.#mountChild(child, options)
      const ctx = instance.#context(options)
      const returned = await own.setup?.(ctx)
      if (typeof returned === 'function') instance.scope.add(returned, `${instance.owner} setup`)
    } catch (error) {
      await instance.scope.dispose().catch(() => {})
      if (SeamError.is(error, 'SETUP_FAILED')) throw error
      // A child's plugin file that fails to load keeps its own location (file, line, frame).
      const located = SeamError.is(error) && typeof error.details?.file === 'string' ? error.details : whereThrown(error)
      throw new SeamError('SETUP_FAILED', `plugin "${instance.label}" failed to set up: ${messageOf(error)}`, {
        cause: error,
        details: { ...located, owner: instance.owner },
      })
    }
    return instance
  }

  /** What sets this plugin up: its declaration, or the `plugin.ts` of the folder a child declares. */
  async #folderPlugin(options: MountOptions): Promise<PluginDefinition> {
    const declared = this.definition
    // The root's folder plugin is the root definition itself (the folder source loads it).
    if (this.parent === undefined || declared.dir === undefined || this.dir === undefined || options.folderPlugin === undefined) return declared
    const own = await options.folderPlugin(this.dir)
    if (own === undefined) return declared
    const extra = [declared.setup ? 'setup' : '', declared.plugins?.length ? 'plugins' : ''].filter(Boolean).join(' and ')
    if (extra !== '') {
      throw new SeamError(
        'SETUP_FAILED',
        `plugin "${this.label}" declares ${extra}, and its folder has a plugin.ts of its own (${own.file}): keep one of them, the folder's plugin.ts or the declaration's ${extra}`,
        { details: { owner: this.owner, file: own.file } },
      )
    }
    return own.definition
  }

  /** The name a model sees for a local tool or skill name: `<child>__<name>` below the root. */
  qualify(local: string): string {
    // Asked for every tool and skill of every generation: the prefix is worked out once.
    this.#prefix ??= this.owner.split('/').slice(1).map((part) => `${part}__`).join('')
    return this.#prefix + local
  }

  /** This plugin and its descendants, parents first. */
  *walk(): Generator<PluginInstance> {
    yield this
    for (const child of this.children) yield* child.walk()
  }

  retain(): void {
    this.#refs++
  }

  /** Drops one reference; disposes the scope (children first) at zero. */
  async release(): Promise<void> {
    if (--this.#refs > 0) return
    await this.scope.dispose()
  }

  async #mountChild(child: PluginDefinition, options: MountOptions): Promise<void> {
    if (this.children.some((c) => c.name === child?.name)) {
      throw new SeamError('INVALID_PLUGIN', `plugin "${this.owner}" mounts two children named "${child.name}"`)
    }
    const instance = await PluginInstance.mount(child, { ...options, parent: this })
    this.children.push(instance)
    this.scope.add(() => instance.scope.dispose(), `plugin ${instance.owner}`)
  }

  #context(options: MountOptions): PluginContext {
    const log = options.logger.child(this.label)
    this.log = log
    const register = <T>(list: T[], item: T, label: string): Disposer => {
      if (typeof item !== 'function') throw new SeamError('INVALID_PLUGIN', `${this.owner}: ${label} must be a function`)
      list.push(item)
      return this.scope.add(() => {
        const index = list.indexOf(item)
        if (index >= 0) list.splice(index, 1)
      }, label)
    }
    return Object.freeze({
      name: this.name,
      owner: this.owner,
      generation: options.generation,
      dir: this.dir,
      resources: this.resources,
      log,
      use: (token) => this.resources.use(token),
      addTool: (name, tool) => this.#addTool(name, tool),
      addSkill: (name, skill) => this.#addSkill(name, skill),
      addResource: (uri, spec) => this.#addResource(uri, spec),
      plugin: (child) => this.#mountChild(child, options),
      effect: (dispose, label) => this.scope.add(dispose, label),
      hooks: Object.freeze<PluginHooks>({
        preExecute: (hook) => register(this.hooks.preExecute, hook, 'pre-execute hook'),
        execute: (wrapper) => register(this.hooks.execute, wrapper, 'execute wrapper'),
        postExecute: (hook) => register(this.hooks.postExecute, hook, 'post-execute hook'),
        result: (observer) => register(this.hooks.result, observer, 'result observer'),
      }),
      guards: Object.freeze({ add: (guard: Guard) => register(this.hooks.guards, guard, 'guard') }),
    } satisfies PluginContext)
  }

  #addTool(name: string, tool: ToolDefinition): Disposer {
    if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
      throw new SeamError('INVALID_TOOL', `${this.owner}: tool name ${JSON.stringify(name)} must match [a-z0-9][a-z0-9_-]*`)
    }
    if (!isToolDefinition(tool)) {
      throw new SeamError('INVALID_TOOL', `${this.owner}: addTool("${name}") expects defineTool({...})`)
    }
    if (this.tools.has(name)) throw new SeamError('DUPLICATE_CAPABILITY', `${this.owner}: tool "${name}" is added twice`)
    // One scope entry for all the plugin's tools, not one per tool: a setup that adds 10,000 tools
    // runs again on every reload, and the scope only has to forget them when the plugin goes.
    if (this.tools.size === 0 && !this.#toolsInScope) {
      this.#toolsInScope = true
      this.scope.add(() => this.tools.clear(), 'tools')
    }
    this.tools.set(name, tool)
    let removed = false
    return () => {
      if (removed) return
      removed = true
      if (this.tools.get(name) === tool) this.tools.delete(name)
    }
  }

  #addSkill(name: string, skill: SkillSpec): Disposer {
    if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
      throw new SeamError('INVALID_SKILL', `${this.owner}: skill name ${JSON.stringify(name)} must match [a-z0-9][a-z0-9_-]*`)
    }
    if (this.skills.has(name)) throw new SeamError('DUPLICATE_CAPABILITY', `${this.owner}: skill "${name}" is added twice`)
    this.skills.set(name, defineSkill(skill))
    return this.scope.add(() => this.skills.delete(name), `skill ${name}`)
  }

  #addResource(uri: string, spec: ResourceSpec): Disposer {
    const definition = defineResource(uri, spec)
    if (this.published.has(uri)) throw new SeamError('DUPLICATE_CAPABILITY', `${this.owner}: resource "${uri}" is added twice`)
    this.published.set(uri, definition)
    return this.scope.add(() => {
      if (this.published.get(uri) === definition) this.published.delete(uri)
    }, `resource ${uri}`)
  }
}

/**
 * Where a setup error was thrown in a loaded plugin file (source-mapped): file, line, column and a
 * code frame, so the diagnostic points at the line. Nothing for an error thrown elsewhere.
 */
function whereThrown(error: unknown): Record<string, unknown> {
  const at = locateError(error)
  if (at === undefined) return {}
  let frame: string | undefined
  try {
    frame = codeFrame(readFileSync(at.file, 'utf8'), at.line, at.column)
  } catch {
    // The file went away since it loaded: the location alone.
  }
  return { file: at.file, line: at.line, column: at.column, frame }
}
