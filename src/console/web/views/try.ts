import type { CatalogView, ToolView, TryResult } from '../../types.js'
import { api } from '../client.js'
import { contentView } from '../content.js'
import { badge, h, ms, replace, toneOf } from '../dom.js'
import { isObject, typeOf } from '../schema-view.js'
import { questionList } from './questions.js'
import type { View, ViewContext } from './view.js'

/** A form generated from a tool's input schema; the call runs through the whole pipeline as the named principal. */
export function tryView(context: ViewContext, initial: string | undefined): View {
  const picker = h('select', { id: 'try-tool', name: 'tool' })
  const fields = h('fieldset', null, h('legend', null, 'arguments'))
  const subject = h('input', { id: 'try-subject', name: 'subject', type: 'text', required: true, value: 'console-user', autocomplete: 'off' })
  const session = h('input', { id: 'try-session', name: 'session', type: 'text', value: 'console', autocomplete: 'off' })
  const result = h('section', { 'aria-live': 'polite', 'aria-label': 'outcome', class: 'outcome' })
  const submit = h('button', { type: 'submit' }, 'Run')
  let tools: ToolView[] = []
  let running: string | undefined
  // What the running call asks (ctx.ask) is answered here too: the outcome waits on it.
  const asks = questionList(context, 'It asks nothing so far.', (question) => question.name === running)
  const form = h(
    'form',
    {
      class: 'try',
      onsubmit: (e: Event) => {
        e.preventDefault()
        void run()
      },
    },
    h('label', { for: 'try-tool' }, 'tool', picker),
    h('label', { for: 'try-subject' }, 'run as (principal)', subject),
    h('label', { for: 'try-session' }, 'session', session),
    fields,
    submit,
  )
  const element = h('div', null, h('h1', null, 'Try a tool'), form, result)
  picker.addEventListener('change', () => renderFields())

  function selected(): ToolView | undefined {
    return tools.find((tool) => tool.name === picker.value)
  }

  function renderFields(): void {
    const tool = selected()
    const schema = isObject(tool?.input) ? tool.input : {}
    const properties = isObject(schema.properties) ? schema.properties : {}
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : [])
    replace(
      fields,
      h('legend', null, `arguments of ${tool?.name ?? '…'}`),
      tool ? h('p', { class: 'muted' }, tool.description) : null,
      Object.entries(properties).map(([name, child]) => field(name, child, required.has(name))),
      Object.keys(properties).length === 0 ? h('p', { class: 'muted' }, 'no arguments') : null,
    )
  }

  async function run(): Promise<void> {
    const tool = selected()
    if (!tool) return
    submit.disabled = true
    running = tool.name
    replace(result, h('p', { class: 'muted' }, `running ${tool.name}… (a call that needs approval waits in Approvals)`), asks.element)
    void asks.refresh()
    try {
      const args = collect(fields)
      show(await api.tryTool({ tool: tool.name, arguments: JSON.stringify(args), subjectId: subject.value, session: session.value }))
    } catch (error) {
      replace(result, h('p', { class: 'error', role: 'alert' }, (error as Error).message))
    } finally {
      submit.disabled = false
      running = undefined
    }
  }

  function show({ outcome, turnId }: TryResult): void {
    replace(
      result,
      h('h2', null, 'Outcome'),
      h(
        'p',
        null,
        badge(outcome.status, toneOf(outcome.status)),
        outcome.code ? [' ', badge(outcome.code, 'warn')] : null,
        h('span', { class: 'muted' }, ` ${ms(outcome.durationMs)} · generation ${outcome.generation} · `),
        h('a', { href: `#/journal/${encodeURIComponent(turnId)}` }, 'in the journal'),
      ),
      outcome.reason ? h('p', null, outcome.reason) : null,
      contentView(outcome.content),
    )
  }

  void api.catalog().then((catalog: CatalogView) => {
    tools = catalog.tools
    replace(picker, tools.map((tool) => h('option', { value: tool.name }, tool.name)))
    if (initial && tools.some((tool) => tool.name === initial)) picker.value = initial
    renderFields()
  })
  return {
    element,
    onEvent(event) {
      if (event.type === 'questions') asks.show(event)
    },
  }
}

function field(name: string, schema: unknown, required: boolean): HTMLElement {
  const id = `arg-${name}`
  const type = isObject(schema) ? schema.type : undefined
  const hint = h('span', { class: 'muted' }, ` ${typeOf(schema)}${required ? ', required' : ''}`)
  const description = isObject(schema) && typeof schema.description === 'string' ? h('small', null, schema.description) : null
  let control: HTMLElement
  if (isObject(schema) && Array.isArray(schema.enum)) {
    control = h('select', { id, 'data-arg': name, 'data-kind': 'enum' }, required ? null : h('option', { value: '' }, '(none)'), schema.enum.map((v) => h('option', { value: JSON.stringify(v) }, String(v))))
  } else if (type === 'boolean') {
    control = h('input', { id, type: 'checkbox', 'data-arg': name, 'data-kind': 'boolean' })
  } else if (type === 'number' || type === 'integer') {
    control = h('input', { id, type: 'number', step: type === 'integer' ? 1 : 'any', 'data-arg': name, 'data-kind': 'number', required })
  } else if (type === 'string') {
    control = h('input', { id, type: 'text', 'data-arg': name, 'data-kind': 'string', required, autocomplete: 'off' })
  } else {
    control = h('textarea', { id, rows: 3, 'data-arg': name, 'data-kind': 'json', placeholder: 'JSON' })
  }
  return h('label', { for: id, class: 'arg' }, h('code', null, name), hint, control, description)
}

/** The form's values as arguments: empty optional fields are left out; JSON fields are parsed. */
function collect(fields: HTMLElement): Record<string, unknown> {
  const args: Record<string, unknown> = {}
  for (const control of fields.querySelectorAll<HTMLInputElement>('[data-arg]')) {
    const name = control.dataset.arg!
    const kind = control.dataset.kind
    if (kind === 'boolean') args[name] = control.checked
    else if (control.value === '') continue
    else if (kind === 'number') args[name] = Number(control.value)
    else if (kind === 'string') args[name] = control.value
    else {
      try {
        args[name] = JSON.parse(control.value)
      } catch {
        throw new Error(`${name}: not valid JSON`)
      }
    }
  }
  return args
}
