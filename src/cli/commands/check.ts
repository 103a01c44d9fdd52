import type { Command } from 'commander'
import { EXIT } from '../errors.js'
import { formatTypeProblem } from '../format.js'
import { type CliContext, line, styleFor } from '../io.js'
import { typeCheckWithApi, usableTypeScript } from '../type-check.js'
import { typeCheckWithTsc } from '../type-check-tsc.js'
import { pluginDir } from '../workspace.js'

export function registerCheck(program: Command, cli: CliContext): void {
  program
    .command('check')
    .description('type-check a plugin folder once (its tsconfig.json, else plugin.ts and tools/); exits 1 on type errors')
    .argument('[dir]', 'the plugin folder', '.')
    .action(async (dir: string) => {
      cli.exitCode = await check(cli, dir)
    })
}

async function check(cli: CliContext, dirArg: string): Promise<number> {
  const dir = pluginDir(cli.io.cwd, dirArg)
  const out = cli.io.stdout
  const style = styleFor(out, cli.io.env)
  const found = usableTypeScript(dir)
  const { problems, files } = found.major === 7 ? await typeCheckWithTsc(found, dir) : await typeCheckWithApi(found, dir)
  for (const p of problems) line(out, formatTypeProblem(p, style, dir))
  if (problems.length === 0) {
    line(out, style.green(`no type errors (${files} files)`))
    return EXIT.ok
  }
  const where = new Set(problems.map((p) => p.file)).size
  line(out, style.red(`${problems.length} type error${problems.length === 1 ? '' : 's'} in ${where} file${where === 1 ? '' : 's'}`))
  return EXIT.failed
}
