import type { PendingSignInView, SignInQueueView } from '../../types.js'
import { api, newestQueue } from '../client.js'
import { h, replace, time } from '../dom.js'
import type { View, ViewContext } from './view.js'

/**
 * The Sign-ins section: each mounted server waiting for a person to sign in through OAuth, with a
 * link that opens its authorization server in a new tab. The browser comes back to the console's
 * `/oauth/callback`, and the entry leaves the list (as it does when its call gives up).
 */
export function signInsView(context: ViewContext): View {
  const list = h('ol', { class: 'approvals sign-ins', 'aria-label': 'sign-ins waiting, oldest first' })
  const newest = newestQueue<SignInQueueView>()
  const show = (queue: SignInQueueView) => {
    if (!newest(queue)) return
    replace(list, queue.pending.length === 0 ? h('li', { class: 'muted empty' }, 'No server is waiting for a sign-in.') : queue.pending.map(card))
  }
  const card = (signIn: PendingSignInView) =>
    h(
      'li',
      { class: 'card', 'data-id': signIn.id, 'aria-label': `${signIn.server} waits for a sign-in` },
      h('h3', null, h('code', null, signIn.server), ' needs you to sign in'),
      h('p', { class: 'muted' }, `asked ${time(signIn.askedAt)} · at ${new URL(signIn.url).host}`),
      h(
        'p',
        null,
        h('a', { class: 'button', href: signIn.url, target: '_blank', rel: 'noopener noreferrer', onclick: () => context.announce(`signing in to ${signIn.server}`) }, 'Sign in'),
      ),
    )
  const refresh = () => void api.signIns().then(show, () => {})
  const element = h(
    'div',
    null,
    h('h1', null, 'Sign-ins'),
    h('p', { class: 'muted' }, 'Mounted MCP servers that need an OAuth sign-in. The server’s tools (and any call to them) wait until you come back from its sign-in page.'),
    list,
  )
  refresh()
  return {
    element,
    refresh,
    onEvent(event) {
      if (event.type === 'sign-ins') show(event)
    },
  }
}
