/**
 * The bridge between a Code Mode program and the pipeline: each `tools.x(args)` the sandbox reports
 * is a nested call of the `run_code` call (see `nestedCall`), in the order the program issued them.
 * 1. A sub-call runs when the batch rule lets it: a concurrency-safe call overlaps the others (at
 *    most `maxParallel` at once), any other waits for every call before it and holds back every
 *    call after it (a barrier).
 * 2. Its outcome answers the program: a value, or a failure with the outcome's code and text.
 * 3. A sub-call whose approval is deferred parks the run (see `parkRun`): from then on no sub-call
 *    runs, each is answered `APPROVAL_PENDING`, and the program's own result is dropped.
 * 4. A resumed run (`CodeResume`) answers the sub-calls its round holds from there without running
 *    them, continues the waiting one from its decision, and runs the rest; a sub-call other than the
 *    one the round holds at its place stops the run (`CODE_DIVERGED`).
 */
import type { CallState, TurnContext } from '../pipeline/state.js'
import { classify } from '../pipeline/classify.js'
import { nestedCall, runNested } from '../pipeline/nested.js'
import { continueDecided, lookupParked } from '../pipeline/resume.js'
import type { ToolCallOutcome } from '../../seams/calls.js'
import type { CodeSubCall } from '../../seams/coordination.js'
import type { ContentBlock } from '../../seams/journal.js'
import type { CodeHost, SubCallSettlement } from './types.js'

type Answer = NonNullable<CodeSubCall['answer']>

/** The sub-call that parked the run: what its round lists and keeps. */
export interface WaitingSubCall {
  readonly index: number
  readonly state: CallState
  readonly arguments: string
}

export class CodeBridge implements CodeHost {
  readonly #outer: CallState
  readonly #signal: AbortSignal
  readonly #maxParallel: number
  /** Every sub-call so far, by index: tool, arguments, and its answer once it settled. */
  readonly calls: CodeSubCall[] = []
  waiting: WaitingSubCall | undefined
  diverged: { readonly index: number; readonly message: string } | undefined
  /** Settles once every sub-call issued so far has (the next exclusive call waits for it). */
  #tail: Promise<unknown> = Promise.resolve()
  /** Settles once the last exclusive sub-call has (the next safe call waits for it). */
  #gate: Promise<unknown> = Promise.resolve()
  /** Safe sub-calls running, and those waiting for a slot. */
  #active = 0
  readonly #queue: (() => void)[] = []

  constructor(outer: CallState, signal: AbortSignal) {
    this.#outer = outer
    this.#signal = signal
    this.#maxParallel = Math.max(1, outer.ctx.turn.policy.maxParallel ?? outer.ctx.limits.maxParallel)
  }

  callTool(index: number, name: string, args: unknown): Promise<SubCallSettlement> {
    const raw = JSON.stringify(args ?? {})
    const stopped = this.#stopped()
    if (stopped !== undefined) {
      this.calls[index] = { name, arguments: raw }
      return Promise.resolve(stopped)
    }
    const resume = this.#outer.codeResume
    const logged = resume?.round.code?.calls[index]
    if (resume !== undefined && logged != null) {
      if (logged.name !== name || logged.arguments !== raw) return Promise.resolve(this.#diverge(index, name, logged))
      this.calls[index] = logged
      if (logged.answer !== undefined) return Promise.resolve(asSettlement(logged.answer))
      if (index === resume.round.code!.index) return this.#continueWaiting(index, name, raw)
    }
    this.calls[index] = { name, arguments: raw }
    const earlier = resume?.journaled.get(`${this.#outer.call.callId}/${index + 1}`)
    if (earlier !== undefined) {
      // Journaled by an earlier run, and not settled in the round: it may have run, so it is not run again.
      const answer: Answer =
        earlier === null || earlier.status !== 'completed'
          ? { ok: false, code: earlier?.code ?? 'OUTCOME_UNKNOWN', message: earlier === null ? 'An earlier run of this program started this call and its outcome is unknown: it is not run again.' : contentText(earlier.content) }
          : { ok: false, code: 'OUTCOME_UNKNOWN', message: 'An earlier run of this program ran this call; its value was not kept, and it is not run again.' }
      this.calls[index] = { name, arguments: raw, answer }
      return Promise.resolve(asSettlement(answer))
    }
    const ctx = resume === undefined ? undefined : { ...this.#outer.ctx, nextSeq: resume.fresh }
    const { state } = nestedCall(this.#outer, name, raw, this.#signal, { n: index + 1, ...(ctx === undefined ? {} : { ctx }) })
    return this.#schedule(state, () => runNested(state)).then((outcome) => this.#answer(index, name, raw, state, outcome))
  }

  /** Why no further sub-call runs: the run parked or diverged. */
  #stopped(): SubCallSettlement | undefined {
    if (this.diverged !== undefined) return { ok: false, code: 'CODE_DIVERGED', message: this.diverged.message }
    if (this.waiting !== undefined) {
      return { ok: false, code: 'APPROVAL_PENDING', message: 'Not run: an earlier call of this program is waiting for approval; the program runs again once it is decided.' }
    }
    return undefined
  }

  #diverge(index: number, name: string, logged: CodeSubCall): SubCallSettlement {
    const message = `The program asked for ${name}(…) as call ${index + 1}, where its first run asked for ${logged.name}(…) with other arguments or another tool: it no longer does what was approved, so it was stopped.`
    this.diverged ??= { index, message }
    // Nothing the program does after this counts: the run ends here.
    return { ok: false, code: 'CODE_DIVERGED', message, endRun: true }
  }

  /** The waiting sub-call of a resumed run: continued from its decision, at the seqs its round kept. */
  #continueWaiting(index: number, name: string, raw: string): Promise<SubCallSettlement> {
    const resume = this.#outer.codeResume!
    const { round, changed } = resume
    const kept = [round.decidedSeq, round.code!.subResultSeq]
    const ctx: TurnContext = { ...this.#outer.ctx, nextSeq: () => kept.shift() ?? resume.fresh() }
    const { state } = nestedCall(this.#outer, name, raw, this.#signal, { n: index + 1, ctx })
    // Its `tool/call` and `approval/asked` were written by the first run.
    state.journaled = true
    state.raw = raw
    const run = async (): Promise<ToolCallOutcome> => {
      await lookupParked(state)
      return continueDecided(state, round, changed)
    }
    return this.#schedule(state, run).then((outcome) => this.#answer(index, name, raw, state, outcome))
  }

  #answer(index: number, name: string, raw: string, state: CallState, outcome: ToolCallOutcome): SubCallSettlement {
    if (outcome.status === 'suspended') {
      this.waiting ??= { index, state, arguments: raw }
      const stopped = this.#stopped()!
      return this.waiting.index === index ? { ok: false, code: 'APPROVAL_PENDING', message: textOf(outcome) } : stopped
    }
    const answer: Answer =
      outcome.status === 'completed'
        ? { ok: true, value: outcome.value === undefined ? textOf(outcome) : outcome.value }
        : { ok: false, code: outcome.code ?? 'TOOL_ERROR', message: textOf(outcome) }
    this.calls[index] = { name, arguments: raw, answer }
    return asSettlement(answer)
  }

  /** Runs `start` when the batch rule lets `state` start (see the file's comment, step 1). */
  #schedule(state: CallState, start: () => Promise<ToolCallOutcome>): Promise<ToolCallOutcome> {
    let run: Promise<ToolCallOutcome>
    if (classify(state)) {
      run = this.#gate.then(() => this.#acquire()).then(() => start().finally(() => this.#release()))
    } else {
      run = this.#tail.then(start)
      this.#gate = run.catch(() => undefined)
    }
    this.#tail = Promise.all([this.#tail, run.catch(() => undefined)])
    return run
  }

  /** A slot of the `maxParallel` safe sub-calls that may run at once, first come first served. */
  #acquire(): Promise<void> | undefined {
    if (this.#active < this.#maxParallel) {
      this.#active += 1
      return undefined
    }
    return new Promise((resolve) => this.#queue.push(resolve))
  }

  #release(): void {
    const next = this.#queue.shift()
    if (next === undefined) this.#active -= 1
    else next()
  }
}

function asSettlement(answer: Answer): SubCallSettlement {
  return answer.ok ? { ok: true, value: answer.value } : { ok: false, code: answer.code, message: answer.message }
}

/** An outcome's text blocks, as one string (what the model would read). */
function textOf(outcome: ToolCallOutcome): string {
  return contentText(outcome.content) || `The call to "${outcome.name}" ended ${outcome.status}.`
}

function contentText(content: readonly ContentBlock[]): string {
  return content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n')
}
