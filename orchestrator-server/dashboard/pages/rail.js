// The workflow rail: live / recent / history, with filters and pages kept in
// the URL so a view can be bookmarked. Live mode refreshes on workflow events.
// Opened with no mode, it shows the first tab that has something (live,
// else recent, else history). Rows can be selected to cancel, pause or
// resume many workflows at once (a bulk action).

import * as api from '../api.js';
import { followEvents } from '../shared.js';
import { h, fill, keep, link, when, badge, errorBox, empty } from '../dom.js';
import { bulkSelect } from './bulk.js';

const MODES = [['live', 'Live'], ['recent', 'Recent (24 h)'], ['history', 'History']];

export function railPage(main, { query, navigate, setTitle }) {
  setTitle('Workflows');
  // No mode in the address: the rail may move on to a tab that has something.
  const chosen = [...query.keys()].length > 0;
  const state = {
    mode: query.get('mode') || 'live',
    needs_action_only: query.get('needs_action_only') === 'true',
    lifecycle: query.get('lifecycle') || 'all',
    search: query.get('search') || '',
    page: Number(query.get('page') || 1),
    per_page: 20,
  };
  const go = (changes) => {
    const next = { ...state, ...changes };
    navigate(`/ui/workflows${api.query({ mode: next.mode, needs_action_only: next.needs_action_only ? 'true' : '', lifecycle: next.lifecycle === 'all' ? '' : next.lifecycle, search: next.search, page: next.page > 1 ? next.page : '' })}`);
  };

  const tabs = h('div', { class: 'tabs', role: 'tablist' }, MODES.map(([mode, label]) =>
    h('button', { type: 'button', role: 'tab', 'aria-selected': String(state.mode === mode), class: state.mode === mode ? 'tab on' : 'tab', onclick: () => go({ mode, page: 1 }) }, label)));
  const search = h('input', { type: 'search', id: 'rail-search', placeholder: 'Search by name', value: state.search, 'aria-label': 'Search workflows' });
  const lifecycle = h('select', { 'aria-label': 'Lifecycle', onchange: (e) => go({ lifecycle: e.target.value, page: 1 }) },
    ['all', 'planned', 'ongoing'].map((l) => h('option', { value: l, selected: l === state.lifecycle }, `Lifecycle: ${l}`)));
  const needs = h('label', { class: 'check' }, h('input', { type: 'checkbox', id: 'rail-needs', checked: state.needs_action_only, onchange: (e) => go({ needs_action_only: e.target.checked, page: 1 }) }), ' Needs action only');
  const toolbar = h('form', { class: 'toolbar', onsubmit: (e) => { e.preventDefault(); go({ search: search.value.trim(), page: 1 }); } },
    search, lifecycle, needs, h('button', { type: 'submit' }, 'Search'));
  const list = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading workflows…'));
  const bulk = bulkSelect({ target: 'workflows', noun: 'workflow', actions: [['cancel', 'Cancel'], ['pause', 'Pause'], ['resume', 'Resume']], done: () => load() });

  fill(main,
    h('div', { class: 'heading' }, h('h1', {}, 'Workflows'), link('/ui/launch', 'Launch a workflow')),
    tabs, toolbar, bulk.bar, list);

  // One read at a time; a change while one is under way reads once more
  // after it (never dropped, so the rail ends on the latest state).
  let loading = false;
  let again = false;
  async function load() {
    if (loading) { again = true; return; }
    loading = true;
    try {
      const answer = await api.get(`/operations/workflows/rail${api.query({ mode: state.mode, needs_action_only: state.needs_action_only ? 'true' : '', lifecycle: state.lifecycle, search: state.search, page: state.page, per_page: state.per_page })}`);
      if (!chosen && !answer.data.length && state.mode === 'live') {
        // Nothing live: open on the first tab that has something instead
        // (recent, else history); with nothing anywhere, stay on live.
        const other = await firstWithSomething();
        if (other) { navigate(`/ui/workflows${api.query({ mode: other })}`, { replace: true }); return; }
      }
      // Redrawn only when the answer changed: a live rail re-reads on events.
      keep(list, JSON.stringify(answer), () => [table(answer.data, bulk), pager(answer.meta, (page) => go({ page }))]);
    } catch (e) {
      if (!e.aborted) { delete list.dataset.key; fill(list, errorBox(e)); }
    } finally {
      loading = false;
      if (again) { again = false; load(); }
    }
  }
  load();
  // Live mode follows workflow and task changes; a burst refreshes once.
  if (state.mode !== 'live') return bulk.stop;
  let timer = null;
  const stop = followEvents({}, () => {
    clearTimeout(timer);
    timer = setTimeout(load, 400);
  });
  return () => { stop(); bulk.stop(); clearTimeout(timer); };
}

/** The first of recent and history that lists a workflow, or null. */
async function firstWithSomething() {
  for (const [mode] of MODES.slice(1)) {
    const { data } = await api.get(`/operations/workflows/rail${api.query({ mode, page: 1, per_page: 1 })}`);
    if (data.length) return mode;
  }
  return null;
}

function table(items, bulk) {
  if (!items.length) return empty('No workflows here yet. Launch one, or try another mode or filter.');
  return h('table', { class: 'list', id: 'rail' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'pick' }, bulk.all(items.map((w) => w.id))),
      ['Workflow', 'State', 'Playbook', 'Workspace', 'Tasks', 'Updated'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, items.map((w) => h('tr', { dataset: { id: w.id } },
      h('td', { class: 'pick' }, bulk.one(w.id)),
      h('td', {}, link(`/ui/workflows/${w.id}`, w.name), w.needs_action ? h('span', { class: 'badge s-escalated', title: 'A task is escalated, failed or awaiting assessment' }, 'needs action') : null),
      h('td', {}, badge(w.state)),
      h('td', {}, w.playbook_name || '—'),
      h('td', {}, w.workspace_name || '—'),
      h('td', {}, progress(w.task_counts)),
      h('td', {}, when(w.updated_at))))));
}

/** A bar of finished tasks over all tasks, with the counts on hover. */
export function progress(counts) {
  const total = Object.values(counts || {}).reduce((a, b) => a + b, 0);
  const done = (counts.completed || 0);
  const detail = Object.entries(counts || {}).filter(([, n]) => n > 0).map(([s, n]) => `${s.replaceAll('_', ' ')}: ${n}`).join(', ') || 'no tasks';
  return h('span', { class: 'progress', title: detail },
    h('meter', { min: 0, max: Math.max(total, 1), value: done }),
    ` ${done}/${total}`);
}

/** Previous / next with "page x of y". */
export function pager(meta, goTo) {
  if (!meta || !meta.pages || meta.pages <= 1) return meta ? h('p', { class: 'muted small' }, `${meta.total} in all`) : null;
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('button', { type: 'button', disabled: meta.page <= 1, onclick: () => goTo(meta.page - 1) }, '← Previous'),
    h('span', {}, `Page ${meta.page} of ${meta.pages} · ${meta.total} in all`),
    h('button', { type: 'button', disabled: meta.page >= meta.pages, onclick: () => goTo(meta.page + 1) }, 'Next →'));
}
