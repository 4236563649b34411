// One task: what it was given (input, context), what it produced (output or
// error, handoffs, git evidence), its logs, and the operator actions its
// state allows; its run control (attempt, run_at, expiry, lease, retry
// policy) and retry history (from its `task.retry_scheduled` events). The
// page follows the task's events and re-reads on change.

import * as api from '../api.js';
import { followEvents } from '../shared.js';
import { fleet, agentName, workerName } from '../names.js';
import { h, fill, keep, link, when, at, badge, errorBox, empty, section, facts, shortId, duration, json } from '../dom.js';

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
      h('p', { class: 'muted' }, `${task.type} · ${task.priority} priority · created `, at(task.created_at), ' · ', link(`/ui/logs?task_id=${task.id}`, 'all logs')))),
    actionsFor(task, act)]);
    const [context, handoffs, git, logs, failure, retries, names] = await Promise.all([
      api.get(`/tasks/${id}/context`).then((r) => r.data, (e) => e),
      api.get(`/tasks/${id}/handoffs`).then((r) => r.data, (e) => e),
      api.get(`/tasks/${id}/git`).then((r) => r.data, (e) => e),
      api.get(`/logs${api.query({ task_id: id, per_page: 50, detail: 'summary' })}`).then((r) => r.data, (e) => e),
      // The failed command's last stderr lines (the worker's error row).
      task.state === 'failed'
        ? api.get(`/logs${api.query({ task_id: id, operation: 'task.failed', level: 'error', per_page: 1 })}`).then((r) => r.data, () => null)
        : null,
      // Every retry the task had: one event per failed attempt.
      api.get(`/events${api.query({ entity_id: id, type: 'task.retry_scheduled', limit: 200 })}`).then((r) => r.data, (e) => e),
      fleet(),
    ]);
    const named = [task.assigned_agent_id && names.agents.has(task.assigned_agent_id), task.assigned_worker_id && names.workers.has(task.assigned_worker_id)];
    keep(body, JSON.stringify([task, failure, named, retries instanceof Error ? retries.message : retries, context instanceof Error ? context.message : context, handoffs instanceof Error ? handoffs.message : handoffs, git instanceof Error ? git.message : git, logs instanceof Error ? logs.message : logs]), () => [
      section('Summary', facts([
        ['State', badge(task.state)], ['Stage', task.stage_name || '—'], ['Role', task.role || '—'],
        ['Assigned agent', agentName(names, task.assigned_agent_id)],
        ['Worker', workerName(names, task.assigned_worker_id)],
        ...limitFacts(task),
        ['Claimed', at(task.claimed_at)], ['Started', at(task.started_at)], ['Ended', at(task.completed_at)],
        ['Duration', task.started_at ? duration(task.started_at, task.completed_at) : '—'],
        ['Required tags', task.required_tags.length ? task.required_tags.join(', ') : '—'],
      ]), task.description ? h('p', {}, task.description) : null),
      section('Run control', runControl(task)),
      section('Retry history', retries instanceof Error ? errorBox(retries) : retryHistory(retries)),
      task.state === 'failed' ? section('Why it failed', h('div', { id: 'why-failed' }, whyFailed(task, failure))) : null,
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

/** Attempts, delays, expiry, lease and retry policy (run control §2–§4). */
function runControl(task) {
  const policy = task.retry_policy;
  const waiting = task.state === 'pending' && task.run_at;
  return h('div', { id: 'run-control' }, facts([
    ['Attempt', String(task.attempt)],
    ['Retries', policy ? `${task.retry_count} (at most ${policy.max_attempts} attempts)` : `${task.retry_count} of ${task.max_retries}${task.auto_retry ? ' (automatic)' : ''}`],
    waiting ? [task.retry_count ? 'Next attempt' : 'Scheduled for', at(task.run_at)] : null,
    !waiting && task.run_at ? ['Run at', at(task.run_at)] : null,
    task.expires_at ? ['Expires', [at(task.expires_at), h('span', { class: 'muted small' }, ' (cancelled if still pending then)')]] : null,
    ['Heartbeat timeout', task.heartbeat_timeout_seconds ? `${task.heartbeat_timeout_seconds}s` : 'none (no lease)'],
    task.lease_expires_at ? ['Lease expires', at(task.lease_expires_at)] : null,
    task.progress ? ['Progress', [h('code', {}, JSON.stringify(task.progress)), ' ', when(task.progress_at)]] : null,
    task.cancel_requested ? ['Cancellation', 'requested (the holder is told at its next heartbeat)'] : null,
    task.dedupe_key ? ['Dedupe key', h('code', {}, task.dedupe_key)] : null,
    ['Retry policy', policy ? h('span', { id: 'retry-policy' }, policyText(policy),
      policy.non_retryable_categories && policy.non_retryable_categories.length ? `; never retried: ${policy.non_retryable_categories.join(', ')}` : '')
      : h('span', { class: 'muted' }, 'none (auto_retry and max_retries apply)')],
  ]));
}

/** A retry policy in words, its defaults filled in (run control §2). */
function policyText(p) {
  const initial = p.initial_interval_seconds ?? 1;
  const coefficient = p.backoff_coefficient ?? 2;
  const max = p.max_interval_seconds ?? 100 * initial;
  return `${p.max_attempts} attempts; waits ${initial}s × ${coefficient} per attempt, at most ${max}s; jitter ${p.jitter ?? 0.2}`;
}

/** One row per failed attempt: when it failed, why, and when the retry runs. */
function retryHistory(events) {
  if (!events || !events.length) return empty('No retries: no attempt of this task has failed and been retried.');
  return h('table', { class: 'list', id: 'retry-history' },
    h('thead', {}, h('tr', {}, ['Attempt', 'Failed', 'Failure', 'Delay', 'Next attempt at'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, events.map((e) => {
      const d = e.data || {};
      return h('tr', { dataset: { attempt: d.attempt } },
        h('td', {}, `${d.attempt - 1} → ${d.attempt}`),
        h('td', {}, when(e.created_at)),
        h('td', {}, d.error_message || h('span', { class: 'muted' }, 'no message'), d.error_category ? h('span', { class: 'muted' }, ` (${d.error_category})`) : null),
        h('td', {}, typeof d.delay_seconds === 'number' ? `${Math.round(d.delay_seconds * 10) / 10}s` : '—'),
        h('td', {}, d.run_at ? at(d.run_at) : 'at once'));
    })));
}

/** The stderr lines of a failed command shown at most (as `orch tasks why`). */
const STDERR_TAIL = 10;

/** The failure's message and the command's last stderr lines, if any. */
export function whyFailed(task, failure) {
  const error = task.error || {};
  // `failure`: the page of `GET /logs` rows (newest first), maybe empty.
  const row = Array.isArray(failure) ? failure[0] : null;
  const lines = row && row.payload && Array.isArray(row.payload.last_lines) ? row.payload.last_lines : [];
  return h('div', { class: 'why' },
    h('p', {}, error.message || 'No error was reported.', error.category ? h('span', { class: 'muted' }, ` (${error.category})`) : null),
    lines.length ? [h('p', { class: 'muted small' }, 'Last lines on stderr:'), h('pre', { class: 'json' }, lines.slice(-STDERR_TAIL).join('\n'))] : null);
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
