import { randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import pg from 'pg'
import { describe, expect, it, onTestFinished } from 'vitest'
import { postgresJournal } from 'seam-runtime'
import { pluginFolder, seam, tool } from './cli-kit.js'

const PG_URL = process.env.SEAM_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

describe('seam journal', { timeout: 60_000 }, () => {
  it('reads the journal --journal names, says why a call did not complete, and prints arguments as JSON in --json', async () => {
    const dir = await pluginFolder({ 'tools/launch.ts': tool('Launch something.', 'always', "return 'launched ' + text") })
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    const call = await seam('call', 'launch', '{"text":"rocket"}', '--dir', dir, '--json')
    const { turnId } = JSON.parse(call.stdout) as { turnId: string }
    const file = path.join(dir, '.seam', 'journal.db')
    const [plain, json] = await Promise.all([seam('journal', '--journal', file, '--turn', turnId), seam('journal', '--journal', file, '--turn', turnId, '--json')])
    expect(plain.stdout).toMatch(/tool\/result\s+\S+\s+denied APPROVAL_UNAVAILABLE \(approval\) \d+(\.\d)? ms The call to "launch" needs approval/)
    const called = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; arguments?: unknown })
      .find((e) => e.kind === 'tool/call')
    expect(called?.arguments).toEqual({ text: 'rocket' })
  })

  it('reads a PostgreSQL journal from a postgres:// URL, its schema from the schema parameter', async () => {
    const schema = `seam_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`
    const admin = new pg.Client({ connectionString: PG_URL })
    await admin.connect()
    onTestFinished(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
    })
    const store = postgresJournal(PG_URL, { schema })
    await store.append({ kind: 'turn/begin', turnId: 'turn-pg', seq: 1, at: Date.now(), session: 's', subjectId: 'u', generation: 1, owner: 'root' })
    await store.close()
    const url = new URL(PG_URL)
    url.searchParams.set('schema', schema)
    const run = await seam('journal', '--journal', url.href, '--json')
    expect(run.stderr).toBe('')
    expect(run.stdout.trim().split('\n').map((l) => JSON.parse(l).turnId)).toEqual(['turn-pg'])
  })

  it('never prints the password of a postgres:// URL: a closed port, a refused role, a bad URL, a missing turn, with or without --debug', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as { port: number }).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const secret = 'S3cret-pw'
    const server = new URL(PG_URL)
    const urls = [
      `postgres://seam:${secret}@127.0.0.1:${port}/test`,
      // This server trusts loopback, so a wrong password is not what it refuses: an unknown role is.
      `postgres://seam_no_such_role:${secret}@${server.host}/test`,
      `postgres://seam_no_such_role@${server.host}/test?password=${secret}`,
      `postgres://seam:${secret}@[not-a-host/test`,
    ]
    const runs = await Promise.all(urls.flatMap((url) => [seam('journal', '--journal', url), seam('journal', '--journal', url, '--debug')]))
    for (const run of runs) {
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(/^seam: /)
      expect(`${run.stdout}${run.stderr}`).not.toContain(secret)
    }
    expect(runs[0]!.stderr).toContain('ECONNREFUSED')
    expect(runs[2]!.stderr).toContain('role "seam_no_such_role" does not exist')
    // A journal that opens names itself with the password hidden.
    const user = server.username === '' ? 'postgres' : server.username
    // Its own schema, not the shared database's public one (which another test run may hold at another version).
    const schema = `seam_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`
    onTestFinished(async () => {
      const admin = new pg.Client({ connectionString: PG_URL })
      await admin.connect()
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => admin.end())
    })
    const missing = await seam('journal', '--journal', `postgres://${user}:${secret}@${server.host}${server.pathname}?schema=${schema}`, '--turn', 'no-such-turn')
    expect(missing.stderr).toContain(`no turn "no-such-turn" in postgres://${user}:***@${server.host}${server.pathname}`)
    expect(missing.stderr).not.toContain(secret)
  })

  it('refuses a --journal file that does not exist instead of creating it', async () => {
    const run = await seam('journal', '--journal', '/nonexistent/journal.db')
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('seam: no journal at /nonexistent/journal.db')
  })
})
