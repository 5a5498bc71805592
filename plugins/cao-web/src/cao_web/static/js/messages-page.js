// Messages: every inbox message of one session's terminals, with its sender, receiver, state and the
// reason it failed; Retry for a failed, dead or uncertain one, Cancel for one still waiting; and the
// session's timeline (status changes, messages, handoffs and assigns with their durations). Read once,
// then kept current from the event stream.

import { api, enc, withQuery } from './api.js';
import { clock, duration, fill, firstLine, h, visible } from './dom.js';
import { problem } from './page.js';
import { team } from './team.js';

const RETRYABLE = new Set(['failed', 'dead', 'uncertain']);
const CANCELLABLE = new Set(['pending']);
const HISTORY = 1000;

export function mount(root, [wanted]) {
  document.title = 'Messages · cao console';
  const picker = h('select', { id: 'messages-session' });
  picker.addEventListener('change', () => { location.hash = `#/messages/${enc(picker.value)}`; });
  const note = h('p', { class: 'note', role: 'alert' });
  const body = h('tbody');
  const table = h('table', { class: 'messages' },
    h('caption', { class: 'sr-only' }, 'Inbox messages'),
    h('thead', {}, h('tr', {}, ...['#', 'From', 'To', 'State', 'Reason', 'Updated', 'Message', ''].map(
      (name) => h('th', { scope: 'col' }, name)))),
    body);
  const none = h('p', { class: 'empty', hidden: true }, 'No messages yet.');
  const timeline = h('ol', { class: 'timeline', 'aria-label': 'timeline' });
  root.append(
    h('h1', {}, 'Messages'),
    h('div', { class: 'toolbar' }, h('label', { for: 'messages-session' }, 'Session'), picker),
    note,
    h('section', { 'aria-labelledby': 'inbox-title' }, h('h2', { id: 'inbox-title' }, 'Inbox'), table, none),
    h('section', { 'aria-labelledby': 'timeline-title' },
      h('h2', { id: 'timeline-title' }, 'Timeline'), timeline));

  let session = wanted ? decodeURIComponent(wanted) : null;
  const rows = new Map(); // message id -> {tr, cells, message}
  let receivers = new Set();
  let lastSeq = -1;
  let pending = null; // live events while the history is read
  let left = false;
  let loads = 0;

  function sessionOptions() {
    const names = [...team.sessions.keys()];
    if (session && !names.includes(session)) names.unshift(session);
    fill(picker, names.map((name) => h('option', { value: name, selected: name === session }, name)));
    picker.disabled = names.length === 0;
  }

  function belongs(event) {
    switch (event.event) {
      case 'status':
      case 'handoff_started':
      case 'assign_started':
      case 'handoff_finished':
      case 'assign_finished':
      case 'activity':
        return event.session_name === session;
      case 'terminal_created':
      case 'terminal_removed':
        return event.terminal.session_name === session;
      case 'message':
        return receivers.has(event.message.receiver_id);
      default:
        return false;
    }
  }

  async function load() {
    const mine = ++loads;
    await team.ready();
    if (left || mine !== loads) return;
    sessionOptions();
    if (!session) session = picker.value || null;
    rows.clear();
    fill(body);
    fill(timeline);
    lastSeq = -1;
    if (!session) {
      none.hidden = false;
      none.textContent = 'No sessions are running.';
      return;
    }
    none.textContent = 'No messages yet.';
    const members = [...team.terminals.values()].filter((t) => t.session_name === session);
    receivers = new Set(members.map((t) => t.id));
    pending = [];
    try {
      const [history, ...inboxes] = await Promise.all([
        api.get(withQuery('/events/history', { session, limit: HISTORY })),
        ...[...receivers].map((id) => api.get(
          withQuery(`/terminals/${enc(id)}/inbox/messages`, { limit: 1000 }))),
      ]);
      if (left || mine !== loads) return;
      for (const event of history) if (event.terminal) team.remember(event.terminal);
      for (const rowsOf of inboxes) for (const message of rowsOf) upsert(message);
      for (const event of history) take(event);
    } catch (error) {
      problem(note, error);
    }
    const waiting = pending || [];
    pending = null;
    for (const event of waiting) take(event);
    none.hidden = rows.size > 0;
  }

  function take(event) {
    if (typeof event.seq === 'number') {
      if (event.seq <= lastSeq) return;
      lastSeq = event.seq;
    }
    if (event.event === 'terminal_created') {
      receivers.add(event.terminal.id);
      team.remember(event.terminal);
    }
    if (event.event === 'message') upsert(event.message, event.reason);
    const entry = describe(event);
    if (entry) timeline.append(entry);
  }

  function upsert(message, reason) {
    let row = rows.get(message.id);
    const known = row ? row.message : null;
    // An older state must not overwrite a newer one (a listing and an event may cross).
    if (known && stamp(known) > stamp(message)) return;
    if (!row) {
      const cells = {
        state: h('td', {}), reason: h('td', { class: 'reason' }), updated: h('td', { class: 'time' }),
        actions: h('td', { class: 'actions' }), from: h('td', {}), to: h('td', {}),
      };
      const tr = h('tr', { dataset: { messageId: message.id } },
        h('td', { class: 'num' }, `#${message.id}`), cells.from, cells.to, cells.state, cells.reason,
        cells.updated, h('td', {}, bodyCell(message.message)), cells.actions);
      row = { tr, cells, message };
      rows.set(message.id, row);
      const after = [...rows.keys()].filter((id) => id > message.id).sort((a, b) => a - b)[0];
      body.insertBefore(tr, after === undefined ? null : rows.get(after).tr);
      none.hidden = true;
    }
    row.message = message;
    const state = message.status;
    row.tr.dataset.state = state;
    row.cells.from.textContent = team.label(message.sender_id);
    row.cells.to.textContent = team.label(message.receiver_id);
    fill(row.cells.state, h('span', { class: `badge state-${state}` }, state));
    row.cells.reason.textContent = visible(reason || message.last_error || '');
    row.cells.updated.textContent = clock(message.updated_at || message.created_at);
    fill(row.cells.actions,
      RETRYABLE.has(state)
        ? h('button', { type: 'button', onclick: () => act(message.id, 'retry') }, 'Retry') : null,
      CANCELLABLE.has(state)
        ? h('button', { type: 'button', class: 'danger', onclick: () => act(message.id, 'cancel') }, 'Cancel')
        : null);
  }

  async function act(id, verb) {
    note.textContent = '';
    try {
      upsert(await api.post(`/messages/${enc(id)}/${verb}`));
    } catch (error) {
      problem(note, error);
    }
  }

  const stop = team.watch((change) => {
    if (change.kind === 'reset') load();
    else if (change.kind === 'added' || change.kind === 'removed') sessionOptions();
    else if (change.kind === 'event' && session && belongs(change.event)) {
      if (pending) pending.push(change.event);
      else take(change.event);
    }
  });
  load();
  return () => {
    left = true;
    stop();
  };
}

/** A message body: its first line, the whole text on request (bodies reach a megabyte). */
function bodyCell(body) {
  const lines = String(body ?? '').split('\n').length;
  const more = lines > 1 ? ` (${lines} lines)` : '';
  const details = h('details', { class: 'message' },
    h('summary', {}, visible(firstLine(body, 120)), h('span', { class: 'dim' }, more)));
  details.addEventListener('toggle', () => {
    if (details.open && !details.querySelector('.body')) {
      details.append(h('div', { class: 'body' }, visible(body)));
    }
  });
  return details;
}

function stamp(message) {
  return Date.parse(message.updated_at || message.created_at || 0) || 0;
}

function describe(event) {
  const label = team.label.bind(team);
  let text;
  let kind = event.event;
  switch (event.event) {
    case 'terminal_created': {
      const t = event.terminal;
      text = `${t.agent_profile} ${t.id} started${t.caller_id ? ` by ${label(t.caller_id)}` : ''}`;
      break;
    }
    case 'terminal_removed':
      text = `${event.terminal.agent_profile} ${event.terminal.id} removed`;
      break;
    case 'status':
      text = `${label(event.terminal_id)} is ${event.status.replaceAll('_', ' ')}`;
      if (event.evidence) text += ` \u2014 ${event.evidence}`;
      break;
    case 'message': {
      const m = event.message;
      const why = event.reason ? `: ${event.reason}` : '';
      text = `message #${m.id} ${label(m.sender_id)} \u2192 ${label(m.receiver_id)} ${m.status}${why}`
        + ` \u2014 ${firstLine(m.message, 80)}`;
      kind = `message-${m.status}`;
      break;
    }
    case 'handoff_started':
    case 'assign_started': {
      const verb = event.event === 'handoff_started' ? 'handed off to' : 'assigned';
      text = `${label(event.caller_id)} ${verb} ${event.agent_profile} ${event.worker_id}`;
      break;
    }
    case 'handoff_finished': {
      const how = event.success === false ? 'failed' : 'came back';
      text = `handoff to ${event.agent_profile} ${event.worker_id} ${how} after ${duration(event.duration)}`;
      break;
    }
    case 'assign_finished': {
      // An assign returns once its worker has the task; the worker goes on.
      const how = event.success === false ? 'failed after' : 'handed over in';
      text = `assign to ${event.agent_profile} ${event.worker_id} ${how} ${duration(event.duration)}`;
      break;
    }
    case 'activity': {
      // A plugin's work (a flow's run, a workflow's step): its own one-line summary, else kind and state.
      const data = event.data || {};
      text = typeof data.summary === 'string' && data.summary
        ? data.summary : `${event.kind}${data.state ? ` ${data.state}` : ''}`;
      kind = `activity-${String(event.kind).replaceAll('.', '-')}`;
      break;
    }
    default:
      return null;
  }
  const at = event.at ?? event.since;
  return h('li', { class: `event event-${kind}` },
    h('time', {}, clock(at)), ' ', h('span', {}, visible(text)));
}
