import type { AnswerValue, QuestionAnswer, QuestionField, QuestionRequest } from '../seams/questions.js'
import type { QuestionPort } from '../seams/types.js'
import { choicesOf } from '../features/question-fields.js'
import { printable } from './format.js'
import type { OutStream, Style } from './io.js'

/** Reads one line after showing a prompt; `undefined` at end of input or on abort. */
export type ReadLine = (prompt: string, signal: AbortSignal) => Promise<string | undefined>

const CANCEL: QuestionAnswer = Object.freeze({ action: 'cancel' })

/** Unreadable answers to one field before the question is cancelled. */
const MAX_TRIES = 3

/**
 * A tool's question (`ctx.ask`) at a terminal: `? <message>`, then `answer it? [y]es / [n]o`
 * (`n` declines), then one line per field: a choice by its value, title or number, several as a
 * comma-separated list, `y`/`n` for a boolean; an empty line takes the default, or leaves an
 * optional field out. End of input, an abort or three unreadable answers to a field cancel.
 * Questions are asked one at a time; the pipeline checks the answer against the schema. A question
 * withdrawn while it waits its turn is never shown; one withdrawn while shown (answered in the
 * console first, say) says so and gives the terminal back.
 */
export function terminalQuestions(read: ReadLine, output: OutStream, style: Style): QuestionPort {
  let queue: Promise<unknown> = Promise.resolve()
  return {
    elicit(request) {
      const answer = queue.then(async () => {
        if (request.signal.aborted) return CANCEL
        const given = await ask(read, output, style, request)
        if (request.signal.aborted) output.write(`\n  ${style.dim('no longer asked (answered elsewhere, or the call ended)')}\n`)
        return given
      })
      queue = answer.catch(() => {})
      return answer
    },
  }
}

async function ask(read: ReadLine, output: OutStream, style: Style, request: QuestionRequest): Promise<QuestionAnswer> {
  const { signal, schema } = request
  output.write(`${style.yellow('?')} ${style.bold(printable(request.name))} asks: ${printable(request.message)}\n`)
  const go = (await read(`answer it? ${style.dim('[y]es / [n]o')} `, signal))?.trim().toLowerCase()
  if (go === undefined) return { action: 'cancel' }
  if (go === 'n' || go === 'no') return { action: 'decline' }
  const content: Record<string, AnswerValue> = {}
  for (const [key, field] of Object.entries(schema.properties)) {
    const required = schema.required?.includes(key) === true
    let value: AnswerValue | undefined | null = null
    for (let attempt = 0; attempt < MAX_TRIES && value === null; attempt++) {
      const text = await read(`  ${fieldPrompt(key, field, required, style)} `, signal)
      if (text === undefined) return { action: 'cancel' }
      value = parse(field, text.trim(), required)
      if (value === null) output.write(`  ${style.red(hintFor(field))}\n`)
    }
    if (value === null) return { action: 'cancel' }
    if (value !== undefined) content[key] = value
  }
  return { action: 'accept', content }
}

function fieldPrompt(key: string, field: QuestionField, required: boolean, style: Style): string {
  const label = printable(field.title ?? key)
  const choices = choicesOf(field)
  const offer = choices ? ` ${choices.map((c, i) => `[${i + 1}] ${printable(c.title)}`).join(' ')}` : field.type === 'boolean' ? ' [y/n]' : ''
  const many = field.type === 'array' ? ' (comma-separated)' : ''
  const fallback = field.default !== undefined ? ` (default ${printable(JSON.stringify(field.default))})` : required ? '' : ' (optional)'
  return `${label}${style.dim(`${offer}${many}${fallback}`)}:`
}

function hintFor(field: QuestionField): string {
  if (field.type === 'boolean') return 'answer y or n'
  if (field.type === 'number' || field.type === 'integer') return `answer ${field.type === 'integer' ? 'a whole number' : 'a number'}`
  if (choicesOf(field)) return 'answer one of the choices (its number or its value)'
  return 'this field needs an answer'
}

/** The typed value: `undefined` (left out, or its default applies), or `null` when unreadable. */
function parse(field: QuestionField, text: string, required: boolean): AnswerValue | undefined | null {
  if (text === '') return field.default !== undefined || !required ? undefined : null
  const choices = choicesOf(field)
  const pick = (word: string) => {
    const n = Number(word)
    if (choices && Number.isInteger(n) && n >= 1 && n <= choices.length) return choices[n - 1]!.value
    return choices?.find((c) => c.value === word || c.title.toLowerCase() === word.toLowerCase())?.value
  }
  switch (field.type) {
    case 'boolean': {
      const word = text.toLowerCase()
      if (['y', 'yes', 'true'].includes(word)) return true
      if (['n', 'no', 'false'].includes(word)) return false
      return null
    }
    case 'number':
    case 'integer': {
      const n = Number(text)
      return Number.isFinite(n) && (field.type === 'number' || Number.isInteger(n)) ? n : null
    }
    case 'array': {
      const picked = text.split(',').map((w) => pick(w.trim()))
      return picked.every((v) => v !== undefined) ? (picked as string[]) : null
    }
    case 'string':
      return choices ? (pick(text) ?? null) : text
  }
}
