import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createRoot, createToken, definePlugin, defineTool, memoryJournal } from 'seam-runtime'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'

const principal = { subjectId: 'u1', roles: [] }

describe('Root.close with calls still running', () => {
  it('lets a call running after turn.end() settle on live resources and journals its result before closing the journal', async () => {
    const journal = memoryJournal()
    const db = createToken<{ open: boolean }>('db')
    const seen: boolean[] = []
    const root = await createRoot({
      journal,
      // A grace period far shorter than the body: close must wait for the call, not for graceMs.
      defaults: { graceMs: 5 },
      plugin: definePlugin({
        name: 'root',
        setup(ctx) {
          const handle = { open: true }
          ctx.resources.provide(db, handle, () => {
            handle.open = false
          })
          ctx.addTool(
            'report',
            defineTool({
              description: 'Queries for a while.',
              input: z.object({}),
              approval: 'never',
              async execute(_args, tool) {
                const resource = tool.use(db)
                await new Promise((resolve) => setTimeout(resolve, 60))
                seen.push(resource.open)
                return 'rows'
              },
            }),
          )
        },
      }),
    })
    onTestFinished(() => root.close())
    const turn = await root.beginTurn({ session: 's', principal, turnId: 't1' })
    const running = turn.tools.execute({ callId: 'c1', name: 'report', arguments: '{}' })
    await new Promise((resolve) => setTimeout(resolve, 5))
    await turn.end()
    await root.close()
    expect(await running).toMatchObject({ status: 'completed', value: 'rows' })
    expect(seen).toEqual([true])
    const events = await journal.read('t1')
    expect(events.filter((e) => e.kind === 'tool/result')).toEqual([expect.objectContaining({ callId: 'c1', status: 'completed' })])
  })

  it('withdraws a question still waiting for a person: close does not wait out approvalTimeoutMs, and the call settles without running', async () => {
    const journal = memoryJournal()
    let withdrawn: unknown
    let questionAsked!: () => void
    const asked = new Promise<void>((resolve) => {
      questionAsked = resolve
    })
    const root = await createRoot({
      journal,
      // A person who never answers: the question stays open until its signal says it is withdrawn.
      approval: {
        request: ({ signal }) =>
          new Promise((resolve) => {
            questionAsked()
            signal.addEventListener('abort', () => {
              withdrawn = signal.reason
              resolve('allowed-once')
            })
          }),
      },
      plugin: definePlugin({
        name: 'root',
        setup(ctx) {
          ctx.addTool('wipe', defineTool({ description: 'Wipes.', input: z.object({}), approval: 'always', execute: () => 'wiped' }))
        },
      }),
    })
    const turn = await root.beginTurn({ session: 's', principal, turnId: 't1' })
    const asking = turn.tools.execute({ callId: 'c1', name: 'wipe', arguments: '{}' })
    await asked
    const started = performance.now()
    await root.close()
    // The default approvalTimeoutMs is five minutes.
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(withdrawn).toBeDefined()
    expect(await asking).toMatchObject({ code: 'GENERATION_RETIRED' })
    const kinds = (await journal.read('t1')).map((e) => e.kind)
    expect(kinds).toEqual(['turn/begin', 'tool/call', 'approval/asked', 'approval/decided', 'tool/result', 'turn/end'])
  })

  it('finishes closing while an abandoned body never settles, and the process does not exit mid-close', () => {
    // In a process of its own: Node exits with code 13 when nothing but an unref'd timer is left.
    const script = fileURLToPath(new URL('./fixtures/close-abandoned.ts', import.meta.url))
    const run = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 20_000 })
    expect(run.stderr).toBe('')
    expect(run.stdout.trim().split('\n')).toEqual(['failed TOOL_TIMEOUT abandoned', 'closed'])
    expect(run.status).toBe(0)
  })
})
