import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { defineTool, type JournalEvent, postgresJournal, type Root, type ToolCallOutcome } from 'seam-runtime'
import { beginTurn, deferred, rootWith, sleep } from './kit.js'
import { stallingProxy } from './stalling-proxy.js'

const url = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: url, max: 2 })
afterAll(() => admin.end())

const LEASE_MS = 600

/** Each body run, as `<host> <callId> <order>`, across the three roots of a test. */
type Run = { host: string; callId: string; order: string }

/**
 * Three roots on one PostgreSQL schema, each with its own pool through its own stalling proxy: real
 * connections, one link per host. `charge` is idempotent by order, and waits for `gate` to finish.
 */
async function threeHosts() {
  const schema = `seam_fence_${randomUUID().replaceAll('-', '').slice(0, 16)}`
  onTestFinished(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  })
  const runs: Run[] = []
  const gate = deferred()
  const hosts: { id: string; root: Root; link: Awaited<ReturnType<typeof stallingProxy>> }[] = []
  for (const id of ['host-a', 'host-b', 'host-c']) {
    const link = await stallingProxy(url)
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool('charge', defineTool({
          description: 'Charge an order once.',
          input: z.object({ order: z.string() }),
          approval: 'never',
          idempotencyKey: ({ order }) => order,
          idempotencyScope: 'global',
          async execute({ order }, { callId }) {
            runs.push({ host: id, callId, order })
            if (order.startsWith('slow')) await gate.promise
            return { receipt: `${order}@${id}` }
          },
        }))
      },
      // The journal deadline outlasts the partition: a write waits for the link to come back.
      { journal: postgresJournal(link.url, { schema, hostId: id, closeTimeoutMs: 2_000 }), leaseMs: LEASE_MS, defaults: { journalTimeoutMs: 20_000 } },
    )
    hosts.push({ id, root, link })
  }
  const events = async (turnId: string): Promise<(JournalEvent & { id: number })[]> =>
    (await admin.query(`SELECT id, payload FROM ${schema}.seam_journal_events WHERE turn_id = $1 ORDER BY seq`, [turnId])).rows.map(
      (row: { id: string; payload: JournalEvent }) => ({ ...row.payload, id: Number(row.id) }),
    )
  return { schema, runs, gate, hosts, events }
}

const resultOf = (events: readonly JournalEvent[], callId: string) =>
  events.find((event) => event.kind === 'tool/result' && event.callId === callId) as Extract<JournalEvent, { kind: 'tool/result' }> | undefined

describe('a host partitioned from its PostgreSQL journal past its lease (fencing)', { timeout: 60_000 }, () => {
  it('is fenced: the caller and the journal agree on OUTCOME_UNKNOWN, no write of it lands after the fence, it starts no body, and its key runs nowhere else', async () => {
    const { schema, runs, gate, hosts, events } = await threeHosts()
    const [a, b, c] = hosts as [(typeof hosts)[0], (typeof hosts)[0], (typeof hosts)[0]]
    const turn = await beginTurn(a.root)
    const running = turn.tools.execute({ callId: 'c1', name: 'charge', arguments: '{"order":"slow-1"}' })
    while (runs.length === 0) await sleep(5)
    a.link.stall()
    // A live host finds host-a past its lease, fences it and closes its call.
    let repaired: (JournalEvent & { id: number })[] = []
    for (const started = Date.now(); resultOf(repaired, 'c1') === undefined && Date.now() - started < 15_000; ) {
      await sleep(50)
      repaired = await events(turn.turnId)
    }
    expect(resultOf(repaired, 'c1')).toMatchObject({ code: 'OUTCOME_UNKNOWN' })
    expect(['host-b', 'host-c']).toContain(resultOf(repaired, 'c1')!.host)
    const fencedAt = Math.max(...repaired.map((event) => event.id))
    // Meanwhile the live hosts go on: another order is charged once, on host-b.
    const bTurn = await beginTurn(b.root)
    expect(await bTurn.tools.execute({ callId: 'b1', name: 'charge', arguments: '{"order":"o-2"}' })).toMatchObject({ status: 'completed' })
    // The repaired key is not run again while host-a's body may still be running it.
    expect(await bTurn.tools.execute({ callId: 'b2', name: 'charge', arguments: '{"order":"slow-1"}' })).toMatchObject({
      status: 'failed',
      code: 'PRIOR_OUTCOME_UNKNOWN',
      details: { priorCallId: 'c1', priorTurnId: turn.turnId },
    })
    // host-a's body finishes while it is cut off; then its link comes back.
    gate.resolve()
    await sleep(50)
    a.link.resume()
    const outcome: ToolCallOutcome = await running
    expect(outcome).toMatchObject({ status: 'failed', code: 'OUTCOME_UNKNOWN' })
    // Its heartbeat fails: it learns it lost its lease.
    await expect(a.root.journal.coordination.heartbeat('host-a', LEASE_MS)).rejects.toMatchObject({ code: 'HOST_FENCED' })
    // It starts no body: its next call is not recorded, so not run; a new turn is refused.
    const next = await turn.tools.execute({ callId: 'c2', name: 'charge', arguments: '{"order":"o-3"}' })
    expect(next).toMatchObject({ status: 'failed', code: 'JOURNAL_UNAVAILABLE' })
    await expect(beginTurn(a.root)).rejects.toMatchObject({ code: 'HOST_FENCED' })
    await expect(turn.end()).resolves.toBeUndefined()
    // The journal: host-a's turn as the fence left it, and one outcome per call, the caller's.
    const final = await events(turn.turnId)
    expect(final.map((event) => [event.kind, event.host === 'host-a'])).toEqual([
      ['turn/begin', true],
      ['tool/call', true],
      ['tool/result', false],
      ['turn/end', false],
    ])
    expect(resultOf(final, 'c1')!.code).toBe(outcome.code)
    const late = await admin.query(`SELECT kind FROM ${schema}.seam_journal_events WHERE host = 'host-a' AND id > $1`, [fencedAt])
    expect(late.rows).toEqual([])
    // host-a's late result never reached its key: it stays as repair left it, held by the unknown call.
    const keys = await admin.query(`SELECT key, call_id AS "callId", host, result IS NOT NULL AS done FROM ${schema}.seam_journal_keys ORDER BY key`)
    expect(keys.rows).toEqual([
      { key: '["global","charge","o-2"]', callId: 'b1', host: 'host-b', done: true },
      { key: '["global","charge","slow-1"]', callId: 'c1', host: 'host-a', done: false },
    ])
    // So a later call with the key, on any host, is told the earlier attempt may have run, not replayed host-a's receipt.
    const cTurn = await beginTurn(c.root)
    expect(await cTurn.tools.execute({ callId: 'c9', name: 'charge', arguments: '{"order":"slow-1"}' })).toMatchObject({ code: 'PRIOR_OUTCOME_UNKNOWN' })
    await bTurn.end()
    await cTurn.end()
    const fenced = async () => (await admin.query(`SELECT fenced_at IS NOT NULL AS fenced FROM ${schema}.seam_journal_hosts WHERE host = 'host-a'`)).rows
    expect(await fenced()).toEqual([{ fenced: true }])
    // Closing cannot retire the fenced lease either: its row stays, fenced.
    await a.root.close()
    expect(await fenced()).toEqual([{ fenced: true }])
    // No body of host-a's after the fence, and order o-2 ran once.
    expect(runs.map((run) => `${run.host} ${run.callId}`)).toEqual(['host-a c1', 'host-b b1'])
  })
})
