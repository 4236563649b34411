"""CPU time by process group while a benchmark runs: where a 2-core machine's
time goes, and how much of it sits idle.

    python3 bench/cpu_by_process.py run OUT.json -- <command> [args...]
    python3 bench/cpu_by_process.py window OUT.json T0 T1 [TASKS]

`run` starts the command and, every 0.2 s until it exits, reads the CPU time
(user + system) of every process in /proc and the machine's busy and idle
time from /proc/stat. Processes are grouped: `postgres` (every backend and
the postmaster's helpers), `orch-serve` (the server), `orch-bench` (the load
generator), `pgbench`, `node` (the graphile-worker peer) and `other`. It
prints, about once a second, the cores each group used, and writes the
cumulative series to OUT.json.

`window` reads OUT.json and prints each group's CPU seconds and cores
between T0 and T1 seconds after the start (the nearest samples), and with
TASKS (the tasks finished in the window) the CPU microseconds a task.

A process's time counts from when it was first seen (for processes already
running at the start) or from zero (for those started later); a process that
exits keeps its last reading, so at most 0.2 s of a short-lived process is
lost. Samples are cheap (one pass over /proc), but they are not free: on a
2-core machine the sampler itself shows under `other`.
"""

import json
import os
import subprocess
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")
INTERVAL_S = 0.2


def read_process(pid):
    """(group, CPU seconds) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces: the fields
    # after the last ')' are the numeric ones (utime and stime are 14 and 15).
    close = stat.rfind(")")
    comm = stat[stat.find("(") + 1 : close]
    fields = stat[close + 2 :].split()
    cpu_s = (int(fields[11]) + int(fields[12])) / TICKS
    program = os.path.basename(cmdline.split(" ", 1)[0])
    if comm.startswith("postgres") or program.startswith("postgres"):
        group = "postgres"
    elif program.startswith("orch") and " serve" in cmdline:
        group = "orch-serve"
    elif program.startswith("orch") and " bench" in cmdline:
        group = "orch-bench"
    elif comm.startswith("pgbench"):
        group = "pgbench"
    elif comm.startswith("node") or program == "node":
        group = "node"
    else:
        group = "other"
    return group, cpu_s


def read_machine():
    """The machine's busy and idle CPU seconds since boot (idle counts I/O wait)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / TICKS, idle / TICKS


def run(out_path, command):
    child = subprocess.Popen(command)
    start = time.monotonic()
    baseline, latest, retired, series = {}, {}, {}, []
    first_pass = True
    while True:
        now = time.monotonic() - start
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            seen = read_process(name)
            if seen is None:
                continue
            # A process keeps the group of its first sighting: an exiting
            # one has an empty command line and would look like another.
            if name in latest and seen[1] < latest[name]:
                # The pid was reused: bank the old process's time.
                group, start_s = baseline.pop(name)
                retired[group] = retired.get(group, 0.0) + latest[name] - start_s
            if name not in baseline:
                baseline[name] = (seen[0], seen[1] if first_pass else 0.0)
            latest[name] = seen[1]
        first_pass = False
        busy, idle = read_machine()
        groups = dict(retired)
        for name, cpu_s in latest.items():
            group, start_s = baseline[name]
            groups[group] = groups.get(group, 0.0) + cpu_s - start_s
        series.append({"t": now, "busy": busy, "idle": idle, "groups": groups})
        if child.poll() is not None:
            break
        time.sleep(INTERVAL_S)
    with open(out_path, "w") as f:
        json.dump(series, f)
    print_seconds(series)
    return child.returncode


def print_seconds(series):
    """Cores used by each group, about once a second, on stderr."""
    print(f"{'t':>6} {'busy':>5} {'idle':>5}  cores used by each group", file=sys.stderr)
    previous = series[0]
    for sample in series[1:]:
        span = sample["t"] - previous["t"]
        if span < 1.0 and sample is not series[-1]:
            continue
        if span <= 0:
            break
        used = " ".join(
            f"{g}={(c - previous['groups'].get(g, 0.0)) / span:.2f}"
            for g, c in sorted(sample["groups"].items())
        )
        busy = (sample["busy"] - previous["busy"]) / span
        idle = (sample["idle"] - previous["idle"]) / span
        print(f"{sample['t']:6.1f} {busy:5.2f} {idle:5.2f}  {used}", file=sys.stderr)
        previous = sample


def window(out_path, t0, t1, tasks):
    with open(out_path) as f:
        series = json.load(f)
    first = min(series, key=lambda s: abs(s["t"] - t0))
    last = min(series, key=lambda s: abs(s["t"] - t1))
    span = last["t"] - first["t"]
    if span <= 0:
        sys.exit("the window holds no samples")
    print(
        f"window {first['t']:.1f} to {last['t']:.1f} s ({span:.1f} s): machine busy "
        f"{(last['busy'] - first['busy']) / span:.2f} cores, idle "
        f"{(last['idle'] - first['idle']) / span:.2f} cores"
    )
    total = 0.0
    for group in sorted(last["groups"]):
        cpu_s = last["groups"][group] - first["groups"].get(group, 0.0)
        total += cpu_s
        print(line(group, cpu_s, span, tasks))
    print(line("sum", total, span, tasks))


def line(name, cpu_s, span, tasks):
    text = f"  {name:12} {cpu_s:7.2f} CPU s  {cpu_s / span:5.2f} cores"
    if tasks:
        text += f"  {cpu_s / tasks * 1e6:6.0f} µs a task"
    return text


def main(argv):
    if len(argv) >= 4 and argv[1] == "run" and argv[3] == "--":
        return run(argv[2], argv[4:])
    if len(argv) in (5, 6) and argv[1] == "window":
        tasks = float(argv[5]) if len(argv) == 6 else None
        window(argv[2], float(argv[3]), float(argv[4]), tasks)
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
