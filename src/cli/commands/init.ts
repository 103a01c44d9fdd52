import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Command } from 'commander'
import { EXIT } from '../errors.js'
import { type CliContext, line, styleFor } from '../io.js'
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
  for (const file of kept) line(out, `  ${style.dim(`${file} kept as it was`)}`)
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
