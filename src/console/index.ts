export { ConsoleApprovals } from './approvals.js'
export { type Console, type ConsoleOptions, createConsole } from './console.js'
