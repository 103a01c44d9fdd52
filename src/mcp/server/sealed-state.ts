import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { SeamError } from '../../errors.js'

/** Seals a value into an opaque string only this server (or one configured with the same key) can open. */
export interface SealedStateCodec<T> {
  mint(payload: T): string
  /** The payload; throws for a state that was tampered with, expired, or sealed with another key. */
  open(state: string): T
}

const PREFIX = 's1.'
const IV_BYTES = 12
const TAG_BYTES = 16
/** Binds a sealed state to its use: the same key sealing something else cannot be swapped in. */
const AAD = Buffer.from('seam-runtime mcp requestState v1')

/**
 * AES-256-GCM: the client holds the state between rounds but can neither read it (the parked
 * call's resume token is inside) nor change it (the tag authenticates it). The key is `secret`
 * stretched with HKDF-SHA-256 (so several processes configured alike open each other's states),
 * or a random one for this process alone.
 */
export function createSealedStateCodec<T>(options: { secret?: string | Uint8Array; ttlSeconds: number }): SealedStateCodec<T> {
  const key = keyOf(options.secret)
  return {
    mint(payload) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(AAD)
      const plain = Buffer.from(JSON.stringify({ p: payload, exp: Math.floor(Date.now() / 1000) + options.ttlSeconds }))
      const sealed = Buffer.concat([cipher.update(plain), cipher.final()])
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')
    },
    open(state) {
      if (typeof state !== 'string' || !state.startsWith(PREFIX)) throw new Error('malformed')
      const text = state.slice(PREFIX.length)
      const bytes = Buffer.from(text, 'base64url')
      // Node decodes past characters it cannot use: a state with one appended must not open as the original.
      if (bytes.length <= IV_BYTES + TAG_BYTES || bytes.toString('base64url') !== text) throw new Error('malformed')
      let plain: Buffer
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES)).setAAD(AAD)
        decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
        plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()])
      } catch {
        throw new Error('not sealed by this server')
      }
      const envelope = JSON.parse(plain.toString('utf8')) as { p: T; exp: unknown }
      if (typeof envelope.exp !== 'number' || envelope.exp < Math.floor(Date.now() / 1000)) throw new Error('expired')
      return envelope.p
    },
  }
}

function keyOf(secret: string | Uint8Array | undefined): Buffer {
  if (secret === undefined) return randomBytes(32)
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret)
  if (bytes.length < 32) {
    throw new SeamError('INVALID_OPTIONS', `the request state key must be at least 32 bytes, got ${bytes.length}`, { hint: 'generate one with `openssl rand -base64 32`' })
  }
  return Buffer.from(hkdfSync('sha256', bytes, Buffer.alloc(0), 'seam-runtime mcp requestState', 32))
}
