import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { rmSync, readFileSync, writeFileSync, renameSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { messageOf, SeamError } from '../errors.js'
import type { Root } from '../runtime/root.js'
import { catalogJson } from './commands/tools.js'
import { turnEvents } from './commands/journal.js'
import { type DevLinkFile, devLinkPath } from './dev-link.js'
import { CliError, UsageError } from './errors.js'

const PREFIX = '/api/cli/'
const MAX_BODY_BYTES = 4 * 1024 * 1024

/** What `seam dev` serves the CLI: the routes under `/api/cli/`, and the discovery file once it listens. */
export interface DevLinkServer {
  /** Answers `/api/cli/…` (bearer: the per-run token) and returns `true`; `false` for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>
  /** Writes `<dir>/.seam/dev.json` naming the server at `url` (mode 0600). */
  publish(url: string): void
  /** Removes the discovery file, when it is still this run's. */
  close(): void
}

/**
 * The CLI's way into a running `seam dev`: `seam call`, `tools` and `journal` find the discovery
 * file and use these routes instead of loading the folder again. A call runs in the dev root as a
 * `seam call` would (origin `cli`, the session and principal the CLI sends), asking for approval on
 * the dev root's port (its terminal and console).
 */
export function devLinkServer(root: Root, dir: string): DevLinkServer {
  const token = randomBytes(24).toString('base64url')
  const expected = digest(token)
  const file = devLinkPath(dir)
  let published = false

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const name = url.pathname.slice(PREFIX.length)
    const q = url.searchParams
    if (req.method === 'GET' && name === 'state') return json(res, 200, { pid: process.pid, generation: root.generation })
    if (req.method === 'GET' && name === 'tools') {
      const capabilities = await root.capabilities()
      return json(res, 200, { ...catalogJson(capabilities), providers: root.providers() })
    }
    if (req.method === 'GET' && name === 'journal') {
      const turn = q.get('turn') ?? undefined
      const events = turn === undefined ? await root.journal.tail(Number(q.get('tail') ?? 20)) : await turnEvents(root.journal, turn)
      const parked = await root.journal.coordination.parked(turn === undefined ? {} : { turnId: events[0]?.turnId })
      return json(res, 200, { generation: root.generation, events, parked })
    }
    if (req.method === 'POST' && name === 'call') return json(res, 200, await call(req, res))
    return json(res, 404, { error: `no route ${req.method} ${url.pathname}` })
  }

  async function call(req: IncomingMessage, res: ServerResponse) {
    const { tool, arguments: args, session, subjectId } = (await body(req)) as Record<string, unknown>
    if (typeof tool !== 'string' || typeof args !== 'string' || typeof session !== 'string' || typeof subjectId !== 'string') {
      throw new UsageError('send tool, arguments (JSON text), session and subjectId as strings')
    }
    // The CLI gone (Ctrl-C) cancels the call, as it would in the CLI's own root.
    const abort = new AbortController()
    res.on('close', () => abort.abort())
    const turn = await root.beginTurn({ session, principal: { subjectId, roles: [] }, origin: { kind: 'cli' }, signal: abort.signal })
    try {
      const outcome = await turn.tools.execute({ callId: `cli-${randomUUID().slice(0, 8)}`, name: tool, arguments: args })
      return { turnId: turn.turnId, outcome }
    } finally {
      await turn.end()
    }
  }

  return {
    async handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://dev.invalid')
      if (!url.pathname.startsWith(PREFIX)) return false
      // Only the CLI, never a page: no Origin, and this run's token.
      const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '')?.[1]
      if (req.headers.origin !== undefined || bearer === undefined || !timingSafeEqual(digest(bearer), expected)) {
        json(res, 401, { error: 'the CLI routes take the token in .seam/dev.json' })
        return true
      }
      try {
        await route(req, res, url)
      } catch (error) {
        if (res.headersSent) res.end()
        else json(res, statusOf(error), { error: messageOf(error), ...(hintOf(error) ? { hint: hintOf(error) } : {}) })
      }
      return true
    },
    publish(url) {
      const link: DevLinkFile = { pid: process.pid, url: loopbackUrl(url), token }
      // Written aside then renamed: a CLI never reads half a file.
      const temporary = `${file}.${process.pid}`
      writeFileSync(temporary, `${JSON.stringify(link)}\n`, { mode: 0o600 })
      renameSync(temporary, file)
      published = true
    },
    close() {
      if (!published) return
      published = false
      // Another `seam dev` of the folder may have taken the file over since: then it is its.
      try {
        if ((JSON.parse(readFileSync(file, 'utf8')) as Partial<DevLinkFile>).token === token) rmSync(file, { force: true })
      } catch {
        // Gone already.
      }
    },
  }
}

/** A server bound to every address is reached on loopback. */
function loopbackUrl(url: string): string {
  const parsed = new URL(url)
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1'
  if (parsed.hostname === '[::]') parsed.hostname = '[::1]'
  return parsed.origin
}

function statusOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof SyntaxError) return 400
  if (error instanceof CliError) return 404
  return SeamError.is(error) && (error.code === 'INVALID_OPTIONS' || error.code === 'INVALID_CALL') ? 400 : 500
}

function hintOf(error: unknown): string | undefined {
  return error instanceof UsageError || error instanceof CliError || SeamError.is(error) ? error.hint : undefined
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
