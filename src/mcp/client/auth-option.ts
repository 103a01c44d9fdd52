// The `auth` option of an McpToolService checked and turned into the OAuth provider its streamable
// HTTP connection signs in with.

import { SeamError } from '../../errors.js'
import { ownOrHostSignIn, StoredOAuthProvider } from './oauth.js'
import { isStdioTransport, type McpToolServiceOptions } from './options.js'

/**
 * The provider for `options.auth` (none without one); `signal` (the service's lifetime) withdraws
 * its sign-ins in progress. Throws `INVALID_OPTIONS` for an auth on a stdio server or a grant that
 * lacks what it needs.
 */
export function oauthProvider(options: McpToolServiceOptions, signal: AbortSignal): StoredOAuthProvider | undefined {
  const auth = options.auth
  if (auth === undefined) return undefined
  const fail = (why: string) => new SeamError('INVALID_OPTIONS', `McpToolService "${options.id}": ${why}`)
  if (isStdioTransport(options.transport)) throw fail('auth needs a streamable HTTP transport (a stdio server takes its credentials in env)')
  if (auth.grant === 'client_credentials') {
    if (!auth.clientId) throw fail('auth.clientId is required for the client_credentials grant')
    if (auth.clientSecret === undefined && auth.privateKey === undefined) throw fail('auth needs a clientSecret or a privateKey for the client_credentials grant')
  } else if (auth.grant === 'authorization_code') {
    if (auth.signIn !== undefined && typeof auth.signIn !== 'function') throw fail('auth.signIn must be a function')
    // Without its own, the host's (seam dev's console, or provideOAuthSignIn).
    if (ownOrHostSignIn(auth) === undefined) throw fail('auth needs a redirectUrl and a signIn function for the authorization_code grant (or a host that provides one: seam dev, provideOAuthSignIn)')
  } else {
    throw fail(`auth.grant must be client_credentials or authorization_code, got ${JSON.stringify((auth as { grant?: unknown }).grant)}`)
  }
  return new StoredOAuthProvider(auth, { server: options.id, url: String(options.transport.url), signal })
}
