/**
 * A process-level guard for the whole suite: a promise rejection nobody handled, or an exception
 * nobody caught, fails the test it happened in (a host process would have crashed there). Vitest
 * reports such errors at the end of a run too; this names the test and fails it where it happened.
 */
import { afterEach } from 'vitest'

const escaped: { kind: string; error: unknown }[] = []

process.on('unhandledRejection', (error) => {
  escaped.push({ kind: 'unhandled rejection', error })
})
process.on('uncaughtException', (error) => {
  escaped.push({ kind: 'uncaught exception', error })
})

afterEach(async () => {
  // Node reports an unhandled rejection once the microtask queue drains after it: let it.
  await new Promise((resolve) => setImmediate(resolve))
  if (escaped.length === 0) return
  const found = escaped.splice(0)
  const lines = found.map(({ kind, error }) => `${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  throw new Error(`the process would have crashed during this test:\n${lines.join('\n')}`)
})
