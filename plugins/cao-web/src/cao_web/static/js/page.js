// What every page shares: how a failed call is told to the person.

import { ApiError } from './api.js';

/** Show `error` in `el` (a role="alert" element); a 401 is left to the login page. */
export function problem(el, error) {
  if (error instanceof ApiError && error.status === 401) return;
  const status = error instanceof ApiError ? ` (${error.status})` : '';
  el.textContent = `${error.message || error}${status}`;
}
