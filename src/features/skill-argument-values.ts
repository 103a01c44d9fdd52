/** The most `values:` a skill argument may declare. */
export const MAX_ARGUMENT_VALUES = 100

/** The most characters one declared value may have. */
export const MAX_ARGUMENT_VALUE_LENGTH = 200

/**
 * A skill argument's `values:` (what `completion/complete` offers) checked as data: the list, or,
 * when it is malformed, what it must be (for the caller's message).
 */
export function argumentValues(value: unknown): string[] | string {
  const shape = `a list of at most ${MAX_ARGUMENT_VALUES} distinct non-empty strings of at most ${MAX_ARGUMENT_VALUE_LENGTH} characters`
  if (!Array.isArray(value) || value.length > MAX_ARGUMENT_VALUES) return shape
  if (!value.every((v) => typeof v === 'string' && v !== '' && v.length <= MAX_ARGUMENT_VALUE_LENGTH)) return shape
  if (new Set(value).size !== value.length) return shape
  return value as string[]
}
