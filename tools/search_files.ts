import { basename } from 'node:path'
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
import { type FileInfo, fsToken } from './lib/fs-seam.js'
import { globMatcher } from './lib/glob.js'
import { IsolatedRegex, RegexBudgetError } from './lib/isolated-regex.js'
import { clip, decodeText, fsFailure, splitLines } from './lib/text.js'

const MAX_FILES = 5000
/** Files looked at (searched or skipped by glob and size): a huge tree stops here, not at the timeout. */
const MAX_VISITED = 100_000
const MAX_FILE_BYTES = 1024 * 1024
const MAX_TOTAL_BYTES = 64 * 1024 * 1024
const MAX_TEXT = 300
/** How long a regular expression may take over one file's lines before the search is stopped. */
const REGEX_BUDGET_MS = 1000

const match = z.object({ file: z.string(), line: z.number().int(), text: z.string() })

export default defineTool({
  description:
    'Search the text files of a workspace folder for a literal string (or a JavaScript regular expression ' +
    'with `regex: true`). Returns matching lines with file and line number. Skips .git, node_modules, ' +
    'binary files and files over 1 MiB; `glob` narrows the files (`*.ts`, `src/**/*.test.ts`). Stops after ' +
    '5,000 files searched or 100,000 looked at.',
  input: z.object({
    pattern: z.string().min(1).describe('The text to find (or a regular expression with regex: true)'),
    regex: z.boolean().default(false),
    ignoreCase: z.boolean().default(false),
    path: z.string().min(1).default('.').describe('Folder to search, relative to the workspace root'),
    glob: z.string().min(1).optional().describe('Only files matching this glob (relative to `path`)'),
    maxResults: z.number().int().min(1).max(1000).default(100),
  }),
  output: z.object({
    matches: z.array(match),
    filesSearched: z.number().int(),
    truncated: z.boolean(),
    /** Why the search stopped early, when it did. */
    stoppedBy: z.enum(['maxResults', 'maxFiles', 'maxBytes']).optional(),
  }),
  approval: 'never',
  annotations: { readOnlyHint: true },
  isConcurrencySafe: () => true,
  async execute({ pattern, regex, ignoreCase, path, glob, maxResults }, ctx) {
    const fs = ctx.use(fsToken)
    const wanted = glob === undefined ? () => true : globMatcher(glob)
    const matcher = regex ? regexMatcher(pattern, ignoreCase, ctx.signal) : literalMatcher(pattern, ignoreCase)
    try {
      let base: string
      let info: FileInfo | undefined
      try {
        base = await fs.resolve(path)
        info = await fs.stat(base)
      } catch (error) {
        throw fsFailure(error, path)
      }
      if (info === undefined) throw new Error(`${path}: no such file or folder`)
      const shown = fs.display(base)
      const prefix = shown === '.' ? '' : `${shown}/`
      const matches: z.infer<typeof match>[] = []
      let filesSearched = 0
      let visited = 0
      let bytes = 0
      let stoppedBy: 'maxResults' | 'maxFiles' | 'maxBytes' | undefined
      const files = info.type === 'file' ? [{ name: basename(base), path: shown, ...info }] : fs.walk(base, { signal: ctx.signal })
      search: for await (const file of files) {
        ctx.signal.throwIfAborted()
        if (++visited > MAX_VISITED) {
          stoppedBy = 'maxFiles'
          break
        }
        if (!wanted(file.path.startsWith(prefix) ? file.path.slice(prefix.length) : file.path)) continue
        if (file.size > MAX_FILE_BYTES) continue
        if (filesSearched >= MAX_FILES) stoppedBy = 'maxFiles'
        else if (bytes + file.size > MAX_TOTAL_BYTES) stoppedBy = 'maxBytes'
        if (stoppedBy) break
        const content = await fs.readFile(file.path, { maxBytes: MAX_FILE_BYTES }).catch(() => undefined)
        if (content === undefined) continue
        filesSearched++
        bytes += content.byteLength
        const text = decodeText(content)
        if (text === undefined) continue
        const lines = splitLines(text)
        // One more than still fits: finding it means the results were cut.
        for (const i of await matcher.match(lines, maxResults - matches.length + 1, file.path)) {
          if (matches.length >= maxResults) {
            stoppedBy = 'maxResults'
            break search
          }
          matches.push({ file: file.path, line: i + 1, text: clip(lines[i]!.trim(), MAX_TEXT) })
        }
      }
      return stoppedBy === undefined ? { matches, filesSearched, truncated: false } : { matches, filesSearched, truncated: true, stoppedBy }
    } finally {
      await matcher.close?.()
    }
  },
  render: (args, value) => {
    if (value.matches.length === 0) return `No match for ${JSON.stringify(args.pattern)} in ${value.filesSearched} files.`
    const lines = value.matches.map((m) => `${m.file}:${m.line}: ${m.text}`)
    if (value.truncated) lines.push(`[stopped at ${value.stoppedBy}; narrow the search with path or glob]`)
    return lines.join('\n')
  },
})

interface LineMatcher {
  /** Indexes of the matching lines of `file`, at most `limit`, in order. */
  match(lines: readonly string[], limit: number, file: string): number[] | Promise<number[]>
  close?(): Promise<void>
}

/** A literal string: a linear scan, on this thread. */
function literalMatcher(pattern: string, ignoreCase: boolean): LineMatcher {
  const needle = ignoreCase ? pattern.toLowerCase() : pattern
  return {
    match(lines, limit) {
      const hits: number[] = []
      for (let i = 0; i < lines.length && hits.length < limit; i++) {
        if ((ignoreCase ? lines[i]!.toLowerCase() : lines[i]!).includes(needle)) hits.push(i)
      }
      return hits
    },
  }
}

/**
 * A regular expression, which may backtrack catastrophically (`(a+)+$`, `(a|aa)+$`): matched on a
 * worker thread within a time budget per file, so it can never stall the host (see `IsolatedRegex`).
 */
function regexMatcher(source: string, ignoreCase: boolean, signal: AbortSignal): LineMatcher {
  const flags = ignoreCase ? 'i' : ''
  try {
    new RegExp(source, flags)
  } catch (error) {
    throw new Error(`the pattern is not a valid regular expression: ${(error as Error).message}`)
  }
  const isolated = new IsolatedRegex(source, flags, REGEX_BUDGET_MS)
  return {
    async match(lines, limit, file) {
      try {
        return await isolated.match(lines, limit, signal)
      } catch (error) {
        if (!(error instanceof RegexBudgetError)) throw error
        throw new Error(
          `the regular expression ran for more than ${REGEX_BUDGET_MS} ms on ${file} and was stopped: it backtracks ` +
            'catastrophically (nested repetition such as (a+)+, or overlapping alternatives such as (a|aa)+). ' +
            'Simplify it, or search for a literal string.',
        )
      }
    },
    close: () => isolated.close(),
  }
}
