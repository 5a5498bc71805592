// Launch and stop: start a session from an installed profile (provider, working directory, a first
// message), add a worker to a session, type into a terminal, stop a terminal or a session.

import { stopSession, stopTerminal } from './actions.js';
import { api, enc } from './api.js';
import { fill, h } from './dom.js';
import { attempt, problem } from './page.js';
import { team } from './team.js';

let fieldCount = 0;

/** A labelled control: field('Profile', h('select')) */
function field(label, control, hint) {
  const id = control.id || `field-${++fieldCount}`;
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control,
    hint ? h('span', { class: 'hint' }, hint) : null);
}

/** `fields` without the empty ones: the server's defaults apply to what is not sent. */
function given(fields) {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== ''));
}

function choices(select, items, { blank } = {}) {
  const before = select.value;
  fill(select, blank ? h('option', { value: '' }, blank) : null,
    items.map(([value, text]) => h('option', { value }, text)));
  if ([...select.options].some((o) => o.value === before)) select.value = before;
}

/** A link to a new terminal's page. */
function link(terminal) {
  return h('a', { href: `#/terminal/${enc(terminal.id)}` }, `${terminal.agent_profile} ${terminal.id}`);
}

function form(title, controls, submit, onsubmit) {
  const status = h('p', { class: 'result', role: 'status' });
  const note = h('p', { class: 'note', role: 'alert' });
  const button = h('button', { type: 'submit' }, submit);
  const el = h('form', { class: 'card', 'aria-label': title },
    h('h2', {}, title), controls, h('div', { class: 'actions' }, button), note, status);
  el.addEventListener('submit', async (event) => {
    event.preventDefault();
    note.textContent = '';
    status.textContent = '';
    button.disabled = true;
    try {
      const said = await onsubmit();
      if (said) fill(status, said);
    } catch (error) {
      problem(note, error);
    } finally {
      button.disabled = false;
    }
  });
  return el;
}

export function mount(root) {
  document.title = 'Launch · cao console';
  const note = h('p', { class: 'note', role: 'alert' });

  const start = {
    profile: h('select', { required: true }),
    provider: h('select'),
    workdir: h('input', { type: 'text', placeholder: "the server's current folder", autocomplete: 'off' }),
    name: h('input', { type: 'text', placeholder: 'generated', autocomplete: 'off' }),
    message: h('textarea', { rows: 3 }),
  };
  const worker = {
    session: h('select', { required: true }),
    caller: h('select'),
    profile: h('select', { required: true }),
    provider: h('select'),
  };
  const input = {
    terminal: h('select', { required: true }),
    text: h('textarea', { rows: 2, required: true }),
  };
  const stopping = { terminal: h('select'), session: h('select') };

  const startForm = form('Start a session', [
    field('Profile', start.profile),
    field('Provider', start.provider),
    field('Working directory', start.workdir),
    field('Session name', start.name, "'cao-' is added when missing"),
    field('First message', start.message, 'typed in once the agent is ready'),
  ], 'Start', async () => {
    const created = await api.post('/sessions', given({
      agent_profile: start.profile.value,
      provider: start.provider.value,
      working_directory: start.workdir.value.trim(),
      session_name: start.name.value.trim(),
    }));
    const text = start.message.value;
    if (text.trim()) await api.post(`/terminals/${enc(created.id)}/input`, { message: text });
    start.message.value = '';
    return ['Started ', link(created), ` in ${created.session_name}.`];
  });

  const workerForm = form('Add a worker', [
    field('Session', worker.session),
    field('Started by', worker.caller, 'shown under it in the team tree'),
    field('Profile', worker.profile),
    field('Provider', worker.provider),
  ], 'Add worker', async () => {
    const created = await api.post(`/sessions/${enc(worker.session.value)}/terminals`, given({
      agent_profile: worker.profile.value,
      provider: worker.provider.value,
      caller_id: worker.caller.value,
    }));
    return ['Added ', link(created), '.'];
  });

  const inputForm = form('Send input', [
    field('Terminal', input.terminal),
    field('Text', input.text, 'typed in and submitted with Enter'),
  ], 'Send', async () => {
    await api.post(`/terminals/${enc(input.terminal.value)}/input`, { message: input.text.value });
    input.text.value = '';
    return 'Sent.';
  });

  const stopForm = h('div', { class: 'card' }, h('h2', {}, 'Stop'),
    h('div', { class: 'inline' }, field('Terminal', stopping.terminal),
      h('button', { type: 'button', class: 'danger',
        onclick: () => act(() => stopTerminal(stopping.terminal.value)) }, 'Stop terminal')),
    h('div', { class: 'inline' }, field('Session', stopping.session),
      h('button', { type: 'button', class: 'danger',
        onclick: () => act(() => stopSession(stopping.session.value)) }, 'Stop session')));

  const act = (action) => attempt(note, action);

  root.append(h('h1', {}, 'Launch and stop'), note,
    h('div', { class: 'cards' }, startForm, workerForm, inputForm, stopForm));

  function refreshTeam() {
    const sessions = [...team.sessions.keys()].map((name) => [name, name]);
    const terminals = [...team.terminals.values()].sort((a, b) => a.order - b.order)
      .map((t) => [t.id, `${t.session_name} / ${t.agent_profile} ${t.id}`]);
    choices(worker.session, sessions);
    choices(stopping.session, sessions);
    choices(input.terminal, terminals);
    choices(stopping.terminal, terminals);
    const inSession = [...team.terminals.values()].filter((t) => t.session_name === worker.session.value)
      .map((t) => [t.id, `${t.agent_profile} ${t.id}`]);
    choices(worker.caller, inSession, { blank: 'nobody' });
  }
  worker.session.addEventListener('change', refreshTeam);

  const stop = team.watch((change) => {
    if (change.kind !== 'changed' && change.kind !== 'event') refreshTeam();
  });
  refreshTeam();

  Promise.all([api.get('/agents/profiles'), api.get('/agents/providers')]).then(([profiles, providers]) => {
    const names = profiles.map((p) => [p.name, p.description ? `${p.name} \u2014 ${p.description}` : p.name]);
    choices(start.profile, names);
    choices(worker.profile, names);
    const usable = providers.map((p) => [p.name, p.installed ? p.name : `${p.name} (not installed)`]);
    choices(start.provider, usable, { blank: "the profile's" });
    choices(worker.provider, usable, { blank: "the profile's" });
  }, (error) => problem(note, error));

  return stop;
}
