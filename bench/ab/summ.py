"""Medians and their ratio for an A/B written by bench/ab/run.sh.

    python3 bench/ab/summ.py <tag> [sideA sideB]   (default: base new)

Reads $ORCH_AB_OUT/<tag>-<side>-<round>.json (default target/ab/out) and
prints, for the end-to-end and the drain rate, each side's runs in round
order, their median, and sideB's median over sideA's.
"""

import glob
import json
import os
import re
import statistics
import sys


def rates(out, tag, side, key):
    """The side's values of `key` in round order (unreadable runs skipped)."""
    files = glob.glob(os.path.join(out, f"{tag}-{side}-*.json"))
    files.sort(key=lambda f: int(re.findall(r"-(\d+)\.json$", f)[0]))
    values = []
    for path in files:
        try:
            with open(path) as f:
                values.append(json.load(f)["results"][key])
        except (OSError, ValueError, KeyError):
            pass
    return values


def main():
    if len(sys.argv) not in (2, 4):
        sys.exit(__doc__)
    tag = sys.argv[1]
    sides = sys.argv[2:] or ["base", "new"]
    out = os.environ.get("ORCH_AB_OUT", "target/ab/out")
    for key in ["tasks_per_s", "drain_tasks_per_s"]:
        medians, parts = {}, []
        for side in sides:
            values = rates(out, tag, side, key)
            medians[side] = statistics.median(values) if values else float("nan")
            parts.append(f"{side}: {values} med {medians[side]:.1f}")
        ratio = medians[sides[1]] / medians[sides[0]]
        print(key, " | ".join(parts), f"ratio {ratio:.3f}")


if __name__ == "__main__":
    main()
