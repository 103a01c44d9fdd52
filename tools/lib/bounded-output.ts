/**
 * Collects a stream's bytes up to `max`: past that it keeps the first and the last half and counts
 * what it dropped, since a command's first lines (the error) and last lines (the summary) matter most.
 */
export class BoundedOutput {
  readonly #half: number
  #head: Buffer[] = []
  #headBytes = 0
  #tail: Buffer[] = []
  #tailBytes = 0
  #total = 0

  constructor(max: number) {
    this.#half = Math.max(1, Math.floor(max / 2))
  }

  get truncated(): boolean {
    return this.#total > this.#headBytes + this.#tailBytes
  }

  push(chunk: Buffer): void {
    this.#total += chunk.byteLength
    if (this.#headBytes < this.#half) {
      const take = chunk.subarray(0, this.#half - this.#headBytes)
      this.#head.push(take)
      this.#headBytes += take.byteLength
      chunk = chunk.subarray(take.byteLength)
      if (chunk.byteLength === 0) return
    }
    this.#tail.push(chunk)
    this.#tailBytes += chunk.byteLength
    while (this.#tailBytes - this.#tail[0]!.byteLength >= this.#half) this.#tailBytes -= this.#tail.shift()!.byteLength
    if (this.#tailBytes > this.#half) {
      const cut = this.#tailBytes - this.#half
      this.#tail[0] = this.#tail[0]!.subarray(cut)
      this.#tailBytes -= cut
    }
  }

  text(): string {
    // Decoded whole when nothing was dropped: a character split between head and tail stays one.
    if (!this.truncated) return Buffer.concat([...this.#head, ...this.#tail]).toString('utf8')
    const head = wholeCharactersOf(Buffer.concat(this.#head), 'end').toString('utf8')
    const tail = wholeCharactersOf(Buffer.concat(this.#tail), 'start').toString('utf8')
    const dropped = this.#total - this.#headBytes - this.#tailBytes
    return `${head}\n[… ${dropped} bytes omitted …]\n${tail}`
  }
}

/** `bytes` without the part of a UTF-8 character cut at its `end` (or `start`), so no `�` appears there. */
function wholeCharactersOf(bytes: Buffer, side: 'start' | 'end'): Buffer {
  const continuation = (byte: number) => (byte & 0xc0) === 0x80
  if (side === 'start') {
    let start = 0
    while (start < bytes.length && start < 3 && continuation(bytes[start]!)) start++
    return bytes.subarray(start)
  }
  // Back to the lead byte of the last character; drop it when its sequence runs past the end.
  let lead = bytes.length - 1
  while (lead > 0 && bytes.length - lead < 4 && continuation(bytes[lead]!)) lead--
  const first = bytes[lead]
  if (first === undefined) return bytes
  const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1
  return lead + length > bytes.length ? bytes.subarray(0, lead) : bytes
}
