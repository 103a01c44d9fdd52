import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type ApprovalPort, createRoot, definePlugin, defineTool, type JournalStore, memoryJournal, type PreDecision, sqliteJournal } from 'seam-runtime'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { beginTurn, deferred } from './kit.js'

const journals: [string, () => Promise<JournalStore>][] = [
  ['memory', async () => memoryJournal()],
  [
    'SQLite',
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'seam-end-'))
      onTestFinished(() => rm(dir, { recursive: true, force: true }))
      return sqliteJournal(path.join(dir, 'journal.db'))
    },
  ],
]

/**
 * A root whose one tool, `risky`, asks for approval on every call; `hold` (a pre-execute hook) may
 * keep a call before its approval stage. `ran` tells whether the body ever ran.
 */
async function riskyRoot(journal: JournalStore, approval: ApprovalPort, hold?: (next: () => Promise<PreDecision>) => Promise<PreDecision>) {
  let ran = false
  const root = await createRoot({
    journal,
    approval,
    plugin: definePlugin({
      name: 'root',
      setup(ctx) {
        if (hold) ctx.hooks.preExecute((_exec, next) => hold(next))
        ctx.addTool(
          'risky',
          defineTool({
            description: 'Asks every time.',
            input: z.object({}),
            approval: 'always',
            execute() {
              ran = true
              return 'ran'
            },
          }),
        )
      },
    }),
  })
  onTestFinished(() => root.close())
  return { root, ran: () => ran }
}

const kinds = async (journal: JournalStore, turnId: string) =>
  (await journal.read(turnId)).map((e) => ('callId' in e && e.callId !== undefined ? `${e.kind}:${e.callId}` : e.kind))

describe.each(journals)('turn.end() with a call in flight (%s journal)', (_name, open) => {
  it('waits for a running body to settle, so the turn ends with turn/end after its tool/result', async () => {
    const gate = deferred()
    const started = deferred()
    const root = await createRoot({
      journal: await open(),
      plugin: definePlugin({
        name: 'root',
        setup(ctx) {
          ctx.addTool(
            'slow',
            defineTool({
              description: 'Waits for the test.',
              input: z.object({}),
              approval: 'never',
              async execute() {
                started.resolve()
                await gate.promise
                return 'done'
              },
            }),
          )
        },
      }),
    })
    onTestFinished(() => {
      gate.resolve()
      return root.close()
    })
    const turn = await beginTurn(root)
    const outcome = turn.tools.execute({ callId: 'c1', name: 'slow', arguments: '{}' })
    await started.promise
    let ended = false
    const ending = turn.end().then(() => {
      ended = true
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(ended).toBe(false)
    await expect(turn.tools.execute({ callId: 'c2', name: 'slow', arguments: '{}' })).rejects.toMatchObject({ code: 'TURN_ENDED' })
    gate.resolve()
    expect(await outcome).toMatchObject({ status: 'completed', value: 'done' })
    await ending
    expect(await kinds(root.journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'tool/result:c1', 'turn/end'])
  })

  it('withdraws an open approval question: the call settles as GENERATION_RETIRED (its body never runs) before turn/end', async () => {
    const asked = deferred<AbortSignal>()
    const approval: ApprovalPort = {
      // Never answers: only the end of the turn can close the question.
      request(request) {
        asked.resolve(request.signal)
        return new Promise(() => {})
      },
    }
    const { root, ran } = await riskyRoot(await open(), approval)
    const turn = await beginTurn(root)
    const outcome = turn.tools.execute({ callId: 'c1', name: 'risky', arguments: '{}' })
    const question = await asked.promise
    await turn.end()
    expect(question.aborted).toBe(true)
    expect(await outcome).toMatchObject({ status: 'failed', code: 'GENERATION_RETIRED' })
    expect(ran()).toBe(false)
    expect(await kinds(root.journal, turn.turnId)).toEqual(['turn/begin', 'tool/call:c1', 'approval/asked:c1', 'approval/decided:c1', 'tool/result:c1', 'turn/end'])
  })

  it('withdraws a question first asked after turn.end() began: the turn ends without waiting for an answer', async () => {
    const held = deferred<void>()
    const release = deferred<void>()
    const asked: AbortSignal[] = []
    const approval: ApprovalPort = {
      request(request) {
        asked.push(request.signal)
        return new Promise(() => {})
      },
    }
    // Holds the call before its approval stage until the turn has begun to end.
    const { root, ran } = await riskyRoot(await open(), approval, async (next) => {
      held.resolve()
      await release.promise
      return next()
    })
    const turn = await beginTurn(root)
    const outcome = turn.tools.execute({ callId: 'c1', name: 'risky', arguments: '{}' })
    await held.promise
    const ended = turn.end()
    release.resolve()
    await ended
    expect(await outcome).toMatchObject({ status: 'failed', code: 'GENERATION_RETIRED' })
    expect(ran()).toBe(false)
    // If the port was asked at all, it was told at once that the question is withdrawn.
    for (const signal of asked) expect(signal.aborted).toBe(true)
    expect((await kinds(root.journal, turn.turnId)).at(-1)).toBe('turn/end')
  })
})
