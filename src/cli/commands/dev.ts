import { performance } from 'node:perf_hooks'
import { existsSync } from 'node:fs'
import { delimiter, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Command, Option } from 'commander'
import { messageOf, SeamError } from '../../errors.js'
import type { SignInQueueView } from '../../console/types.js'
import type { Root } from '../../runtime/root.js'
import { type BackgroundCheck, startBackgroundCheck } from '../background-check.js'
import { EXIT, UsageError } from '../errors.js'
import { devApproval, openBrowser } from '../dev-console.js'
import { type DevLinkServer, startDevLink } from '../dev-link-server.js'
import { follow, warnAsksEveryCall } from '../follow.js'
import { formatDiagnostic, formatProvider, ms, printable } from '../format.js'
import { type CliContext, line, type OutStream, type Style, styleFor } from '../io.js'
import { type HttpServeOptions, httpServeOptions, loadServe } from '../mcp-server.js'
import { logSink, untilStopped } from '../signals.js'
import { loadRuntime, openJournal, pluginDir, runtimeVersion } from '../workspace.js'

interface DevFlags {
  port: string
  host: string
  token?: string
  mcp: boolean
  open?: boolean
  otel?: boolean
  debounce?: string
  check: boolean
}

export function registerDev(program: Command, cli: CliContext): void {
  program
    .command('dev')
    .description('load a plugin folder with hot reload, the SQLite journal and an MCP HTTP server')
    .argument('[dir]', 'the plugin folder', '.')
    .option('--port <n>', 'MCP HTTP port (0 picks a free one)', '4750')
    .option('--host <host>', 'MCP HTTP host; anything but loopback needs a token', '127.0.0.1')
    .option('--token <token>', 'bearer token MCP clients must send (default $SEAM_MCP_TOKEN)')
    .option('--no-mcp', 'do not serve MCP (nor the console) over HTTP')
    .option('--open', 'open the console in a browser')
    .option('--no-check', 'do not type-check the plugin in the background')
    .option('--otel', 'export OpenTelemetry traces and metrics over OTLP/HTTP (endpoint from $OTEL_EXPORTER_OTLP_ENDPOINT; on by itself when that is set)')
    .addOption(new Option('--debounce <ms>', 'quiet time before a reload').hideHelp())
    .action(async (dir: string, flags: DevFlags, command: Command) => {
      cli.exitCode = await dev(cli, dir, flags, command.optsWithGlobals().debug === true)
    })
}

async function dev(cli: CliContext, dirArg: string, flags: DevFlags, debug: boolean): Promise<number> {
  const { io } = cli
  const out = io.stdout
  const style = styleFor(out, io.env)
  const dir = pluginDir(io.cwd, dirArg)
  const http = flags.mcp ? httpServeOptions(flags, io.env) : undefined
  const debounceMs = parseDebounce(flags.debounce ?? io.env.SEAM_DEBOUNCE_MS)
  const checkNice = parseNice(io.env.SEAM_CHECK_NICE)
  const started = performance.now()
  const { createRoot, provideOAuthSignIn } = await loadRuntime()
  const approval = await devApproval(cli)
  // A mount's `auth: { grant: 'authorization_code' }` without a signIn of its own signs in here.
  const unprovide = http ? provideOAuthSignIn(approval.signIns) : () => {}
  const otel = await startTelemetry(flags.otel === true, io.env)
  const root = await createRoot({ dir, watch: true, journal: await openJournal(dir), debounceMs, log: logSink(out, style, debug), approval: approval.port, telemetry: otel?.telemetry }).catch(
    async (error: unknown) => {
      await otel?.shutdown()
      throw error
    },
  )
  const stopping = untilStopped()
  let check: BackgroundCheck | undefined
  let link: DevLinkServer | undefined
  try {
    const capabilities = await root.capabilities()
    // Until the banner is out the server only announces its URL, which the banner shows.
    let quiet = true
    const log = (text: string) => {
      if (!quiet) line(out, style.dim(text))
    }
    const web = http ? approval.mount(root, http.token) : undefined
    const served = { log, ...(web ? { routes: web.handle, approval: approval.port } : {}) }
    const mcp = http ? await startHttp(root, { ...http, ...served }, style) : { text: style.dim('off (--no-mcp)'), urls: [], close: undefined }
    // One login code per URL: a code is spent by the first browser that opens it.
    const consoleUrls = web ? mcp.urls.map((url) => new URL(web.loginPath(), url).href) : []
    const consoleUrl = consoleUrls[0]
    // This machine's own URL: the browser that signs in is the one on this machine.
    if (web && mcp.urls.length > 0) approval.signIns.serveAt(new URL('/', mcp.urls.at(-1)!).href)
    // `seam call`, `tools`, `journal` and `approvals` in this folder come in here (see dev-link-server.ts).
    link = await startDevLink(root, dir, approval.port, approval.question)
    const tools = capabilities.tools.map((t) => t.name)
    const skills = capabilities.skills.map((s) => s.name)
    line(out, `${style.bold('seam-runtime')} ${runtimeVersion()} ${style.dim('dev')} ${dir}`)
    line(out, `  generation ${style.bold(String(root.generation))} live ${style.dim(`(${ms(performance.now() - started)})`)}`)
    line(out, `  tools      ${names(tools)}`)
    line(out, `  skills     ${names(skills)}`)
    line(out, `  journal    ${root.journal.location}`)
    if (servesOwnRunCommand(dir, capabilities.tools)) line(out, `  commands   ${commandSandbox(io.env)}`)
    const repaired = root.repaired
    if (repaired && (repaired.results > 0 || repaired.turns > 0)) {
      line(out, style.yellow(`  repaired   ${plural(repaired.results, 'call')} (OUTCOME_UNKNOWN) and ${plural(repaired.turns, 'turn')} left open by a crash`))
    }
    line(out, `  mcp        ${mcp.text}`)
    line(out, `  cli        ${style.cyan(link.url)} ${style.dim('(for seam call, tools, journal, approvals; .seam/dev.json)')}`)
    line(out, `  console    ${consoleUrls.length > 0 ? consoleUrls.map((url) => style.cyan(url)).join(style.dim(' or ')) : style.dim('off')}`)
    for (const status of root.providers()) line(out, `  provider   ${formatProvider(status, style)}`)
    // Started after the first generation is live, so the first check never delays it.
    check = flags.check ? startBackgroundCheck(dir, out, style, checkNice) : undefined
    line(out, `  types      ${check?.banner ?? style.dim('not checked (--no-check)')}`)
    if (otel) line(out, `  otel       ${style.cyan(otel.endpoint)} ${style.dim('(traces and metrics over OTLP/HTTP)')}`)
    for (const d of root.activeGeneration.diagnostics) line(out, `${style.yellow('warning:')} ${formatDiagnostic(d, style, dir)}`)
    const warned = new Set<string>()
    warnAsksEveryCall(capabilities, out, style, warned)
    line(out, style.dim('watching for changes; Ctrl-C to stop'))
    quiet = false
    // The last URL is this machine's own (127.0.0.1 on a wildcard bind): the browser opened here.
    if (flags.open && consoleUrl) openBrowser(consoleUrls.at(-1)!)
    follow(root, out, style, dir, warned)
    if (web && mcp.urls.length > 0) announceSignIns(approval.signIns, new URL('/#/sign-ins', mcp.urls.at(-1)!).href, out, style)
    root.on('generation', (event) => {
      if (event.diff.tools.added.length + event.diff.tools.removed.length > 0) check?.sourcesChanged()
    })
    await stopping.promise
    line(out, style.dim('stopping…'))
    await link.close()
    web?.close()
    await mcp.close?.().catch((error: unknown) => line(io.stderr, `seam: closing the MCP server failed: ${messageOf(error)}`))
  } finally {
    await link?.close()
    await check?.close()
    await root.close()
    unprovide()
    await otel?.shutdown()
    stopping.dispose()
  }
  line(out, style.dim('stopped'))
  return EXIT.ok
}

async function startHttp(root: Root, options: HttpServeOptions, style: Style): Promise<{ text: string; urls: readonly string[]; close?: () => Promise<void> }> {
  try {
    const serve = await loadServe()
    const server = await serve.serveHttp(root, options)
    const auth = options.token ? style.dim(' (bearer token required)') : ''
    const urls = server.urls.map((url) => style.cyan(url)).join(style.dim(' or '))
    return { text: `${urls}${auth}`, urls: server.urls, close: () => server.close() }
  } catch (error) {
    const busy = [error, SeamError.is(error) ? error.cause : undefined].some((e) => (e as { code?: unknown } | undefined)?.code === 'EADDRINUSE')
    const why = busy
      ? `port ${options.port} is in use; pick another with --port <n> (--port 0 takes any free port), or run without MCP with --no-mcp`
      : messageOf(error)
    return { text: style.yellow(`not serving: ${why}`), urls: [] }
  }
}

/** The SDK and its exporters, loaded only when telemetry is wanted (see `../otel.ts`). */
async function startTelemetry(flag: boolean, env: NodeJS.ProcessEnv) {
  const { otelWanted, startOtel } = await import('../otel.js')
  return otelWanted(flag, env) ? startOtel(env) : undefined
}

/**
 * Whether `dir` is this repository's own workspace plugin with its `run_command` (what `npm start`
 * serves): only that tool runs commands, under the sandbox `commandSandbox` describes.
 */
function servesOwnRunCommand(dir: string, tools: readonly { readonly name: string; readonly source: string }[]): boolean {
  const repository = fileURLToPath(new URL('../../../', import.meta.url))
  return resolve(dir) === resolve(repository) && tools.some((tool) => tool.name === 'run_command' && tool.source === 'tools/run_command.ts')
}

/** Whether the workspace plugin's `run_command` runs commands in bubblewrap (see tools/lib/sandbox.ts). */
function commandSandbox(env: NodeJS.ProcessEnv): string {
  if (env.SEAM_RUN_COMMAND_SANDBOX === 'off') return 'not sandboxed: SEAM_RUN_COMMAND_SANDBOX=off'
  const found = (env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, 'bwrap')))
  return found && process.platform === 'linux' ? 'sandboxed (bwrap)' : 'not sandboxed: bwrap not installed'
}

/** Says at the terminal where a sign-in a mounted server waits on can be done (once per sign-in, no URL of the authorization server). */
function announceSignIns(signIns: { onChange(listener: (queue: SignInQueueView) => void): () => void; queue(): SignInQueueView }, page: string, out: OutStream, style: Style): void {
  const told = new Set<string>()
  const tell = (queue: SignInQueueView) => {
    for (const signIn of queue.pending) {
      if (told.has(signIn.id)) continue
      told.add(signIn.id)
      line(out, `${style.yellow('sign in')} ${printable(signIn.server)} waits for you to sign in: ${style.cyan(page)}`)
    }
  }
  signIns.onChange(tell)
  tell(signIns.queue())
}

/** `SEAM_CHECK_NICE`: the background checker's CPU niceness, 0 (as `seam dev` itself) to 19 (only idle cores). */
function parseNice(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined
  if (!/^\d+$/.test(value) || Number(value) > 19) throw new UsageError(`SEAM_CHECK_NICE must be a niceness from 0 to 19, got "${value}"`)
  return Number(value)
}

function parseDebounce(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined
  if (!/^\d+$/.test(value)) throw new UsageError(`--debounce must be milliseconds, got "${value}"`)
  return Number(value)
}

/** `3  a, b, c`; a long list is cut after a dozen names, each escaped (remote providers name tools too). */
function names(list: readonly string[], max = 12): string {
  if (list.length === 0) return '0'
  const safe = list.map(printable)
  const shown = safe.length > max ? `${safe.slice(0, max).join(', ')} and ${safe.length - max} more` : safe.join(', ')
  return `${list.length}  ${shown}`
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}
