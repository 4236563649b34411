// Bulk select on the task and workflow lists: a checkbox per row, one to
// select every row of the page, and a bar that runs an action over the
// selection through POST /bulk-actions (with `ids`), after a confirmation
// that names the count, then shows the action's counts until it ends.
// A list that can say what it shows as a bulk filter (`matching`) also
// offers "all N matching": the action then takes the `filter`, and its
// confirmation names the count a dry run found first.

import * as api from '../api.js';
import { h, fill, badge, errorBox } from '../dom.js';

const POLL_MS = 500;

/**
 * A selection over one list. `target` is `tasks` or `workflows`; `actions`
 * [action, label] pairs; `noun` the entity's name for counts ("task");
 * `done` redraws the list after an action ends. Returns:
 * - `bar`: the element with the count, the action buttons, the
 *   confirmation and the progress (draw it above the table),
 * - `all(ids)`: the header checkbox selecting every id of the page,
 * - `one(id)`: a row's checkbox,
 * - `matching(filter, total)`: what the list shows as a bulk-action filter
 *   and how many rows that is (`null` when the list cannot say it),
 * - `stop()`: ends the progress polling (when the page is left).
 */
export function bulkSelect({ target, actions, noun, done }) {
  const selected = new Set();
  const boxes = new Map();
  let headers = [];
  let pageIds = [];
  let timer = null;
  let stopped = false;
  // "All matching": the list's filter and total, and whether it is chosen.
  let offer = null;
  let everything = false;
  const count = h('span', { class: 'muted', id: 'bulk-count' });
  const allMatching = h('button', { type: 'button', class: 'quiet', id: 'bulk-all-matching', hidden: true, onclick: () => {
    everything = !everything;
    selected.clear();
    sync();
  } });
  const buttons = h('span', { class: 'actions' }, actions.map(([action, label]) =>
    h('button', { type: 'button', class: action === 'cancel' ? 'danger' : '', dataset: { bulk: action }, onclick: () => ask(action, label) }, `${label} selected`)));
  const confirmBox = h('div', { id: 'bulk-confirm' });
  const progress = h('div', { id: 'bulk-progress', 'aria-live': 'polite' });
  const bar = h('div', { class: 'bulk', id: 'bulk' }, h('div', { class: 'toolbar' }, count, allMatching, buttons), confirmBox, progress);
  const plural = (n) => `${n} ${noun}${n === 1 ? '' : 's'}`;

  function sync() {
    for (const [id, box] of boxes) box.checked = selected.has(id);
    const onPage = pageIds.filter((id) => selected.has(id)).length;
    for (const header of headers) {
      header.checked = pageIds.length > 0 && onPage === pageIds.length;
      header.indeterminate = onPage > 0 && onPage < pageIds.length;
    }
    if (selected.size) everything = false;
    if (!offer) everything = false;
    allMatching.hidden = !offer;
    allMatching.textContent = everything ? 'Clear' : offer ? `Select all ${plural(offer.total)} matching` : '';
    count.textContent = everything ? `All ${plural(offer.total)} matching the list's filter selected`
      : selected.size ? `${plural(selected.size)} selected` : `Select ${noun}s to act on several at once.`;
    for (const b of buttons.querySelectorAll('button')) b.disabled = selected.size === 0 && !everything;
  }

  function ask(action, label) {
    if (everything) { askMatching(action, label); return; }
    const ids = [...selected];
    if (!ids.length) return;
    const reason = h('input', { type: 'text', id: 'bulk-reason', placeholder: 'Reason (optional)', 'aria-label': 'Reason' });
    fill(confirmBox, h('div', { class: 'card confirm', role: 'alertdialog', 'aria-label': 'Confirm' },
      h('p', {}, `${label} ${plural(ids.length)}? Those it does not apply to are skipped.`),
      h('div', { class: 'actions' }, reason,
        h('button', { type: 'button', id: 'bulk-go', class: action === 'cancel' ? 'danger' : '', onclick: () => run(action, { ids }, reason.value.trim()) }, `${label} ${plural(ids.length)}`),
        h('button', { type: 'button', class: 'quiet', id: 'bulk-back', onclick: () => fill(confirmBox) }, 'Back'))));
  }

  /** Every row matching the list's filter: a dry run counts them first. */
  async function askMatching(action, label) {
    const { filter } = offer;
    fill(confirmBox, h('p', { class: 'muted' }, 'Counting (a dry run)…'));
    let counted;
    try {
      ({ data: counted } = await api.post('/bulk-actions', { target, action, filter, dry_run: true }));
    } catch (e) {
      fill(confirmBox, errorBox(e));
      return;
    }
    const n = counted.counts.matched;
    const reason = h('input', { type: 'text', id: 'bulk-reason', placeholder: 'Reason (optional)', 'aria-label': 'Reason' });
    fill(confirmBox, h('div', { class: 'card confirm', role: 'alertdialog', 'aria-label': 'Confirm' },
      h('p', {}, `${label} ${plural(n)} matching the list's filter? A dry run counted them; those it does not apply to are skipped.`),
      h('div', { class: 'actions' }, reason,
        h('button', { type: 'button', id: 'bulk-go', class: action === 'cancel' ? 'danger' : '', disabled: n === 0, onclick: () => run(action, { filter }, reason.value.trim()) }, `${label} ${plural(n)}`),
        h('button', { type: 'button', class: 'quiet', id: 'bulk-back', onclick: () => fill(confirmBox) }, 'Back'))));
  }

  async function run(action, selection, reason) {
    fill(confirmBox);
    fill(progress, h('p', { class: 'muted' }, 'Starting…'));
    try {
      const { data } = await api.post('/bulk-actions', { target, action, ...selection, reason: reason || undefined });
      everything = false;
      selected.clear();
      sync();
      show(data);
      follow(data.id);
    } catch (e) {
      fill(progress, errorBox(e));
    }
  }

  function show(b) {
    const c = b.counts;
    const handled = c.succeeded + c.skipped + c.failed;
    fill(progress, h('div', { class: 'card', dataset: { status: b.status } },
      h('p', {}, `${b.action} ${plural(c.matched)}: `, badge(b.status)),
      h('progress', { max: Math.max(c.matched, 1), value: handled }),
      h('p', { class: 'small', id: 'bulk-counts' }, `${handled} of ${c.matched} handled · ${c.succeeded} succeeded · ${c.skipped} skipped · ${c.failed} failed`)));
  }

  function follow(id) {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      if (stopped) return;
      try {
        const { data } = await api.get(`/bulk-actions/${id}`);
        if (stopped) return;
        show(data);
        if (data.status === 'running') follow(id);
        else await done();
      } catch (e) {
        if (!e.aborted && !stopped) fill(progress, errorBox(e));
      }
    }, POLL_MS);
  }

  /** The header checkbox for a page showing `ids`. */
  function all(ids) {
    pageIds = ids;
    boxes.clear();
    const header = h('input', { type: 'checkbox', class: 'bulk-all', 'aria-label': `Select every ${noun} on this page`, onchange: (e) => {
      for (const id of pageIds) { if (e.target.checked) selected.add(id); else selected.delete(id); }
      sync();
    } });
    headers = [header];
    queueMicrotask(sync);
    return header;
  }

  function one(id) {
    const box = h('input', { type: 'checkbox', class: 'bulk-one', 'aria-label': `Select this ${noun}`, dataset: { id }, onchange: (e) => {
      if (e.target.checked) selected.add(id); else selected.delete(id);
      sync();
    } });
    boxes.set(id, box);
    return box;
  }

  function matching(filter, total) {
    offer = filter && total > 0 ? { filter, total } : null;
    sync();
  }

  sync();
  return { bar, all, one, matching, stop: () => { stopped = true; clearTimeout(timer); } };
}
