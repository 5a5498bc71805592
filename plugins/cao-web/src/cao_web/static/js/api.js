// The server's HTTP API, as the logged-in browser calls it: the session cookie goes by itself, and
// every request that changes state echoes the cao_csrf cookie in X-CAO-CSRF (the server refuses it
// otherwise). A 401 anywhere means the session is gone: the app shows how to log in again.

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

let unauthorized = () => {};

/** Call `handler` whenever the server answers 401. */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

export function reportUnauthorized() {
  unauthorized();
}

function csrf() {
  const found = document.cookie.match(/(?:^|;\s*)cao_csrf=([^;]*)/);
  return found ? decodeURIComponent(found[1]) : '';
}

async function request(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-CAO-CSRF'] = csrf();
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 401) {
    unauthorized();
    throw new ApiError(401, 'not logged in');
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!response.ok) {
    const detail = data && typeof data === 'object' && data.detail ? data.detail : response.statusText;
    throw new ApiError(response.status, String(detail));
  }
  return data;
}

/** A path with its query: path('/x', {a: 1, b: null}) is "/x?a=1". */
export function withQuery(path, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== '') query.set(key, String(value));
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

export const enc = encodeURIComponent;

export const api = {
  get: (path) => request('GET', path),
  post: (path, body) => request('POST', path, body),
  del: (path) => request('DELETE', path),
};
