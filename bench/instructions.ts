/**
 * The pipeline against the floor sketch in instructions rather than time: each contender runs in
 * its own process under valgrind's callgrind, warms up, then counts the instructions its main
 * thread executes over 12,000 calls (a pipeline round's root and turn are made and closed
 * uncounted). On a shared machine a time ratio moves by tens of percent from run to run (other
 * work, which contender a collection lands in); this count moves by a few percent (when a
 * background compile finishes under valgrind, how much of a collection the main thread does), so
 * it shows what a change to the pipeline's own work is worth. The collector's helper threads are
 * left out: their share shows in `npm run bench -- pipeline`, judged on CPU time.
 *
 * Opt-in, not part of `npm run bench` (it needs valgrind, `apt-get install -y valgrind`, and about
 * 2 minutes): `node --import tsx bench/instructions.ts [--single-threaded]`. The two contenders run side
 * by side.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { formatRatio, isMain, table } from './harness.js'
import { CALLS_PER_ROUND, floorRound, type Loop, pipelineRound } from './pipeline.js'
import { NAME } from './lookup-tool.js'

/**
 * `--single-threaded`: V8 collects and compiles on the main thread too, so the count includes the
 * collector's work (the floor sketch's and the pipeline's garbage alike) and no background compile
 * lands at a different moment from run to run.
 */
const SINGLE_THREADED = process.argv.includes('--single-threaded')
const WARMUP_ROUNDS = 6
const COUNTED_ROUNDS = 3

const CONTENDERS = {
  floor: { label: 'floor sketch, no checks (zod)', round: (loop: Loop) => floorRound(undefined, loop) },
  zod: { label: 'pipeline: zod tool', round: (loop: Loop) => pipelineRound(NAME, undefined, loop) },
} as const
type Name = keyof typeof CONTENDERS

/**
 * In the child, under callgrind: warm up uncounted, then count the calls of `COUNTED_ROUNDS`
 * rounds, and only the calls (a pipeline round's root and turn are made and closed uncounted).
 */
async function child(name: Name): Promise<void> {
  let counting = false
  const loop: Loop = async (ops, op) => {
    if (counting) await instrument('on')
    for (let index = 0; index < ops; index += 1) await op(index)
    if (counting) await instrument('off')
    return { ms: 0, ops }
  }
  const round = CONTENDERS[name].round(loop)
  for (let index = 0; index < WARMUP_ROUNDS; index += 1) await round()
  counting = true
  for (let index = 0; index < COUNTED_ROUNDS; index += 1) await round()
}

/** Switches callgrind's counting on or off for this process (it answers between JavaScript turns). */
function instrument(state: 'on' | 'off'): Promise<void> {
  return new Promise((resolve, reject) => {
    spawn('callgrind_control', [`--instr=${state}`, String(process.pid)], { stdio: 'ignore' })
      .on('error', reject)
      .on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`callgrind_control --instr=${state} exited with ${String(code)}`))))
  })
}

/** Runs one contender under callgrind; its main thread's instructions per call. */
async function count(name: Name, dir: string): Promise<number> {
  const out = join(dir, `callgrind.${name}`)
  const node = [process.execPath, ...(SINGLE_THREADED ? ['--single-threaded'] : []), ...process.execArgv, fileURLToPath(import.meta.url), '--child', name]
  const args = ['--tool=callgrind', '--separate-threads=yes', '--instr-atstart=no', `--callgrind-out-file=${out}`, ...node]
  const started = performance.now()
  const code = await new Promise<number | null>((resolve, reject) => spawn('valgrind', args, { stdio: ['ignore', 'ignore', 'pipe'] }).on('error', reject).on('close', resolve))
  if (code !== 0) throw new Error(`valgrind … bench/instructions.ts --child ${name} exited with ${String(code)}`)
  // Thread 1 is the main thread: its file is `<out>-01`.
  const annotated = spawnSync('callgrind_annotate', [`${out}-01`], { encoding: 'utf8' })
  const total = /([\d,]+) \([\s\d.]+%\)\s+PROGRAM TOTALS/.exec(annotated.stdout ?? '')?.[1]
  if (total === undefined) throw new Error(`callgrind_annotate found no totals for ${name}: ${annotated.stderr}`)
  console.error(`  ${name}: counted in ${((performance.now() - started) / 1000).toFixed(0)} s`)
  return Number(total.replaceAll(',', '')) / (COUNTED_ROUNDS * CALLS_PER_ROUND)
}

async function main(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).error) {
    console.error('bench/instructions.ts needs valgrind (apt-get install -y valgrind)')
    process.exitCode = 1
    return
  }
  const names = Object.keys(CONTENDERS) as Name[]
  const dir = mkdtempSync(join(tmpdir(), 'seam-instructions-'))
  const perCall = new Map<Name, number>()
  try {
    // Two at a time at most: each is one busy thread.
    const lanes = Math.max(1, Math.min(2, cpus().length))
    const queue = [...names]
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) perCall.set(name, await count(name, dir))
      }),
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const floor = perCall.get('floor')!
  const rows = names.map((name) => [CONTENDERS[name].label, Math.round(perCall.get(name)!).toLocaleString('en-US'), formatRatio(perCall.get(name)! / floor)])
  const mode = SINGLE_THREADED ? ', collector and compiler on it too (--single-threaded)' : ''
  console.log(`instructions per call, main thread${mode} (callgrind; ${WARMUP_ROUNDS} rounds of ${CALLS_PER_ROUND.toLocaleString('en-US')} calls warm up, ${COUNTED_ROUNDS} are counted)`)
  for (const line of table(['', 'instructions', 'vs floor'], rows)) console.log(line)
}

if (isMain(import.meta.url)) {
  const at = process.argv.indexOf('--child')
  if (at === -1) await main()
  else await child(process.argv[at + 1] as Name)
}
