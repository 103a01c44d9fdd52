import type { QuestionSchema } from '../src/index.js'

/** Every field shape MCP elicitation allows, with defaults on some. */
export const EVERY_SHAPE: QuestionSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', minLength: 1 },
    email: { type: 'string', format: 'email' },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    ratio: { type: 'number', default: 0.5 },
    subscribe: { type: 'boolean', default: true },
    plan: { type: 'string', enum: ['free', 'pro'] },
    region: { type: 'string', oneOf: [{ const: 'eu', title: 'Europe' }, { const: 'us', title: 'United States' }] },
    legacy: { type: 'string', enum: ['a', 'b'], enumNames: ['Option A', 'Option B'] },
    tags: { type: 'array', items: { type: 'string', enum: ['x', 'y', 'z'] }, default: ['x'] },
    colors: { type: 'array', items: { anyOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }] }, minItems: 1 },
  },
  required: ['name', 'plan'],
}
