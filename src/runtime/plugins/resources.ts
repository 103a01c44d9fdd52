import { SeamError } from '../../errors.js'
import type { Resources, Token } from '../../seams/tokens.js'

/** The resource table of one plugin scope. */
export class ResourceTable implements Resources {
  readonly #values = new Map<string, unknown>()
  readonly #parent: ResourceTable | undefined
  readonly #owner: string
  readonly #onDispose: (dispose: () => unknown, label: string) => void

  constructor(owner: string, parent: ResourceTable | undefined, onDispose: (dispose: () => unknown, label: string) => void) {
    this.#owner = owner
    this.#parent = parent
    this.#onDispose = onDispose
  }

  provide<T>(token: Token<T>, value: T, dispose?: () => unknown): void {
    if (this.#values.has(token.id)) {
      throw new SeamError('DUPLICATE_RESOURCE', `resource "${token.id}" is already provided by plugin "${this.#owner}"`)
    }
    this.#values.set(token.id, value)
    this.#onDispose(() => {
      this.#values.delete(token.id)
      return dispose?.()
    }, `resource ${token.id}`)
  }

  get<T>(token: Token<T>): T | undefined {
    if (this.#values.has(token.id)) return this.#values.get(token.id) as T
    return this.#parent?.get(token)
  }

  use<T>(token: Token<T>): T {
    const value = this.get(token)
    if (value === undefined) {
      throw new SeamError('MISSING_RESOURCE', `no plugin provides resource "${token.id}" to "${this.#owner}"`)
    }
    return value
  }

  /** Tokens provided in this very scope (not ancestors). */
  has(token: Token<unknown>): boolean {
    return this.#values.has(token.id)
  }
}
