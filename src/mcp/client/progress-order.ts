/** A transport's inbound hook, as both client transports have it (HTTP passes a second argument). */
interface Receiver {
  onmessage?: (message: unknown, ...rest: unknown[]) => void
}

/**
 * Keeps a request's last progress report from being lost. The SDK hands a notification to its
 * handler a microtask after it arrives, but a response at once, and forgets the request's progress
 * token with its response: a report read in the same chunk as the result (a server that reports
 * 100 % and then answers) reached no one. Here a response that follows a progress notification in
 * the same turn of the event loop is delivered on the next one, after the report.
 * Call after `client.connect()`, which sets the transport's `onmessage`.
 */
export function keepProgressOrder(receiver: object): void {
  const transport = receiver as Receiver
  const deliver = transport.onmessage
  if (deliver === undefined) return
  let reported = false
  transport.onmessage = (message, ...extra) => {
    const { method, id } = message as { method?: unknown; id?: unknown }
    if (method === 'notifications/progress') {
      if (!reported) {
        reported = true
        setImmediate(() => {
          reported = false
        })
      }
    } else if (reported && method === undefined && id !== undefined) {
      setImmediate(() => deliver.call(transport, message, ...extra))
      return
    }
    deliver.call(transport, message, ...extra)
  }
}
