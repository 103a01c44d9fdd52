import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'

const src = fileURLToPath(new URL('./src/', import.meta.url))

export default defineConfig({
  // Tests import `seam-runtime` and its subpaths from the sources (package.json points at dist/).
  resolve: {
    alias: [
      { find: /^seam-runtime$/, replacement: `${src}index.ts` },
      { find: /^seam-runtime\/(.+)$/, replacement: `${src}$1.ts` },
    ],
  },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'tools/**/*.test.ts'],
    // The packed-tarball test runs on its own (`npm run test:package`), and so do the host
    // processes on one PostgreSQL journal (`npm run test:hosts`: a minute of spawning processes).
    exclude: [...configDefaults.exclude, 'test/package/**', 'test/hosts/**'],
    // The CLI tests run the built `seam` (dist/cli/bin.js), as users do: build it first.
    globalSetup: ['test/build-dist.ts'],
    // Every test fails on a rejection or exception nobody handled (a host would have crashed).
    setupFiles: ['test/setup/no-unhandled-rejections.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Vitest's default on two cores is one file at a time (cores - 1), which leaves a core idle
    // while a file waits on the processes it spawns (seam, MCP servers, Chromium, tsc).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
})
