import net from 'node:net'
import { onTestFinished } from 'vitest'

/**
 * A TCP proxy to the database at `url` that stops forwarding, both ways and without closing
 * anything, once `stall()` is called: what a dead network link looks like to a client. Torn down
 * when the test finishes. Resolves with the URL that goes through it.
 */
export async function stallingProxy(url: string): Promise<{ url: string; stall(): void }> {
  const target = new URL(url)
  let stalled = false
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => sockets.delete(socket))
    }
    client.on('data', (chunk) => stalled || upstream.write(chunk))
    upstream.on('data', (chunk) => stalled || client.write(chunk))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  const proxied = new URL(url)
  proxied.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`
  return {
    url: proxied.href,
    stall: () => {
      stalled = true
    },
  }
}
