import { join } from 'node:path'
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { DEFAULT_SKIP, type DirEntry, fsToken } from './lib/fs-seam.js'
import { fsFailure } from './lib/text.js'

const MAX_ENTRIES = 1000

const entry = z.object({ path: z.string(), type: z.enum(['file', 'dir', 'symlink', 'other']), size: z.number() })

export default defineTool({
  description:
    'List a folder of the workspace: each entry with its type and size in bytes, folders descended ' +
    '`depth` levels (default 1). Does not descend into .git or node_modules unless `all` is set. At most 1000 entries.',
  input: z.object({
    path: z.string().min(1).default('.').describe('Folder path, relative to the workspace root'),
    depth: z.number().int().min(1).max(10).default(1).describe('How many folder levels to list'),
    all: z.boolean().default(false).describe('Also list inside .git and node_modules'),
  }),
  output: z.object({ path: z.string(), entries: z.array(entry), truncated: z.boolean() }),
  approval: 'never',
  annotations: { readOnlyHint: true },
  isConcurrencySafe: () => true,
  async execute({ path, depth, all }, ctx) {
    const fs = ctx.use(fsToken)
    const entries: { path: string; type: DirEntry['type']; size: number }[] = []
    let real: string
    try {
      real = await fs.resolve(path)
      const info = await fs.stat(real)
      if (info === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' })
      if (info.type !== 'dir') throw new Error(`${path} is not a folder; use read_file for a file`)
    } catch (error) {
      throw fsFailure(error, path)
    }
    let truncated = false
    const visit = async (folder: string, level: number): Promise<void> => {
      // One more than still fits: finding it means the listing was cut.
      for (const e of await fs.list(folder, { limit: MAX_ENTRIES - entries.length + 1, signal: ctx.signal })) {
        ctx.signal.throwIfAborted()
        if (entries.length >= MAX_ENTRIES) {
          truncated = true
          return
        }
        entries.push({ path: e.path, type: e.type, size: e.type === 'dir' ? 0 : e.size })
        const descend = e.type === 'dir' && level < depth && (all || !DEFAULT_SKIP.has(e.name))
        if (descend) await visit(join(folder, e.name), level + 1)
      }
    }
    await visit(real, 1)
    return { path: fs.display(real), entries, truncated }
  },
  render: (_args, value) => {
    const lines = value.entries.map((e) => (e.type === 'dir' ? `${e.path}/` : e.type === 'file' ? `${e.path}  (${e.size} B)` : `${e.path}  [${e.type}]`))
    if (lines.length === 0) lines.push('(empty)')
    if (value.truncated) lines.push(`[stopped after ${MAX_ENTRIES} entries; list a subfolder]`)
    return `${value.path}/\n${lines.join('\n')}`
  },
})
