import { definePlugin } from 'seam-runtime'

/** A 1×1 PNG. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

/** The suite's fixture resources that are not plain files: a binary, a template and two read by URI. */
export default definePlugin({
  name: 'conformance',
  setup(ctx) {
    ctx.addResource('test://static-binary', { name: 'static-binary', mimeType: 'image/png', read: () => Buffer.from(PIXEL, 'base64') })
    ctx.addResource('test://template/{id}/data', {
      name: 'template',
      description: 'A resource template with an id parameter.',
      mimeType: 'application/json',
      read: ({ id }) => JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
    })
    ctx.addResource('test://watched-resource', { name: 'watched-resource', mimeType: 'text/plain', read: () => 'Watched resource content' })
    ctx.addResource('test://example-resource', { name: 'example-resource', mimeType: 'text/plain', read: () => 'Embedded resource content for testing.' })
  },
})
