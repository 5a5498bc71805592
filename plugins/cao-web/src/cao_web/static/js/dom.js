// Building the page's DOM. Every piece of data reaches the page as a text node or an attribute value,
// never as markup: agent output and message bodies may hold "<script>" or terminal escape sequences.

/** An element: h('button', {class: 'x', onclick: fn}, 'text', child, [more]). */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'value' || key === 'checked' || key === 'selected') el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace everything in `el` with `children`. */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Control characters as their visible pictures (ESC as ␛), so an escape sequence reads as text. */
export function visible(text) {
  return String(text ?? '').replace(/[\x00-\x08\x0b-\x1f\x7f]/g,
    (c) => (c === '\x7f' ? '\u2421' : String.fromCharCode(0x2400 + c.charCodeAt(0))));
}

/** A time from the API (seconds since the epoch, or an ISO 8601 string) in milliseconds, or null. */
export function toMs(value) {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number') return value * 1000;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? null : parsed;
}

/** "12 s", "3 min", "2 h", "4 d". */
export function span(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

/** "14:03:27" in the viewer's time zone. */
export function clock(value) {
  const at = toMs(value);
  return at === null ? '' : new Date(at).toLocaleTimeString([], { hour12: false });
}

/** Seconds as "3.2 s" / "1 min". */
export function duration(seconds) {
  if (typeof seconds !== 'number') return '';
  return seconds < 60 ? `${seconds.toFixed(1)} s` : span(seconds * 1000);
}

export function firstLine(text, width = 100) {
  const line = String(text ?? '').trim().split('\n')[0] ?? '';
  return line.length > width ? `${line.slice(0, width - 1)}\u2026` : line;
}
