import { execFile } from 'node:child_process'
import { existsSync, realpathSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { codeFrame } from '../features/loader/index.js'
import { CliError } from './errors.js'
import { ownFiles } from './file-state.js'
import { DEFAULTS, pluginSources, type TypeScriptInstall } from './type-check.js'
import type { TypeProblem } from './format.js'

/*
 * TypeScript 7 ships no JavaScript compiler API (its `typescript` entry exports only the version;
 * the API under `typescript/unstable/*` says it may change), so seam drives its `tsc`: the native
 * binary of the platform package it depends on, with `--pretty false`, whose
 * `file(line,col): error TS1234: message` lines have been stable across versions.
 */

/** How `tsc` is run for a folder: the arguments, and the root files when seam chose them (no tsconfig.json). */
export interface TscSetup {
  readonly args: string[]
  readonly roots: string[] | undefined
}

/** One diagnostic as `tsc --pretty false` prints it, before its frame is made. */
interface TscDiagnostic {
  file: string | undefined
  line: number
  column: number
  category: string
  code: number
  message: string
}

/** What a `tsc` pass printed: its diagnostics and, with `--listFiles`, the files of its program. */
export interface TscOutput {
  readonly diagnostics: TscDiagnostic[]
  readonly files: string[]
}

const DIAGNOSTIC = /^(?:(.+)\((\d+),(\d+)\): )?(error|warning|suggestion|message) TS(\d+): (.*)$/

/**
 * The compiler executable of a TypeScript 7 install. Its `bin/tsc` is a Node script that starts
 * this binary; seam runs the binary itself, so that stopping it stops the compiler (on Node 20 the
 * script cannot exec and would leave its child running).
 */
export function tscExecutable(found: TypeScriptInstall): string {
  const platform = `@typescript/typescript-${process.platform}-${process.arch}`
  let manifest: string
  try {
    // From where the package really is: npm places the platform package beside it.
    manifest = createRequire(path.join(realpathSync(found.packageDir), 'package.json')).resolve(`${platform}/package.json`)
  } catch {
    throw new CliError(
      `TypeScript ${found.version} has no compiler for ${process.platform}-${process.arch}: ${platform} is not installed`,
      'reinstall it with optional dependencies: npm install --save-dev typescript',
    )
  }
  const exe = path.join(path.dirname(manifest), 'lib', process.platform === 'win32' ? 'tsc.exe' : 'tsc')
  if (!existsSync(exe)) throw new CliError(`TypeScript ${found.version}'s compiler is missing: ${exe}`, 'reinstall it: npm install --save-dev typescript')
  return exe
}

/** `tsc`'s arguments for `dir`: its tsconfig.json, else plugin.ts and the tool files under seam's defaults. */
export async function tscSetup(dir: string, extra: readonly string[] = []): Promise<TscSetup> {
  const common = ['--noEmit', '--pretty', 'false', '--listFiles', '--locale', 'en', ...extra]
  const configFile = path.join(dir, 'tsconfig.json')
  if (existsSync(configFile)) return { args: ['-p', configFile, ...common], roots: undefined }
  const roots = await pluginSources(dir)
  const options = Object.entries(DEFAULTS).flatMap(([name, value]) => (value === true ? [`--${name}`] : typeof value === 'string' ? [`--${name}`, value] : []))
  // 7 includes no @types package unless told; '*' includes them all, as 5 does without a tsconfig.json.
  return { args: ['--ignoreConfig', ...options, '--types', '*', ...common, ...roots], roots }
}

/** Reads `tsc --pretty false --listFiles` output: diagnostics (their indented continuation lines joined) and listed files. */
export function parseTscOutput(lines: readonly string[], dir: string): TscOutput {
  const diagnostics: TscDiagnostic[] = []
  const files: string[] = []
  let last: TscDiagnostic | undefined
  for (const text of lines) {
    const match = DIAGNOSTIC.exec(text)
    if (match !== null) {
      const [, file, line, column, category, code, message] = match
      last = { file: file === undefined ? undefined : path.resolve(dir, file), line: Number(line ?? 1), column: Number(column ?? 1), category: category!, code: Number(code), message: message! }
      diagnostics.push(last)
    } else if (text.startsWith('  ') && last !== undefined) {
      last.message += `\n${text}`
    } else if (path.isAbsolute(text)) {
      files.push(text)
      last = undefined
    } else {
      last = undefined
    }
  }
  return { diagnostics, files }
}

/** The errors of a pass, each with the frame of its line (files read once each). */
export async function problemsOfTsc(output: TscOutput, dir: string): Promise<TypeProblem[]> {
  const texts = new Map<string, Promise<string | undefined>>()
  const textOf = (file: string) => {
    let text = texts.get(file)
    if (text === undefined) {
      text = readFile(file, 'utf8').catch(() => undefined)
      texts.set(file, text)
    }
    return text
  }
  const errors = output.diagnostics.filter((d) => d.category === 'error')
  return Promise.all(
    errors.map(async (d): Promise<TypeProblem> => {
      if (d.file === undefined) return { file: path.join(dir, 'tsconfig.json'), line: 1, column: 1, code: d.code, message: d.message, frame: undefined }
      const text = await textOf(d.file)
      return { file: d.file, line: d.line, column: d.column, code: d.code, message: d.message, frame: text === undefined ? undefined : codeFrame(text, d.line, d.column) }
    }),
  )
}

/** Type-checks `dir` once with TypeScript 7's `tsc`. */
export async function typeCheckWithTsc(found: TypeScriptInstall, dir: string): Promise<{ problems: TypeProblem[]; files: number }> {
  const setup = await tscSetup(dir)
  if (setup.roots?.length === 0) return { problems: [], files: 0 }
  const exe = tscExecutable(found)
  const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number }>((resolve, reject) => {
    execFile(exe, setup.args, { cwd: dir, maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') return reject(error)
      resolve({ stdout, stderr, code: error === null ? 0 : (error.code as number) })
    })
  })
  const output = parseTscOutput(stdout.split(/\r?\n/), dir)
  const problems = await problemsOfTsc(output, dir)
  // A failed run that names no error (a crash, an unknown flag) is a fault of its own, not "no errors".
  if (code !== 0 && problems.length === 0) throw new CliError(`TypeScript ${found.version}'s tsc failed (exit ${code}): ${(stderr || stdout).trim().slice(0, 2000)}`)
  return { problems, files: setup.roots?.length ?? ownFiles(dir, output.files).length }
}
