import type {
  ApprovalChoice,
  ApprovalQueueView,
  CatalogView,
  GrantView,
  LiveEvent,
  ParkedApprovalView,
  QuestionQueueView,
  QuestionReply,
  SignInQueueView,
  StateView,
  TryRequest,
  TryResult,
  TurnDetail,
  TurnPage,
} from '../types.js'

export interface TurnFilters {
  session?: string
  tool?: string
  status?: string
  code?: string
  host?: string
  before?: string
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/** The one client of the console's routes: every request the page makes goes through here. */
export const api = {
  state: () => get<StateView>('/api/state'),
  catalog: (generation?: number) => get<CatalogView>(`/api/catalog${generation === undefined ? '' : `?generation=${generation}`}`),
  turns: (filters: TurnFilters) => get<TurnPage>(`/api/turns?${new URLSearchParams(clean(filters))}`),
  turn: (turnId: string) => get<TurnDetail>(`/api/turns/${encodeURIComponent(turnId)}`),
  approvals: () => get<ApprovalQueueView>('/api/approvals'),
  decide: (id: string, answer: ApprovalChoice) => post<{ decided: boolean }>(`/api/approvals/${encodeURIComponent(id)}`, { answer }),
  parked: () => get<ParkedApprovalView[]>('/api/parked'),
  decideParked: (turnId: string, callId: string, answer: ApprovalChoice) =>
    post<ParkedApprovalView>(`/api/parked/${encodeURIComponent(turnId)}/${encodeURIComponent(callId)}`, { answer }),
  grants: () => get<GrantView[]>('/api/grants'),
  revokeGrant: (id: string) => post<{ revoked: string }>(`/api/grants/${encodeURIComponent(id)}/revoke`, {}),
  questions: () => get<QuestionQueueView>('/api/questions'),
  answerQuestion: (id: string, reply: QuestionReply) => post<{ answered: boolean }>(`/api/questions/${encodeURIComponent(id)}`, reply),
  signIns: () => get<SignInQueueView>('/api/sign-ins'),
  tryTool: (request: TryRequest) => post<TryResult>('/api/try', request),
  /**
   * Live events; the browser reconnects on its own after a drop. `opened` runs each time the stream
   * opens (first and after a reconnect): what the page shows is reloaded then, since the stream
   * opens only once the server knows where the journal is and says nothing of what came before.
   */
  events(listener: (event: LiveEvent) => void, opened: () => void): EventSource {
    const source = new EventSource('/api/events')
    source.onmessage = (message) => listener(JSON.parse(message.data as string) as LiveEvent)
    source.onopen = opened
    return source
  },
}

function clean(filters: TurnFilters): Record<string, string> {
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => typeof value === 'string' && value !== '')) as Record<string, string>
}

async function get<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { headers: { accept: 'application/json' } }))
}

async function post<T>(path: string, body: unknown): Promise<T> {
  return answer<T>(await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }))
}

async function answer<T>(response: Response): Promise<T> {
  const value = (await response.json().catch(() => ({}))) as T & { error?: string }
  if (!response.ok) throw new ApiError(response.status, value.error ?? response.statusText)
  return value
}

/**
 * A filter that passes only queue snapshots at least as new as the newest it has passed: the queue
 * reaches the page both as the answer to a request and on the event stream, in either order.
 */
export function newestQueue<Q extends { readonly version: number } = ApprovalQueueView>(): (queue: Q) => boolean {
  let newest = -1
  return (queue) => {
    if (queue.version < newest) return false
    newest = queue.version
    return true
  }
}

/** Wraps a request so that only the answer to the latest call is delivered; older answers are dropped. */
export function latestOnly<T>(request: () => Promise<T>): (deliver: (value: T) => void) => Promise<void> {
  let issued = 0
  return async (deliver) => {
    const ticket = ++issued
    const value = await request()
    if (ticket === issued) deliver(value)
  }
}
