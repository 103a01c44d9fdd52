// The import graph of src/: every static `import … from`, `export … from` and `import('…')` of a
// relative path, type-only imports included (a type two files share lives in the lower one).
// `node scripts/import-graph.mjs` prints the circles and the arrows that run up a layer; the test in
// test/import-graph.test.ts fails on either.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/**
 * The layers, lowest first. A file may import its own layer and any layer below it, never one
 * above. Top-level folders of src/ first, then the nouns inside runtime/ (DESIGN.md §3).
 */
export const LAYERS = [
  ['errors.ts'],
  ['seams'],
  ['features'],
  [
    'runtime/base',
    'runtime/journal',
    'runtime/plugins',
    'runtime/generations',
    'runtime/hmr',
    'runtime/approvals',
    'runtime/pipeline',
    'runtime/code',
    'runtime/turns',
    'runtime/root.ts',
    'runtime/index.ts',
  ],
  ['telemetry', 'mcp', 'adapters', 'console'],
  ['index.ts', 'plugin-runtime.ts', 'openai.ts', 'anthropic.ts', 'ai-sdk.ts'],
  ['cli'],
];

/** Ranks: a file's [top layer, inner rank] (inner rank only inside runtime/). */
export function rankOf(file) {
  const rel = file.replaceAll('\\', '/');
  for (let top = 0; top < LAYERS.length; top++) {
    for (let inner = 0; inner < LAYERS[top].length; inner++) {
      const unit = LAYERS[top][inner];
      if (rel === unit || rel.startsWith(`${unit}/`)) {
        return { top, inner: LAYERS[top].length > 1 && unit.startsWith('runtime/') ? inner : 0, unit };
      }
    }
  }
  return undefined;
}

function walk(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'fixtures' || entry.name === 'web') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else if (/\.ts$/.test(entry.name) && !/\.d\.ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Map of file (relative to src/) → the relative files it imports. Tests count as sources. */
export function importGraph() {
  const graph = new Map();
  for (const file of walk(src)) {
    const from = relative(src, file);
    const edges = new Set();
    for (const match of stripComments(readFileSync(file, 'utf8')).matchAll(SPECIFIER)) {
      const spec = match[1] ?? match[2] ?? match[3];
      if (!spec.startsWith('.')) continue;
      const target = relative(src, resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      if (target.startsWith('..')) continue;
      edges.add(target);
    }
    graph.set(from, [...edges].sort());
  }
  return graph;
}

/** Every elementary circle, found as the strongly connected components with more than one file. */
export function circles(graph) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** Test files and the suites they share: they may import any layer (a test of `features` may build a root). */
export const isTest = (file) => /\.test\.ts$|\.test-suite\.ts$/.test(file);

/** Folder-level graph of the sources (tests left out): an arrow when a file of one imports one of the other. */
export function folderGraph(graph) {
  const folders = new Map();
  const folderOf = (f) => {
    const parts = f.split('/');
    return parts.length === 1 ? f : parts.slice(0, parts[0] === 'runtime' || parts[0] === 'mcp' ? 2 : 1).join('/');
  };
  for (const [from, tos] of graph) {
    if (isTest(from)) continue;
    const a = folderOf(from);
    if (!folders.has(a)) folders.set(a, new Set());
    for (const to of tos) {
      const b = folderOf(to);
      if (a !== b) folders.get(a).add(b);
    }
  }
  return new Map([...folders].map(([k, v]) => [k, [...v].sort()]));
}

/** Arrows that run up a layer, or from a file to a layer the table does not name. */
export function upwardArrows(graph) {
  const bad = [];
  for (const [from, tos] of graph) {
    if (isTest(from)) continue;
    const a = rankOf(from);
    for (const to of tos) {
      const b = rankOf(to);
      if (!a || !b) {
        bad.push(`${from} → ${to} (not in a layer)`);
        continue;
      }
      if (b.top > a.top || (b.top === a.top && b.inner > a.inner)) bad.push(`${from} → ${to} (${a.unit} may not import ${b.unit})`);
    }
  }
  return bad;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const graph = importGraph();
  const fileCircles = circles(graph);
  const folderCircles = circles(folderGraph(graph));
  const up = upwardArrows(graph);
  console.log(`${graph.size} files; ${fileCircles.length} file circles, ${folderCircles.length} folder circles, ${up.length} upward arrows`);
  for (const c of fileCircles) console.log(`circle: ${c.join(' ↔ ')}`);
  for (const c of folderCircles) console.log(`folder circle: ${c.join(' ↔ ')}`);
  for (const u of up) console.log(`up: ${u}`);
  process.exitCode = fileCircles.length + folderCircles.length + up.length > 0 ? 1 : 0;
}
