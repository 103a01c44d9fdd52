import type { CallbackVerdict } from './sign-ins.js'

/**
 * The page the browser lands on back from the authorization server. It shows no part of the query
 * (the code is a secret) and names only the server, escaped.
 */
export function callbackPage(verdict: CallbackVerdict): { status: number; html: string } {
  if (!verdict.ok) {
    return page(400, 'Sign-in not recognised', 'This sign-in link is unknown, was used already, or was withdrawn (its call gave up, or the plugin reloaded). Start the call again and use the new link on the console.')
  }
  if (verdict.refused !== undefined) {
    return page(200, `Sign-in to ${verdict.server} refused`, `The authorization server refused the sign-in (${verdict.refused}). You can close this tab.`)
  }
  return page(200, `Signed in to ${verdict.server}`, 'Signed in. You can close this tab: the call goes on in seam dev.')
}

function page(status: number, title: string, text: string): { status: number; html: string } {
  const html = `<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(title)} · seam console</title><link rel="stylesheet" href="/styles.css"><main class="callback"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></main></html>`
  return { status, html }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
