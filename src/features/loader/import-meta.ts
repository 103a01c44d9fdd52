import { readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type Loader, type Plugin, transform } from 'esbuild'

const LOADERS: Readonly<Record<string, Loader>> = { ts: 'ts', mts: 'ts', cts: 'ts', tsx: 'tsx', js: 'js', mjs: 'js', cjs: 'js', jsx: 'jsx' }

/**
 * Gives every bundled local file its own `import.meta` (`url`, `dirname`, `filename`: where the file
 * really is), as ESM would. The bundle is CommonJS (see bundle.ts), where esbuild leaves `import.meta`
 * empty, and one define for the whole bundle would hand a helper its importer's location. So a file
 * that mentions `import.meta` is first transformed alone with its own values; the inline source map
 * of that step is chained by esbuild, so stack frames and diagnostics keep the original lines.
 */
export const importMetaPlugin: Plugin = {
  name: 'seam-import-meta',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]sx?$/, namespace: 'file' }, async ({ path }) => {
      const loader = LOADERS[path.slice(path.lastIndexOf('.') + 1)]
      const text = await readFile(path, 'utf8').catch(() => undefined)
      if (loader === undefined || text === undefined || !text.includes('import.meta')) return undefined
      const meta = { url: pathToFileURL(path).href, dirname: dirname(path), filename: path }
      const result = await transform(text, {
        loader,
        format: 'esm',
        sourcemap: 'inline',
        sourcefile: path,
        define: { 'import.meta': JSON.stringify(meta) },
        logLevel: 'silent',
      }).catch(() => undefined)
      // A file that does not parse is left to the bundle, which reports the error at its place.
      return result === undefined ? undefined : { contents: result.code, loader: 'js', resolveDir: dirname(path) }
    })
  },
}
