import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'

/**
 * Shared benchmark helpers. The machine is shared and noisy, so a benchmark measures its candidate
 * and its baseline in the same run, in short interleaved rounds (A B, B A, …), and reports medians:
 * a burst of background load then weighs on both sides alike instead of on whichever ran last.
 */

/** One round: `ops` operations in `ms` milliseconds of wall time. */
export interface Sample {
  readonly ms: number
  readonly ops: number
  /**
   * CPU time of this process over the round (user + system, all its threads), when measured. On a
   * shared machine wall time includes waiting for a core; an absolute budget is judged on this.
   */
  readonly cpuMs?: number
  /**
   * CPU time of the main thread alone over the round, where Node can tell (22.19 and later:
   * `process.threadCpuUsage`). The rest of `cpuMs` is V8's helper threads: mostly the collector's
   * parallel scavenges and concurrent marking, so it follows what a contender keeps alive.
   */
  readonly mainCpuMs?: number
}

export interface Contender {
  readonly label: string
  /** Runs one timed round; untimed setup and teardown belong inside, around the timed part. */
  readonly round: () => Promise<Sample>
}

export interface Measured {
  readonly label: string
  readonly samples: readonly Sample[]
}

/**
 * One target: the candidate's median time per op at most `max` times the baseline's. An absolute
 * target (a budget in µs, ms or bytes) is a ratio to the budget with `max: 1`. `measured`,
 * `baseline` and `target` are what the summary table shows for it.
 */
export interface Verdict {
  readonly label: string
  readonly ratio: number
  readonly max: number
  readonly pass: boolean
  readonly measured?: string
  readonly baseline?: string
  readonly target?: string
}

/** What a benchmark's `run()` returns: the lines of its table and its verdicts. */
export interface BenchReport {
  readonly name: string
  readonly lines: readonly string[]
  readonly verdicts: readonly Verdict[]
}

/**
 * Runs `warmup` untimed rounds of every contender, then `rounds` timed rounds each, alternating
 * the order every round so no contender always runs first. Results come back in input order.
 * `settle`: an untimed pause before each timed round (`SETTLE_MS`), for CPU-time verdicts of
 * contenders that allocate a lot.
 */
export async function interleave(contenders: readonly Contender[], options: { rounds: number; warmup: number; settle?: boolean }): Promise<Measured[]> {
  for (let index = 0; index < options.warmup; index += 1) {
    for (const contender of contenders) await contender.round()
  }
  const samples = contenders.map(() => [] as Sample[])
  for (let index = 0; index < options.rounds; index += 1) {
    const order = contenders.map((_, i) => i)
    if (index % 2 === 1) order.reverse()
    for (const i of order) {
      if (options.settle) await sleep(SETTLE_MS)
      samples[i]!.push(await contenders[i]!.round())
    }
  }
  return contenders.map((contender, i) => ({ label: contender.label, samples: samples[i]! }))
}

/**
 * The pause between rounds with `settle`, untimed: the event loop idles, and the collector finishes
 * the work an earlier round left it (incremental marking, sweeping on its helper threads), which
 * would otherwise land in whichever round comes next and be counted in its CPU time. Each round
 * still pays for the collections its own allocation triggers. A forced full collection instead
 * would shrink the young generation, and the next round would pay for growing it again.
 */
const SETTLE_MS = 25

/** `process.threadCpuUsage` where this Node has it (22.19 and later), else `undefined`. */
const threadCpuUsage = (process as { threadCpuUsage?: (previous?: NodeJS.CpuUsage) => NodeJS.CpuUsage }).threadCpuUsage?.bind(process)

/** Times `ops` sequential awaits of `op` (after the caller's own setup), in wall and CPU time. */
export async function timeLoop(ops: number, op: (index: number) => unknown): Promise<Sample> {
  const main = threadCpuUsage?.()
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let index = 0; index < ops; index += 1) await op(index)
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  const mainUsed = main === undefined ? undefined : threadCpuUsage!(main)
  return { ms, ops, cpuMs: (used.user + used.system) / 1000, ...(mainUsed === undefined ? {} : { mainCpuMs: (mainUsed.user + mainUsed.system) / 1000 }) }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Median milliseconds per operation. */
export function msPerOp(measured: Measured): number {
  return median(measured.samples.map((s) => s.ms / s.ops))
}

/** Median CPU milliseconds per operation (rounds that measured it). */
export function cpuMsPerOp(measured: Measured): number {
  return median(measured.samples.filter((s) => s.cpuMs !== undefined).map((s) => s.cpuMs! / s.ops))
}

/**
 * Median CPU milliseconds per operation of V8's helper threads (each round's `cpuMs` less its
 * `mainCpuMs`, so the two readings are of the same round), or `NaN` when this Node cannot tell.
 */
export function helperCpuMsPerOp(measured: Measured): number {
  return median(measured.samples.filter((s) => s.cpuMs !== undefined && s.mainCpuMs !== undefined).map((s) => Math.max(0, s.cpuMs! - s.mainCpuMs!) / s.ops))
}

/** Wall and CPU time of `body`, as one sample of `ops` operations. */
export async function timed(ops: number, body: () => Promise<void>): Promise<Sample> {
  const cpu = process.cpuUsage()
  const started = performance.now()
  await body()
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  return { ms, ops, cpuMs: (used.user + used.system) / 1000 }
}

/** Median wall milliseconds per round. */
export function msPerRound(measured: Measured): number {
  return median(measured.samples.map((s) => s.ms))
}

/**
 * The candidate's cost relative to the baseline: the median of the per-round ratios, each round's
 * candidate paired with the baseline round run right next to it (the pair saw the same load).
 */
export function pairedRatio(candidate: Measured, baseline: Measured): number {
  const ratios = candidate.samples.map((s, i) => {
    const b = baseline.samples[i]!
    return s.ms / s.ops / (b.ms / b.ops)
  })
  return median(ratios)
}

/** `pairedRatio` on CPU time: each round's candidate CPU per op over its neighbouring baseline round's. */
export function pairedCpuRatio(candidate: Measured, baseline: Measured): number {
  const ratios = candidate.samples.map((s, i) => {
    const b = baseline.samples[i]!
    return s.cpuMs! / s.ops / (b.cpuMs! / b.ops)
  })
  return median(ratios)
}

/** `verdict` judged on CPU time (both sides must have measured it): a shared machine's wait for a core counts for neither. */
export function cpuVerdict(label: string, candidate: Measured, baseline: Measured, max: number): Verdict {
  return judged(label, pairedCpuRatio(candidate, baseline), max, `${formatMs(cpuMsPerOp(candidate))} CPU`, `${baseline.label}: ${formatMs(cpuMsPerOp(baseline))} CPU`)
}

export function verdict(label: string, candidate: Measured, baseline: Measured, max: number): Verdict {
  return judged(label, pairedRatio(candidate, baseline), max, formatMs(msPerOp(candidate)), `${baseline.label}: ${formatMs(msPerOp(baseline))}`)
}

function judged(label: string, ratio: number, max: number, measured: string, baseline: string): Verdict {
  return { label, ratio, max, pass: ratio <= max, measured, baseline, target: `≤ ${max}×` }
}

/** An absolute budget: `value` at most `budget` (same unit); `show` formats both for the table. */
export function budget(label: string, value: number, limit: number, show: (n: number) => string, baseline?: string): Verdict {
  return { label, ratio: value / limit, max: 1, pass: value <= limit, measured: show(value), baseline, target: `≤ ${show(limit)}` }
}

/**
 * A numeric command-line option, `--name N` or `--name=N` (underscores and commas allowed: `1_000_000`),
 * or `fallback` when absent. Benchmarks read their own options; `run.ts` passes them through.
 */
export function numberOption(name: string, fallback: number): number {
  const args = process.argv
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!
    const text = arg === `--${name}` ? args[index + 1] : arg.startsWith(`--${name}=`) ? arg.slice(name.length + 3) : undefined
    if (text === undefined) continue
    const value = Number(text.replace(/[_,]/g, ''))
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} expects a positive number, got ${text}`)
    return value
  }
  return fallback
}

export function formatBytes(bytes: number): string {
  if (Math.abs(bytes) < 10_240) return `${Math.round(bytes).toLocaleString('en-US')} B`
  if (Math.abs(bytes) < 10_485_760) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / 1_048_576).toFixed(1)} MB`
}

/** Left-aligns the first `left` columns (one by default), right-aligns the others. */
export function table(header: readonly string[], rows: readonly (readonly string[])[], left = 1): string[] {
  const all = [header, ...rows]
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)))
  const line = (row: readonly string[]) =>
    row.map((cell, column) => (column < left ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)]
}

export function formatRate(perSecond: number): string {
  return Math.round(perSecond).toLocaleString('en-US')
}

export function formatMs(ms: number): string {
  if (ms < 0.01) return `${(ms * 1000).toFixed(2)} µs`
  if (ms < 1) return `${(ms * 1000).toFixed(1)} µs`
  return `${ms.toFixed(ms < 100 ? 2 : 0)} ms`
}

export const formatRatio = (ratio: number) => `${ratio.toFixed(2)}×`

export function formatVerdict(v: Verdict): string {
  return `${v.pass ? 'PASS' : 'MISS'}  ${v.label}: ${formatRatio(v.ratio)} (target ≤ ${v.max}×)`
}

export function printReport(report: BenchReport): void {
  for (const line of report.lines) console.log(line)
  for (const v of report.verdicts) console.log(`  ${formatVerdict(v)}`)
}

/** True when `importMetaUrl` is the module Node was started with (`node --import tsx bench/x.ts`). */
export function isMain(importMetaUrl: string): boolean {
  const entry = process.argv[1]
  return entry !== undefined && importMetaUrl === pathToFileURL(entry).href
}
