import { spawn } from 'node:child_process'
import type { ApprovalPort } from '../seams/approval.js'
import type { Root } from '../runtime/root.js'
import type { QuestionPort } from '../seams/types.js'
import type { CliContext } from './io.js'
import { styleFor } from './io.js'
import { lineReader, terminalApproval } from './prompt.js'
import { terminalQuestions } from './question-prompt.js'

/** The console for `seam dev`, loaded only there. */
export function loadConsole(): Promise<typeof import('../console/index.js')> {
  return import('../console/index.js')
}

export interface DevApproval {
  /** The root's approval port: the console, and the terminal prompt too when stdin is a terminal. */
  readonly port: ApprovalPort
  /**
   * The question port (a tool's `ctx.ask`) of the turns begun here (the console's run form, `seam
   * call` through the dev link): the console, and the terminal prompt too when stdin is a terminal.
   */
  readonly question: QuestionPort
  /** The console's OAuth sign-ins: `seam dev` provides them to the plugin's mounts (`provideOAuthSignIn`). */
  readonly signIns: import('../console/index.js').ConsoleSignIns
  readonly mount: (root: Root, token: string | undefined) => import('../console/index.js').Console
}

/**
 * Approval and tools' questions in `seam dev`: each goes to the console page and, at a terminal, to
 * the prompt as well; whichever answers first wins and the other is withdrawn.
 */
export async function devApproval({ io }: CliContext): Promise<DevApproval> {
  const { ConsoleApprovals, ConsoleQuestions, ConsoleSignIns, createConsole, firstQuestionAnswer } = await loadConsole()
  const { firstAnswer } = await import('../runtime/approvals/first-answer.js')
  const approvals = new ConsoleApprovals()
  const questions = new ConsoleQuestions()
  const signIns = new ConsoleSignIns()
  const interactive = io.stdin.isTTY === true && io.stdout.isTTY === true
  const style = styleFor(io.stdout, io.env)
  const port = interactive ? firstAnswer([terminalApproval({ input: io.stdin, output: io.stdout, style }), approvals]) : approvals
  const question = interactive ? firstQuestionAnswer([terminalQuestions(lineReader(io.stdin, io.stdout), io.stdout, style), questions]) : questions
  return { port, question, signIns, mount: (root, token) => createConsole(root, { approvals, questions, signIns, ask: question, ...(token ? { token } : {}) }) }
}

/** Opens `url` in the desktop's browser when there is one; says nothing when there is not. */
export function openBrowser(url: string, platform: NodeJS.Platform = process.platform): void {
  const [command, ...args] = platform === 'darwin' ? ['open', url] : platform === 'win32' ? ['cmd', '/c', 'start', '""', url] : ['xdg-open', url]
  try {
    const child = spawn(command!, args, { stdio: 'ignore', detached: true })
    child.on('error', () => {})
    child.unref()
  } catch {
    // No browser on this machine (a server, a container): the URL is printed anyway.
  }
}
