import type { ApprovalPort, ApprovalReply, ApprovalRequest } from '../../seams/approval.js'

/**
 * One approval port that asks every available port at once (a terminal prompt and the console, say)
 * and takes the first answer. The others are withdrawn: each asks under its own signal, aborted as
 * soon as one answers, so a prompt still waiting closes instead of asking about a settled call.
 * A port that throws or defers is passed over: a person answering elsewhere beats "no one can
 * answer now". Only when no port answered is the question deferred (some port deferred) or failed
 * (every port threw), and the pipeline parks the call or fails closed.
 */
export function firstAnswer(ports: readonly ApprovalPort[]): ApprovalPort {
  const askable = () => ports.filter((port) => port.available !== false)
  return {
    get available() {
      return askable().length > 0
    },
    request(request: ApprovalRequest): Promise<ApprovalReply> {
      const asked = askable()
      if (asked.length === 0) return Promise.reject(new Error('no approval port is available'))
      const withdraw = new AbortController()
      const signal = AbortSignal.any([request.signal, withdraw.signal])
      return new Promise<ApprovalReply>((resolve, reject) => {
        let passed = 0
        let deferred = false
        const passOver = (error?: unknown) => {
          passed += 1
          if (passed < asked.length) return
          if (deferred) resolve('deferred')
          else reject(error)
        }
        for (const port of asked) {
          Promise.resolve()
            .then(() => port.request({ ...request, signal }))
            .then(
              (answer) => {
                if (withdraw.signal.aborted) return
                if (answer === 'deferred') {
                  deferred = true
                  return passOver()
                }
                withdraw.abort(new Error('answered elsewhere'))
                resolve(answer)
              },
              (error: unknown) => passOver(error),
            )
        }
      })
    },
  }
}
