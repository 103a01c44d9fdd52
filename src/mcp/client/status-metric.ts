import { metrics, type ObservableResult } from '@opentelemetry/api'
import type { McpServiceStatus } from './supervisor.js'

/**
 * `seam.mcp.provider.status`: 1 while an MCP provider is connected, 0 otherwise, with its id
 * (`seam.provider`) and status (`seam.provider.status`: idle, connecting, connected, down). Observed
 * through the global meter provider at collection time; a disposed provider stops reporting.
 */
export function observeStatus(provider: string, status: () => McpServiceStatus): () => void {
  const gauge = metrics.getMeter('seam-runtime').createObservableGauge('seam.mcp.provider.status', {
    description: 'Whether an MCP tool provider is connected (1) or not (0), by provider and status.',
    unit: '1',
  })
  const callback = (result: ObservableResult) => {
    const now = status()
    if (now !== 'disposed') result.observe(now === 'connected' ? 1 : 0, { 'seam.provider': provider, 'seam.provider.status': now })
  }
  gauge.addCallback(callback)
  return () => gauge.removeCallback(callback)
}
