import { describe, expect, it } from 'vitest'
// @ts-expect-error a plain ESM script without declarations
import { circles, folderGraph, importGraph, isTest, LAYERS, rankOf, upwardArrows } from '../scripts/import-graph.mjs'

type Graph = Map<string, string[]>
const graph = importGraph() as Graph

describe('the import graph of src/', () => {
  it('reads every source file and its relative imports', () => {
    expect(graph.size).toBeGreaterThan(200)
    expect(graph.get('runtime/root.ts')).toContain('runtime/generations/generation-store.ts')
    expect(graph.get('index.ts')).toContain('runtime/root.ts')
  })

  it('has no circle between files (tests included)', () => {
    expect(circles(graph)).toEqual([])
  })

  it('has no circle between folders', () => {
    expect(circles(folderGraph(graph))).toEqual([])
  })

  it('has no arrow that runs up a layer: errors ← seams ← features ← runtime nouns ← (telemetry, mcp, adapters, console) ← entry points ← cli', () => {
    expect(upwardArrows(graph)).toEqual([])
  })

  it('puts every source file in a layer, and nothing loose in runtime/ but root.ts and index.ts', () => {
    const sources = [...graph.keys()].filter((file) => !isTest(file))
    expect(sources.filter((file) => rankOf(file) === undefined)).toEqual([])
    expect([...graph.keys()].filter((file) => /^runtime\/[^/]+$/.test(file) && file !== 'runtime/root.ts' && file !== 'runtime/index.ts')).toEqual([])
  })

  it('fails on a circle and on an upward arrow (the checks can fail)', () => {
    const bad: Graph = new Map([
      ['seams/a.ts', ['runtime/pipeline/b.ts']],
      ['runtime/pipeline/b.ts', ['seams/a.ts']],
    ])
    expect(circles(bad)).toEqual([['runtime/pipeline/b.ts', 'seams/a.ts']])
    expect(upwardArrows(bad)).toEqual(['seams/a.ts → runtime/pipeline/b.ts (seams may not import runtime/pipeline)'])
    const inner: Graph = new Map([['runtime/journal/x.ts', ['runtime/turns/y.ts']]])
    expect(upwardArrows(inner)).toEqual(['runtime/journal/x.ts → runtime/turns/y.ts (runtime/journal may not import runtime/turns)'])
    expect(LAYERS.flat()).toContain('runtime/code')
  })
})
