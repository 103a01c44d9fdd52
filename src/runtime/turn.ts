import type { AgentCapabilities } from './capability-ingress.js'
import type { Generation } from './generation.js'
import type { TurnToolRuntime } from './turn-tool-runtime.js'
import type { TurnEnvelope } from './turn-ingress.js'

/**
 * One agent turn, leased on the generation it began in: it sees that generation's frozen
 * capabilities and runs its tools until `end()`, whatever is published meanwhile.
 */
export class Turn {
  readonly envelope: TurnEnvelope
  readonly capabilities: AgentCapabilities
  readonly tools: TurnToolRuntime
  readonly #generation: Generation
  readonly #end: () => Promise<void>
  #ended: Promise<void> | undefined

  constructor(parts: { envelope: TurnEnvelope; generation: Generation; capabilities: AgentCapabilities; tools: TurnToolRuntime; end: () => Promise<void> }) {
    this.envelope = parts.envelope
    this.capabilities = parts.capabilities
    this.tools = parts.tools
    this.#generation = parts.generation
    this.#end = parts.end
  }

  get turnId(): string {
    return this.envelope.turnId
  }

  /** The number of the generation this turn is leased on. */
  get generation(): number {
    return this.#generation.number
  }

  get ended(): boolean {
    return this.#ended !== undefined
  }

  /**
   * Refuses new calls (`TURN_ENDED`), lets the calls in flight settle and journal their results
   * (each within its deadlines), then journals `turn/end` and releases the lease. Idempotent.
   */
  end(): Promise<void> {
    this.#ended ??= this.#end()
    return this.#ended
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.end()
  }
}
