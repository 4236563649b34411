#!/usr/bin/env node
// Peer benchmark for orch: graphile-worker (the PostgreSQL job queue people
// pick for this job) on the same PostgreSQL, measured in the same session as
// `orch bench lifecycle` (bench/run-all.sh runs it on a fresh database).
//
//   node bench/peers/graphile-worker/bench.js --url postgres://... \
//     [--jobs 10000] [--clients 32] [--concurrency 32] \
//     [--local-queue 0] [--complete-batch-delay -1]
//
// 1. Installs graphile-worker's schema (not timed).
// 2. Enqueue: --clients concurrent loops, each adding one no-op job per call
//    with `addJob` (one `graphile_worker.add_job` statement, one commit), as
//    orch's lifecycle creates each task with one request.
// 3. Drain: one worker process (`run`) with --concurrency jobs at once and a
//    no-op task, until every job is gone from the jobs table (completed jobs
//    are deleted, so an empty table means every completion is committed).
//
// --local-queue and --complete-batch-delay turn on graphile-worker's own
// batching (fetch N jobs per query, complete several jobs per statement);
// both are off by default, as they are out of the box.
//
// Prints one JSON object: enqueue, drain and end-to-end jobs/s
// (end to end = jobs / (enqueue time + drain time)).
"use strict";

const { Pool } = require("pg");
const { run, runMigrations, makeWorkerUtils, Logger } = require("graphile-worker");

/** A bad command line: reported as one line, without a stack. */
class UsageError extends Error {}

function parseArgs(argv) {
  const opts = {
    url: process.env.ORCH_BENCH_GW_URL,
    jobs: 10000,
    clients: 32,
    concurrency: 32,
    localQueue: 0,
    completeBatchDelay: -1,
  };
  const names = {
    "--url": "url",
    "--jobs": "jobs",
    "--clients": "clients",
    "--concurrency": "concurrency",
    "--local-queue": "localQueue",
    "--complete-batch-delay": "completeBatchDelay",
  };
  for (let i = 2; i < argv.length; i += 2) {
    const key = names[argv[i]];
    if (!key || argv[i + 1] === undefined) {
      throw new UsageError(`unknown or incomplete argument ${argv[i]} (known: ${Object.keys(names).join(", ")})`);
    }
    opts[key] = key === "url" ? argv[i + 1] : Number(argv[i + 1]);
    if (key !== "url" && !Number.isInteger(opts[key])) {
      throw new UsageError(`${argv[i]} needs an integer, got ${argv[i + 1]}`);
    }
  }
  if (!opts.url) throw new UsageError("--url (or ORCH_BENCH_GW_URL) is required");
  if (opts.jobs < 1 || opts.clients < 1 || opts.concurrency < 1) {
    throw new UsageError("--jobs, --clients and --concurrency must be at least 1");
  }
  return opts;
}

// Warnings and errors only: graphile-worker logs every worker start at info.
const logger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") console.error(`graphile-worker ${level}: ${message}`);
});

const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;
const round = (v, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A pool whose idle-client errors are reported instead of crashing the run. */
function pool(url, max) {
  const p = new Pool({ connectionString: url, max });
  const report = (err) => console.error(`graphile-worker bench: client error: ${err.message}`);
  p.on("error", report);
  p.on("connect", (client) => client.on("error", report));
  return p;
}

async function remaining(pool) {
  const { rows } = await pool.query("SELECT count(*)::int AS n FROM graphile_worker._private_jobs");
  return rows[0].n;
}

async function enqueue(opts) {
  const pgPool = pool(opts.url, opts.clients);
  const utils = await makeWorkerUtils({ pgPool, logger });
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: opts.clients }, async () => {
      while (next < opts.jobs) {
        const n = next++;
        await utils.addJob("noop", { n });
      }
    }),
  );
  const took = seconds(start);
  await utils.release();
  await pgPool.end();
  return took;
}

async function drain(opts, probe) {
  const pgPool = pool(opts.url, opts.concurrency + 2);
  let done = 0;
  let allRan;
  const ran = new Promise((resolve) => (allRan = resolve));
  const preset = { worker: {} };
  if (opts.localQueue > 0) preset.worker.localQueue = { size: opts.localQueue };
  if (opts.completeBatchDelay >= 0) preset.worker.completeJobBatchDelay = opts.completeBatchDelay;
  const start = process.hrtime.bigint();
  const runner = await run({
    pgPool,
    logger,
    concurrency: opts.concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    preset,
    taskList: {
      noop: async () => {
        done += 1;
        if (done >= opts.jobs) allRan();
      },
    },
  });
  await ran;
  // The last completions may still be in flight (or batched): the drain ends
  // when the jobs table is empty, i.e. every completion is committed.
  while ((await remaining(probe)) > 0) await sleep(2);
  const took = seconds(start);
  await runner.stop();
  await pgPool.end();
  return { took, ran: done };
}

async function main() {
  const opts = parseArgs(process.argv);
  await runMigrations({ connectionString: opts.url, logger });
  const probe = pool(opts.url, 1);
  try {
    if ((await remaining(probe)) !== 0) throw new Error("the jobs table is not empty: use a fresh database");
    const enqueueS = await enqueue(opts);
    const queued = await remaining(probe);
    if (queued !== opts.jobs) throw new Error(`${queued} jobs queued, expected ${opts.jobs}`);
    const { took: drainS, ran } = await drain(opts, probe);
    const { rows } = await probe.query("SHOW server_version");
    console.log(
      JSON.stringify({
        peer: "graphile-worker",
        version: require("graphile-worker/package.json").version,
        jobs: opts.jobs,
        clients: opts.clients,
        concurrency: opts.concurrency,
        local_queue: opts.localQueue,
        complete_job_batch_delay_ms: opts.completeBatchDelay,
        jobs_run: ran,
        enqueue_s: round(enqueueS, 3),
        drain_s: round(drainS, 3),
        enqueue_jobs_per_s: round(opts.jobs / enqueueS),
        drain_jobs_per_s: round(opts.jobs / drainS),
        end_to_end_jobs_per_s: round(opts.jobs / (enqueueS + drainS)),
        node: process.version,
        postgres: rows[0].server_version,
      }),
    );
  } finally {
    await probe.end();
  }
}

main().catch((err) => {
  console.error(`graphile-worker bench: ${err instanceof UsageError ? err.message : err.stack || err}`);
  process.exit(1);
});
