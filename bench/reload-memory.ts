/**
 * Child process of bench/reload.ts (needs `--expose-gc`): heap retained per reload of a plugin
 * folder, against `import(file + '?t=' + n)` of the same tool file. Prints one JSON line.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { createRoot } from '../src/index.js'
import { toolSource } from './reload.js'

const RELOADS = 1_000
const WARMUP = 50
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc!()
    await new Promise((resolve) => setImmediate(resolve))
  }
  return process.memoryUsage().heapUsed
}

const dir = process.argv[2]!
const file = path.join(dir, 'tools', 'lookup_ticket.ts')
const changed = new Set([file])

const root = await createRoot({ dir })
const reload = async (n: number) => {
  await writeFile(file, toolSource(n))
  const result = await root.reload({ changed })
  if (!result.ok) throw result.error
}
for (let n = 0; n < WARMUP; n++) await reload(n)
const seamBefore = await settledHeap()
for (let n = WARMUP; n < WARMUP + RELOADS; n++) await reload(n)
const seamAfter = await settledHeap()
await root.close()

const url = pathToFileURL(file).href
for (let n = 0; n < WARMUP; n++) await import(`${url}?t=w${n}`)
const importBefore = await settledHeap()
for (let n = 0; n < RELOADS; n++) {
  await writeFile(file, toolSource(10_000 + n))
  await import(`${url}?t=${n}`)
}
const importAfter = await settledHeap()

console.log(
  JSON.stringify({
    reloads: RELOADS,
    seamBytesPerReload: Math.max(0, seamAfter - seamBefore) / RELOADS,
    importBytesPerReload: Math.max(0, importAfter - importBefore) / RELOADS,
  }),
)
