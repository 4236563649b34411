// Agent and worker names for tables: people know their agents and workers by
// the names they registered, not by ids. One read of /agents and /workers
// (every page of each) serves every table drawn within a few seconds.

import * as api from './api.js';
import { h, shortId } from './dom.js';

const FRESH_MS = 5000;
let cached = null;
let readAt = 0;

async function all(path) {
  const found = [];
  for (let page = 1; page <= 20; page++) {
    const { data, meta } = await api.get(`${path}?per_page=100&page=${page}`);
    found.push(...data);
    if (!meta || !meta.pages || page >= meta.pages) break;
  }
  return found;
}

/**
 * `{ known, agents, workers }`: the agent and worker records (agents by id,
 * workers by id), read at most every few seconds. A failed read gives empty
 * maps and `known: false`, so a table still draws (with short ids) and
 * nothing concludes that no agent is online.
 */
export function fleet() {
  if (!cached || Date.now() - readAt > FRESH_MS) {
    readAt = Date.now();
    cached = Promise.all([all('/agents'), all('/workers')]).then(
      ([agents, workers]) => ({
        known: true,
        agents: new Map(agents.map((a) => [a.id, a])),
        workers: new Map(workers.map((w) => [w.worker_id, w])),
      }),
      () => { readAt = 0; return { known: false, agents: new Map(), workers: new Map() }; });
  }
  return cached;
}

/** The agent's name (its id on hover), or its short id when unknown. */
export function agentName(names, id) {
  if (!id) return '—';
  const agent = names && names.agents.get(id);
  return agent ? h('span', { class: 'name', title: id }, agent.name) : shortId(id);
}

/** The worker's name (its id on hover), or its short id when unknown. */
export function workerName(names, id) {
  if (!id) return '—';
  const worker = names && names.workers.get(id);
  return worker ? h('span', { class: 'name', title: id }, worker.name) : shortId(id);
}
