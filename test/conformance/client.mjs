// The client under test in the suite's client mode: `McpToolService` (this package's public API,
// from dist/) mounting the scenario's server. The suite appends the server's URL and sets
// MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and, for some scenarios,
// MCP_CONFORMANCE_CONTEXT (the calls to make). Without a context it lists the tools and calls each
// once, with a value of its type for every required argument: that is what a model would do.
import { McpToolService } from 'seam-runtime'

const url = process.argv.at(-1)
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION
const protocol = version === '2025-11-25' || version === '2026-07-28' ? version : 'auto'
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {}

const service = new McpToolService({ id: 'conformance', transport: { url }, protocol, timeoutMs: 20_000, reconnect: { initialDelayMs: 50, maxDelayMs: 500 } })
let failed = false
try {
  await service.connect()
  const schemas = await service.schema('global')
  const calls = Array.isArray(context.toolCalls)
    ? context.toolCalls
    : process.env.MCP_CONFORMANCE_SCENARIO === 'json-schema-2020-12-preservation'
      ? echoSchema(schemas)
      : schemas.map((schema) => ({ name: schema.function.name, arguments: sampleArguments(schema.function.parameters) }))
  for (const call of calls) {
    try {
      const result = await service.execute('global', call.name, call.arguments ?? {})
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
