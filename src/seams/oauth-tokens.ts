import type { StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client'

/**
 * What `McpToolService` keeps about one mounted server's authorization: the tokens, the client
 * registration it obtained by dynamic client registration (a pre-registered client's id and
 * secret stay in the options). Both carry the issuing authorization server's `issuer`, so a server
 * that moves to another one gets a fresh registration there. These are credentials: a store keeps
 * them out of logs and the journal's events.
 */
export interface OAuthRecord {
  tokens?: StoredOAuthTokens
  client?: StoredOAuthClientInformation
}

/**
 * Where the OAuth records of mounted servers live, by key (`<service id> <server URL>`). The
 * default is memory (one process; a restart signs in again); a SQLite or PostgreSQL journal's
 * `oauthTokens` keeps them in the journal's database (its own table, not its events), so several
 * hosts share one sign-in and a refreshed token.
 */
export interface OAuthTokenStore {
  get(key: string): Promise<OAuthRecord | undefined>
  set(key: string, record: OAuthRecord): Promise<void>
  delete(key: string): Promise<void>
}

/** The default store: a map in this process. */
export class MemoryOAuthTokenStore implements OAuthTokenStore {
  readonly #records = new Map<string, string>()

  async get(key: string): Promise<OAuthRecord | undefined> {
    const text = this.#records.get(key)
    return text === undefined ? undefined : (JSON.parse(text) as OAuthRecord)
  }

  async set(key: string, record: OAuthRecord): Promise<void> {
    // A copy, so a caller that mutates its record does not change the stored one.
    this.#records.set(key, JSON.stringify(record))
  }

  async delete(key: string): Promise<void> {
    this.#records.delete(key)
  }
}
