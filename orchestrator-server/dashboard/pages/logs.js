// Logs: the query filters (kept in the URL), pages of older rows, a live
// tail over /logs/stream that can be paused and resumed, and export links.

import * as api from '../api.js';
import { h, fill, errorBox, empty } from '../dom.js';
import { logRow } from './task.js';

const CHOICES = {
  level: ['debug', 'info', 'warn', 'error'],
  source: ['runtime', 'platform', 'task_container'],
  category: ['llm', 'tool', 'task_lifecycle', 'auth'],
  status: ['started', 'completed', 'failed'],
};
const TEXT = [['search', 'Search text'], ['operation', 'Operation'], ['workflow_id', 'Workflow id'], ['task_id', 'Task id'], ['since', 'Since (10m, 2h, RFC 3339)']];
const TAIL_LIMIT = 500;

export function logsPage(main, { query, navigate, setTitle }) {
  setTitle('Logs');
  const filters = {};
  for (const key of [...Object.keys(CHOICES), ...TEXT.map(([k]) => k)]) filters[key] = query.get(key) || '';
  const tailing = query.get('tail') !== 'off';

  const selects = Object.entries(CHOICES).map(([key, values]) => h('select', { name: key, 'aria-label': key },
    h('option', { value: '' }, `Any ${key}`), values.map((v) => h('option', { value: v, selected: filters[key] === v }, v))));
  const inputs = TEXT.map(([key, label]) => h('input', { type: 'text', name: key, value: filters[key], placeholder: label, 'aria-label': label }));
  const form = h('form', { class: 'toolbar wrap', onsubmit: (e) => {
    e.preventDefault();
    const next = {};
    for (const el of [...selects, ...inputs]) next[el.name] = el.value.trim();
    navigate(`/ui/logs${api.query({ ...next, tail: tailing ? '' : 'off' })}`);
  } }, selects, inputs, h('button', { type: 'submit' }, 'Apply'));

  const filterQuery = api.query(filters);
  const exportLinks = h('span', { class: 'exports' }, 'Export: ',
    h('a', { href: `/api/v1/logs/export${api.query({ ...filters, format: 'csv' })}`, download: true }, 'CSV'), ' · ',
    h('a', { href: `/api/v1/logs/export${api.query({ ...filters, format: 'json' })}`, download: true }, 'JSON'));
  const tailButton = h('button', { type: 'button', id: 'tail-toggle', 'aria-pressed': String(tailing) }, tailing ? 'Pause live tail' : 'Resume live tail');
  const tailState = h('span', { class: 'muted small', id: 'tail-state' }, tailing ? 'connecting…' : 'paused');
  const rows = h('tbody', { id: 'log-rows' });
  const table = h('table', { class: 'list logs' }, h('thead', {}, h('tr', {}, ['Time', 'Level', 'Operation', 'Status', 'Actor', 'Task'].map((t) => h('th', { scope: 'col' }, t)))), rows);
  const status = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading logs…'));
  const more = h('div', {});

  fill(main, h('div', { class: 'heading' }, h('h1', {}, 'Logs'), h('div', { class: 'actions' }, tailButton, tailState, exportLinks)), form, status, table, more);

  const seen = new Set();
  let newest = null;
  function add(row, atTop) {
    if (seen.has(row.id)) return;
    seen.add(row.id);
    if (newest === null || Number(row.id) > Number(newest)) newest = row.id;
    const tr = logRow(row);
    if (atTop) rows.prepend(tr); else rows.append(tr);
    while (rows.children.length > TAIL_LIMIT) rows.lastChild.remove();
  }

  async function page(cursor) {
    try {
      const { data, meta } = await api.get(`/logs${filterQuery}${filterQuery ? '&' : '?'}${api.query({ per_page: 50, detail: 'summary', cursor }).slice(1)}`);
      fill(status, !cursor && !data.length ? empty('No log lines match these filters yet.') : null);
      for (const row of data) add(row, false);
      fill(more, meta.next_cursor ? h('button', { type: 'button', onclick: () => page(meta.next_cursor) }, 'Older lines') : null);
    } catch (e) {
      fill(status, errorBox(e));
    }
  }

  let stop = null;
  function startTail() {
    tailState.textContent = 'connecting…';
    // The stream resumes after the newest row shown, so nothing written
    // while the tail was paused is lost.
    stop = api.follow(`/logs/stream${filterQuery}`, (frame) => {
      if (frame.event !== 'log') return;
      fill(status);
      add(frame.data, true);
    }, { onState: (s) => { tailState.textContent = s === 'live' ? '● live' : 'reconnecting…'; tailState.className = s === 'live' ? 'live small' : 'muted small'; }, from: newest });
  }
  tailButton.addEventListener('click', () => {
    const on = !stop;
    if (on) startTail(); else { stop(); stop = null; tailState.textContent = 'paused'; tailState.className = 'muted small'; }
    tailButton.textContent = on ? 'Pause live tail' : 'Resume live tail';
    tailButton.setAttribute('aria-pressed', String(on));
    history.replaceState(null, '', `/ui/logs${api.query({ ...filters, tail: on ? '' : 'off' })}`);
  });

  page(null).then(() => { if (tailing) startTail(); });
  return () => { if (stop) stop(); };
}
