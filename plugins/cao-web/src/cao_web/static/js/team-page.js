// Team: every session as a tree of its terminals (a worker under the terminal that started it), each with
// its status, the evidence for it, since when, and what it waits for, with the prompt it waits on and
// its options to answer it. Rows are patched in place as events arrive, so a focused button keeps its
// focus and text typed into a prompt's field stays.

import { stopSession, stopTerminal } from './actions.js';
import { api, withQuery } from './api.js';
import { duration, fill, h, span, toMs, visible } from './dom.js';
import { attempt } from './page.js';
import { promptView } from './prompt.js';
import { team } from './team.js';

const TICK_MS = 5000;
// Flow and workflow runs shown, newest first (each with the latest thing its plugin reported).
const MAX_RUNS = 20;

export function mount(root) {
  document.title = 'Team · cao console';
  const list = h('div', { class: 'sessions' });
  const note = h('p', { class: 'note', role: 'alert' });
  const runs = h('ul', { class: 'runs', 'aria-label': 'flow and workflow runs' });
  const runsPanel = h('section', { class: 'runs-panel', hidden: true, 'aria-labelledby': 'runs-title' },
    h('h2', { id: 'runs-title' }, 'Runs'), runs);
  root.append(h('h1', {}, 'Team'), note, runsPanel, list);
  const runRows = new Map(); // "<area>:<run id>" -> its row
  const rows = new Map(); // terminal id -> {li, parts}
  const sections = new Map(); // session name -> {section, tree}
  let firstPaint = true;

  function rebuild() {
    rows.clear();
    sections.clear();
    fill(list);
    for (const session of team.sessions.values()) sectionFor(session.name);
    for (const session of team.sessions.values()) {
      const { roots, children } = team.tree(session.name);
      const add = (t, into) => {
        const row = rowFor(t);
        into.append(row.li);
        for (const child of children.get(t.id) || []) add(child, row.children);
      };
      for (const t of roots) add(t, sections.get(session.name).tree);
    }
    empty();
    if (firstPaint && team.loaded) {
      firstPaint = false;
      // What the benchmark reads: when the whole tree was first on screen.
      performance.mark('cao-team-rendered', { detail: { terminals: rows.size } });
    }
  }

  function empty() {
    const none = list.querySelector(':scope > .empty');
    if (team.sessions.size === 0 && !none) {
      list.append(h('p', { class: 'empty' }, 'No sessions are running. Start one on the ',
        h('a', { href: '#/launch' }, 'Launch'), ' page.'));
    } else if (team.sessions.size && none) {
      none.remove();
    }
  }

  function sectionFor(name) {
    if (sections.has(name)) return sections.get(name);
    const session = team.sessions.get(name) || { name };
    const tree = h('ul', { class: 'tree', 'aria-label': `terminals of ${name}` });
    const where = session.working_directory;
    const section = h('section',
      { class: 'session', dataset: { session: name }, 'aria-label': `session ${name}` },
      h('header', { class: 'session-head' },
        h('h2', {}, name),
        // A warm worker's own session (cao_hookspecs.names.POOL_SESSION_PREFIX) until a delegation takes it.
        name.startsWith('cao-pool-')
          ? h('span', { class: 'badge pool', title: 'a warm worker, started ahead for a handoff or assign' },
            'warm pool')
          : null,
        where ? h('span', { class: 'dim', title: `working directory: ${where}` }, shortPath(where)) : null,
        h('span', { class: 'spacer' }),
        h('a', { class: 'button', href: `#/messages/${encodeURIComponent(name)}` }, 'Messages'),
        h('button', { type: 'button', class: 'danger', onclick: () => act(() => stopSession(name)) },
          'Stop session')),
      tree);
    list.append(section);
    const entry = { section, tree };
    sections.set(name, entry);
    return entry;
  }

  function rowFor(t) {
    const parts = {
      badge: h('span', { class: 'badge' }),
      since: h('span', { class: 'since' }),
      delegation: h('span', { class: 'delegation' }),
      waits: h('span', { class: 'waits' }),
      evidence: h('span', { class: 'evidence' }),
    };
    const children = h('ul', { class: 'tree' });
    const prompt = promptView(t.id);
    const li = h('li', { class: 'terminal', dataset: { terminalId: t.id } },
      h('div', { class: 'row' },
        parts.badge,
        h('span', { class: 'info' },
          h('span', { class: 'who' },
            h('strong', {}, t.agent_profile || '(no profile)'),
            h('span', { class: 'dim' }, ` ${t.provider} \u00b7 ${t.name} \u00b7 ${t.id}`)),
          parts.since,
          parts.delegation,
          parts.waits),
        h('a', { class: 'button', href: `#/terminal/${encodeURIComponent(t.id)}`,
          'aria-label': `Open the terminal of ${t.agent_profile} ${t.id}` }, 'Terminal'),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Stop ${t.agent_profile} ${t.id}`,
          onclick: () => act(() => stopTerminal(t.id)) }, 'Stop')),
      h('div', { class: 'detail' }, parts.evidence, prompt.el),
      children);
    const row = { li, parts, children, prompt };
    rows.set(t.id, row);
    update(t, row);
    return row;
  }

  function update(t, row = rows.get(t.id)) {
    if (!row) return;
    const { parts } = row;
    const status = t.status || 'unknown';
    row.li.dataset.status = status;
    parts.badge.className = `badge status-${status}`;
    parts.badge.textContent = status.replaceAll('_', ' ');
    const since = toMs(t.since);
    parts.since.textContent = since === null ? '' : `for ${span(Date.now() - since)}`;
    // Evidence quotes the agent's screen: its control characters are shown, not obeyed.
    parts.evidence.textContent = visible(t.evidence || '');
    parts.evidence.title = parts.evidence.textContent;
    const d = t.delegation;
    if (d && d.caller_id) {
      const how = d.kind === 'handoff' ? 'handed off by' : 'assigned by';
      let text = `${how} ${team.label(d.caller_id)}`;
      // An assign's duration is only the hand-over; a handoff's is the worker's whole task.
      if (d.kind === 'handoff' && d.duration !== undefined) {
        text += `, ${d.success === false ? 'failed' : 'came back'} after ${duration(d.duration)}`;
      }
      parts.delegation.textContent = text;
    } else {
      parts.delegation.textContent = '';
    }
    row.prompt.update(t);
    const waits = team.waits(t);
    fill(parts.waits, waits.length ? 'waiting: ' : '',
      waits.map((w, i) => [i ? ' \u00b7 ' : '', h('span', { class: `wait wait-${w.kind}` },
        w.since ? `${w.text} (${span(Date.now() - toMs(w.since))})` : w.text)]));
  }

  function place(t) {
    sectionFor(t.session_name);
    const row = rowFor(t);
    const parent = t.caller_id && t.caller_id !== t.id ? rows.get(t.caller_id) : null;
    (parent ? parent.children : sections.get(t.session_name).tree).append(row.li);
    // Workers whose caller was not known yet move under it.
    for (const [id, other] of rows) {
      const record = team.terminals.get(id);
      if (record && record.caller_id === t.id && other.li.parentElement !== row.children) {
        row.children.append(other.li);
      }
    }
    // A caller waiting on it can now name it.
    for (const other of team.terminals.values()) if (other.handoffs.has(t.id)) update(other);
    empty();
  }

  function remove(t) {
    const row = rows.get(t.id);
    if (!row) return;
    rows.delete(t.id);
    // Its workers stay, one level up.
    for (const child of [...row.children.children]) row.li.parentElement.append(child);
    row.li.remove();
    if (!team.sessions.has(t.session_name)) {
      const entry = sections.get(t.session_name);
      if (entry) entry.section.remove();
      sections.delete(t.session_name);
    }
    empty();
  }

  const act = (action) => attempt(note, action);

  // A plugin's run (cao-flows, cao-workflows): one row per run, its latest report; steps update it.
  function showRun(event) {
    const data = event.data || {};
    if (data.run_id === undefined || data.run_id === null) return;
    const area = String(event.kind).split('.')[0];
    const key = `${area}:${data.run_id}`;
    let li = runRows.get(key);
    // The history read and the live stream may cross: an older report never overwrites a newer one.
    if (li && typeof event.seq === 'number' && event.seq <= Number(li.dataset.seq)) return;
    if (!li) {
      li = h('li', { class: 'run', dataset: { run: key } });
      runRows.set(key, li);
    }
    li.dataset.seq = String(event.seq ?? -1);
    runs.prepend(li);
    li.dataset.state = String(data.state || '');
    const name = data.flow || data.name || data.run_id;
    fill(li, h('span', { class: 'badge' }, visible(String(data.state || '?'))), ' ',
      h('strong', {}, visible(`${area} ${name}`)), ' ',
      h('span', { class: 'dim' }, visible(String(data.summary || event.kind))));
    while (runs.children.length > MAX_RUNS) {
      const last = runs.lastElementChild;
      runRows.delete(last.dataset.run);
      last.remove();
    }
    runsPanel.hidden = false;
  }

  (async () => {
    try {
      const history = await api.get(withQuery('/events/history', { limit: 2000 }));
      for (const event of history) if (event.event === 'activity') showRun(event);
    } catch (error) {
      // The live events still bring every run from now on.
    }
  })();

  const stop = team.watch((change) => {
    if (change.kind === 'reset') rebuild();
    else if (change.kind === 'added') place(change.terminal);
    else if (change.kind === 'removed') remove(change.terminal);
    else if (change.kind === 'changed') update(change.terminal);
    else if (change.kind === 'event' && change.event.event === 'activity') showRun(change.event);
  });
  if (team.loaded) rebuild();
  else list.append(h('p', { class: 'dim' }, 'Reading the team\u2026'));
  const ticker = setInterval(() => {
    for (const t of team.terminals.values()) update(t);
  }, TICK_MS);
  return () => {
    stop();
    clearInterval(ticker);
  };
}

// A folder as its last two parts: the whole path is in the tooltip.
function shortPath(path) {
  const parts = path.split('/').filter(Boolean);
  return parts.length > 2 ? `…/${parts.slice(-2).join('/')}` : path;
}
