// The dashboard's shell: checks the session, routes the location to a page,
// keeps in-app links on the history API and relative times fresh.

import * as api from './api.js';
import { h, fill, tickTimes, errorBox } from './dom.js';
import { signinPage } from './pages/signin.js';
import { railPage } from './pages/rail.js';
import { workflowPage } from './pages/workflow.js';
import { taskPage } from './pages/task.js';
import { logsPage } from './pages/logs.js';
import { launchPage } from './pages/launch.js';
import { playbooksPage, catalogPage, workspacesPage, workspacePage } from './pages/catalog.js';
import { fleetPage } from './pages/fleet.js';
import { schedulesPage, schedulePage } from './pages/schedules.js';
import { tasksPage } from './pages/tasks.js';
import { webhooksPage, webhookPage } from './pages/webhooks.js';
import { limitsPage } from './pages/limits.js';

// [pattern, page, nav tab]: the first match wins; `:id` captures a segment.
const routes = [
  ['/ui/signin', signinPage, null],
  ['/', railPage, 'workflows'],
  ['/ui', railPage, 'workflows'],
  ['/ui/workflows', railPage, 'workflows'],
  ['/ui/workflows/:id', workflowPage, 'workflows'],
  ['/ui/tasks', tasksPage, 'tasks'],
  ['/ui/tasks/:id', taskPage, 'tasks'],
  ['/ui/logs', logsPage, 'logs'],
  ['/ui/launch', launchPage, 'launch'],
  ['/ui/playbooks', playbooksPage, 'playbooks'],
  ['/ui/catalog', catalogPage, 'catalog'],
  ['/ui/workspaces', workspacesPage, 'workspaces'],
  ['/ui/workspaces/:id', workspacePage, 'workspaces'],
  ['/ui/fleet', fleetPage, 'fleet'],
  ['/ui/schedules', schedulesPage, 'schedules'],
  ['/ui/schedules/:id', schedulePage, 'schedules'],
  ['/ui/webhooks', webhooksPage, 'webhooks'],
  ['/ui/webhooks/:id', webhookPage, 'webhooks'],
  ['/ui/limits', limitsPage, 'limits'],
];

function match(pathname) {
  const path = pathname.replace(/\/+$/, '') || '/';
  for (const [pattern, page, tab] of routes) {
    const want = pattern.split('/');
    const got = path.split('/');
    if (want.length !== got.length) continue;
    const params = {};
    if (want.every((part, i) => (part.startsWith(':') ? ((params[part.slice(1)] = decodeURIComponent(got[i])), true) : part === got[i]))) {
      return { page, tab, params };
    }
  }
  return null;
}

const main = document.getElementById('app');
let cleanup = null;
let who = null;
// Each render has a number; a render that finds a newer one started while it
// waited (for the session check or an async page) gives way to it.
let generation = 0;

export function navigate(href, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  render();
}

/** Stops the open page's streams and timers. */
function leavePage() {
  if (cleanup) { try { cleanup(); } catch { /* a page's teardown must not stop the next page */ } cleanup = null; }
}

async function render() {
  leavePage();
  const mine = ++generation;
  const url = new URL(location.href);
  const found = match(url.pathname);
  const signingIn = found && found.page === signinPage;
  if (!who && !signingIn) {
    // No CSRF cookie means no session: go to sign-in without asking.
    if (!api.csrfToken()) {
      navigate(`/ui/signin?next=${encodeURIComponent(url.pathname + url.search)}`, { replace: true });
      return;
    }
    let me;
    try {
      me = await api.me();
    } catch (e) {
      if (mine === generation) fill(main, errorBox(e));
      return;
    }
    if (mine !== generation) return;
    who = me;
    if (!who) {
      navigate(`/ui/signin?next=${encodeURIComponent(url.pathname + url.search)}`, { replace: true });
      return;
    }
  }
  const top = document.getElementById('top');
  top.hidden = signingIn;
  document.getElementById('who').textContent = who ? `${who.scope} · ${who.owner_type}` : '';
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (found && a.dataset.nav === found.tab) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  // Each page draws into its own root: a page that was left while it still
  // loaded draws into a detached element, never over the next page.
  const root = h('div', { class: 'page' });
  fill(main, root);
  if (!found) {
    fill(root, h('h1', {}, 'Not found'), h('p', {}, 'No page lives at this address. ', h('a', { href: '/ui/workflows', 'data-link': true }, 'Back to workflows')));
    return;
  }
  const ctx = { params: found.params, query: url.searchParams, navigate, who, setTitle };
  let teardown = found.page(root, ctx) || null;
  if (teardown && typeof teardown.then === 'function') teardown = (await teardown) || null;
  // Left while an async page was still loading: stop what it started.
  if (mine !== generation) { if (teardown) teardown(); return; }
  cleanup = teardown;
}

function setTitle(text) {
  document.title = text ? `${text} · orch` : 'orch';
}

/** Called after a successful sign-in. */
export function signedIn(me) {
  who = me;
}

api.whenSignedOut(() => {
  who = null;
  const here = location.pathname + location.search;
  if (!location.pathname.startsWith('/ui/signin')) navigate(`/ui/signin?expired=1&next=${encodeURIComponent(here)}`, { replace: true });
});

document.addEventListener('click', (event) => {
  const a = event.target.closest('a[data-link]');
  if (!a || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(a.getAttribute('href'));
});

document.getElementById('signout').addEventListener('click', async () => {
  // The page stops first: a stream or timer that ran on while the session is
  // revoked would meet a 401 and race this navigation to sign-in.
  leavePage();
  generation++;
  who = null;
  await api.signOut();
  navigate('/ui/signin', { replace: true });
});

window.addEventListener('popstate', render);
setInterval(tickTimes, 15000);
render();
