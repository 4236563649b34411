// One workflow: state and operator actions, the board, stages, tasks,
// activations and a live event feed. The page reads the operations packet
// once, then follows /events/stream for the workflow and re-reads the packet
// after each burst of events, so it stays current without reloads. A failed
// workflow says why (its failed tasks, their errors and last stderr lines),
// and pending tasks that no online agent can claim say so, as `orch
// workflows get --watch` does.

import * as api from '../api.js';
import { followEvents } from '../shared.js';
import { fleet, agentName } from '../names.js';
import { whyFailed } from './task.js';
import { h, fill, keep, link, when, at, badge, errorBox, empty, section, facts, shortId, duration, json } from '../dom.js';

const FEED_LIMIT = 100;

export function workflowPage(main, { params, setTitle }) {
  const id = params.id;
  const header = h('div', {}, h('p', { class: 'muted' }, 'Loading workflow…'));
  const notice = h('div', { 'aria-live': 'polite' });
  // Why it failed or waits: above the grid, the first thing to read.
  const whyBox = h('div', { id: 'why' });
  const boxes = { board: h('div', {}), stages: h('div', {}), tasks: h('div', {}), activations: h('div', {}), facts: h('div', {}) };
  const body = h('div', { class: 'grid' }, Object.values(boxes));
  const feedList = h('ol', { class: 'feed', id: 'feed' });
  const feedState = h('span', { class: 'muted small', id: 'feed-state' }, 'connecting…');
  const feed = h('section', { class: 'card feed-card' }, h('h2', {}, 'Live events ', feedState), feedList);
  fill(main, header, notice, whyBox, body, feed);

  let detail = null;
  const load = api.serial(read);
  async function read() {
    try {
      const { data } = await api.get(`/operations/workflows/${id}/workspace${api.query({ tab_scope: 'live_console', live_console_limit: 1 })}`);
      detail = data.workflow;
      setTitle(detail.name);
      const head = { id: detail.id, name: detail.name, state: detail.state, note: detail.operator_note, created_at: detail.created_at };
      keep(header, JSON.stringify(head), () => headerOf(detail, act));
      keep(boxes.board, JSON.stringify(data.board), () => section('Board', board(data.board)));
      keep(boxes.stages, JSON.stringify(detail.workflow_stages), () => section('Stages', stages(detail.workflow_stages)));
      const names = await fleet();
      const failures = detail.state === 'failed' ? await failedTasks(detail.tasks) : [];
      const stuck = unclaimable(detail.tasks, names);
      keep(whyBox, JSON.stringify([failures, stuck]), () => why(failures, stuck));
      const named = detail.tasks.map((t) => names.agents.has(t.assigned_agent_id));
      keep(boxes.tasks, JSON.stringify([detail.tasks, named]), () => section(`Tasks (${detail.tasks.length})`, tasks(detail.tasks, names)));
      keep(boxes.activations, JSON.stringify(detail.activations), () => section(`Activations (${detail.activations.length})`, activations(detail.activations)));
      keep(boxes.facts, JSON.stringify([detail.lifecycle, detail.attempt_number, detail.redrive_of, detail.completed_at, detail.parameters, detail.initial_input_packet]), () => section('Parameters and input', facts([
          ['Lifecycle', detail.lifecycle], ['Attempt', `${detail.attempt_number} (${detail.attempt_kind})`],
          detail.redrive_of ? ['Redrive of', link(`/ui/workflows/${detail.redrive_of}`, shortId(detail.redrive_of))] : null,
          ['Created', at(detail.created_at)], ['Completed', at(detail.completed_at)],
        ]), json(Object.keys(detail.parameters || {}).length ? detail.parameters : null), inputPacket(detail.initial_input_packet)));
    } catch (e) {
      if (!e.aborted) { delete header.dataset.key; fill(header, errorBox(e)); }
    }
  }

  async function act(action, body) {
    fill(notice);
    try {
      const { data } = await api.post(`/workflows/${id}/${action}`, body);
      if (action === 'redrives') {
        fill(notice, h('p', { class: 'ok', role: 'status' }, 'Redrive started: ', link(`/ui/workflows/${data.id}`, 'open the new run')));
      } else {
        fill(notice, h('p', { class: 'ok', role: 'status' }, `Workflow ${action === 'pause' ? 'paused' : action === 'resume' ? 'resumed' : 'cancelled'}.`));
      }
      await load();
    } catch (e) {
      fill(notice, errorBox(e));
    }
  }

  // The feed: the newest events first, then live ones on top.
  async function loadFeed() {
    try {
      const { data, meta } = await api.get(`/workflows/${id}/events?limit=50`);
      let events = data;
      let after = meta.next_after;
      // Page forward to the newest events (the feed reads oldest first).
      while (meta.has_more && after && events.length < 500) {
        const next = await api.get(`/workflows/${id}/events?limit=200&after=${after}`);
        events = events.concat(next.data);
        after = next.meta.next_after || after;
        if (!next.meta.has_more) break;
      }
      for (const event of events.slice(-FEED_LIMIT)) addEvent(event);
      return events.length ? events[events.length - 1].id : null;
    } catch (e) {
      fill(feedList, h('li', {}, errorBox(e)));
      return null;
    }
  }

  const seen = new Set();
  function addEvent(event) {
    if (seen.has(event.id)) return;
    seen.add(event.id);
    const change = event.data && event.data.to_state ? [' ', badge(event.data.from_state || '—'), ' → ', badge(event.data.to_state)] : null;
    const subject = event.entity_type === 'task' ? link(`/ui/tasks/${event.entity_id}`, 'task ', shortId(event.entity_id)) : [event.entity_type, ' ', shortId(event.entity_id)];
    feedList.prepend(h('li', { dataset: { type: event.type } }, h('code', {}, event.type), ' ', subject, change, ' ', when(event.created_at)));
    while (feedList.children.length > FEED_LIMIT) feedList.lastChild.remove();
  }

  let timer = null;
  let stop = () => {};
  let closed = false;
  load().then(loadFeed).then((last) => {
    if (closed) return;
    if (!feedList.children.length) feedList.append(h('li', { class: 'muted', id: 'feed-empty' }, 'No events yet.'));
    stop = followEvents({ workflow_id: id }, (frame) => {
      if (!frame.data || typeof frame.data !== 'object' || frame.data.id === undefined) return;
      const placeholder = document.getElementById('feed-empty');
      if (placeholder) placeholder.remove();
      addEvent(frame.data);
      clearTimeout(timer);
      timer = setTimeout(load, 300);
    }, { onState: (s) => { feedState.textContent = s === 'live' ? '● live' : 'reconnecting…'; feedState.className = s === 'live' ? 'live small' : 'muted small'; }, after: last });
  });
  return () => { closed = true; stop(); clearTimeout(timer); };
}

function headerOf(w, act) {
  const live = !['completed', 'failed', 'cancelled'].includes(w.state);
  const reason = h('input', { type: 'text', placeholder: 'Reason (optional)', 'aria-label': 'Reason', id: 'action-reason' });
  const reasonBody = () => (reason.value.trim() ? { reason: reason.value.trim() } : {});
  const actions = h('div', { class: 'actions' },
    live ? reason : null,
    w.state === 'in_progress' || w.state === 'pending' ? h('button', { type: 'button', id: 'pause', onclick: () => act('pause', reasonBody()) }, 'Pause') : null,
    w.state === 'paused' ? h('button', { type: 'button', id: 'resume', onclick: () => act('resume', reasonBody()) }, 'Resume') : null,
    live ? h('button', { type: 'button', id: 'cancel-workflow', class: 'danger', onclick: () => { if (confirm(`Cancel “${w.name}” and its open tasks?`)) act('cancel', reasonBody()); } }, 'Cancel') : null,
    redriveForm(w, act));
  return h('div', { class: 'heading wf' },
    h('div', {},
      h('p', { class: 'crumbs' }, link('/ui/workflows', 'Workflows'), ' / '),
      h('h1', {}, w.name, ' ', h('span', { id: 'workflow-state' }, badge(w.state))),
      h('p', { class: 'muted' }, 'Started ', at(w.created_at), w.operator_note ? ` · ${w.operator_note}` : '', ' · ', link(`/ui/logs?workflow_id=${w.id}`, 'logs'))),
    actions);
}

/** The launch's input packet: its summary, files (name, type, size) and structured inputs. */
function inputPacket(packet) {
  if (!packet) return null;
  const files = packet.files || [];
  return h('div', { id: 'input-packet' },
    h('h3', {}, 'Input packet'),
    packet.summary ? h('p', { class: 'summary' }, packet.summary) : null,
    files.length ? h('ul', { class: 'plain files' }, files.map((f) => h('li', {}, h('code', {}, f.file_name), ' ',
      h('span', { class: 'muted small' }, `${f.content_type || 'file'} · ${Math.floor((f.content_base64 || '').replace(/=+$/, '').length * 3 / 4)} bytes`)))) : null,
    packet.structured_inputs ? json(packet.structured_inputs) : null);
}

function redriveForm(w, act) {
  if (!['completed', 'failed', 'cancelled'].includes(w.state)) return null;
  const name = h('input', { type: 'text', name: 'name', id: 'redrive-name', value: `${w.name} (redrive)`, 'aria-label': 'New run name' });
  const reason = h('input', { type: 'text', name: 'reason', id: 'redrive-reason', placeholder: 'Why run it again?', 'aria-label': 'Redrive reason' });
  const steering = h('textarea', { name: 'steering', id: 'redrive-steering', rows: 2, placeholder: 'Steering instruction (optional)', 'aria-label': 'Steering instruction' });
  const fresh = h('input', { type: 'checkbox', id: 'redrive-fresh' });
  return h('details', { class: 'redrive action', id: 'redrive' }, h('summary', {}, 'Redrive…'),
    h('form', { onsubmit: (e) => {
      e.preventDefault();
      const body = { name: name.value.trim() || undefined, reason: reason.value.trim() || undefined, steering_instruction: steering.value.trim() || undefined };
      if (fresh.checked) body.inheritance_policy = 'inherit_none';
      act('redrives', body);
    } }, name, reason, steering, h('label', { class: 'check' }, fresh, ' Start fresh (do not carry prior settings)'), h('button', { type: 'submit', id: 'redrive-submit' }, 'Redrive')));
}

function board(b) {
  if (!b) return empty('No board.');
  return h('div', { class: 'board' }, b.columns.map((c) => h('div', { class: 'column' },
    h('h3', {}, c.title, ' ', h('span', { class: 'muted' }, c.work_items.length)),
    c.work_items.length ? c.work_items.map((wi) => h('div', { class: 'item' }, h('strong', {}, wi.title), wi.stage_name ? h('div', { class: 'muted small' }, wi.stage_name) : null, h('span', { class: `prio p-${wi.priority}` }, wi.priority)))
      : h('p', { class: 'empty small' }, 'Empty'))));
}

function stages(list) {
  if (!list || !list.length) return empty('This workflow has no stages.');
  return h('table', { class: 'list' }, h('thead', {}, h('tr', {}, ['#', 'Stage', 'Status', 'Work items', 'Started', 'Completed'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, list.map((s) => h('tr', {}, h('td', {}, s.position), h('td', {}, s.name, s.goal ? h('div', { class: 'muted small' }, s.goal) : null), h('td', {}, badge(s.status)), h('td', {}, `${s.open_work_item_count} open / ${s.work_item_count}`), h('td', {}, when(s.started_at)), h('td', {}, when(s.completed_at))))));
}

/** The failed tasks with the log row that holds their last stderr lines. */
function failedTasks(list) {
  return Promise.all(list.filter((t) => t.state === 'failed').map((t) =>
    api.get(`/logs${api.query({ task_id: t.id, operation: 'task.failed', level: 'error', per_page: 1 })}`)
      .then((r) => [t, r.data], () => [t, null])));
}

/**
 * For pending tasks no online agent (active or busy) can claim: "no online
 * agent has tags …", once per set of required tags (what `--watch` says).
 */
function unclaimable(list, names) {
  if (!names.known) return [];
  const online = [...names.agents.values()].filter((a) => a.status === 'active' || a.status === 'busy');
  const said = [];
  for (const t of list.filter((x) => x.state === 'pending')) {
    const tags = t.required_tags || [];
    if (online.some((a) => tags.every((tag) => a.routing_tags.includes(tag)))) continue;
    const line = tags.length ? `No online agent has tags ${tags.join(', ')}` : 'No agent is online to claim pending tasks';
    if (!said.includes(line)) said.push(line);
  }
  return said;
}

function why(failures, stuck) {
  if (!failures.length && !stuck.length) return null;
  return section(failures.length ? 'Why it failed' : 'Why it waits',
    failures.map(([t, rows]) => h('div', { class: 'why-task', dataset: { id: t.id } },
      h('h3', {}, link(`/ui/tasks/${t.id}`, t.title), ' ', badge(t.state)),
      whyFailed(t, rows))),
    stuck.length ? h('ul', { class: 'plain', id: 'unclaimable' }, stuck.map((line) => h('li', { class: 'warn' },
      `${line}: its tasks wait until a worker with these tags is online. `, link('/ui/fleet', 'See the fleet')))) : null);
}

function tasks(list, names) {
  if (!list.length) return empty('No tasks yet. They appear here as they are created.');
  return h('table', { class: 'list', id: 'tasks' }, h('thead', {}, h('tr', {}, ['Task', 'State', 'Stage / role', 'Assignee', 'Duration', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, list.map((t) => h('tr', { dataset: { id: t.id } },
      h('td', {}, link(`/ui/tasks/${t.id}`, t.title), t.is_orchestrator_task ? h('span', { class: 'muted small' }, ' orchestrator') : null),
      h('td', {}, badge(t.state)),
      h('td', {}, [t.stage_name, t.role].filter(Boolean).join(' / ') || '—'),
      h('td', {}, agentName(names, t.assigned_agent_id)),
      h('td', {}, t.started_at ? duration(t.started_at, t.completed_at) : '—'),
      h('td', {}, when(t.created_at))))));
}

function activations(list) {
  if (!list.length) return empty('No activations.');
  return h('table', { class: 'list' }, h('thead', {}, h('tr', {}, ['Reason', 'Event', 'Status', 'Attempts', 'Task', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, list.map((a) => h('tr', {}, h('td', {}, a.reason), h('td', {}, h('code', {}, a.event_type)), h('td', {}, badge(a.status)), h('td', {}, a.attempts), h('td', {}, a.task_id ? link(`/ui/tasks/${a.task_id}`, shortId(a.task_id)) : '—'), h('td', {}, when(a.created_at))))));
}
