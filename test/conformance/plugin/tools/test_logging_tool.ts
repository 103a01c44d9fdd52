import { defineTool } from 'seam-runtime'
import { z } from 'zod'

/**
 * Logs a line (conformance: server-stateless). A 2026-07-28 request gets logging notifications
 * only when its `_meta` carries a log level; the suite sends none, and must hear none.
 */
export default defineTool({
  description: 'Logs one line and returns.',
  input: z.object({}),
  approval: 'never',
  annotations: { readOnlyHint: true },
  execute(_args, ctx) {
    ctx.log.info('test_logging_tool ran')
    return 'logged'
  },
  render: (_args, text) => text,
})
