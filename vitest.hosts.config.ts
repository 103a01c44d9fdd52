import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const src = fileURLToPath(new URL('./src/', import.meta.url))

// `npm run test:hosts`: host processes sharing one PostgreSQL journal (SEAM_TEST_PG_URL), killed,
// restarted and raced; and the interleaving test over many seeds (SEAM_INTERLEAVE_SEEDS, default 200).
export default defineConfig({
  resolve: {
    alias: [
      { find: /^seam-runtime$/, replacement: `${src}index.ts` },
      { find: /^seam-runtime\/(.+)$/, replacement: `${src}$1.ts` },
    ],
  },
  test: {
    include: ['test/hosts/**/*.test.ts', 'test/interleaving.test.ts'],
    env: { SEAM_INTERLEAVE_SEEDS: process.env.SEAM_INTERLEAVE_SEEDS ?? '200' },
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
})
