/**
 * `npm run bench [-- name… --option value…]`: runs every `bench/<name>.ts` that exports `run()` (or
 * only the named ones), one after another in this process, prints each table, then one table of
 * every target: what was measured, its same-run baseline, the ratio and the target. A benchmark
 * reports its targets by returning a `BenchReport`; one that only prints gets no verdict. Options
 * (`--calls 100000`) are left in `process.argv` for the benchmarks to read. Files without a `run`
 * export (child scripts a benchmark spawns) are never imported.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { type BenchReport, formatRatio, table } from './harness.js'

const HERE = dirname(fileURLToPath(import.meta.url))
const NOT_BENCHMARKS = new Set(['harness', 'run'])

/** Read, not imported: a child script may do its work (or refuse to run) at import time. */
const EXPORTS_RUN = /export\s+(?:async\s+)?function\s+run\s*\(|export\s+(?:const|let)\s+run\b|export\s*\{[^}]*\brun\b[^}]*\}/

function available(): string[] {
  return readdirSync(HERE)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => basename(file, '.ts'))
    .filter((name) => !NOT_BENCHMARKS.has(name) && EXPORTS_RUN.test(readFileSync(join(HERE, `${name}.ts`), 'utf8')))
    .sort()
}

type Outcome = { name: string; report?: BenchReport; error?: unknown; ms: number }

async function runOne(name: string): Promise<Outcome> {
  const started = performance.now()
  try {
    const module = (await import(pathToFileURL(join(HERE, `${name}.ts`)).href)) as { run?: () => Promise<unknown> }
    if (typeof module.run !== 'function') return { name, error: new Error(`bench/${name}.ts does not export run()`), ms: 0 }
    const report = ((await module.run()) ?? undefined) as BenchReport | undefined
    if (report) for (const line of report.lines) console.log(line)
    return { name, report, ms: performance.now() - started }
  } catch (error) {
    console.error(`bench/${name}.ts failed:`, error)
    return { name, error, ms: performance.now() - started }
  }
}

/** Benchmark names: every argument but `--option`, `--option=value` and an option's value. */
function benchNames(args: readonly string[]): string[] {
  const out: string[] = []
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!
    if (!arg.startsWith('--')) out.push(arg)
    else if (!arg.includes('=') && /^[\d_,.]+$/.test(args[index + 1] ?? '')) index += 1
  }
  return out
}

async function main(): Promise<void> {
  const all = available()
  const wanted = benchNames(process.argv.slice(2))
  const unknown = wanted.filter((name) => !all.includes(name))
  if (unknown.length > 0) {
    console.error(`unknown benchmark ${unknown.join(', ')}; available: ${all.join(', ')}`)
    process.exitCode = 2
    return
  }
  const names = wanted.length > 0 ? wanted : all
  console.log(`node ${process.version}, ${names.length} benchmark(s): ${names.join(', ')}\n`)
  const outcomes: Outcome[] = []
  for (const name of names) {
    outcomes.push(await runOne(name))
    console.log()
  }
  console.log(`summary (node ${process.version})`)
  const rows: string[][] = []
  for (const outcome of outcomes) {
    const took = `${(outcome.ms / 1000).toFixed(1)} s`
    if (outcome.error) {
      rows.push([outcome.name, 'crashed', '', '', '', '', 'ERROR', took])
      continue
    }
    const verdicts = outcome.report?.verdicts ?? []
    if (verdicts.length === 0) rows.push([outcome.name, 'printed its own figures, no target reported', '', '', '', '', '—', took])
    for (const v of verdicts) {
      rows.push([outcome.name, v.label, v.measured ?? '', v.baseline ?? '', formatRatio(v.ratio), v.target ?? `≤ ${v.max}×`, v.pass ? 'PASS' : 'MISS', took])
    }
  }
  for (const line of table(['bench', 'what', 'measured', 'baseline (same run)', 'ratio', 'target', '', 'took'], rows, 2)) console.log(line)
  // A MISS is a figure to look at on a noisy machine, not a failure; a crash is.
  if (outcomes.some((o) => o.error)) process.exitCode = 1
}

await main()
