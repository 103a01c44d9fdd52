import { defineConfig } from 'vitest/config'

// `npm run test:package`: the packed tarball in a fresh project (slow; CI runs it once per Node version).
export default defineConfig({
  test: {
    include: ['test/package/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    pool: 'forks',
    // Each file packs the repository (prepack rewrites package.json for the pack): one at a time.
    fileParallelism: false,
  },
})
