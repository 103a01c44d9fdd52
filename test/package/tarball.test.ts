import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * The package as a user gets it: `npm pack`, installed into a fresh project with zod, then used from
 * a plain Node host, a strict TypeScript host and `npx seam`. Run by `npm run test:package` (CI, once
 * per Node version); it needs the npm registry or a warm npm cache. On Node 22.13+ and 24 the SQLite
 * journal is Node's own node:sqlite: nothing native is installed or compiled. On Node 20 it needs
 * better-sqlite3, an optional peer the user installs.
 */
const repo = fileURLToPath(new URL('../..', import.meta.url))
const run = promisify(execFile)
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
const nodeHasSqlite = major > 22 || (major === 22 && minor >= 13)
const devVersion = async (name: string) =>
  (JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies[name]

const TOOL = `import { readFile } from 'node:fs/promises'
import { defineTool } from 'seam-runtime'
import { z } from 'zod'

export default defineTool({
  description: 'Greet someone.',
  input: z.object({ name: z.string().min(1) }),
  output: z.object({ greeting: z.string() }),
  approval: 'never',
  async execute({ name }) {
    const { punctuation } = JSON.parse(await readFile(new URL('./greet.json', import.meta.url), 'utf8')) as { punctuation: string }
    return { greeting: \`hello \${name}\${punctuation}\` }
  },
})
`

const HOST_MJS = `import { createRoot } from 'seam-runtime'

const root = await createRoot({ dir: new URL('./plugin', import.meta.url).pathname })
try {
  const turn = await root.beginTurn({ session: 'tarball', principal: { subjectId: 'user', roles: [] } })
  const outcome = await turn.tools.execute({ callId: 'c1', name: 'greet', arguments: '{"name":"tarball"}' })
  await turn.end()
  console.log(JSON.stringify(outcome))
} finally {
  await root.close()
}
`

// The SQLite journal from the installed package: a call journaled, read back after a reopen.
const HOST_SQLITE_MJS = `import { createRoot, sqliteJournal } from 'seam-runtime'

const file = new URL('./journal.db', import.meta.url).pathname
const journal = sqliteJournal(file)
const root = await createRoot({ dir: new URL('./plugin', import.meta.url).pathname, journal })
try {
  const turn = await root.beginTurn({ session: 'tarball', principal: { subjectId: 'user', roles: [] } })
  await turn.tools.execute({ callId: 'c1', name: 'greet', arguments: '{"name":"sqlite"}' })
  await turn.end()
} finally {
  await root.close()
}
const reopened = sqliteJournal(file)
const [event] = await reopened.tail(1)
const events = await reopened.read(event.turnId)
await reopened.close()
console.log(JSON.stringify({ driver: journal.driver, kinds: events.map((e) => e.kind) }))
`

const HOST_TS = `import { createRoot, memoryJournal, SeamError, type ToolCallOutcome } from 'seam-runtime'
import { createToken, definePlugin } from 'seam-runtime/plugin-runtime'

const greeting = createToken<{ word: string }>('greeting')
const plugin = definePlugin({
  name: 'host',
  setup(ctx) {
    ctx.resources.provide(greeting, { word: 'hi' })
  },
})

export async function main(): Promise<ToolCallOutcome> {
  await using root = await createRoot({ plugin, journal: memoryJournal() })
  const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u', roles: [] } })
  try {
    return await turn.tools.execute({ callId: 'c1', name: 'missing', arguments: '{}' })
  } catch (error) {
    if (error instanceof SeamError) console.error(error.code)
    throw error
  } finally {
    await turn.end()
  }
}
`

const BAD_TOOL = `import { defineTool } from 'seam-runtime'
import { z } from 'zod'

export default defineTool({
  description: 'Count.',
  input: z.object({ n: z.number() }),
  execute({ n }) {
    const text: string = n
    return text
  },
})
`

/** Every compiled Node add-on (`*.node`) under `dir`: what a native build leaves. */
async function nativeAddons(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.node')).map((entry) => join(entry.parentPath, entry.name))
}

const tsconfig = (moduleResolution: 'nodenext' | 'bundler', include: string[]) =>
  JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023', 'ESNext.Disposable'],
      module: moduleResolution === 'nodenext' ? 'nodenext' : 'esnext',
      moduleResolution,
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: false,
      noEmit: true,
      types: ['node'],
    },
    include,
  })

describe('the packed package, installed into a fresh project', { timeout: 120_000 }, () => {
  let work: string
  let project: string
  let packed: string[]

  let packOutput: string
  let manifestBefore: string
  let shippedManifest: { scripts?: Record<string, string> }

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'seam-tarball-'))
    project = join(work, 'project')
    manifestBefore = await readFile(join(repo, 'package.json'), 'utf8')
    // prepack builds dist/ from scratch, so no output of a deleted source is shipped.
    const { stdout, stderr } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: repo, maxBuffer: 16 * 1024 * 1024 })
    packOutput = stderr
    const [pack] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[]
    if (pack === undefined) throw new Error(`npm pack printed no result: ${stdout}`)
    packed = pack.files.map((f) => f.path)
    const tarball = join(work, pack.filename)
    shippedManifest = JSON.parse((await run('tar', ['-xzOf', tarball, 'package/package.json'])).stdout)
    await mkdir(join(project, 'plugin/tools'), { recursive: true })
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'tarball-host', private: true, type: 'module' }))
    const packages = [tarball, 'zod@^4', `typescript@${await devVersion('typescript')}`, `@types/node@${await devVersion('@types/node')}`]
    // As a user installs it, install scripts and all: on Node 22/24 nothing native is among them.
    // On Node 20 esbuild's install script is skipped too (it only checks its binary).
    const scripts = nodeHasSqlite ? [] : ['--ignore-scripts']
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...scripts, ...packages], { cwd: project })
    await writeFile(join(project, 'plugin/tools/greet.ts'), TOOL)
    await writeFile(join(project, 'plugin/tools/greet.json'), '{ "punctuation": "!" }\n')
  }, 600_000)
  afterAll(() => rm(work, { recursive: true, force: true }))

  it('ships the built JavaScript, declarations and maps, and no tests, fixtures or build state', () => {
    expect(packed).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/index.js.map', 'dist/plugin-runtime.js', 'dist/cli/bin.js', 'package.json', 'README.md']))
    expect(packed.filter((path) => /\.test\.|\/fixtures\/|tsbuildinfo/.test(path))).toEqual([])
  })

  it('builds once for the pack, ships a package.json without development scripts, and leaves the bin executable', async () => {
    expect(packOutput.match(/seam-runtime build: dist\/ from scratch/g)).toHaveLength(1)
    expect(packOutput).not.toMatch(/> seam-runtime@[^ ]+ (prepare|build)\b/)
    expect(shippedManifest.scripts).toBeUndefined()
    expect(await readFile(join(repo, 'package.json'), 'utf8')).toBe(manifestBefore)
    // npm sets the bit in the tarball; `npm run build` and `npx seam` in the repository need it on disk.
    expect((await stat(join(repo, 'dist/cli/bin.js'))).mode & 0o111).toBe(0o111)
  })

  if (nodeHasSqlite) {
    it('installs nothing native on a Node with node:sqlite, and its SQLite journal works from the installed package, without a warning', async () => {
      await expect(readFile(join(project, 'node_modules/better-sqlite3/package.json'))).rejects.toThrow()
      expect(await nativeAddons(join(project, 'node_modules'))).toEqual([])
      await writeFile(join(project, 'host-sqlite.mjs'), HOST_SQLITE_MJS)
      const { stdout, stderr } = await run(process.execPath, ['host-sqlite.mjs'], { cwd: project })
      expect(JSON.parse(stdout)).toEqual({ driver: 'node', kinds: ['turn/begin', 'tool/call', 'tool/result', 'turn/end'] })
      expect(stderr).toBe('')
    })
  } else {
    it('on Node 20, says to install better-sqlite3@12 for the SQLite journal, whose journal then works', async () => {
      await writeFile(join(project, 'host-sqlite.mjs'), HOST_SQLITE_MJS)
      const missing = await run(process.execPath, ['host-sqlite.mjs'], { cwd: project }).then(
        () => ({ stderr: 'it ran' }),
        (e: { stderr: string }) => e,
      )
      expect(missing.stderr).toContain('JOURNAL_UNAVAILABLE')
      expect(missing.stderr).toContain('install it with `npm install better-sqlite3@12`')
      // better-sqlite3 compiles from source here (no prebuilt binaries reachable), which takes minutes:
      // its install script is skipped and the repository's own build (same version, same Node) copied.
      const version = (JSON.parse(await readFile(join(repo, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string }).version
      await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', `better-sqlite3@${version}`], { cwd: project })
      const binary = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'
      await mkdir(dirname(join(project, binary)), { recursive: true })
      await copyFile(join(repo, binary), join(project, binary))
      const { stdout } = await run(process.execPath, ['host-sqlite.mjs'], { cwd: project })
      expect(JSON.parse(stdout)).toEqual({ driver: 'better-sqlite3', kinds: ['turn/begin', 'tool/call', 'tool/result', 'turn/end'] })
    })
  }

  it('runs a plain .mjs host on node without tsx: a root from a plugin folder completes a call', async () => {
    await writeFile(join(project, 'host.mjs'), HOST_MJS)
    const { stdout } = await run(process.execPath, ['host.mjs'], { cwd: project })
    expect(JSON.parse(stdout)).toMatchObject({ name: 'greet', status: 'completed', value: { greeting: 'hello tarball!' } })
    await expect(readFile(join(project, 'node_modules/tsx/package.json'))).rejects.toThrow()
  })

  it.each(['nodenext', 'bundler'] as const)('type-checks a strict host and the tool file under moduleResolution %s', async (resolution) => {
    await writeFile(join(project, 'host.ts'), HOST_TS)
    await writeFile(join(project, `tsconfig.${resolution}.json`), tsconfig(resolution, ['host.ts', 'plugin/**/*.ts']))
    const tsc = join(project, 'node_modules/typescript/bin/tsc')
    const result = await run(process.execPath, [tsc, '-p', `tsconfig.${resolution}.json`], { cwd: project }).catch((e: { stdout: string }) => e)
    expect(result.stdout).toBe('')
  })

  it('resolves zod in a tool file the way an editor does: a wrong type is reported, not a missing module', async () => {
    await mkdir(join(project, 'bad/tools'), { recursive: true })
    await writeFile(join(project, 'bad/tools/count.ts'), BAD_TOOL)
    await writeFile(join(project, 'tsconfig.bad.json'), tsconfig('nodenext', ['bad/**/*.ts']))
    const tsc = join(project, 'node_modules/typescript/bin/tsc')
    const failure = await run(process.execPath, [tsc, '-p', 'tsconfig.bad.json'], { cwd: project }).then(
      () => ({ stdout: '' }),
      (e: { stdout: string }) => e,
    )
    expect(failure.stdout).toContain("bad/tools/count.ts(8,11): error TS2322: Type 'number' is not assignable to type 'string'.")
    expect(failure.stdout).not.toContain('TS2307')
  })

  it('lists and calls the tools with npx seam', async () => {
    const tools = await run('npx', ['--no-install', 'seam', 'tools', 'plugin', '--json'], { cwd: project })
    expect(JSON.parse(tools.stdout).tools).toMatchObject([{ name: 'greet', source: 'tools/greet.ts', approval: 'never' }])
    const call = await run('npx', ['--no-install', 'seam', 'call', 'greet', '{"name":"npx"}', '--dir', 'plugin', '--json'], { cwd: project })
    expect(JSON.parse(call.stdout)).toMatchObject({ status: 'completed', value: { greeting: 'hello npx!' } })
  })
})
