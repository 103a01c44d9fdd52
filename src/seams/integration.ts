import { SeamError } from '../errors.js'
import { createToken } from './tokens.js'
import { SeamProviderRegistry } from './registry.js'
import type { SkillService, ToolExecutionResult, ToolService } from './types.js'
import type { ResourceService } from './resources.js'

const MIGRATION =
  'is deprecated and fails closed: project the capability into a turn and call it through TurnToolRuntime (turn.tools.execute)'

/**
 * The Root Capability Seam: remote and registry-backed providers, owned by the root scope and
 * provided under `capabilitySeamToken`. It is read by `CapabilityIngress` once per generation.
 */
export class SeamIntegration {
  readonly tools = new SeamProviderRegistry<ToolService>('tool service')
  readonly skills = new SeamProviderRegistry<SkillService>('skill service')
  readonly resources = new SeamProviderRegistry<ResourceService>('resource service')
  #disposed = false

  registerToolService(scope: string, service: ToolService): () => void {
    this.#assertOpen()
    if (typeof service?.schema !== 'function' || typeof service.execute !== 'function') {
      throw new SeamError('INVALID_PLUGIN', 'a ToolService needs schema() and execute() methods')
    }
    return this.tools.register(scope, service)
  }

  registerSkillService(scope: string, service: SkillService): () => void {
    this.#assertOpen()
    if (typeof service?.catalog !== 'function' || typeof service.describe !== 'function') {
      throw new SeamError('INVALID_PLUGIN', 'a SkillService needs catalog() and describe() methods')
    }
    return this.skills.register(scope, service)
  }

  registerResourceService(scope: string, service: ResourceService): () => void {
    this.#assertOpen()
    if (typeof service?.list !== 'function' || typeof service.read !== 'function') {
      throw new SeamError('INVALID_PLUGIN', 'a ResourceService needs list() and read() methods')
    }
    return this.resources.register(scope, service)
  }

  get disposed(): boolean {
    return this.#disposed
  }

  /** Removes every registration. Idempotent. */
  dispose(): void {
    this.#disposed = true
    this.tools.clear()
    this.skills.clear()
    this.resources.clear()
  }

  /** @deprecated Never calls a provider; resolves to a fail-closed migration error. */
  async executeTool(name: string, _args?: unknown): Promise<ToolExecutionResult> {
    return { success: false, error: `SeamIntegration.executeTool("${String(name)}") ${MIGRATION}` }
  }

  /** @deprecated Never calls a provider; resolves to a fail-closed migration error. */
  async invokeSkill(id: string): Promise<ToolExecutionResult> {
    return {
      success: false,
      error: `SeamIntegration.invokeSkill("${String(id)}") is deprecated and fails closed: read skills from turn.capabilities.skills`,
    }
  }

  #assertOpen(): void {
    if (this.#disposed) throw new SeamError('CLOSED', 'this SeamIntegration has been disposed')
  }
}

/** The root resource `CapabilityIngress` reads seam providers from. */
export const capabilitySeamToken = createToken<SeamIntegration>('capability-seam')

/** @deprecated Kept for source compatibility only; nothing consumes it. Use `capabilitySeamToken`. */
export const seamIntegrationToken: unique symbol = Symbol('seam-integration')
