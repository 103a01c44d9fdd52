import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

const WEB = new URL('./web/', import.meta.url)

export interface Asset {
  readonly type: string
  readonly body: string | Buffer
}

const FILES: Readonly<Record<string, { file: string; type: string }>> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/styles.css': { file: 'styles.css', type: 'text/css; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  // Browsers ask for /favicon.ico whatever the page links: both get the one icon.
  '/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
  '/favicon.ico': { file: 'favicon.svg', type: 'image/svg+xml' },
}

/**
 * The page's files. The package ships them built (`dist/console/web/`, by `npm run build`); run from
 * the sources (tests, a checkout without a build) the script is bundled from `web/main.ts` with
 * esbuild on first request instead. Either way nothing is fetched from elsewhere.
 */
export class ConsoleAssets {
  readonly #cache = new Map<string, Promise<Asset>>()

  has(path: string): boolean {
    return path in FILES
  }

  get(path: string): Promise<Asset> {
    let asset = this.#cache.get(path)
    if (asset === undefined) {
      asset = this.#load(path)
      this.#cache.set(path, asset)
      asset.catch(() => this.#cache.delete(path))
    }
    return asset
  }

  async #load(path: string): Promise<Asset> {
    const { file, type } = FILES[path]!
    try {
      return { type, body: await readFile(new URL(file, WEB)) }
    } catch (error) {
      if (file !== 'app.js') throw error
      return { type, body: await bundleFromSources() }
    }
  }
}

/** The page script bundled from `web/main.ts`, as `scripts/build-console.mjs` does for the package. */
async function bundleFromSources(): Promise<string> {
  const { build } = await import('esbuild')
  const result = await build({
    entryPoints: [fileURLToPath(new URL('main.ts', WEB))],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0]!.text
}
