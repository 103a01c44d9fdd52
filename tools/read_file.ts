import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { fsToken } from './lib/fs-seam.js'
import { clip, decodeText, fsFailure, numberLines, splitLines } from './lib/text.js'

const MAX_BYTES = 2 * 1024 * 1024
const MAX_LINE = 2000
const DEFAULT_LIMIT = 2000

export default defineTool({
  description:
    'Read a UTF-8 text file in the workspace. Returns up to `limit` lines from line `offset` (1-based) ' +
    'with the total line count; read a long file in slices. Binary files and files over 2 MiB are refused.',
  input: z.object({
    path: z.string().min(1).describe('File path, relative to the workspace root'),
    offset: z.number().int().min(1).optional().describe('First line to read, 1-based (default 1)'),
    limit: z.number().int().min(1).max(10_000).optional().describe(`Number of lines to read (default ${DEFAULT_LIMIT})`),
  }),
  output: z.object({
    path: z.string(),
    content: z.string(),
    startLine: z.number().int(),
    totalLines: z.number().int(),
    truncated: z.boolean(),
  }),
  approval: 'never',
  annotations: { readOnlyHint: true },
  isConcurrencySafe: () => true,
  async execute({ path, offset = 1, limit = DEFAULT_LIMIT }, ctx) {
    const fs = ctx.use(fsToken)
    let real: string
    let bytes: Buffer
    try {
      real = await fs.resolve(path)
      bytes = await fs.readFile(real, { maxBytes: MAX_BYTES })
    } catch (error) {
      if ((error as { code?: unknown }).code === 'EFBIG') {
        throw new Error(`${path} is larger than 2 MiB; use search_files to find the lines you need`)
      }
      throw fsFailure(error, path)
    }
    const text = decodeText(bytes)
    if (text === undefined) throw new Error(`${path} is a binary file (or not UTF-8); read_file only reads text`)
    const all = splitLines(text)
    const picked = all.slice(offset - 1, offset - 1 + limit)
    const clipped = picked.map((line) => clip(line, MAX_LINE))
    const cut = clipped.some((line, i) => line !== picked[i])
    return {
      path: fs.display(real),
      content: clipped.join('\n'),
      startLine: offset,
      totalLines: all.length,
      truncated: cut || offset - 1 + picked.length < all.length,
    }
  },
  render: (_args, value) => {
    const lines = splitLines(value.content)
    const body = lines.length > 0 ? numberLines(lines, value.startLine) : '(no lines in this range)'
    const end = value.startLine + lines.length - 1
    const more = value.truncated ? `\n[showing lines ${value.startLine}-${end} of ${value.totalLines}; long lines are cut]` : ''
    return `${value.path} (${value.totalLines} lines)\n${body}${more}`
  },
})
