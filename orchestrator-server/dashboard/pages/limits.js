// Flow limits: every concurrency key (limit, held, pending) and every rate
// limit (limit, period, claims in the current window, pending), with forms
// to set a limit and a button to remove one. Re-read every 5 seconds.

import * as api from '../api.js';
import { h, fill, keep, errorBox, empty, section } from '../dom.js';

const enc = encodeURIComponent;

/** PUT or DELETE a limit, then redraw; errors and results go to `notice`. */
async function change(notice, done, method, path, body, text) {
  fill(notice);
  try {
    await api.request(method, path, body);
    fill(notice, h('p', { class: 'ok', role: 'status' }, text));
    await done();
  } catch (e) {
    fill(notice, errorBox(e));
  }
}

function table(headers, rows) {
  return h('table', { class: 'list' },
    h('thead', {}, h('tr', {}, headers.map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, rows));
}

function removeButton(label, onclick) {
  return h('button', { type: 'button', class: 'quiet', dataset: { act: 'delete' }, onclick }, label);
}

function concurrencyTable(keys, notice, load) {
  if (!keys.length) return empty('No concurrency keys yet. Tasks name one with concurrency_key; a key without a limit holds one task at a time.');
  return table(['Key', 'Limit', 'Held', 'Pending', ''], keys.map((k) => h('tr', { dataset: { key: k.key } },
    h('td', {}, h('code', {}, k.key)),
    h('td', {}, String(k.limit)),
    h('td', {}, k.held >= k.limit ? h('strong', {}, `${k.held} (full)`) : String(k.held)),
    h('td', {}, String(k.pending)),
    h('td', {}, removeButton('Remove limit', () => change(notice, load, 'DELETE', `/concurrency-limits/${enc(k.key)}`, undefined, `${k.key}: back to limit 1.`))))));
}

function rateTable(limits, notice, load) {
  if (!limits.length) return empty('No rate limits yet.');
  return table(['Key', 'Limit', 'Window', 'Used in window', 'Pending', ''], limits.map((r) => h('tr', { dataset: { key: r.key } },
    h('td', {}, h('code', {}, r.key)),
    h('td', {}, String(r.limit)),
    h('td', {}, `${r.period_seconds}s`),
    h('td', {}, `${r.claimed_in_window} of ${r.limit}`),
    h('td', {}, String(r.pending)),
    h('td', {}, removeButton('Delete', () => change(notice, load, 'DELETE', `/rate-limits/${enc(r.key)}`, undefined, `${r.key}: rate limit deleted.`))))));
}

function field(id, label, attrs) {
  const input = h('input', { id, ...attrs });
  return [h('label', { for: id }, label), input];
}

function concurrencyForm(notice, load) {
  const [keyLabel, key] = field('concurrency-key', 'Key', { type: 'text', required: true, maxlength: 200 });
  const [limitLabel, limit] = field('concurrency-limit', 'Limit', { type: 'number', required: true, min: 1, max: 100000, value: 1 });
  return h('form', { class: 'toolbar wrap', onsubmit: (e) => {
    e.preventDefault();
    change(notice, load, 'PUT', `/concurrency-limits/${enc(key.value)}`, { limit: Number(limit.value) }, `${key.value}: at most ${limit.value} held.`);
  } }, keyLabel, key, limitLabel, limit, h('button', { type: 'submit' }, 'Set concurrency limit'));
}

function rateForm(notice, load) {
  const [keyLabel, key] = field('rate-key', 'Key', { type: 'text', required: true, maxlength: 200 });
  const [limitLabel, limit] = field('rate-limit', 'Claims per window', { type: 'number', required: true, min: 1, max: 1000000, value: 60 });
  const [periodLabel, period] = field('rate-period', 'Window (seconds)', { type: 'number', required: true, min: 1, max: 86400, value: 60 });
  return h('form', { class: 'toolbar wrap', onsubmit: (e) => {
    e.preventDefault();
    change(notice, load, 'PUT', `/rate-limits/${enc(key.value)}`, { limit: Number(limit.value), period_seconds: Number(period.value) },
      `${key.value}: at most ${limit.value} claims per ${period.value}s.`);
  } }, keyLabel, key, limitLabel, limit, periodLabel, period, h('button', { type: 'submit' }, 'Set rate limit'));
}

export function limitsPage(main, { setTitle }) {
  setTitle('Limits');
  const notice = h('div', { 'aria-live': 'polite' });
  const concurrency = h('div', { id: 'concurrency-limits' }, h('p', { class: 'muted' }, 'Loading…'));
  const rate = h('div', { id: 'rate-limits' }, h('p', { class: 'muted' }, 'Loading…'));
  const load = api.serial(async () => {
    try {
      const [{ data: keys }, { data: limits }] = await Promise.all([
        api.get('/concurrency-limits?per_page=100'), api.get('/rate-limits?per_page=100')]);
      keep(concurrency, JSON.stringify(keys), () => concurrencyTable(keys, notice, load));
      keep(rate, JSON.stringify(limits), () => rateTable(limits, notice, load));
    } catch (e) {
      if (!e.aborted) {
        delete concurrency.dataset.key;
        fill(concurrency, errorBox(e));
      }
    }
  });
  fill(main, h('h1', {}, 'Limits'),
    h('p', { class: 'muted' }, 'A task over its key\'s concurrency limit or rate window stays pending and is claimed when a slot frees or the window moves.'),
    notice,
    section('Concurrency keys', concurrency, concurrencyForm(notice, load)),
    section('Rate limits', rate, rateForm(notice, load)));
  load();
  const timer = setInterval(load, 5000);
  return () => clearInterval(timer);
}
