import type { GrantView } from '../../types.js'
import { api, latestOnly } from '../client.js'
import { h, replace, time } from '../dom.js'

/**
 * The standing session grants (an "allow for the session" answer): the tool each lets run unasked
 * in its session, until that session ends or the grant is revoked here (or with
 * `seam approvals --revoke`). `refresh` looks again; `announce` says what a revoke did.
 */
export function grantsSection(announce: (text: string) => void): { element: HTMLElement; refresh(): Promise<void> } {
  const list = h('ul', { class: 'grants', 'aria-label': 'standing session grants' })
  const element = h(
    'section',
    { 'aria-labelledby': 'grants-title' },
    h('h2', { id: 'grants-title' }, 'Session grants'),
    h('p', { class: 'muted' }, 'Tools allowed for the rest of a session; a grant ends with its session. Revoke one and its next call asks again.'),
    list,
  )
  const fetchGrants = latestOnly(api.grants)
  const render = (grants: GrantView[]) =>
    replace(list, grants.length === 0 ? h('li', { class: 'muted empty' }, 'No session grants are standing.') : grants.map(item))

  function item(grant: GrantView): HTMLElement {
    const name = grant.tool ?? grant.source
    return h(
      'li',
      { class: 'card', 'data-grant': grant.id },
      h('h3', null, h('code', null, name)),
      h('p', { class: 'muted' }, `granted ${time(grant.at)} · session ${grant.session} · principal ${grant.principal}${grant.tool ? '' : ' · its tool changed: it matches no call'}`),
      h('div', { class: 'actions' }, h('button', { type: 'button', 'aria-label': `Revoke the grant for ${name}`, onclick: () => void revoke(grant, name) }, 'Revoke')),
    )
  }

  async function revoke(grant: GrantView, name: string): Promise<void> {
    try {
      await api.revokeGrant(grant.id)
      announce(`${name}: session grant revoked`)
    } catch (error) {
      announce((error as Error).message)
    }
    await refresh()
  }

  const refresh = () => fetchGrants(render).catch(() => {})
  return { element, refresh }
}
