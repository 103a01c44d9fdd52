import { afterEach, describe, expect, it, onTestFinished } from 'vitest'
import { contextWith, fixtureTransport } from '../fixtures/test-helpers.js'
import { McpToolService } from './mcp-tool-service.js'

const HOST = {
  SEAM_TEST_PLAIN: 'visible',
  SEAM_TEST_API_TOKEN: 'sk-host-0123456789',
  SEAM_TEST_DB_URL: 'postgres://app:hunter2@db/app',
  SEAM_TEST_PASSED_TOKEN: 'sk-passed-0123456789',
}

/** The names of the variables the fixture server's process sees. */
async function childEnv(service: McpToolService): Promise<string[]> {
  const result = await service.execute('global', 'stats', {}, contextWith(new AbortController().signal))
  if (!result.success) throw new Error(result.error)
  return (result.output as { env: string[] }).env
}

describe("a stdio server's environment", () => {
  afterEach(() => {
    for (const name of Object.keys(HOST)) delete process.env[name]
  })

  it('is the host environment without credentials, plus the variables the host names or sets', async () => {
    Object.assign(process.env, HOST)
    const service = new McpToolService({
      id: 'env',
      transport: { ...fixtureTransport({ FIXTURE_GIVEN_KEY: 'set by the host' }), passEnv: ['SEAM_TEST_PASSED_TOKEN'] },
      protocol: '2025-11-25',
    })
    onTestFinished(() => service.dispose())
    const names = await childEnv(service)
    expect(names).toContain('SEAM_TEST_PLAIN')
    expect(names).toContain('PATH')
    expect(names).not.toContain('SEAM_TEST_API_TOKEN')
    expect(names).not.toContain('SEAM_TEST_DB_URL')
    expect(names).toContain('SEAM_TEST_PASSED_TOKEN')
    expect(names).toContain('FIXTURE_GIVEN_KEY')
  })
})
