import { SeamError } from 'seam-runtime'

const SNIFF_BYTES = 8192
const decoder = new TextDecoder('utf-8', { fatal: true })

/** The text of `bytes`, or `undefined` when they look binary (a NUL byte up front, or not UTF-8). */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.subarray(0, SNIFF_BYTES).includes(0)) return undefined
  try {
    return decoder.decode(bytes)
  } catch {
    return undefined
  }
}

/** Lines without their terminators; a final newline does not start another line. */
export function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split(/\r?\n/)
  if (lines.at(-1) === '') lines.pop()
  return lines
}

/** `cat -n` style: right-aligned line numbers from `first`, a tab, the line. */
export function numberLines(lines: readonly string[], first: number): string {
  const width = String(first + lines.length - 1).length
  return lines.map((line, i) => `${String(first + i).padStart(width)}\t${line}`).join('\n')
}

/** `text` cut to `max` characters, marked with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text
  // Not between the two halves of a surrogate pair (an emoji): that would leave a lone half.
  const end = /[\uD800-\uDBFF]/.test(text[max - 1] ?? '') ? max - 1 : max
  return `${text.slice(0, end)}…`
}

const REASONS: Record<string, string> = {
  ENOENT: 'no such file or folder',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'is a folder',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
}

/**
 * A filesystem failure worded for a model, naming the path as the model wrote it (a Node error names
 * the absolute path and its syscall). Seam errors (`PATH_ESCAPE`, `CLOSED`) and our own messages pass.
 */
export function fsFailure(error: unknown, shown: string): Error {
  if (error instanceof SeamError) return error
  const { code, message } = (error ?? {}) as { code?: string; message?: string }
  const reason = code === undefined ? undefined : REASONS[code]
  const own = typeof message === 'string' && code !== undefined && !message.startsWith(`${code}:`)
  if (own || reason === undefined) return error instanceof Error ? error : new Error(String(error))
  return new Error(`${shown}: ${reason}`, { cause: error })
}
