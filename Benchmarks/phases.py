#!/usr/bin/env python3
"""Splits the wall time of batch commands into phases, from times each command notes itself.

    Benchmarks/phases.py RUNS NAME='COMMAND' [NAME='COMMAND' ...]

Runs the commands interleaved (each round starting with the next one), each with
Benchmarks/phases-shim.c loaded (LD_PRELOAD; built here with cc into a temporary
directory), which notes when the command first connects to an IP address, first sends on
a socket and last receives from one. Prints for each command the medians of

- to-connect: from just before the command is started to its first `connect`;
- requests:   from its first send to its last receive;
- tail:       from that receive to its end (the exit, as its parent sees it);
- total:      from just before it is started to its end.

The start is the moment this script starts the process, so to-connect holds the fork and
exec too, alike for every command. Needs a C compiler; the commands must be dynamically
linked to the C library (af and curl are). Standard output goes to /dev/null. Example (the
batch scenario's lines, with the test server running on port 8282):

    Benchmarks/phases.py 30 af='af batch --parallel=10 lines.txt' \\
        curl='curl -s -Z --parallel-max 10 -K lines.cfg'

(It used perf's system-call tracepoints before, which need root, and while they are on
every system call takes the kernel's slower path: a cost in proportion to the calls a tool
makes: for the 500 GETs curl -Z makes about 7,000 (3,070 of them rt_sigaction), af
3,900-4,000 (`strace -f -c`).)
"""
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PHASES = ["to-connect", "requests", "tail", "total"]


def build_shim(directory):
    """Compiles the shim next to this script into `directory`; returns its path."""
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not compiler:
        sys.exit("phases.py: a C compiler (cc) is needed to build the shim")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "phases-shim.c")
    shim = os.path.join(directory, "phases-shim.so")
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", shim, source, "-ldl"], check=True)
    return shim


def phases(command, shim, report):
    """Runs `command` once with the shim; returns its four phases in milliseconds, or None
    when it connected, sent or received nothing."""
    if os.path.exists(report):
        os.unlink(report)
    environment = dict(os.environ, LD_PRELOAD=shim, PHASES_SHIM_OUT=report)
    with open(os.devnull, "wb") as null:
        begin = time.clock_gettime(time.CLOCK_MONOTONIC)
        subprocess.run(shlex.split(command), stdin=subprocess.DEVNULL, stdout=null, stderr=null, env=environment)
        end = time.clock_gettime(time.CLOCK_MONOTONIC)
    try:
        with open(report) as noted:
            connected, sent, received = (float(value) for value in noted.read().split())
    except (OSError, ValueError):
        return None
    if not (connected and sent and received):
        return None
    return [(connected - begin) * 1000, (received - sent) * 1000, (end - received) * 1000, (end - begin) * 1000]


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    runs = int(sys.argv[1])
    commands = [argument.split("=", 1) for argument in sys.argv[2:]]
    if any(len(pair) != 2 for pair in commands):
        sys.exit("each command is NAME='COMMAND'")
    results = {name: [] for name, _ in commands}
    with tempfile.TemporaryDirectory() as directory:
        shim = build_shim(directory)
        report = os.path.join(directory, "phases.txt")
        for round_number in range(runs):
            shift = round_number % len(commands)
            for name, command in commands[shift:] + commands[:shift]:
                measured = phases(command, shim, report)
                if measured:
                    results[name].append(measured)
    for name, rows in results.items():
        if not rows:
            print(f"{name}: no complete run (did it connect, send and receive?)")
            continue
        medians = " ".join(f"{phase} {statistics.median(row[i] for row in rows):.2f}" for i, phase in enumerate(PHASES))
        print(f"{name} ({len(rows)} runs): {medians} ms")


if __name__ == "__main__":
    main()
