import { createHash, timingSafeEqual } from 'node:crypto'

/** The bearer token check of the MCP endpoint: the configured token is kept as its digest only. */

/** The SHA-256 digest of a token. */
export function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

/** Compares digests, so neither the token's length nor its prefix leaks through timing. */
export function bearerMatches(authorization: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '')
  const same = timingSafeEqual(digest(match?.[1] ?? ''), expected)
  return match !== null && same
}
