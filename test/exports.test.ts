import { describe, expect, it } from 'vitest'

// Any change to the public surface shows here: a new export becomes public API, so review it.
describe('public surface', () => {
  it("pins the runtime export names of 'seam-runtime'", async () => {
    const names = Object.keys(await import('seam-runtime')).sort()
    expect(names).toMatchInlineSnapshot(`
      [
        "BuiltinToolService",
        "CODE_MODE_RULES",
        "CapabilityIngress",
        "DEFAULT_CODE_LIMITS",
        "ErrorCode",
        "McpToolService",
        "MemoryOAuthTokenStore",
        "Root",
        "SeamError",
        "SeamIntegration",
        "SeamProviderRegistry",
        "SkillRegistryAsService",
        "ToolRegistryAsService",
        "Turn",
        "TurnToolRuntime",
        "capabilitySeamToken",
        "createCodeSandbox",
        "createRoot",
        "createToken",
        "createTurnIngress",
        "declarationsFor",
        "deferApprovals",
        "definePlugin",
        "defineSkill",
        "defineTool",
        "isSecretEnv",
        "memoryJournal",
        "observeApprovals",
        "openAiChatModel",
        "openTelemetry",
        "postgresJournal",
        "provideOAuthSignIn",
        "redactText",
        "registerSecret",
        "runAgent",
        "seamIntegrationToken",
        "sqliteJournal",
        "transcript",
        "withoutSecrets",
      ]
    `)
  })

  it("pins the runtime export names of 'seam-runtime/plugin-runtime'", async () => {
    const names = Object.keys(await import('seam-runtime/plugin-runtime')).sort()
    expect(names).toMatchInlineSnapshot(`
      [
        "createToken",
        "definePlugin",
      ]
    `)
  })

  it("pins the runtime export names of 'seam-runtime/openai'", async () => {
    const names = Object.keys(await import('seam-runtime/openai')).sort()
    expect(names).toMatchInlineSnapshot(`
      [
        "dropStrictNulls",
        "fromChatToolCalls",
        "fromResponsesOutput",
        "skillInstructions",
        "toChatHistory",
        "toChatMessages",
        "toChatTools",
        "toResponsesHistory",
        "toResponsesItems",
        "toResponsesTools",
        "toStrictSchema",
      ]
    `)
  })

  it("pins the runtime export names of 'seam-runtime/anthropic'", async () => {
    const names = Object.keys(await import('seam-runtime/anthropic')).sort()
    expect(names).toMatchInlineSnapshot(`
      [
        "fromAnthropicContent",
        "skillInstructions",
        "toAnthropicHistory",
        "toAnthropicToolResults",
        "toAnthropicTools",
      ]
    `)
  })

  it("pins the runtime export names of 'seam-runtime/ai-sdk'", async () => {
    const names = Object.keys(await import('seam-runtime/ai-sdk')).sort()
    expect(names).toMatchInlineSnapshot(`
      [
        "ToolOutcomeError",
        "aiSdkTools",
      ]
    `)
  })

  it('gives plugin authors the very same definePlugin and createToken as the main entry', async () => {
    const main = await import('seam-runtime')
    const plugin = await import('seam-runtime/plugin-runtime')
    expect(plugin.definePlugin).toBe(main.definePlugin)
    expect(plugin.createToken).toBe(main.createToken)
  })
})
