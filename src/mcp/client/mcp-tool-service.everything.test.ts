import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { SeamError } from '../../errors.js'
import { contextWith, everythingTransport, waitFor } from '../fixtures/test-helpers.js'
import { McpToolService } from './mcp-tool-service.js'

describe('McpToolService against the reference "everything" server over stdio', () => {
  let service: McpToolService

  beforeAll(async () => {
    service = new McpToolService({ id: 'everything', transport: everythingTransport(), concurrencySafe: ['echo'] })
    await service.connect()
  })
  afterAll(() => service.dispose())

  it('lists the server tools as function schemas tagged with their source', async () => {
    const schemas = await service.schema('global')
    const names = schemas.map((schema) => schema.function.name)
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']))
    const echo = schemas.find((schema) => schema.function.name === 'echo')!
    expect(echo).toMatchObject({
      type: 'function',
      source: 'mcp:everything',
      annotations: { readOnlyHint: true, destructiveHint: false },
      concurrencySafe: true,
      function: { parameters: { type: 'object', required: ['message'] } },
    })
    expect(echo.function.description).not.toBe('')
  })

  it('marks only the tools the host declared as concurrency-safe, whatever the server hints', async () => {
    const sum = (await service.schema('global')).find((schema) => schema.function.name === 'get-sum')!
    expect(sum.annotations?.readOnlyHint).toBe(true)
    expect(sum.concurrencySafe).toBeUndefined()
  })

  it('calls echo and returns its content blocks as content, with no value', async () => {
    const result = await service.execute('global', 'echo', { message: 'hi' }, contextWith(new AbortController().signal))
    expect(result).toEqual({ success: true, content: [{ type: 'text', text: 'Echo: hi' }] })
  })

  it('returns structuredContent as the output and the content blocks next to it', async () => {
    const result = await service.execute('global', 'get-structured-content', { location: 'Chicago' })
    expect(result.success).toBe(true)
    expect(result.success && result.output).toMatchObject({ temperature: expect.any(Number) })
    expect(result.success && result.content?.[0]).toMatchObject({ type: 'text' })
  })

  it('fails with the server message when the arguments are invalid', async () => {
    const result = await service.execute('global', 'echo', { message: 42 })
    expect(result.success).toBe(false)
    expect(!result.success && result.error).toMatch(/Invalid arguments for tool echo/)
  })

  it('fails with the server message for an unknown tool', async () => {
    const result = await service.execute('global', 'no-such-tool', {})
    expect(result).toMatchObject({ success: false, error: expect.stringMatching(/Tool no-such-tool not found/) })
  })

  it('settles promptly with the caller reason when a long-running call is aborted', async () => {
    const controller = new AbortController()
    const reason = new Error('the turn was cancelled')
    const started = Date.now()
    setTimeout(() => controller.abort(reason), 200)
    const call = service.execute(
      'global',
      'trigger-long-running-operation',
      { duration: 10, steps: 5 },
      contextWith(controller.signal),
    )
    await expect(call).rejects.toBe(reason)
    // Far from the 10 s the operation would have taken.
    expect(Date.now() - started).toBeLessThan(3_000)
    // The session is still usable after the cancellation.
    const after = await service.execute('global', 'echo', { message: 'still here' })
    expect(after.success).toBe(true)
  })

  it('goes down when the child is killed, then reconnects and announces the tools again', { timeout: 40_000 }, async () => {
    const crashy = new McpToolService({
      id: 'everything-crashy',
      transport: everythingTransport(),
      // A second before the first retry: long enough that the checks below meet the server down
      // however loaded the machine (with 50 ms, a slow poll could miss the whole window).
      reconnect: { initialDelayMs: 1_000, maxDelayMs: 1_000 },
    })
    onTestFinished(() => crashy.dispose())
    await crashy.connect()
    // The status each change notification saw: a drop, then the recovery, must both be announced.
    const seen: string[] = []
    crashy.onDidChange(() => seen.push(crashy.status))
    const pid = crashy.pid!
    expect(pid).toBeGreaterThan(0)

    process.kill(pid, 'SIGKILL')
    await waitFor('the drop to be announced', () => seen.includes('down'))
    const error = await crashy.schema('global').catch((caught: unknown) => caught)
    expect(SeamError.is(error, 'PROVIDER_UNAVAILABLE')).toBe(true)
    expect(crashy.isAvailable('global', 'echo')).toBe(false)
    await expect(crashy.execute('global', 'echo', { message: 'x' })).rejects.toMatchObject({
      code: 'PROVIDER_UNAVAILABLE',
      message: expect.stringMatching(/"everything-crashy" is not connected/),
    })

    await waitFor('the recovery to be announced', () => seen.lastIndexOf('connected') > seen.indexOf('down'), 20_000)
    expect(seen).toContain('down')
    expect(crashy.pid).not.toBe(pid)
    expect((await crashy.schema('global')).some((schema) => schema.function.name === 'echo')).toBe(true)
  })
})
