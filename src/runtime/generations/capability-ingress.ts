import { SeamError } from '../../errors.js'
import type { PermissionHost } from '../../seams/approval.js'
import type { AgentCapabilities, ToolCapability } from '../../seams/capabilities.js'
import type { OriginScope, TurnEnvelope } from '../../seams/types.js'
import { untilDue } from '../base/abort.js'
import type { Generation } from './generation.js'
import { type Projection, projectOwner, settled } from './projection.js'

/** Distinct filtered views kept per (generation, owner); past this the oldest is rebuilt on demand. */
const MAX_VIEWS = 64

/**
 * Projects Feature and Seam capabilities into one frozen snapshot per (generation, owner), then
 * filters it per turn. Provider `schema()`/`catalog()`/`describe()` run once per generation and
 * owner; a provider that throws contributes nothing and leaves a diagnostic on the generation.
 */
export class CapabilityIngress {
  readonly #permissions: PermissionHost | undefined
  readonly #permissionTimeoutMs: number | undefined

  /** `permissionTimeoutMs` bounds each permission check of `read` (a hanging host hides the tool). */
  constructor(options: { permissions?: PermissionHost; permissionTimeoutMs?: number } = {}) {
    this.#permissions = options.permissions
    this.#permissionTimeoutMs = options.permissionTimeoutMs
  }

  /**
   * What `owner` sees in `generation`, filtered for `turn`. An owner the generation does not know
   * (not a plugin of its tree, nor a seam scope) is refused with `INVALID_TURN`.
   */
  async read(generation: Generation, owner = 'root', turn?: TurnEnvelope): Promise<AgentCapabilities> {
    if (!generation.owners.has(owner)) {
      throw new SeamError('INVALID_TURN', `invalid turn: owner ${JSON.stringify(owner)} is not a plugin of generation ${generation.number}`, {
        hint: `owners: ${[...generation.owners].sort().join(', ')}`,
      })
    }
    // A projection already made is read as it is: no await, so a turn costs no microtask hop here.
    const projection = settled.get(generation)?.get(owner) ?? (await this.project(generation, owner))
    // A catalog without restricted tools looks the same to every turn.
    if (projection.gated.length === 0) return projection.base
    const granted = await this.#granted(projection.permissions, turn)
    const platform = turn?.origin?.platform
    const scope = turn?.origin?.scope
    const key = `${platform ?? ''}\u0000${scope ?? ''}\u0000${granted.join('')}`
    let view = projection.views.get(key)
    if (view === undefined) {
      const hidden = new Set<ToolCapability>()
      for (const tool of projection.gated) if (!visibleWith(tool, platform, scope, projection.permissions, granted)) hidden.add(tool)
      view = hidden.size === 0 ? projection.base : Object.freeze({ ...projection.base, tools: Object.freeze(projection.tools.filter((tool) => !hidden.has(tool))) })
      if (projection.views.size >= MAX_VIEWS) projection.views.delete(projection.views.keys().next().value!)
      projection.views.set(key, view)
    }
    return view
  }

  /**
   * Asks the permission host about each permission once, all at once: `1` granted, `0` not (a
   * check that throws, rejects, times out or answers anything but `true` is not a grant). Without a
   * turn or a host nothing is granted.
   */
  async #granted(permissions: readonly string[], turn: TurnEnvelope | undefined): Promise<string[]> {
    const host = this.#permissions
    if (permissions.length === 0 || !turn || !host) return permissions.map(() => '0')
    const timeoutMs = this.#permissionTimeoutMs
    const answers = permissions.map((permission) => {
      try {
        const answer = host.check(permission, turn.principal)
        // A check that does not answer in time (or outlasts the turn's abort) is not a grant.
        return answer instanceof Promise && timeoutMs !== undefined ? untilDue(answer, turn.signal, timeoutMs) : answer
      } catch {
        return false
      }
    })
    const settled = answers.some((a) => a !== true && a !== false) ? await Promise.allSettled(answers) : undefined
    return answers.map((answer, i) => {
      const value = settled ? (settled[i]!.status === 'fulfilled' ? (settled[i] as PromiseFulfilledResult<unknown>).value : false) : answer
      return value === true ? '1' : '0'
    })
  }

  /** The owner's unfiltered projection; rejects with `DUPLICATE_CAPABILITY` on a name clash. */
  project(generation: Generation, owner = 'root'): Promise<Projection> {
    let projection = generation.projections.get(owner) as Promise<Projection> | undefined
    if (!projection) {
      projection = projectOwner(generation, owner)
      generation.projections.set(owner, projection)
    }
    return projection
  }

  /**
   * Platforms, scopes and permissions; without a turn, restricted tools are not visible. With
   * `timeoutMs`, a permission check that does not answer in time (or outlasts the turn's abort)
   * counts as not permitted (fail closed).
   */
  async isVisible(tool: ToolCapability, turn: TurnEnvelope | undefined, timeoutMs?: number): Promise<boolean> {
    if (tool.platforms.length > 0 && !tool.platforms.includes(turn?.origin?.platform ?? '')) return false
    if (tool.scopes.length > 0 && !tool.scopes.includes(turn?.origin?.scope as OriginScope)) return false
    if (tool.permissions.length === 0) return true
    if (!turn || !this.#permissions) return false
    try {
      for (const permission of tool.permissions) {
        const answer = this.#permissions.check(permission, turn.principal)
        if ((answer instanceof Promise && timeoutMs !== undefined ? await untilDue(answer, turn.signal, timeoutMs) : await answer) !== true) return false
      }
      return true
    } catch {
      return false
    }
  }
}

/** `isVisible` with the turn's permissions already asked: `granted[i]` answers `permissions[i]`. */
function visibleWith(tool: ToolCapability, platform: string | undefined, scope: OriginScope | undefined, permissions: readonly string[], granted: readonly string[]): boolean {
  if (tool.platforms.length > 0 && !tool.platforms.includes(platform ?? '')) return false
  if (tool.scopes.length > 0 && !tool.scopes.includes(scope as OriginScope)) return false
  return tool.permissions.every((permission) => granted[permissions.indexOf(permission)] === '1')
}
