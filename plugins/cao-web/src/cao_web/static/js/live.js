// The server's events, pushed: one EventSource on /events for the whole page (the page never polls).
//
// Each (re)connection starts with a `subscribed` event: listeners take it as "what you hold may be
// stale, read the state again" (the server also ends a stream with `overflow` when this page read too
// slowly; the browser then reconnects by itself and the next `subscribed` says so). A stream the browser
// gives up on (a non-200 answer) is opened again after a growing pause, unless the server says the
// session is gone (401), which the app shows.

import { api, ApiError } from './api.js';

const listeners = new Set();
const stateListeners = new Set();
let source = null;
let retryTimer = null;
let retryDelay = 1000;
let state = 'idle';

export function connectionState() {
  return state;
}

/** Call `listener(event)` for every event; returns the function that stops it. */
export function listen(listener) {
  listeners.add(listener);
  open();
  return () => listeners.delete(listener);
}

/** Call `listener(state)` when the connection changes: 'connecting', 'live', 'lost'. */
export function watchConnection(listener) {
  stateListeners.add(listener);
  listener(state);
  return () => stateListeners.delete(listener);
}

/** Close the stream for good (the session ended). */
export function stop() {
  clearTimeout(retryTimer);
  retryTimer = null;
  if (source) source.close();
  source = null;
  setState('lost');
}

function setState(next) {
  if (next === state) return;
  state = next;
  for (const listener of stateListeners) listener(state);
}

function open() {
  if (source || retryTimer) return;
  setState('connecting');
  source = new EventSource('/events');
  source.onmessage = (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    if (event.event === 'subscribed') {
      retryDelay = 1000;
      setState('live');
    }
    for (const listener of [...listeners]) listener(event);
  };
  source.onerror = () => {
    if (source && source.readyState === EventSource.CLOSED) {
      source = null;
      setState('lost');
      giveUpOrRetry();
    } else {
      setState('connecting');
    }
  };
}

async function giveUpOrRetry() {
  // An EventSource does not say why it failed: one request tells a lost session from a lost server.
  try {
    await api.get('/sessions');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return;
  }
  retryTimer = setTimeout(() => {
    retryTimer = null;
    if (listeners.size) open();
  }, retryDelay);
  retryDelay = Math.min(retryDelay * 2, 30000);
}
