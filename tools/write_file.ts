import { createHash } from 'node:crypto'
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { fsToken } from './lib/fs-seam.js'
import { pathRisk } from './lib/policy.js'
import { fsFailure } from './lib/text.js'

const MAX_BYTES = 4 * 1024 * 1024

export default defineTool({
  description:
    'Write a UTF-8 text file in the workspace, replacing it whole (atomically: readers see the old or the ' +
    'new content, never half). Overwriting an existing file asks the user first. Read a file before ' +
    'replacing it; set createDirs to create missing folders.',
  input: z.object({
    path: z.string().min(1).describe('File path, relative to the workspace root'),
    content: z.string().describe('The complete new content of the file'),
    createDirs: z.boolean().default(false).describe('Create missing parent folders'),
  }),
  output: z.object({ path: z.string(), bytes: z.number().int(), created: z.boolean() }),
  approval: 'on-risk',
  // Risky when the path alone shows it (a write into .git, a secrets file) or when it would replace
  // an existing file. A path outside the workspace is left to the guard, which runs after approval.
  async risk({ path }, ctx) {
    const fs = ctx.use(fsToken)
    const real = await fs.resolve(path).catch(() => undefined)
    // The path as written and where it really leads (a link named `hook` may point into .git).
    const byPath = pathRisk(path) ?? (real === undefined ? undefined : pathRisk(fs.display(real)))
    const info = real === undefined ? undefined : await fs.stat(real).catch(() => undefined)
    const overwrite = info?.type === 'file' ? `${fs.display(real!)} exists and would be overwritten` : undefined
    return [byPath, overwrite].filter(Boolean).join('; ') || undefined
  },
  annotations: { destructiveHint: true },
  isConcurrencySafe: () => false,
  // An agent loop that retries a step after a crash sends the same call again: it gets the first
  // write's result instead of overwriting whatever changed since. A new call id always writes.
  idempotencyKey: ({ path, content }, ctx) => `${ctx.callId} ${path} ${createHash('sha256').update(content).digest('hex')}`,
  async execute({ path, content, createDirs }, ctx) {
    const bytes = Buffer.byteLength(content, 'utf8')
    if (bytes > MAX_BYTES) throw new Error(`the content is ${bytes} bytes, over the 4 MiB limit of write_file`)
    const fs = ctx.use(fsToken)
    ctx.signal.throwIfAborted()
    try {
      return await fs.writeFile(path, content, { createDirs })
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT' && !createDirs) {
        throw new Error(`${path}: the folder does not exist; set createDirs: true to create it`)
      }
      throw fsFailure(error, path)
    }
  },
  render: (_args, value) => `${value.created ? 'Created' : 'Overwrote'} ${value.path} (${value.bytes} bytes).`,
})
