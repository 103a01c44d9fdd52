/**
 * Issue 13: does the background type-check of `seam dev` slow its reloads? Two `seam dev`
 * processes on two copies of a `seam init` project, one with `--no-check` (the baseline), edited
 * in turns (A B B A, so load drift hits both): every edit flips a tool file between a type error
 * and clean code, `EDITS` edits per phase, one every `GAP_MS`, so the checker is busy while the next
 * reloads run. Measured: file write → `generation N live` line, median and p95.
 * Target: the checked median at most 1.2× the baseline's. Needs `npm run build` (it runs dist/).
 * `npm run bench -- dev-types`
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type BenchReport, formatMs, formatRatio, isMain, median, numberOption, printReport, table } from './harness.js'

const EDITS = numberOption('edits', 30)
const GAP_MS = 400
const repo = fileURLToPath(new URL('..', import.meta.url))
const BIN = path.join(repo, 'dist', 'cli', 'bin.js')

interface Dev {
  readonly child: ChildProcess
  readonly example: string
  readonly clean: string
  generation: number
  text: string
  until(pattern: RegExp, from: number, ms?: number): Promise<void>
}

async function project(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'seam-bench-dev-'))
  await new Promise<void>((resolve, reject) =>
    spawn(process.execPath, [BIN, 'init', dir], { stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`seam init exited ${code}`)))),
  )
  await mkdir(path.join(dir, 'node_modules', '@types'), { recursive: true })
  await symlink(repo, path.join(dir, 'node_modules', 'seam-runtime'))
  await symlink(path.join(repo, 'node_modules', 'zod'), path.join(dir, 'node_modules', 'zod'))
  await symlink(path.join(repo, 'node_modules', '@types', 'node'), path.join(dir, 'node_modules', '@types', 'node'))
  return dir
}

async function startDev(dir: string, check: boolean): Promise<Dev> {
  const args = [BIN, 'dev', dir, '--no-mcp', '--debounce', '30', ...(check ? [] : ['--no-check'])]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
  const example = path.join(dir, 'tools', 'example.ts')
  const waiters = new Set<() => void>()
  const dev: Dev = {
    child,
    example,
    clean: await readFile(example, 'utf8'),
    generation: 1,
    text: '',
    until(pattern, from, ms = 120_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${ms} ms:\n${dev.text}`)), ms)
        const test = () => {
          if (!pattern.test(dev.text.slice(from))) return
          clearTimeout(timer)
          waiters.delete(test)
          resolve()
        }
        waiters.add(test)
        test()
      })
    },
  }
  const take = (chunk: Buffer) => {
    dev.text += chunk.toString()
    for (const waiter of [...waiters]) waiter()
  }
  child.stdout?.on('data', take)
  child.stderr?.on('data', take)
  await dev.until(/watching for changes/, 0)
  // The first check (TypeScript, @types/node, zod) is not what is measured: wait it out.
  if (check) await dev.until(/^types ok/m, 0)
  return dev
}

/** `EDITS` edits, each alternating a type error (valid JavaScript) and the clean file. */
async function phase(dev: Dev, latencies: number[]): Promise<void> {
  for (let n = 0; n < EDITS; n++) {
    const text = n % 2 === 0 ? dev.clean.replace('z.string().min(1)', "z.string().min('1')") : dev.clean.replace('Greet', `Greet (${n})`)
    dev.generation += 1
    const from = dev.text.length
    const started = performance.now()
    await writeFile(dev.example, text)
    await dev.until(new RegExp(`^generation ${dev.generation} live`, 'm'), from)
    latencies.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, GAP_MS))
  }
}

function p95(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!
}

async function stop(dev: Dev): Promise<void> {
  if (dev.child.exitCode !== null) return
  const exited = new Promise((resolve) => dev.child.on('exit', resolve))
  dev.child.kill('SIGINT')
  await exited
}

export async function run(): Promise<BenchReport> {
  const dirs = [await project(), await project()]
  const [plainDir, checkedDir] = dirs as [string, string]
  let plain: Dev | undefined
  let checked: Dev | undefined
  try {
    plain = await startDev(plainDir, false)
    checked = await startDev(checkedDir, true)
    const baseline: number[] = []
    const candidate: number[] = []
    await phase(plain, baseline)
    await phase(checked, candidate)
    await phase(checked, candidate)
    await phase(plain, baseline)
    const checks = [...checked.text.matchAll(/^(?:types ok|\d+ type errors?) .*\(\d+ files, ([\d.]+) ms\)$/gm)].slice(1).map((m) => Number(m[1]))
    const ratio = median(candidate) / median(baseline)
    return {
      name: 'dev-types',
      lines: [
        `dev-types: ${2 * EDITS} edits per seam dev (write → generation live), one every ${GAP_MS} ms, type error and fix in turns`,
        ...table(
          ['', 'median', 'p95', 'ratio'],
          [
            ['seam dev --no-check (baseline)', formatMs(median(baseline)), formatMs(p95(baseline)), formatRatio(1)],
            ['seam dev, types checked beside it', formatMs(median(candidate)), formatMs(p95(candidate)), formatRatio(ratio)],
            ['  its incremental checks (after an edit)', checks.length > 0 ? formatMs(median(checks)) : '-', checks.length > 0 ? formatMs(p95(checks)) : '-', ''],
          ],
        ),
      ],
      verdicts: [
        {
          label: 'reload with the background check vs without',
          ratio,
          max: 1.2,
          pass: ratio <= 1.2,
          measured: formatMs(median(candidate)),
          baseline: `--no-check: ${formatMs(median(baseline))}`,
          target: '≤ 1.2×',
        },
      ],
    }
  } finally {
    if (plain) await stop(plain)
    if (checked) await stop(checked)
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) printReport(await run())
