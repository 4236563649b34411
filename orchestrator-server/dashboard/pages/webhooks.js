// Outbound webhooks: the list with a create form (the new `whsec_` secret
// is shown once, right after create or rotate), and a webhook's page with
// enable / disable, rotate, test send, delete, and its delivery log (status,
// response code, error, next attempt) with redeliver.

import * as api from '../api.js';
import { h, fill, keep, link, when, at, badge, errorBox, empty, section, facts, shortId } from '../dom.js';
import { pager } from './rail.js';

const REFRESH_MS = 5000;

/** The secret of a create or rotation: shown once, with a warning. */
function secretBox(data, what) {
  return h('div', { class: 'card secret', role: 'status' },
    h('p', {}, h('strong', {}, `${what}. Copy the signing secret now: it is not shown again.`)),
    h('pre', { class: 'json', id: 'webhook-secret' }, data.secret),
    h('p', { class: 'muted small' }, 'Receivers verify the webhook-signature header with it (Standard Webhooks).'));
}

function enabledBadge(w) {
  return badge(w.enabled ? 'enabled' : 'disabled');
}

export function webhooksPage(main, { setTitle }) {
  setTitle('Webhooks');
  const notice = h('div', { 'aria-live': 'polite', id: 'webhook-notice' });
  const list = h('div', { id: 'webhooks' }, h('p', { class: 'muted' }, 'Loading webhooks…'));
  let page = 1;
  fill(main, h('h1', {}, 'Webhooks'), notice, section('Webhooks', list), section('New webhook', createForm(notice, () => load())));
  const load = api.serial(async () => {
    try {
      const answer = await api.get(`/webhooks${api.query({ page, per_page: 50 })}`);
      keep(list, JSON.stringify(answer), () => [answer.data.length ? h('table', { class: 'list', id: 'webhook-list' },
        h('thead', {}, h('tr', {}, ['Webhook', 'Events', 'Workspace', 'State', 'Created'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, answer.data.map((w) => h('tr', { dataset: { id: w.id } },
          h('td', {}, link(`/ui/webhooks/${w.id}`, w.url), w.description ? h('div', { class: 'muted small' }, w.description) : null),
          h('td', {}, h('code', {}, w.event_types.join(', '))),
          h('td', {}, w.workspace_id ? shortId(w.workspace_id) : 'all'),
          h('td', {}, enabledBadge(w)),
          h('td', {}, when(w.created_at))))))
        : empty('No webhooks yet. Create one below to have events sent to a URL.'),
      pager(answer.meta, (p) => { page = p; load(); })]);
    } catch (e) {
      if (!e.aborted) { delete list.dataset.key; fill(list, errorBox(e)); }
    }
  });
  load();
  const timer = setInterval(load, REFRESH_MS);
  return () => clearInterval(timer);
}

function createForm(notice, created) {
  const url = h('input', { id: 'new-webhook-url', type: 'url', required: true, placeholder: 'https://example.com/orch-events' });
  const types = h('input', { id: 'new-webhook-events', type: 'text', required: true, value: 'workflow.*, task.*', placeholder: 'task.*, workflow.state_changed' });
  const workspace = h('input', { id: 'new-webhook-workspace', type: 'text', placeholder: 'workspace id (optional: all workspaces)' });
  const description = h('input', { id: 'new-webhook-description', type: 'text', maxlength: 500 });
  const button = h('button', { type: 'submit', id: 'new-webhook-save' }, 'Create');
  return h('form', { class: 'card form', onsubmit: async (e) => {
    e.preventDefault();
    fill(notice);
    button.disabled = true;
    try {
      const body = {
        url: url.value.trim(),
        event_types: types.value.split(',').map((t) => t.trim()).filter(Boolean),
        workspace_id: workspace.value.trim() || undefined,
        description: description.value.trim() || undefined,
      };
      const { data } = await api.post('/webhooks', body);
      fill(notice, secretBox(data, 'Webhook created'), h('p', {}, link(`/ui/webhooks/${data.id}`, 'Open the webhook and its delivery log')));
      url.value = '';
      await created();
    } catch (err) {
      fill(notice, errorBox(err));
    }
    button.disabled = false;
  } },
  h('label', { for: 'new-webhook-url' }, 'URL (receives a POST per event)'), url,
  h('label', { for: 'new-webhook-events' }, 'Event types (comma-separated; a prefix ending in .* matches a family)'), types,
  h('label', { for: 'new-webhook-workspace' }, 'Workspace'), workspace,
  h('label', { for: 'new-webhook-description' }, 'Description'), description,
  button);
}

export function webhookPage(main, { params, setTitle, navigate }) {
  const id = params.id;
  const title = h('h1', { id: 'webhook-url' }, 'Webhook');
  const notice = h('div', { 'aria-live': 'polite', id: 'webhook-notice' });
  const about = h('div', { id: 'webhook' }, h('p', { class: 'muted' }, 'Loading the webhook…'));
  const status = h('select', { id: 'delivery-status', 'aria-label': 'Delivery status', onchange: () => load() },
    ['', 'pending', 'delivered', 'failed'].map((s) => h('option', { value: s }, s ? `Status: ${s}` : 'Status: any')));
  const deliveries = h('div', { id: 'deliveries' });
  let page = 1;
  fill(main, h('p', { class: 'crumbs' }, link('/ui/webhooks', 'Webhooks'), ' / '), title, notice, about,
    section('Delivery log', h('div', { class: 'toolbar' }, status), deliveries));

  const say = (text) => fill(notice, h('p', { class: 'ok', role: 'status', id: 'webhook-done' }, text));
  async function act(run) {
    fill(notice);
    try {
      await run();
      await load();
    } catch (e) {
      fill(notice, errorBox(e));
    }
  }
  const actions = (w) => h('div', { class: 'actions' },
    h('button', { type: 'button', id: 'webhook-toggle', onclick: () => act(async () => {
      await api.patch(`/webhooks/${id}`, { enabled: !w.enabled });
      say(w.enabled ? 'Disabled: no deliveries are made until it is enabled again.' : 'Enabled.');
    }) }, w.enabled ? 'Disable' : 'Enable'),
    h('button', { type: 'button', id: 'webhook-test', onclick: () => act(async () => {
      const { data } = await api.post(`/webhooks/${id}/test`, {});
      say(`Test sent: ${data.status}${data.response_status ? ` (HTTP ${data.response_status})` : ''}${data.last_error ? `: ${data.last_error}` : ''}.`);
    }) }, 'Send a test event'),
    h('button', { type: 'button', id: 'webhook-rotate', onclick: () => act(async () => {
      const { data } = await api.post(`/webhooks/${id}/rotate-secret`, {});
      fill(notice, secretBox(data, 'Secret rotated (the old one also signs for 24 hours)'));
    }) }, 'Rotate secret'),
    h('button', { type: 'button', id: 'webhook-delete', class: 'danger', onclick: () => {
      fill(notice, h('div', { class: 'card confirm', role: 'alertdialog', 'aria-label': 'Confirm' },
        h('p', {}, `Delete the webhook to ${w.url} and its delivery log?`),
        h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'danger', id: 'webhook-delete-go', onclick: async () => {
            try {
              await api.del(`/webhooks/${id}`);
              navigate('/ui/webhooks');
            } catch (e) {
              fill(notice, errorBox(e));
            }
          } }, 'Delete'),
          h('button', { type: 'button', class: 'quiet', onclick: () => fill(notice) }, 'Back'))));
    } }, 'Delete'));

  const load = api.serial(async () => {
    try {
      const [{ data: w }, log] = await Promise.all([
        api.get(`/webhooks/${id}`),
        api.get(`/webhooks/${id}/deliveries${api.query({ status: status.value, page, per_page: 50 })}`),
      ]);
      setTitle(`Webhook ${w.url}`);
      fill(title, w.url);
      keep(about, JSON.stringify(w), () => section('Webhook', facts([
        ['State', enabledBadge(w)],
        ['Event types', h('code', {}, w.event_types.join(', '))],
        ['Workspace', w.workspace_id ? shortId(w.workspace_id) : 'all workspaces'],
        ['Description', w.description || '—'],
        w.previous_secret_expires_at ? ['Previous secret signs until', at(w.previous_secret_expires_at)] : null,
        ['Created', at(w.created_at)],
      ]), actions(w)));
      keep(deliveries, JSON.stringify(log), () => [deliveryTable(log.data, redeliver), pager(log.meta, (p) => { page = p; load(); })]);
    } catch (e) {
      if (!e.aborted) { delete about.dataset.key; fill(about, errorBox(e)); }
    }
  });
  async function redeliver(d) {
    fill(notice);
    try {
      await api.post(`/webhooks/${id}/deliveries/${d.id}/redeliver`, {});
      say(`Delivery of ${d.event_type} queued again (same webhook-id).`);
      await load();
    } catch (e) {
      fill(notice, errorBox(e));
    }
  }
  load();
  const timer = setInterval(load, REFRESH_MS);
  return () => clearInterval(timer);
}

function deliveryTable(list, redeliver) {
  if (!list.length) return empty('No deliveries yet. Events of the chosen types are delivered as they happen; “Send a test event” sends one now.');
  return h('table', { class: 'list', id: 'delivery-log' },
    h('thead', {}, h('tr', {}, ['Event', 'Attempt', 'Status', 'Response', 'Error', 'Next attempt', 'Created', ''].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, list.map((d) => h('tr', { dataset: { id: d.id, status: d.status, attempt: d.attempt } },
      h('td', {}, h('code', {}, d.event_type), h('div', { class: 'muted small' }, `event ${d.event_id}`)),
      h('td', {}, String(d.attempt)),
      h('td', {}, badge(d.status), d.delivered_at ? h('div', { class: 'muted small' }, when(d.delivered_at)) : null),
      h('td', { class: 'response' }, d.response_status ? `HTTP ${d.response_status}` : '—'),
      h('td', { class: 'small' }, d.last_error || '—'),
      h('td', {}, d.status === 'pending' ? when(d.next_attempt_at) : '—'),
      h('td', {}, when(d.created_at)),
      h('td', {}, h('button', { type: 'button', class: 'quiet', dataset: { act: 'redeliver' }, onclick: () => redeliver(d) }, 'Redeliver'))))));
}
