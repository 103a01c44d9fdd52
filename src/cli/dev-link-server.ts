import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { messageOf, SeamError } from '../errors.js'
import { Approvals } from '../runtime/approvals/approvals.js'
import { firstAnswer } from '../runtime/approvals/first-answer.js'
import { writeSettlement } from '../runtime/pipeline/park.js'
import type { Root } from '../runtime/root.js'
import { type ApprovalAnswer, type ApprovalPort, deferApprovals } from '../seams/approval.js'
import type { QuestionPort } from '../seams/types.js'
import { turnEvents } from './commands/journal.js'
import { catalogJson } from './commands/tools.js'
import { type DevLinkFile, devLinkPath, type LinkFault } from './dev-link.js'
import { CliError, UsageError } from './errors.js'

const PREFIX = '/api/cli/'
const MAX_BODY_BYTES = 4 * 1024 * 1024

/** The CLI's own server inside `seam dev`: listening on loopback, named in the discovery file. */
export interface DevLinkServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  /** Stops listening and removes the discovery file, when it is still this run's. Idempotent. */
  close(): Promise<void>
}

/**
 * The CLI's way into a running `seam dev`: `seam call`, `tools`, `journal` and `approvals` find
 * `<dir>/.seam/dev.json` and use these routes instead of loading the folder again.
 *
 * - The server listens on 127.0.0.1 only (an ephemeral port), whatever `--host` MCP binds to.
 * - Every request needs the per-run token of the discovery file (mode 0600) as a bearer header,
 *   a `Host` naming this server, and no `Origin`: only a process of the user who runs `seam dev`
 *   gets in, never a web page.
 * - A call runs in the dev root as `seam call` would (origin `cli`, the session and principal the
 *   CLI sends). It asks on the dev root's approval port (its terminal and console); when nobody is
 *   there to answer, it is parked for `seam approvals`. A tool's questions (`ctx.ask`) go to
 *   `question` (the same terminal and console).
 * - `seam approvals` acts as an operator of the folder's journal, as it does without `seam dev`.
 */
export async function startDevLink(root: Root, dir: string, approval: ApprovalPort, question?: QuestionPort): Promise<DevLinkServer> {
  const token = randomBytes(24).toString('base64url')
  const expected = digest(token)
  const file = devLinkPath(dir)
  // Asking the dev terminal and console first; with nobody there, parked instead of failing closed.
  const cliApproval = firstAnswer([approval, deferApprovals()])

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse, q: URLSearchParams) => Promise<unknown>> = {
    'GET state': async () => ({ pid: process.pid, generation: root.generation }),
    'GET tools': async () => ({ ...catalogJson(await root.capabilities()), providers: root.providers() }),
    'GET journal': async (_req, _res, q) => {
      const turn = q.get('turn') ?? undefined
      const events = turn === undefined ? await root.journal.tail(Number(q.get('tail') ?? 20)) : await turnEvents(root.journal, turn)
      const parked = await root.journal.coordination.parked(turn === undefined ? {} : { turnId: events[0]?.turnId })
      return { generation: root.generation, events, parked }
    },
    'POST call': call,
    'GET approvals': async (_req, _res, q) => {
      const by = q.get('by') ?? ''
      return book(by).pending({ as: by })
    },
    'POST approvals/decide': async (req) => {
      const { id, answer, by, turnId } = fields(await body(req), ['id', 'answer', 'by'], ['turnId'])
      return book(by).decide(id, answer as ApprovalAnswer, { by, as: by, ...(turnId === undefined ? {} : { turnId }) })
    },
    'POST approvals/resume': async (req) => {
      const { token: resumeToken, by } = fields(await body(req), ['token', 'by'], [])
      // An operator resumes any call: as the call's own principal, since the dev root names no operators.
      const parked = (await book(by).pending({ as: by })).find((p) => p.resumeToken === resumeToken)
      return root.resume(resumeToken, { principal: parked?.principal ?? by })
    },
  }

  /** The folder's parked calls as the operator `by` sees them (the TTL matters only to a host that sweeps). */
  function book(by: string): Approvals {
    if (by === '') throw new UsageError('say who acts on the parked calls (by)')
    return new Approvals(root.journal, Number.MAX_SAFE_INTEGER, [by], writeSettlement)
  }

  async function call(req: IncomingMessage, res: ServerResponse) {
    const { tool, arguments: args, session, subjectId } = fields(await body(req), ['tool', 'arguments', 'session', 'subjectId'], [])
    // The CLI gone (Ctrl-C) cancels the call, as it would in the CLI's own root.
    const abort = new AbortController()
    res.on('close', () => abort.abort())
    const turn = await root.beginTurn({
      session,
      principal: { subjectId, roles: [] },
      origin: { kind: 'cli' },
      signal: abort.signal,
      ports: { approval: cliApproval, ...(question ? { question } : {}) },
    })
    try {
      const outcome = await turn.tools.execute({ callId: `cli-${randomUUID().slice(0, 8)}`, name: tool, arguments: args })
      return { turnId: turn.turnId, outcome }
    } finally {
      await turn.end()
    }
  }

  let host = ''
  const server = createServer((req, res) => {
    void handle(req, res)
  })
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://dev.invalid')
    const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '')?.[1]
    const own = req.headers.host === host && req.headers.origin === undefined
    if (!own || bearer === undefined || !timingSafeEqual(digest(bearer), expected)) {
      return json(res, 401, { error: 'the CLI routes of seam dev take the token in .seam/dev.json' } satisfies LinkFault)
    }
    const route = url.pathname.startsWith(PREFIX) ? routes[`${req.method} ${url.pathname.slice(PREFIX.length)}`] : undefined
    if (route === undefined) return json(res, 404, { error: `no route ${req.method} ${url.pathname}` } satisfies LinkFault)
    try {
      json(res, 200, await route(req, res, url.searchParams))
    } catch (error) {
      if (res.headersSent) res.end()
      else json(res, statusOf(error), fault(error))
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`
  let closing: Promise<void> | undefined
  const link: DevLinkServer = {
    url: `http://${host}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        unpublish()
        server.close(() => resolve())
        // A CLI call still waiting (an approval) must not hold `seam dev` open.
        server.closeAllConnections()
      })
      return closing
    },
  }

  // Written aside then renamed: a CLI never reads half a file.
  const temporary = `${file}.${process.pid}`
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(temporary, `${JSON.stringify({ pid: process.pid, url: link.url, token } satisfies DevLinkFile)}\n`, { mode: 0o600 })
  renameSync(temporary, file)

  function unpublish(): void {
    // Another `seam dev` of the folder may have taken the file over since: then it is its.
    try {
      if ((JSON.parse(readFileSync(file, 'utf8')) as Partial<DevLinkFile>).token === token) rmSync(file, { force: true })
    } catch {
      // Gone already.
    }
  }
  return link
}

/** The strings `required` (and `optional`, when present) of a request body, else a usage error. */
function fields<R extends string, O extends string>(value: unknown, required: readonly R[], optional: readonly O[]): Record<R, string> & Partial<Record<O, string>> {
  const record = (value ?? {}) as Record<string, unknown>
  const bad = [...required.filter((k) => typeof record[k] !== 'string'), ...optional.filter((k) => record[k] !== undefined && typeof record[k] !== 'string')]
  if (bad.length > 0) throw new UsageError(`send ${bad.join(', ')} as strings`)
  return record as Record<R, string> & Partial<Record<O, string>>
}

function statusOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof SyntaxError) return 400
  if (error instanceof CliError) return 404
  return SeamError.is(error) && (error.code === 'INVALID_OPTIONS' || error.code === 'INVALID_CALL') ? 400 : 500
}

/** An error as the CLI rebuilds it on its side (see `dev-link.ts`): a usage error, a coded one, or a plain one. */
function fault(error: unknown): LinkFault {
  const hint = error instanceof UsageError || error instanceof CliError || SeamError.is(error) ? error.hint : undefined
  return {
    error: messageOf(error),
    ...(hint ? { hint } : {}),
    ...(error instanceof UsageError || error instanceof SyntaxError ? { usage: true } : {}),
    ...(SeamError.is(error) ? { code: error.code, ...(error.details ? { details: error.details } : {}) } : {}),
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
  res.end(JSON.stringify(value))
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) throw new UsageError('request body too large')
    chunks.push(chunk)
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')
}
