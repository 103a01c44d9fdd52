import type { ErrorCode } from '../errors.js'

/** A problem found while building a generation: shown with a code frame, never fatal to the active one. */
export interface Diagnostic {
  readonly code: ErrorCode
  readonly message: string
  readonly file?: string
  /** 1-based. */
  readonly line?: number
  /** 1-based. */
  readonly column?: number
  /** A few source lines around the location, with a caret under the column. */
  readonly frame?: string
  /** The provider or plugin the problem belongs to, when not a file. */
  readonly source?: string
}
