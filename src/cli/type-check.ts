import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import type * as TS from 'typescript'
import { discoverPluginFolder } from '../features/discovery.js'
import { codeFrame } from '../features/loader/index.js'
import { CliError } from './errors.js'
import type { TypeProblem } from './format.js'

/** What to check: the folder's `tsconfig.json`, or its plugin and tool files under strict defaults. */
export interface CheckSetup {
  readonly configFile?: string
  readonly rootNames: string[]
  readonly options: TS.CompilerOptions
}

/** Without a tsconfig.json, the plugin folder is checked as `seam init` would set it up. */
export const DEFAULTS = {
  target: 'ES2023',
  module: 'nodenext',
  moduleResolution: 'nodenext',
  strict: true,
  skipLibCheck: true,
  noEmit: true,
}

/** A TypeScript the project can use: its entry, version, major version and package folder. */
export interface TypeScriptInstall {
  readonly path: string
  readonly version: string
  readonly major: number
  readonly packageDir: string
}

/** The majors `seam check` and the dev loop's checker drive: 5 through its compiler API, 7 through its `tsc`. */
export const SUPPORTED_TYPESCRIPT = 'TypeScript 5.x and 7.x'

/** Why this TypeScript cannot be used, or undefined when it can. */
export function unsupportedTypeScript(found: TypeScriptInstall): string | undefined {
  if (found.major === 5 || found.major === 7) return undefined
  return `TypeScript ${found.version} is not supported (seam checks with ${SUPPORTED_TYPESCRIPT})`
}

/**
 * The TypeScript `seam check` and the dev loop's checker use: the project's own (a devDependency
 * `seam init` adds), else the one beside seam-runtime; a CliError when there is none or its
 * version is not one they drive.
 */
export function usableTypeScript(dir: string): TypeScriptInstall {
  const found = findTypeScript(dir)
  if (found === undefined) throw new CliError('seam check needs TypeScript', 'npm install --save-dev typescript')
  const unsupported = unsupportedTypeScript(found)
  if (unsupported !== undefined) throw new CliError(unsupported, 'npm install --save-dev typescript@7 (or typescript@5)')
  return found
}

/**
 * Type-checks a plugin folder once with TypeScript 5's compiler API: its `tsconfig.json` when it
 * has one, else `plugin.ts` and the tool files under strict defaults.
 */
export async function typeCheckWithApi(found: TypeScriptInstall, dir: string): Promise<{ problems: TypeProblem[]; files: number }> {
  const ts = loadTypeScript(found.path)
  const setup = await checkSetup(ts, dir)
  const program = ts.createProgram({ rootNames: setup.rootNames, options: setup.options })
  return { problems: problemsOf(ts, ts.getPreEmitDiagnostics(program), dir), files: setup.rootNames.length }
}

export async function checkSetup(ts: typeof TS, dir: string): Promise<CheckSetup> {
  const configFile = path.join(dir, 'tsconfig.json')
  if (existsSync(configFile)) {
    const parsed = ts.getParsedCommandLineOfConfigFile(configFile, { noEmit: true }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
    if (parsed === undefined) throw new CliError(`cannot read ${configFile}`, 'check that it is valid JSON')
    return { configFile, rootNames: parsed.fileNames, options: parsed.options }
  }
  return { rootNames: await pluginSources(dir), options: ts.convertCompilerOptionsFromJson(DEFAULTS, dir).options }
}

/** `plugin.ts` and the tool files of a folder without a tsconfig.json. */
export async function pluginSources(dir: string): Promise<string[]> {
  const folder = await discoverPluginFolder(dir)
  return [...(folder.pluginFile ? [folder.pluginFile] : []), ...folder.toolFiles].filter((f) => /\.[cm]?tsx?$/.test(f))
}

/** The errors among `diagnostics` (warnings and suggestions dropped), each with its frame. */
export function problemsOf(ts: typeof TS, diagnostics: readonly TS.Diagnostic[], dir: string): TypeProblem[] {
  return diagnostics.flatMap((d) => (d.category === ts.DiagnosticCategory.Error ? [problemOf(ts, d, dir)] : []))
}

function problemOf(ts: typeof TS, d: TS.Diagnostic, dir: string): TypeProblem {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
  if (d.file === undefined || d.start === undefined) return { file: path.join(dir, 'tsconfig.json'), line: 1, column: 1, code: d.code, message, frame: undefined }
  const at = d.file.getLineAndCharacterOfPosition(d.start)
  return { file: d.file.fileName, line: at.line + 1, column: at.character + 1, code: d.code, message, frame: codeFrame(d.file.text, at.line + 1, at.character + 1) }
}

/**
 * Where TypeScript is: the project's own first (it may pin another version), then the one next to
 * seam-runtime (present in a development checkout, not in an installed package).
 */
export function findTypeScript(dir: string): TypeScriptInstall | undefined {
  for (const from of [path.join(dir, 'package.json'), import.meta.url]) {
    let main: string
    try {
      main = createRequire(from).resolve('typescript')
    } catch {
      continue // Not resolvable from there.
    }
    // 5.x: typescript/lib/typescript.js; 7.x: typescript/lib/version.cjs. Both one folder below package.json.
    const packageDir = path.dirname(path.dirname(main))
    const version = typeScriptVersion(packageDir)
    return { path: main, version, major: Number.parseInt(version, 10), packageDir }
  }
  return undefined
}

export function loadTypeScript(main: string): typeof TS {
  return createRequire(import.meta.url)(main) as typeof TS
}

function typeScriptVersion(packageDir: string): string {
  try {
    const version: unknown = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version
    return typeof version === 'string' ? version : 'unknown'
  } catch {
    return 'unknown'
  }
}
