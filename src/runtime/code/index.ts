export { declarationsFor, type ToolDeclarationSource } from './declarations.js'
export { CODE_MODE_RULES } from './rules.js'
export { createCodeSandbox } from './sandbox.js'
export {
  type CodeFailureCode,
  type CodeHost,
  type CodeLimits,
  type CodeLogEntry,
  type CodeLogLevel,
  type CodeRecorded,
  type CodeRunCode,
  type CodeRunRequest,
  type CodeRunResult,
  type CodeSandbox,
  type CodeSandboxOptions,
  DEFAULT_CODE_LIMITS,
  type SubCallSettlement,
} from './types.js'
