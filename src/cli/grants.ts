import { listGrants, type ListedGrant, revokeGrant } from '../runtime/approvals/session-grants.js'
import { EXIT, UsageError } from './errors.js'
import { ms, printable, table } from './format.js'
import { type CliContext, line, styleFor } from './io.js'
import { openExistingJournal, pluginDir } from './workspace.js'

/** `seam approvals --grants` and `--revoke <id>`: the standing session grants in the journal. */
export interface GrantFlags {
  grants?: boolean
  revoke?: string
  json?: boolean
}

/** Whether the command is about grants; `--grants`/`--revoke` with `--decide` is refused, as two commands in one. */
export function wantsGrants(flags: GrantFlags & { decide?: unknown }): boolean {
  const wanted = flags.grants === true || flags.revoke !== undefined
  if (wanted && flags.decide !== undefined) throw new UsageError('--grants and --revoke do not go with --decide', 'run them one at a time')
  return wanted
}

/** Lists the standing session grants (`--grants`), or revokes one by its id (`--revoke <id>`). */
export async function grants(cli: CliContext, dirArg: string, flags: GrantFlags): Promise<number> {
  const store = await openExistingJournal(pluginDir(cli.io.cwd, dirArg))
  const out = cli.io.stdout
  const style = styleFor(out, cli.io.env)
  try {
    if (flags.revoke !== undefined) {
      const revoked = await revokeGrant(store.coordination, flags.revoke)
      if (revoked === undefined) throw new UsageError(`no standing session grant has the id ${printable(flags.revoke)}`, 'list them with `seam approvals --grants`')
      if (flags.json) line(out, JSON.stringify(revoked))
      else line(out, `revoked ${style.bold(revoked.id)}: ${describe(revoked)}; the next call asks again`)
      return EXIT.ok
    }
    const listed = await listGrants(store.coordination)
    if (flags.json) {
      line(out, JSON.stringify(listed))
      return EXIT.ok
    }
    if (listed.length === 0) {
      line(out, style.dim('no session grants are standing'))
      return EXIT.ok
    }
    const now = Date.now()
    for (const row of table(listed.map((g) => [style.bold(g.id), describe(g), style.dim(`${ms(now - g.at)} ago`)]))) line(out, row)
    line(out, style.dim('revoke one with `seam approvals --revoke <id>`'))
    return EXIT.ok
  } finally {
    await store.close()
  }
}

function describe(grant: ListedGrant): string {
  return printable(`${grant.source} (${grant.fingerprint.slice(0, 12)}) for ${grant.subjectId} in session ${grant.session}`)
}
