// One task: what it was given (input, context), what it produced (output or
// error, handoffs, git evidence), its logs, and the operator actions its
// state allows. The page follows the task's events and re-reads on change.

import * as api from '../api.js';
import { followEvents } from '../shared.js';
import { h, fill, keep, link, when, badge, errorBox, empty, section, facts, shortId, duration, json } from '../dom.js';

// action → [label, the states it applies in, the text field it needs (or null), field label]
const ACTIONS = [
  ['approve-output', 'Approve output', ['output_pending_assessment'], null],
  ['retry', 'Retry', ['failed', 'cancelled', 'output_pending_assessment'], null],
  ['request-changes', 'Request changes', ['completed', 'output_pending_assessment', 'failed'], 'feedback', 'Feedback for the agent'],
  ['resolve-escalation', 'Resolve escalation', ['escalated'], 'instructions', 'Instructions'],
  ['escalate', 'Escalate', ['claimed', 'in_progress'], 'reason', 'Why it needs a human'],
  ['reassign', 'Reassign', ['pending', 'claimed', 'in_progress', 'failed'], 'reason', 'Reason'],
  ['skip', 'Skip', ['pending', 'failed', 'output_pending_assessment', 'escalated'], null],
  ['cancel', 'Cancel', ['pending', 'claimed', 'in_progress', 'output_pending_assessment', 'escalated', 'failed'], null],
];

export function taskPage(main, { params, setTitle }) {
  const id = params.id;
  const header = h('div', {}, h('p', { class: 'muted' }, 'Loading task…'));
  const notice = h('div', { 'aria-live': 'polite' });
  const body = h('div', { class: 'grid' });
  fill(main, header, notice, body);

  async function draw() {
    let task;
    try {
      task = (await api.get(`/tasks/${id}`)).data;
    } catch (e) {
      if (!e.aborted) { delete header.dataset.key; fill(header, errorBox(e)); }
      return;
    }
    setTitle(task.title);
    keep(header, JSON.stringify([task.title, task.state, task.type, task.priority, task.workflow_id]), () => [h('div', { class: 'heading' }, h('div', {},
      h('p', { class: 'crumbs' }, link('/ui/workflows', 'Workflows'), ' / ', task.workflow_id ? [link(`/ui/workflows/${task.workflow_id}`, 'workflow ', shortId(task.workflow_id)), ' / '] : null),
      h('h1', {}, task.title, ' ', h('span', { id: 'task-state' }, badge(task.state))),
      h('p', { class: 'muted' }, `${task.type} · ${task.priority} priority · created `, when(task.created_at), ' · ', link(`/ui/logs?task_id=${task.id}`, 'all logs')))),
    actionsFor(task, act)]);
    const [context, handoffs, git, logs, failure] = await Promise.all([
      api.get(`/tasks/${id}/context`).then((r) => r.data, (e) => e),
      api.get(`/tasks/${id}/handoffs`).then((r) => r.data, (e) => e),
      api.get(`/tasks/${id}/git`).then((r) => r.data, (e) => e),
      api.get(`/logs${api.query({ task_id: id, per_page: 50, detail: 'summary' })}`).then((r) => r.data, (e) => e),
      // The failed command's last stderr lines (the worker's error row).
      task.state === 'failed'
        ? api.get(`/logs${api.query({ task_id: id, operation: 'task.failed', level: 'error', per_page: 1 })}`).then((r) => r.data, () => null)
        : null,
    ]);
    keep(body, JSON.stringify([task, failure, context instanceof Error ? context.message : context, handoffs instanceof Error ? handoffs.message : handoffs, git instanceof Error ? git.message : git, logs instanceof Error ? logs.message : logs]), () => [
      section('Summary', facts([
        ['State', badge(task.state)], ['Stage', task.stage_name || '—'], ['Role', task.role || '—'],
        ['Assigned agent', task.assigned_agent_id ? shortId(task.assigned_agent_id) : '—'],
        ['Worker', task.assigned_worker_id ? shortId(task.assigned_worker_id) : '—'],
        ['Retries', task.retry_policy ? `${task.retry_count} (at most ${task.retry_policy.max_attempts} attempts)` : `${task.retry_count} of ${task.max_retries}`],
        ['Attempt', String(task.attempt)],
        ...(task.run_at ? [[task.state === 'pending' ? (task.retry_count ? 'Next attempt' : 'Scheduled for') : 'Run at', when(task.run_at)]] : []),
        ...(task.cancel_requested ? [['Cancellation', 'requested']] : []),
        ...limitFacts(task),
        ...(task.progress ? [['Progress', [h('code', {}, JSON.stringify(task.progress)), ' ', when(task.progress_at)]]] : []),
        ['Claimed', when(task.claimed_at)], ['Started', when(task.started_at)], ['Ended', when(task.completed_at)],
        ['Duration', task.started_at ? duration(task.started_at, task.completed_at) : '—'],
        ['Required tags', task.required_tags.length ? task.required_tags.join(', ') : '—'],
      ]), task.description ? h('p', {}, task.description) : null),
      task.state === 'failed' ? section('Why it failed', whyFailed(task, failure)) : null,
      section('Input', json(task.input)),
      section(task.error ? 'Error' : 'Output', task.error ? json(task.error) : json(task.output)),
      section('Context', context instanceof Error ? errorBox(context) : json({ task_context: context.task.context, workflow: context.workflow, workspace: context.workspace, documents: context.documents })),
      section('Handoffs', handoffs instanceof Error ? errorBox(handoffs) : handoffList(handoffs)),
      section('Git evidence', git instanceof Error ? errorBox(git) : json(git.raw && Object.keys(git.raw).length ? git : null)),
      section('Logs', logs instanceof Error ? errorBox(logs) : logList(logs))]);
  }

  async function act(action, body) {
    fill(notice);
    try {
      await api.post(`/tasks/${id}/${action}`, body);
      fill(notice, h('p', { class: 'ok', role: 'status', id: 'action-done' }, `Done: ${action.replaceAll('-', ' ')}.`));
      await load();
    } catch (e) {
      fill(notice, errorBox(e));
    }
  }

  // A drawing error shows on the page instead of escaping as an unhandled rejection.
  const load = api.serial(() => draw().catch((e) => fill(notice, errorBox(e))));
  load();
  let timer = null;
  const stop = followEvents({ entity_id: id }, (frame) => {
    if (!frame.data || frame.data.id === undefined) return;
    clearTimeout(timer);
    timer = setTimeout(load, 300);
  });
  return () => { stop(); clearTimeout(timer); };
}

/** The failure's message and the command's last stderr lines, if any. */
function whyFailed(task, failure) {
  const error = task.error || {};
  const row = failure && failure.items && failure.items[0];
  const lines = row && row.payload && Array.isArray(row.payload.last_lines) ? row.payload.last_lines : [];
  return h('div', { id: 'why-failed' },
    h('p', {}, error.message || 'No error was reported.', error.category ? h('span', { class: 'muted' }, ` (${error.category})`) : null),
    lines.length ? [h('p', { class: 'muted small' }, 'Last lines on stderr:'), h('pre', { class: 'json' }, lines.join('\n'))] : null);
}

function actionsFor(task, act) {
  const allowed = ACTIONS.filter(([, , states]) => states.includes(task.state));
  if (!allowed.length) return h('p', { class: 'muted' }, 'No operator actions apply in this state.');
  return h('div', { class: 'actions' }, allowed.map(([action, label, , field, fieldLabel]) => {
    if (!field) {
      return h('button', { type: 'button', id: `act-${action}`, class: action === 'cancel' ? 'danger' : '', onclick: () => act(action, {}) }, label);
    }
    const input = h('textarea', { rows: 2, required: true, 'aria-label': fieldLabel, placeholder: fieldLabel });
    return h('details', { class: 'action' }, h('summary', { id: `act-${action}` }, `${label}…`),
      h('form', { id: `act-${action}-form`, onsubmit: (e) => { e.preventDefault(); act(action, { [field]: input.value.trim() }); } }, input, h('button', { type: 'submit' }, label)));
  }));
}

function handoffList(list) {
  if (!list || !list.length) return empty('No handoffs yet.');
  return h('ol', { class: 'plain' }, list.map((x) => h('li', {}, h('strong', {}, `#${x.sequence} `), x.summary, ' ', when(x.created_at),
    h('details', {}, h('summary', {}, 'Details'), json({ changes: x.changes, decisions: x.decisions, remaining_items: x.remaining_items, blockers: x.blockers, artifacts: x.artifacts })))));
}

export function logList(rows) {
  if (!rows || !rows.length) return empty('No log lines.');
  return h('table', { class: 'list logs' }, h('tbody', {}, rows.map(logRow)));
}

export function logRow(row) {
  return h('tr', { class: `lv-${row.level}`, dataset: { id: row.id } },
    h('td', { class: 'nowrap' }, when(row.created_at)),
    h('td', {}, badge(row.level)),
    h('td', {}, h('code', {}, row.operation)),
    h('td', {}, row.status ? badge(row.status) : ''),
    h('td', { class: 'muted' }, row.actor_name || row.actor_type || ''),
    h('td', {}, row.task_id ? link(`/ui/tasks/${row.task_id}`, shortId(row.task_id)) : ''));
}

/** Flow limits: the task's keys, and when a limit held it back (see /ui/limits). */
function limitFacts(task) {
  const keys = [
    ...(task.concurrency_key ? [['Concurrency key', link('/ui/limits', task.concurrency_key)]] : []),
    ...(task.rate_limit_key ? [['Rate limit key', link('/ui/limits', task.rate_limit_key)]] : []),
  ];
  if (task.limit_waiting_at) {
    const why = task.state === 'pending' ? 'waiting: its key is at its limit' : 'was held back by a limit';
    keys.push(['Limit', [why, ' since ', when(task.limit_waiting_at)]]);
  }
  return keys;
}
