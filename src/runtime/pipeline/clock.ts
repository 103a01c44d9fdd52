/**
 * The wall clock of a call without reading it per call. A call reads `performance.now()` when it
 * starts and when it settles; its journal timestamps (whole epoch milliseconds) are those readings
 * on an anchor taken from `Date.now()` at most once a second, so they follow an adjustment of the
 * system clock within a second, and within a call they agree with its measured duration.
 */
import { performance } from 'node:perf_hooks'

const REANCHOR_MS = 1_000

let anchorMono = Number.NEGATIVE_INFINITY
let anchorWall = 0

/** Epoch milliseconds (whole) for a `performance.now()` reading of this process. */
export function epochAt(mono: number): number {
  if (mono - anchorMono > REANCHOR_MS) {
    anchorMono = performance.now()
    anchorWall = Date.now()
  }
  return Math.round(anchorWall + (mono - anchorMono))
}
