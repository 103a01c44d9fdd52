import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Diagnostic } from '../../features/diagnostic.js'
import { discoverPluginFolder, PLUGIN_FILES } from '../../features/discovery.js'
import { type LoadedPluginFile, type LoadedToolFile, type LoadOptions, loadPluginFile, loadToolFile } from '../../features/loader/index.js'
import { parseSkillFile, type SkillFile } from '../../features/skill-file.js'
import type { SkillSlot, ToolSlot } from '../generation.js'
import { diagnosticOf, type FeatureFiles } from '../generation-builder.js'
import type { ReloadProbe } from '../instrumentation.js'
import type { PluginInstance } from '../plugin-instance.js'
import type { PluginDefinition } from '../plugin-types.js'
import { definePlugin } from '../plugin.js'

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

/**
 * Loads plugin folders into feature slots, reusing every tool whose file (and local imports) did
 * not change: a reload re-bundles only what an edit touched. Knows which paths to watch.
 */
export class FolderSource {
  readonly dir: string
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

  constructor(dir: string, modules: () => Promise<Record<string, unknown>>) {
    this.dir = path.resolve(dir)
    this.#modules = modules
  }

  /** The root plugin: `plugin.ts` when the folder has one (re-bundled only after it changed). */
  async loadPlugin(probe?: ReloadProbe): Promise<PluginDefinition> {
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
    const pluginChanged =
      [...changed].some((f) => /[/\\]plugin\.m?[jt]s$/.test(f) && path.dirname(f) === this.dir) ||
      (this.#pluginFile?.loaded.dependencies.some((d) => touches(changed, d)) ?? false)
    if (pluginChanged && this.#pluginStale === false) this.#pluginStale = 'changed'
    return { setup: pluginChanged }
  }

  /** Loads the tool and skill files of every plugin in the tree that has a folder. */
  async load(root: PluginInstance, probe?: ReloadProbe): Promise<FeatureFiles> {
    const tools: ToolSlot[] = []
    const skills: SkillSlot[] = []
    const diagnostics: Diagnostic[] = []
    const used: ToolEntry[] = []
    // A file that fails to load keeps its replaced load: restored to that content, it is reused.
    const failed = new Set<string>()
    // Skill files seen in this load: the parse cache forgets the others (deleted or moved).
    const listed = new Set<string>()
    const modules = await this.#modules()
    this.#watched.clear()
    if (this.#pluginFile) for (const d of this.#pluginFile.loaded.dependencies) this.#watched.add(d)
    for (const plugin of root.walk()) {
      if (!plugin.dir) continue
      const folder = await discoverPluginFolder(plugin.dir)
      for (const sub of ['tools', path.join('agent', 'skills')]) this.#watched.add(path.join(plugin.dir, sub))
      // Every name a plugin file may have: creating `plugin.mjs` where there was none is a change too.
      for (const name of PLUGIN_FILES) this.#watched.add(path.join(plugin.dir, name))
      for (const file of folder.toolFiles) {
        let entry = this.#tools.get(file)
        if (!entry) {
          // Reusable while a generation holds it: the last release drops its source map.
          const replaced = this.#replaced.get(file)
          const previous = replaced !== undefined && replaced.refs > 0 ? replaced : undefined
          try {
            const loaded = await loadToolFile(file, { modules, relativeTo: this.dir, onPhase: probe && phases(probe, this.dir) }, previous?.loaded)
            entry = loaded === previous?.loaded ? previous : { loaded, refs: 0, stale: false }
            entry.stale = false
            this.#tools.set(file, entry)
          } catch (error) {
            const diagnostic = diagnosticOf(error, 'LOAD_FAILED')
            diagnostics.push(diagnostic)
            failed.add(file)
            // Keep watching what the file imported when it last loaded, and the file the error is in.
            for (const d of this.#dependencies.get(file) ?? []) this.#watched.add(d)
            if (diagnostic.file) this.#watched.add(path.resolve(this.dir, diagnostic.file))
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
          source: path.relative(this.dir, file) || file,
          definition: entry.loaded.definition,
          plugin,
        })
      }
      for (const file of folder.skillFiles) {
        listed.add(file)
        try {
          const skill = await this.#skill(file)
          skills.push({ id: `${plugin.owner}#${file}`, owner: plugin.owner, name: plugin.qualify(skill.name), source: path.relative(this.dir, file) || file, definition: skill })
        } catch (error) {
          diagnostics.push(diagnosticOf(error, 'INVALID_SKILL'))
        }
      }
    }
    for (const entry of used) entry.refs++
    for (const file of this.#replaced.keys()) if (!failed.has(file)) this.#replaced.delete(file)
    for (const file of this.#skills.keys()) if (!listed.has(file)) this.#skills.delete(file)
    return {
      tools,
      skills,
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
    const skill = parseSkillFile(file, text, { relativeTo: this.dir })
    this.#skills.set(file, { text, skill })
    return skill
  }

  dispose(): void {
    for (const entry of this.#tools.values()) entry.stale = true
    this.#tools.clear()
    this.#replaced.clear()
    this.#pluginFile?.loaded.release()
    this.#pluginFile = undefined
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
