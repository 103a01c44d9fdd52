import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import {
  type McpServerFactory,
  type Prompt,
  ProtocolError,
  type Resource,
  type ResourceTemplateType,
  ProtocolErrorCode,
  Server,
  type Tool,
} from '@modelcontextprotocol/server'
import { messageOf } from '../../errors.js'
import { redactText, scrubValues } from '../../runtime/base/redact.js'
import type { Root } from '../../runtime/root.js'
import { createTurnIngress } from '../../runtime/turns/turn-ingress.js'
import { versionKey } from '../../runtime/generations/resource-slots.js'
import type { TurnEnvelope, TurnOrigin } from '../../seams/types.js'
import type { McpServeOptions } from './serve-options.js'
import { supportsFormElicitation } from './serve-approval.js'
import { Announcements, type CatalogChange } from './serve-announcements.js'
import { ServedCalls } from './serve-calls.js'
import { type McpCatalog, toCatalog } from './serve-mapping.js'
import { ApprovalRounds } from './serve-rounds.js'
import { SessionTurns } from './serve-turns.js'
import { getPrompt } from './serve-prompt-asks.js'
import { answerCompletion, liveCompletionSource } from './serve-completion.js'
import { readLiveResource } from './serve-resources.js'
import { TASKS_EXTENSION } from './tasks.js'
import { endSessionGrants } from './session-end.js'

const VERSION: string = createRequire(import.meta.url)('../../../package.json').version
const ORIGIN: TurnOrigin = Object.freeze({ kind: 'mcp' })
const DEFAULT_PRINCIPAL = Object.freeze({ subjectId: 'mcp', roles: Object.freeze([]) as readonly string[] })

/**
 * The live generation as MCP servers: one SDK `Server` per MCP session (or per request, for the
 * stateless 2026-07-28 HTTP mode), all sharing one catalog cache and one subscription to the
 * root's publishes. Both protocol eras are served by the same servers: 2025-11-25 (`initialize`,
 * approval through `elicitation/create`, unsolicited `list_changed`) and 2026-07-28 (per-request
 * envelope, approval through `input_required` rounds, changes on `subscriptions/listen` streams).
 *
 * Every `tools/call` runs on the generation live when it arrives, in its session's turn for that
 * generation (see `SessionTurns`), with the MCP request's abort signal as the call's signal, so
 * `notifications/cancelled` aborts exactly that call.
 *
 * This file holds the sessions, the catalog cache and the method table of each session's server;
 * the `tools/call` path is `ServedCalls` (serve-calls.ts), the announcing of publishes
 * `Announcements` (serve-announcements.ts), `resources/read` serve-resources.ts, and
 * `completion/complete` serve-completion.ts.
 */
export class McpBridge {
  readonly #root: Root
  readonly #owner: string
  readonly #principal: { subjectId: string; roles?: readonly string[] }
  readonly #session: string | undefined
  readonly #log: (line: string) => void
  /** Every session's server, and its turns. */
  readonly #servers = new Map<Server, SessionTurns>()
  /** The sessions whose client declared form elicitation (approval questions can be asked there). */
  readonly #elicits = new WeakSet<Server>()
  readonly #rounds: ApprovalRounds
  readonly #calls: ServedCalls
  readonly #announcements: Announcements
  /** Session closes still running; `close()` waits for them (and so for their turns' calls). */
  readonly #closes = new Set<Promise<void>>()
  readonly #listing: TurnEnvelope
  readonly #unsubscribe: () => void
  #catalog: { generation: number; value: Promise<McpCatalog> } | undefined
  #closing: Promise<void> | undefined

  constructor(root: Root, options: McpServeOptions = {}) {
    this.#root = root
    this.#owner = options.owner ?? 'root'
    this.#principal = options.principal ?? DEFAULT_PRINCIPAL
    this.#session = options.session
    this.#rounds = new ApprovalRounds(options.requestStateKey)
    const log = options.log
    this.#log = log
      ? (line) => {
          try {
            log(line)
          } catch {
            // A failing log sink never fails a call.
          }
        }
      : () => {}
    // What `tools/list` filters with: the same principal, owner and origin as a call's turn.
    this.#listing = createTurnIngress({
      session: this.#session ?? 'mcp',
      principal: this.#principal,
      owner: this.#owner,
      origin: ORIGIN,
      signal: new AbortController().signal,
      journal: root.journal,
      unattended: true,
    })
    this.#calls = new ServedCalls({
      root,
      subjectId: this.#principal.subjectId,
      approval: options.approval,
      rounds: this.#rounds,
      log: this.#log,
      verbose: log !== undefined,
      catalog: () => this.catalog(),
      elicits: (server) => this.#elicits.has(server),
      turns: (session) => this.#turns(session),
      track: (closing) => this.#track(closing),
      endSession: (session) => this.endSession(session),
    })
    this.#announcements = new Announcements(() => this.catalog(), () => this.#closing !== undefined, this.#log)
    this.#unsubscribe = root.on('generation', () => {
      for (const turns of this.#servers.values()) turns.retireStale()
      this.#announcements.publish()
    })
  }

  /**
   * The seam session of one MCP session (a stdio connection, a 2025 HTTP session id, a 2026-07-28
   * HTTP request): the configured one, else `mcp:<id>`, a session of its own that ends with it.
   */
  sessionFor(mcpSessionId: string = randomUUID()): string {
    return this.#session ?? `mcp:${mcpSessionId}`
  }

  /**
   * The MCP session `session` ended: its session grants end with it (a configured session is shared
   * on purpose and keeps them). `close()` waits for it.
   */
  endSession(session: string): void {
    if (this.#session !== undefined) return
    this.#track(endSessionGrants(this.#root, session, this.#log))
  }

  #track(closing: Promise<void>): void {
    this.#closes.add(closing)
    void closing.finally(() => this.#closes.delete(closing))
  }

  /** The live generation's catalog, projected once per generation number. */
  catalog(): Promise<McpCatalog> {
    let generation: Root['activeGeneration']
    try {
      generation = this.#root.activeGeneration
    } catch (error) {
      return Promise.reject(new ProtocolError(ProtocolErrorCode.InternalError, `the runtime is not serving: ${redactText(messageOf(error))}`))
    }
    const cached = this.#catalog
    if (cached?.generation === generation.number) return cached.value
    const listed = generation
    const versions = new Map(generation.resources.map((slot) => [slot.uri, versionKey(slot)]))
    const value = this.#root.ingress
      .read(generation, this.#owner, this.#listing)
      .then((capabilities) => toCatalog(this.#root.withCodeMode(capabilities, listed), versions))
    this.#catalog = { generation: generation.number, value }
    value.catch(() => {
      if (this.#catalog?.value === value) this.#catalog = undefined
    })
    return value
  }

  /**
   * A factory for `serveStdio`: each instance it makes is one connection's server (the SDK also
   * makes one for a 2026 `server/discover` probe and closes it again if the client falls back).
   */
  factory(session: string): McpServerFactory {
    return ({ era }) => this.open(session, undefined, era)
  }

  /**
   * A factory for the stateless 2026-07-28 HTTP mode: a server per request. Nothing identifies a
   * client across requests (its `clientInfo` is self-declared and the same for every copy of it),
   * so each request is a session of its own (unless one is configured): a session grant given in
   * it ends with it, and its calls run in a turn that ends with it.
   */
  statelessFactory(): McpServerFactory {
    return () => {
      const session = this.sessionFor()
      const turns = this.#turns(session)
      const server = this.#server(turns)
      server.onclose = () => {
        if (turns.begun) this.#track(turns.close().then(() => this.endSession(session)))
      }
      return server
    }
  }

  /** Called after every publish that changed the served lists; returns a disposer. */
  onChange(listener: (change: CatalogChange) => void): () => void {
    return this.#announcements.onChange(listener)
  }

  /**
   * A server for one MCP session; `session` is the seam session its calls run in. A 2026-era
   * server (`era: 'modern'`) has no handshake: it hears publishes from the start.
   */
  open(session: string, onClose?: () => void, era: 'legacy' | 'modern' = 'legacy'): Server {
    const turns = this.#turns(session)
    const server = this.#server(turns)
    server.oninitialized = () => {
      // The client's capabilities are fixed by the handshake: looked at once, not on every call.
      if (supportsFormElicitation(server.getClientCapabilities())) this.#elicits.add(server)
      if (this.#servers.has(server)) this.#announcements.ready(server)
    }
    server.onclose = () => {
      this.#servers.delete(server)
      this.#announcements.drop(server)
      this.#track(turns.close())
      onClose?.()
    }
    this.#servers.set(server, turns)
    if (era === 'modern') this.#announcements.ready(server, true)
    return server
  }

  #turns(session: string): SessionTurns {
    return new SessionTurns(this.#root, { session, principal: this.#principal, owner: this.#owner, origin: ORIGIN }, this.#log)
  }

  #server(turns: SessionTurns): Server {
    const server = new Server(
      { name: 'seam-runtime', version: VERSION },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          completions: {},
          logging: {},
          extensions: { [TASKS_EXTENSION]: {} },
        },
        requestState: { verify: this.#rounds.verify },
      },
    )
    server.setRequestHandler('tools/list', async () => ({ tools: (await this.catalog()).tools as Tool[] }))
    server.setRequestHandler('tools/call', (request, ctx) => this.#calls.call(server, turns, request.params, ctx))
    server.setRequestHandler('prompts/list', async () => ({ prompts: (await this.catalog()).prompts as Prompt[] }))
    server.setRequestHandler('prompts/get', async (request, ctx) => {
      const skill = (await this.catalog()).skills.get(request.params.name)
      if (!skill) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${scrubValues(request.params.name)}`)
      return getPrompt(skill, request.params.arguments, ctx, { elicits: this.#elicits.has(server), codec: this.#rounds.codec, root: this.#root, owner: this.#owner })
    })
    server.setRequestHandler('resources/list', async () => ({ resources: (await this.catalog()).resources as Resource[] }))
    server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: (await this.catalog()).resourceTemplates as ResourceTemplateType[] }))
    server.setRequestHandler('resources/read', (request, ctx) => readLiveResource(this.#root, this.#owner, () => this.catalog(), request.params.uri, ctx.mcpReq.signal))
    server.setRequestHandler('resources/subscribe', async (request) => {
      this.#announcements.subscribe(server, request.params.uri)
      return {}
    })
    server.setRequestHandler('resources/unsubscribe', async (request) => {
      this.#announcements.unsubscribe(server, request.params.uri)
      return {}
    })
    server.setRequestHandler('completion/complete', (request, ctx) =>
      answerCompletion(request.params, liveCompletionSource(this.#root, this.#owner, () => this.catalog(), this.#log), ctx.mcpReq.signal),
    )
    this.#calls.register(server)
    return server
  }

  /** Stops announcing, closes every session (aborting their calls) and waits for the calls to settle. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#unsubscribe()
      await this.#calls.close()
      await Promise.allSettled([...this.#servers.keys()].map((server) => server.close()))
      while (this.#closes.size > 0 || this.#calls.active > 0) {
        if (this.#closes.size > 0) await Promise.allSettled([...this.#closes])
        else await this.#calls.idle()
      }
    })()
    return this.#closing
  }
}
