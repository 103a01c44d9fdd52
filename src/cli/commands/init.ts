import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Command } from 'commander'
import { EXIT } from '../errors.js'
import { type CliContext, line, styleFor } from '../io.js'
import { javaScriptFiles, withModuleType } from '../package-type.js'
import { scaffold } from '../scaffold.js'
import { runtimeVersion } from '../workspace.js'

export function registerInit(program: Command, cli: CliContext): void {
  program
    .command('init')
    .description('scaffold a plugin project (package.json, tsconfig, a tool, a skill, plugin.ts); keeps every file already there')
    .argument('[dir]', 'the folder to create or fill', '.')
    .action(async (dir: string) => {
      cli.exitCode = await init(cli, dir)
    })
}

async function init(cli: CliContext, dirArg: string): Promise<number> {
  const dir = path.resolve(cli.io.cwd, dirArg)
  const files = scaffold(projectName(dir), runtimeVersion())
  // Never overwrites: a file already there is kept as it is, and the others are written beside it.
  const kept = Object.keys(files).filter((file) => existsSync(path.join(dir, file)))
  const written = Object.keys(files).filter((file) => !kept.includes(file))
  for (const file of written) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true })
    await writeFile(path.join(dir, file), files[file]!, { flag: 'wx' })
  }
  const out = cli.io.stdout
  const style = styleFor(out, cli.io.env)
  if (written.length === 0) {
    line(out, `${dir} already has every file seam init writes; nothing was written`)
  } else {
    line(out, `${kept.length === 0 ? 'created a plugin project' : 'filled in the plugin project'} in ${dir}`)
    for (const file of written) line(out, `  ${file}`)
  }
  const moduleType = kept.includes('package.json') ? await makeModule(dir) : undefined
  for (const file of kept) {
    if (file === 'package.json' && moduleType !== undefined) line(out, `  ${moduleType.changed ? style.yellow(moduleType.text) : style.dim(moduleType.text)}`)
    else line(out, `  ${style.dim(`${file} kept as it was`)}`)
  }
  const todo = await missingSetup(dir, kept)
  const cd = path.relative(cli.io.cwd, dir)
  line(out, '')
  line(out, 'next:')
  if (cd !== '') line(out, `  cd ${cd}`)
  if (todo.install.length > 0) line(out, `  npm install ${todo.install.join(' ')}`)
  if (todo.installDev.length > 0) line(out, `  npm install --save-dev ${todo.installDev.join(' ')}`)
  if (todo.ignore) line(out, `  echo .seam/ >> .gitignore   ${style.dim("# the journal is this machine's, not the repository's")}`)
  if (!kept.includes('package.json')) line(out, `  npm install     ${style.dim('# seam-runtime, zod, TypeScript')}`)
  line(out, `  npx seam dev    ${style.dim('# hot reload, journal in .seam/, MCP on 127.0.0.1:4750')}`)
  line(out, `  npx seam check  ${style.dim('# type errors, for CI')}`)
  return EXIT.ok
}

/**
 * plugin.ts and the tool files are ES modules (`import`, `import.meta.url`): in a package without
 * `"type": "module"` TypeScript reads them as CommonJS (TS1470 on `import.meta`). Sets it in the
 * project's package.json, changing nothing else in the file, unless JavaScript files there may be
 * CommonJS: then it says why it left it.
 */
async function makeModule(dir: string): Promise<{ changed: boolean; text: string } | undefined> {
  const file = path.join(dir, 'package.json')
  const text = await readFile(file, 'utf8').catch(() => undefined)
  let type: unknown
  try {
    type = (JSON.parse(text ?? '') as Record<string, unknown>).type
  } catch {
    return undefined // Not JSON: npm will say so, and there is nothing to edit safely.
  }
  if (type === 'module') return undefined
  const was = type === undefined ? 'no "type", so CommonJS' : `"type": ${JSON.stringify(type)}`
  const scripts = await javaScriptFiles(dir)
  if (scripts.length > 0) {
    const named = `${scripts.slice(0, 3).join(', ')}${scripts.length > 3 ? ', …' : ''}`
    return {
      changed: false,
      text: `package.json kept as it was (${was}): its JavaScript (${named}) may be CommonJS, which "type": "module" would break; set it yourself once they are ES modules (plugin.ts and tools/ need it: import.meta.url is TS1470 in CommonJS)`,
    }
  }
  const edited = withModuleType(text ?? '')
  if (edited === undefined) return undefined
  await writeFile(file, edited)
  return { changed: true, text: `package.json: set "type": "module" (it had ${was}; plugin.ts and tools/ are ES modules), every other field as it was` }
}

/**
 * What a project that kept its own files still lacks: the packages its package.json does not name
 * (`npm install` would not bring them), and `.seam/` in its `.gitignore`.
 */
async function missingSetup(dir: string, kept: readonly string[]): Promise<{ install: string[]; installDev: string[]; ignore: boolean }> {
  const todo = { install: [] as string[], installDev: [] as string[], ignore: false }
  if (kept.includes('package.json')) {
    let named = new Set<string>()
    try {
      const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>
      named = new Set(['dependencies', 'devDependencies', 'peerDependencies'].flatMap((field) => Object.keys(asRecord(pkg[field]))))
    } catch {
      // Unreadable or not JSON: npm will say so; every package is listed.
    }
    todo.install = ['seam-runtime', 'zod'].filter((name) => !named.has(name))
    todo.installDev = ['typescript', '@types/node'].filter((name) => !named.has(name))
  }
  if (kept.includes('.gitignore')) {
    const ignore = await readFile(path.join(dir, '.gitignore'), 'utf8').catch(() => '')
    todo.ignore = !ignore.split(/\r?\n/).some((entry) => /^\/?\.seam\/?$/.test(entry.trim()))
  }
  return todo
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
}

/** A package and plugin name from the folder's name: lowercase letters, digits, `-` and `_`. */
function projectName(dir: string): string {
  const name = path
    .basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/_{2,}/g, '_')
    .replace(/^[-_]+|[-_]+$/g, '')
  return /^[a-z0-9]/.test(name) ? name : 'seam-plugin'
}
