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
    const head = Buffer.concat(this.#head).toString('utf8')
    const tail = Buffer.concat(this.#tail).toString('utf8')
    if (!this.truncated) return head + tail
    const dropped = this.#total - this.#headBytes - this.#tailBytes
    return `${head}\n[… ${dropped} bytes omitted …]\n${tail}`
  }
}
