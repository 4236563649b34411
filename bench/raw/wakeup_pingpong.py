#!/usr/bin/env python3
"""What one round trip between two processes costs on this host, with both
on one CPU and with each on its own.

Why: every statement orch sends to PostgreSQL is such a round trip (the
server's writer wakes the backend, the backend wakes the server), and so is
every hop between threads. On a virtual machine a wake-up that crosses CPUs
can cost several times one that does not (the idle CPU has to be woken
first), which bounds a serial chain of statements however idle the machine
looks (BENCHMARKS.md, item 13). This prints the two figures so a host's
cost can be read before its lifecycle figures are compared with another's.

Two processes ping-pong one byte over a socketpair, each pinned with
``os.sched_setaffinity``; Python's own overhead is in both figures, so read
the difference, not the absolute values.

  python3 bench/raw/wakeup_pingpong.py [--round-trips 20000] [--rounds 3]

Prints one JSON object per round: microseconds a round trip on one CPU and
across two (the second needs a host with at least two CPUs).
"""

import argparse
import json
import os
import socket
import time


def round_trip_us(parent_cpu: int, child_cpu: int, count: int) -> float:
    """Mean microseconds of one send-and-answer between two processes."""
    ours, theirs = socket.socketpair()
    child = os.fork()
    if child == 0:
        os.sched_setaffinity(0, {child_cpu})
        for _ in range(count):
            theirs.recv(1)
            theirs.send(b"a")
        os._exit(0)
    os.sched_setaffinity(0, {parent_cpu})
    time.sleep(0.1)  # let the child settle on its CPU first
    started = time.perf_counter()
    for _ in range(count):
        ours.send(b"q")
        ours.recv(1)
    elapsed = time.perf_counter() - started
    os.waitpid(child, 0)
    ours.close()
    theirs.close()
    return elapsed / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round-trips", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    for _ in range(args.rounds):
        result = {"same_cpu_us": round(round_trip_us(cpus[0], cpus[0], args.round_trips), 1)}
        if len(cpus) > 1:
            result["cross_cpu_us"] = round(round_trip_us(cpus[0], cpus[1], args.round_trips), 1)
        print(json.dumps(result))


if __name__ == "__main__":
    main()
