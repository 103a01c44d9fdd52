export type { JournalCoordination } from '../../seams/coordination.js'
export { type MemoryJournal, type MemoryJournalOptions, memoryJournal } from './memory.js'
export { type PostgresJournal, type PostgresJournalOptions, postgresJournal } from './postgres.js'
export type { PrivacyOptions } from '../base/privacy.js'
export { redactText, registerSecret } from '../base/redact.js'
export { type SqliteJournal, type SqliteJournalOptions, sqliteJournal } from './sqlite.js'
export type {
  ContentBlock,
  JournalEvent,
  JournalEventKind,
  JournalStore,
  RepairHosts,
  RepairOptions,
  RepairReport,
  TurnPage,
  TurnQuery,
  TurnSummary,
} from '../../seams/journal.js'
