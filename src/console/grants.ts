import type { Root } from '../runtime/root.js'
import { listGrants } from '../runtime/approvals/session-grants.js'
import type { GrantView } from './types.js'

/**
 * The standing session grants in the journal, each named by the live tool it covers (none when
 * that tool changed or went: such a grant matches no call and only waits to be revoked).
 */
export async function grantViews(root: Root): Promise<GrantView[]> {
  const [grants, capabilities] = await Promise.all([listGrants(root.journal.coordination), root.capabilities()])
  const names = new Map(capabilities.tools.map((tool) => [JSON.stringify([tool.source, tool.fingerprint]), tool.name]))
  return grants.map((grant) => {
    const tool = names.get(JSON.stringify([grant.source, grant.fingerprint]))
    return { id: grant.id, session: grant.session, principal: grant.subjectId, source: grant.source, at: grant.at, ...(tool ? { tool } : {}) }
  })
}
