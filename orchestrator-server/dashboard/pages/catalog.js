// Playbooks (list, revisions, archive), the community catalog (preview and
// import with a decision per conflict), workspaces and one workspace
// (memory, files with download, artifacts).

import * as api from '../api.js';
import { h, fill, keep, link, when, badge, errorBox, empty, section, facts, shortId } from '../dom.js';
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
        h('tbody', {}, data.map((p) => h('tr', { dataset: { id: p.id } },
          h('td', {}, h('strong', {}, p.name), h('div', { class: 'muted small' }, p.description)),
          h('td', {}, `v${p.version}`, ' ', revisions(p)),
          h('td', {}, p.lifecycle),
          h('td', {}, badge(p.archived ? 'archived' : 'active')),
          h('td', {}, when(p.updated_at)),
          h('td', { class: 'nowrap' },
            p.archived ? null : link(`/ui/launch?playbook_id=${p.id}`, 'Launch'), ' ',
            h('button', { type: 'button', class: 'quiet archive', onclick: () => archive(p) }, p.archived ? 'Unarchive' : 'Archive')))))) : empty('No playbooks yet. Import one from the catalog.'),
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

export function workspacePage(main, { params, query, navigate, setTitle }) {
  const id = params.id;
  const top = h('div', {}, h('p', { class: 'muted' }, 'Loading workspace…'));
  const notice = h('div', { 'aria-live': 'polite', id: 'workspace-notice' });
  const memoryBox = h('div', { id: 'memory' });
  const filesBox = h('div', { id: 'files' });
  const artifactsBox = h('div', { id: 'artifacts' });
  fill(main, top, notice, h('div', { class: 'grid' },
    section('Memory', memoryBox, memoryForm()),
    section('Files', filesBox, uploadForm())),
  section('Artifacts', artifactFilters(), artifactsBox));

  const say = (text) => fill(notice, h('p', { class: 'ok', role: 'status' }, text));
  const fail = (e) => fill(notice, errorBox(e));

  async function loadWorkspace() {
    const { data: w } = await api.get(`/workspaces/${id}`);
    setTitle(w.name);
    keep(top, JSON.stringify([w.name, w.repository_url, w.default_branch, w.created_at]), () => [
      h('p', { class: 'crumbs' }, link('/ui/workspaces', 'Workspaces'), ' / '), h('h1', {}, w.name),
      facts([['Repository', w.repository_url || '—'], ['Default branch', w.default_branch || '—'], ['Created', when(w.created_at)]]),
      h('p', {}, link(`/ui/launch?workspace_id=${w.id}`, 'Launch a workflow here'))]);
    const entries = Object.entries(w.memory || {});
    keep(memoryBox, JSON.stringify(entries), () => (entries.length ? h('table', { class: 'list' },
      h('thead', {}, h('tr', {}, ['Key', 'Value', ''].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, entries.map(([k, v]) => h('tr', { dataset: { key: k } }, h('td', {}, h('code', {}, k)), h('td', {}, h('code', { class: 'value' }, JSON.stringify(v))),
        h('td', {}, h('button', { type: 'button', class: 'quiet', 'aria-label': `Delete ${k}`, onclick: () => deleteMemory(k) }, 'Delete'))))))
      : empty('No memory entries yet.')));
  }
  async function loadFiles() {
    const { data } = await api.get(`/workspaces/${id}/files`);
    keep(filesBox, JSON.stringify(data), () => fileTable(data, deleteFile));
  }
  async function loadArtifacts() {
    const filter = { q: query.get('q') || '', workflow_id: query.get('workflow_id') || '', task_id: query.get('task_id') || '', stage_name: query.get('stage_name') || '' };
    const { data } = await api.get(`/workspaces/${id}/artifacts${api.query({ ...filter, per_page: 100 })}`);
    keep(artifactsBox, JSON.stringify(data), () => artifactTable(data));
  }
  const guard = (load, box) => load().catch((e) => { if (!e.aborted) { delete box.dataset.key; fill(box, errorBox(e)); } });
  guard(loadWorkspace, top).then(() => Promise.all([guard(loadFiles, filesBox), guard(loadArtifacts, artifactsBox)]));

  function memoryForm() {
    const key = h('input', { type: 'text', id: 'memory-key', required: true, placeholder: 'key', 'aria-label': 'Memory key' });
    const value = h('input', { type: 'text', id: 'memory-value', placeholder: 'value (JSON or text)', 'aria-label': 'Memory value' });
    return h('form', { class: 'toolbar', onsubmit: async (e) => {
      e.preventDefault();
      // JSON when it parses (numbers, objects, true), else the text itself.
      let parsed;
      try { parsed = JSON.parse(value.value); } catch { parsed = value.value; }
      try {
        await api.patch(`/workspaces/${id}/memory`, { key: key.value.trim(), value: parsed });
        say(`Saved memory ${key.value.trim()}.`);
        key.value = ''; value.value = '';
        await guard(loadWorkspace, top);
      } catch (err) { fail(err); }
    } }, key, value, h('button', { type: 'submit', id: 'memory-save' }, 'Set'));
  }
  async function deleteMemory(k) {
    try {
      await api.del(`/workspaces/${id}/memory/${encodeURIComponent(k)}`);
      say(`Deleted memory ${k}.`);
      await guard(loadWorkspace, top);
    } catch (e) { fail(e); }
  }
  function uploadForm() {
    const input = h('input', { type: 'file', id: 'file-upload', multiple: true, 'aria-label': 'Files to upload' });
    const description = h('input', { type: 'text', placeholder: 'Description (optional)', 'aria-label': 'File description' });
    const button = h('button', { type: 'submit', id: 'file-upload-submit' }, 'Upload');
    return h('form', { class: 'toolbar', onsubmit: async (e) => {
      e.preventDefault();
      if (!input.files.length) { fail({ message: 'Choose a file first.', hint: 'Files up to 10 MiB each.' }); return; }
      button.disabled = true;
      try {
        for (const file of [...input.files]) {
          const upload = await encodeFile(file);
          if (description.value.trim()) upload.description = description.value.trim();
          await api.post(`/workspaces/${id}/files`, upload);
        }
        say(`Uploaded ${[...input.files].map((f) => f.name).join(', ')}.`);
        input.value = ''; description.value = '';
        await guard(loadFiles, filesBox);
      } catch (err) { fail(err); } finally { button.disabled = false; }
    } }, input, description, button);
  }
  async function deleteFile(f) {
    if (!confirm(`Delete ${f.file_name}?`)) return;
    try {
      await api.del(`/workspaces/${id}/files/${f.id}`);
      say(`Deleted ${f.file_name}.`);
      await guard(loadFiles, filesBox);
    } catch (e) { fail(e); }
  }
  function artifactFilters() {
    const fields = [['q', 'Search name or key'], ['stage_name', 'Stage'], ['workflow_id', 'Workflow id'], ['task_id', 'Task id']]
      .map(([k, label]) => h('input', { type: 'text', name: k, value: query.get(k) || '', placeholder: label, 'aria-label': label }));
    return h('form', { class: 'toolbar wrap', onsubmit: (e) => {
      e.preventDefault();
      navigate(`/ui/workspaces/${id}${api.query(Object.fromEntries(fields.map((f) => [f.name, f.value.trim()])))}`);
    } }, fields, h('button', { type: 'submit' }, 'Filter'));
  }
}

/** A file for the JSON upload routes: name, base64 content and type. */
export async function encodeFile(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  const out = { file_name: file.name, content_base64: btoa(binary) };
  if (file.type) out.content_type = file.type;
  return out;
}

function fileTable(items, remove) {
  if (!items.length) return empty('No files yet. Upload one below.');
  return h('table', { class: 'list' }, h('thead', {}, h('tr', {}, ['File', 'Type', 'Size', 'Updated', ''].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, items.map((f) => h('tr', { dataset: { id: f.id } },
      h('td', {}, h('a', { href: f.download_url, download: f.file_name, class: 'download' }, f.file_name), f.description ? h('div', { class: 'muted small' }, f.description) : null),
      h('td', {}, f.content_type), h('td', {}, size(f.size_bytes)), h('td', {}, when(f.updated_at)),
      h('td', {}, h('button', { type: 'button', class: 'quiet', 'aria-label': `Delete ${f.file_name}`, onclick: () => remove(f) }, 'Delete'))))));
}

function artifactTable(items) {
  if (!items.length) return empty('No artifacts match. Tasks store their outputs here.');
  return h('table', { class: 'list' }, h('thead', {}, h('tr', {}, ['Artifact', 'Stage / role', 'Workflow', 'Task', 'Type', 'Size', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, items.map((a) => h('tr', {},
      h('td', {}, h('a', { href: a.download_url, download: a.file_name }, a.file_name), a.description ? h('div', { class: 'muted small' }, a.description) : null),
      h('td', {}, [a.stage_name, a.role].filter(Boolean).join(' / ') || '—'),
      h('td', {}, a.workflow_id ? link(`/ui/workflows/${a.workflow_id}`, shortId(a.workflow_id)) : '—'),
      h('td', {}, a.task_id ? link(`/ui/tasks/${a.task_id}`, shortId(a.task_id)) : '—'),
      h('td', {}, a.content_type), h('td', {}, size(a.size_bytes)), h('td', {}, when(a.created_at))))));
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1048576) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
