import { isIP } from 'node:net'
import { hostname, networkInterfaces } from 'node:os'
import { localhostAllowedHostnames } from '@modelcontextprotocol/server'

/** Whether `host` is a loopback name or address (served without a token). */
export function isLoopback(host: string): boolean {
  const h = unbracket(host).toLowerCase()
  if (h === 'localhost') return true
  if (isIP(h) === 4) return h.startsWith('127.')
  return h === '::1' || h.startsWith('::ffff:127.')
}

/** Whether `host` binds every interface (`0.0.0.0`, `::`): no one can open a URL naming it. */
export function isWildcard(host: string): boolean {
  const h = unbracket(host)
  return h === '0.0.0.0' || h === '::' || h === '0:0:0:0:0:0:0:0'
}

/**
 * The `Host` names a request may carry (and a browser `Origin` may name): the loopback names, the
 * extra ones configured, and the names the server was bound for: the bound address itself, or on a
 * wildcard bind this machine's name and each of its addresses. A wildcard address is never one of
 * them: a URL naming it is not an address of this server, and a page claiming it is refused.
 */
export function allowedHostnames(host: string, extra: readonly string[]): string[] {
  const names = new Set([...localhostAllowedHostnames(), ...extra])
  if (isWildcard(host)) {
    names.add(hostname())
    for (const entry of interfaceAddresses()) names.add(bracket(entry.address))
  } else {
    names.add(bracket(unbracket(host)))
  }
  return [...names]
}

/**
 * The URLs a person can open for a server bound to `host` on `port`, the first one the one to share:
 * for a wildcard bind the machine's first external address (IPv4 first), then `127.0.0.1`; otherwise
 * the bound host alone.
 */
export function reachableUrls(host: string, port: number, path: string): string[] {
  const url = (name: string) => `http://${bracket(name)}:${port}${path}`
  if (!isWildcard(host)) return [url(unbracket(host))]
  // A link-local IPv6 address needs a zone id in a URL, which browsers do not take: left out.
  const external = interfaceAddresses().filter((entry) => !entry.internal && !entry.address.toLowerCase().startsWith('fe80:'))
  const first = external.find((entry) => entry.family === 'IPv4') ?? external[0]
  return [...(first ? [url(first.address)] : []), url('127.0.0.1')]
}

function interfaceAddresses() {
  return Object.values(networkInterfaces()).flatMap((entries) => entries ?? [])
}

function unbracket(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1')
}

function bracket(address: string): string {
  return isIP(address) === 6 ? `[${address}]` : address
}
