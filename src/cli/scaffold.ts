/**
 * The files `seam init` writes: a plugin folder that `npx seam dev` runs as it is, and that
 * `npx seam check` type-checks once `npm install` has brought seam-runtime, zod and TypeScript.
 */
export function scaffold(name: string, version: string): Record<string, string> {
  return {
    'package.json': `${JSON.stringify(
      {
        name,
        private: true,
        type: 'module',
        scripts: { dev: 'seam dev', check: 'seam check', tools: 'seam tools' },
        dependencies: { 'seam-runtime': `^${version}`, zod: '^4.0.0' },
        devDependencies: { '@types/node': '^22.0.0', typescript: '~5.9.0' },
      },
      null,
      2,
    )}\n`,
    'tsconfig.json': `${JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2023',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: true,
          noEmit: true,
          types: ['node'],
        },
        include: ['plugin.ts', 'tools', 'agent'],
      },
      null,
      2,
    )}\n`,
    '.gitignore': 'node_modules/\n.seam/\n',
    'plugin.ts': `import { definePlugin } from 'seam-runtime/plugin-runtime'

// Optional: resources, hooks and guards for this folder's tools (see the seam-runtime README).
export default definePlugin({
  name: ${JSON.stringify(name)},
  setup(ctx) {
    ctx.log.info('ready')
  },
})
`,
    'tools/example.ts': `import { defineTool } from 'seam-runtime'
import { z } from 'zod'

// The file name is the tool name. Edit this file while \`seam dev\` runs: a new generation goes live.
export default defineTool({
  description: 'Greet someone by name.',
  input: z.object({ name: z.string().min(1).describe('who to greet') }),
  output: z.object({ greeting: z.string() }),
  // Read-only, so it never asks. Without \`approval\` a tool is 'on-risk' and, with no risk(args),
  // asks a person on every call.
  approval: 'never',
  execute({ name }) {
    return { greeting: \`Hello, \${name}!\` }
  },
})
`,
    'agent/skills/example.md': `---
description: Greet the user by name with the example tool.
tools: [example]
---
# Greeting

When the user tells you their name, call \`example\` with it and answer with the greeting.
`,
  }
}
