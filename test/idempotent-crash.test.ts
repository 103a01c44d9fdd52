import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, onTestFinished } from 'vitest'
import { createRoot, type IdempotencyScope, sqliteJournal, type UnknownOutcomePolicy } from 'seam-runtime'
import { keyedPlugin } from './fixtures/keyed-tools.js'

const child = fileURLToPath(new URL('./fixtures/keyed-crash-child.ts', import.meta.url))

/**
 * Runs the child until both keyed bodies have written their side effect and hang, then kills it
 * with SIGKILL: the calls are left between body and result. Returns the child's turn id.
 */
function crashMidBody(journal: string, effects: string, scope: IdempotencyScope, onUnknown?: UnknownOutcomePolicy): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, journal, effects, scope, onUnknown ?? '-'], { stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise<NodeJS.Signals | null>((settle) => proc.on('exit', (_code, signal) => settle(signal)))
    onTestFinished(() => {
      proc.kill('SIGKILL')
    })
    let started: string | undefined
    proc.stdout.on('data', (chunk: Buffer) => {
      started ??= /started (\S+)/.exec(chunk.toString())?.[1]
      if (started !== undefined) proc.kill('SIGKILL')
    })
    void exited.then((signal) => {
      if (started !== undefined && signal === 'SIGKILL') resolve(started)
      else reject(new Error(`child exited before its calls started, or without crashing (${signal})`))
    })
  })
}

/** A SQLite journal left by a child killed between its keyed bodies and their results, and a root repairing it. */
async function afterCrash(scope: IdempotencyScope, onUnknown?: UnknownOutcomePolicy) {
  const dir = await mkdtemp(path.join(tmpdir(), 'seam-key-crash-'))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  const journal = path.join(dir, 'journal.db')
  const effectsFile = path.join(dir, 'effects.log')
  await writeFile(effectsFile, '')
  const crashedTurn = await crashMidBody(journal, effectsFile, scope, onUnknown)
  const root = await createRoot({
    plugin: keyedPlugin({ effects: effectsFile, scope, ...(onUnknown === undefined ? {} : { onUnknown }) }),
    journal: sqliteJournal(journal),
  })
  onTestFinished(() => root.close())
  expect(root.repaired).toEqual({ results: 2, turns: 1 })
  // The same session and principal as the crashed turn: in every scope, the same keys.
  const turn = await root.beginTurn({ session: 's', principal: { subjectId: 'u', roles: [] } })
  const call = (callId: string, name: string) => turn.tools.execute({ callId, name, arguments: '{"order":"o-1"}' })
  const effects = async () => (await readFile(effectsFile, 'utf8')).split('\n').filter(Boolean).map((line) => line.split(' '))
  return { crashedTurn, root, turn, call, effects }
}

describe('idempotent tools after a crash between body and result', () => {
  it.each(['session', 'global'] as const)(
    'settles the next call with a key whose earlier call ended OUTCOME_UNKNOWN as PRIOR_OUTCOME_UNKNOWN, without running it (%s scope)',
    async (scope) => {
      const { crashedTurn, call, effects } = await afterCrash(scope)
      for (const [callId, name, priorCallId] of [['n1', 'charge', 'c1'], ['n2', 'refund', 'c2'], ['n3', 'charge', 'c1']] as const) {
        const outcome = await call(callId, name)
        expect(outcome).toMatchObject({ status: 'failed', code: 'PRIOR_OUTCOME_UNKNOWN', details: { priorCallId, priorTurnId: crashedTurn } })
        expect(outcome.content[0]).toMatchObject({ text: expect.stringContaining(`call "${priorCallId}"`) })
      }
      // Only the killed child's two bodies ever ran.
      expect((await effects()).map(([tool, callId]) => `${tool} ${callId}`).sort()).toEqual(['charge c1', 'refund c2'])
    },
  )

  it.each(['session', 'global'] as const)(
    "runs the body again with the same ctx.idempotencyKey when the tool says onUnknown: 'rerun', then replays that result (%s scope)",
    async (scope) => {
      const { call, effects } = await afterCrash(scope, 'rerun')
      expect(await call('n1', 'charge')).toMatchObject({ status: 'completed', value: { charged: 'o-1' } })
      expect(await call('n2', 'refund')).toMatchObject({ status: 'completed', value: { refunded: 'o-1' } })
      expect(await call('n3', 'charge')).toMatchObject({ status: 'completed', value: { charged: 'o-1' }, replayed: true })
      const runs = await effects()
      expect(runs.map(([tool, callId]) => `${tool} ${callId}`).sort()).toEqual(['charge c1', 'charge n1', 'refund c2', 'refund n2'])
      // The key an external system gets is the same in the killed run and the rerun (so it can
      // tell them apart from a new request), and differs between the two tools.
      const keyOf = (callId: string) => runs.find((run) => run[1] === callId)![2]!
      expect(keyOf('c1')).toMatch(/^[\w-]{43}$/)
      expect(keyOf('n1')).toBe(keyOf('c1'))
      expect(keyOf('n2')).toBe(keyOf('c2'))
      expect(keyOf('c2')).not.toBe(keyOf('c1'))
    },
  )
})
