import { defineTool } from 'seam-runtime'

/** A JSON Schema 2020-12 input, served as written (conformance: json-schema-2020-12). */
export default defineTool({
  description: 'Tool with JSON Schema 2020-12 features',
  input: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: {
      address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
    },
    properties: {
      name: { type: 'string' },
      address: { $ref: '#/$defs/address' },
      contactMethod: { type: 'string', enum: ['phone', 'email'] },
      phone: { type: 'string' },
      email: { type: 'string' },
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, which the suite checks is served as written
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false,
  },
  approval: 'never',
  annotations: { readOnlyHint: true },
  execute: (args) => args,
})
