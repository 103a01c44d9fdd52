/**
 * `npm run bench -- hosts`: calls per second through the whole pipeline with several host
 * processes on one journal (16 concurrent turns each), PostgreSQL at 1, 2 and 4 hosts and SQLite
 * beside it, against one host of the same journal measured in the same run. The per-call journal
 * cost is the mean call latency with the journal minus the same with an in-memory journal.
 * PostgreSQL: SEAM_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test); BENCH_HOSTS_MS
 * sets each measurement's length (default 3000 ms).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { BenchReport } from './harness.js'

const CHILD = fileURLToPath(new URL('./hosts-child.ts', import.meta.url))
const URL_ = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const TURNS = 16
const MS = Number(process.env.BENCH_HOSTS_MS ?? 3000)

interface Round {
  readonly callsPerSecond: number
  readonly latencyMs: number
}

/** Starts `hosts` processes on `where`, runs them together for `MS`, and sums what they did. */
async function round(where: string, schema: string, hosts: number): Promise<Round> {
  const children = await Promise.all(Array.from({ length: hosts }, (_, index) => child(where, schema, `bench-${index}`)))
  for (const c of children) c.proc.stdin!.write('go\n')
  const started = performance.now()
  await new Promise((resolve) => setTimeout(resolve, MS))
  for (const c of children) c.proc.stdin!.write('stop\n')
  const reports = await Promise.all(children.map((c) => c.report))
  const seconds = (performance.now() - started) / 1000
  const calls = reports.reduce((sum, r) => sum + r.calls, 0)
  const latencyMs = reports.reduce((sum, r) => sum + r.latencyMs * r.calls, 0) / Math.max(1, calls)
  return { callsPerSecond: calls / seconds, latencyMs }
}

async function child(where: string, schema: string, hostId: string): Promise<{ proc: ChildProcess; report: Promise<{ calls: number; latencyMs: number }> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, where, schema, hostId, String(TURNS)], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = createInterface({ input: proc.stdout! })
  const next = () => new Promise<string>((resolve, reject) => {
    lines.once('line', resolve)
    proc.once('exit', (code) => reject(new Error(`bench host exited (${code})`)))
  })
  if ((await next()) !== 'ready') throw new Error('bench host did not start')
  return { proc, report: next().then((line) => JSON.parse(line) as { calls: number; latencyMs: number }) }
}

export async function run(): Promise<BenchReport> {
  const admin = new pg.Pool({ connectionString: URL_, max: 1 })
  const schema = `seam_bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  const dir = mkdtempSync(join(tmpdir(), 'seam-bench-hosts-'))
  const lines: string[] = []
  try {
    const memory = await round('memory', '-', 1)
    const rows: [string, number, Round][] = []
    for (const hosts of [1, 2, 4]) rows.push(['postgres', hosts, await round(URL_, schema, hosts)])
    for (const hosts of [1, 2, 4]) rows.push(['sqlite', hosts, await round(join(dir, 'journal.db'), '-', hosts)])
    lines.push(`hosts: ${TURNS} concurrent turns per host process, ${MS} ms per measurement`)
    lines.push('journal   hosts   calls/s   vs 1 host   mean latency   journal cost/call')
    for (const [kind, hosts, r] of rows) {
      const one = rows.find(([k, h]) => k === kind && h === 1)![2]
      lines.push(
        `${kind.padEnd(9)} ${String(hosts).padStart(5)} ${r.callsPerSecond.toFixed(0).padStart(9)} ${`${(r.callsPerSecond / one.callsPerSecond).toFixed(2)}×`.padStart(11)} ${`${r.latencyMs.toFixed(2)} ms`.padStart(14)} ${`${(r.latencyMs - memory.latencyMs).toFixed(2)} ms`.padStart(19)}`,
      )
    }
    lines.push(`memory        1 ${memory.callsPerSecond.toFixed(0).padStart(9)}           — ${`${memory.latencyMs.toFixed(2)} ms`.padStart(14)}   (baseline for the journal cost)`)
    return { name: 'hosts', lines, verdicts: [] }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
    await admin.end()
    rmSync(dir, { recursive: true, force: true })
  }
}
