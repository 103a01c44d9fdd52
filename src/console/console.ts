import type { IncomingMessage, ServerResponse } from 'node:http'
import { messageOf, SeamError } from '../errors.js'
import { scrubValues } from '../runtime/base/redact.js'
import type { OutcomeStatus } from '../seams/journal.js'
import { toolsByName } from '../runtime/generations/tool-binding.js'
import type { Root } from '../runtime/root.js'
import { revokeGrant } from '../runtime/approvals/session-grants.js'
import type { ConsoleApprovals } from './approvals.js'
import { ConsoleAssets } from './assets.js'
import { catalogView, providerView, providerViews } from './catalog.js'
import { grantViews } from './grants.js'
import { ConsoleGuard } from './guard.js'
import { LiveEvents } from './live.js'
import { RunningProgress } from './progress.js'
import type { ConsoleQuestions } from './questions.js'
import { CALLBACK_PATH, type ConsoleSignIns } from './sign-ins.js'
import { callbackPage } from './sign-in-page.js'
import { Timeline } from './timeline.js'
import { runTry } from './try-tool.js'
import { findTurn, turnDetail } from './turn-detail.js'
import type { QuestionPort } from '../seams/types.js'
import type { ApprovalChoice, CatalogView, QuestionReply, StateView, TryRequest } from './types.js'

export interface ConsoleOptions {
  /** The questions the page answers; pass the same queue to `createRoot({ approval })` (alone or in `firstAnswer`). */
  readonly approvals: ConsoleApprovals
  /**
   * The tools' questions (`ctx.ask`) the page answers. Pass the same queue (alone or in
   * `firstQuestionAnswer`) as `ports.question` of the turns a person is behind; the console's own
   * run form asks through `ask`, or this queue.
   */
  readonly questions?: ConsoleQuestions
  /** The OAuth sign-ins mounted servers wait on; the console serves their callback at `/oauth/callback`. */
  readonly signIns?: ConsoleSignIns
  /** The question port of the turns the run form begins (the terminal and the console in `seam dev`). */
  readonly ask?: QuestionPort
  /** The MCP bearer token: when set, the console needs a login (one-time URL) or the token too. */
  readonly token?: string
  /**
   * The `subjectId` the console lists parked calls as. Only when it is one of the root's
   * `operators` (or the call's own principal) does the page get a call's resume token; by default
   * it gets none. Deciding needs no token (a call is decided by its turn and call id).
   */
  readonly operator?: string
}

export interface Console {
  /** Answers a request for one of the console's paths; `false` for any other path (left to the caller). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>
  /** The path that logs a browser in once (`/login?code=…`), or `/` when no login is needed. */
  loginPath(): string
  close(): void
}

const MAX_BODY_BYTES = 1024 * 1024
const KEPT_CATALOGS = 50
const ANSWERS: ReadonlySet<string> = new Set<ApprovalChoice>(['allowed-once', 'allowed-session', 'rejected'])
const STATUSES: ReadonlySet<string> = new Set<OutcomeStatus>(['completed', 'denied', 'failed', 'cancelled'])

/**
 * The seam console on a root: a page, and the JSON routes and event stream it reads (generations,
 * catalog, journal pages, approvals, try-a-tool). Mount it on an HTTP server with `handle`.
 */
export function createConsole(root: Root, options: ConsoleOptions): Console {
  const guard = new ConsoleGuard(options.token)
  const assets = new ConsoleAssets()
  const live = new LiveEvents(root.journal)
  const progress = new RunningProgress()
  const approvals = options.approvals
  approvals.watchedBy(() => live.clients > 0)
  const questions = options.questions
  questions?.watchedBy(() => live.clients > 0)
  const ask = options.ask ?? questions
  const timeline = new Timeline({ generation: root.generation, diagnostics: root.activeGeneration.diagnostics, dir: root.dir })
  const catalogs = new Map<number, CatalogView>()
  const keep = (view: CatalogView) => {
    catalogs.set(view.generation, { ...view, live: false })
    for (const old of catalogs.keys()) if (catalogs.size > KEPT_CATALOGS) catalogs.delete(old)
  }
  const timeoutMs = root.limits.timeoutMs
  void root.capabilities().then((c) => keep(catalogView(c, true, timeoutMs)), () => {})
  /** Every tool of the live generation (restricted ones too) with the service each is bound to. */
  const bindings = async () => {
    const generation = root.activeGeneration
    return toolsByName((await root.ingress.project(generation)).base, generation)
  }
  const disposers = [
    root.on('generation', (event) => {
      live.send({ type: 'generation', entry: timeline.published(event) })
      void root.capabilities().then((c) => c.generation === event.generation && keep(catalogView(c, true, timeoutMs)), () => {})
    }),
    root.on('reload-failed', (event) => live.send({ type: 'generation', entry: timeline.failed(event) })),
    approvals.onChange((queue) => live.send({ type: 'approvals', ...queue })),
    questions?.onChange((queue) => live.send({ type: 'questions', ...queue })) ?? (() => {}),
    options.signIns?.onChange((queue) => live.send({ type: 'sign-ins', ...queue })) ?? (() => {}),
    root.on('progress', (event) => live.send({ type: 'progress', progress: progress.heard(event) })),
    root.on('provider', (status) => {
      void bindings().then((b) => live.send({ type: 'provider', provider: providerView(b, status) }), () => {})
    }),
  ]

  async function state(): Promise<StateView> {
    return {
      generation: root.generation,
      timeline: timeline.entries(),
      providers: providerViews(await bindings(), root.providers()),
      journal: { kind: root.journal.kind, location: root.journal.location },
      pendingApprovals: approvals.pending().length,
      pendingQuestions: questions?.pending().length ?? 0,
    }
  }

  async function catalog(generation: number | undefined): Promise<CatalogView | undefined> {
    if (generation === undefined || generation === root.generation) return catalogView(await root.capabilities(), true, timeoutMs)
    return catalogs.get(generation)
  }

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname
    const q = url.searchParams
    if (req.method === 'GET' && path === '/api/state') return json(res, 200, await state())
    if (req.method === 'GET' && path === '/api/catalog') {
      const view = await catalog(q.has('generation') ? Number(q.get('generation')) : undefined)
      return view ? json(res, 200, view) : fail(res, 404, `generation ${q.get('generation')} is neither live nor kept`)
    }
    if (req.method === 'GET' && path === '/api/turns') {
      const status = q.get('status') ?? undefined
      if (status !== undefined && !STATUSES.has(status)) return fail(res, 400, `unknown status ${status}`)
      const query = {
        ...optional('session', q),
        ...optional('tool', q),
        ...optional('code', q),
        ...optional('host', q),
        ...optional('before', q),
        ...(status !== undefined ? { status: status as OutcomeStatus } : {}),
        ...(q.has('limit') ? { limit: Number(q.get('limit')) } : {}),
      }
      return json(res, 200, await root.journal.turns(query))
    }
    const turn = /^\/api\/turns\/([^/]+)$/.exec(path)
    if (req.method === 'GET' && turn) {
      const { turnId, events } = await findTurn(root.journal, decodeURIComponent(turn[1]!))
      return json(res, 200, turnDetail(turnId, events, (callId) => progress.of(turnId, callId)))
    }
    if (req.method === 'GET' && path === '/api/approvals') return json(res, 200, approvals.queue())
    // Resume tokens only as an operator the host named: the page decides by turn and call id.
    const as = options.operator === undefined ? {} : { as: options.operator }
    if (req.method === 'GET' && path === '/api/parked') return json(res, 200, await root.approvals.pending({ ...as }))
    const parked = /^\/api\/parked\/([^/]+)\/([^/]+)$/.exec(path)
    if (req.method === 'POST' && parked) {
      const { answer } = (await body(req)) as { answer?: unknown }
      if (typeof answer !== 'string' || !ANSWERS.has(answer)) return fail(res, 400, 'answer must be allowed-once, allowed-session or rejected')
      const [turnId, callId] = [decodeURIComponent(parked[1]!), decodeURIComponent(parked[2]!)]
      return json(res, 200, await root.approvals.decide(callId, answer as ApprovalChoice, { by: 'console', turnId, ...as }))
    }
    if (req.method === 'GET' && path === '/api/grants') return json(res, 200, await grantViews(root))
    const grant = /^\/api\/grants\/([^/]+)\/revoke$/.exec(path)
    if (req.method === 'POST' && grant) {
      const revoked = await revokeGrant(root.journal.coordination, decodeURIComponent(grant[1]!))
      return revoked ? json(res, 200, { revoked: revoked.id }) : fail(res, 404, 'no standing session grant has this id (revoked already, or its session ended)')
    }
    if (req.method === 'GET' && path === '/api/events') return live.attach(res)
    const decide = /^\/api\/approvals\/([^/]+)$/.exec(path)
    if (req.method === 'POST' && decide) {
      const { answer } = (await body(req)) as { answer?: unknown }
      if (typeof answer !== 'string' || !ANSWERS.has(answer)) return fail(res, 400, 'answer must be allowed-once, allowed-session or rejected')
      const decided = approvals.decide(decodeURIComponent(decide[1]!), answer as ApprovalChoice)
      return decided ? json(res, 200, { decided: true }) : fail(res, 409, 'the question is no longer waiting (answered elsewhere, or withdrawn)')
    }
    if (req.method === 'GET' && path === '/api/questions') return json(res, 200, questions?.queue() ?? { version: 0, pending: [] })
    const question = /^\/api\/questions\/([^/]+)$/.exec(path)
    if (req.method === 'POST' && question) {
      const answered = questions?.answer(decodeURIComponent(question[1]!), (await body(req)) as QuestionReply) ?? false
      return answered ? json(res, 200, { answered: true }) : fail(res, 409, 'the question is no longer waiting (answered elsewhere, or withdrawn)')
    }
    if (req.method === 'GET' && path === '/api/sign-ins') return json(res, 200, options.signIns?.queue() ?? { version: 0, pending: [] })
    if (req.method === 'POST' && path === '/api/try') return json(res, 200, await runTry(root, (await body(req)) as TryRequest, ask))
    return fail(res, 404, `no route ${req.method} ${path}`)
  }

  return {
    async handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://console.invalid')
      const path = url.pathname
      if (path === '/login') {
        const cookie = guard.login(url.searchParams.get('code'))
        if (cookie === undefined) {
          fail(res, 401, 'this login link was used already or is not valid; restart seam dev for a new one')
          return true
        }
        res.writeHead(303, { location: '/', 'set-cookie': cookie, 'cache-control': 'no-store' })
        res.end()
        return true
      }
      // No login: the browser comes back from another site (a SameSite cookie stays behind), and
      // the single-use state it brings is what names the sign-in.
      if (path === CALLBACK_PATH && options.signIns && (req.method === 'GET' || req.method === 'HEAD')) {
        const { status, html } = callbackPage(options.signIns.callback(url.searchParams))
        res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...SECURITY_HEADERS })
        res.end(html)
        return true
      }
      const isApi = path.startsWith('/api/')
      if (!isApi && !assets.has(path)) return false
      const verdict = guard.check(req, req.method !== 'GET' && req.method !== 'HEAD')
      if (!verdict.ok) {
        fail(res, verdict.status, verdict.message)
        return true
      }
      try {
        if (isApi) await api(req, res, url)
        else await asset(res, path)
      } catch (error) {
        const status = statusOf(error)
        if (!res.headersSent) fail(res, status, messageOf(error))
        else res.end()
      }
      return true
    },
    loginPath() {
      return guard.protected ? `/login?code=${guard.issueLoginCode()}` : '/'
    },
    close() {
      for (const dispose of disposers) dispose()
      live.close()
    },
  }

  async function asset(res: ServerResponse, path: string): Promise<void> {
    const { type, body: content } = await assets.get(path)
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache', ...SECURITY_HEADERS })
    res.end(content)
  }
}

/** The page runs only its own script, talks only to this server, and cannot be framed. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
}

/** Misuse is the client's (400), a decision that lost or an unknown question a conflict or not found. */
function statusOf(error: unknown): number {
  if (error instanceof SyntaxError) return 400
  if (!SeamError.is(error)) return 500
  if (error.code === 'APPROVAL_CONFLICT') return 409
  if (error.code === 'UNKNOWN_APPROVAL' || error.code === 'UNKNOWN_TURN') return 404
  if (error.code === 'APPROVAL_EXPIRED') return 410
  return error.code === 'INVALID_OPTIONS' || error.code === 'INVALID_CALL' ? 400 : 500
}

function optional(name: string, q: URLSearchParams): Record<string, string> {
  const value = q.get(name)
  return value === null || value === '' ? {} : { [name]: value }
}

/** Every JSON answer leaves through here: scrubbed of the secret values the process knows (also as JSON escapes them). */
function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
  res.end(scrubValues(JSON.stringify(value)))
}

function fail(res: ServerResponse, status: number, message: string): void {
  json(res, status, { error: message })
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) throw new SeamError('INVALID_OPTIONS', 'request body too large')
    chunks.push(chunk)
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')
}
