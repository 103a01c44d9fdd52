import { hostname } from 'node:os'
import { describe, expect, it, vi } from 'vitest'
import { exitedPid, OTHER_MACHINE } from './contract.test-suite.js'
import { defaultHostId, isProcessAlive, ownerGoneTest } from './hosts.js'

const EARLIER = 1_750_000_000_000
const local = (pid: number | string): string => `${hostname()}:${pid}`

describe('isProcessAlive', () => {
  it('tells this process from one that has exited', () => {
    expect(isProcessAlive(process.pid)).toBe(true)
    expect(isProcessAlive(exitedPid())).toBe(false)
  })

  it("counts a process it may not signal (EPERM) as alive", () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => {
      throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' })
    })
    try {
      expect(isProcessAlive(1)).toBe(true)
    } finally {
      kill.mockRestore()
    }
  })
})

describe('ownerGoneTest', () => {
  it('defaults the host id to this machine and process', () => {
    expect(defaultHostId()).toBe(local(process.pid))
  })

  it('takes owners without a host, from journals written before stores stamped one, as gone', () => {
    const gone = ownerGoneTest(defaultHostId())
    expect(gone({ at: EARLIER })).toBe(true)
    expect(gone({ host: null, at: Date.now() })).toBe(true)
  })

  it('takes its own host id as gone only on events written before this process started', () => {
    const gone = ownerGoneTest('web-1')
    expect(gone({ host: 'web-1', at: EARLIER })).toBe(true)
    expect(gone({ host: 'web-1', at: Date.now() })).toBe(false)
    expect(ownerGoneTest('web-1', 'all')({ host: 'web-1', at: Date.now() })).toBe(false)
  })

  it('takes a process of this machine as gone once it has exited, whatever the event time', () => {
    const gone = ownerGoneTest(defaultHostId())
    expect(gone({ host: local(exitedPid()), at: Date.now() })).toBe(true)
    expect(gone({ host: local(process.ppid), at: EARLIER })).toBe(false)
  })

  it('looks each pid up once per test', () => {
    const kill = vi.spyOn(process, 'kill')
    try {
      const gone = ownerGoneTest(defaultHostId())
      gone({ host: local(process.ppid), at: EARLIER })
      gone({ host: local(process.ppid), at: EARLIER })
      expect(kill).toHaveBeenCalledTimes(1)
    } finally {
      kill.mockRestore()
    }
  })

  it("leaves another machine's owners, and ids it cannot check, unless told to repair all hosts", () => {
    const unchecked = [OTHER_MACHINE, 'web-2', local('x'), local(0), local(-1), local(2 ** 31), `${hostname()}x:${process.ppid}`]
    const kill = vi.spyOn(process, 'kill')
    try {
      const gone = ownerGoneTest(defaultHostId())
      const all = ownerGoneTest(defaultHostId(), 'all')
      for (const host of unchecked) {
        expect(gone({ host, at: EARLIER }), host).toBe(false)
        expect(all({ host, at: EARLIER }), host).toBe(true)
      }
      // None of them is signalled: pid 0 or a negative one would reach a whole process group.
      expect(kill).not.toHaveBeenCalled()
    } finally {
      kill.mockRestore()
    }
  })
})
