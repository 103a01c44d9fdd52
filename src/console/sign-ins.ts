import { randomUUID } from 'node:crypto'
import type { OAuthSignIn, OAuthSignInRequest } from '../mcp/client/oauth.js'
import type { PendingSignInView, SignInQueueView } from './types.js'
import { WaitingQueue, type WaitingQueueView } from './waiting.js'

/** The console's OAuth callback route, on the console's own host and port. */
export const CALLBACK_PATH = '/oauth/callback'

/** A sign-in as the queue keeps it: by `state`, the one thing the browser brings back that names it. */
interface Waiting {
  readonly id: string
  readonly view: PendingSignInView
}

/** What the callback route made of a browser's return. */
export type CallbackVerdict = { readonly ok: true; readonly server: string; readonly refused?: string } | { readonly ok: false }

/**
 * The console as a host's OAuth sign-in (`OAuthSignIn`): each sign-in a mounted server needs waits
 * in a queue the page lists with a "Sign in" link to its authorize URL, until the browser comes back
 * to `/oauth/callback` with that sign-in's `state` (single use), or it is no longer wanted (its
 * service disposed: a reload, or the call gave up): then it is withdrawn from the page. Codes never
 * pass through here as anything but the callback's query, handed to the waiting service.
 */
export class ConsoleSignIns implements OAuthSignIn {
  /** Settled with the callback's query, or `null` when withdrawn. */
  readonly #queue = new WaitingQueue<Waiting, URLSearchParams | null>()
  #origin: string | undefined

  /** Where the console is served (`http://127.0.0.1:4750/`): sign-ins come back to its callback route. */
  serveAt(origin: string): void {
    this.#origin = origin
  }

  get redirectUrl(): string {
    if (this.#origin === undefined) throw new Error('the console is not serving yet, so a sign-in has nowhere to come back to')
    return new URL(CALLBACK_PATH, this.#origin).href
  }

  signIn(request: OAuthSignInRequest): Promise<URLSearchParams> {
    if (this.#origin === undefined) return Promise.reject(new Error('the console is not serving yet, so nobody can sign in'))
    if (request.signal.aborted) return Promise.reject(request.signal.reason)
    const state = request.url.searchParams.get('state')
    // The authorize URL comes from the server's metadata: only a web page may become a link on the console.
    if (request.url.protocol !== 'https:' && request.url.protocol !== 'http:') return Promise.reject(new Error(`the authorize URL is not http(s): ${request.url.protocol}`))
    if (!state || this.#queue.get(state) !== undefined) return Promise.reject(new Error('the authorize URL carries no state of its own'))
    const view: PendingSignInView = { id: randomUUID(), server: request.server, url: request.url.href, askedAt: Date.now() }
    return this.#queue.wait({ id: state, view }, request.signal, null).then((query) => query ?? Promise.reject(request.signal.reason ?? new Error('the sign-in was withdrawn')))
  }

  /**
   * The browser came back with `query`: the sign-in whose `state` it carries gets it (an error the
   * authorization server sent included, for the service to refuse) and leaves the queue. An unknown
   * state (forged, withdrawn or used already) is refused and changes nothing.
   */
  callback(query: URLSearchParams): CallbackVerdict {
    const state = query.get('state')
    const waiting = state === null ? undefined : this.#queue.get(state)
    if (state === null || waiting === undefined) return { ok: false }
    this.#queue.settle(state, query)
    const error = query.get('error')
    return error ? { ok: true, server: waiting.view.server, refused: error } : { ok: true, server: waiting.view.server }
  }

  /** The sign-ins waiting, oldest first. */
  pending(): PendingSignInView[] {
    return this.queue().pending
  }

  queue(): SignInQueueView {
    return shown(this.#queue.queue())
  }

  /** Called with the whole queue on every change; returns a disposer. */
  onChange(listener: (queue: SignInQueueView) => void): () => void {
    return this.#queue.onChange((queue) => listener(shown(queue)))
  }
}

/** The queue as the page sees it: the views, without the states they are kept by. */
function shown(queue: WaitingQueueView<Waiting>): SignInQueueView {
  return { version: queue.version, pending: queue.pending.map((waiting) => waiting.view) }
}
