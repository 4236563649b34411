// Launch a workflow: pick a playbook and a workspace, name the run, give
// parameters, a summary and files (sent base64 in the initial input packet).

import * as api from '../api.js';
import { h, fill, errorBox, empty } from '../dom.js';

export async function launchPage(main, { query, navigate, setTitle }) {
  setTitle('Launch');
  fill(main, h('h1', {}, 'Launch a workflow'), h('p', { class: 'muted' }, 'Loading playbooks and workspaces…'));
  let playbooks;
  let workspaces;
  try {
    [playbooks, workspaces] = await Promise.all([
      api.get('/playbooks?per_page=100').then((r) => r.data.filter((p) => p.is_active && !p.archived)),
      api.get('/workspaces?per_page=100').then((r) => r.data.filter((w) => w.is_active)),
    ]);
  } catch (e) {
    fill(main, h('h1', {}, 'Launch a workflow'), errorBox(e));
    return;
  }
  if (!playbooks.length || !workspaces.length) {
    fill(main, h('h1', {}, 'Launch a workflow'), empty(!playbooks.length
      ? 'There is no active playbook yet. Import one from the catalog or create one with orch playbooks create.'
      : 'There is no workspace yet. Create one with orch workspaces create.'),
    h('p', {}, h('a', { href: '/ui/catalog', 'data-link': true }, 'Open the catalog')));
    return;
  }
  const playbook = h('select', { id: 'launch-playbook', name: 'playbook_id', required: true },
    playbooks.map((p) => h('option', { value: p.id, selected: p.id === query.get('playbook_id') }, `${p.name} (v${p.version}, ${p.lifecycle})`)));
  const workspace = h('select', { id: 'launch-workspace', name: 'workspace_id', required: true },
    workspaces.map((w) => h('option', { value: w.id, selected: w.id === query.get('workspace_id') }, w.name)));
  const name = h('input', { id: 'launch-name', type: 'text', required: true, maxlength: 200, placeholder: 'What this run is for' });
  const params = h('textarea', { id: 'launch-parameters', rows: 4, placeholder: 'One key=value per line' });
  const summary = h('textarea', { id: 'launch-summary', rows: 3, placeholder: 'A short brief for the agents (optional)' });
  const files = h('input', { id: 'launch-files', type: 'file', multiple: true });
  const problem = h('div', { 'aria-live': 'polite' });
  const button = h('button', { type: 'submit', id: 'launch' }, 'Launch');

  const form = h('form', { class: 'card form', onsubmit: async (e) => {
    e.preventDefault();
    fill(problem);
    let parameters;
    try {
      parameters = parseParameters(params.value);
    } catch (err) {
      fill(problem, errorBox({ message: err.message, hint: 'Write each parameter as key=value on its own line.' }));
      return;
    }
    button.disabled = true;
    try {
      const packet = {};
      if (summary.value.trim()) packet.summary = summary.value.trim();
      if (files.files.length) packet.files = await Promise.all([...files.files].map(encodeFile));
      const body = { playbook_id: playbook.value, workspace_id: workspace.value, name: name.value.trim(), request_id: crypto.randomUUID() };
      if (Object.keys(parameters).length) body.parameters = parameters;
      if (Object.keys(packet).length) body.initial_input_packet = packet;
      const { data } = await api.post('/workflows', body);
      navigate(`/ui/workflows/${data.id}`);
    } catch (err) {
      fill(problem, errorBox(err));
      button.disabled = false;
    }
  } },
  h('label', { for: 'launch-playbook' }, 'Playbook'), playbook,
  h('label', { for: 'launch-workspace' }, 'Workspace'), workspace,
  h('label', { for: 'launch-name' }, 'Name'), name,
  h('label', { for: 'launch-parameters' }, 'Parameters'), params,
  h('label', { for: 'launch-summary' }, 'Summary'), summary,
  h('label', { for: 'launch-files' }, 'Files'), files,
  problem, button);
  fill(main, h('h1', {}, 'Launch a workflow'), form);
  name.focus();
}

function parseParameters(text) {
  const out = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`Line ${i + 1} is not key=value.`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

async function encodeFile(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { file_name: file.name, content_base64: btoa(binary), content_type: file.type || undefined };
}
