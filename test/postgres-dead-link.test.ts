import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { postgresJournal } from 'seam-runtime'
import { beginTurn, rootWith } from './kit.js'
import { stallingProxy } from './stalling-proxy.js'
import { z } from 'zod'
import { defineTool } from 'seam-runtime'

const url = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: url, max: 1 })
afterAll(() => admin.end())

describe('a root on a PostgreSQL journal whose network link dies', () => {
  it('settles the call as JOURNAL_UNAVAILABLE and still finishes closing, each wait bounded', async () => {
    const schema = `seam_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`
    onTestFinished(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    })
    const proxy = await stallingProxy(url)
    const { root } = await rootWith(
      (ctx) => {
        ctx.addTool('t', defineTool({ description: 'Answer.', input: z.object({}), approval: 'never', execute: () => 'ok' }))
      },
      { journal: postgresJournal(proxy.url, { schema, closeTimeoutMs: 300 }), defaults: { journalTimeoutMs: 300 } },
    )
    const turn = await beginTurn(root)
    expect(await turn.tools.execute({ callId: 'c1', name: 't', arguments: '{}' })).toMatchObject({ status: 'completed' })
    proxy.stall()
    expect(await turn.tools.execute({ callId: 'c2', name: 't', arguments: '{}' })).toMatchObject({ code: 'JOURNAL_UNAVAILABLE' })
    const started = performance.now()
    const closed = await Promise.race([root.close().then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 15_000, 'still closing after 15 s'))])
    expect(closed).toBe('closed')
    // turn/end (300 ms) + retiring the heartbeat (300 ms) + the journal's close (300 ms, twice at most), with room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})
