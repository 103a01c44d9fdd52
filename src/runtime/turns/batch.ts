import { classify } from '../pipeline/classify.js'
import { abortedBeforeDispatch, admit, commit, fault, NOTIFIES, runCall, startExecution } from '../pipeline/runner.js'
import type { CallState } from '../pipeline/state.js'

/**
 * Runs one model message's calls (`executeBatch`), each state in model order:
 *
 * 1. A call is safe when `classify` says so, right before it starts (again after any wait).
 * 2. A safe call waits for a free slot (`maxParallel` calls admitted and not yet committed); an
 *    exclusive call waits until every call before it has committed, then runs alone.
 * 3. Admission (stages 1–6) runs in model order, one call at a time; bodies overlap.
 * 4. Commitment (stages 8–11) runs in model order: a call commits once its body has settled and
 *    the call before it has committed.
 * 5. After an abort nothing starts: each unstarted call is journaled and committed, in order, as
 *    `ABORTED_BEFORE_DISPATCH`; calls already started drain and commit.
 *
 * Resolves once every call has committed. The calls in flight are an array and two indexes, and a
 * body's settling commits it (and any done calls after it) in that callback: chaining a promise per
 * call for the order, and another for the pool, cost more than the pipeline's own stages.
 */
export async function runBatch(states: readonly CallState[], signal: AbortSignal, maxParallel: number): Promise<void> {
  const queue = new CommitQueue()
  const steps = states.length > 1 && commitsObserved(states[0]!) ? STEPS_BEFORE_START : 0
  for (const state of states) {
    let safe = false
    if (!signal.aborted && classify(state)) {
      safe = queue.running < maxParallel
      while (queue.running >= maxParallel && !signal.aborted) await queue.slot()
    } else if (!signal.aborted) {
      // Exclusive: a barrier. Everything before it has committed before it is admitted.
      await queue.drained()
    }
    if (signal.aborted) {
      queue.push(state, ABORTED)
      continue
    }
    // Reclassify after waiting: a commit may have changed the tool (or the policy) meanwhile.
    if (!safe && !classify(state)) {
      await queue.drained()
      await runCall(state, ignore)
      continue
    }
    const admitted = admit(state)
    if (admitted !== undefined) await admitted
    // A few steps between a call's admission and its start while calls before it have not
    // committed, even when nothing waited: their commits (and result observers) run there, so an
    // observer that aborts the batch stops the calls after it (the last abort check runs in the
    // step that starts the body). Only when host code sees commits at all (`commitsObserved`).
    for (let step = 0; step < steps && queue.uncommitted; step += 1) await STEP
    if (state.settled) queue.push(state, undefined)
    else queue.start(state)
  }
  await queue.drained()
}

/**
 * Whether host code sees a call's commit before the batch ends, and so may abort the batch there:
 * a post-execute or result hook of the generation, or a telemetry probe. Without one, nothing can
 * act on an earlier call's commit before a later call starts, and the steps that let it would cost
 * a third of a batch call.
 */
function commitsObserved(state: CallState): boolean {
  const { hooks } = state.ctx.generation
  return hooks.postExecute.length > 0 || hooks.result.length > 0 || state.ctx.probe !== undefined
}

const STEP = Promise.resolve()
/** Microtask steps each call gives the commits before it (see `runBatch`): an awaited resolved promise allocates nothing. */
const STEPS_BEFORE_START = 3

/** Marks an entry whose call never started: it commits as `ABORTED_BEFORE_DISPATCH`. */
const ABORTED = 'aborted'

/** A call in the queue: its state, and whether it may commit (its body settled, or it never ran one). */
class Entry {
  done = false
  constructor(
    readonly state: CallState,
    readonly aborted: boolean,
  ) {}
}

/** The batch's calls in model order, committed in that order as each becomes done. */
class CommitQueue {
  readonly #entries: Entry[] = []
  /** The first entry not yet committed. */
  #head = 0
  /** Calls admitted to the pool and not yet committed (aborted ones never count). */
  running = 0
  /** A commit that returned a promise is in progress: the next waits for it. */
  #committing = false
  #wake: (() => void) | undefined = undefined
  /** Resolves `drained()`'s promise once nothing pushed is left to commit. */
  #whenDrained: (() => void) | undefined = undefined

  /** Adds a call that runs nothing (`undefined`: settled already) or never started (`ABORTED`). */
  push(state: CallState, body: undefined | typeof ABORTED): void {
    this.#settled(this.#add(state, body === ABORTED))
  }

  /**
   * Adds a call and starts its execution: a body without wrappers tells its entry when the call
   * is settled (no promise per call to wait on); otherwise the entry waits on the promise.
   */
  start(state: CallState): void {
    const entry = this.#add(state, false)
    const body = startExecution(state, () => this.#settled(entry))
    if (body === NOTIFIES) return
    if (body === undefined) {
      this.#settled(entry)
      return
    }
    body.then(
      () => this.#settled(entry),
      (error: unknown) => {
        fault(entry.state, error)
        this.#settled(entry)
      },
    )
  }

  #add(state: CallState, aborted: boolean): Entry {
    const entry = new Entry(state, aborted)
    this.#entries.push(entry)
    if (!aborted) this.running += 1
    return entry
  }

  #settled(entry: Entry): void {
    entry.done = true
    this.#drain()
  }

  /** Commits every done entry from the head on, in order, until one is not done yet. */
  #drain(): void {
    if (this.#committing) return
    const entries = this.#entries
    while (this.#head < entries.length && entries[this.#head]!.done) {
      const entry = entries[this.#head]!
      const pending = entry.aborted ? abortedBeforeDispatch(entry.state) : commit(entry.state)
      if (pending !== undefined) {
        this.#committing = true
        // Neither rejects: both settle their faults (`recover`, `fault`).
        pending.then(() => {
          this.#committing = false
          this.#committed(entry)
          this.#drain()
        })
        return
      }
      this.#committed(entry)
    }
  }

  #committed(entry: Entry): void {
    this.#head += 1
    if (!entry.aborted) this.running -= 1
    const wake = this.#wake
    if (wake !== undefined) {
      this.#wake = undefined
      wake()
    }
    const whenDrained = this.#whenDrained
    if (whenDrained !== undefined && !this.uncommitted) {
      this.#whenDrained = undefined
      whenDrained()
    }
  }

  /** Some call pushed so far has not committed yet. */
  get uncommitted(): boolean {
    return this.#head < this.#entries.length
  }

  /** Resolves after the next commit. Only the batch's own loop waits, one wait at a time. */
  slot(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve
    })
  }

  /**
   * Resolves once every call pushed so far has committed: woken by the last commit only, not by
   * each one (a batch's calls commit one microtask apart). Only the batch's own loop waits.
   */
  drained(): Promise<void> {
    if (!this.uncommitted) return DRAINED
    return new Promise((resolve) => {
      this.#whenDrained = resolve
    })
  }
}

const DRAINED = Promise.resolve()

function ignore(): void {}
