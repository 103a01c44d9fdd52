import type { ToolLogger } from '../features/define-tool.js'

export type LogLevel = 'debug' | 'info' | 'warn'
export type LogSink = (level: LogLevel, scope: string, message: string, fields?: Record<string, unknown>) => void

const SECRET_KEY = /pass(word|wd)?|secret|token|api[-_]?key|authorization|cookie|credential|private[-_]?key|access[-_]?key/i

/** Replaces values under secret-looking keys, recursively; never mutates its input. */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > 8) return value
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? '[redacted]' : redact(v, depth + 1)
  return out
}

/** A scoped logger whose fields are redacted before they reach the sink. */
export class Logger implements ToolLogger {
  readonly #sink: LogSink
  readonly #scope: string

  constructor(sink: LogSink, scope = 'seam') {
    this.#sink = sink
    this.#scope = scope
  }

  child(scope: string): Logger {
    return new Logger(this.#sink, scope)
  }

  debug(message: string, fields?: Record<string, unknown>): void {
    this.#emit('debug', message, fields)
  }

  info(message: string, fields?: Record<string, unknown>): void {
    this.#emit('info', message, fields)
  }

  warn(message: string, fields?: Record<string, unknown>): void {
    this.#emit('warn', message, fields)
  }

  #emit(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
    try {
      this.#sink(level, this.#scope, message, fields === undefined ? undefined : (redact(fields) as Record<string, unknown>))
    } catch {
      // A failing sink must never fail a call.
    }
  }
}

export const silentLogger = new Logger(() => {})
