import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { initProject, put, seam } from './cli-kit.js'
import { MAJORS, useTypeScript } from './typescript-versions.js'

async function emptyFolder(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'seam-init-'))
  onTestFinished(() => rm(dir, { recursive: true, force: true }))
  return dir
}

describe('seam init', { timeout: 60_000 }, () => {
  it('scaffolds a plugin project that seam tools and seam call run as it is', async () => {
    const parent = await emptyFolder()
    const dir = path.join(parent, 'My Plugin')
    const init = await seam('init', dir)
    expect(init.code).toBe(0)
    expect(init.stdout).toContain('tools/example.ts')
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'))
    expect(pkg).toMatchObject({ name: 'my-plugin', type: 'module', dependencies: { 'seam-runtime': expect.stringMatching(/^\^\d/), zod: '^4.0.0' } })
    expect(await readFile(path.join(dir, '.gitignore'), 'utf8')).toContain('.seam/')
    const tools = await seam('tools', dir)
    expect(tools.stdout).toMatch(/^example\s+tools\/example\.ts\s+never\s+name: string/m)
    expect(tools.stdout).toMatch(/^example\s+agent\/skills\/example\.md\s+Greet the user/m)
    const call = await seam('call', 'example', '{"name":"Ada"}', '--dir', dir, '--json')
    expect(JSON.parse(call.stdout)).toMatchObject({ status: 'completed', value: { greeting: 'Hello, Ada!' } })
  })

  it('never overwrites: in an existing project it keeps every file there and writes the others', async () => {
    const dir = await emptyFolder()
    await writeFile(path.join(dir, 'plugin.ts'), '// mine\n')
    // What `npm init -y` leaves: no seam-runtime, zod or TypeScript; and a .gitignore without .seam/.
    await writeFile(path.join(dir, 'package.json'), `${JSON.stringify({ name: 'app', version: '1.0.0', devDependencies: { typescript: '^5.9.0' } })}\n`)
    await writeFile(path.join(dir, '.gitignore'), 'node_modules/\n')
    const run = await seam('init', dir)
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`filled in the plugin project in ${dir}`)
    expect(run.stdout).toMatch(/^ {2}tools\/example\.ts$/m)
    expect(run.stdout).toContain('plugin.ts kept as it was')
    expect(run.stdout).toContain('package.json: set "type": "module" (it had no "type", so CommonJS; plugin.ts and tools/ are ES modules)')
    expect(run.stdout).toMatch(/^ {2}npm install seam-runtime zod$/m)
    expect(run.stdout).toMatch(/^ {2}npm install --save-dev @types\/node$/m)
    expect(run.stdout).toContain('echo .seam/ >> .gitignore')
    expect(await readFile(path.join(dir, 'plugin.ts'), 'utf8')).toBe('// mine\n')
    expect(await readFile(path.join(dir, 'package.json'), 'utf8')).toBe(`${JSON.stringify({ type: 'module', name: 'app', version: '1.0.0', devDependencies: { typescript: '^5.9.0' } })}\n`)
    expect(await readFile(path.join(dir, '.gitignore'), 'utf8')).toBe('node_modules/\n')
    expect(await readFile(path.join(dir, 'tools', 'example.ts'), 'utf8')).toContain('defineTool')

    // Run again: every file is there, nothing changes, and it says so.
    const again = await seam('init', dir)
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('already has every file seam init writes; nothing was written')
    expect(await readFile(path.join(dir, 'plugin.ts'), 'utf8')).toBe('// mine\n')
  })
})

describe('seam init in a project whose package.json is not "type": "module"', { timeout: 60_000 }, () => {
  // What `npm init -y` writes (npm 10), with a nested "type" that must stay.
  const NPM_INIT = `{
  "name": "app",
  "version": "1.0.0",
  "description": "",
  "main": "index.js",
  "scripts": {
    "test": "echo \\"Error: no test specified\\" && exit 1"
  },
  "repository": { "type": "git", "url": "x" },
  "keywords": [],
  "author": "",
  "license": "ISC",
  "type": "commonjs"
}
`

  it('says it sets "type": "module" and changes only that value, byte for byte', async () => {
    const dir = await emptyFolder()
    await writeFile(path.join(dir, 'package.json'), NPM_INIT)
    const run = await seam('init', dir)
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^ {2}package\.json: set "type": "module" \(it had "type": "commonjs"; plugin\.ts and tools\/ are ES modules\), every other field as it was$/m)
    expect(await readFile(path.join(dir, 'package.json'), 'utf8')).toBe(NPM_INIT.replace('"type": "commonjs"', '"type": "module"'))
  })

  it('adds it in the file\'s own indentation when there is none', async () => {
    const dir = await emptyFolder()
    const text = '{\n\t"name": "app",\n\t"private": true\n}\n'
    await writeFile(path.join(dir, 'package.json'), text)
    await seam('init', dir)
    expect(await readFile(path.join(dir, 'package.json'), 'utf8')).toBe('{\n\t"type": "module",\n\t"name": "app",\n\t"private": true\n}\n')
  })

  it('leaves it, and says why, when the project has JavaScript that may be CommonJS', async () => {
    const dir = await emptyFolder()
    await writeFile(path.join(dir, 'package.json'), NPM_INIT)
    await put(dir, 'index.js', "module.exports = require('./lib')\n")
    const run = await seam('init', dir)
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('package.json kept as it was ("type": "commonjs"): its JavaScript (index.js) may be CommonJS, which "type": "module" would break')
    expect(await readFile(path.join(dir, 'package.json'), 'utf8')).toBe(NPM_INIT)
  })
})

describe.each(MAJORS)('seam check with TypeScript %i', { timeout: 180_000 }, (major) => {
  it('reports a type error with its file, line, code and frame and exits 1, and exits 0 once it is fixed', async () => {
    const dir = await emptyFolder()
    await initProject(dir)
    await useTypeScript(dir, major)
    const clean = await seam('check', dir)
    expect(clean.stdout).toMatch(/no type errors \(\d+ files\)/)
    expect(clean.code).toBe(0)
    const example = path.join(dir, 'tools', 'example.ts')
    await writeFile(example, (await readFile(example, 'utf8')).replace('execute({ name }) {', 'execute({ name }) {\n    const count: number = name'))
    const broken = await seam('check', dir)
    expect(broken.code).toBe(1)
    expect(broken.stdout).toMatch(/^tools\/example\.ts:\d+:11 TS2322 Type 'string' is not assignable to type 'number'\./m)
    expect(broken.stdout).toContain('const count: number = name')
    expect(broken.stdout).toMatch(/1 type error in 1 file$/m)
    expect(broken.stdout).toMatch(/^ {2}> \d+ \| {5}const count: number = name\n {6,}\| {11}\^$/m)
  })

  it('checks plugin.ts and the tool files under strict defaults in a folder without a tsconfig.json', async () => {
    const dir = await emptyFolder()
    await initProject(dir)
    await useTypeScript(dir, major)
    await rm(path.join(dir, 'tsconfig.json'))
    // process comes from @types/node, which 5 includes by default and 7 only when told.
    await put(dir, 'tools/env.ts', "export const home: string = process.env.HOME ?? ''\nexport const n: number = 'one'\n")
    const run = await seam('check', dir)
    expect(run.stdout).toMatch(/^tools\/env\.ts:2:14 TS2322 Type 'string' is not assignable to type 'number'\./m)
    expect(run.stdout).toMatch(/1 type error in 1 file$/m)
    expect(run.code).toBe(1)
  })
})

describe('seam check with an unsupported TypeScript', () => {
  it('names the versions it works with', async () => {
    const dir = await emptyFolder()
    await put(dir, 'tools/x.ts', 'export const x = 1\n')
    await put(dir, 'node_modules/typescript/package.json', `${JSON.stringify({ name: 'typescript', version: '4.9.5', main: './lib/typescript.js' })}\n`)
    await put(dir, 'node_modules/typescript/lib/typescript.js', 'module.exports = {}\n')
    const run = await seam('check', dir)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('TypeScript 4.9.5 is not supported (seam checks with TypeScript 5.x and 7.x)')
  })

  it("reports a value that does not match the tool's output schema, before any call", async () => {
    const dir = await emptyFolder()
    await initProject(dir)
    const example = path.join(dir, 'tools', 'example.ts')
    await writeFile(example, (await readFile(example, 'utf8')).replace(/greeting: `Hello, [^`]*`/, 'greeting: name.length'))
    const broken = await seam('check', dir)
    expect(broken.code).toBe(1)
    expect(broken.stdout).toMatch(/^tools\/example\.ts:\d+:\d+ TS2322 /m)
    expect(broken.stdout).toContain("Type 'number' is not assignable to type 'string'")
  }, 60_000) // a whole type-check of a fresh project: 8 s on a quiet machine, past 20 s on a loaded one
})
