import { createHash } from 'node:crypto'
import type { JournalCoordination, SessionGrant, StoredGrant } from '../../seams/coordination.js'

/** A standing session grant as listed: with a short id that names it (`seam approvals --revoke <id>`). */
export interface ListedGrant extends StoredGrant {
  readonly id: string
}

/** A grant's id: stable for its session, subject, source and fingerprint, and short enough to type. */
export function grantId(grant: SessionGrant): string {
  return createHash('sha256').update(JSON.stringify([grant.session, grant.subjectId, grant.source, grant.fingerprint])).digest('hex').slice(0, 12)
}

/** Every standing session grant in the journal, oldest first, each with its id. */
export async function listGrants(coordination: JournalCoordination): Promise<ListedGrant[]> {
  return (await coordination.grants()).map((grant) => ({ id: grantId(grant), ...grant }))
}

/**
 * Revokes the grant `id` names, on every host sharing the journal at once (each asks the journal);
 * the grant revoked, or `undefined` when no standing grant has that id.
 */
export async function revokeGrant(coordination: JournalCoordination, id: string): Promise<ListedGrant | undefined> {
  const grant = (await listGrants(coordination)).find((g) => g.id === id)
  if (grant === undefined) return undefined
  const { session, subjectId, source, fingerprint } = grant
  await coordination.revokeGrants({ session, subjectId, source, fingerprint })
  return grant
}
