import { isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, visit, type Document } from 'yaml'
import path from 'node:path'
import { messageOf, SeamError } from '../errors.js'
import type { SkillArgument, SkillArgumentAsk, SkillSpec } from './define-tool.js'
import { codeFrame } from './loader/code-frame.js'
import { argumentValues } from './skill-argument-values.js'
import { displayPath, FEATURE_NAME, fileStem } from './loader/file-name.js'

/** A parsed `agent/skills/<name>.md`. */
export interface SkillFile extends SkillSpec {
  readonly name: string
  /** Where each `tools:` entry is written, so a name the generation lacks is reported there. */
  readonly toolsAt?: readonly SkillToolRef[]
}

/** One entry of a skill file's `tools:` list and its place in the file. */
export interface SkillToolRef {
  readonly name: string
  readonly file: string
  /** 1-based. */
  readonly line: number
  /** 1-based. */
  readonly column: number
  readonly frame: string
}

/** How skill-file messages name the file. */
export interface SkillFileOptions {
  /** Messages show paths relative to this folder (default: the working folder). */
  readonly relativeTo?: string
}

// Explicit tags beyond plain JSON-like data (`!!js/function`, `!!binary`, local `!x`) are refused.
const PLAIN_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`))

/**
 * Parses a skill file: optional YAML front matter (`name`, `description`, `tools`, `always`,
 * `arguments` (each `{ name, description?, required?, ask?, values? }`), `resources`; other keys
 * ignored) between `---` lines at the very top, then the
 * Markdown instructions. The YAML is data only: never evaluated, custom tags refused. Problems
 * throw `INVALID_SKILL` with the line and column in the file.
 */
export function parseSkillFile(file: string, text: string, options: SkillFileOptions = {}): SkillFile {
  const fail = (message: string, line?: number, column?: number): SeamError => {
    const where = line === undefined ? '' : `:${line}:${column ?? 1}`
    const frame = line === undefined ? undefined : codeFrame(text, line, column ?? 1)
    return new SeamError('INVALID_SKILL', `${displayPath(file, options.relativeTo)}${where}: ${message}`, {
      details: { file, line, column, frame },
    })
  }
  const { yaml, body, yamlLine } = splitFrontMatter(text, fail)
  const meta = yaml === undefined ? {} : readFrontMatter(yaml, (message, line, column) => fail(message, line + yamlLine - 1, column))
  const toolsAt = meta.toolsAt?.map(({ name, line, column }) => ({ name, file, line: line + yamlLine - 1, column, frame: codeFrame(text, line + yamlLine - 1, column) }))

  const name = meta.name ?? fileStem(file)
  if (!FEATURE_NAME.test(name)) {
    throw fail(`a skill name must match ${FEATURE_NAME.source}; got "${name}" (rename the file or set \`name:\`)`)
  }
  const description = meta.description ?? firstHeading(body)
  if (description === undefined) {
    throw fail('has no description: add `description:` to the front matter or start the body with a # heading')
  }
  const skill: SkillFile = { name, description, instructions: body.trim(), ...(toolsAt ? { toolsAt } : {}) }
  if (meta.tools !== undefined) skill.tools = meta.tools
  if (meta.always !== undefined) skill.always = meta.always
  if (meta.arguments !== undefined) skill.arguments = meta.arguments
  if (meta.resources !== undefined) {
    // A relative path is resolved against the skill file and must stay inside its plugin folder.
    const pluginDir = path.dirname(path.dirname(path.dirname(path.resolve(file))))
    skill.resources = meta.resources.map((entry) => {
      if (!entry.startsWith('./') && !entry.startsWith('../')) return entry
      const absolute = path.resolve(path.dirname(path.resolve(file)), entry)
      const rel = path.relative(pluginDir, absolute)
      if (rel.startsWith('..') || path.isAbsolute(rel)) throw fail(`\`resources:\` entry ${JSON.stringify(entry)} leaves the plugin folder`)
      return `file:${absolute}`
    })
  }
  return skill
}

export type Fail = (message: string, line?: number, column?: number) => SeamError

export function splitFrontMatter(text: string, fail: Fail): { yaml?: string; body: string; yamlLine: number } {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text
  const open = /^---[ \t]*\r?\n/.exec(source)
  if (open === null) return { body: source, yamlLine: 1 }
  const close = /^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/m
  const rest = source.slice(open[0].length)
  const end = close.exec(rest)
  if (end === null) throw fail('the front matter opened on line 1 is never closed with a `---` line', 1, 1)
  return { yaml: rest.slice(0, end.index), body: rest.slice(end.index + end[0].length), yamlLine: 2 }
}

interface FrontMatter {
  name?: string
  description?: string
  tools?: string[]
  /** Each tools entry's line and column inside the YAML text (1-based). */
  toolsAt?: { name: string; line: number; column: number }[]
  always?: boolean
  arguments?: SkillArgument[]
  resources?: string[]
}

/** The most characters an `ask:` message may have: it is shown to a person, not a document. */
const MAX_ASK_MESSAGE = 1000

/** An argument's `ask:` (a message, or `{ message, key?, title?, description? }`) checked as data; `null` when it is malformed. */
function askOf(value: unknown): SkillArgumentAsk | null {
  const text = (v: unknown) => typeof v === 'string' && v.trim() !== '' && v.length <= MAX_ASK_MESSAGE
  if (typeof value === 'string') return text(value) ? { message: value.trim() } : null
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null
  const { message, key, title, description, ...rest } = value as Record<string, unknown>
  if (Object.keys(rest).length > 0 || !text(message)) return null
  if (key !== undefined && (typeof key !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(key))) return null
  if ((title !== undefined && !text(title)) || (description !== undefined && !text(description))) return null
  return {
    message: (message as string).trim(),
    ...(key !== undefined ? { key: key as string } : {}),
    ...(title !== undefined ? { title: (title as string).trim() } : {}),
    ...(description !== undefined ? { description: (description as string).trim() } : {}),
  }
}

/**
 * The most front matter a skill file may carry (characters). It holds four short keys; the bound
 * keeps a hostile or broken file from holding the host's CPU while a generation builds (the YAML
 * parser takes tens of microseconds per key).
 */
export const MAX_FRONT_MATTER = 16 * 1024

/** Front matter as data, with where each top-level key's value is written. */
export interface FrontMatterData {
  readonly data: Record<string, unknown>
  /** 1-based line and column inside the YAML text of `key`'s value. */
  positionOf(key: string): { line: number; col: number }
  readonly doc: Document
  /** 1-based line and column of an offset in the YAML text. */
  at(offset: number | undefined): { line: number; col: number }
}

/**
 * Parses front matter YAML as data only (custom tags refused, keys unique, bounded size); `fail`
 * takes a 1-based line and column inside the YAML text. `keys` names the keys in messages.
 */
export function frontMatterData(yaml: string, fail: (message: string, line: number, column: number) => SeamError, known = 'name, description, tools, always, arguments, resources'): FrontMatterData {
  if (yaml.length > MAX_FRONT_MATTER) {
    throw fail(`the front matter is ${yaml.length} characters long; at most ${MAX_FRONT_MATTER} are allowed`, 1, 1)
  }
  const lines = new LineCounter()
  // `uniqueKeys: true` compares every key with every other (quadratic): duplicates are found below,
  // in one pass over the top-level keys, the only ones read.
  const doc = parseDocument(yaml, { lineCounter: lines, schema: 'core', prettyErrors: false, uniqueKeys: false })
  const at = (offset: number | undefined) => lines.linePos(offset ?? 0)
  const problem = doc.errors[0]
  if (problem !== undefined) {
    const { line, col } = at(problem.pos[0])
    throw fail(`malformed front matter: ${problem.message}`, line, col)
  }
  refuseCustomTags(yaml, doc, (message, offset) => {
    const { line, col } = at(offset)
    return fail(message, line, col)
  })
  const positionOf = (key: string) => {
    const value = doc.get(key, true)
    return at(isNode(value) ? value.range?.[0] : undefined)
  }
  if (doc.contents === null) return { data: {}, positionOf, doc, at }
  if (!isMap(doc.contents)) {
    const { line, col } = at(doc.contents.range?.[0])
    throw fail(`the front matter must be a mapping of keys (${known})`, line, col)
  }
  const keys = new Set<unknown>()
  for (const item of doc.contents.items) {
    const key = isScalar(item.key) ? item.key.value : item.key
    if (keys.has(key)) {
      const { line, col } = at(isNode(item.key) ? item.key.range?.[0] : undefined)
      throw fail(`malformed front matter: Map keys must be unique (\`${String(key)}\` is repeated)`, line, col)
    }
    keys.add(key)
  }
  let data: Record<string, unknown>
  try {
    data = doc.toJS({ maxAliasCount: 20 }) as Record<string, unknown>
  } catch (error) {
    throw fail(`malformed front matter: ${messageOf(error)}`, 1, 1)
  }
  return { data, positionOf, doc, at }
}

/** `fail` takes a 1-based line and column inside the YAML text. */
function readFrontMatter(yaml: string, fail: (message: string, line: number, column: number) => SeamError): FrontMatter {
  const { data, positionOf, doc, at } = frontMatterData(yaml, fail)
  const wrong = (key: string, expected: string): SeamError => {
    const { line, col } = positionOf(key)
    return fail(`\`${key}\` must be ${expected}`, line, col)
  }
  const meta: FrontMatter = {}
  if (data.name !== undefined) {
    if (typeof data.name !== 'string') throw wrong('name', 'a string')
    meta.name = data.name
  }
  if (data.description !== undefined) {
    if (typeof data.description !== 'string' || data.description.trim() === '') throw wrong('description', 'a non-empty string')
    meta.description = data.description.trim()
  }
  if (data.tools !== undefined) {
    const tools = data.tools
    if (!Array.isArray(tools) || !tools.every((t) => typeof t === 'string' && t !== '')) {
      throw wrong('tools', 'a list of tool names')
    }
    meta.tools = tools as string[]
    const list = doc.get('tools', true)
    if (isSeq(list)) {
      meta.toolsAt = list.items.map((item, i) => {
        const { line, col } = at(isNode(item) ? item.range?.[0] : undefined)
        return { name: (tools as string[])[i]!, line, column: col }
      })
    }
  }
  if (data.always !== undefined) {
    if (typeof data.always !== 'boolean') throw wrong('always', 'true or false')
    meta.always = data.always
  }
  if (data.arguments !== undefined) {
    const list = data.arguments
    const ok = (a: unknown): a is { name: string; description?: string; required?: boolean; ask?: unknown; values?: unknown } => {
      const e = a as Record<string, unknown> | null
      return typeof e?.name === 'string' && /^[A-Za-z0-9_-]+$/.test(e.name) && (e.description === undefined || typeof e.description === 'string') && (e.required === undefined || typeof e.required === 'boolean')
    }
    if (!Array.isArray(list) || !list.every(ok)) throw wrong('arguments', 'a list of { name, description?, required?, ask?, values? } (names of letters, digits, _ and -)')
    const keys = new Set<string>()
    meta.arguments = list.map((a, i) => {
      const values = a.values === undefined ? undefined : argumentValues(a.values)
      if (typeof values === 'string') {
        const node = doc.getIn(['arguments', i, 'values'], true)
        const { line, col } = at(isNode(node) ? node.range?.[0] : undefined)
        throw fail(`the \`values:\` of argument "${a.name}" must be ${values}`, line, col)
      }
      const ask = a.ask === undefined ? undefined : askOf(a.ask)
      if (ask === null) throw wrong('arguments', `a list whose \`ask:\` entries are a message or { message, key?, title?, description? } (the ask of "${a.name}" is not)`)
      const key = ask?.key ?? a.name
      if (ask !== undefined && keys.has(key)) throw wrong('arguments', `a list whose asks have distinct keys ("${key}" is asked twice)`)
      if (ask !== undefined) keys.add(key)
      return { name: a.name, ...(a.description !== undefined ? { description: a.description } : {}), ...(a.required !== undefined ? { required: a.required } : {}), ...(ask ? { ask } : {}), ...(values ? { values } : {}) }
    })
  }
  if (data.resources !== undefined) {
    if (!Array.isArray(data.resources) || !data.resources.every((r) => typeof r === 'string' && r !== '')) throw wrong('resources', 'a list of resource URIs or paths starting with ./ or ../')
    meta.resources = data.resources as string[]
  }
  return meta
}

function refuseCustomTags(
  yaml: string,
  doc: Document,
  fail: (message: string, offset: number | undefined) => SeamError,
): void {
  const refuse = (tag: string, offset: number | undefined) =>
    fail(`the tag ${tag} is not allowed in front matter (it is data only)`, offset)
  // Unknown tags (`!!js/function`, `!x`) resolve to strings with a warning that points at the tag.
  const unresolved = doc.warnings.find((warning) => warning.code === 'TAG_RESOLVE_FAILED')
  if (unresolved !== undefined) throw refuse(unresolved.message.replace(/^Unresolved tag: /, ''), unresolved.pos[0])
  visit(doc, (_key, node) => {
    if (!isNode(node) || node.tag === undefined || PLAIN_TAGS.has(node.tag)) return
    // A node's range starts after its tag; point at the tag itself.
    const start = node.range?.[0] ?? 0
    const tag = /!\S*\s*$/.exec(yaml.slice(0, start))
    throw refuse(node.tag, tag === null ? start : tag.index)
  })
}

/** The text of the first ATX heading outside fenced code, the fallback description. */
function firstHeading(body: string): string | undefined {
  let fence: string | undefined
  for (const line of body.split(/\r?\n/)) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0]
      else if (marker[0] === fence) fence = undefined
      continue
    }
    if (fence !== undefined) continue
    const heading = /^\s{0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$/.exec(line)?.[1]
    if (heading !== undefined && heading.trim() !== '') return heading.trim()
  }
  return undefined
}
