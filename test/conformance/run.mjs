// `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance)
// against this package, both roles and both protocol eras, each at its own wire:
//
// - server mode against `seam dev` serving test/conformance/plugin (the suite's fixture tools and
//   prompts, written with the public API only);
// - client mode running test/conformance/client.mjs (`McpToolService` as the client).
//
// Every scenario a revision's requirement set runs is compared with expected-failures.json (each
// entry: scenario, era, mode, reason). An unlisted failure fails the run, and so does a listed
// scenario that passes: the list may only shrink. Needs Node 22 or later (the suite's own floor).
// SEAM_CONFORMANCE_HOME points at another copy of the suite (a folder holding its package.json).
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = fileURLToPath(new URL('../..', import.meta.url))
const here = path.join(repo, 'test', 'conformance')
const ERAS = ['2025-11-25', '2026-07-28']
const MODES = ['server', 'client']

const major = Number(process.versions.node.split('.')[0])
if (major < 22) fail(`the conformance suite needs Node 22 or later; this is ${process.version}`)
const home = process.env.SEAM_CONFORMANCE_HOME ?? path.join(repo, 'node_modules', '@modelcontextprotocol', 'conformance')
const suitePackage = path.join(home, 'package.json')
if (!existsSync(suitePackage)) fail(`the conformance suite is not installed at ${home} (npm ci installs it, a devDependency)`)
const suite = path.join(home, JSON.parse(readFileSync(suitePackage, 'utf8')).bin.conformance)
const suiteVersion = JSON.parse(readFileSync(suitePackage, 'utf8')).version

const expected = JSON.parse(readFileSync(path.join(here, 'expected-failures.json'), 'utf8'))
const key = (mode, era, scenario) => `${mode} ${era} ${scenario}`
const listed = new Map(expected.map((entry) => [key(entry.mode, entry.era, entry.scenario), entry]))
for (const entry of expected) {
  if (!MODES.includes(entry.mode) || !ERAS.includes(entry.era) || !entry.scenario || !entry.reason?.trim()) {
    fail(`expected-failures.json: every entry needs a mode (${MODES.join(', ')}), an era (${ERAS.join(', ')}), a scenario and a reason: ${JSON.stringify(entry)}`)
  }
}

const { build } = await import(path.join(repo, 'scripts', 'build.mjs'))
build()

const dev = await startDev()
const scratch = await mkdtemp(path.join(tmpdir(), 'seam-conformance-'))
const problems = []
const counts = []
const seen = new Set()
try {
  for (const mode of MODES) {
    for (const era of ERAS) {
      const target =
        mode === 'server' ? ['--url', dev.url] : ['--command', `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(here, 'client.mjs'))}`]
      const run = await suiteRun([mode, ...target, '--requirements', era, '--timeout', '60000', '-o', path.join(scratch, `${mode}-${era}`)])
      const results = parseSummary(run.stdout)
      if (results.size === 0) {
        problems.push(`${mode} ${era}: the suite printed no summary (exit ${run.code}):\n${run.stdout.slice(-2000)}${run.stderr.slice(-2000)}`)
        continue
      }
      let scored = 0
      let scoredPassed = 0
      let extra = 0
      let extraPassed = 0
      for (const [scenario, result] of results) {
        seen.add(key(mode, era, scenario))
        if (result.scored) {
          scored += 1
          if (result.passed) scoredPassed += 1
        } else {
          extra += 1
          if (result.passed) extraPassed += 1
        }
        const entry = listed.get(key(mode, era, scenario))
        if (result.passed && entry) problems.push(`${mode} ${era} ${scenario} passes but is listed as an expected failure (${entry.reason}): remove it from expected-failures.json`)
        if (!result.passed && !entry) problems.push(`${mode} ${era} ${scenario} fails and is not an expected failure (${result.line})`)
      }
      counts.push({ mode, era, scored, scoredPassed, extra, extraPassed })
    }
  }
} finally {
  await dev.stop()
  await rm(scratch, { recursive: true, force: true })
}
for (const entry of expected) {
  if (!seen.has(key(entry.mode, entry.era, entry.scenario))) problems.push(`expected-failures.json lists ${key(entry.mode, entry.era, entry.scenario)}, which the suite did not run`)
}

console.log(`\nMCP conformance (@modelcontextprotocol/conformance ${suiteVersion}, Node ${process.version})`)
for (const c of counts) {
  console.log(`  ${c.mode.padEnd(6)} ${c.era}: ${c.scoredPassed} of ${c.scored} scored scenarios pass; not scored: ${c.extraPassed} of ${c.extra}`)
}
if (problems.length > 0) {
  console.log(`\n${problems.length} problem(s):`)
  for (const problem of problems) console.log(`  - ${problem}`)
  process.exit(1)
}
console.log('every failure is an expected one, and every expected failure still fails')

/** `seam dev` on the fixture plugin, on a free port, without the type-check (the suite needs only MCP). */
async function startDev() {
  const child = spawn(process.execPath, [path.join(repo, 'dist', 'cli', 'bin.js'), 'dev', path.join(here, 'plugin'), '--port', '0', '--no-check'], {
    cwd: repo,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`seam dev did not start in 30 s:\n${output}`)), 30_000)
    const read = (chunk) => {
      output += chunk
      const match = /^\s*mcp\s+(http:\/\/\S+\/mcp)/m.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1])
      }
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`seam dev exited (${code}) before serving:\n${output}`))
    })
  }).catch((error) => fail(error.message))
  console.log(`seam dev serving the fixture plugin at ${url}`)
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGINT')
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref()
      }),
  }
}

function suiteRun(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [suite, ...args], { cwd: repo, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.once('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

/**
 * The suite's verdict per scenario, from its closing summary: `✓ name: 3 passed, 0 failed` (a
 * scenario passes when none of its checks failed; warnings do not fail it), and which of them the
 * requirement set does not score (listed under "Not scored").
 */
function parseSummary(stdout) {
  const results = new Map()
  const start = stdout.search(/=== (SUITE )?SUMMARY ===/)
  if (start < 0) return results
  const tail = stdout.slice(start)
  for (const line of tail.split('\n')) {
    const match = /^([✓✗]) (\S+): \d+ passed, \d+ failed/.exec(line)
    if (match) results.set(match[2], { passed: match[1] === '✓', scored: true, line: line.trim() })
  }
  const notScored = tail.indexOf('Not scored')
  if (notScored >= 0) {
    for (const line of tail.slice(notScored).split('\n')) {
      const match = /^\s+[✓✗] (\S+) \(/.exec(line)
      const result = match && results.get(match[1])
      if (result) result.scored = false
    }
  }
  return results
}

function fail(message) {
  console.error(`conformance: ${message}`)
  process.exit(1)
}
