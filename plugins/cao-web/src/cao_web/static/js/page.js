// What every page shares: how a failed call is told to the person.

import { ApiError } from './api.js';

/** Show `error` in `el` (a role="alert" element); a 401 is left to the login page. */
// Runs a button's action; its failure is shown in `note` (cleared first), never thrown.
export async function attempt(note, action) {
  note.textContent = '';
  try {
    await action();
  } catch (error) {
    problem(note, error);
  }
}

export function problem(el, error) {
  if (error instanceof ApiError && error.status === 401) return;
  const status = error instanceof ApiError ? ` (${error.status})` : '';
  el.textContent = `${error.message || error}${status}`;
}
