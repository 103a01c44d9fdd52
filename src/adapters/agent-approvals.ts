import type { ApprovalPort, ApprovalReply, ApprovalRequest } from '../seams/approval.js'

/** One approval question as `runAgent` reports it, and later its answer. */
export type ApprovalEvent =
  | { readonly type: 'approval-asked'; readonly callId: string; readonly name: string; readonly summary: string; readonly reason: string }
  | { readonly type: 'approval-answered'; readonly callId: string; readonly answer: ApprovalReply | 'failed' }

/** An approval port whose questions and answers can be followed (`runAgent`'s `approvals`). */
export interface ObservedApprovals extends ApprovalPort {
  subscribe(listener: (event: ApprovalEvent) => void): () => void
}

/**
 * Wraps the port a turn will ask, so an agent loop can report each question live: the turn's
 * port is fixed when it begins, so pass the result to `beginTurn({ ports: { approval } })` and to
 * `runAgent({ approvals })`. The inner port's answers, failures and availability are unchanged.
 */
export function observeApprovals(port: ApprovalPort): ObservedApprovals {
  const listeners = new Set<(event: ApprovalEvent) => void>()
  const emit = (event: ApprovalEvent) => {
    for (const listener of listeners) {
      try {
        listener(event)
      } catch {
        // A listener cannot change or fail the approval.
      }
    }
  }
  return {
    available: port.available,
    async request(request: ApprovalRequest) {
      emit({ type: 'approval-asked', callId: request.callId, name: request.name, summary: request.summary, reason: request.reason })
      try {
        const answer = await port.request(request)
        emit({ type: 'approval-answered', callId: request.callId, answer })
        return answer
      } catch (error) {
        emit({ type: 'approval-answered', callId: request.callId, answer: 'failed' })
        throw error
      }
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
