import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, realpath, rename, rm, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it, onTestFinished } from 'vitest'
import { createWatcher, type Watcher } from './watcher.js'

interface Recorder {
  readonly batches: string[][]
  readonly times: number[]
  onBatch(changed: ReadonlySet<string>): void
}

function recorder(): Recorder {
  const batches: string[][] = []
  const times: number[] = []
  const onBatch = (changed: ReadonlySet<string>): void => {
    batches.push([...changed].sort())
    times.push(performance.now())
  }
  return { batches, times, onBatch }
}

async function folder(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'seam-watch-')))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  await mkdir(join(dir, 'tools'))
  await writeFile(join(dir, 'tools/a.ts'), 'a1')
  return dir
}

function watcher(options: Parameters<typeof createWatcher>[0]): Watcher {
  const created = createWatcher(options)
  onTestFinished(() => created.close())
  return created
}

/** Waits for an event; the timeout only detects one that never comes (a loaded machine can take seconds). */
async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await sleep(5)
  }
}

describe('createWatcher', () => {
  it("delivers one batch for an editor's unlink + add of the same file", async () => {
    const dir = await folder()
    const seen = recorder()
    // A wide debounce: on a loaded machine two awaited writes can be more than 20 ms apart.
    const w = watcher({ debounceMs: 100, onBatch: seen.onBatch })
    w.setPaths([join(dir, 'tools')])
    await w.ready
    await unlink(join(dir, 'tools/a.ts'))
    await writeFile(join(dir, 'tools/a.ts'), 'a2')
    await until(() => seen.batches.length > 0)
    await sleep(100)
    expect(seen.batches).toEqual([[join(dir, 'tools/a.ts')]])
  })

  it('delivers one batch for ten quick saves', async () => {
    const dir = await folder()
    const seen = recorder()
    // A wide debounce: on a loaded machine two awaited writes can be more than 20 ms apart.
    const w = watcher({ debounceMs: 100, onBatch: seen.onBatch })
    w.setPaths([join(dir, 'tools/a.ts')])
    await w.ready
    for (let i = 0; i < 10; i++) await writeFile(join(dir, 'tools/a.ts'), `save ${i}`)
    await until(() => seen.batches.length > 0)
    await sleep(100)
    expect(seen.batches).toEqual([[join(dir, 'tools/a.ts')]])
  })

  it('reports a rename as one batch with both paths, ignoring editor swap files', async () => {
    const dir = await folder()
    const seen = recorder()
    // A wide debounce: on a loaded machine two awaited writes can be more than 20 ms apart.
    const w = watcher({ debounceMs: 100, onBatch: seen.onBatch })
    w.setPaths([join(dir, 'tools')])
    await w.ready
    await writeFile(join(dir, 'tools/.a.ts.swp'), 'swap')
    await rename(join(dir, 'tools/a.ts'), join(dir, 'tools/b.ts'))
    await until(() => seen.batches.length > 0)
    await sleep(100)
    expect(seen.batches).toEqual([[join(dir, 'tools/a.ts'), join(dir, 'tools/b.ts')]])
  })

  it('follows a newly set file path and stops following a dropped one', async () => {
    const dir = await folder()
    await writeFile(join(dir, 'helper.ts'), 'h1')
    const seen = recorder()
    const w = watcher({ onBatch: seen.onBatch })
    w.setPaths([join(dir, 'tools/a.ts')])
    await w.ready
    w.setPaths([join(dir, 'helper.ts')])
    await w.ready
    await writeFile(join(dir, 'tools/a.ts'), 'a2')
    await writeFile(join(dir, 'helper.ts'), 'h2')
    await until(() => seen.batches.length > 0)
    await sleep(100)
    expect(seen.batches).toEqual([[join(dir, 'helper.ts')]])
  })

  it('follows a file that does not exist yet', async () => {
    const dir = await folder()
    const seen = recorder()
    const w = watcher({ onBatch: seen.onBatch })
    w.setPaths([join(dir, 'plugin.ts')])
    await w.ready
    await writeFile(join(dir, 'plugin.ts'), 'p1')
    await until(() => seen.batches.length > 0)
    expect(seen.batches).toEqual([[join(dir, 'plugin.ts')]])
  })

  it('follows a folder that does not exist yet into its new files', async () => {
    const dir = await folder()
    const seen = recorder()
    const w = watcher({ onBatch: seen.onBatch })
    const skills = join(dir, 'agent/skills')
    w.setPaths([skills])
    await w.ready
    await mkdir(skills, { recursive: true })
    await sleep(50)
    await writeFile(join(skills, 'triage.md'), '# Triage')
    await until(() => seen.batches.flat().includes(join(skills, 'triage.md')))
    expect(seen.batches.flat().every((path) => path.startsWith(skills))).toBe(true)
  })

  it('reports a missing folder created with its file in one go (mkdir -p, then write at once)', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const dir = await folder()
      const seen = recorder()
      const w = watcher({ onBatch: seen.onBatch })
      const skills = join(dir, 'agent/skills')
      w.setPaths([skills])
      await w.ready
      await mkdir(skills, { recursive: true })
      await writeFile(join(skills, 'notes.md'), '# Notes')
      // The folder itself, or the file in it: either makes a reload list the folder.
      await until(() => seen.batches.flat().some((path) => path === skills || path === join(skills, 'notes.md')))
    }
  })

  it('reports a folder that appeared once it is watched: a file written as that batch arrives is reported too', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const dir = await folder()
      const skills = join(dir, 'agent/skills')
      const batches: string[][] = []
      let writtenIn = -1
      const w = watcher({
        debounceMs: 0,
        onBatch: async (changed) => {
          batches.push([...changed])
          // The reload a host runs here lists the folder; what lands after it must raise a batch.
          if (writtenIn < 0 && existsSync(skills)) {
            writtenIn = batches.length - 1
            await writeFile(join(skills, 'late.md'), '# Late')
          }
        },
      })
      w.setPaths([skills])
      await w.ready
      await mkdir(skills, { recursive: true })
      // A later batch names the file, or the folder (when the file landed while the new folder's
      // watch was still starting: the folder is reported once it is watched, and a reload lists it).
      await until(() => writtenIn >= 0 && batches.slice(writtenIn + 1).some((batch) => batch.includes(join(skills, 'late.md')) || batch.includes(skills)))
    }
  })

  it.each([
    ['deleted and made again at once (rm -r, mkdir)', 'remake'],
    ['swapped for another by rename (a branch switch, an atomic deploy)', 'swap'],
  ])('follows a folder %s into its new files', async (_how, how) => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const dir = await folder()
      const tools = join(dir, 'tools')
      const seen = recorder()
      const w = watcher({ onBatch: seen.onBatch })
      w.setPaths([tools])
      await w.ready
      if (how === 'remake') {
        await rm(tools, { recursive: true })
        await mkdir(tools)
      } else {
        await mkdir(join(dir, 'tools.new'))
        await writeFile(join(dir, 'tools.new/a.ts'), 'a2')
        await rename(tools, join(dir, 'tools.old'))
        await rename(join(dir, 'tools.new'), tools)
      }
      // The replacement is reported as the folder (a reload lists it again)...
      await until(() => seen.batches.flat().includes(tools))
      await sleep(50)
      // ...and a file written in the new folder afterwards is reported too: by itself, or by a batch
      // naming the folder delivered after the write (the new watch coming up), as a reload lists it.
      const delivered = seen.batches.length
      await writeFile(join(tools, 'b.ts'), 'b1')
      await until(() => seen.batches.slice(delivered).some((batch) => batch.includes(join(tools, 'b.ts')) || batch.includes(tools)))
      expect(seen.batches.flat().every((path) => path.startsWith(tools))).toBe(true)
    }
  })

  it('leaves no fs.watch handle open after close, even closed while following a replaced folder anew', async () => {
    const handles = () => (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles().filter((h) => h.constructor.name === 'FSWatcher').length
    const before = handles()
    for (let i = 0; i < 12; i++) {
      const dir = await folder()
      const tools = join(dir, 'tools')
      const w = createWatcher({ onBatch: () => {} })
      w.setPaths([tools])
      await w.ready
      await rm(tools, { recursive: true })
      await mkdir(tools)
      await sleep(i % 4)
      await w.close()
    }
    await sleep(50)
    expect(handles()).toBe(before)
  })

  it('raises nothing when followed files are only read', async () => {
    const dir = await folder()
    const seen = recorder()
    const w = watcher({ onBatch: seen.onBatch })
    w.setPaths([join(dir, 'tools')])
    await w.ready
    for (let i = 0; i < 5; i++) await readFile(join(dir, 'tools/a.ts'))
    await sleep(100)
    expect(seen.batches).toEqual([])
  })

  it('never runs onBatch concurrently, and queues one more batch for changes made during a run', async () => {
    const dir = await folder()
    let running = 0
    let overlapped = false
    const batches: string[][] = []
    let release: () => void = () => {}
    const w = watcher({
      onBatch: async (changed) => {
        overlapped ||= running > 0
        running++
        batches.push([...changed].sort())
        if (batches.length === 1) await new Promise<void>((done) => (release = done))
        running--
      },
    })
    w.setPaths([join(dir, 'tools')])
    await w.ready
    await writeFile(join(dir, 'tools/a.ts'), 'a2')
    await until(() => batches.length === 1)
    await writeFile(join(dir, 'tools/b.ts'), 'b1')
    await sleep(60)
    await writeFile(join(dir, 'tools/c.ts'), 'c1')
    await sleep(60)
    expect(batches.length).toBe(1)
    release()
    await until(() => batches.length === 2)
    await sleep(60)
    expect(batches).toEqual([[join(dir, 'tools/a.ts')], [join(dir, 'tools/b.ts'), join(dir, 'tools/c.ts')]])
    expect(overlapped).toBe(false)
  })

  it('reports a failing onBatch and keeps watching', async () => {
    const dir = await folder()
    const errors: unknown[] = []
    let calls = 0
    const w = watcher({
      onBatch: () => {
        calls++
        throw new Error('reload exploded')
      },
      onError: (error) => errors.push(error),
    })
    w.setPaths([join(dir, 'tools')])
    await w.ready
    await writeFile(join(dir, 'tools/a.ts'), 'a2')
    await until(() => calls === 1)
    await writeFile(join(dir, 'tools/a.ts'), 'a3')
    await until(() => calls === 2)
    expect(errors).toEqual([new Error('reload exploded'), new Error('reload exploded')])
  })

  it('waits for a running batch on close, is idempotent and delivers nothing afterwards', async () => {
    const dir = await folder()
    const seen = recorder()
    let finished = false
    const w = watcher({
      onBatch: async (changed) => {
        seen.onBatch(changed)
        await sleep(50)
        finished = true
      },
    })
    w.setPaths([join(dir, 'tools')])
    await w.ready
    await writeFile(join(dir, 'tools/a.ts'), 'a2')
    await until(() => seen.batches.length === 1)
    const closing = w.close()
    expect(w.close()).toBe(closing)
    await closing
    expect(finished).toBe(true)
    await writeFile(join(dir, 'tools/a.ts'), 'a3')
    await sleep(80)
    expect(seen.batches.length).toBe(1)
  })

  it('delivers a save within the debounce plus a few milliseconds', async () => {
    const dir = await folder()
    const seen = recorder()
    const w = watcher({ debounceMs: 20, onBatch: seen.onBatch })
    w.setPaths([join(dir, 'tools')])
    await w.ready
    const latencies: number[] = []
    for (let i = 0; i < 7; i++) {
      const start = performance.now()
      await writeFile(join(dir, 'tools/a.ts'), `save ${i}`)
      await until(() => seen.times.length === i + 1)
      latencies.push((seen.times[i] ?? 0) - start)
      await sleep(30)
    }
    latencies.sort((x, y) => x - y)
    const median = latencies[3] ?? 0
    console.info(`write → onBatch with debounce 20 ms: median ${median.toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms`)
    expect(median).toBeGreaterThanOrEqual(19)
    // Generous: the bound proves nothing waits on a second debounce, not how fast a loaded machine is.
    expect(median).toBeLessThan(250)
  })
})
