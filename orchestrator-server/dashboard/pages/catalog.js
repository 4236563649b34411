// Playbooks (list, revisions, archive), the community catalog (preview and
// import with a decision per conflict), workspaces and one workspace
// (memory, files with download, artifacts).

import * as api from '../api.js';
import { h, fill, link, when, badge, errorBox, empty, section, json, facts } from '../dom.js';
import { pager } from './rail.js';

export function playbooksPage(main, { query, navigate, setTitle }) {
  setTitle('Playbooks');
  const page = Number(query.get('page') || 1);
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading playbooks…'));
  const notice = h('div', { 'aria-live': 'polite' });
  fill(main, h('div', { class: 'heading' }, h('h1', {}, 'Playbooks'), link('/ui/catalog', 'Import from the catalog')), notice, list);
  async function load() {
    try {
      const { data, meta } = await api.get(`/playbooks${api.query({ page, per_page: 20 })}`);
      fill(list, data.length ? h('table', { class: 'list' },
        h('thead', {}, h('tr', {}, ['Playbook', 'Version', 'Lifecycle', 'State', 'Updated', ''].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, data.map((p) => h('tr', {},
          h('td', {}, h('strong', {}, p.name), h('div', { class: 'muted small' }, p.description)),
          h('td', {}, `v${p.version}`, ' ', revisions(p)),
          h('td', {}, p.lifecycle),
          h('td', {}, badge(p.archived ? 'archived' : 'active')),
          h('td', {}, when(p.updated_at)),
          h('td', { class: 'nowrap' },
            p.archived ? null : link(`/ui/launch?playbook_id=${p.id}`, 'Launch'), ' ',
            h('button', { type: 'button', class: 'quiet', onclick: () => archive(p) }, p.archived ? 'Unarchive' : 'Archive')))))) : empty('No playbooks yet. Import one from the catalog.'),
      pager(meta, (n) => navigate(`/ui/playbooks?page=${n}`)));
    } catch (e) {
      fill(list, errorBox(e));
    }
  }
  async function archive(p) {
    try {
      await api.patch(`/playbooks/${p.id}/archive`, { archived: !p.archived });
      fill(notice, h('p', { class: 'ok', role: 'status' }, `${p.name} ${p.archived ? 'unarchived' : 'archived'}.`));
      load();
    } catch (e) {
      fill(notice, errorBox(e));
    }
  }
  load();
}

function revisions(p) {
  const body = h('div', {});
  return h('details', { ontoggle: async (e) => {
    if (!e.target.open || body.childElementCount) return;
    try {
      const { data } = await api.get(`/playbooks/${p.id}/revisions`);
      fill(body, h('ol', { class: 'plain' }, data.map((r) => h('li', {}, `v${r.version} `, r.is_active ? badge('active') : null, ' ', when(r.created_at)))));
    } catch (err) {
      fill(body, errorBox(err));
    }
  } }, h('summary', {}, 'revisions'), body);
}

export function catalogPage(main, { setTitle }) {
  setTitle('Catalog');
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading the catalog…'));
  const detail = h('div', { 'aria-live': 'polite' });
  fill(main, h('h1', {}, 'Community catalog'), h('p', { class: 'muted' }, 'Playbooks bundled with orch. Importing makes a local copy; nothing syncs afterwards.'), detail, list);
  api.get('/community-catalog/playbooks').then(({ data }) => fill(list, data.length ? h('div', { class: 'cards' }, data.map((c) => h('article', { class: 'card' },
    h('h2', {}, c.name), h('p', {}, c.summary), h('p', { class: 'muted small' }, `${c.category} · ${c.stability} · ${c.version}`),
    h('button', { type: 'button', onclick: () => preview(c) }, 'Preview import'))))
    : empty('The catalog is empty.')), (e) => fill(list, errorBox(e)));

  async function preview(entry) {
    fill(detail, h('p', { class: 'muted' }, 'Checking for conflicts…'));
    try {
      const { data } = await api.post(`/community-catalog/playbooks/${encodeURIComponent(entry.id)}/import-preview`, {});
      const choices = data.conflicts.map((c) => {
        const select = h('select', { 'aria-label': `Action for ${c.catalog_id}` }, c.allowed_actions.map((a) => h('option', { value: a }, a.replaceAll('_', ' '))));
        return { c, select };
      });
      const problem = h('div', {});
      fill(detail, section(`Import ${entry.name}`,
        h('table', { class: 'list' }, h('thead', {}, h('tr', {}, ['Artifact', 'Catalog id', 'Local match', 'Action'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, choices.map(({ c, select }) => h('tr', {}, h('td', {}, c.artifact_type), h('td', {}, h('code', {}, c.catalog_id)), h('td', {}, c.local_match ? `${c.local_match.name}${c.local_match.version ? ` (v${c.local_match.version})` : ''}` : 'none'), h('td', {}, select))))),
        problem,
        h('button', { type: 'button', onclick: async () => {
          try {
            const decisions = choices.map(({ c, select }) => ({ artifact_type: c.artifact_type, catalog_id: c.catalog_id, action: select.value }));
            const { data: result } = await api.post(`/community-catalog/playbooks/${encodeURIComponent(entry.id)}/import`, { decisions, request_id: crypto.randomUUID() });
            fill(detail, h('p', { class: 'ok', role: 'status' }, `Imported ${result.playbook.name} (v${result.playbook.version}). `, h('a', { href: `/ui/launch?playbook_id=${result.playbook.id}`, 'data-link': true }, 'Launch it')));
          } catch (e) {
            fill(problem, errorBox(e));
          }
        } }, 'Import')));
      detail.scrollIntoView({ block: 'nearest' });
    } catch (e) {
      fill(detail, errorBox(e));
    }
  }
}

export function workspacesPage(main, { setTitle }) {
  setTitle('Workspaces');
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading workspaces…'));
  fill(main, h('h1', {}, 'Workspaces'), list);
  api.get('/workspaces?per_page=100').then(({ data }) => fill(list, data.length ? h('table', { class: 'list' },
    h('thead', {}, h('tr', {}, ['Workspace', 'Repository', 'State', 'Updated'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, data.map((w) => h('tr', {}, h('td', {}, link(`/ui/workspaces/${w.id}`, w.name), h('div', { class: 'muted small' }, w.description)), h('td', {}, w.repository_url || '—'), h('td', {}, badge(w.is_active ? 'active' : 'inactive')), h('td', {}, when(w.updated_at))))))
    : empty('No workspaces yet. Create one with orch workspaces create.')), (e) => fill(list, errorBox(e)));
}

export function workspacePage(main, { params, setTitle }) {
  const id = params.id;
  const top = h('div', {}, h('p', { class: 'muted' }, 'Loading workspace…'));
  const body = h('div', { class: 'grid' });
  fill(main, top, body);
  (async () => {
    try {
      const { data: w } = await api.get(`/workspaces/${id}`);
      setTitle(w.name);
      fill(top, h('p', { class: 'crumbs' }, link('/ui/workspaces', 'Workspaces'), ' / '), h('h1', {}, w.name),
        facts([['Repository', w.repository_url || '—'], ['Default branch', w.default_branch || '—'], ['Created', when(w.created_at)]]),
        h('p', {}, link(`/ui/launch?workspace_id=${w.id}`, 'Launch a workflow here')));
      const [files, artifacts] = await Promise.all([
        api.get(`/workspaces/${id}/files`).then((r) => r.data, (e) => e),
        api.get(`/workspaces/${id}/artifacts?per_page=100`).then((r) => r.data, (e) => e),
      ]);
      fill(body,
        section('Memory', json(Object.keys(w.memory || {}).length ? w.memory : null)),
        section('Files', files instanceof Error ? errorBox(files) : fileTable(files)),
        section('Artifacts', artifacts instanceof Error ? errorBox(artifacts) : fileTable(artifacts)));
    } catch (e) {
      fill(top, errorBox(e));
    }
  })();
}

function fileTable(items) {
  if (!items.length) return empty('Nothing stored yet.');
  return h('table', { class: 'list' }, h('thead', {}, h('tr', {}, ['File', 'Type', 'Size', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, items.map((f) => h('tr', {},
      h('td', {}, h('a', { href: f.download_url, download: f.file_name }, f.file_name), f.task_id ? [' · ', link(`/ui/tasks/${f.task_id}`, 'task')] : null),
      h('td', {}, f.content_type), h('td', {}, size(f.size_bytes)), h('td', {}, when(f.created_at))))));
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1048576) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
