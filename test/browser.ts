import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { servePlugin, until } from '../src/mcp/fixtures/serve-plugin.js'
import { BIN, pluginFolder, put } from './cli-kit.js'

/** Debian's Chromium, which `.ci/run` installs; the browser tests drive it with playwright-core. */
export const CHROMIUM = process.env.SEAM_CHROMIUM ?? '/usr/bin/chromium'

/** Where the browser tests leave their screenshots (looked at by a person, not compared). */
export const SHOTS = process.env.SEAM_CONSOLE_SHOTS ?? path.join(tmpdir(), 'seam-console-shots')

/**
 * Headless Chromium with a profile of its own. Background networking, component updates and sync
 * are off: on a machine without internet their connections are refused and slow the browser down.
 */
export async function launchBrowser(): Promise<BrowserContext & AsyncDisposable> {
  const profile = await mkdtemp(path.join(tmpdir(), 'seam-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 760 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  return Object.assign(context, {
    async [Symbol.asyncDispose]() {
      await context.close()
      await rm(profile, { recursive: true, force: true })
    },
  })
}

export interface DevConsoleOptions {
  /** Files written into the plugin folder, by path in it (`tools/echo.ts`). */
  readonly files: Readonly<Record<string, string>>
  /** A folder of `files` alone; otherwise they join the serving tests' tools and skill (`servePlugin()`). */
  readonly alone?: boolean
  /** Variables added to seam dev's environment. */
  readonly env?: Readonly<Record<string, string>>
  /** Runs seam dev at a pseudo-terminal (util-linux `script`), so its stdin and stdout are TTYs. */
  readonly terminal?: boolean
}

/** A running `seam dev` on a temporary plugin folder, and a Chromium page to open its console in. */
export interface DevConsole {
  /** The plugin folder seam dev watches. */
  readonly dir: string
  /** Writes `text` to `name` in the plugin folder (seam dev reloads). */
  put(name: string, text: string): Promise<void>
  /** seam dev's process (under `script` at a terminal). */
  readonly child: ChildProcess
  /** The console's URL from seam dev's banner (`http://127.0.0.1:<port>/`); the MCP endpoint is `mcp` under it. */
  readonly base: string
  readonly browser: BrowserContext
  /** A blank page, nothing opened yet. */
  readonly page: Page
  /** What seam dev printed so far (stdout and stderr), with the page's uncaught errors as `page error: …` lines. */
  readonly output: string
  /** Closes the browser, stops seam dev (Ctrl-C; SIGKILL after ten seconds) and removes the folder. */
  close(): Promise<void>
}

/**
 * The console browser tests' setup: `seam dev` on a temporary plugin folder of `files` (port 0, a
 * 30 ms debounce, no type check), its console URL read from the banner, and Chromium with a page.
 * A setup that fails stops what it started before it throws.
 */
export async function consoleOnDev(options: DevConsoleOptions): Promise<DevConsole> {
  await mkdir(SHOTS, { recursive: true })
  const plugin = await folderOf(options)
  const args = [BIN, 'dev', plugin.dir, '--port', '0', '--debounce', '30', '--no-check']
  const env = { ...process.env, NO_COLOR: '1', ...options.env }
  const child = options.terminal
    ? spawn('script', ['-qfec', [process.execPath, ...args].map((word) => `'${word}'`).join(' '), '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env })
  let output = ''
  const collect = (chunk: Buffer) => {
    output += chunk.toString()
  }
  child.stdout!.on('data', collect)
  child.stderr!.on('data', collect)
  let browser: (BrowserContext & AsyncDisposable) | undefined
  const close = async () => {
    await browser?.[Symbol.asyncDispose]()
    await stop(child, options.terminal === true)
    await plugin.remove()
  }
  try {
    const base = await until('the console URL in the banner', () => /console\s+(http:\/\/127\.0\.0\.1:\d+\/)/.exec(output)?.[1], 30_000)
    browser = await launchBrowser()
    const page = await browser.newPage()
    page.on('pageerror', (error) => {
      output += `\npage error: ${error.message}`
    })
    return {
      dir: plugin.dir,
      put: plugin.put,
      child,
      base,
      browser,
      page,
      get output() {
        return output
      },
      close,
    }
  } catch (error) {
    await close()
    throw error
  }
}

async function folderOf(options: DevConsoleOptions): Promise<{ dir: string; put(name: string, text: string): Promise<void>; remove(): Promise<void> }> {
  if (options.alone) {
    const dir = await pluginFolder(options.files)
    return { dir, put: (name, text) => put(dir, name, text), remove: () => rm(dir, { recursive: true, force: true }) }
  }
  const plugin = await servePlugin()
  for (const [name, text] of Object.entries(options.files)) await plugin.put(name, text)
  return plugin
}

async function stop(child: ChildProcess, terminal: boolean): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  // At a terminal, Ctrl-C: the pseudo-terminal signals seam dev, which stops; then script ends.
  if (terminal) child.stdin!.write('\x03')
  else child.kill('SIGINT')
  const killed = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(killed)
}
