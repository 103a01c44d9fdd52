import { SeamError } from '../errors.js'

interface Registration<T> {
  readonly scope: string
  readonly provider: T
}

/**
 * Providers by scope. `'global'` providers are visible to every owner; a provider registered under
 * an owner id is visible only to that owner and replaces a global provider with the same id (in the
 * global's position). Disposers are idempotent and remove only their own registration.
 */
export class SeamProviderRegistry<T extends { readonly id: string }> {
  readonly #registrations: Registration<T>[] = []
  readonly #kind: string

  constructor(kind = 'provider') {
    this.#kind = kind
  }

  register(scope: string, provider: T): () => void {
    if (typeof scope !== 'string' || scope.trim() === '') {
      throw new SeamError('INVALID_PLUGIN', `${this.#kind} scope must be 'global' or an owner id`)
    }
    if (typeof provider?.id !== 'string' || provider.id.trim() === '') {
      throw new SeamError('INVALID_PLUGIN', `${this.#kind} must have a non-empty string id`)
    }
    if (this.#registrations.some((r) => r.scope === scope && r.provider.id === provider.id)) {
      throw new SeamError(
        'DUPLICATE_PROVIDER',
        `${this.#kind} "${provider.id}" is already registered in scope "${scope}"`,
        { details: { id: provider.id, scope }, hint: 'dispose the earlier registration first, or use another id' },
      )
    }
    const registration: Registration<T> = { scope, provider }
    this.#registrations.push(registration)
    return () => {
      const index = this.#registrations.indexOf(registration)
      if (index >= 0) this.#registrations.splice(index, 1)
    }
  }

  /** Providers visible to `scope` (an owner id, or `'global'`), in registration order. */
  getFor(scope: string): T[] {
    const visible: T[] = []
    const scoped = this.#registrations.filter((r) => r.scope === scope && scope !== 'global')
    for (const r of this.#registrations) {
      if (r.scope !== 'global') continue
      const replacement = scoped.find((s) => s.provider.id === r.provider.id)
      visible.push(replacement ? replacement.provider : r.provider)
    }
    for (const s of scoped) {
      if (!visible.includes(s.provider)) visible.push(s.provider)
    }
    return visible
  }

  getById(scope: string, id: string): T | undefined {
    return this.getFor(scope).find((p) => p.id === id)
  }

  /** Every distinct scope with at least one registration. */
  scopes(): string[] {
    return [...new Set(this.#registrations.map((r) => r.scope))]
  }

  get size(): number {
    return this.#registrations.length
  }

  clear(): void {
    this.#registrations.length = 0
  }
}
