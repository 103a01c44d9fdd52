import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import type * as TS from 'typescript'
import { discoverPluginFolder } from '../features/discovery.js'
import { codeFrame } from '../features/loader/index.js'
import { CliError } from './errors.js'

/** One type error, located in its file. */
export interface TypeProblem {
  readonly file: string
  readonly line: number
  readonly column: number
  readonly code: number
  readonly message: string
  readonly frame: string | undefined
}

/** Without a tsconfig.json, the plugin folder is checked as `seam init` would set it up. */
const DEFAULTS = {
  target: 'ES2023',
  module: 'nodenext',
  moduleResolution: 'nodenext',
  strict: true,
  skipLibCheck: true,
  noEmit: true,
}

/**
 * Type-checks a plugin folder once with the TypeScript compiler API: its `tsconfig.json` when it
 * has one, else `plugin.ts` and the tool files under strict defaults. TypeScript is the project's
 * own (a devDependency `seam init` adds), else the one beside seam-runtime.
 */
export async function typeCheck(dir: string): Promise<{ problems: TypeProblem[]; files: number }> {
  const ts = loadTypeScript(dir)
  const configFile = path.join(dir, 'tsconfig.json')
  let rootNames: string[]
  let options: TS.CompilerOptions
  if (existsSync(configFile)) {
    const parsed = ts.getParsedCommandLineOfConfigFile(configFile, { noEmit: true }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
    if (parsed === undefined) throw new CliError(`cannot read ${configFile}`, 'check that it is valid JSON')
    rootNames = parsed.fileNames
    options = parsed.options
  } else {
    const folder = await discoverPluginFolder(dir)
    rootNames = [...(folder.pluginFile ? [folder.pluginFile] : []), ...folder.toolFiles].filter((f) => /\.[cm]?tsx?$/.test(f))
    options = ts.convertCompilerOptionsFromJson(DEFAULTS, dir).options
  }
  const program = ts.createProgram({ rootNames, options })
  const problems = ts.getPreEmitDiagnostics(program).flatMap((d) => (d.category === ts.DiagnosticCategory.Error ? [problemOf(ts, d, dir)] : []))
  return { problems, files: rootNames.length }
}

function problemOf(ts: typeof TS, d: TS.Diagnostic, dir: string): TypeProblem {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
  if (d.file === undefined || d.start === undefined) return { file: path.join(dir, 'tsconfig.json'), line: 1, column: 1, code: d.code, message, frame: undefined }
  const at = d.file.getLineAndCharacterOfPosition(d.start)
  return { file: d.file.fileName, line: at.line + 1, column: at.character + 1, code: d.code, message, frame: codeFrame(d.file.text, at.line + 1, at.character + 1) }
}

function loadTypeScript(dir: string): typeof TS {
  // The project's own TypeScript first (it may pin another version), then the one next to seam-runtime.
  for (const from of [path.join(dir, 'package.json'), import.meta.url]) {
    try {
      return createRequire(from)('typescript') as typeof TS
    } catch {
      // Not resolvable from there.
    }
  }
  throw new CliError('seam check needs TypeScript', 'npm install --save-dev typescript')
}

