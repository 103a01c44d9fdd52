/**
 * A few source lines around a 1-based position, with a caret under the column, so a diagnostic
 * can be read without opening the file.
 */
export function codeFrame(source: string, line: number, column: number, context = 2): string {
  const lines = source.split(/\r?\n/)
  const target = Math.min(Math.max(line, 1), lines.length)
  const first = Math.max(target - context, 1)
  const last = Math.min(target + context, lines.length)
  const width = String(last).length
  const out: string[] = []
  for (let n = first; n <= last; n++) {
    const text = (lines[n - 1] ?? '').replace(/\t/g, '  ')
    const gutter = `${String(n).padStart(width)} |`
    out.push(`${n === target ? '>' : ' '} ${gutter}${text === '' ? '' : ` ${text}`}`)
    if (n === target) {
      const raw = lines[n - 1] ?? ''
      const before = raw.slice(0, Math.max(column - 1, 0)).replace(/\t/g, '  ')
      out.push(`  ${' '.repeat(width)} | ${' '.repeat(before.length)}^`)
    }
  }
  return out.join('\n')
}

/** Converts a 0-based UTF-8 byte column (esbuild's unit) to a 1-based character column. */
export function byteColumnToCharColumn(lineText: string, byteColumn: number): number {
  return Buffer.from(lineText, 'utf8').subarray(0, byteColumn).toString('utf8').length + 1
}
