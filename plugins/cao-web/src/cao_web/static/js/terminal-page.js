// Terminal: the agent's screen in xterm.js over the server's PTY WebSocket, with upstream's frames so
// the same socket serves upstream's clients: the server sends binary frames of raw terminal bytes; the
// page sends text frames {"type": "input", "data"} for keys and pastes and {"type": "resize", "rows",
// "cols"} on open and whenever the window's size changes. Leaving the page closes the socket; the
// agent keeps running. Above the screen, the prompt the agent waits on, to answer by option; below it,
// the terminal's prompt audit trail (GET /terminals/{id}/prompts), extended by the prompt events.

import { api, ApiError, enc } from './api.js';
import { clock, fill, h, toMs, visible } from './dom.js';
import { problem } from './page.js';
import { answerText, promptView } from './prompt.js';
import { team } from './team.js';

const THEME = {
  background: '#16181d', foreground: '#d8dde6', cursor: '#d8dde6', selectionBackground: '#3a4558',
};

export function mount(root, [id]) {
  document.title = `Terminal ${id} · cao console`;
  const badge = h('span', { class: 'badge' });
  const title = h('span', { class: 'who' }, h('strong', {}, id));
  const note = h('p', { class: 'note', role: 'alert' });
  const banner = h('div', { class: 'banner', role: 'status', hidden: true });
  const screen = h('div', { class: 'screen', role: 'group', 'aria-label': `terminal ${id}` });
  const prompt = promptView(id);
  const trail = h('tbody');
  const trailNote = h('p', { class: 'note', role: 'alert' });
  const noPrompts = h('p', { class: 'empty' }, 'No prompts recorded for this terminal yet.');
  root.append(
    h('h1', { class: 'terminal-title' }, 'Terminal ', title, ' ', badge),
    note, banner, prompt.el, screen,
    h('section', { class: 'prompt-trail', 'aria-label': 'prompt audit trail' },
      h('h2', {}, 'Prompts'), trailNote, noPrompts,
      h('table', {}, h('thead', {}, h('tr', {}, ['Time', 'What', 'Prompt', 'By', 'Answer or reason']
        .map((name) => h('th', {}, name)))), trail)));

  let left = false;
  let gone = false; // the terminal was stopped: nothing to reconnect to
  let closedWhy = null; // why the socket closed, while it is closed
  let socket = null;
  let term = null;
  let fit = null;

  function showStatus(record) {
    const t = team.terminals.get(id) || record;
    if (!t) return;
    fill(title, h('strong', {}, t.agent_profile), h('span', { class: 'dim' }, ` ${t.provider} \u00b7 ${id}`));
    const status = t.status || 'unknown';
    badge.className = `badge status-${status}`;
    badge.textContent = status.replaceAll('_', ' ');
    prompt.update(team.terminals.get(id) || record);
  }

  // One row of the audit trail: an entry of GET /terminals/{id}/prompts or a prompt event (same fields).
  function trailRow(entry) {
    const open = entry.prompt;
    const said = entry.kind === 'opened'
      ? `${open.prompt.kind.replaceAll('_', ' ')}: ${open.prompt.question}`
      : [answerText(open, entry.option, entry.text), entry.detail].filter(Boolean).join(' \u2014 ');
    return h('tr', { class: `prompt-${entry.kind}`, dataset: { kind: entry.kind, promptId: open.id } },
      h('td', { class: 'time' }, clock(entry.at)), h('td', {}, entry.kind),
      h('td', {}, h('code', {}, open.id)),
      h('td', {}, entry.by || ''), h('td', {}, visible(said)));
  }
  // Events that arrive while the trail is read may or may not be in the answer: kept, and added after it
  // unless it has them (an entry is known by its kind, prompt and time to the millisecond).
  let reading = null;
  const key = (entry) => `${entry.kind} ${entry.prompt.id} ${Math.floor(toMs(entry.at))}`;
  async function readTrail() {
    const mine = reading = [];
    let entries;
    try {
      entries = await api.get(`/terminals/${enc(id)}/prompts`);
    } catch (error) {
      if (mine === reading) problem(trailNote, error);
      return;
    }
    if (mine !== reading) return;
    reading = null;
    const known = new Set(entries.map(key));
    trailNote.textContent = '';
    fill(trail, entries.map(trailRow), mine.filter((event) => !known.has(key(event))).map(trailRow));
    noPrompts.hidden = trail.childElementCount > 0;
  }
  // A team not read yet is read soon, and its 'reset' reads the trail too.
  if (team.loaded) readTrail();

  const unwatch = team.watch((change) => {
    if (change.kind === 'reset' || (change.kind === 'changed' && change.terminal.id === id)) showStatus();
    if (change.kind === 'reset') readTrail();
    if (change.kind === 'event' && change.event.event === 'prompt' && change.event.terminal_id === id) {
      if (reading) reading.push(change.event);
      trail.append(trailRow(change.event));
      noPrompts.hidden = true;
    }
    if (change.kind === 'removed' && change.terminal.id === id) {
      badge.className = 'badge status-gone';
      badge.textContent = 'removed';
      gone = true;
      if (closedWhy !== null) showClosed();
    }
  });

  function showClosed() {
    fill(banner, gone
      ? h('span', {}, "The terminal's connection closed: the terminal was stopped.")
      : [h('span', {}, `The terminal's connection closed${closedWhy}. The agent keeps running.`),
        h('button', { type: 'button', onclick: connect }, 'Reconnect')]);
    banner.hidden = false;
  }
  showStatus();
  api.get(`/terminals/${enc(id)}`).then(showStatus, (error) => problem(note, error));

  function send(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  }

  function sendSize() {
    if (!term) return;
    fit.fit();
    send({ type: 'resize', rows: term.rows, cols: term.cols });
  }

  function connect() {
    banner.hidden = true;
    closedWhy = null;
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    socket = new WebSocket(`${scheme}://${location.host}/terminals/${enc(id)}/ws`);
    socket.binaryType = 'arraybuffer';
    const mine = socket;
    socket.onopen = () => {
      sendSize();
      term.focus();
    };
    socket.onmessage = (message) => {
      term.write(typeof message.data === 'string' ? message.data : new Uint8Array(message.data));
    };
    socket.onclose = async (event) => {
      if (left || mine !== socket) return;
      const lost = event.code === 1006 ? ' (the connection was lost)' : '';
      closedWhy = event.reason ? `: ${event.reason}` : lost;
      showClosed();
      // A stopped terminal closes its socket before the server forgets it: the removal event, or this
      // read, turns the banner into "stopped".
      try {
        await api.get(`/terminals/${enc(id)}`);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) gone = true;
      }
      if (!left && mine === socket && closedWhy !== null) showClosed();
    };
  }

  const onWindowResize = () => sendSize();

  (async () => {
    // Loaded here, not with the app: the other pages need none of it.
    const [{ Terminal }, { FitAddon }] = await Promise.all([
      import('../vendor/xterm/xterm.mjs'), import('../vendor/addon-fit/addon-fit.mjs')]);
    if (left) return;
    term = new Terminal({
      cursorBlink: true, fontSize: 13, scrollback: 5000, theme: THEME,
      fontFamily: '"DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace',
    });
    fit = new FitAddon();
    term.loadAddon(fit);
    term.open(screen);
    fit.fit();
    // Keys, pastes and the terminal's own replies (cursor reports) all go to the agent as typed input.
    term.onData((data) => send({ type: 'input', data }));
    term.onBinary((data) => send({ type: 'input', data }));
    window.addEventListener('resize', onWindowResize);
    connect();
  })().catch((error) => problem(note, error));

  return () => {
    left = true;
    unwatch();
    window.removeEventListener('resize', onWindowResize);
    if (socket) socket.close(1000, 'page left');
    if (term) term.dispose();
  };
}
