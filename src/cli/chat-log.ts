import { existsSync } from 'node:fs'
import { appendFile, mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { transcript } from '../adapters/transcript.js'
import type { AgentMessage } from '../adapters/messages.js'
import { redactText } from '../runtime/base/redact.js'
import type { JournalStore } from '../seams/journal.js'
import { CliError, UsageError } from './errors.js'

/** One line of a chat log: a turn's user message when it begins, its answer when it ends. */
type Entry = { turnId: string; user: string } | { turnId: string; answer: string }

const SESSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/**
 * The words of a `seam chat` session, `<dir>/.seam/chat/<session>.jsonl`: the journal keeps every
 * call and result but not what the user and the model said, so the chat keeps those here, keyed
 * by turn id. `--resume` joins the two: per turn, the user's message, the turn's calls and results
 * from the journal (`transcript`), then the answer if the turn got one.
 */
export class ChatLog {
  readonly file: string

  constructor(dir: string, readonly session: string) {
    if (!SESSION.test(session)) throw new UsageError(`a session id is letters, digits, ".", "_" and "-" (at most 64), got "${session}"`)
    this.file = path.join(dir, '.seam', 'chat', `${session}.jsonl`)
  }

  /** Appends `entry` with secrets redacted from its words (what the person typed may hold a key). */
  async append(entry: Entry): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true })
    const kept: Entry = 'user' in entry ? { turnId: entry.turnId, user: redactText(entry.user) } : { turnId: entry.turnId, answer: redactText(entry.answer) }
    await appendFile(this.file, `${JSON.stringify(kept)}\n`)
  }

  /**
   * The conversation so far, every call paired with its result (see `transcript`). A session with
   * no chat log (begun by another host on the same journal) resumes from the journal alone: its
   * calls and results, without the words.
   */
  async history(journal: JournalStore): Promise<{ messages: AgentMessage[]; turns: number; words: boolean }> {
    if (!existsSync(this.file)) {
      const messages = await transcript(journal, { session: this.session })
      const { turns } = await journal.turns({ session: this.session, limit: 1 })
      if (turns.length === 0) throw new CliError(`no session "${this.session}" in ${path.dirname(this.file)} or the journal`, 'start one with `seam chat` and pass the id it prints')
      return { messages, turns: 0, words: false }
    }
    const turns = new Map<string, { user?: string; answer?: string }>()
    for (const text of (await readFile(this.file, 'utf8')).split('\n')) {
      const entry = parse(text)
      if (!entry) continue
      const turn = turns.get(entry.turnId) ?? {}
      if ('user' in entry) turn.user = entry.user
      else turn.answer = entry.answer
      turns.set(entry.turnId, turn)
    }
    const messages: AgentMessage[] = []
    for (const [turnId, turn] of turns) {
      if (turn.user !== undefined) messages.push({ role: 'user', content: turn.user })
      messages.push(...(await transcript(journal, { turnId })))
      if (turn.answer) messages.push({ role: 'assistant', content: turn.answer })
    }
    return { messages, turns: turns.size, words: true }
  }
}

/** A line cut short by a crash is skipped, not fatal. */
function parse(text: string): Entry | undefined {
  try {
    const value = JSON.parse(text) as Partial<Record<'turnId' | 'user' | 'answer', unknown>>
    if (typeof value.turnId !== 'string') return undefined
    if (typeof value.user === 'string') return { turnId: value.turnId, user: value.user }
    if (typeof value.answer === 'string') return { turnId: value.turnId, answer: value.answer }
  } catch {
    // fall through
  }
  return undefined
}
