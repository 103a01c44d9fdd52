/** What a turn's `onAbandoned` is told of a body that outlived its deadline and grace period, and was left running. */
export interface AbandonedCall {
  readonly callId: string
  readonly name: string
  readonly generation: number
  readonly since: number
}
