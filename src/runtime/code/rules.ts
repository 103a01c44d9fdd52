/**
 * The language rules a model is told with the declarations (the `run_code` tool's description
 * carries this text); docs/code-mode.md states the same rules for people.
 */
export const CODE_MODE_RULES = `Write the body of an async function in TypeScript or JavaScript; it runs in a sandbox.
- Its value is what it returns with \`return\` (top-level \`await\` and \`return\` work; a final expression without \`return\` is not the value). The value must be JSON; return nothing for no value.
- Call tools through \`tools\`, declared below: \`await tools.name(args)\`, or \`await tools.call("name", args)\` for any name. Each returns a promise; use \`Promise.all\` for calls that may run together.
- A failed call rejects with an Error that has \`code\` and \`message\`; catch it with try/catch to go on.
- Arguments and results are copied as JSON. Every call you start finishes before the run ends, but its result is dropped unless you await it.
- \`console.log\` / \`info\` / \`warn\` / \`error\` output is returned with the value. \`setTimeout\` works; pending timers are dropped when the program returns.
- Nothing else from outside exists: no \`import\`, \`require\`, \`process\`, \`fetch\`, file system or network.
- Limits stop the run with a code: CPU time, wall time, memory, output size, number of calls, source size.`
