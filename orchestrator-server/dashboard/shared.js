// One event stream for every dashboard tab of this browser.
//
// A browser opens at most six HTTP/1.1 connections to one host, and a
// stream holds one for as long as the page is open: with a stream per tab,
// the seventh tab never loads. So the tabs elect a leader with a Web Lock;
// only the leader follows /events/stream (unfiltered, the tenant's events)
// and passes each frame to the others over a BroadcastChannel. Each tab
// filters the frames for its own page. When the leader closes (or has no
// page that listens any more) it lets the lock go, and the next tab takes
// over, resuming after the last event id any tab saw.
//
// A page that starts after a known event (`after`) first reads what it
// missed with GET /events, then takes live frames with a larger id.

import { follow, get, query } from './api.js';

const LOCK = 'orch-dashboard-events';
const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('orch-dashboard-events') : null;
const shareable = channel && navigator.locks && typeof navigator.locks.request === 'function';

/** Listeners of this tab: { filter, onFrame, onState, after }. */
const listeners = new Set();
/** The last event id this tab saw (its own stream's or a leader's). */
let lastId = null;
/** Set while this tab leads: stops its stream and lets the lock go. */
let leading = null;
/** Whether this tab is waiting for (or holding) the lock. */
let contending = false;
let state = 'reconnecting';

function deliver(frame) {
  if (frame.id) lastId = frame.id;
  for (const l of listeners) {
    if (l.after !== null && frame.id && Number(frame.id) <= l.after) continue;
    if (matches(l.filter, frame)) l.onFrame(frame);
  }
}

function setState(s) {
  state = s;
  for (const l of listeners) l.onState(s);
}

function matches(filter, frame) {
  const event = frame.data;
  if (frame.event === 'heartbeat' || !event || typeof event !== 'object') return false;
  return Object.entries(filter).every(([k, v]) => String(event[k]) === v);
}

if (channel) {
  channel.onmessage = ({ data }) => {
    if (data.kind === 'frame') deliver(data.frame);
    else if (data.kind === 'state') setState(data.state);
    else if (data.kind === 'hello' && leading) channel.postMessage({ kind: 'state', state });
  };
}

function lead() {
  if (contending || !listeners.size) return;
  contending = true;
  navigator.locks.request(LOCK, () => new Promise((release) => {
    if (!listeners.size) { contending = false; release(); return; }
    const stop = follow('/events/stream', (frame) => {
      deliver(frame);
      channel.postMessage({ kind: 'frame', frame });
    }, {
      from: lastId,
      // Leading is handed on when hidden (below), not paused.
      pauseWhenHidden: false,
      onState: (s) => { setState(s); channel.postMessage({ kind: 'state', state: s }); },
    });
    leading = () => { stop(); leading = null; contending = false; release(); };
  }));
  // A follower learns whether a leader is live already.
  channel.postMessage({ kind: 'hello' });
}

/**
 * Follows the tenant's events that match `filter` (`workflow_id`,
 * `entity_id`, as the stream's query would), through the shared stream.
 * Returns a function that stops it.
 */
export function followEvents(filter, onFrame, { onState = () => {}, after = null } = {}) {
  const wanted = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [k, String(v)]));
  if (!shareable) {
    // No Web Locks or BroadcastChannel: a stream of this tab's own.
    return follow(`/events/stream${query({ ...wanted, after })}`, onFrame, { onState });
  }
  const listener = { filter: wanted, onFrame, onState, after: after === null ? null : Number(after) };
  let stopped = false;
  if (listener.after !== null) {
    // What happened since `after`, before the live frames.
    (async () => {
      let from = listener.after;
      for (;;) {
        const page = await get(`/events${query({ ...wanted, after: from, limit: 500 })}`).catch(() => null);
        if (stopped || !page) break;
        for (const event of page.data) {
          onFrame({ event: event.type, id: String(event.id), data: event });
          listener.after = Math.max(listener.after, event.id);
        }
        if (!page.meta || !page.meta.has_more) break;
        from = page.meta.next_after;
      }
    })();
  }
  listeners.add(listener);
  onState(state);
  lead();
  return () => {
    stopped = true;
    listeners.delete(listener);
    if (!listeners.size && leading) leading();
  };
}

// The leader's tab closing releases its lock by itself. A leader that is
// hidden hands the stream to a tab waiting for it (a visible one, if any)
// by queuing again behind it; alone, it takes the lock straight back.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden' && leading) {
    leading();
    lead();
  }
});
