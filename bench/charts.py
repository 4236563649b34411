#!/usr/bin/env python3
"""Draws one bench/run-all.sh result directory as SVG charts (matplotlib from
bench/.venv, see bench/requirements.txt; works offline):

  tasks-per-s.svg    lifecycle tasks/s per backend: orch beside each baseline
                     and peer of the same run, with the target
  claim-latency.svg  the claim-latency run per backend: p50/p95/p99/max of a
                     claim from its arrival (open loop, what the target is
                     about) and of the request alone, with the p99 target;
                     a CDF instead when a route's summary carries
                     `quantiles_ms` ({"0.5": ms, ...} or [[quantile, ms], ...])

    bench/.venv/bin/python bench/charts.py bench/results/<time> [--publish bench/charts] [--png]

--publish DIR also copies the charts to DIR (bench/charts/ is committed and
embedded by BENCHMARKS.md). The SVGs are reproducible: fixed hash salt, no
date, text kept as text.
"""
import argparse
import pathlib
import shutil
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from summarise import CHARTS, TARGETS, TITLES, collect  # noqa: E402

plt.rcParams.update({
    "svg.hashsalt": "orch-bench",
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
})
SVG_META = {"Date": None, "Creator": "orch bench/charts.py"}

COLOURS = {"orch": "#d62728", "engine": "#7f7f7f", "ceiling": "#c7c7c7", "raw": "#1f77b4", "peer": "#2ca02c",
           "peer_drain": "#98df8a", "orch_alone": "#ff9896"}
LEGEND = {"orch": "orch (HTTP, end to end)", "engine": "SQLite engine alone, per-step commits",
          "ceiling": "batched commits (many steps per commit)", "raw": "raw SQL, per-step commits",
          "peer": "graphile-worker, end to end", "peer_drain": "graphile-worker, drain only",
          "orch_alone": "orch with group commit off"}


def tasks_per_s(data, path):
    """One panel per backend, horizontal bars: orch first, then each
    baseline/peer; the target as a dashed line."""
    backends = [b for b in data if data[b]["reports"]["lifecycle"] or data[b]["baselines"]]
    if not backends:
        return False
    rows_of = {}
    for b in backends:
        life = data[b]["reports"]["lifecycle"]
        rows = []
        if life:
            rows.append(("orch lifecycle\n(HTTP, end to end)", life["results"]["tasks_per_s"], "orch"))
        rows += [(x["short"], x["tasks_per_s"], x["kind"]) for x in data[b]["baselines"]]
        rows_of[b] = rows
    height = max(len(r) for r in rows_of.values())
    fig, axes = plt.subplots(1, len(backends), figsize=(5.2 * len(backends), 0.55 * height + 1.6), squeeze=False)
    for ax, b in zip(axes[0], backends):
        rows = rows_of[b]
        labels = [r[0] for r in rows][::-1]
        values = [r[1] for r in rows][::-1]
        kinds = [r[2] for r in rows][::-1]
        bars = ax.barh(range(len(rows)), values, color=[COLOURS[k] for k in kinds], height=0.7)
        ax.set_yticks(range(len(rows)), labels)
        top = max(values + [TARGETS[b]["lifecycle"]])
        ax.set_xlim(0, top * 1.22)
        for bar, v in zip(bars, values):
            ax.text(bar.get_width() + top * 0.01, bar.get_y() + bar.get_height() / 2, f"{v:,.0f}", va="center")
        target = TARGETS[b]["lifecycle"]
        ax.axvline(target, color=COLOURS["orch"], linestyle="--", linewidth=1)
        ax.text(target, len(rows) - 0.45, f" target {target:,}", color=COLOURS["orch"], va="bottom")
        ax.set_title(TITLES[b], pad=16)
        ax.set_xlabel("tasks/s (4 steps a task; higher is better)")
    handles = {}
    for b in backends:
        for _, _, k in rows_of[b]:
            handles.setdefault(k, plt.Rectangle((0, 0), 1, 1, color=COLOURS[k]))
    fig.legend(handles.values(), [LEGEND[k] for k in handles], loc="lower center", ncol=3, frameon=False)
    fig.suptitle("Task lifecycle throughput (create, claim, start, complete), same session")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, metadata=SVG_META if str(path).endswith(".svg") else None, dpi=110)
    plt.close(fig)
    return True


def claim_latency(data, path):
    """One panel per backend: grouped bars of the percentiles, or CDF lines
    when the report has full quantiles."""
    backends = [b for b in data if data[b]["reports"]["claim-latency"]]
    if not backends:
        return False
    fig, axes = plt.subplots(1, len(backends), figsize=(5.2 * len(backends), 3.8), squeeze=False)
    series = (("claim (from arrival)", "from arrival (open loop)", "#d62728"),
              ("POST /tasks/claim", "request alone", "#1f77b4"))
    for ax, b in zip(axes[0], backends):
        report = data[b]["reports"]["claim-latency"]
        lat = report["latency_ms"]
        target = TARGETS[b]["claim_p99"]
        if any("quantiles_ms" in lat.get(route, {}) for route, _, _ in series):
            for route, label, colour in series:
                q = lat.get(route, {}).get("quantiles_ms")
                if not q:
                    continue
                # {"0.5": ms, ...} or [[quantile, ms], ...]
                pairs = q.items() if isinstance(q, dict) else q
                points = sorted((float(k), float(v)) for k, v in pairs)
                ax.plot([v for _, v in points], [k * 100 for k, _ in points], label=label, color=colour)
            ax.axvline(target, color="black", linestyle="--", linewidth=1, label=f"p99 target {target} ms")
            ax.axhline(99, color="grey", linestyle=":", linewidth=1)
            ax.set_ylim(0, 101)
            ax.set_xscale("log")
            ax.set_xlabel("latency, ms (log)")
            ax.set_ylabel("% of claims at or below")
        else:
            stats = ("p50_ms", "p95_ms", "p99_ms", "max_ms")
            width = 0.38
            for i, (route, label, colour) in enumerate(series):
                if route not in lat:
                    continue
                values = [lat[route][s] for s in stats]
                xs = [x + (i - 0.5) * width for x in range(len(stats))]
                bars = ax.bar(xs, values, width=width, label=label, color=colour)
                for bar, v in zip(bars, values):
                    ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(), f"{v:.1f}", ha="center", va="bottom", fontsize=7)
            ax.set_xticks(range(len(stats)), [s.removesuffix("_ms") for s in stats])
            ax.axhline(target, color="black", linestyle="--", linewidth=1, label=f"p99 target {target} ms")
            ax.set_ylabel("ms (lower is better)")
        res = report["results"]
        ax.set_title(f"{TITLES[b]}: {res['claims']:,} claims at {res['achieved_rate_per_s']:,.0f}/s "
                     f"(half of {res['max_rate_per_s']:,.0f}/s)", fontsize=9)
        ax.legend(frameon=False, loc="lower right" if ax.get_xscale() == "log" else "upper left")
    fig.suptitle("Claim latency at half the maximum claim rate")
    fig.tight_layout()
    fig.savefig(path, metadata=SVG_META if str(path).endswith(".svg") else None, dpi=110)
    plt.close(fig)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=pathlib.Path, help="a bench/results/<time> directory")
    parser.add_argument("--publish", type=pathlib.Path, help="also copy the charts to this directory")
    parser.add_argument("--png", action="store_true", help="also write a PNG of each chart (for a quick look)")
    args = parser.parse_args()
    data = collect(args.results)
    drawn = []
    for name, draw in (("tasks-per-s.svg", tasks_per_s), ("claim-latency.svg", claim_latency)):
        assert name in CHARTS
        if draw(data, args.results / name):
            drawn.append(name)
            if args.png:
                draw(data, args.results / name.replace(".svg", ".png"))
    if args.publish and drawn:
        args.publish.mkdir(parents=True, exist_ok=True)
        for name in drawn:
            shutil.copyfile(args.results / name, args.publish / name)
        # Which run the published charts show, for BENCHMARKS.md's caption.
        machine = args.results / "machine.txt"
        params = {b: d["reports"]["lifecycle"]["parameters"] for b, d in data.items() if d["reports"]["lifecycle"]}
        (args.publish / "SOURCE").write_text(
            f"results: {args.results}\n"
            + "".join(f"{b} lifecycle: {p}\n" for b, p in params.items())
            + (machine.read_text() if machine.exists() else ""))
    print(f"charts: {', '.join(drawn) or 'none (no reports)'} in {args.results}"
          + (f", copied to {args.publish}" if args.publish and drawn else ""))


if __name__ == "__main__":
    main()
