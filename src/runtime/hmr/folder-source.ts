import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Diagnostic } from '../../features/diagnostic.js'
import { discoverPluginFolder, PLUGIN_FILES } from '../../features/discovery.js'
import { type LoadedPluginFile, type LoadedToolFile, type LoadOptions, loadPluginFile, loadToolFile } from '../../features/loader/index.js'
import { parseSkillFile, type SkillFile } from '../../features/skill-file.js'
import type { ResourceSlot, SkillSlot, ToolSlot } from '../generations/generation.js'
import { parseResourceFile } from '../../features/resource-file.js'
import { fileResource } from '../generations/resource-slots.js'
import { diagnosticOf, type FeatureFiles } from '../generations/generation-builder.js'
import type { ReloadProbe } from '../generations/instrumentation.js'
import type { PluginInstance } from '../plugins/plugin-instance.js'
import type { PluginDefinition } from '../../features/plugin-types.js'
import { definePlugin } from '../plugins/plugin.js'

interface ToolEntry {
  readonly loaded: LoadedToolFile
  /** Generations using this load; its source map is released when the last one is disposed. */
  refs: number
  stale: boolean
}

interface SkillEntry {
  readonly text: string
  readonly skill: SkillFile
}

interface NestedPlugin {
  readonly file: string
  readonly loaded: LoadedPluginFile
  stale: boolean
}

/**
 * Loads plugin folders into feature slots, reusing every tool whose file (and local imports) did
 * not change: a reload re-bundles only what an edit touched. Knows which paths to watch.
 */
export class FolderSource {
  /** The root's folder, when it has one. */
  readonly dir: string | undefined
  /** What file paths in messages and slot sources are relative to: the root's folder, else the working directory. */
  readonly #base: string
  readonly #modules: () => Promise<Record<string, unknown>>
  readonly #tools = new Map<string, ToolEntry>()
  readonly #skills = new Map<string, SkillEntry>()
  /**
   * Loads replaced since the last load, by file: a file that still bundles to the same code keeps its
   * load (and its module state), so a save without a change or a repeated event changes nothing.
   */
  readonly #replaced = new Map<string, ToolEntry>()
  #pluginFile: { file: string; loaded: LoadedPluginFile } | undefined
  /** `changed`: load again, keeping the load if it bundles the same; `all`: evaluate afresh. */
  #pluginStale: false | 'changed' | 'all' = 'all'
  readonly #watched = new Set<string>()
  /**
   * The local imports of each tool file as of its last good load: while the file fails to load they
   * stay watched, so fixing a broken helper outside `tools/` reloads it.
   */
  readonly #dependencies = new Map<string, readonly string[]>()
  /** The `plugin.ts` of each child's declared folder, by folder. */
  readonly #nested = new Map<string, NestedPlugin>()
  /** The folders of every plugin in the last loaded tree. */
  #pluginDirs = new Set<string>()

  constructor(dir: string | undefined, modules: () => Promise<Record<string, unknown>>) {
    this.dir = dir === undefined ? undefined : path.resolve(dir)
    this.#base = this.dir ?? process.cwd()
    this.#modules = modules
  }

  /** A child folder's plugin file (or a file it imports) was touched, created or removed since the last build. */
  #nestedTouched: false | 'changed' | 'created' = false

  /**
   * Whether a child folder's plugin file changed since the tree was set up: loads the touched ones
   * again, so a save that bundles to the same code keeps the mounted tree (as the root's own does).
   */
  async nestedPluginChanged(probe?: ReloadProbe): Promise<boolean> {
    const touched = this.#nestedTouched
    this.#nestedTouched = false
    if (touched === false) return false
    if (touched === 'created') return true
    let changed = false
    for (const [dir, entry] of this.#nested) {
      if (!entry.stale) continue
      try {
        const loaded = await loadPluginFile(entry.file, { modules: await this.#modules(), relativeTo: this.#base, onPhase: probe && phases(probe, this.#base) }, entry.loaded)
        if (loaded !== entry.loaded) {
          entry.loaded.release()
          this.#nested.set(dir, { file: entry.file, loaded, stale: false })
          changed = true
        } else entry.stale = false
      } catch {
        // Gone or broken: setting the tree up again reports it.
        changed = true
      }
    }
    return changed
  }

  /** The root plugin: `plugin.ts` when the folder has one (re-bundled only after it changed). */
  async loadPlugin(probe?: ReloadProbe): Promise<PluginDefinition> {
    if (this.dir === undefined) return definePlugin({ name: 'root' })
    const { pluginFile } = await discoverPluginFolder(this.dir)
    if (!pluginFile) {
      this.#pluginFile?.loaded.release()
      this.#pluginFile = undefined
      return definePlugin({ name: 'root' })
    }
    const previous = this.#pluginFile?.file === pluginFile && this.#pluginStale !== 'all' ? this.#pluginFile.loaded : undefined
    if (previous && this.#pluginStale === false) return previous.definition
    const loaded = await loadPluginFile(pluginFile, { modules: await this.#modules(), relativeTo: this.dir, onPhase: probe && phases(probe, this.dir) }, previous)
    if (loaded !== previous) {
      this.#pluginFile?.loaded.release()
      this.#pluginFile = { file: pluginFile, loaded }
    }
    this.#pluginStale = false
    return loaded.definition
  }

  /** The `plugin.ts` of a child's declared folder, if it has one (re-bundled only after it changed). */
  async folderPlugin(dir: string, probe?: ReloadProbe): Promise<{ file: string; definition: PluginDefinition } | undefined> {
    const { pluginFile } = await discoverPluginFolder(dir)
    const entry = this.#nested.get(dir)
    if (!pluginFile) {
      entry?.loaded.release()
      this.#nested.delete(dir)
      return undefined
    }
    const previous = entry?.file === pluginFile ? entry.loaded : undefined
    if (previous && !entry?.stale) return { file: pluginFile, definition: previous.definition }
    const loaded = await loadPluginFile(pluginFile, { modules: await this.#modules(), relativeTo: this.#base, onPhase: probe && phases(probe, this.#base) }, previous)
    if (loaded !== previous) entry?.loaded.release()
    this.#nested.set(dir, { file: pluginFile, loaded, stale: false })
    return { file: pluginFile, definition: loaded.definition }
  }

  /**
   * Marks what `changed` touches as stale (everything when `changed` is undefined). Returns whether
   * a plugin file (or a file it imports) changed, in which case the plugin tree must be set up again.
   */
  invalidate(changed: ReadonlySet<string> | undefined): { setup: boolean } {
    if (changed === undefined) {
      for (const entry of this.#tools.values()) entry.stale = true
      this.#tools.clear()
      this.#replaced.clear()
      this.#skills.clear()
      this.#pluginStale = 'all'
      for (const entry of this.#nested.values()) entry.loaded.release()
      this.#nested.clear()
      return { setup: true }
    }
    for (const [file, entry] of this.#tools) {
      if (touches(changed, file) || entry.loaded.dependencies.some((d) => touches(changed, d))) {
        entry.stale = true
        this.#tools.delete(file)
        this.#replaced.set(file, entry)
      }
    }
    // Skill files are read on every load and parsed again only when their text changed.
    const isPluginFile = (f: string) => /[/\\]plugin\.m?[jt]s$/.test(f)
    const rootChanged =
      [...changed].some((f) => isPluginFile(f) && path.dirname(f) === this.dir) || (this.#pluginFile?.loaded.dependencies.some((d) => touches(changed, d)) ?? false)
    if (rootChanged && this.#pluginStale === false) this.#pluginStale = 'changed'
    for (const entry of this.#nested.values()) {
      if (!touches(changed, entry.file) && !entry.loaded.dependencies.some((d) => touches(changed, d))) continue
      entry.stale = true
      this.#nestedTouched ||= 'changed'
    }
    // A plugin file created in a child's folder that had none (a removed one is a touched entry).
    const created = [...changed].some((f) => {
      const dir = path.dirname(f)
      return isPluginFile(f) && dir !== this.dir && this.#pluginDirs.has(dir) && !this.#nested.has(dir)
    })
    if (created) this.#nestedTouched = 'created'
    return { setup: rootChanged || this.#nestedTouched !== false }
  }

  /** Loads the tool and skill files of every plugin in the tree that has a folder. */
  async load(root: PluginInstance, probe?: ReloadProbe): Promise<FeatureFiles> {
    const tools: ToolSlot[] = []
    const skills: SkillSlot[] = []
    const resources: ResourceSlot[] = []
    const diagnostics: Diagnostic[] = []
    const used: ToolEntry[] = []
    // A file that fails to load keeps its replaced load: restored to that content, it is reused.
    const failed = new Set<string>()
    // Skill files seen in this load: the parse cache forgets the others (deleted or moved).
    const listed = new Set<string>()
    const modules = await this.#modules()
    this.#watched.clear()
    if (this.#pluginFile) for (const d of this.#pluginFile.loaded.dependencies) this.#watched.add(d)
    this.#pluginDirs = new Set()
    for (const plugin of root.walk()) {
      if (!plugin.dir) continue
      this.#pluginDirs.add(plugin.dir)
      const nested = this.#nested.get(plugin.dir)
      if (nested) for (const d of nested.loaded.dependencies) this.#watched.add(d)
      const folder = await discoverPluginFolder(plugin.dir)
      for (const sub of ['tools', path.join('agent', 'skills'), path.join('agent', 'resources')]) this.#watched.add(path.join(plugin.dir, sub))
      // Every name a plugin file may have: creating `plugin.mjs` where there was none is a change too.
      for (const name of PLUGIN_FILES) this.#watched.add(path.join(plugin.dir, name))
      for (const file of folder.toolFiles) {
        let entry = this.#tools.get(file)
        if (!entry) {
          // Reusable while a generation holds it: the last release drops its source map.
          const replaced = this.#replaced.get(file)
          const previous = replaced !== undefined && replaced.refs > 0 ? replaced : undefined
          try {
            const loaded = await loadToolFile(file, { modules, relativeTo: this.#base, onPhase: probe && phases(probe, this.#base) }, previous?.loaded)
            entry = loaded === previous?.loaded ? previous : { loaded, refs: 0, stale: false }
            entry.stale = false
            this.#tools.set(file, entry)
          } catch (error) {
            const diagnostic = diagnosticOf(error, 'LOAD_FAILED')
            diagnostics.push(diagnostic)
            failed.add(file)
            // Keep watching what the file imported when it last loaded, and the file the error is in.
            for (const d of this.#dependencies.get(file) ?? []) this.#watched.add(d)
            if (diagnostic.file) this.#watched.add(path.resolve(this.#base, diagnostic.file))
            continue
          }
        }
        this.#dependencies.set(file, entry.loaded.dependencies)
        for (const d of entry.loaded.dependencies) this.#watched.add(d)
        used.push(entry)
        tools.push({
          id: `${plugin.owner}#${file}`,
          owner: plugin.owner,
          name: plugin.qualify(entry.loaded.name),
          source: path.relative(this.#base, file) || file,
          definition: entry.loaded.definition,
          plugin,
        })
      }
      for (const file of folder.skillFiles) {
        listed.add(file)
        try {
          const skill = await this.#skill(file)
          skills.push({ id: `${plugin.owner}#${file}`, owner: plugin.owner, name: plugin.qualify(skill.name), source: path.relative(this.#base, file) || file, definition: skill })
        } catch (error) {
          diagnostics.push(diagnosticOf(error, 'INVALID_SKILL'))
        }
      }
      const resourceDir = path.join(plugin.dir, 'agent', 'resources')
      for (const file of folder.resourceFiles) {
        const rel = path.relative(resourceDir, file).split(path.sep).join('/')
        try {
          // Read whole at load: a generation serves the content it was built with, whatever the file does later.
          const parsed = parseResourceFile(file, await readFile(file), { owner: plugin.owner, rel, relativeTo: this.#base })
          resources.push(fileResource(plugin.owner, file, path.relative(this.#base, file) || file, parsed))
        } catch (error) {
          diagnostics.push(diagnosticOf(error, 'LOAD_FAILED'))
        }
      }
    }
    for (const entry of used) entry.refs++
    for (const file of this.#replaced.keys()) if (!failed.has(file)) this.#replaced.delete(file)
    for (const file of this.#skills.keys()) if (!listed.has(file)) this.#skills.delete(file)
    return {
      tools,
      skills,
      resources,
      diagnostics,
      release: () => {
        for (const entry of used) {
          // A load no generation uses any more, and that a newer load replaced, frees its source map.
          if (--entry.refs === 0 && entry.stale) entry.loaded.release()
        }
      },
    }
  }

  /** Every file and folder a watcher should follow for the last load. */
  watchPaths(): string[] {
    return [...this.#watched]
  }

  async #skill(file: string): Promise<SkillFile> {
    const text = await readFile(file, 'utf8')
    const cached = this.#skills.get(file)
    if (cached && cached.text === text) return cached.skill
    const skill = parseSkillFile(file, text, { relativeTo: this.#base })
    this.#skills.set(file, { text, skill })
    return skill
  }

  dispose(): void {
    for (const entry of this.#tools.values()) entry.stale = true
    this.#tools.clear()
    this.#replaced.clear()
    this.#pluginFile?.loaded.release()
    this.#pluginFile = undefined
    for (const entry of this.#nested.values()) entry.loaded.release()
    this.#nested.clear()
  }
}

/** The loader's bundle and evaluate timings, as reload phases named by the file relative to the folder. */
function phases(probe: ReloadProbe, dir: string): NonNullable<LoadOptions['onPhase']> {
  return (phase, file, startedAt, endedAt) => probe.phase(phase, startedAt, endedAt, path.relative(dir, file) || file)
}

/** Whether `file` or a folder holding it is among `changed` (a folder replaced by a new one is one path). */
function touches(changed: ReadonlySet<string>, file: string): boolean {
  for (let at = file, parent = path.dirname(file); ; at = parent, parent = path.dirname(parent)) {
    if (changed.has(at)) return true
    if (parent === at) return false
  }
}
