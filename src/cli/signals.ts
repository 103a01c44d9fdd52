import type { LogSink } from '../runtime/base/logger.js'
import { line, type OutStream, type Style } from './io.js'

/**
 * Resolves on the first SIGINT or SIGTERM, so a long-running command can close cleanly; a
 * second signal while closing exits at once (130).
 */
export function untilStopped(): { promise: Promise<NodeJS.Signals>; signal: AbortSignal; dispose(): void } {
  const controller = new AbortController()
  let resolve!: (signal: NodeJS.Signals) => void
  const promise = new Promise<NodeJS.Signals>((r) => {
    resolve = r
  })
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130)
    controller.abort()
    resolve(signal)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return {
    promise,
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    },
  }
}

/** Runtime and tool log lines for a terminal: warnings always, info too, debug with `--debug`. */
export function logSink(out: OutStream, style: Style, debug: boolean): LogSink {
  return (level, scope, message, fields) => {
    if (level === 'debug' && !debug) return
    const tag = level === 'warn' ? style.yellow('warning:') : style.dim(`${level}:`)
    const extra = fields && Object.keys(fields).length > 0 ? ` ${style.dim(json(fields))}` : ''
    line(out, `${tag} ${style.dim(`[${scope}]`)} ${message}${extra}`)
  }
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value)
  } catch {
    return String(value)
  }
}
