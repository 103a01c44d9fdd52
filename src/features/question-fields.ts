/**
 * What a question's fields offer, read the same way wherever an answer is made or checked: by the
 * runtime (`checkContent`), the terminal's prompt and the console page's form. The page bundles this
 * file, so it stays pure: no Node, and nothing but types imported.
 */
import type { QuestionField } from '../seams/questions.js'

/** The choices of a single- or multi-select field (`undefined` for a free field). */
export function choicesOf(field: QuestionField): readonly { value: string; title: string }[] | undefined {
  if (field.type === 'string') {
    if (field.oneOf) return field.oneOf.map((o) => ({ value: o.const, title: o.title }))
    if (field.enum) return field.enum.map((value, i) => ({ value, title: field.enumNames?.[i] ?? value }))
    return undefined
  }
  if (field.type === 'array') {
    const { items } = field
    return 'anyOf' in items ? items.anyOf.map((o) => ({ value: o.const, title: o.title })) : items.enum.map((value) => ({ value, title: value }))
  }
  return undefined
}
