/**
 * A typed resource key. Two tokens with the same `id` name the same resource: tool and plugin files
 * are bundled one by one, so a token module they share is evaluated once per bundle, and identity
 * by object would split one seam into many.
 */
export interface Token<T> {
  readonly id: string
  /** Phantom field carrying `T`; never set. */
  readonly __type?: T
}

export function createToken<T>(id: string): Token<T> {
  if (typeof id !== 'string' || id.trim() === '') throw new TypeError('createToken: id must be a non-empty string')
  return Object.freeze({ id })
}

/** A plugin's resources: what it provides, and what it can see from its ancestors. */
export interface Resources {
  /** Provides `value` under `token` in this plugin scope; `dispose` runs when the scope is disposed. */
  provide<T>(token: Token<T>, value: T, dispose?: () => unknown): void
  /** The nearest provided value (own scope first, then ancestors), or `undefined`. */
  get<T>(token: Token<T>): T | undefined
}
