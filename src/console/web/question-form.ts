import type { AnswerValue, PendingQuestionView, QuestionField, QuestionReply } from '../types.js'
import { choicesOf } from '../../features/question-fields.js'
import { h } from './dom.js'

/** The input each string format is typed in: one for every format a question may give (`StringField.format`). */
const INPUT_TYPE: Record<NonNullable<Extract<QuestionField, { type: 'string' }>['format']>, string> = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }

/**
 * A tool's question as a form drawn from its flat schema: a text field per string (typed by its
 * format, bounded by its lengths), a number field per number or integer (bounded, stepped), a
 * checkbox per boolean, a select per single choice, a group of checkboxes per multi-select; each
 * labelled by its title, described by its description, prefilled with its default, required where
 * the schema says. Submit accepts with the values; the other two buttons decline and cancel.
 */
export function questionForm(question: PendingQuestionView, reply: (answer: QuestionReply) => Promise<void>): HTMLFormElement {
  const required = new Set(question.schema.required ?? [])
  const fields = Object.entries(question.schema.properties).map(([key, field]) => control(question.id, key, field, required.has(key)))
  const error = h('p', { class: 'error', role: 'alert', hidden: true })
  const send = async (answer: QuestionReply) => {
    for (const button of form.querySelectorAll('button')) button.disabled = true
    try {
      await reply(answer)
    } catch (e) {
      error.textContent = (e as Error).message
      error.hidden = false
      for (const button of form.querySelectorAll('button')) button.disabled = false
    }
  }
  const form = h(
    'form',
    {
      class: 'question',
      'aria-label': `answer ${question.name}: ${question.message}`,
      onsubmit: (e: Event) => {
        e.preventDefault()
        const content: Record<string, AnswerValue> = {}
        for (const field of fields) {
          const value = field.read()
          if (value !== undefined) content[field.key] = value
        }
        void send({ action: 'accept', content })
      },
    },
    fields.map((f) => f.element),
    error,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit' }, 'Answer'),
      h('button', { type: 'button', class: 'decline', onclick: () => void send({ action: 'decline' }) }, 'Decline'),
      h('button', { type: 'button', class: 'dismiss', onclick: () => void send({ action: 'cancel' }) }, 'Cancel'),
    ),
  )
  return form
}

interface Control {
  readonly key: string
  readonly element: HTMLElement
  /** The field's value; `undefined` leaves it out (empty, so its default or absence applies). */
  read(): AnswerValue | undefined
}

function control(questionId: string, key: string, field: QuestionField, required: boolean): Control {
  const id = `q-${questionId}-${key}`
  const title = field.title ?? key
  const described = field.description ? h('small', { id: `${id}-about` }, field.description) : null
  const about = described ? `${id}-about` : null
  const hint = [required ? 'required' : '', boundsOf(field)].filter(Boolean).join(', ')
  const label = (...children: (HTMLElement | string | null)[]) => h('label', { for: id, class: 'arg' }, h('span', null, title, hint ? h('span', { class: 'muted' }, ` (${hint})`) : null), ...children, described)
  const choices = choicesOf(field)
  if (field.type === 'array') {
    const boxes = (choices ?? []).map((choice, i) =>
      h('label', { class: 'choice' }, h('input', { type: 'checkbox', id: i === 0 ? id : `${id}-${i}`, value: choice.value, checked: field.default?.includes(choice.value) === true }), ` ${choice.title}`),
    )
    const bounds = [field.minItems !== undefined ? `at least ${field.minItems}` : '', field.maxItems !== undefined ? `at most ${field.maxItems}` : ''].filter(Boolean).join(', ')
    const element = h(
      'fieldset',
      { class: 'arg choices', 'aria-describedby': about },
      h('legend', null, title, required ? h('span', { class: 'muted' }, ' (required)') : null, bounds ? h('span', { class: 'muted' }, ` (${bounds})`) : null),
      boxes,
      described,
    )
    return {
      key,
      element,
      read: () => {
        const picked = [...element.querySelectorAll<HTMLInputElement>('input:checked')].map((box) => box.value)
        return picked.length === 0 && !required && field.minItems === undefined ? undefined : picked
      },
    }
  }
  if (field.type === 'string' && choices) {
    const select = h(
      'select',
      { id, required, 'aria-describedby': about },
      // Without a default, nothing is picked for the person: a required choice must be made.
      field.default === undefined ? h('option', { value: '' }, required ? 'choose…' : '(none)') : null,
      choices.map((choice) => h('option', { value: choice.value, selected: choice.value === field.default }, choice.title)),
    )
    return { key, element: label(select), read: () => (select.value === '' ? undefined : select.value) }
  }
  if (field.type === 'boolean') {
    const box = h('input', { id, type: 'checkbox', checked: field.default === true, 'aria-describedby': about })
    return { key, element: h('label', { for: id, class: 'arg choice' }, box, ` ${title}`, described), read: () => box.checked }
  }
  // A number or an integer field: TypeScript narrows the union by `!== 'string'`, not by testing both of NumberField's types.
  if (field.type !== 'string') {
    const input = h('input', {
      id,
      type: 'number',
      step: field.type === 'integer' ? 1 : 'any',
      min: field.minimum,
      max: field.maximum,
      required,
      value: field.default,
      'aria-describedby': about,
    })
    return { key, element: label(input), read: () => (input.value === '' ? undefined : Number(input.value)) }
  }
  const input = h('input', {
    id,
    type: (field.format && INPUT_TYPE[field.format]) ?? 'text',
    minlength: field.minLength,
    maxlength: field.maxLength,
    required,
    value: field.default,
    autocomplete: 'off',
    'aria-describedby': about,
  })
  // A date-time input reads `2026-12-03T10:00`; the schema's format wants seconds and a zone.
  const read = () => (input.value === '' ? undefined : field.format === 'date-time' ? new Date(input.value).toISOString() : input.value)
  return { key, element: label(input), read }
}

/** A number's range or a text's lengths, in words (the browser enforces them too). */
function boundsOf(field: QuestionField): string {
  if (field.type === 'string') {
    const chars = (n: number) => `${n} character${n === 1 ? '' : 's'}`
    const { minLength: low, maxLength: high } = field
    if (low !== undefined && high !== undefined) return `${low} to ${chars(high)}`
    if (low !== undefined) return `at least ${chars(low)}`
    return high !== undefined ? `at most ${chars(high)}` : ''
  }
  if (field.type !== 'number' && field.type !== 'integer') return ''
  const { minimum: low, maximum: high } = field
  if (low !== undefined && high !== undefined) return `${low} to ${high}`
  if (low !== undefined) return `from ${low}`
  return high !== undefined ? `up to ${high}` : ''
}
