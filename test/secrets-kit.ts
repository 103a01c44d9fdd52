import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { expect } from 'vitest'

/** Credential-looking environment variables, as many machines have them. */
export const SECRET_ENV: Readonly<Record<string, string>> = {
  OPENAI_API_KEY: 'sk-proj-openai-Aa11Bb22Cc33',
  ANTHROPIC_API_KEY: 'sk-ant-api03-Dd44Ee55Ff66',
  GITHUB_TOKEN: 'ghp_Gg77Hh88Ii99Jj00Kk11',
  AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz',
  DATABASE_URL: 'postgres://app:db-Pass-Ll22Mm33@db.internal:5432/app',
  // Not a secret-looking name: its value is a connection string with a password.
  LEGACY_DB: 'Server=db.internal;User Id=sa;Password=conn-Pass-Nn44Oo55;',
}
/** What the plugin gives `registerSecret`. */
export const REGISTERED = 'vault-Reg-Pp66Qq77'
/** An argument under a secret-looking key (`password`): no process knows the value, only its key says it. */
export const KEYED = 'keyed-Pw-Rr88Ss99'
/** A key in a URL's query string, and one in `KEY=value` text inside a JSON string: found by shape only. */
export const QUERY_KEY = 'query-Key-Tt00Uu11'
export const ENV_STYLE = 'envline-Vv22Ww33'

/** Every value that must appear on no channel (passwords inside the URL and connection string on their own). */
export const NEEDLES: readonly string[] = [
  SECRET_ENV.OPENAI_API_KEY!,
  SECRET_ENV.ANTHROPIC_API_KEY!,
  SECRET_ENV.GITHUB_TOKEN!,
  SECRET_ENV.AWS_SECRET_ACCESS_KEY!,
  'db-Pass-Ll22Mm33',
  'conn-Pass-Nn44Oo55',
  REGISTERED,
]
/** Found by key or shape: stores, pages and error texts redact them (the terminal only scrubs known values). */
export const SHAPED: readonly string[] = [KEYED, QUERY_KEY, ENV_STYLE]

/** Arguments carrying every kind of secret, as a model might send them. */
export const LEAKY_ARGS = JSON.stringify({
  text: `use ${NEEDLES.join(' and ')}; fetch https://api.example.com/v1/items?api_key=${QUERY_KEY}&n=2`,
  note: `MY_SERVICE_TOKEN=${ENV_STYLE}`,
  password: KEYED,
})

/** Fails (softly: every channel is checked) naming each needle found in `text`, as `channel`. */
export function expectClean(channel: string, text: string, needles: readonly string[] = [...NEEDLES, ...SHAPED]): void {
  const found = needles.filter((needle) => text.includes(needle) || text.includes(JSON.stringify(needle).slice(1, -1)) || text.includes(encodeURIComponent(needle)))
  expect.soft(found, `${channel} leaks ${found.join(', ')}`).toEqual([])
}

/** Every file's bytes under `dir` (SQLite's database, WAL and journal files, chat logs), as latin1 text. */
export async function filesUnder(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const file = path.join(entry.parentPath, entry.name)
    out[file] = (await readFile(file)).toString('latin1')
  }
  return out
}

/** Tools that put the secrets everywhere a call can: arguments, a thrown error, a risk reason, a block's feedback. */
export const LEAKY_PLUGIN: Record<string, string> = {
  'plugin.ts': `
import { definePlugin, registerSecret } from 'seam-runtime'
export default definePlugin({
  name: 'root',
  setup(ctx) {
    // Kept for the process's life: output written after the root closes (seam call prints then) is scrubbed too.
    registerSecret(${JSON.stringify(REGISTERED)})
    ctx.hooks.postExecute((exec, result, next) =>
      exec.name === 'blocked' ? { kind: 'block', feedback: 'blocked: token ' + process.env.GITHUB_TOKEN + ' and ${REGISTERED}' } : next())
  },
})
`,
  'tools/echo.ts': tool('never', '', 'return { length: text.length }'),
  'tools/fail.ts': tool('never', '', "throw new Error('upstream refused ' + text + ' from ' + process.env.DATABASE_URL)"),
  'tools/blocked.ts': tool('never', '', "return 'done'"),
  'tools/risky.ts': tool('on-risk', "risk: ({ text }) => 'sends ' + text + ' with ' + process.env.LEGACY_DB,", "return 'sent'"),
}

function tool(approval: string, extra: string, body: string): string {
  return `
import { defineTool } from 'seam-runtime'
import { z } from 'zod'
export default defineTool({
  description: 'A tool that meets secrets.',
  input: z.object({ text: z.string(), note: z.string().optional(), password: z.string().optional() }),
  approval: ${JSON.stringify(approval)},
  ${extra}
  async execute({ text }) {
    ${body}
  },
})
`
}

/** A tool file that fails to load, its error naming a key. */
export const BROKEN_TOOL = `throw new Error('cannot start without ' + process.env.ANTHROPIC_API_KEY + ' or ${REGISTERED}')\n`
