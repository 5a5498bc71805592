// Shown on any 401: this browser has no session (never had one, it expired, or the server restarted).

import { h } from './dom.js';

export function mount(root) {
  document.title = 'Log in · cao console';
  root.append(h('section', { class: 'signin', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'You are not logged in'),
    h('p', {}, 'This console shows and steers your agents, so it opens only with a login link from the '
      + 'person who runs the server.'),
    h('ul', {},
      h('li', {}, 'Open the ', h('strong', {}, 'Console:'), ' link that ', h('code', {}, 'cao server'),
        ' printed when it started, or'),
      h('li', {}, 'run ', h('code', {}, 'cao console --web'),
        ' on the server\u2019s machine: it prints a new link.')),
    h('p', { class: 'dim' }, 'A link works once, for ten minutes; the session it opens lasts a day.')));
  return () => {};
}
