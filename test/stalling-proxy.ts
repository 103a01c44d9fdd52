import net from 'node:net'
import { onTestFinished } from 'vitest'

/**
 * A TCP proxy to the database at `url` that stops forwarding, both ways and without closing
 * anything, once `stall()` is called: what a dead network link looks like to a client. What arrives
 * while stalled is held, in order, and delivered on `resume()`: a link that comes back. Torn down
 * when the test finishes. Resolves with the URL that goes through it.
 */
export async function stallingProxy(url: string): Promise<{ url: string; stall(): void; resume(): void }> {
  const target = new URL(url)
  let stalled = false
  const held: [net.Socket, Buffer][] = []
  const sockets = new Set<net.Socket>()
  const forward = (to: net.Socket) => (chunk: Buffer) => {
    if (stalled) held.push([to, chunk])
    else to.write(chunk)
  }
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => sockets.delete(socket))
    }
    client.on('data', forward(upstream))
    upstream.on('data', forward(client))
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
    resume: () => {
      stalled = false
      for (const [to, chunk] of held.splice(0)) if (!to.destroyed) to.write(chunk)
    },
  }
}
