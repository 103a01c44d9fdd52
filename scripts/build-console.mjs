// Builds the console page into dist/console/web/ (part of `npm run build`): one minified ES module
// bundled by esbuild from src/console/web/main.ts, plus the page and its stylesheet. Prints the
// shipped size, gzipped, which must stay under 150 KB.
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const source = fileURLToPath(new URL('../src/console/web/', import.meta.url))
const target = fileURLToPath(new URL('../dist/console/web/', import.meta.url))
const LIMIT = 150 * 1024

mkdirSync(target, { recursive: true })
await build({
  entryPoints: [`${source}main.ts`],
  outfile: `${target}app.js`,
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
})
for (const file of ['index.html', 'styles.css', 'favicon.svg']) copyFileSync(`${source}${file}`, `${target}${file}`)
const gzipped = ['app.js', 'index.html', 'styles.css'].reduce((sum, file) => sum + gzipSync(readFileSync(`${target}${file}`)).length, 0)
const script = gzipSync(readFileSync(`${target}app.js`)).length
console.error(`console page: app.js ${(script / 1024).toFixed(1)} KB gzipped; with html and css ${(gzipped / 1024).toFixed(1)} KB`)
if (script > LIMIT) {
  console.error(`the console script is over ${LIMIT / 1024} KB gzipped`)
  process.exit(1)
}
