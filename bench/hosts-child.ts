// A host process for `npm run bench -- hosts`: 16 concurrent turns calling one tool through the
// pipeline until told to stop. argv: <memory | sqlite path | postgres url> <schema> <hostId> <turns>
// stdin: `go` starts, `stop` ends; stdout: `ready`, then one JSON line `{ calls, latencyMs }`.
import { createInterface } from 'node:readline'
import { z } from 'zod'
import { createRoot, definePlugin, defineTool, type JournalStore, memoryJournal, postgresJournal, sqliteJournal } from '../src/index.js'

const [where, schema, hostId, turnsArg] = process.argv.slice(2) as [string, string, string, string]
const journal: JournalStore =
  where === 'memory' ? memoryJournal() : where.startsWith('postgres') ? postgresJournal(where, { schema, hostId }) : sqliteJournal(where, { hostId })
const root = await createRoot({
  journal,
  plugin: definePlugin({
    name: 'root',
    setup(ctx) {
      ctx.addTool('lookup', defineTool({ description: 'Look up a ticket.', input: z.object({ id: z.string() }), approval: 'never', execute: ({ id }) => ({ id, title: 'ok' }) }))
    },
  }),
})
const turns = await Promise.all(Array.from({ length: Number(turnsArg) }, (_, index) => root.beginTurn({ session: `${hostId}-${index}`, principal: { subjectId: 'bench' } })))
// Warm: one call per turn before the clock starts.
await Promise.all(turns.map((turn, index) => turn.tools.execute({ callId: `warm-${index}`, name: 'lookup', arguments: '{"id":"T-1"}' })))
let running = false
let calls = 0
let latency = 0
async function loop(turnIndex: number): Promise<void> {
  const turn = turns[turnIndex]!
  for (let n = 0; running; n += 1) {
    const started = performance.now()
    const outcome = await turn.tools.execute({ callId: `c${n}`, name: 'lookup', arguments: '{"id":"T-1"}' })
    if (outcome.status !== 'completed') throw new Error(`bench call failed: ${outcome.code}`)
    latency += performance.now() - started
    calls += 1
    // A memory journal settles calls in microtasks only: let `stop` (a macrotask) through.
    if (n % 32 === 31) await new Promise((resolve) => setImmediate(resolve))
  }
}
let loops: Promise<void>[] = []
createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line === 'go') {
    running = true
    loops = turns.map((_, index) => loop(index))
  } else if (line === 'stop') {
    running = false
    await Promise.all(loops)
    process.stdout.write(`${JSON.stringify({ calls, latencyMs: latency / Math.max(1, calls) })}\n`)
    await root.close()
    process.exit(0)
  }
})
process.stdout.write('ready\n')
