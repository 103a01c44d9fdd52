import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'

/** Debian's Chromium, which `.ci/run` installs; the browser tests drive it with playwright-core. */
export const CHROMIUM = process.env.SEAM_CHROMIUM ?? '/usr/bin/chromium'

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
