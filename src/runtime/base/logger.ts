import type { ToolLogger } from '../../features/define-tool.js'
import { redactSecrets } from './privacy.js'
import { redactText } from './redact.js'

export type LogLevel = 'debug' | 'info' | 'warn'
export type LogSink = (level: LogLevel, scope: string, message: string, fields?: Record<string, unknown>) => void

/**
 * Replaces values under secret-looking keys and secrets inside strings (the journal's one redactor),
 * recursively; never mutates its input. Nesting deeper than 8 levels is replaced too, rather than
 * logged unexamined.
 */
export function redact(value: unknown): unknown {
  return redactSecrets(value, 9)
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
      this.#sink(level, this.#scope, redactText(message), fields === undefined ? undefined : (redact(fields) as Record<string, unknown>))
    } catch {
      // A failing sink must never fail a call.
    }
  }
}

export const silentLogger = new Logger(() => {})
