// The console's entry: the navigation, hash routes to the pages, and the login page on any 401.
// Plain ES modules, no build step. Each page's mount(root, params) returns the function that ends it
// (closing a terminal's socket, stopping its timers) when the person goes elsewhere.

import { onUnauthorized } from './js/api.js';
import { h } from './js/dom.js';
import { stop as stopEvents, watchConnection } from './js/live.js';
import * as catalog from './js/catalog-page.js';
import * as launch from './js/launch-page.js';
import * as messages from './js/messages-page.js';
import * as signin from './js/signin-page.js';
import * as teamPage from './js/team-page.js';
import * as terminal from './js/terminal-page.js';

const ROUTES = [
  [/^#?\/?(?:team)?$/, teamPage, 'team'],
  [/^#\/terminal\/([0-9A-Za-z_-]+)$/, terminal, 'team'],
  [/^#\/messages(?:\/([^/]+))?$/, messages, 'messages'],
  [/^#\/launch$/, launch, 'launch'],
  [/^#\/catalog$/, catalog, 'catalog'],
];
const NAV = [['team', '#/team', 'Team'], ['messages', '#/messages', 'Messages'], ['launch', '#/launch', 'Launch'],
  ['catalog', '#/catalog', 'Profiles and plugins']];

const main = document.getElementById('app');
const links = new Map(NAV.map(([key, href, text]) => [key, h('a', { href }, text)]));
const connection = h('span', { class: 'connection', role: 'status' });
const header = h('header', { class: 'top' },
  h('a', { class: 'brand', href: '#/team' }, 'cao'),
  h('nav', { 'aria-label': 'pages' }, [...links.values()]),
  h('span', { class: 'spacer' }),
  connection);
document.body.prepend(header);

let leave = () => {};
let signedOut = false;

function route() {
  if (signedOut) return;
  const hash = location.hash || '#/team';
  const found = ROUTES.map(([pattern, page, nav]) => [hash.match(pattern), page, nav]).find(([m]) => m);
  const [match, page, nav] = found || [[], teamPage, 'team'];
  leave();
  main.replaceChildren();
  for (const [key, link] of links) {
    if (key === nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  leave = page.mount(main, match.slice(1)) || (() => {});
  main.focus({ preventScroll: true });
}

onUnauthorized(() => {
  if (signedOut) return;
  signedOut = true;
  leave();
  leave = () => {};
  stopEvents();
  header.hidden = true;
  main.replaceChildren();
  signin.mount(main);
});

watchConnection((state) => {
  const text = { idle: '', live: 'live', connecting: 'connecting\u2026', lost: 'disconnected' }[state];
  connection.textContent = text;
  connection.dataset.state = state;
});

window.addEventListener('hashchange', route);
route();
