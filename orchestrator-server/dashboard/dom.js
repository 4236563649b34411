// Small DOM helpers: element building, times, states and error boxes. Every
// page builds its markup through `h`, so text is always set as text (never as
// HTML) and nothing needs escaping.

/** Builds an element: h('a', {href: '/x', class: 'y', onclick: fn}, 'text', child). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (value === true) {
      el.setAttribute(key, '');
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** An in-app link (history navigation instead of a page load). */
export function link(href, ...children) {
  return h('a', { href, 'data-link': true }, ...children);
}

const units = [
  ['year', 31536000], ['month', 2592000], ['week', 604800], ['day', 86400],
  ['hour', 3600], ['minute', 60], ['second', 1],
];
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "3 minutes ago", with the exact time on hover; refreshed by `tickTimes`. */
export function when(timestamp) {
  if (!timestamp) return h('span', { class: 'muted' }, '—');
  const el = h('time', { datetime: timestamp, title: exactText(timestamp) });
  el.textContent = relativeText(timestamp);
  return el;
}

const pad = (n) => String(n).padStart(2, '0');

/**
 * The exact local time, to the second and with the zone: "2026-11-26
 * 21:53:51 UTC". Unambiguous in every locale (no month/day order to guess).
 */
export function exactText(timestamp) {
  const d = new Date(timestamp);
  if (Number.isNaN(d.getTime())) return String(timestamp);
  const zone = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${zone ? ` ${zone.value}` : ''}`;
}

/** The exact time, then the relative one: for headings and facts, where a
 * reader should not have to hover to know when. */
export function at(timestamp) {
  if (!timestamp) return h('span', { class: 'muted' }, '—');
  return h('span', { class: 'at' }, h('span', { class: 'exact' }, exactText(timestamp)), ' (', when(timestamp), ')');
}

function relativeText(timestamp) {
  const seconds = (new Date(timestamp).getTime() - Date.now()) / 1000;
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size || unit === 'second') {
      return relative.format(Math.round(seconds / size), unit);
    }
  }
  return '';
}

/** Keeps every relative time on the page current. */
export function tickTimes() {
  for (const el of document.querySelectorAll('time[datetime]')) {
    el.textContent = relativeText(el.getAttribute('datetime'));
  }
}

/** "1m 20s" between two timestamps (or until now). */
export function duration(from, to) {
  if (!from) return '—';
  let s = Math.max(0, Math.round(((to ? new Date(to) : new Date()) - new Date(from)) / 1000));
  const parts = [];
  for (const [label, size] of [['d', 86400], ['h', 3600], ['m', 60]]) {
    if (s >= size) { parts.push(`${Math.floor(s / size)}${label}`); s %= size; }
  }
  if (parts.length < 2) parts.push(`${s}s`);
  return parts.join(' ');
}

/** A coloured state word. */
export function badge(state) {
  return h('span', { class: `badge s-${state}` }, String(state).replaceAll('_', ' '));
}

/** A JSON value, pretty-printed and scrollable. */
export function json(value) {
  if (value === undefined || value === null) return h('p', { class: 'muted' }, 'none');
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}

/** The error envelope's message and recovery hint, or a network failure. */
// The server's hints name its routes; on a page, the button that does it.
const ROUTE_ACTIONS = [
  ['use DELETE /playbooks/:id/permanent to remove it', 'delete it permanently from the command line (orch playbooks delete ID --permanent) to remove it'],
  ['(PATCH /playbooks/:id/archive with archived false)', 'with its Unarchive button in the playbook list'],
];

function browserHint(hint) {
  return ROUTE_ACTIONS.reduce((text, [route, action]) => text.replace(route, action), hint);
}

export function errorBox(error) {
  return h('div', { class: 'error', role: 'alert' },
    h('strong', {}, error.message || String(error)),
    error.code ? h('span', { class: 'code' }, ` (${error.code})`) : null,
    error.hint ? h('p', {}, browserHint(error.hint)) : null,
    error.fields ? h('ul', {}, Object.entries(error.fields).map(([f, msgs]) => h('li', {}, `${f}: ${msgs.join(', ')}`))) : null);
}

/** A muted line for empty lists. */
export function empty(text) {
  return h('p', { class: 'empty' }, text);
}

/**
 * A short id for tables (the full one on hover): the last 8 hex digits.
 * Tasks, workflows and work items have UUIDv7 ids whose first 8 hex digits
 * are a timestamp, the same for everything created within a minute or so;
 * the last ones are random, so they tell ids apart.
 */
export function shortId(id) {
  return h('code', { title: id }, String(id).replace(/-/g, '').slice(-8));
}

/** A labelled section. */
export function section(title, ...children) {
  return h('section', { class: 'card' }, h('h2', {}, title), ...children);
}

/** A definition list from [label, value] pairs. */
export function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/**
 * Redraws `el` only when `key` (e.g. the JSON of the data it shows) changed:
 * a live page re-reads often, and redrawing unchanged parts would drop what
 * the operator is typing, the focus, and elements a click is aimed at.
 */
export function keep(el, key, build) {
  if (el.dataset.key === key) return el;
  el.dataset.key = key;
  return fill(el, build());
}
