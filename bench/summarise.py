#!/usr/bin/env python3
"""Turns one bench/run-all.sh result directory into a Markdown summary: the
figures, orch's lifecycle rate as ratios to every baseline and peer of the
same run, and the targets of issue 14 with met/missed.

    python3 bench/summarise.py bench/results/<time> > summary.md

Standard library only; bench/charts.py reuses `collect()` for its pictures.
"""
import json
import pathlib
import re
import sys

BACKENDS = ("sqlite", "postgres")
TITLES = {"sqlite": "SQLite", "postgres": "PostgreSQL"}

# Issue 14's targets on the 2-core machine (client and server sharing it).
TARGETS = {
    "sqlite": {"lifecycle": 5000, "vs_engine": 1.0, "claim_p99": 5, "ingest": 250000, "wake_p99": 10, "rss": 150},
    "postgres": {"lifecycle": 3000, "vs_pgbench": 3.0, "vs_peer": 1.0, "claim_p99": 10, "ingest": 200000, "wake_p99": 10, "rss": 150},
}

CHARTS = {
    "tasks-per-s.svg": "lifecycle tasks/s, orch beside each baseline and peer",
    "claim-latency.svg": "claim latency of the claim-latency run (open loop at half the max rate)",
}


def load(out, name):
    path = out / name
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return None


def claim_latency_runs(out, backend):
    """The open-loop claim-latency runs of a backend, by their p99 (a set
    runs several: one run's p99 turns on whether the host paused during its
    ten seconds), and the run with the median p99 (the one reported)."""
    runs = [r for r in (load(out, p.name) for p in sorted(out.glob(f"{backend}-claim-latency-*.json")))
            if r and r.get("results", {}).get("claim_p99_ms") is not None]
    if not runs:
        return [], load(out, f"{backend}-claim-latency.json")
    runs.sort(key=lambda r: r["results"]["claim_p99_ms"])
    return [r["results"]["claim_p99_ms"] for r in runs], runs[(len(runs) - 1) // 2]


def pgbench_tps(out, name="postgres-raw.txt"):
    path = out / name
    if not path.exists():
        return None
    m = re.search(r"tps = ([0-9.]+)", path.read_text())
    return float(m.group(1)) if m else None


def pgbench_batch(out):
    """(tasks/s, lifecycles per transaction, writers) of the batched pgbench
    run: its script names the lifecycles, its output the clients."""
    script, result = out / "pg_lifecycle_batched.sql", out / "postgres-raw-batch.txt"
    tps = pgbench_tps(out, result.name)
    if tps is None or not script.exists():
        return None
    k = re.search(r"lifecycles per transaction: (\d+)", script.read_text())
    clients = re.search(r"number of clients: (\d+)", result.read_text())
    if not k:
        return None
    return tps * int(k.group(1)), int(k.group(1)), int(clients.group(1)) if clients else None


def baselines(out, backend):
    """The baselines and peers of one backend in this run, each a dict:
    label, tasks_per_s (what orch's end-to-end lifecycle is divided by),
    kind ("engine", "ceiling", "raw", "peer", "peer_drain") and `like`: (orch figure key, their
    figure, what) for a like-for-like ratio where one exists."""
    rows = []
    # orch itself with group commit off (every request commits alone), same
    # session: the before/after of issue 14's write path.
    alone = load(out, f"{backend}-lifecycle-no-group-commit.json")
    if alone:
        res = alone["results"]
        rows.append(dict(key="orch_alone", kind="orch_alone", tasks_per_s=res["tasks_per_s"],
                         label="orch over HTTP with group commit off (ORCH_GROUP_COMMIT_MAX=1)",
                         short="orch, group\ncommit off",
                         like=("drain_tasks_per_s", res["drain_tasks_per_s"], "drain")))
    if backend == "sqlite":
        engine = load(out, "sqlite-engine.json")
        if engine:
            rows.append(dict(key="engine", kind="engine", tasks_per_s=engine["tasks_per_s"],
                             label=f"engine only, one commit per step (Python sqlite3, one thread, {engine.get('filesystem', '?')})",
                             short="engine only\n(commit per step)",
                             like=("drain_tasks_per_s", engine["drain_tasks_per_s"], "drain")))
        batch = load(out, "sqlite-engine-batch.json")
        if batch:
            rows.append(dict(key="engine_batch", kind="ceiling", tasks_per_s=batch["tasks_per_s"],
                             label=f"engine only, one commit per {batch['batch']} steps (group-commit ceiling, {batch.get('filesystem', '?')})",
                             short=f"engine only\n(commit per {batch['batch']} steps)",
                             like=("drain_tasks_per_s", batch["drain_tasks_per_s"], "drain")))
        raw = load(out, "sqlite-raw.json")
        if raw:
            rows.append(dict(key="sqlx", kind="raw", tasks_per_s=raw["tasks_per_s"],
                             label=f"raw SQL through sqlx, one commit per step ({raw['agents']} tasks at once)",
                             short="raw SQL via sqlx\n(commit per step)",
                             like=("drain_tasks_per_s", raw["drain_tasks_per_s"], "drain")))
    else:
        tps = pgbench_tps(out)
        if tps:
            rows.append(dict(key="pgbench", kind="raw", tasks_per_s=tps,
                             label="raw SQL under pgbench, one commit per step",
                             short="raw SQL via pgbench\n(commit per step)", like=None))
        batch = pgbench_batch(out)
        if batch:
            rate, k, writers = batch
            rows.append(dict(key="pgbench_batch", kind="ceiling", tasks_per_s=round(rate, 1),
                             label=f"raw SQL under pgbench, {k} lifecycles ({4 * k} steps) per commit, {writers} writers, statements one round trip each (batched commits, uncoalesced)",
                             short=f"raw SQL via pgbench\n(commit per {4 * k} steps)", like=None))
        for suffix, how in (("", "out of the box"), ("-batched", "own batching on")):
            gw = load(out, f"postgres-graphile-worker{suffix}.json")
            if not gw:
                continue
            key = "graphile" + suffix.replace("-", "_")
            rows.append(dict(key=key, kind="peer", tasks_per_s=gw["end_to_end_jobs_per_s"],
                             label=f"graphile-worker {gw['version']} ({how}), end to end (enqueue + drain)",
                             short=f"graphile-worker\n{how}",
                             like=("create_per_s", gw["enqueue_jobs_per_s"], "create vs enqueue")))
            rows.append(dict(key=key + "_drain", kind="peer_drain", tasks_per_s=gw["drain_jobs_per_s"],
                             label=f"graphile-worker {gw['version']} ({how}), drain only",
                             short=f"graphile-worker drain\n{how}",
                             like=("drain_tasks_per_s", gw["drain_jobs_per_s"], "drain")))
    return rows


def ingest_baselines(out, backend):
    """The engine-only ingest baselines of this run: (label, rows/s) rows."""
    rows = []
    if backend == "sqlite":
        engine = load(out, "sqlite-engine-ingest.json")
        if engine:
            batch = engine["batch"]
            rows.append((f"engine only, one INSERT of {batch} rows with every value bound, one commit per batch "
                         f"(Python sqlite3 {engine['sqlite_version']}, one thread)", engine["bound"]["rows_per_s"]))
            rows.append((f"engine only, the same {batch} rows generated inside the engine (no binding: "
                         "the table and its indexes alone)", engine["generated"]["rows_per_s"]))
    else:
        path = out / "postgres-raw-ingest.txt"
        tps = pgbench_tps(out, path.name)
        if tps is not None:
            clients = re.search(r"number of clients: (\d+)", path.read_text())
            rows.append((f"engine only, 500 rows generated by the server per transaction (pgbench, "
                         f"{clients.group(1) if clients else '?'} clients; no parameters cross the wire)",
                         tps * 500))
    return rows


def collect(out):
    """Everything the summary and the charts show, per backend."""
    out = pathlib.Path(out)
    data = {}
    for backend in BACKENDS:
        reports = {w: load(out, f"{backend}-{w}.json") for w in ("noop", "lifecycle", "ingest", "stream", "limits",
                                                                "lifecycle-batch", "lifecycle-scale",
                                                                "lifecycle-retention")}
        claim_p99s, reports["claim-latency"] = claim_latency_runs(out, backend)
        rows = baselines(out, backend)
        ingest = ingest_baselines(out, backend)
        if not any(reports.values()) and not rows:
            continue
        data[backend] = dict(reports=reports, baselines=rows, ingest_baselines=ingest, claim_p99s=claim_p99s)
    return data


def f(v, digits=1):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return f"{v:,}"


def ratio(a, b):
    if not a or not b:
        return "n/a"
    return f"{a / b:.2f}x"


def targets(backend, d):
    """(figure, target, result, verdict) rows of issue 14's targets."""
    t = TARGETS[backend]
    r = d["reports"]
    life = r["lifecycle"]["results"] if r["lifecycle"] else {}
    tps = life.get("tasks_per_s")
    by_key = {b["key"]: b for b in d["baselines"]}
    rows = []

    def row(figure, target, result, met, shown=None):
        verdict = "not measured" if result is None else ("met" if met else "**missed**")
        rows.append((figure, target, shown if shown is not None else f(result), verdict))

    row("lifecycle tasks/s end to end over HTTP", f">= {t['lifecycle']:,}", tps, tps is not None and tps >= t["lifecycle"])
    if backend == "sqlite":
        e = by_key.get("engine")
        x = tps / e["tasks_per_s"] if tps and e else None
        row("lifecycle / engine-only per-step rate", f">= {t['vs_engine']:.1f}x", x, x is not None and x >= t["vs_engine"],
            None if x is None else f"{x:.2f}x")
    else:
        p = by_key.get("pgbench")
        x = tps / p["tasks_per_s"] if tps and p else None
        row("lifecycle / pgbench per-step rate", f">= {t['vs_pgbench']:.1f}x", x, x is not None and x >= t["vs_pgbench"],
            None if x is None else f"{x:.2f}x")
        peers = [b for b in d["baselines"] if b["kind"] == "peer"]
        best = max(peers, key=lambda b: b["tasks_per_s"]) if peers else None
        x = tps / best["tasks_per_s"] if tps and best else None
        row("lifecycle / graphile-worker end to end (its best variant in this run)", f"> {t['vs_peer']:.1f}x", x,
            x is not None and x > t["vs_peer"], None if x is None else f"{x:.2f}x")
    claim = r["claim-latency"]["results"].get("claim_p99_ms") if r["claim-latency"] else None
    row("claim p99 ms at half the max rate", f"<= {t['claim_p99']}", claim, claim is not None and claim <= t["claim_p99"],
        None if claim is None else f"{claim}")
    ingest = r["ingest"]["results"].get("rows_per_s") if r["ingest"] else None
    row("log ingest rows/s (batches of 500)", f">= {t['ingest']:,}", ingest, ingest is not None and ingest >= t["ingest"])
    rss = (r["lifecycle"] or {}).get("server", {}).get("peak_rss_mib") if r["lifecycle"] else None
    row("server peak RSS under lifecycle, MiB", f"<= {t['rss']}", rss, rss is not None and rss <= t["rss"])
    wake = r["stream"]["results"].get("wakeup_p99_ms") if r["stream"] else None
    row("wake-up p99 ms", f"<= {t['wake_p99']}", wake, wake is not None and wake <= t["wake_p99"],
        None if wake is None else f"{wake}")
    limits = r.get("limits")
    x = limits["results"].get("ratio") if limits else None
    row("lifecycle with flow limits (100 keys of limit 4, one rate key) / plain, same run", ">= 0.8x", x,
        x is not None and x >= 0.8, None if x is None else f"{x:.2f}x")
    rows.extend(second_round_targets(backend, d, tps, by_key))
    return rows


def second_round_targets(backend, d, tps, by_key):
    """(figure, target, result, verdict) rows of issue 35's targets, each a
    ratio to a baseline, a peer or an earlier phase of the same run."""
    r = d["reports"]
    rows = []

    def row(figure, target, x, met):
        rows.append((figure, target, "n/a" if x is None else f"{x:.2f}x",
                     "not measured" if x is None else ("met" if met(x) else "**missed**")))

    def res(name):
        return (r.get(name) or {}).get("results") or {}

    batch = res("lifecycle-batch")
    # The contract lifecycle's SQLite target (>= 1.0x the engine per step)
    # is issue 14's row above.
    if backend == "sqlite":
        c = by_key.get("engine_batch")
        b = batch.get("tasks_per_s")
        row("batched protocol / engine's group-commit ceiling", ">= 0.5x",
            b / c["tasks_per_s"] if b and c else None, lambda x: x >= 0.5)
    else:
        p = by_key.get("pgbench")
        row("contract lifecycle / pgbench per-step rate", ">= 2.0x",
            tps / p["tasks_per_s"] if tps and p else None, lambda x: x >= 2.0)
        g = by_key.get("graphile_batched_drain")
        b = batch.get("drain_tasks_per_s")
        row("batched protocol drain / graphile-worker's batched drain", ">= 1.0x",
            b / g["tasks_per_s"] if b and g else None, lambda x: x >= 1.0)
        ingest = res("ingest").get("rows_per_s")
        base = [rate for label, rate in d["ingest_baselines"] if "pgbench" in label]
        row("log ingest / pgbench's generated-rows ingest", ">= 1.0x",
            ingest / base[0] if ingest and base else None, lambda x: x >= 1.0)
    scale = res("lifecycle-scale")
    n = ((r.get("lifecycle-scale") or {}).get("parameters") or {}).get("preload")
    row(f"lifecycle after {f(n)} preloaded finished tasks / empty database, same run", ">= 0.8x",
        scale.get("scale_ratio"), lambda x: x >= 0.8)
    row("claim p99 after the preload / empty database, same run", "<= 2.0x",
        scale.get("claim_p99_ratio"), lambda x: x <= 2.0)
    purge = res("lifecycle-retention").get("retention_tasks_per_s")
    row("retention: aged finished tasks deleted per second / 1,000 tasks/s of inflow", ">= 1.0x",
        purge / 1000 if purge else None, lambda x: x >= 1.0)
    return rows


def figures_table(backend, d):
    r = d["reports"]
    noop, life, claim, ingest, stream = (r[w] for w in ("noop", "lifecycle", "claim-latency", "ingest", "stream"))
    t = TARGETS[backend]
    noop_rps = noop["results"]["requests_per_s"] if noop else None
    ceiling = noop_rps / 4 if noop_rps else None
    print("| figure | result | target | ratio |")
    print("|---|---|---|---|")
    if noop:
        print(f"| no-op `GET /auth/me`, requests/s ({noop['parameters']['clients']} clients) | {f(noop_rps)} | - | ceiling for lifecycle = requests/s / 4 = {f(ceiling)} tasks/s |")
    if life:
        res = life["results"]
        tps = res["tasks_per_s"]
        print(f"| lifecycle tasks/s end to end ({res['tasks_completed']} tasks, {life['parameters']['agents']} agents) | {f(tps)} | >= {f(t['lifecycle'])} | {ratio(tps, ceiling)} of the no-op ceiling; baselines below |")
        print(f"| lifecycle drain (claim+start+complete) tasks/s | {f(res['drain_tasks_per_s'])} | - | - |")
        print(f"| lifecycle create tasks/s | {f(res['create_per_s'])} | - | - |")
        for route, lat in life["latency_ms"].items():
            print(f"| lifecycle `{route}` p50 / p95 / p99 / max ms | {lat['p50_ms']} / {lat['p95_ms']} / {lat['p99_ms']} / {lat['max_ms']} | - | - |")
        if life.get("server"):
            print(f"| server peak RSS under lifecycle, MiB | {life['server']['peak_rss_mib']} | <= {t['rss']} | - |")
    if claim:
        res = claim["results"]
        print(f"| claim max rate (closed loop, claim+complete)/s | {f(res['max_rate_per_s'])} | - | - |")
        runs = d["claim_p99s"]
        note = f"p99 of the {len(runs)} runs: {' / '.join(str(x) for x in runs)} ms; the median run shown" if len(runs) > 1 else "-"
        print(f"| claim p50 / p99 ms at {f(res['target_rate_per_s'])}/s (half max, open loop) | {res['claim_p50_ms']} / {res['claim_p99_ms']} | p99 <= {t['claim_p99']} | {note} |")
    if ingest:
        res = ingest["results"]
        lat = ingest["latency_ms"].get("POST /logs/ingest", {})
        print(f"| log ingest rows/s (batches of {ingest['parameters']['batch']}, {ingest['parameters']['clients']} clients) | {f(res['rows_per_s'])} | >= {f(t['ingest'])} | request p50 / p99 {lat.get('p50_ms')} / {lat.get('p99_ms')} ms |")
    if stream:
        res = stream["results"]
        print(f"| wake-up latency p50 / p99 ms | {res['wakeup_p50_ms']} / {res['wakeup_p99_ms']} | p99 <= {t['wake_p99']} | missed {res['missed']} |")
    print()


def baselines_table(d):
    life = d["reports"]["lifecycle"]
    res = life["results"] if life else {}
    tps = res.get("tasks_per_s")
    if not d["baselines"]:
        return
    print(f"orch lifecycle end to end: **{f(tps)} tasks/s**, as a ratio to each baseline and peer measured in this run:\n")
    print("| baseline / peer | its tasks/s | orch / it | like for like |")
    print("|---|---|---|---|")
    for b in d["baselines"]:
        like = "-"
        if b["like"]:
            key, theirs, what = b["like"]
            like = f"{what}: {f(res.get(key))} / {f(theirs)} = {ratio(res.get(key), theirs)}"
        print(f"| {b['label']} | {f(b['tasks_per_s'])} | {ratio(tps, b['tasks_per_s'])} | {like} |")
    print()


def ingest_table(d):
    ingest = d["reports"]["ingest"]
    rps = ingest["results"]["rows_per_s"] if ingest else None
    if not d.get("ingest_baselines"):
        return
    print(f"orch log ingest end to end: **{f(rps)} rows/s**, as a ratio to the engine-only ingest baselines of this run:\n")
    print("| baseline | its rows/s | orch / it |")
    print("|---|---|---|")
    for label, theirs in d["ingest_baselines"]:
        print(f"| {label} | {f(theirs)} | {ratio(rps, theirs)} |")
    print()


def main():
    out = pathlib.Path(sys.argv[1])
    data = collect(out)
    print(f"Results: `{out}`\n")
    machine = out / "machine.txt"
    if machine.exists():
        print("```\n" + machine.read_text().strip() + "\n```\n")
    if data:
        print("### Targets\n")
        print("| backend | figure | target | result | verdict |")
        print("|---|---|---|---|---|")
        for backend, d in data.items():
            for figure, target, result, verdict in targets(backend, d):
                print(f"| {TITLES[backend]} | {figure} | {target} | {result} | {verdict} |")
        print()
    for backend, d in data.items():
        print(f"### {TITLES[backend]}\n")
        figures_table(backend, d)
        baselines_table(d)
        ingest_table(d)
    charts = [(name, what) for name, what in CHARTS.items() if (out / name).exists()]
    if charts:
        print("### Charts\n")
        for name, what in charts:
            print(f"![{what}]({name})\n")


if __name__ == "__main__":
    main()
