export { ConsoleApprovals } from './approvals.js'
export { type Console, type ConsoleOptions, createConsole } from './console.js'
export { type AskablePort, ConsoleQuestions, firstQuestionAnswer } from './questions.js'
export { CALLBACK_PATH, ConsoleSignIns } from './sign-ins.js'
