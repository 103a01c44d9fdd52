import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { BEGIN, cliReference, DOC, END, withReference } from '../scripts/cli-reference.js'

describe('docs/cli.md', () => {
  it('holds the command reference the commander program prints, between its markers', () => {
    const doc = readFileSync(DOC, 'utf8')
    // A plain comparison first, so the failure says what to do before it shows a long diff.
    const fresh = withReference(doc, cliReference()) === doc
    expect(fresh, 'docs/cli.md differs from the commander definitions: run `npm run docs:cli` and commit docs/cli.md').toBe(true)
  })

  it('documents every command and every option of each, from the program itself', () => {
    const reference = cliReference()
    for (const command of ['seam', 'seam dev', 'seam call', 'seam tools', 'seam journal', 'seam approvals', 'seam mcp']) {
      expect(reference).toContain(`### ${command}\n`)
    }
    expect(reference).toMatch(/Usage: seam approvals \[options\] \[dir\][\s\S]*--local/)
    // Hidden options stay out of the page, as they stay out of --help.
    expect(reference).not.toContain('--debounce')
  })

  it('keeps the hand-written text around the markers and replaces only what is between them', () => {
    const doc = `# Title\n\nintro\n\n${BEGIN}\n\nold\n\n${END}\n\nafter\n`
    expect(withReference(doc, 'new')).toBe(`# Title\n\nintro\n\n${BEGIN}\n\nnew\n\n${END}\n\nafter\n`)
    expect(() => withReference('# no markers', 'new')).toThrow(/needs the markers/)
  })
})
