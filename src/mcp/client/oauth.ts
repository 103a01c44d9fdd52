import { createHash, randomBytes } from 'node:crypto'
import {
  type AddClientAuthentication,
  auth,
  createPrivateKeyJwtAuth,
  type FetchLike,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client'
import { registerSecret } from '../../runtime/base/redact.js'
import { MemoryOAuthTokenStore, type OAuthRecord, type OAuthTokenStore } from '../../seams/oauth-tokens.js'
import { type OAuthSignIn, type OAuthSignInRequest, ownOrHostSignIn } from './host-sign-in.js'

export { type OAuthSignIn, type OAuthSignInRequest, ownOrHostSignIn, provideOAuthSignIn } from './host-sign-in.js'

/**
 * `McpToolService({ auth })`: how the service obtains an access token for a server that answers
 * 401 (the MCP authorization specification). Discovery is the SDK's: protected resource metadata
 * (RFC 9728, from the `WWW-Authenticate` challenge or the well-known paths), then the
 * authorization server's metadata (RFC 8414 or OpenID discovery), the scope from the challenge or
 * `scopes_supported`, dynamic client registration when no client id is given and the server offers
 * it, PKCE, refresh before a fresh sign-in, and step-up on `403 insufficient_scope`.
 */
export type McpOAuthOptions = McpClientCredentialsOptions | McpAuthorizationCodeOptions

interface McpOAuthCommon {
  /** Asked for when given; otherwise the challenge's scope, else the resource's `scopes_supported`. */
  scope?: string
  /** Where tokens and registrations are kept. Default: memory. */
  store?: OAuthTokenStore
}

/** Machine to machine: the `client_credentials` grant, with a client secret or a signed JWT (`private_key_jwt`). */
export interface McpClientCredentialsOptions extends McpOAuthCommon {
  grant: 'client_credentials'
  clientId: string
  /** Sent as `client_secret_basic` (or `_post` when the server supports only that). */
  clientSecret?: string
  /** A PEM private key (or JWK): the client authenticates with an RFC 7523 assertion signed by it. */
  privateKey?: string | Record<string, unknown>
  /** The assertion's algorithm (`ES256`, `RS256` …). Default `RS256`. */
  signingAlgorithm?: string
}

/** A person signs in: the authorization code grant with PKCE. */
export interface McpAuthorizationCodeOptions extends McpOAuthCommon {
  grant: 'authorization_code'
  /**
   * Where the authorization server sends the browser back. Omitted with `signIn`: the host's sign-in
   * (`provideOAuthSignIn`; under `seam dev`, its console's `/oauth/callback`).
   */
  redirectUrl?: string
  /** A pre-registered client; without one the service registers itself (dynamic client registration). */
  clientId?: string
  clientSecret?: string
  /** An HTTPS URL of this client's metadata document, used as its id where the server supports it (SEP-991). */
  clientMetadataUrl?: string
  /** Shown by the authorization server on its consent page. Default `seam-runtime`. */
  clientName?: string
  /**
   * Shows `request.url` to the person and resolves with the URL the browser came back to (or its
   * query). Omitted: the host's sign-in (`seam dev` puts a "Sign in" link in its console).
   */
  signIn?(request: OAuthSignInRequest): Promise<URL | URLSearchParams | string>
}

/** The one sign-in shown to the person, and who waits for it. */
interface SignInFlow {
  readonly verifier: string | undefined
  done: Promise<void> | undefined
  readonly callback: Promise<URLSearchParams>
  /** Aborted when every call waiting for it gave up: the host withdraws the sign-in. */
  readonly abandoned: AbortController
  /** Calls waiting with a signal of their own. */
  calls: number
  /** Something waits without one (a connection attempt): never abandoned by calls. */
  held: boolean
}

/**
 * The SDK's `OAuthClientProvider` over an `OAuthTokenStore`. Every token, secret and code it sees is
 * registered with the runtime's redactor first, so none reaches a log, an error or the journal.
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  readonly #options: McpOAuthOptions
  readonly #store: OAuthTokenStore
  readonly #key: string
  readonly #server: string
  readonly #signal: AbortSignal
  /** The mount's own `redirectUrl`/`signIn`, else the host's (read when used: see `OAuthSignIn.redirectUrl`). */
  readonly #signIn: OAuthSignIn | undefined
  readonly #forget: Array<() => void> = []
  #record: OAuthRecord | undefined
  #discovery: OAuthDiscoveryState | undefined
  #loaded: Promise<void> | undefined
  /** The verifiers of the flows started lately (two requests may meet a 401 at once). */
  #verifiers: string[] = []
  /** The one sign-in shown to the person: its verifier, and the redemption of its callback. */
  #flow: SignInFlow | undefined

  constructor(options: McpOAuthOptions, target: { server: string; url: string; signal: AbortSignal }) {
    this.#options = options
    this.#store = options.store ?? new MemoryOAuthTokenStore()
    this.#key = `${target.server} ${target.url}`
    this.#server = target.server
    this.#signal = target.signal
    this.#signIn = options.grant === 'authorization_code' ? ownOrHostSignIn(options) : undefined
    this.#secret(options.clientSecret)
    // A field, set only when given: the SDK's provider type declares it optional (a host that
    // type-checks with exactOptionalPropertyTypes refuses a getter that may return undefined).
    if (options.grant === 'authorization_code' && options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl
    if (options.grant === 'client_credentials' && options.privateKey !== undefined) {
      this.addClientAuthentication = createPrivateKeyJwtAuth({
        issuer: options.clientId,
        subject: options.clientId,
        privateKey: options.privateKey,
        alg: options.signingAlgorithm ?? 'RS256',
      })
    }
  }

  readonly clientMetadataUrl?: string
  /** Set for `private_key_jwt` only (optional fields, not getters that may return undefined: see `clientMetadataUrl`). */
  readonly addClientAuthentication?: AddClientAuthentication

  get redirectUrl(): string | undefined {
    return this.#signIn?.redirectUrl
  }

  get clientMetadata(): OAuthClientMetadata {
    const options = this.#options
    if (options.grant === 'client_credentials') {
      return {
        client_name: 'seam-runtime',
        redirect_uris: [],
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: options.privateKey !== undefined ? 'private_key_jwt' : 'client_secret_basic',
        ...(options.scope ? { scope: options.scope } : {}),
      }
    }
    return {
      client_name: options.clientName ?? 'seam-runtime',
      redirect_uris: [this.#signIn!.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: options.clientSecret ? 'client_secret_basic' : 'none',
      ...(options.scope ? { scope: options.scope } : {}),
    }
  }

  state(): string {
    return randomBytes(24).toString('base64url')
  }

  async clientInformation(): Promise<StoredOAuthClientInformation | undefined> {
    const { clientId, clientSecret } = this.#options
    if (clientId !== undefined) return { client_id: clientId, ...(clientSecret ? { client_secret: clientSecret } : {}) }
    return (await this.#read()).client
  }

  async saveClientInformation(client: StoredOAuthClientInformation): Promise<void> {
    this.#secret(client.client_secret)
    await this.#write({ client })
  }

  async tokens(): Promise<StoredOAuthTokens | undefined> {
    return (await this.#read()).tokens
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    this.#secret(tokens.access_token)
    this.#secret(tokens.refresh_token)
    this.#secret(tokens.id_token)
    await this.#write({ tokens })
  }

  /**
   * Discovery is kept for the callback leg of a sign-in only (the code is bound to the
   * authorization server it came from); every other 401 discovers again, so a server that moved to
   * another authorization server is followed there (SEP-2352).
   */
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#flow !== undefined ? this.#discovery : undefined
  }

  saveDiscoveryState(discovery: OAuthDiscoveryState): void {
    this.#discovery = discovery
  }

  /**
   * Starts the person's sign-in, unless one is already waiting for them: a second request that met
   * the same 401 meanwhile fails as unauthorized and is retried once that sign-in is done.
   */
  redirectToAuthorization(url: URL): void {
    const options = this.#options
    const signIn = this.#signIn
    if (signIn !== undefined && this.#flow === undefined) {
      const challenge = url.searchParams.get('code_challenge')
      const verifier = this.#verifiers.find((candidate) => createHash('sha256').update(candidate).digest('base64url') === challenge)
      const state = url.searchParams.get('state') ?? undefined
      const abandoned = new AbortController()
      const signal = AbortSignal.any([this.#signal, abandoned.signal])
      const callback = Promise.resolve()
        .then(() => signIn.signIn({ server: this.#server, url, signal }))
        .then((answer) => callbackParams(answer, state))
      callback.catch(() => {})
      this.#flow = { verifier, done: undefined, callback, abandoned, calls: 0, held: false }
      return
    }
    if (options.grant === 'client_credentials') throw new Error('the client_credentials grant has no sign-in')
  }

  /** Whether a sign-in was started and not yet finished. */
  get signingIn(): boolean {
    return this.#flow !== undefined
  }

  /**
   * Waits for the person to come back from the authorization server and redeems the code for
   * tokens (RFC 9207's `iss` checked by the SDK); callers waiting on the same sign-in share the one
   * redemption. Rejects when the callback carries an error, a state that is not this sign-in's, or
   * no code. A caller with a `signal` (a tool call) stops waiting when it aborts; once every such
   * caller gave up and no other waits (a connection attempt), the sign-in is abandoned: its
   * request's signal aborts (the console withdraws it) and the next 401 starts a fresh one.
   */
  finishSignIn(serverUrl: URL, fetchFn?: FetchLike, signal?: AbortSignal): Promise<void> {
    const flow = this.#flow
    if (!flow) return Promise.reject(new Error('no sign-in is in progress'))
    const done = this.#redeem(flow, serverUrl, fetchFn)
    if (signal === undefined) {
      flow.held = true
      return done
    }
    if (signal.aborted) return Promise.reject(signal.reason)
    flow.calls++
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        flow.calls--
        if (flow.calls === 0 && !flow.held) flow.abandoned.abort(signal.reason)
        reject(signal.reason)
      }
      signal.addEventListener('abort', leave, { once: true })
      done.then(resolve, reject).finally(() => signal.removeEventListener('abort', leave))
    })
  }

  #redeem(flow: SignInFlow, serverUrl: URL, fetchFn: FetchLike | undefined): Promise<void> {
    flow.done ??= (async () => {
      try {
        const params = await flow.callback
        const code = params.get('code')!
        this.#secret(code)
        const result = await auth(this, { serverUrl, authorizationCode: code, iss: params.get('iss') ?? undefined, ...(fetchFn ? { fetchFn } : {}) })
        if (result !== 'AUTHORIZED') throw new Error('the authorization server did not issue a token')
      } finally {
        if (this.#flow === flow) this.#flow = undefined
        this.#verifiers = []
      }
    })()
    return flow.done
  }

  saveCodeVerifier(verifier: string): void {
    this.#secret(verifier)
    this.#verifiers = [...this.#verifiers.slice(-3), verifier]
  }

  codeVerifier(): string {
    const verifier = this.#flow?.verifier ?? this.#verifiers.at(-1)
    if (verifier === undefined) throw new Error('no PKCE code verifier: the sign-in was not started by this process')
    return verifier
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.#options.grant !== 'client_credentials') return undefined
    const params = new URLSearchParams({ grant_type: 'client_credentials' })
    const asked = scope ?? this.#options.scope
    if (asked) params.set('scope', asked)
    return params
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier' || scope === 'all') this.#verifiers = []
    const record = { ...(await this.#read()) }
    if (scope === 'tokens' || scope === 'all') delete record.tokens
    if (scope === 'client' || scope === 'all') delete record.client
    if (scope === 'discovery' || scope === 'all') this.#discovery = undefined
    this.#record = record
    await this.#store.set(this.#key, record)
  }

  /** Forgets the secrets this provider registered with the redactor. */
  dispose(): void {
    for (const forget of this.#forget.splice(0)) forget()
  }

  async #read(): Promise<OAuthRecord> {
    this.#loaded ??= this.#store.get(this.#key).then((record) => {
      this.#record = record ?? {}
      this.#secret(record?.tokens?.access_token)
      this.#secret(record?.tokens?.refresh_token)
      this.#secret(record?.client?.client_secret)
    })
    await this.#loaded
    return this.#record ?? {}
  }

  async #write(change: OAuthRecord): Promise<void> {
    const record = { ...(await this.#read()), ...change }
    this.#record = record
    await this.#store.set(this.#key, record)
  }

  #secret(value: string | undefined): void {
    if (typeof value === 'string' && value.length >= 6) this.#forget.push(registerSecret(value))
  }
}

/**
 * A `fetch` that sends one refresh at a time: two requests that meet the same expiry both refresh
 * with the same refresh token, and a server that rotates refresh tokens refuses the second (which
 * would then send the person to sign in again). Identical refresh requests in flight share one
 * answer.
 */
export function singleRefresh(next: FetchLike = fetch): FetchLike {
  const inFlight = new Map<string, Promise<{ status: number; statusText: string; headers: [string, string][]; body: string }>>()
  return async (input, init) => {
    const body = init?.body instanceof URLSearchParams ? init.body.toString() : typeof init?.body === 'string' ? init.body : undefined
    if (init?.method !== 'POST' || body === undefined || new URLSearchParams(body).get('grant_type') !== 'refresh_token') return next(input, init)
    const key = `${String(input)}\n${body}`
    let shared = inFlight.get(key)
    if (!shared) {
      shared = next(input, init).then(async (response) => ({
        status: response.status,
        statusText: response.statusText,
        headers: [...response.headers],
        body: await response.text(),
      }))
      inFlight.set(key, shared)
      void shared.finally(() => inFlight.delete(key)).catch(() => {})
    }
    const answer = await shared
    return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: answer.headers })
  }
}

/** The callback's query, checked: an error the server sent, a state that is not ours, or no code rejects. */
function callbackParams(answer: URL | URLSearchParams | string, state: string | undefined): URLSearchParams {
  const params =
    answer instanceof URLSearchParams
      ? answer
      : answer instanceof URL
        ? answer.searchParams
        : new URLSearchParams(/^[a-z][a-z0-9+.-]*:/i.test(answer) ? new URL(answer).search : answer)
  const error = params.get('error')
  if (error) throw new Error(`the authorization server refused the sign-in: ${error}${params.get('error_description') ? ` (${params.get('error_description')})` : ''}`)
  if (state !== undefined && params.get('state') !== state) throw new Error('the sign-in callback carries a state that is not this sign-in\'s')
  if (!params.get('code')) throw new Error('the sign-in callback carries no authorization code')
  return params
}
