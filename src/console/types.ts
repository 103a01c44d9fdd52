/**
 * What the console's routes answer, shared by the server and the page (type-only on both sides):
 * the one contract the page's client is typed against.
 */
import type { ContentBlock, OutcomeStatus, TurnPage } from '../seams/journal.js'
import type { AnswerValue, QuestionSchema } from '../seams/questions.js'

export type { ContentBlock, OutcomeStatus, TurnPage, TurnSummary } from '../seams/journal.js'
export type { AnswerValue, QuestionField, QuestionSchema } from '../seams/questions.js'

export interface DiagnosticView {
  readonly code: string
  readonly message: string
  readonly file?: string
  readonly line?: number
  readonly column?: number
  readonly frame?: string
  readonly source?: string
}

export interface DiffView {
  readonly tools: { readonly added: string[]; readonly changed: string[]; readonly removed: string[] }
  readonly skills: { readonly added: string[]; readonly changed: string[]; readonly removed: string[] }
}

/** One entry of the timeline: a published generation or a reload that failed (and was rolled back). */
export type TimelineEntry =
  | { readonly kind: 'generation'; readonly generation: number; readonly at: number; readonly durationMs: number; readonly diff: DiffView; readonly diagnostics: DiagnosticView[] }
  | { readonly kind: 'failed'; readonly at: number; readonly durationMs: number; readonly message: string; readonly diagnostics: DiagnosticView[]; readonly resolved: boolean }

/** A provider that connects to something (a mounted MCP server), as `root.providers()` reports it. */
export interface ProviderView {
  readonly provider: string
  readonly state: 'idle' | 'connecting' | 'connected' | 'down' | 'disposed'
  /** Why it is down, or what its last tool list dropped. */
  readonly reason?: string
  /** While down: when the next attempt starts (epoch ms). */
  readonly retryAt?: number
  /** Tools it contributes to the live generation. */
  readonly tools: number
}

export interface StateView {
  readonly generation: number
  readonly timeline: TimelineEntry[]
  readonly providers: ProviderView[]
  readonly journal: { readonly kind: string; readonly location: string }
  readonly pendingApprovals: number
  readonly pendingQuestions: number
}

export interface ToolView {
  readonly name: string
  readonly description: string
  readonly source: string
  readonly owner: string
  readonly kind: 'feature' | 'seam'
  readonly approval: 'never' | 'on-risk' | 'once' | 'always'
  /** What the approval mode means, in words. */
  readonly approvalMeaning: string
  readonly concurrency: string
  readonly timeoutMs?: number
  readonly permissions: readonly string[]
  readonly input: unknown
  readonly output?: unknown
  readonly readOnly?: boolean
  readonly destructive?: boolean
}

export interface SkillView {
  readonly name: string
  readonly description: string
  readonly source: string
  readonly owner: string
  readonly tools: readonly string[]
  readonly always: boolean
  /** Markdown source; the page renders it as text nodes, never as HTML. */
  readonly instructions: string
}

export interface ResourceView {
  readonly uri: string
  readonly template: boolean
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
  readonly size?: number
  readonly source: string
  readonly owner: string
}

export interface CatalogView {
  readonly generation: number
  /** `false` when the generation asked for is no longer live: the catalog shown is its snapshot from publish time. */
  readonly live: boolean
  /** The body deadline of a tool that sets no `timeoutMs` of its own (the root's `defaults.timeoutMs`). */
  readonly defaultTimeoutMs: number
  readonly tools: ToolView[]
  readonly skills: SkillView[]
  readonly resources: ResourceView[]
}

/** A running call's last progress report (see `RunningProgress`). */
export interface ProgressView {
  readonly turnId: string
  readonly callId: string
  readonly done: number
  readonly total?: number
  readonly message?: string
  readonly at: number
}

/**
 * One stretch of a call on the waterfall's time axis (epoch ms): `waited` before its body (a free
 * slot, the calls before it, the journal, hooks), `approval` while a person decided, `body` while
 * it ran, `commit` from its body's end until its outcome was made (post-execute, the calls before
 * it committing in model order), and `running` for a call still open whose body start is not
 * journaled yet. `to` is missing on the stretch a call is in now.
 */
export interface SegmentView {
  readonly kind: 'waited' | 'approval' | 'body' | 'commit' | 'running'
  readonly from: number
  readonly to?: number
}

export interface CallView {
  readonly callId: string
  readonly name: string
  readonly arguments: string
  readonly generation: number
  /** When its `tool/call` was journaled (epoch ms). */
  readonly at: number
  /** When the call began (epoch ms): before `at` for a batch call that waited for a slot. */
  readonly startedAt: number
  /** Its stretches on the time axis, in order, from `startedAt` on. */
  readonly segments: SegmentView[]
  readonly approval?: { readonly reason: string; readonly summary: string; readonly decision?: string; readonly askedAt: number; readonly decidedAt?: number }
  readonly result?: {
    readonly status: OutcomeStatus
    readonly code?: string
    readonly policy?: string
    readonly content: ContentBlock[]
    readonly durationMs: number
    /** When the outcome was made (epoch ms). */
    readonly at: number
  }
  /** The questions its body asked (`ctx.ask`), in the order asked, each with its answer once given. */
  readonly questions?: QuestionView[]
  /** The last progress report of a call still running on this host. */
  readonly progress?: ProgressView
  /** The outer call's id, for a nested call (a Code Mode sub-call, a tool body's `ctx.tools.call`). */
  readonly parent?: string
  /** The nested calls it made, in the order they were made. */
  readonly calls?: CallView[]
}

/** A question a call asked (`question/asked`) and its answer (`question/answered`), on the call's bar. */
export interface QuestionView {
  readonly questionId: string
  readonly message: string
  readonly askedAt: number
  readonly answeredAt?: number
  readonly action?: 'accept' | 'decline' | 'cancel'
  /** The answer's JSON text, with `accept`. */
  readonly content?: string
  /** Why no person answered (`unattended`, `timeout` …). */
  readonly reason?: string
}

export interface TurnDetail {
  readonly turnId: string
  readonly host?: string
  readonly begunAt?: number
  readonly endedAt?: number
  /** The server's clock when it answered (epoch ms): a page with another clock draws running calls up to its own reading of it. */
  readonly now: number
  readonly calls: CallView[]
}

export interface PendingApprovalView {
  readonly id: string
  readonly callId: string
  readonly name: string
  readonly summary: string
  readonly reason: string
  readonly session: string
  readonly arguments: unknown
  /** The answers the call offers (`ApprovalRequest.answers`), in the order the page shows them; no others are taken. */
  readonly answers: readonly ApprovalChoice[]
  readonly askedAt: number
}

/**
 * The questions waiting now, as of one change of the queue. `version` grows with every change, so a
 * page that hears of the queue both by asking (`GET /api/approvals`) and by its event stream keeps
 * the newest: the two travel on different connections and can arrive in either order.
 */
export interface ApprovalQueueView {
  readonly version: number
  readonly pending: PendingApprovalView[]
}

/** A tool's question (`ctx.ask`) waiting in the console for a person, with the flat schema its form is drawn from. */
export interface PendingQuestionView {
  readonly id: string
  readonly turnId: string
  readonly callId: string
  /** `q1`, `q2`, … in its call, as the journal names it. */
  readonly questionId: string
  readonly name: string
  readonly message: string
  readonly schema: QuestionSchema
  readonly askedAt: number
}

/** The tools' questions waiting now; `version` orders snapshots as `ApprovalQueueView`'s does. */
export interface QuestionQueueView {
  readonly version: number
  readonly pending: PendingQuestionView[]
}

/** A mounted server's OAuth sign-in waiting for a person: which server, and its authorize URL to open. */
export interface PendingSignInView {
  readonly id: string
  /** The service id of the mounted server. */
  readonly server: string
  /** The authorization server's authorize URL (state and PKCE challenge, no secret). */
  readonly url: string
  readonly askedAt: number
}

/** The sign-ins waiting now; `version` orders snapshots as `ApprovalQueueView`'s does. */
export interface SignInQueueView {
  readonly version: number
  readonly pending: PendingSignInView[]
}

/** What the page sends to answer a question: the form's content with `accept`, or no content. */
export type QuestionReply = { readonly action: 'accept'; readonly content: Readonly<Record<string, AnswerValue>> } | { readonly action: 'decline' | 'cancel' }

/** A call parked in the journal (`root.approvals`), waiting for a decision from any process; survives restarts. */
export interface ParkedApprovalView {
  readonly callId: string
  readonly turnId: string
  /** Only when the console lists parked calls as an operator (`createConsole(root, { operator })`). */
  readonly resumeToken?: string
  readonly tool: string
  readonly summary: string
  readonly reason: string
  readonly arguments: unknown
  readonly session: string
  readonly principal: string
  readonly askedAt: number
  readonly host: string
  /** The answers its question offered, in the order the page shows them; no others are taken (all three for a call parked by a build that did not record them). */
  readonly answers: readonly ApprovalChoice[]
  /** Present once decided, until the call is resumed. */
  readonly decision?: { readonly answer: string; readonly by: string; readonly at: number }
}

/** A standing session grant (`seam approvals --grants`): the tool it lets run unasked in its session. */
export interface GrantView {
  readonly id: string
  /** The live tool it covers; absent when that tool changed or went (it matches no call then). */
  readonly tool?: string
  readonly source: string
  readonly session: string
  readonly principal: string
  readonly at: number
}

export type ApprovalChoice = 'allowed-once' | 'allowed-session' | 'rejected'

export interface TryRequest {
  readonly tool: string
  /** JSON text, as a model sends it. */
  readonly arguments: string
  readonly subjectId: string
  readonly session?: string
}

export interface TryResult {
  readonly turnId: string
  readonly outcome: {
    readonly callId: string
    readonly name: string
    /** `suspended` (code `APPROVAL_PENDING`) when the call was parked for a later decision. */
    readonly status: OutcomeStatus | 'suspended'
    readonly code?: string
    readonly reason?: string
    readonly content: ContentBlock[]
    readonly durationMs: number
    readonly generation: number
  }
}

/** Server-sent events on `/api/events`: the page refetches what an event names. */
export type LiveEvent =
  | { readonly type: 'generation'; readonly entry: TimelineEntry }
  /** The journal changed: `turns` were written to since the last event, `turnId` the last of them. */
  | { readonly type: 'journal'; readonly turnId: string; readonly turns: readonly string[] }
  | ({ readonly type: 'approvals' } & ApprovalQueueView)
  | ({ readonly type: 'questions' } & QuestionQueueView)
  | ({ readonly type: 'sign-ins' } & SignInQueueView)
  | { readonly type: 'provider'; readonly provider: ProviderView }
  | { readonly type: 'progress'; readonly progress: ProgressView }

export type JournalPage = TurnPage
