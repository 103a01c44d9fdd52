import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { defineTool, postgresJournal } from 'seam-runtime'
import { beginTurn, rootWith } from './kit.js'

const url = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: url, max: 4 })
afterAll(() => admin.end())

describe('a root on a PostgreSQL journal with group commit', () => {
  it('runs no body before its tool/call is committed, though the calls of 16 turns commit together', async () => {
    const schema = `seam_group_${randomUUID().replaceAll('-', '').slice(0, 16)}`
    onTestFinished(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    })
    const seen: boolean[] = []
    const journal = postgresJournal(url, { schema, hostId: 'host-a' })
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool('lookup', defineTool({
          description: 'Look a ticket up.',
          input: z.object({ id: z.number() }),
          approval: 'never',
          async execute({ id }, { callId }) {
            // Another connection sees the call's tool/call: it was committed before the body ran.
            const { rows } = await admin.query(`SELECT 1 FROM ${schema}.seam_journal_events WHERE kind = 'tool/call' AND call_id = $1`, [callId])
            seen.push(rows.length === 1)
            return { id }
          },
        }))
      },
      { journal, leaseMs: 60_000 },
    )
    const batches: number[] = []
    journal.onCommit!((events) => batches.push(events))
    const turns = await Promise.all(Array.from({ length: 16 }, () => beginTurn(root)))
    const outcomes = await Promise.all(
      turns.map((turn, index) => turn.tools.execute({ callId: `c${index}`, name: 'lookup', arguments: JSON.stringify({ id: index }) })),
    )
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(16).fill('completed'))
    expect(seen).toEqual(Array(16).fill(true))
    await Promise.all(turns.map((turn) => turn.end()))
    // 16 turns × (begin, call, result, end) in far fewer commits.
    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(64)
    expect(Math.max(...batches)).toBeGreaterThan(1)
    expect(batches.length).toBeLessThan(64)
    for (const turn of turns) {
      expect((await journal.read(turn.turnId)).map((event) => event.kind)).toEqual(['turn/begin', 'tool/call', 'tool/result', 'turn/end'])
    }
  })
})
