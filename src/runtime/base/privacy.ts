import { createHash } from 'node:crypto'
import { SeamError } from '../../errors.js'
import { isSecretKey, knowsSecrets, REDACTED, redactText, scrubValues } from './redact.js'
import type { ContentBlock, JournalEvent } from '../../seams/journal.js'

export const DEFAULT_MAX_PAYLOAD_BYTES = 64 * 1024
/** A truncated payload keeps a marker of about 100 bytes (length and sha256): limits below this could not hold it. */
export const MIN_MAX_PAYLOAD_BYTES = 256

/** `maxPayloadBytes` from a store's options, checked: an integer of at least `MIN_MAX_PAYLOAD_BYTES`. */
export function payloadLimit(options: PrivacyOptions): number {
  const limit = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES
  if (!Number.isSafeInteger(limit) || limit < MIN_MAX_PAYLOAD_BYTES) {
    throw new SeamError('INVALID_OPTIONS', `maxPayloadBytes must be an integer of at least ${MIN_MAX_PAYLOAD_BYTES}, got ${String(options.maxPayloadBytes)}`)
  }
  return limit
}

export interface PrivacyOptions {
  /**
   * Arguments, text content, image and audio data, embedded resources and approval summaries above this many UTF-8 bytes are
   * stored as a prefix plus a marker with their byte length and sha256 (default 64 KiB).
   */
  readonly maxPayloadBytes?: number
}

/**
 * Every secret key contains one of these fragments (`\u` covers keys written with JSON escapes), and
 * so does every shape `redactText` looks for (`basic`, `://`): arguments that match none are neither
 * parsed nor scanned again, only scrubbed of known secret values. This runs on every append.
 */
// pass|pw(d)|secret|session|signature|token|key|auth|cookie|credential|bearer|basic|dsn|://|\u, with the
// shared prefixes factored out: V8 scans an alternation of many words case-insensitively about twice as fast so.
const MAYBE_SECRET = /p(?:ass|w)|s(?:e(?:cret|ssion)|ignature)|token|key|auth|c(?:ookie|redential)|b(?:earer|asic)|dsn|:\/\/|\\u/i
const encoder = new TextEncoder()

export { isSecretKey, REDACTED }

/**
 * Replaces values under secret-looking keys, at any depth, with `"[redacted]"`, then passes the text
 * through the one redactor (`redactText`: secrets by shape and by value). Text that does not parse as
 * JSON (truncated, a trailing comma) is redacted by shape; JSON with nothing to redact keeps its spelling.
 */
export function redactArguments(raw: string): string {
  if (!MAYBE_SECRET.test(raw)) return scrubValues(raw)
  try {
    const parsed: unknown = JSON.parse(raw)
    const redacted = redactValue(parsed)
    // Unchanged, but the text may still hold a secret the parse dropped: `{"password":"x","password":null}`.
    if (redacted === parsed && !hasSecretKey(parsed)) return redactText(raw)
    return redactText(JSON.stringify(redacted))
  } catch (error) {
    if (error instanceof SyntaxError) return redactText(raw)
    // Nested too deeply to walk: fail closed rather than store secrets we could not look for.
    return `${REDACTED} (arguments not inspected: ${fingerprint(raw)})`
  }
}

/** Whether a secret-looking key appears anywhere in `value`. */
function hasSecretKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false
  if (Array.isArray(value)) return value.some(hasSecretKey)
  for (const [key, item] of Object.entries(value)) if (isSecretKey(key) || hasSecretKey(item)) return true
  return false
}

/**
 * `value` with the values under secret-looking keys replaced by `"[redacted]"`, at any depth, and
 * every string passed through `redactText` (the journal's rules): for text made from tool arguments,
 * such as an approval summary, and for log fields.
 * Nesting deeper than `maxDepth` is replaced too, rather than looked through.
 */
export function redactSecrets(value: unknown, maxDepth = 32, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value)
  if (value === null || typeof value !== 'object') return value
  if (depth >= maxDepth) return '[…]'
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, maxDepth, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) out[key] = isSecretKey(key) ? REDACTED : redactSecrets(item, maxDepth, depth + 1)
  return out
}

/** The value with secrets replaced; the same object when nothing changed. */
function redactValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    value.forEach((item, index) => {
      const next = redactValue(item)
      if (next !== item) {
        copy ??= value.slice()
        copy[index] = next
      }
    })
    return copy ?? value
  }
  let copy: Record<string, unknown> | undefined
  for (const [key, item] of Object.entries(value)) {
    const next = item !== null && isSecretKey(key) ? REDACTED : redactValue(item)
    if (next !== item) {
      copy ??= { ...value }
      copy[key] = next
    }
  }
  return copy ?? value
}

/**
 * `text` when it fits in `maxBytes` UTF-8 bytes; otherwise its longest prefix that, followed by
 * `…[truncated: N bytes, sha256:HEX]`, still fits (never splitting a character).
 */
export function truncateText(text: string, maxBytes: number): string {
  // A UTF-16 unit is 1–3 UTF-8 bytes (a surrogate pair 4 for 2 units): skip the count when it cannot matter.
  if (text.length * 3 <= maxBytes) return text
  if (text.length <= maxBytes && Buffer.byteLength(text, 'utf8') <= maxBytes) return text
  const marker = `…[truncated: ${fingerprint(text)}]`
  const budget = Math.max(0, maxBytes - Buffer.byteLength(marker, 'utf8'))
  const { read } = encoder.encodeInto(text, new Uint8Array(budget))
  return text.slice(0, read) + marker
}

function fingerprint(text: string): string {
  const bytes = Buffer.byteLength(text, 'utf8')
  return `${bytes} bytes, sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`
}

/** The event as a journal may store it: secrets redacted, large payloads truncated. Unchanged events are returned as is. */
export function protectEvent(event: JournalEvent, maxBytes: number = DEFAULT_MAX_PAYLOAD_BYTES): JournalEvent {
  switch (event.kind) {
    case 'tool/call': {
      // The name is the model's text too: a model can be talked into sending a secret as one.
      const stored = truncateText(redactArguments(event.arguments), maxBytes)
      const name = scrubValues(event.name)
      return stored === event.arguments && name === event.name ? event : { ...event, name, arguments: stored }
    }
    case 'approval/asked': {
      const summary = truncateText(redactText(event.summary), maxBytes)
      const reason = truncateText(redactText(event.reason), maxBytes)
      const name = scrubValues(event.name)
      return summary === event.summary && reason === event.reason && name === event.name ? event : { ...event, name, summary, reason }
    }
    case 'tool/result': {
      const content = protectContent(event.content, maxBytes)
      return content === event.content ? event : { ...event, content }
    }
    case 'question/asked': {
      const message = truncateText(redactText(event.message), maxBytes)
      const schema = truncateText(event.schema, maxBytes)
      return message === event.message && schema === event.schema ? event : { ...event, message, schema }
    }
    case 'question/answered': {
      // What a person typed is redacted as arguments are: a field may well hold a password.
      if (event.content === undefined) return event
      const content = truncateText(redactArguments(event.content), maxBytes)
      return content === event.content ? event : { ...event, content }
    }
    default:
      return event
  }
}

/**
 * What a store that redacts when events are read (the memory journal) keeps at append: `event` with
 * the known secret values scrubbed (`registerSecret`'s and the environment's, which may change before
 * the read), as is when there are none. Redacting by shape is a pure function of the text, so it can
 * wait for `protectEvent` at read. `undefined` when a payload may exceed `maxBytes`: redacting after a
 * cut could miss a secret the cut split, so such an event is protected whole at once.
 */
export function scrubEvent(event: JournalEvent, maxBytes: number): JournalEvent | undefined {
  // With no secret known (the usual case), only the sizes are looked at: a fifth of what the memory
  // journal's append costs is scrubbing strings for nothing.
  const scrub = knowsSecrets()
  switch (event.kind) {
    case 'tool/call': {
      if (!fits(event.arguments, maxBytes)) return undefined
      if (!scrub) return event
      const args = scrubValues(event.arguments)
      const name = scrubValues(event.name)
      return args === event.arguments && name === event.name ? event : { ...event, name, arguments: args }
    }
    case 'approval/asked': {
      if (!fits(event.summary, maxBytes) || !fits(event.reason, maxBytes)) return undefined
      if (!scrub) return event
      const summary = scrubValues(event.summary)
      const reason = scrubValues(event.reason)
      const name = scrubValues(event.name)
      return summary === event.summary && reason === event.reason && name === event.name ? event : { ...event, name, summary, reason }
    }
    case 'question/asked':
    case 'question/answered':
      // Rare, and small: protected whole at once.
      return undefined
    case 'tool/result': {
      const { content } = event
      let copy: ContentBlock[] | undefined
      // An index loop, no closure: this runs on every tool/result.
      for (let index = 0; index < content.length; index += 1) {
        const block = content[index]!
        if (!blockFits(block, maxBytes)) return undefined
        if (!scrub) continue
        const next = scrubBlock(block)
        if (next !== block) {
          copy ??= content.slice()
          copy[index] = next
        }
      }
      return copy === undefined ? event : { ...event, content: copy }
    }
    default:
      return event
  }
}

/** Fits in `maxBytes` UTF-8 bytes whatever it holds (a UTF-16 unit is at most 3 bytes). */
function fits(text: string, maxBytes: number): boolean {
  return text.length * 3 <= maxBytes
}

function blockFits(block: ContentBlock, maxBytes: number): boolean {
  switch (block.type) {
    case 'text':
      return fits(block.text, maxBytes)
    case 'image':
    case 'audio':
      return fits(block.data, maxBytes)
    case 'resource':
      return fits('text' in block.resource ? block.resource.text : block.resource.blob, maxBytes)
    default:
      return true
  }
}

/** The block with the known secret values scrubbed from its text (see `scrubEvent`). */
function scrubBlock(block: ContentBlock): ContentBlock {
  if (block.type === 'text') {
    const text = scrubValues(block.text)
    return text === block.text ? block : { ...block, text }
  }
  if (block.type === 'resource' && 'text' in block.resource) {
    const text = scrubValues(block.resource.text)
    return text === block.resource.text ? block : { ...block, resource: { ...block.resource, text } }
  }
  return block
}

/** Content blocks with secrets redacted from their text (the journal's rules, no size bound): for a failure's text outside the journal. */
export function redactedContent(content: readonly ContentBlock[]): ContentBlock[] {
  return protectContent(content, Number.POSITIVE_INFINITY)
}

function protectContent(content: readonly ContentBlock[], maxBytes: number): ContentBlock[] {
  // An index loop, no closure: this runs on every tool/result.
  let copy: ContentBlock[] | undefined
  for (let index = 0; index < content.length; index += 1) {
    const block = content[index]!
    const next = protectBlock(block, maxBytes)
    if (next !== block) {
      copy ??= content.slice()
      copy[index] = next
    }
  }
  return copy ?? (content as ContentBlock[])
}

/** The block with its one large payload (text, base64 data, a resource's text or blob) truncated. */
function protectBlock(block: ContentBlock, maxBytes: number): ContentBlock {
  switch (block.type) {
    case 'text': {
      const text = truncateText(redactText(block.text), maxBytes)
      return text === block.text ? block : { ...block, text }
    }
    case 'image':
    case 'audio': {
      const data = truncateText(block.data, maxBytes)
      return data === block.data ? block : { ...block, data }
    }
    case 'resource': {
      const resource = block.resource
      if ('text' in resource) {
        const text = truncateText(redactText(resource.text), maxBytes)
        return text === resource.text ? block : { ...block, resource: { ...resource, text } }
      }
      const blob = truncateText(resource.blob, maxBytes)
      return blob === resource.blob ? block : { ...block, resource: { ...resource, blob } }
    }
    default:
      return block
  }
}
