import type { LiveEvent } from '../../types.js'

/** A page section: its element, and what it does when a live event arrives while it is shown. */
export interface View {
  readonly element: HTMLElement
  onEvent?(event: LiveEvent): void
  /** Reloads what it shows: the event stream (re)opened, and anything before it was not heard. */
  refresh?(): void
}

export interface ViewContext {
  navigate(hash: string): void
  /** Says `text` through the page's live region (screen readers). */
  announce(text: string): void
}
