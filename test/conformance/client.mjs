// The client under test in the suite's client mode: `McpToolService` (this package's public API,
// from dist/) mounting the scenario's server. The suite appends the server's URL and sets
// MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and, for some scenarios,
// MCP_CONFORMANCE_CONTEXT (the calls to make). Without a context it lists the tools and calls each
// once, with a value of its type for every required argument: that is what a model would do.
// The auth scenarios answer 401: the service authorizes as `auth` (below) says. A server's question
// reaches "the person" (`ask`, below), who accepts without filling in a field: the service sends the
// schema's defaults for them (SEP-1034).
import { McpToolService } from 'seam-runtime'

const url = process.argv.at(-1)
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION
const protocol = version === '2025-11-25' || version === '2026-07-28' ? version : 'auto'
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {}

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
const auth = authFor(scenario, context)
const service = new McpToolService({
  id: 'conformance',
  transport: { url },
  protocol,
  timeoutMs: 20_000,
  reconnect: { initialDelayMs: 50, maxDelayMs: 500 },
  ...(auth ? { auth } : {}),
})
let failed = false
try {
  // The service connects again by itself after a failed attempt; on a loaded machine (the suite runs
  // every scenario at once) an authorization flow of eight round trips can outlast one attempt.
  for (let attempt = 1; ; attempt++) {
    try {
      await service.connect()
      break
    } catch (error) {
      if (attempt === 4) throw error
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
  const schemas = await service.schema('global')
  const calls = Array.isArray(context.toolCalls)
    ? context.toolCalls
    : scenario === 'json-schema-2020-12-preservation'
      ? echoSchema(schemas)
      : schemas.map((schema) => ({ name: schema.function.name, arguments: sampleArguments(schema.function.parameters) }))
  for (const call of calls) {
    try {
      const result = await service.execute('global', call.name, call.arguments ?? {}, person(call.name))
      console.log(`${call.name}: ${JSON.stringify(result).slice(0, 300)}`)
    } catch (error) {
      // One refused call (an argument the schema does not admit) is reported; the others still run.
      failed = true
      console.error(`${call.name}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
} catch (error) {
  failed = true
  console.error(error instanceof Error ? error.message : String(error))
} finally {
  await service.dispose()
}
process.exitCode = failed ? 1 : 0

/** The call's context: who asks the person its questions (`ctx.ask` in a root), accepting every one as offered. */
function person(name) {
  return {
    callId: name,
    turnId: 'conformance',
    session: 'conformance',
    principal: { subjectId: 'conformance', roles: [] },
    generation: 1,
    owner: 'root',
    signal: AbortSignal.timeout(30_000),
    ask: async () => ({ action: 'accept', content: {} }),
  }
}

/**
 * The scenario's credentials: a client id with a secret or a private key for the client credentials
 * scenarios, a pre-registered client for `pre-registration`, else a person's sign-in with dynamic
 * registration (or the suite's client metadata document where the server supports it). The suite's
 * authorization server signs in at once: its authorize URL redirects to the callback with the code,
 * so "the person" here is a fetch that reads the redirect.
 */
function authFor(name, ctx) {
  if (!name.startsWith('auth/')) return undefined
  if (name.startsWith('auth/client-credentials')) {
    return ctx.private_key_pem
      ? { grant: 'client_credentials', clientId: ctx.client_id, privateKey: ctx.private_key_pem, signingAlgorithm: ctx.signing_algorithm }
      : { grant: 'client_credentials', clientId: ctx.client_id, clientSecret: ctx.client_secret }
  }
  return {
    grant: 'authorization_code',
    redirectUrl: 'http://localhost:3000/callback',
    clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
    ...(ctx.client_id ? { clientId: ctx.client_id, clientSecret: ctx.client_secret } : {}),
    signIn: async ({ url }) => {
      const response = await fetch(url, { redirect: 'manual' })
      const location = response.headers.get('location')
      if (!location) throw new Error(`the authorization server answered ${response.status} without a redirect`)
      return new URL(location, url)
    },
  }
}

/** The scenario's echo tool, given the schema another tool was mounted with, as the service holds it. */
function echoSchema(schemas) {
  const focal = schemas.find((schema) => schema.function.name === 'json_schema_2020_12_tool')
  return [{ name: 'json_schema_echo', arguments: { schema: focal?.function.parameters ?? {} } }]
}

/** A value of the declared type for every required property (numbers 1, strings "test"). */
function sampleArguments(schema) {
  const args = {}
  for (const name of schema?.required ?? []) args[name] = sample(schema.properties?.[name])
  return args
}

function sample(property) {
  if (property?.default !== undefined) return property.default
  if (Array.isArray(property?.enum)) return property.enum[0]
  switch (Array.isArray(property?.type) ? property.type[0] : property?.type) {
    case 'number':
    case 'integer':
      return 1
    case 'boolean':
      return false
    case 'array':
      return []
    case 'object':
      return sampleArguments(property)
    default:
      return 'test'
  }
}
