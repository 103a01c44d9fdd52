import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Command } from 'commander'
import { CliError, EXIT } from '../errors.js'
import { type CliContext, line, styleFor } from '../io.js'
import { scaffold } from '../scaffold.js'
import { runtimeVersion } from '../workspace.js'

export function registerInit(program: Command, cli: CliContext): void {
  program
    .command('init')
    .description('scaffold a plugin project (package.json, tsconfig, a tool, a skill, plugin.ts); never overwrites a file')
    .argument('[dir]', 'the folder to create or fill', '.')
    .action(async (dir: string) => {
      cli.exitCode = await init(cli, dir)
    })
}

async function init(cli: CliContext, dirArg: string): Promise<number> {
  const dir = path.resolve(cli.io.cwd, dirArg)
  const files = scaffold(projectName(dir), runtimeVersion())
  // All or nothing: a file already there stops the whole scaffold before anything is written.
  const taken = Object.keys(files).filter((file) => existsSync(path.join(dir, file)))
  if (taken.length > 0) {
    throw new CliError(`${dir} already has ${taken.join(', ')}; nothing was written`, 'run `seam init` in an empty folder, or pass a new one: `seam init my-plugin`')
  }
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true })
    await writeFile(path.join(dir, file), text, { flag: 'wx' })
  }
  const out = cli.io.stdout
  const style = styleFor(out, cli.io.env)
  line(out, `created a plugin project in ${dir}`)
  for (const file of Object.keys(files)) line(out, `  ${file}`)
  const cd = path.relative(cli.io.cwd, dir)
  line(out, '')
  line(out, 'next:')
  if (cd !== '') line(out, `  cd ${cd}`)
  line(out, `  npm install     ${style.dim('# seam-runtime, zod, TypeScript')}`)
  line(out, `  npx seam dev    ${style.dim('# hot reload, journal in .seam/, MCP on 127.0.0.1:4750')}`)
  line(out, `  npx seam check  ${style.dim('# type errors, for CI')}`)
  return EXIT.ok
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
