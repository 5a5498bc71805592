// The team as the server last told it: sessions, their terminals, and what each waits for. Read once
// from GET /team when the event stream (re)connects, then kept current by the stream's events alone.
//
// Views subscribe with `team.watch(fn)`; fn gets one change at a time:
//   {kind: 'reset'}                              everything was reread
//   {kind: 'added' | 'removed', terminal}        a terminal came or went
//   {kind: 'changed', terminal}                  its status, evidence, waits, delegation or prompt changed
//   {kind: 'event', event}                       any event, after the model applied it

import { api, ApiError, enc, withQuery } from './api.js';
import { listen } from './live.js';

const watchers = new Set();
const sessions = new Map(); // name -> {name, status, working_directory}
const terminals = new Map(); // id -> terminal (see adopt)
const messageStates = new Map(); // message id -> latest state seen in an event
const early = new Map(); // terminal id -> its status event, seen before the terminal itself
const delegations = new Map(); // worker id -> delegation, seen before the worker itself
const profiles = new Map(); // terminal id -> its profile, kept after it is gone (for labels)
// The prompt a terminal waits on is `terminal.prompt` (the server's OpenPrompt record, or null), set by the
// snapshot, the status events and the prompt events; `terminal.promptNews` is the latest thing that
// happened to one of its prompts that a person should read (answered, escalated), kept until the next
// prompt opens.
let buffered = null; // events that arrive while the snapshot is being read
let loaded = false;
let readyWaiters = [];
let generation = 0;

export const team = {
  sessions,
  terminals,
  get loaded() {
    return loaded;
  },

  /** Start following (idempotent); `fn(change)` is called for every change. Returns the stop function. */
  watch(fn) {
    watchers.add(fn);
    start();
    return () => watchers.delete(fn);
  },

  /** Resolves once the first snapshot is in. */
  ready() {
    start();
    return loaded ? Promise.resolve() : new Promise((resolve) => readyWaiters.push(resolve));
  },

  /** The terminals of `session` whose caller is none of them first, each followed by those it started. */
  tree(session) {
    const members = [...terminals.values()].filter((t) => t.session_name === session);
    members.sort((a, b) => a.order - b.order);
    const ids = new Set(members.map((t) => t.id));
    const children = new Map();
    const roots = [];
    for (const t of members) {
      if (t.caller_id && ids.has(t.caller_id) && t.caller_id !== t.id) {
        if (!children.has(t.caller_id)) children.set(t.caller_id, []);
        children.get(t.caller_id).push(t);
      } else {
        roots.push(t);
      }
    }
    return { roots, children };
  },

  /** "data_analyst 1a2b3c4d" for a terminal id, also one that is gone; "user" and others as they are. */
  label(id) {
    const profile = profiles.get(id);
    return profile ? `${profile} ${id}` : String(id ?? '?');
  },

  /** Keep the name of a terminal the page learnt of elsewhere (the history of a session). */
  remember(record) {
    if (record && record.id && record.agent_profile) profiles.set(record.id, record.agent_profile);
  },

  /** What `terminal` waits for, as short phrases. */
  waits(t) {
    const out = [];
    for (const [worker, since] of t.handoffs) {
      out.push({ kind: 'handoff', text: `handoff to ${team.label(worker)}`, since });
    }
    const pending = t.seeded ? t.pending.size : Math.max(t.pendingBase, t.pending.size);
    if (pending) {
      out.push({ kind: 'messages', text: `${pending} message${pending === 1 ? '' : 's'} pending` });
    }
    if (t.status === 'waiting_user_answer') {
      out.push({ kind: 'prompt', text: 'a prompt awaiting an answer', since: t.since });
    }
    return out;
  },
};

let started = false;

function start() {
  if (started) return;
  started = true;
  listen(onEvent);
}

function notify(change) {
  for (const fn of [...watchers]) fn(change);
}

function onEvent(event) {
  if (event.event === 'subscribed') {
    // A new stream: what happened while none was open is unknown, so the state is read again. Events
    // from now on wait until that read is in, then apply on top of it.
    buffered = [];
    resync(++generation);
    return;
  }
  if (buffered) {
    buffered.push(event);
    return;
  }
  apply(event);
}

async function resync(gen) {
  let snapshot;
  try {
    snapshot = await api.get('/team');
  } catch (error) {
    // A 401 shows the login page. Anything else: read again shortly, events waiting meanwhile.
    if (!(error instanceof ApiError && error.status === 401)) {
      setTimeout(() => gen === generation && resync(gen), 2000);
    }
    return;
  }
  if (gen !== generation) return;
  adoptSnapshot(snapshot);
  const waiting = buffered || [];
  buffered = null;
  for (const event of waiting) apply(event, { quiet: true });
  loaded = true;
  for (const resolve of readyWaiters) resolve();
  readyWaiters = [];
  notify({ kind: 'reset' });
  seedPending(gen);
}

function adoptSnapshot(snapshot) {
  // What the previous stream left waiting for a terminal it never announced is older than the snapshot.
  for (const table of [sessions, terminals, messageStates, early, delegations]) table.clear();
  for (const session of snapshot.sessions || []) {
    sessions.set(session.name, {
      name: session.name,
      status: session.status,
      working_directory: session.working_directory,
    });
    for (const entry of session.terminals || []) adopt(entry);
  }
}

let order = 0;

/** A terminal into the model: a record from an event, or a snapshot's entry with its status and waits. */
function adopt(record) {
  const handoffs = (record.waiting_for || []).filter((wait) => wait.kind === 'handoff');
  const t = {
    ...record,
    order: order++,
    evidence: record.evidence ?? '',
    since: record.since ?? null,
    prompt: record.prompt ?? null,
    promptNews: null,
    delegation: record.delegation ?? delegations.get(record.id) ?? null,
    handoffs: new Map(handoffs.map((wait) => [wait.worker_id, wait.since ?? null])),
    pending: new Set(),
    pendingBase: record.pending_messages ?? 0,
    seeded: !record.pending_messages,
  };
  delegations.delete(record.id);
  terminals.set(t.id, t);
  team.remember(t);
  if (!sessions.has(t.session_name)) {
    sessions.set(t.session_name,
      { name: t.session_name, status: '', working_directory: t.working_directory });
  }
  const status = early.get(t.id);
  if (status) {
    early.delete(t.id);
    applyStatus(t, status);
  }
  return t;
}

async function seedPending(gen) {
  // The snapshot counts pending messages; which ones they are is read only for terminals that have
  // some, so that later events can be counted exactly.
  const unseeded = [...terminals.values()].filter((t) => !t.seeded);
  await Promise.all(unseeded.map(async (t) => {
    let rows;
    try {
      const path = `/terminals/${enc(t.id)}/inbox/messages`;
      rows = await api.get(withQuery(path, { status: 'pending', limit: 1000 }));
    } catch {
      return;
    }
    if (gen !== generation || terminals.get(t.id) !== t) return;
    for (const row of rows) if (!messageStates.has(row.id)) t.pending.add(row.id);
    t.seeded = true;
    notify({ kind: 'changed', terminal: t });
  }));
}

function applyStatus(t, event) {
  t.status = event.status;
  t.evidence = event.evidence ?? '';
  t.since = event.since ?? null;
  // A server older than typed prompts sends no `prompt`: what the prompt events said stands.
  if ('prompt' in event) t.prompt = event.prompt ?? null;
}

function applyPrompt(t, event) {
  const open = event.prompt;
  switch (event.kind) {
    case 'opened':
      t.prompt = open;
      t.promptNews = null;
      break;
    case 'closed':
      if (t.prompt && t.prompt.id === open.id) t.prompt = null;
      break;
    case 'answered':
    case 'escalated':
      t.promptNews = event;
      break;
    default:
      // A refusal changes nothing on screen: the one refused is told by its own request.
      return false;
  }
  return true;
}

function apply(event, { quiet = false } = {}) {
  const changes = [];
  const change = applyToModel(event, changes);
  if (change) changes.push(change);
  if (!quiet) {
    for (const each of changes) notify(each);
    notify({ kind: 'event', event });
  }
}

/** Take a terminal out of the model (and its session, when it was the last there). */
function leave(t) {
  terminals.delete(t.id);
  if (![...terminals.values()].some((o) => o.session_name === t.session_name)) {
    sessions.delete(t.session_name);
  }
  return { kind: 'removed', terminal: t };
}

/** Apply one event; returns its change to the terminal it is about, and adds others' to `also`. */
function applyToModel(event, also) {
  switch (event.event) {
    case 'terminal_created': {
      const known = terminals.get(event.terminal.id);
      if (known && known.session_name === event.terminal.session_name) return null;
      // Announced again in another session: a warm worker a delegation took. It leaves its pool.
      if (known) also.push(leave(known));
      return { kind: 'added', terminal: adopt(event.terminal) };
    }
    case 'terminal_removed': {
      const t = terminals.get(event.terminal.id);
      if (!t) return null;
      for (const other of terminals.values()) {
        if (other.handoffs.delete(t.id)) also.push({ kind: 'changed', terminal: other });
      }
      return leave(t);
    }
    case 'status': {
      const t = terminals.get(event.terminal_id);
      if (!t) {
        early.set(event.terminal_id, event);
        return null;
      }
      applyStatus(t, event);
      return { kind: 'changed', terminal: t };
    }
    case 'prompt': {
      const t = terminals.get(event.terminal_id);
      if (!t || !event.prompt) return null;
      return applyPrompt(t, event) ? { kind: 'changed', terminal: t } : null;
    }
    case 'message': {
      const m = event.message;
      messageStates.set(m.id, m.status);
      const t = terminals.get(m.receiver_id);
      if (!t) return null;
      if (m.status === 'pending') t.pending.add(m.id);
      else t.pending.delete(m.id);
      return { kind: 'changed', terminal: t };
    }
    case 'handoff_started':
    case 'assign_started': {
      const kind = event.event.split('_')[0];
      const delegation = { kind, caller_id: event.caller_id, started_at: event.at ?? null };
      const worker = terminals.get(event.worker_id);
      if (worker) worker.delegation = delegation;
      else delegations.set(event.worker_id, delegation);
      const caller = terminals.get(event.caller_id);
      if (kind === 'handoff' && caller) {
        caller.handoffs.set(event.worker_id, event.at ?? null);
        also.push({ kind: 'changed', terminal: caller });
      }
      return worker ? { kind: 'changed', terminal: worker } : null;
    }
    case 'handoff_finished':
    case 'assign_finished': {
      const worker = terminals.get(event.worker_id);
      if (worker && worker.delegation) {
        worker.delegation = { ...worker.delegation, success: event.success, duration: event.duration };
      }
      const caller = terminals.get(event.caller_id);
      if (caller && caller.handoffs.delete(event.worker_id)) also.push({ kind: 'changed', terminal: caller });
      return worker ? { kind: 'changed', terminal: worker } : null;
    }
    default:
      return null;
  }
}
