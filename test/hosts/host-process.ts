// One host process on a shared journal, driven by JSON lines on stdin; answers one JSON line per
// request on stdout (`{ id, ok, value }` or `{ id, ok: false, error, code }`). Body runs are
// appended to RUN_LOG as `<tool> <callId> <pid>` lines, so a test counts them across processes.
// argv: <journal: postgres URL or SQLite path> <schema or '-'> <hostId> <leaseMs>
// env: TOOL_DESCRIPTION (the note tool's description), RUN_LOG (a file path), SQLITE_DRIVER (node or
// better-sqlite3), CODE_MODE=1 (offer run_code)
import { appendFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { z } from 'zod'
import { createRoot, deferApprovals, definePlugin, defineTool, postgresJournal, SeamError, sqliteJournal, type Turn } from '../../src/index.js'

const [location, schema, hostId, leaseMs] = process.argv.slice(2) as [string, string, string, string]
const log = (line: string) => appendFileSync(process.env.RUN_LOG!, `${line} ${process.pid}\n`)

const journal = location.startsWith('postgres')
  ? postgresJournal(location, { schema: schema === '-' ? undefined : schema, hostId })
  : sqliteJournal(location, { hostId, driver: process.env.SQLITE_DRIVER as 'node' | 'better-sqlite3' | undefined })
const root = await createRoot({
  journal,
  leaseMs: Number(leaseMs),
  approval: deferApprovals(),
  codeMode: process.env.CODE_MODE === '1',
  plugin: definePlugin({
    name: 'root',
    setup(ctx) {
      ctx.addTool('note', defineTool({
        description: process.env.TOOL_DESCRIPTION ?? 'Write a note.',
        input: z.object({ text: z.string() }),
        approval: 'always',
        isConcurrencySafe: () => true,
        execute: ({ text }, { callId }) => {
          log(`note ${callId}`)
          return `noted ${text}`
        },
      }))
      ctx.addTool('hang', defineTool({
        description: 'Never finishes.',
        input: z.object({}),
        approval: 'never',
        execute: (_args, { callId }) => {
          log(`hang ${callId}`)
          return new Promise(() => {})
        },
      }))
      ctx.addTool('charge', defineTool({
        description: 'Charge an order once.',
        input: z.object({ order: z.string() }),
        approval: 'never',
        isConcurrencySafe: () => true,
        idempotencyKey: ({ order }) => order,
        idempotencyScope: 'global',
        async execute({ order }, { callId }) {
          log(`charge ${callId}`)
          await new Promise((resolve) => setTimeout(resolve, 20))
          return { receipt: `${order}@${hostId}` }
        },
      }))
      ctx.addTool('tally', defineTool({
        description: 'Count a side effect.',
        input: z.object({ n: z.number() }),
        approval: 'never',
        execute: ({ n }, { callId }) => {
          log(`tally ${callId}`)
          return n
        },
      }))
      ctx.addTool('slow', defineTool({
        description: 'Finishes after `ms`.',
        input: z.object({ ms: z.number() }),
        approval: 'never',
        isConcurrencySafe: () => true,
        async execute({ ms }, { callId }) {
          log(`slow ${callId}`)
          await new Promise((resolve) => setTimeout(resolve, ms))
          return 'slow done'
        },
      }))
      ctx.addTool('echo', defineTool({ description: 'Echo.', input: z.object({ n: z.number() }), approval: 'never', isConcurrencySafe: () => true, execute: ({ n }) => n }))
    },
  }),
})

const turns = new Map<string, Turn>()
async function turnFor(session: string): Promise<Turn> {
  let turn = turns.get(session)
  if (turn === undefined) {
    turn = await root.beginTurn({ session, principal: { subjectId: 'u1', roles: [] } })
    turns.set(session, turn)
  }
  return turn
}

type Request = { id: number; op: string; [key: string]: unknown }
const handlers: Record<string, (request: Request) => Promise<unknown>> = {
  execute: async ({ session, callId, name, args }) =>
    (await turnFor(String(session ?? 's1'))).tools.execute({ callId: String(callId), name: String(name), arguments: JSON.stringify(args ?? {}) }),
  batch: async ({ session, calls }) => (await turnFor(String(session ?? 's1'))).tools.executeBatch(calls as never),
  pending: async ({ as }) => root.approvals.pending({ as: String(as ?? 'u1') }),
  decide: async ({ callId, answer, by }) => root.approvals.decide(String(callId), answer as never, { by: String(by ?? 'tester') }),
  turnResume: async ({ session, token }) => (await turnFor(String(session ?? 's1'))).tools.resume(String(token)),
  resume: async ({ token, principal }) => root.resume(String(token), { principal: String(principal ?? 'u1') }),
  repair: async () => root.journal.repair(),
  turnId: async ({ session }) => (await turnFor(String(session ?? 's1'))).turnId,
  close: async () => {
    await root.close()
    setImmediate(() => process.exit(0))
    return true
  },
}

const reply = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`)
createInterface({ input: process.stdin }).on('line', (text) => {
  const request = JSON.parse(text) as Request
  const handler = handlers[request.op]
  if (handler === undefined) return reply({ id: request.id, ok: false, error: `unknown op ${request.op}` })
  handler(request).then(
    (value) => reply({ id: request.id, ok: true, value }),
    (error: unknown) => reply({ id: request.id, ok: false, error: String(error), code: SeamError.is(error) ? error.code : undefined }),
  )
})
reply({ id: 0, ok: true, value: 'ready' })
