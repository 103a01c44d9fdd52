import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { type CodeHost, type CodeRunResult, createCodeSandbox, type SubCallSettlement } from './index.js'

const sandbox = createCodeSandbox({ poolSize: 2 })
afterAll(() => sandbox.close())

interface Seen {
  index: number
  name: string
  args: unknown
}

/** A host whose tools echo their call, after `delays[name]` ms; every call is recorded in issue order. */
function echoHost(delays: Record<string, number> = {}): CodeHost & { seen: Seen[] } {
  const seen: Seen[] = []
  return {
    seen,
    async callTool(index, name, args): Promise<SubCallSettlement> {
      seen.push({ index, name, args })
      const delay = delays[name]
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay))
      return { ok: true, value: { index, name, args } }
    },
  }
}

async function run(source: string, options: Partial<Parameters<typeof sandbox.run>[0]> = {}, host: CodeHost = echoHost()): Promise<CodeRunResult> {
  return sandbox.run({ source, toolNames: ['echo', 'slow', 'deny'], ...options }, host)
}

/** The pool still serves a plain run after whatever the test did to it. */
async function expectHealthy(): Promise<void> {
  const result = await run('return 40 + 2')
  expect(result).toMatchObject({ outcome: 'completed', value: 42 })
}

function failedWith(result: CodeRunResult, code: string): void {
  expect(result.outcome, JSON.stringify(result).slice(0, 500)).toBe('failed')
  if (result.outcome === 'failed') expect(result.code).toBe(code)
}

describe('createCodeSandbox: sub-calls', () => {
  it('runs three sequential and two parallel calls, answering in program order and calling the host in issue order', async () => {
    const host = echoHost({ slow: 60 })
    const result = await run(
      `const a = await tools.echo({ n: 1 })
       const b = await tools.call('echo', { n: 2 })
       const c = await tools.echo({ n: 3 })
       const [d, e] = await Promise.all([tools.slow({ n: 4 }), tools.echo({ n: 5 })])
       return [a, b, c, d, e].map((r) => r.args.n + ':' + r.index)`,
      {},
      host,
    )
    expect(result).toMatchObject({ outcome: 'completed', value: ['1:0', '2:1', '3:2', '4:3', '5:4'], subCalls: 5 })
    expect(host.seen.map((s) => [s.index, s.name])).toEqual([
      [0, 'echo'],
      [1, 'echo'],
      [2, 'echo'],
      [3, 'slow'],
      [4, 'echo'],
    ])
  })

  it('survives 1,000 sequential awaits of sub-calls', async () => {
    const result = await run('let sum = 0\nfor (let i = 0; i < 1000; i++) sum += (await tools.echo({ i })).args.i\nreturn sum')
    expect(result).toMatchObject({ outcome: 'completed', value: 499_500, subCalls: 1000 })
  })

  it('rejects a failed sub-call with an Error carrying code and message, which the program catches', async () => {
    const host: CodeHost = { callTool: async () => ({ ok: false, code: 'DENIED', message: 'a person said no' }) }
    const result = await run(
      `try { await tools.deny({}) } catch (error) { return { isError: error instanceof Error, code: error.code, message: error.message } }`,
      {},
      host,
    )
    expect(result).toMatchObject({ outcome: 'completed', value: { isError: true, code: 'DENIED', message: 'a person said no' } })
  })

  it('settles a host that throws as TOOL_ERROR and a value that is not JSON as INVALID_OUTPUT, inside the program', async () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const host: CodeHost = {
      async callTool(_index, name) {
        if (name === 'echo') throw new Error('boom')
        return { ok: true, value: cyclic }
      },
    }
    const result = await run(`const codes = []
      for (const name of ['echo', 'slow']) { try { await tools.call(name, {}) } catch (e) { codes.push(e.code) } }
      return codes`, {}, host)
    expect(result).toMatchObject({ outcome: 'completed', value: ['TOOL_ERROR', 'INVALID_OUTPUT'] })
  })

  it('awaits an unawaited sub-call before settling, without running program code after the return', async () => {
    let answered = false
    const host: CodeHost = {
      async callTool() {
        await new Promise((resolve) => setTimeout(resolve, 80))
        answered = true
        return { ok: true, value: 'late' }
      },
    }
    const result = await run(`tools.slow({}).then((v) => console.log('after return', v))\nreturn 'returned'`, {}, host)
    expect(answered).toBe(true)
    expect(result).toMatchObject({ outcome: 'completed', value: 'returned', subCalls: 1, logs: [] })
  })

  it('ends the whole run with the code of a sub-call the host settles with endRun, which the program cannot catch', async () => {
    const signals: AbortSignal[] = []
    const host: CodeHost = {
      async callTool(index, _name, _args, { signal }) {
        signals.push(signal)
        if (index === 0) return new Promise(() => {})
        return { ok: false, code: 'CODE_DIVERGED', message: 'the program asked for another call than its log holds', endRun: true }
      },
    }
    const result = await run(
      `tools.slow({})
       try { await tools.echo({}) } catch (e) { return 'caught ' + e.code }
       return 'went on'`,
      {},
      host,
    )
    expect(result).toMatchObject({ outcome: 'failed', code: 'CODE_DIVERGED', subCalls: 2 })
    expect(signals[0]?.aborted).toBe(true)
    await expectHealthy()
  })

  it('settles CODE_SUBCALL_LIMIT when a program issues 10,000 sub-calls, having passed the host only the allowed ones', async () => {
    const host = echoHost()
    const result = await run('await Promise.all(Array.from({ length: 10000 }, (_, i) => tools.echo({ i })))\nreturn "all"', { limits: { subCalls: 500 } }, host)
    failedWith(result, 'CODE_SUBCALL_LIMIT')
    expect(result.subCalls).toBe(500)
    expect(host.seen).toHaveLength(500)
    await expectHealthy()
  })

  it('runs many programs at once, each in its own context', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => run(`globalThis.mine = ${i}\nconst r = await tools.slow({ i: ${i} })\nreturn [globalThis.mine, r.args.i]`, {}, echoHost({ slow: 10 }))),
    )
    expect(results.map((r) => (r.outcome === 'completed' ? r.value : r.code))).toEqual(Array.from({ length: 20 }, (_, i) => [i, i]))
  })
})

describe('createCodeSandbox: the language', () => {
  it('strips TypeScript types and returns what the program returns', async () => {
    const result = await run(`interface Point { x: number; y: number }
      function add<T extends Point>(a: T, b: T): Point { return { x: a.x + b.x, y: a.y + b.y } }
      const p = add({ x: 1, y: 2 } as Point, { x: 3, y: 4 })
      return p satisfies Point`)
    expect(result).toMatchObject({ outcome: 'completed', value: { x: 4, y: 6 } })
  })

  it('has no value without return, and settles CODE_SYNTAX on a program that does not parse', async () => {
    expect(await run('1 + 1')).toMatchObject({ outcome: 'completed', value: undefined })
    failedWith(await run('return (1 +'), 'CODE_SYNTAX')
    failedWith(await run('import fs from "node:fs"'), 'CODE_SYNTAX')
  })

  it('settles CODE_THREW on an uncaught throw, after its outstanding sub-calls', async () => {
    const result = await run('console.warn("about to throw")\nthrow new TypeError("nope")')
    failedWith(result, 'CODE_THREW')
    expect(result).toMatchObject({ logs: [{ level: 'warn', text: 'about to throw' }] })
    if (result.outcome === 'failed') expect(result.message).toMatch(/^TypeError: nope/)
  })

  it('captures console output by level and settles CODE_OUTPUT_LIMIT past logBytes', async () => {
    const ok = await run('console.log("a", 1, { b: [2] })\nconsole.error(new Error("e"))\nconsole.info("i")')
    expect(ok).toMatchObject({
      logs: [
        { level: 'log', text: 'a 1 {"b":[2]}' },
        { level: 'error', text: 'Error: e' },
        { level: 'info', text: 'i' },
      ],
    })
    failedWith(await run('for (let i = 0; i < 10000; i++) console.log("line " + i)', { limits: { logBytes: 1000 } }), 'CODE_OUTPUT_LIMIT')
  })

  it('runs a bounded setTimeout and drops timers still pending at the return', async () => {
    const result = await run(`await new Promise((resolve) => setTimeout(resolve, 20))
      const id = setTimeout(() => console.log('cleared'), 0); clearTimeout(id)
      setTimeout(() => console.log('never'), 10000)
      return 'waited'`)
    expect(result).toMatchObject({ outcome: 'completed', value: 'waited', logs: [] })
  })

  it('records Date.now, new Date and Math.random, and replays them first, in order', async () => {
    const source = 'return [Date.now(), Math.random(), new Date().getTime(), Math.random()]'
    const first = await run(source)
    expect(first.outcome).toBe('completed')
    expect(first.recorded.now).toHaveLength(2)
    expect(first.recorded.random).toHaveLength(2)
    const again = await run(source, { replay: first.recorded })
    expect(again).toMatchObject({ outcome: 'completed', value: first.outcome === 'completed' ? first.value : null, recorded: first.recorded })
    const partly = await run(source, { replay: { now: [1_000], random: [0.5] } })
    if (partly.outcome !== 'completed') throw new Error(JSON.stringify(partly))
    const [now1, random1, now2] = partly.value as number[]
    expect([now1, random1]).toEqual([1_000, 0.5])
    expect(now2).toBeGreaterThan(1_000_000)
    expect(partly.recorded.now).toEqual([1_000, now2])
  })
})

describe('createCodeSandbox: escape attempts settle with a code and leave the host healthy', () => {
  it('finds no process, require, fetch, import() or host global, not even through the Function constructor', async () => {
    const result = await run(`
      const viaFunction = Function('return this')()
      const viaConstructor = (() => {}).constructor.constructor('return typeof process + typeof require')()
      let imported
      try { await import('node:fs'); imported = 'loaded' } catch (e) { imported = 'refused' }
      return {
        types: [typeof process, typeof require, typeof fetch, typeof module, typeof Buffer, typeof globalThis.process, typeof viaFunction.process],
        viaConstructor, imported,
        globals: Object.getOwnPropertyNames(globalThis).filter((n) => /^[a-z_]/.test(n)),
      }`)
    expect(result).toMatchObject({
      outcome: 'completed',
      value: { types: Array(7).fill('undefined'), viaConstructor: 'undefinedundefined', imported: 'refused' },
    })
    if (result.outcome === 'completed') {
      const globals = (result.value as { globals: string[] }).globals
      expect(globals.filter((n) => !['globalThis', 'undefined', 'parseInt', 'parseFloat', 'isNaN', 'isFinite', 'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape', 'eval', 'console', 'setTimeout', 'clearTimeout', 'tools'].includes(n))).toEqual([])
    }
  })

  it('copies values both ways, so prototype pollution stays in the sandbox', async () => {
    const shared = { a: 1, nested: { b: 2 } }
    let received: unknown
    const host: CodeHost = {
      async callTool(_index, _name, args) {
        received = args
        return { ok: true, value: shared }
      },
    }
    const result = await run(
      `const r = await tools.echo(JSON.parse('{"__proto__": {"admin": true}, "x": 1}'))
       r.a = 99; r.nested.b = 99; r.__proto__.polluted = true; Object.prototype.alsoPolluted = true
       return JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}')`,
      {},
      host,
    )
    expect(result.outcome).toBe('completed')
    expect(shared).toEqual({ a: 1, nested: { b: 2 } })
    expect(({} as Record<string, unknown>).admin).toBeUndefined()
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(({} as Record<string, unknown>).alsoPolluted).toBeUndefined()
    expect(Object.getPrototypeOf(received)).toBe(Object.prototype)
    if (result.outcome === 'completed') {
      expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype)
      expect((result.value as Record<string, unknown>).polluted).toBeUndefined()
    }
  })

  it('runs getter, toJSON and toString traps of a returned value inside the sandbox', async () => {
    const getter = await run(`return { get x() { return 'from getter' }, toString() { throw new Error('never called by the host') } }`)
    expect(getter).toMatchObject({ outcome: 'completed', value: { x: 'from getter' } })
    failedWith(await run(`return { get x() { throw new Error('trap') } }`), 'CODE_THREW')
    failedWith(await run(`return { toJSON() { while (true) {} } }`, { limits: { cpuMs: 200 } }), 'CODE_CPU_LIMIT')
    const cycle = await run('const a = {}; a.a = a; return a')
    failedWith(cycle, 'CODE_THREW')
    if (cycle.outcome === 'failed') expect(cycle.message).toMatch(/not JSON/)
    await expectHealthy()
  })

  it('settles CODE_OUTPUT_LIMIT for a huge returned string and CODE_MEMORY_LIMIT for one past the heap', async () => {
    failedWith(await run(`return 'x'.repeat(5 * 1024 * 1024)`), 'CODE_OUTPUT_LIMIT')
    failedWith(await run(`return 'x'.repeat(2 ** 29).length`), 'CODE_MEMORY_LIMIT')
    failedWith(await run(`await tools.echo({ big: 'y'.repeat(2 * 1024 * 1024) })`), 'CODE_OUTPUT_LIMIT')
    await expectHealthy()
  })

  it('stops an infinite loop with CODE_CPU_LIMIT, and one past its wall time with CODE_TIMEOUT', async () => {
    failedWith(await run('while (true) {}', { limits: { cpuMs: 200 } }), 'CODE_CPU_LIMIT')
    failedWith(await run('for (;;) { try { while (true) {} } catch {} }', { limits: { cpuMs: 60_000, wallMs: 300 } }), 'CODE_TIMEOUT')
    await expectHealthy()
  })

  it('terminates a worker whose one stretch of built-ins outruns cpuMs (the interrupt handler starved), failing its other runs with a reason', async () => {
    const own = createCodeSandbox({ poolSize: 1 })
    onTestFinished(() => own.close())
    const bystander = own.run({ source: 'await tools.slow({}); return "bystander"', toolNames: ['slow'] }, echoHost({ slow: 3000 }))
    const started = performance.now()
    const result = await own.run({ source: 'await 0\nwhile (true) new Array(100000).fill(0)', toolNames: [], limits: { cpuMs: 200, wallMs: 20_000 } }, echoHost())
    failedWith(result, 'CODE_CPU_LIMIT')
    expect(performance.now() - started).toBeLessThan(5_000)
    const other = await bystander
    failedWith(other, 'CODE_TIMEOUT')
    if (other.outcome === 'failed') expect(other.message).toMatch(/another run in it overran its CPU time/)
    expect(await own.run({ source: 'return 7', toolNames: [] }, echoHost())).toMatchObject({ outcome: 'completed', value: 7 })
  })

  it('settles CODE_TIMEOUT when a sub-call never answers', async () => {
    const host: CodeHost = { callTool: () => new Promise(() => {}) }
    let signal: AbortSignal | undefined
    const hanging: CodeHost = {
      callTool: (_index, _name, _args, options) => {
        signal = options.signal
        return host.callTool(_index, _name, _args, options)
      },
    }
    const result = await run('return await tools.slow({})', { limits: { wallMs: 300 } }, hanging)
    failedWith(result, 'CODE_TIMEOUT')
    expect(signal?.aborted).toBe(true)
    expect(result.subCalls).toBe(1)
    await expectHealthy()
  })

  it('stops a memory bomb with CODE_MEMORY_LIMIT', async () => {
    const limits = { memoryBytes: 4 * 1024 * 1024 }
    failedWith(await run('const a = []; while (true) a.push([a.length, { n: a.length }])', { limits }), 'CODE_MEMORY_LIMIT')
    failedWith(await run('await 0\nconst a = []; while (true) a.push([a.length, { n: a.length }])', { limits }), 'CODE_MEMORY_LIMIT')
    failedWith(await run('let s = "ab"; const keep = []; while (true) { s = s + s; keep.push(s.slice(1)) }'), 'CODE_MEMORY_LIMIT')
    await expectHealthy()
  })

  it('serves later runs after a program whose runtime QuickJS cannot free (allocation inside a promise job)', async () => {
    const heavy = 'await 0\nconst a = []\nfor (let i = 0; i < 200000; i++) a.push({ i })\nreturn a.length'
    const results = await Promise.all([run(heavy), run('await tools.slow({}); return "bystander"', {}, echoHost({ slow: 200 }))])
    expect(results.map((r) => (r.outcome === 'completed' ? r.value : r.code))).toEqual([200000, 'bystander'])
    expect(await run(heavy)).toMatchObject({ outcome: 'completed', value: 200000 })
    await expectHealthy()
  })

  it('turns deep recursion into CODE_THREW, not a crash', async () => {
    const result = await run('function f(n) { return f(n + 1) + 1 }\nreturn f(0)')
    failedWith(result, 'CODE_THREW')
    if (result.outcome === 'failed') expect(result.message).toMatch(/stack overflow/)
    await expectHealthy()
  })

  it('refuses a source over sourceBytes before running it', async () => {
    failedWith(await run(`return ${JSON.stringify('z'.repeat(2000))}`, { limits: { sourceBytes: 1000 } }), 'CODE_SOURCE_TOO_LARGE')
  })

  it('settles ABORTED when the signal fires, and CLOSED for a run in flight when the sandbox closes', async () => {
    const controller = new AbortController()
    const host: CodeHost = { callTool: () => new Promise(() => {}) }
    const aborted = run('await tools.slow({})', { signal: controller.signal }, host)
    setTimeout(() => controller.abort(), 50)
    failedWith(await aborted, 'ABORTED')
    // Aborted while esbuild strips a source it has not seen: settles at once, never runs.
    const early = new AbortController()
    const stripping = run(`await tools.slow({}) // ${Math.random()}`, { signal: early.signal }, host)
    early.abort()
    failedWith(await stripping, 'ABORTED')

    const own = createCodeSandbox({ poolSize: 1 })
    const inFlight = own.run({ source: 'await tools.slow({})', toolNames: ['slow'] }, host)
    await new Promise((resolve) => setTimeout(resolve, 200))
    await own.close()
    failedWith(await inFlight, 'CLOSED')
    await expect(own.run({ source: 'return 1', toolNames: [] }, host)).rejects.toMatchObject({ code: 'CLOSED' })
    await expectHealthy()
  })
})
