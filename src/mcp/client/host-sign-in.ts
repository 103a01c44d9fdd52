/**
 * The host's OAuth sign-in (`seam dev`'s console, or any host's `provideOAuthSignIn`): what an
 * authorization code mount uses when it brings no `signIn` of its own.
 */

export interface OAuthSignInRequest {
  /** The service id of the server asking. */
  server: string
  /** The authorization server's authorize URL, with state and PKCE challenge: open it in a browser. */
  url: URL
  /** Aborted when the service is disposed, or every call waiting on the sign-in gave up: withdraw it. */
  signal: AbortSignal
}

/**
 * A host's way for a person to sign in: where the browser comes back to, and how the authorize URL
 * reaches them. `seam dev` provides its console's; `provideOAuthSignIn` makes it the default of
 * every `McpToolService({ auth: { grant: 'authorization_code' } })` that names no `signIn`.
 */
export interface OAuthSignIn {
  /** Read when a sign-in starts (a host may know its port only once it listens); throws while it has none. */
  readonly redirectUrl: string
  signIn(request: OAuthSignInRequest): Promise<URL | URLSearchParams | string>
}

/** Process-wide, under a registered symbol: a plugin's copy of seam-runtime finds the host's too. */
const HOST_SIGN_IN = Symbol.for('seam-runtime.oauth-sign-in')
type HostSlot = { [HOST_SIGN_IN]?: OAuthSignIn }

/**
 * Makes `signIn` the sign-in of every authorization code mount in this process that brings none of
 * its own (one host per process, as `seam dev` is). Returns a disposer that takes it back.
 */
export function provideOAuthSignIn(signIn: OAuthSignIn): () => void {
  const slot = globalThis as HostSlot
  slot[HOST_SIGN_IN] = signIn
  return () => {
    if (slot[HOST_SIGN_IN] === signIn) delete slot[HOST_SIGN_IN]
  }
}

/** The host's sign-in, when one was provided. */
export function hostSignIn(): OAuthSignIn | undefined {
  return (globalThis as HostSlot)[HOST_SIGN_IN]
}

/** The mount's own sign-in, each part it leaves out taken from the host's; `undefined` when neither has both. */
export function ownOrHostSignIn(options: { readonly redirectUrl?: string; readonly signIn?: OAuthSignIn['signIn'] }): OAuthSignIn | undefined {
  const host = hostSignIn()
  const own = options.signIn
  if (own !== undefined && options.redirectUrl !== undefined) return { redirectUrl: options.redirectUrl, signIn: own }
  if (host === undefined) return undefined
  return {
    get redirectUrl() {
      return options.redirectUrl ?? host.redirectUrl
    },
    signIn: own ?? ((request) => host.signIn(request)),
  }
}
