// The fleet: agents and workers with status, heartbeats and current task.

import * as api from '../api.js';
import { h, fill, link, when, badge, errorBox, empty, section, shortId } from '../dom.js';

export function fleetPage(main, { setTitle }) {
  setTitle('Fleet');
  const agents = h('div', {}, h('p', { class: 'muted' }, 'Loading agents…'));
  const workers = h('div', {}, h('p', { class: 'muted' }, 'Loading workers…'));
  fill(main, h('h1', {}, 'Fleet'), section('Workers', workers), section('Agents', agents));
  const current = (id) => (id ? link(`/ui/tasks/${id}`, shortId(id)) : '—');
  const load = async () => {
    api.get('/workers?per_page=100').then(({ data }) => fill(workers, data.length ? h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Worker', 'Status', 'Runtime', 'Tags', 'Agents', 'Current task', 'Last heartbeat'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, data.map((w) => h('tr', {}, h('td', {}, w.name), h('td', {}, badge(w.status)), h('td', {}, `${w.runtime_type} · ${w.connection_mode}`), h('td', {}, w.routing_tags.join(', ') || '—'), h('td', {}, w.agents.length), h('td', {}, current(w.current_task_id)), h('td', {}, when(w.last_heartbeat_at))))))
      : empty('No workers have registered.')), (e) => fill(workers, errorBox(e)));
    api.get('/agents?per_page=100').then(({ data }) => fill(agents, data.length ? h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Agent', 'Status', 'Protocol', 'Tags', 'Worker', 'Current task', 'Last heartbeat'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, data.map((a) => h('tr', {}, h('td', {}, a.name), h('td', {}, badge(a.status)), h('td', {}, a.protocol), h('td', {}, a.routing_tags.join(', ') || '—'), h('td', {}, a.worker_id ? shortId(a.worker_id) : '—'), h('td', {}, current(a.current_task_id)), h('td', {}, when(a.last_heartbeat_at))))))
      : empty('No agents have registered.')), (e) => fill(agents, errorBox(e)));
  };
  load();
  const timer = setInterval(load, 10000);
  return () => clearInterval(timer);
}
