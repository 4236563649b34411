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

// [pattern, page, nav tab]: the first match wins; `:id` captures a segment.
const routes = [
  ['/ui/signin', signinPage, null],
  ['/', railPage, 'workflows'],
  ['/ui', railPage, 'workflows'],
  ['/ui/workflows', railPage, 'workflows'],
  ['/ui/workflows/:id', workflowPage, 'workflows'],
  ['/ui/tasks/:id', taskPage, 'workflows'],
  ['/ui/logs', logsPage, 'logs'],
  ['/ui/launch', launchPage, 'launch'],
  ['/ui/playbooks', playbooksPage, 'playbooks'],
  ['/ui/catalog', catalogPage, 'catalog'],
  ['/ui/workspaces', workspacesPage, 'workspaces'],
  ['/ui/workspaces/:id', workspacePage, 'workspaces'],
  ['/ui/fleet', fleetPage, 'fleet'],
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
  const url = new URL(location.href);
  const found = match(url.pathname);
  const signingIn = found && found.page === signinPage;
  if (!who && !signingIn) {
    // No CSRF cookie means no session: go to sign-in without asking.
    if (!api.csrfToken()) {
      navigate(`/ui/signin?next=${encodeURIComponent(url.pathname + url.search)}`, { replace: true });
      return;
    }
    try {
      who = await api.me();
    } catch (e) {
      fill(main, errorBox(e));
      return;
    }
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
  fill(main);
  if (!found) {
    fill(main, h('h1', {}, 'Not found'), h('p', {}, 'No page lives at this address. ', h('a', { href: '/ui/workflows', 'data-link': true }, 'Back to workflows')));
    return;
  }
  const ctx = { params: found.params, query: url.searchParams, navigate, who, setTitle };
  cleanup = found.page(main, ctx) || null;
  if (cleanup && typeof cleanup.then === 'function') cleanup = await cleanup;
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
  await api.signOut();
  who = null;
  navigate('/ui/signin', { replace: true });
});

window.addEventListener('popstate', render);
setInterval(tickTimes, 15000);
render();
