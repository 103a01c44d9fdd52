import type { CallState } from './state.js'
import { settle } from './settle.js'

/** Stage 2: the turn's lease must be live and the tool must be in the turn's snapshot. */
export function checkGeneration(state: CallState): void {
  const { ctx, call } = state
  if (!live(state, 'this turn has ended and its tools were retired')) return
  const binding = ctx.tools.get(call.name)
  if (!binding) {
    settle(state, {
      status: 'failed',
      code: 'UNKNOWN_TOOL',
      message: `There is no tool named "${call.name}". Available tools: ${listed([...ctx.tools.keys()])}.`,
    })
    return
  }
  if (binding.generation !== ctx.generation || !binding.generation.live) {
    settle(state, {
      status: 'failed',
      code: 'GENERATION_RETIRED',
      message: `The tool "${call.name}" belongs to a retired generation and cannot run. Start a new turn.`,
    })
    return
  }
  state.binding = binding
}

/**
 * The last admission check: a call that waited (for approval, a hook, a guard) may find its turn
 * ended or its generation retired meanwhile, and then must not run.
 */
export function checkStillLive(state: CallState): void {
  live(state, 'its turn ended while it waited')
}

/** Whether the turn and its generation are live; if not, the call settles as `GENERATION_RETIRED`. */
function live(state: CallState, why: string): boolean {
  const { ctx, call } = state
  if (!ctx.ended() && ctx.generation.live) return true
  settle(state, {
    status: 'failed',
    code: 'GENERATION_RETIRED',
    message: `The call to "${call.name}" was not run: ${why}. Start a new turn.`,
  })
  return false
}

/** Names a model can read at a glance: the first 25, then how many more there are. */
function listed(names: readonly string[], shown = 25): string {
  if (names.length === 0) return '(none)'
  const head = names.slice(0, shown).join(', ')
  return names.length > shown ? `${head} and ${names.length - shown} more` : head
}
