import type { ApprovalAnswer, ApprovalPort, ApprovalRequest } from './approval-types.js'

/**
 * One approval port that asks every available port at once (a terminal prompt and the console, say)
 * and takes the first answer. The others are withdrawn: each asks under its own signal, aborted as
 * soon as one answers, so a prompt still waiting closes instead of asking about a settled call.
 * A port that throws is passed over; only when every port failed does the question fail (and the
 * pipeline fails closed).
 */
export function firstAnswer(ports: readonly ApprovalPort[]): ApprovalPort {
  const askable = () => ports.filter((port) => port.available !== false)
  return {
    get available() {
      return askable().length > 0
    },
    request(request: ApprovalRequest): Promise<ApprovalAnswer> {
      const asked = askable()
      if (asked.length === 0) return Promise.reject(new Error('no approval port is available'))
      const withdraw = new AbortController()
      const signal = AbortSignal.any([request.signal, withdraw.signal])
      return new Promise<ApprovalAnswer>((resolve, reject) => {
        let failures = 0
        for (const port of asked) {
          Promise.resolve()
            .then(() => port.request({ ...request, signal }))
            .then(
              (answer) => {
                if (withdraw.signal.aborted) return
                withdraw.abort(new Error('answered elsewhere'))
                resolve(answer)
              },
              (error: unknown) => {
                failures += 1
                if (failures === asked.length) reject(error)
              },
            )
        }
      })
    },
  }
}
