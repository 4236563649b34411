// The fleet: execution environments (with verify and the support posture),
// workers and agents with status, heartbeats and current task. Refreshes
// every ten seconds; a part redraws only when what it shows changed.

import * as api from '../api.js';
import { h, fill, keep, link, when, badge, errorBox, empty, section, shortId } from '../dom.js';
import { fleet, workerName } from '../names.js';

export function fleetPage(main, { setTitle }) {
  setTitle('Fleet');
  const notice = h('div', { 'aria-live': 'polite' });
  const environments = h('div', { id: 'environments' }, h('p', { class: 'muted' }, 'Loading execution environments…'));
  const workers = h('div', { id: 'workers' }, h('p', { class: 'muted' }, 'Loading workers…'));
  const agents = h('div', { id: 'agents' }, h('p', { class: 'muted' }, 'Loading agents…'));
  fill(main, h('h1', {}, 'Fleet'), notice,
    section('Execution environments', environments),
    section('Workers', workers),
    section('Agents', agents));
  const current = (id) => (id ? link(`/ui/tasks/${id}`, shortId(id)) : '—');
  // Each part: its route, where it draws, and how.
  const show = (el, path, draw) => api.get(path).then(
    ({ data }) => keep(el, JSON.stringify(data), () => draw(data)),
    (e) => { if (!e.aborted) { delete el.dataset.key; fill(el, errorBox(e)); } });

  const load = api.serial(() => Promise.all([
    show(environments, '/execution-environments?per_page=100', (data) => (data.length ? environmentTable(data, act)
      : empty('No execution environments yet. Add one with orch envs create or from the environment catalog.'))),
    show(workers, '/workers?per_page=100', (data) => (data.length ? h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Worker', 'Status', 'Runtime', 'Tags', 'Agents', 'Current task', 'Last heartbeat'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, data.map((w) => h('tr', { dataset: { id: w.worker_id } }, h('td', {}, w.name), h('td', {}, badge(w.status)), h('td', {}, `${w.runtime_type} · ${w.connection_mode}`), h('td', {}, w.routing_tags.join(', ') || '—'), h('td', {}, w.agents.length), h('td', {}, current(w.current_task_id)), h('td', {}, when(w.last_heartbeat_at))))))
      : empty('No workers have registered. Start one with orch worker run --name NAME -- COMMAND.'))),
    fleet().then((names) => show(agents, '/agents?per_page=100', (data) => (data.length ? h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Agent', 'Status', 'Protocol', 'Tags', 'Worker', 'Current task', 'Last heartbeat'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, data.map((a) => h('tr', { dataset: { id: a.id } }, h('td', {}, a.name), h('td', {}, badge(a.status)), h('td', {}, a.protocol), h('td', {}, a.routing_tags.join(', ') || '—'), h('td', {}, workerName(names, a.worker_id)), h('td', {}, current(a.current_task_id)), h('td', {}, when(a.last_heartbeat_at))))))
      : empty('No agents have registered.')))),
  ]));

  // verify: runs the probe; approve / block / clear: the support posture.
  async function act(env, action) {
    fill(notice);
    try {
      if (action === 'verify') {
        const { data } = await api.post(`/execution-environments/${env.id}/verify`, {});
        fill(notice, h('p', { class: 'ok', role: 'status' }, `${env.name}: ${data.compatibility_status}${data.compatibility_errors.length ? ` (${data.compatibility_errors.join('; ')})` : ''}.`));
      } else {
        const supportStatus = action === 'clear' ? null : action;
        await api.post(`/execution-environments/${env.id}/support`, { supportStatus });
        fill(notice, h('p', { class: 'ok', role: 'status' }, `${env.name}: ${supportStatus ? supportStatus : 'support posture cleared'}.`));
      }
      await load();
    } catch (e) {
      fill(notice, errorBox(e));
    }
  }

  load();
  const timer = setInterval(load, 10000);
  return () => clearInterval(timer);
}

function environmentTable(list, act) {
  return h('table', { class: 'list' },
    h('thead', {}, h('tr', {}, ['Environment', 'Image', 'Compatibility', 'Support', 'Agent hint', 'Verified', ''].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, list.map((e) => h('tr', { dataset: { id: e.id, name: e.name } },
      h('td', {}, h('strong', {}, e.name), e.description ? h('div', { class: 'muted small' }, e.description) : null,
        h('div', { class: 'muted small' }, `${e.source_kind}${e.catalog_key ? ` · ${e.catalog_key} v${e.catalog_version}` : ''} · ${e.cpu} CPU · ${e.memory}`)),
      h('td', {}, h('code', {}, e.image)),
      h('td', {}, badge(e.compatibility_status), e.compatibility_errors.length ? h('div', { class: 'muted small' }, e.compatibility_errors.join('; ')) : null),
      h('td', { class: 'support' }, e.support_status ? badge(e.support_status) : h('span', { class: 'muted' }, 'none')),
      h('td', { class: 'small' }, e.agent_hint || '—'),
      h('td', {}, e.verification_contract_version ? [e.verification_contract_version, ' ', when(e.updated_at)] : h('span', { class: 'muted' }, 'never')),
      h('td', { class: 'nowrap' },
        h('button', { type: 'button', class: 'quiet', dataset: { act: 'verify' }, onclick: () => act(e, 'verify') }, 'Verify'), ' ',
        e.support_status !== 'approved' ? h('button', { type: 'button', class: 'quiet', dataset: { act: 'approved' }, onclick: () => act(e, 'approved') }, 'Approve') : null, ' ',
        e.support_status !== 'blocked' ? h('button', { type: 'button', class: 'quiet', dataset: { act: 'blocked' }, onclick: () => act(e, 'blocked') }, 'Block') : null, ' ',
        e.support_status ? h('button', { type: 'button', class: 'quiet', dataset: { act: 'clear' }, onclick: () => act(e, 'clear') }, 'Clear') : null)))));
}
