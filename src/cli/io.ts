import type { Readable, Writable } from 'node:stream'
import { knowsSecrets, scrubValues } from '../runtime/base/redact.js'

/** A stream that may be a terminal. */
export type OutStream = Writable & { isTTY?: boolean }
export type InStream = Readable & { isTTY?: boolean }

/** The process boundary a command sees; tests and `seam mcp` swap parts of it. */
export interface CliIo {
  readonly stdin: InStream
  readonly stdout: OutStream
  readonly stderr: OutStream
  readonly env: NodeJS.ProcessEnv
  readonly cwd: string
}

/** What every command gets: the process boundary, and the exit code it settles on. */
export interface CliContext {
  readonly io: CliIo
  exitCode: number
}

export function processIo(): CliIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() }
}

/** ANSI styling that is the identity when colour is off. */
export interface Style {
  readonly enabled: boolean
  bold(text: string): string
  dim(text: string): string
  red(text: string): string
  green(text: string): string
  yellow(text: string): string
  cyan(text: string): string
}

/** Colour only on a terminal, and never when `NO_COLOR` is set (https://no-color.org). */
export function styleFor(stream: OutStream, env: NodeJS.ProcessEnv): Style {
  const enabled = stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '')
  const paint = (open: number, close: number) => (text: string) => (enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text)
  return {
    enabled,
    bold: paint(1, 22),
    dim: paint(2, 22),
    red: paint(31, 39),
    green: paint(32, 39),
    yellow: paint(33, 39),
    cyan: paint(36, 39),
  }
}

/** Writes one line (a trailing newline is added). */
export function line(stream: OutStream, text = ''): void {
  stream.write(`${text}\n`)
}

/** Resolves once everything written to `stream` so far has been handed to the OS (a pipe may lag behind). */
export function drained(stream: OutStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve()
  return new Promise((resolve) => {
    stream.write('', () => resolve())
  })
}

/**
 * Makes `stream` (the process's stdout or stderr) scrub the secret values the process knows from
 * everything written to it, by the CLI or by a tool's own `console.log`: the terminal is one of the
 * channels secrets must not reach. Chunks are scrubbed as text only when a secret is known.
 */
export function scrubWrites(stream: OutStream): void {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!knowsSecrets()) return write(chunk, ...rest)
    const encoding = typeof rest[0] === 'string' ? rest[0] : 'utf8'
    if (typeof chunk === 'string' && (encoding === 'utf8' || encoding === 'utf-8')) return write(scrubValues(chunk), ...rest)
    if (chunk instanceof Uint8Array) {
      const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8')
      const scrubbed = scrubValues(text)
      if (scrubbed !== text) return write(scrubbed, ...rest)
    }
    return write(chunk, ...rest)
  }) as OutStream['write']
}
