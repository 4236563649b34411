// The task list: every task of the tenant, newest first, narrowed by state,
// workflow or "delayed" (pending with a run_at still ahead: GET /tasks
// ?delayed=true), with the filters and page in the URL. Rows can be selected
// to cancel or retry many tasks at once (a bulk action). Re-reads on task
// events.

import * as api from '../api.js';
import { followEvents } from '../shared.js';
import { fleet, agentName } from '../names.js';
import { bulkSelect } from './bulk.js';
import { pager } from './rail.js';
import { h, fill, keep, link, when, badge, errorBox, empty, shortId } from '../dom.js';

const STATES = ['pending', 'claimed', 'in_progress', 'output_pending_assessment', 'escalated', 'completed', 'failed', 'cancelled'];

export function tasksPage(main, { query, navigate, setTitle }) {
  setTitle('Tasks');
  const state = {
    state: query.get('state') || '',
    workflow_id: query.get('workflow_id') || '',
    delayed: query.get('delayed') === 'true',
    page: Number(query.get('page') || 1),
  };
  const go = (changes) => {
    const next = { ...state, ...changes };
    navigate(`/ui/tasks${api.query({ state: next.state, workflow_id: next.workflow_id, delayed: next.delayed ? 'true' : '', page: next.page > 1 ? next.page : '' })}`);
  };
  const stateSelect = h('select', { id: 'tasks-state', 'aria-label': 'State', onchange: (e) => go({ state: e.target.value, page: 1 }) },
    h('option', { value: '' }, 'State: any'),
    STATES.map((s) => h('option', { value: s, selected: s === state.state }, `State: ${s.replaceAll('_', ' ')}`)));
  const delayed = h('label', { class: 'check', title: 'Pending tasks whose run_at is still ahead: not claimable yet' },
    h('input', { type: 'checkbox', id: 'tasks-delayed', checked: state.delayed, onchange: (e) => go({ delayed: e.target.checked, page: 1 }) }), ' Delayed only');
  const workflow = state.workflow_id
    ? h('span', { class: 'muted' }, 'Workflow ', link(`/ui/workflows/${state.workflow_id}`, shortId(state.workflow_id)), ' ',
      h('button', { type: 'button', class: 'quiet', onclick: () => go({ workflow_id: '', page: 1 }) }, 'any workflow'))
    : null;
  const list = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading tasks…'));
  const bulk = bulkSelect({ target: 'tasks', noun: 'task', actions: [['cancel', 'Cancel'], ['retry', 'Retry']], done: () => load() });
  fill(main, h('div', { class: 'heading' }, h('h1', {}, 'Tasks')),
    h('div', { class: 'toolbar' }, stateSelect, delayed, workflow), bulk.bar, list);

  const load = api.serial(async () => {
    // The list as a bulk-action filter pins the tasks created up to this
    // read, so "all matching" takes in no task the list has not counted.
    const loadedAt = new Date().toISOString();
    try {
      const [answer, names] = await Promise.all([
        api.get(`/tasks${api.query({ state: state.state, workflow_id: state.workflow_id, delayed: state.delayed ? 'true' : '', page: state.page, per_page: 20 })}`),
        fleet(),
      ]);
      const shown = answer.data.map((t) => [t.id, t.assigned_agent_id && names.agents.has(t.assigned_agent_id)]);
      bulk.matching(bulkFilter(state, loadedAt), answer.meta.total);
      keep(list, JSON.stringify([answer, shown]), () => [table(answer.data, names, bulk, state.delayed), pager(answer.meta, (page) => go({ page }))]);
    } catch (e) {
      if (!e.aborted) { delete list.dataset.key; fill(list, errorBox(e)); }
    }
  });
  load();
  let timer = null;
  const stop = followEvents({ entity_type: 'task' }, () => {
    clearTimeout(timer);
    timer = setTimeout(load, 400);
  });
  return () => { stop(); bulk.stop(); clearTimeout(timer); };
}

/**
 * The list's filters as a bulk-action filter (run control §8), or null for
 * "delayed only", which that filter cannot say.
 */
function bulkFilter(state, createdBefore) {
  if (state.delayed) return null;
  const filter = { created_before: createdBefore };
  if (state.state) filter.state = state.state;
  if (state.workflow_id) filter.workflow_id = state.workflow_id;
  return filter;
}

function table(tasks, names, bulk, delayedOnly) {
  if (!tasks.length) {
    return empty(delayedOnly ? 'No delayed tasks: nothing waits for a later run_at.' : 'No tasks match. Try another state or filter.');
  }
  return h('table', { class: 'list', id: 'task-list' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'pick' }, bulk.all(tasks.map((t) => t.id))),
      ['Task', 'State', 'Workflow', 'Agent', 'Attempt', 'Runs at', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, tasks.map((t) => h('tr', { dataset: { id: t.id } },
      h('td', { class: 'pick' }, bulk.one(t.id)),
      h('td', {}, link(`/ui/tasks/${t.id}`, t.title)),
      h('td', {}, badge(t.state), t.state === 'pending' && t.run_at && new Date(t.run_at) > new Date() ? h('span', { class: 'badge s-paused delayed' }, 'delayed') : null),
      h('td', {}, t.workflow_id ? link(`/ui/workflows/${t.workflow_id}`, shortId(t.workflow_id)) : '—'),
      h('td', {}, agentName(names, t.assigned_agent_id)),
      h('td', {}, String(t.attempt)),
      h('td', {}, t.run_at ? when(t.run_at) : h('span', { class: 'muted' }, 'now')),
      h('td', {}, when(t.created_at))))));
}
