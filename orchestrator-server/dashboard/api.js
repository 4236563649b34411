// The dashboard's only way to the server: same-origin fetches carrying the
// session cookies. Writes repeat the CSRF cookie in `x-csrf-token`; a 401
// tries one refresh, then sends the operator back to sign-in.

const BASE = '/api/v1';
const EXPIRY_KEY = 'orch.session.expires_at';

/** An error from the server's envelope (or from the network). */
export class ApiError extends Error {
  constructor(status, envelope) {
    const err = (envelope && envelope.error) || {};
    const message = typeof err === 'string' ? err : err.message;
    super(message || `request failed with status ${status}`);
    this.status = status;
    this.code = err.code;
    this.hint = err.recovery_hint;
    const issues = err.details && err.details.issues;
    this.fields = issues && issues.fieldErrors && Object.keys(issues.fieldErrors).length ? issues.fieldErrors : null;
  }
}

/** Called when the session is gone (set by the app: show sign-in). */
let onSignedOut = () => {};
export function whenSignedOut(handler) { onSignedOut = handler; }

export function csrfToken() {
  const found = document.cookie.split(';').map((c) => c.trim()).find((c) => c.startsWith('service_csrf_token='));
  return found ? decodeURIComponent(found.slice('service_csrf_token='.length)) : '';
}

function headersFor(method, body) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = csrfToken();
  return headers;
}

// Every request of a signed-in session carries this signal; signing out
// aborts them, so none meets a 401 (and a refresh, and a console error) after
// the session is gone. The auth routes themselves are never aborted.
let session = new AbortController();

/** Aborts every request and stream still in flight (before signing out). */
export function abortAll() {
  session.abort();
  session = new AbortController();
}

async function send(method, path, body) {
  let response;
  try {
    response = await fetch(BASE + path, {
      method,
      credentials: 'same-origin',
      headers: headersFor(method, body),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: path.startsWith('/auth/') ? undefined : session.signal,
    });
  } catch (e) {
    if (e && e.name === 'AbortError') throw Object.assign(new ApiError(0, { error: { message: 'The request was stopped.' } }), { aborted: true, cause: e });
    throw Object.assign(new ApiError(0, { error: { message: 'The server cannot be reached.', recovery_hint: 'Check that orch serve is running, then retry.' } }), { cause: e });
  }
  const text = await response.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = null; }
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

/** A request; `{data, meta}` back. A 401 refreshes once, then signs out. */
export async function request(method, path, body) {
  try {
    return await send(method, path, body);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 401 || path.startsWith('/auth/')) throw e;
    const epoch = session;
    if (await refresh()) return send(method, path, body);
    // Signed out meanwhile: the sign-out already moved on; nothing to report.
    if (epoch === session && !signingOut) onSignedOut();
    throw e;
  }
}

export const get = (path) => request('GET', path);
export const post = (path, body = {}) => request('POST', path, body);
export const patch = (path, body = {}) => request('PATCH', path, body);
export const del = (path) => request('DELETE', path);

/** `?a=1&b=2` from an object, skipping empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '' && v !== false) q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

// --- the session -----------------------------------------------------------

let refreshTimer = null;

function schedule(expiresAt) {
  clearTimeout(refreshTimer);
  if (!expiresAt) return;
  localStorage.setItem(EXPIRY_KEY, expiresAt);
  // A minute before the access token expires (at least 5 s from now).
  const wait = Math.max(5000, new Date(expiresAt).getTime() - Date.now() - 60000);
  refreshTimer = setTimeout(() => { refresh().then((ok) => { if (!ok) onSignedOut(); }); }, Math.min(wait, 2 ** 31 - 1));
}

export async function signIn(apiKey, persistent) {
  const { data } = await send('POST', '/auth/login', { api_key: apiKey, persistent_session: persistent });
  schedule(data.expires_at);
  return data;
}

let refreshing = null;

/**
 * Rotates the session through the refresh cookie; false when it is gone.
 * One rotation at a time: requests that meet a 401 together share it (a
 * second rotation would present the refresh token the first one replaced).
 */
export function refresh() {
  if (!refreshing) {
    refreshing = send('POST', '/auth/refresh', {})
      .then(({ data }) => { schedule(data.expires_at); return true; }, () => false)
      .finally(() => { refreshing = null; });
  }
  return refreshing;
}

let signingOut = false;

export async function signOut() {
  signingOut = true;
  clearTimeout(refreshTimer);
  localStorage.removeItem(EXPIRY_KEY);
  abortAll();
  // A refresh already under way finishes first: logging out while it rotates
  // the session would leave its new cookies behind.
  if (refreshing) await refreshing;
  try { await send('POST', '/auth/logout', {}); } catch { /* logout never fails on the server; the cookies are cleared anyway */ }
  signingOut = false;
}

/** Who is signed in, or null. Resumes the refresh schedule of a saved session. */
export async function me() {
  try {
    const { data } = await request('GET', '/auth/me');
    schedule(localStorage.getItem(EXPIRY_KEY));
    return data;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return null;
    throw e;
  }
}

// --- server-sent events ----------------------------------------------------

/**
 * Follows an SSE route with fetch (so the cookie session and our error
 * handling apply), calling `onFrame({event, id, data})` per frame. Reconnects
 * after a drop, resuming after the last id (`Last-Event-ID`); `from` is an
 * id already seen, to start after it. While the tab is hidden the stream is
 * closed (`pauseWhenHidden`, the default: each open stream holds one of the
 * six connections a browser allows per host) and resumes where it was when
 * the tab shows again. Returns a function that stops it.
 */
export function follow(path, onFrame, { onState = () => {}, from = null, pauseWhenHidden = true } = {}) {
  let controller = new AbortController();
  // Signing out (abortAll) stops the stream too.
  const epoch = session.signal;
  const stopOnSignOut = () => stop();
  epoch.addEventListener('abort', stopOnSignOut);
  let lastId = from;
  let stopped = false;
  let wake = null;
  const hidden = () => pauseWhenHidden && document.visibilityState === 'hidden';
  const onVisibility = () => {
    if (hidden()) controller.abort();
    else if (wake) wake();
  };
  document.addEventListener('visibilitychange', onVisibility);
  function stop() {
    stopped = true;
    controller.abort();
    epoch.removeEventListener('abort', stopOnSignOut);
    document.removeEventListener('visibilitychange', onVisibility);
    if (wake) wake();
  }
  (async () => {
    while (!stopped) {
      if (hidden()) {
        onState('paused');
        await new Promise((r) => { wake = r; });
        wake = null;
        continue;
      }
      controller = new AbortController();
      try {
        const headers = { accept: 'text/event-stream' };
        if (lastId !== null) headers['last-event-id'] = lastId;
        const response = await fetch(BASE + path, { credentials: 'same-origin', headers, signal: controller.signal });
        if (stopped) return;
        if (response.status === 401) {
          const ok = await refresh();
          if (stopped) return;
          if (!ok) { if (!signingOut) onSignedOut(); return; }
          continue;
        }
        if (!response.ok) throw new Error(`stream answered ${response.status}`);
        onState('live');
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = parseFrame(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
            if (!frame) continue;
            if (stopped) return;
            if (frame.id) lastId = frame.id;
            onFrame(frame);
          }
        }
      } catch (e) {
        if (stopped) return;
      }
      if (stopped) return;
      if (hidden()) continue;
      onState('reconnecting');
      await new Promise((r) => { wake = r; setTimeout(r, 1500); });
      wake = null;
    }
  })();
  return stop;
}

function parseFrame(text) {
  const frame = { event: 'message', id: null, data: '' };
  let hasData = false;
  for (const line of text.split('\n')) {
    if (!line || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') frame.event = value;
    else if (field === 'id') frame.id = value;
    else if (field === 'data') { frame.data += (hasData ? '\n' : '') + value; hasData = true; }
  }
  if (!hasData) return null;
  try { frame.data = JSON.parse(frame.data); } catch { /* keep the text */ }
  return frame;
}

/**
 * Wraps a page's re-read so that reads never overlap: a call while one runs
 * queues one more run after it (calls meanwhile share that run). An older
 * answer therefore never lands after a newer one, and the last change is
 * always read. The returned function resolves when its run is done.
 */
export function serial(fn) {
  let running = null;
  let queued = null;
  const run = () => {
    running = Promise.resolve().then(fn).finally(() => { running = null; });
    return running;
  };
  return () => {
    if (!running) return run();
    if (!queued) {
      const next = () => { queued = null; return run(); };
      queued = running.then(next, next);
    }
    return queued;
  };
}
