/**
 * Issue 5: (1) how long from a tool file write to a published generation, median and p95 over 100
 * edits, against restarting a Node process that imports the same tool (the usual "restart on
 * change" workflow), in the same run; (2) heap retained per reload over 1,000 reloads (with
 * `--expose-gc`, in a child process) against `import(file + '?t=' + n)` in that same child.
 * Targets: median publish under 50 ms and ≥ 10× faster than a restart; under 2 KB per reload.
 * `node --import tsx bench/reload.ts`
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createRoot } from '../src/index.js'
import { type BenchReport, budget, formatBytes, formatMs, isMain, median, printReport, table, type Verdict } from './harness.js'

const EDITS = 100
const RESTARTS = 12
const here = path.dirname(fileURLToPath(import.meta.url))

export function toolSource(n: number): string {
  return `import { defineTool } from 'seam-runtime'
import { z } from 'zod'

export default defineTool({
  description: 'Look up a ticket (edit ${n}).',
  input: z.object({ id: z.string() }),
  approval: 'never',
  async execute({ id }) {
    return { id, edit: ${n} }
  },
})
`
}

function p95(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!
}

/** Write → `generation` event, for each of `EDITS` edits of one tool file. */
async function reloadLatencies(dir: string, file: string): Promise<number[]> {
  const root = await createRoot({ dir, watch: true })
  const latencies: number[] = []
  try {
    for (let n = 1; n <= EDITS; n++) {
      const published = new Promise<void>((resolve) => {
        const off = root.on('generation', () => {
          off()
          resolve()
        })
      })
      const started = performance.now()
      await writeFile(file, toolSource(n))
      await published
      latencies.push(performance.now() - started)
      // Let the watcher go quiet so edits do not coalesce.
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  } finally {
    await root.close()
  }
  return latencies
}

/** Write → a fresh Node process (with tsx) has imported the tool and is ready. */
async function restartLatencies(file: string): Promise<number[]> {
  const latencies: number[] = []
  const script = `const m = await import(${JSON.stringify(pathToFileURL(file).href)}); if (!m.default) process.exit(3); console.log('ready')`
  for (let n = 1; n <= RESTARTS; n++) {
    const started = performance.now()
    await writeFile(file, toolSource(1_000 + n))
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) {
          latencies.push(performance.now() - started)
          child.kill()
        }
      })
      child.on('exit', () => resolve())
      child.on('error', reject)
    })
  }
  return latencies
}

interface MemoryResult {
  reloads: number
  seamBytesPerReload: number
  importBytesPerReload: number
}

function memoryChild(dir: string): Promise<MemoryResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(here, 'reload-memory.ts'), dir], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? ''
      if (code !== 0) reject(new Error(`reload-memory exited with ${code}: ${out}`))
      else resolve(JSON.parse(line) as MemoryResult)
    })
  })
}

export async function run(): Promise<BenchReport> {
  // Inside the package, so `seam-runtime` and `zod` resolve for the restart baseline too.
  const dir = await mkdtemp(path.join(here, '.reload-'))
  const file = path.join(dir, 'tools', 'lookup_ticket.ts')
  try {
    await import('node:fs/promises').then((fs) => fs.mkdir(path.dirname(file), { recursive: true }))
    await writeFile(file, toolSource(0))
    const reloads = await reloadLatencies(dir, file)
    const restarts = await restartLatencies(file)
    const memory = await memoryChild(dir)
    const reloadMedian = median(reloads)
    const restartMedian = median(restarts)
    const ratio = reloadMedian / restartMedian
    const verdicts: Verdict[] = [
      budget('file write → generation published, median', reloadMedian, 50, formatMs, `p95 ${formatMs(p95(reloads))}`),
      {
        label: `hot reload vs process restart (${(1 / ratio).toFixed(1)}× faster)`,
        ratio,
        max: 0.1,
        pass: ratio <= 0.1,
        measured: formatMs(reloadMedian),
        baseline: `restart node + tsx + import: ${formatMs(restartMedian)}`,
        target: '≤ 0.1×',
      },
      budget('heap retained per reload', memory.seamBytesPerReload, 2048, formatBytes, `import(file + '?t=' + n): ${formatBytes(memory.importBytesPerReload)}`),
    ]
    return {
      name: 'reload',
      lines: [
        `reload: ${EDITS} edits of one tool file (write → generation published) vs ${RESTARTS} process restarts importing it`,
        ...table(
          ['', 'median', 'p95', 'ratio'],
          [
            ['seam hot reload', formatMs(reloadMedian), formatMs(p95(reloads)), `${ratio.toFixed(3)}×`],
            ['restart node + tsx + import', formatMs(restartMedian), formatMs(p95(restarts)), '1.00×'],
          ],
        ),
        `memory: ${memory.reloads} reloads with --expose-gc, heap retained per reload`,
        ...table(
          ['', 'bytes/reload', 'ratio'],
          [
            ['seam reload (esbuild + vm)', memory.seamBytesPerReload.toFixed(0), (memory.seamBytesPerReload / memory.importBytesPerReload).toFixed(3) + '×'],
            ["import(file + '?t=' + n)", memory.importBytesPerReload.toFixed(0), '1.00×'],
          ],
        ),
      ],
      verdicts,
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) printReport(await run())
