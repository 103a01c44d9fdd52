import { DEFAULT_RECONNECT, type McpReconnectOptions } from './options.js'

/**
 * The wait before retry number `retry` (0-based) since the last good connection: doubling from
 * `initialDelayMs`, capped at `maxDelayMs`, so a flapping server is retried fast and a dead one cheaply.
 */
export function backoffDelay(retry: number, options: McpReconnectOptions = {}): number {
  const initial = Math.max(1, options.initialDelayMs ?? DEFAULT_RECONNECT.initialDelayMs)
  const max = Math.max(initial, options.maxDelayMs ?? DEFAULT_RECONNECT.maxDelayMs)
  return Math.min(max, initial * 2 ** Math.min(retry, 30))
}
