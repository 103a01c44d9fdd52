/**
 * `seam-runtime/ai-sdk`: a turn's tools as a Vercel AI SDK `ToolSet` whose calls run through the
 * pipeline. No AI SDK package is loaded.
 */
export { aiSdkTools, ToolOutcomeError } from './adapters/ai-sdk.js'
