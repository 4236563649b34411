#!/usr/bin/env python3
"""Turns one bench/run-all.sh result directory into a Markdown summary with
the figures, the targets and the ratios to the baselines of the same run."""
import json
import pathlib
import re
import sys

out = pathlib.Path(sys.argv[1])


def load(name):
    path = out / name
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return None


def pgbench_tps():
    path = out / "postgres-raw.txt"
    if not path.exists():
        return None
    m = re.search(r"tps = ([0-9.]+)", path.read_text())
    return float(m.group(1)) if m else None


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


TARGETS = {
    "sqlite": {"lifecycle": 5000, "claim_p99": 5, "ingest": 250000, "wake_p99": 10, "rss": 150},
    "postgres": {"lifecycle": 3000, "claim_p99": 10, "ingest": 200000, "wake_p99": 10, "rss": 150},
}

print(f"Results: `{out}`\n")
machine = out / "machine.txt"
if machine.exists():
    print("```\n" + machine.read_text().strip() + "\n```\n")

for backend in ("sqlite", "postgres"):
    noop = load(f"{backend}-noop.json")
    life = load(f"{backend}-lifecycle.json")
    claim = load(f"{backend}-claim-latency.json")
    ingest = load(f"{backend}-ingest.json")
    stream = load(f"{backend}-stream.json")
    if not any([noop, life, claim, ingest, stream]):
        continue
    t = TARGETS[backend]
    raw = load("sqlite-raw.json")["tasks_per_s"] if backend == "sqlite" and load("sqlite-raw.json") else None
    if backend == "postgres":
        raw = pgbench_tps()
    noop_rps = noop["results"]["requests_per_s"] if noop else None
    ceiling = noop_rps / 4 if noop_rps else None
    print(f"### {backend}\n")
    print("| figure | result | target | ratio |")
    print("|---|---|---|---|")
    if noop:
        print(f"| no-op `GET /auth/me`, requests/s ({noop['parameters']['clients']} clients) | {f(noop_rps)} | - | ceiling for lifecycle = requests/s / 4 = {f(ceiling)} tasks/s |")
    if life:
        r = life["results"]
        tps = r["tasks_per_s"]
        print(f"| lifecycle tasks/s end to end ({r['tasks_completed']} tasks, {life['parameters']['agents']} agents) | {f(tps)} | >= {f(t['lifecycle'])} | {ratio(tps, raw)} of raw SQL ({f(raw)}), {ratio(tps, ceiling)} of the no-op ceiling |")
        print(f"| lifecycle drain (claim+start+complete) tasks/s | {f(r['drain_tasks_per_s'])} | - | - |")
        print(f"| lifecycle create tasks/s | {f(r['create_per_s'])} | - | - |")
        for route, l in life["latency_ms"].items():
            print(f"| lifecycle `{route}` p50 / p95 / p99 / max ms | {l['p50_ms']} / {l['p95_ms']} / {l['p99_ms']} / {l['max_ms']} | - | - |")
        if life.get("server"):
            print(f"| server peak RSS under lifecycle, MiB | {life['server']['peak_rss_mib']} | <= {t['rss']} | - |")
    if claim:
        r = claim["results"]
        print(f"| claim max rate (closed loop, claim+complete)/s | {f(r['max_rate_per_s'])} | - | - |")
        print(f"| claim p50 / p99 ms at {f(r['target_rate_per_s'])}/s (half max, open loop) | {r['claim_p50_ms']} / {r['claim_p99_ms']} | p99 <= {t['claim_p99']} | - |")
    if ingest:
        r = ingest["results"]
        l = ingest["latency_ms"].get("POST /logs/ingest", {})
        print(f"| log ingest rows/s (batches of {ingest['parameters']['batch']}, {ingest['parameters']['clients']} clients) | {f(r['rows_per_s'])} | >= {f(t['ingest'])} | request p50 / p99 {l.get('p50_ms')} / {l.get('p99_ms')} ms |")
    if stream:
        r = stream["results"]
        print(f"| wake-up latency p50 / p99 ms | {r['wakeup_p50_ms']} / {r['wakeup_p99_ms']} | p99 <= {t['wake_p99']} | missed {r['missed']} |")
    print()
