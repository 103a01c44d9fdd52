import type { Readable, Writable } from 'node:stream'

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
