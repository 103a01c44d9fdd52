import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { filesystemTransport } from '../fixtures/test-helpers.js'
import { McpToolService } from './mcp-tool-service.js'

describe('McpToolService against the reference filesystem server over stdio', () => {
  let root: string
  let outside: string
  let service: McpToolService

  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'seam-mcp-fs-')))
    outside = await realpath(await mkdtemp(join(tmpdir(), 'seam-mcp-outside-')))
    await writeFile(join(root, 'notes.txt'), 'hello from the allowed root\n')
    await writeFile(join(outside, 'secret.txt'), 'not for the model\n')
    service = new McpToolService({ id: 'fs', transport: filesystemTransport(root) })
    await service.connect()
  })
  afterAll(async () => {
    await service.dispose()
    await rm(root, { recursive: true, force: true })
    await rm(outside, { recursive: true, force: true })
  })

  it('lists the file tools with their annotations', async () => {
    const schemas = await service.schema('global')
    const read = schemas.find((schema) => schema.function.name === 'read_text_file')
    expect(read).toMatchObject({ source: 'mcp:fs', function: { parameters: { type: 'object' } } })
    expect(schemas.map((schema) => schema.function.name)).toEqual(
      expect.arrayContaining(['list_directory', 'write_file', 'read_text_file']),
    )
  })

  it('reads a file inside the allowed root', async () => {
    const result = await service.execute('global', 'read_text_file', { path: join(root, 'notes.txt') })
    expect(result.success).toBe(true)
    expect(JSON.stringify(result)).toContain('hello from the allowed root')
  })

  it('fails for a path outside the allowed root, with the server message', async () => {
    const result = await service.execute('global', 'read_text_file', { path: join(outside, 'secret.txt') })
    expect(result.success).toBe(false)
    expect(!result.success && result.error).toMatch(/access denied|outside allowed/i)
    expect(JSON.stringify(result)).not.toContain('not for the model')
  })
})
