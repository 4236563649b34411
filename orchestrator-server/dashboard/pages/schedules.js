// Schedules: the list (next fire, last outcome, pause / resume / trigger),
// a schedule's page (its facts, actions, edit form and run history linking
// to the workflows and tasks it launched), and the create / edit form with a
// preview of the next five fire times in the schedule's zone.

import * as api from '../api.js';
import { h, fill, keep, link, when, badge, errorBox, empty, section, facts, shortId } from '../dom.js';

function spec(s) {
  return s.cron ? `${s.cron} (${s.timezone})` : `every ${s.every_seconds}s`;
}

/** Pause, resume or trigger; `done` redraws. */
async function act(schedule, action, notice, done) {
  fill(notice);
  try {
    const { data } = await api.post(`/schedules/${schedule.id}/${action}`, {});
    const text = action === 'trigger' ? `${schedule.name}: ${data.outcome.replaceAll('_', ' ')}${data.reason ? ` (${data.reason})` : ''}.`
      : `${schedule.name}: ${action === 'pause' ? 'paused' : 'resumed'}.`;
    fill(notice, h('p', { class: 'ok', role: 'status' }, text));
    await done();
  } catch (e) {
    fill(notice, errorBox(e));
  }
}

function actions(s, notice, done) {
  return h('span', { class: 'nowrap' },
    s.paused
      ? h('button', { type: 'button', class: 'quiet', dataset: { act: 'resume' }, onclick: () => act(s, 'resume', notice, done) }, 'Resume')
      : h('button', { type: 'button', class: 'quiet', dataset: { act: 'pause' }, onclick: () => act(s, 'pause', notice, done) }, 'Pause'),
    ' ',
    h('button', { type: 'button', class: 'quiet', dataset: { act: 'trigger' }, onclick: () => act(s, 'trigger', notice, done) }, 'Trigger'));
}

export function schedulesPage(main, { setTitle, navigate }) {
  setTitle('Schedules');
  const notice = h('div', { 'aria-live': 'polite' });
  const list = h('div', { id: 'schedules' }, h('p', { class: 'muted' }, 'Loading schedules…'));
  fill(main, h('h1', {}, 'Schedules'), notice, section('Schedules', list),
    section('New schedule', scheduleForm(null, (created) => navigate(`/ui/schedules/${created.id}`))));
  const load = api.serial(async () => {
    try {
      const { data } = await api.get('/schedules?per_page=100');
      const outcomes = await Promise.all(data.map((s) => api.get(`/schedules/${s.id}/runs?per_page=1`)
        .then((r) => (r.data[0] ? r.data[0].outcome : null), () => null)));
      keep(list, JSON.stringify([data, outcomes]), () => (data.length ? h('table', { class: 'list' },
        h('thead', {}, h('tr', {}, ['Schedule', 'Spec', 'Next fire', 'Last outcome', 'Fires / skips', ''].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, data.map((s, i) => h('tr', { dataset: { id: s.id, name: s.name } },
          h('td', {}, link(`/ui/schedules/${s.id}`, s.name)),
          h('td', {}, h('code', {}, spec(s))),
          h('td', {}, s.paused ? badge('paused') : [when(s.next_fire_at), s.next_fire_at ? h('div', { class: 'muted small' }, s.next_fire_at) : null]),
          h('td', {}, outcomes[i] ? badge(outcomes[i]) : h('span', { class: 'muted' }, 'none yet')),
          h('td', {}, `${s.fire_count} / ${s.skip_count}`),
          h('td', {}, actions(s, notice, load))))))
        : empty('No schedules yet. Create one below or with orch schedules create.')));
    } catch (e) {
      if (!e.aborted) { delete list.dataset.key; fill(list, errorBox(e)); }
    }
  });
  load();
  const timer = setInterval(load, 10000);
  return () => clearInterval(timer);
}

export function schedulePage(main, { params, setTitle }) {
  const id = params.id;
  const notice = h('div', { 'aria-live': 'polite' });
  const about = h('div', { id: 'schedule' }, h('p', { class: 'muted' }, 'Loading the schedule…'));
  const runs = h('div', { id: 'runs' });
  const edit = h('div', { id: 'edit' });
  const title = h('h1', { id: 'schedule-name' }, 'Schedule');
  fill(main, title, notice, about, section('Runs', runs), section('Edit', edit));
  let editing = false;
  const load = api.serial(async () => {
    try {
      const [{ data: s }, { data: history }] = await Promise.all([api.get(`/schedules/${id}`), api.get(`/schedules/${id}/runs?per_page=50`)]);
      setTitle(s.name);
      fill(title, s.name);
      keep(about, JSON.stringify(s), () => section('Schedule', facts([
        ['Spec', h('code', {}, spec(s))],
        ['Target', s.target.kind === 'workflow' ? `workflow of playbook ${s.target.playbook_id}` : `task “${s.target.task.title}”`],
        ['Overlap', s.overlap.replaceAll('_', ' ')],
        ['Catch-up', `${s.catchup} (window ${s.catchup_window_seconds}s)`],
        ['Jitter', `${s.jitter_seconds}s`],
        ['Next fire', s.paused ? badge('paused') : [when(s.next_fire_at), ' ', h('span', { class: 'muted small' }, s.next_fire_at || '')]],
        ['Last fired', when(s.last_fired_at)],
        ['Fires / skips', `${s.fire_count} / ${s.skip_count}`],
      ]), actions(s, notice, load)));
      keep(runs, JSON.stringify(history), () => (history.length ? h('table', { class: 'list' },
        h('thead', {}, h('tr', {}, ['Slot', 'Fired', 'Outcome', 'Reason', 'Launched'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, history.map((r) => h('tr', { dataset: { id: r.id } },
          h('td', {}, r.scheduled_for),
          h('td', {}, when(r.fired_at)),
          h('td', {}, badge(r.outcome)),
          h('td', {}, r.reason || '—'),
          h('td', {}, r.workflow_id ? link(`/ui/workflows/${r.workflow_id}`, 'workflow ', shortId(r.workflow_id))
            : r.task_id ? link(`/ui/tasks/${r.task_id}`, 'task ', shortId(r.task_id)) : '—')))))
        : empty('No runs yet.')));
      if (!editing) {
        editing = true;
        fill(edit, scheduleForm(s, () => load()));
      }
    } catch (e) {
      if (!e.aborted) { delete about.dataset.key; fill(about, errorBox(e)); }
    }
  });
  load();
  const timer = setInterval(load, 10000);
  return () => clearInterval(timer);
}

/**
 * The create (no `existing`) or edit form: the spec with a live preview of
 * its next five fire times in its zone (POST /schedules/preview), the
 * policies, and on create the target (a workflow or a task).
 */
function scheduleForm(existing, saved) {
  const p = existing ? 'edit' : 'new';
  const name = h('input', { id: `${p}-name`, type: 'text', required: true, maxlength: 200, value: existing ? existing.name : '' });
  const kind = h('select', { id: `${p}-kind` }, h('option', { value: 'cron', selected: !existing || !!existing.cron }, 'Cron'), h('option', { value: 'every', selected: !!(existing && existing.every_seconds) }, 'Every N seconds'));
  const cron = h('input', { id: `${p}-cron`, type: 'text', placeholder: '0 2 * * *', value: existing && existing.cron ? existing.cron : '' });
  const every = h('input', { id: `${p}-every`, type: 'number', min: 1, placeholder: '300', value: existing && existing.every_seconds ? existing.every_seconds : '' });
  const zone = h('input', { id: `${p}-timezone`, type: 'text', value: existing ? existing.timezone : (Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC') });
  const overlap = h('select', { id: `${p}-overlap` }, ['skip', 'buffer_one', 'allow_all', 'cancel_previous'].map((o) => h('option', { value: o, selected: existing ? existing.overlap === o : o === 'skip' }, o.replaceAll('_', ' '))));
  const catchup = h('select', { id: `${p}-catchup` }, ['skip', 'latest', 'all'].map((o) => h('option', { value: o, selected: existing ? existing.catchup === o : o === 'latest' }, o)));
  const preview = h('ol', { id: `${p}-preview`, class: 'small' });
  const problem = h('div', { 'aria-live': 'polite' });
  const targetKind = h('select', { id: `${p}-target` }, h('option', { value: 'workflow' }, 'Launch a workflow'), h('option', { value: 'task' }, 'Create a task'));
  const playbook = h('input', { id: `${p}-playbook`, type: 'text', placeholder: 'playbook id' });
  const workspace = h('input', { id: `${p}-workspace`, type: 'text', placeholder: 'workspace id' });
  const task = h('textarea', { id: `${p}-task`, rows: 3, placeholder: '{"title": "Nightly report", "type": "code"}' });

  const specBody = () => (kind.value === 'cron' ? { cron: cron.value.trim() } : { every_seconds: Number(every.value) });
  let pending = 0;
  async function refreshPreview() {
    const mine = ++pending;
    try {
      const { data } = await api.post('/schedules/preview', { ...specBody(), timezone: zone.value.trim() || 'UTC' });
      if (mine === pending) fill(preview, data.local_times.map((t) => h('li', {}, t)));
    } catch (e) {
      if (mine === pending && !e.aborted) fill(preview, h('li', { class: 'muted' }, e.fields ? Object.values(e.fields).flat().join(', ') : e.message));
    }
  }
  // Asks only for a spec that looks whole (five cron fields or a macro, a
  // positive interval), and for the zone once it is entered, not per key.
  const whole = () => (kind.value === 'cron'
    ? /^@[a-z]+$/i.test(cron.value.trim()) || cron.value.trim().split(/\s+/).length === 5
    : Number(every.value) >= 1);
  const maybePreview = () => { if (whole()) refreshPreview(); };
  for (const el of [kind, cron, every]) el.addEventListener('input', maybePreview);
  zone.addEventListener('change', maybePreview);
  if (existing) refreshPreview();

  const button = h('button', { type: 'submit', id: `${p}-save` }, existing ? 'Save' : 'Create');
  const form = h('form', { class: 'card form', onsubmit: async (e) => {
    e.preventDefault();
    fill(problem);
    const body = { name: name.value.trim(), ...specBody(), timezone: zone.value.trim() || 'UTC', overlap: overlap.value, catchup: catchup.value, request_id: crypto.randomUUID() };
    if (!existing) {
      try {
        body.target = targetKind.value === 'workflow'
          ? { kind: 'workflow', playbook_id: playbook.value.trim(), workspace_id: workspace.value.trim() }
          : { kind: 'task', task: JSON.parse(task.value || '{}') };
      } catch (err) {
        fill(problem, errorBox({ message: `The task is not JSON: ${err.message}` }));
        return;
      }
    }
    button.disabled = true;
    try {
      const { data } = existing ? await api.patch(`/schedules/${existing.id}`, body) : await api.post('/schedules', body);
      fill(problem, h('p', { class: 'ok', role: 'status' }, `${data.name}: saved.`));
      saved(data);
    } catch (err) {
      fill(problem, errorBox(err));
    }
    button.disabled = false;
  } },
  h('label', { for: `${p}-name` }, 'Name'), name,
  h('label', { for: `${p}-kind` }, 'Runs'), kind,
  h('label', { for: `${p}-cron` }, 'Cron (minute hour day month weekday, or @daily)'), cron,
  h('label', { for: `${p}-every` }, 'Every (seconds)'), every,
  h('label', { for: `${p}-timezone` }, 'Time zone'), zone,
  h('label', { for: `${p}-preview` }, 'Next five fires (local time)'), preview,
  h('label', { for: `${p}-overlap` }, 'When the previous run is still running'), overlap,
  h('label', { for: `${p}-catchup` }, 'Slots missed while no server ran'), catchup,
  existing ? null : [
    h('label', { for: `${p}-target` }, 'Target'), targetKind,
    h('label', { for: `${p}-playbook` }, 'Playbook'), playbook,
    h('label', { for: `${p}-workspace` }, 'Workspace'), workspace,
    h('label', { for: `${p}-task` }, 'Task (the POST /tasks body, JSON)'), task,
  ],
  problem, button);
  return form;
}
